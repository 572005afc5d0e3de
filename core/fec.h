/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PortExtendedSpeedsCounters (PerfMgt attribute 0x1F): the forward error
 * correction counters of a port at FDR and later speeds, in the two
 * layouts libibmad defines and perfquery -T chooses between:
 *
 *   FC-FEC (IB_PESC_*): SyncHeaderErrorCounter, UnknownBlockCounter and,
 *   for each of 12 lanes, ErrorDetectionCounter (16 bits),
 *   FECCorrectableBlockCtr and FECUncorrectableBlockCtr (32 bits);
 *
 *   RS-FEC active (IB_PESC_RSFEC_*): the two header counters,
 *   FECCorrectableSymbolCtr for each of 12 lanes, and the port-wide
 *   PortFECCorrectableBlockCtr, PortFECUncorrectableBlockCtr and
 *   PortFECCorrectedSymbolCtr (32 bits).
 *
 * perfquery reads the RS-FEC form when the PMA's ClassPortInfo sets
 * IsRSFECCountersSupported (CapabilityMask bit 14) and the port's
 * PortInfoExtended says FECModeActive is RS-FEC (2) or RS-FEC2 (4); the
 * FC-FEC form otherwise. libibmad's field table says where each field
 * sits; this file names them by libibmad's names, which are perfquery's.
 *
 * A port's FEC record is immutable once built and reference counted:
 * the counter records that snapshots share point at it, and a sweep that
 * reads new values builds a new one (ibw_fec_fold).
 */
#ifndef IBW_FEC_H
#define IBW_FEC_H

#include <stddef.h>
#include <stdint.h>

#define IBW_FEC_LANES 12

enum ibw_fec_layout {
	IBW_FEC_NONE,
	IBW_FEC_FC, /* per-lane FC-FEC form */
	IBW_FEC_RS, /* RS-FEC active form */
};

/* The counters of both forms, one index each. */
enum ibw_fec_field {
	IBW_FEC_SYNC_HDR, /* SyncHeaderErrorCounter, 16 bits */
	IBW_FEC_UNK_BLOCK, /* UnknownBlockCounter, 16 bits */
	IBW_FEC_ERR_DET0, /* ErrorDetectionCounterLane0..11, 16 bits */
	IBW_FEC_CORR_BLK0 = IBW_FEC_ERR_DET0 + IBW_FEC_LANES,
	IBW_FEC_UNCORR_BLK0 = IBW_FEC_CORR_BLK0 + IBW_FEC_LANES,
	IBW_FEC_CORR_SYM0 = IBW_FEC_UNCORR_BLK0 + IBW_FEC_LANES, /* RS */
	IBW_FEC_PORT_CORR_BLK = IBW_FEC_CORR_SYM0 + IBW_FEC_LANES,
	IBW_FEC_PORT_UNCORR_BLK,
	IBW_FEC_PORT_CORR_SYM,
	IBW_FEC_NFIELDS
};

/*
 * Where a reading's FEC mode comes from: PortInfoExtended's FECModeActive
 * read with it, the last mode read when PortInfoExtended went unanswered
 * this sweep, or none (PortInfoExtended not served or not asked; after
 * a timeout with no mode known the counters are read in the FC-FEC
 * form: FALLBACK). Zero, UNREAD, means the mode is unknown.
 */
enum ibw_fec_mode_src {
	IBW_FEC_MODE_UNREAD,
	IBW_FEC_MODE_READ,
	IBW_FEC_MODE_LAST,
	IBW_FEC_MODE_FALLBACK,
};

/* One decoded PortExtendedSpeedsCounters answer. */
struct ibw_fec_reading {
	uint8_t layout; /* enum ibw_fec_layout */
	/* FECModeActive (0 no FEC, 1 Fire Code, 2 RS-FEC, 3 low-latency
	 * RS-FEC, 4 RS-FEC2), meaningful when mode_src is not UNREAD; not
	 * set by ibw_fec_decode(). */
	uint8_t mode, mode_src;
	uint64_t have; /* bit per enum ibw_fec_field: in this layout */
	uint32_t v[IBW_FEC_NFIELDS];
};

/* A port's FEC totals: 64-bit, across resets, as every other counter. */
struct ibw_fec {
	unsigned refs; /* atomic */
	uint8_t layout; /* of the last reading */
	uint8_t mode, mode_src; /* of the last reading, as in the reading */
	uint64_t have; /* fields ever read */
	uint32_t resets; /* readings in which some field went backwards */
	/* fields at their largest value in the last reading: stuck there,
	 * they count nothing more until cleared (the windows built on
	 * them are unknown) */
	uint64_t saturated;
	uint32_t raw[IBW_FEC_NFIELDS]; /* last values read */
	uint64_t total[IBW_FEC_NFIELDS];
	uint64_t last_delta[IBW_FEC_NFIELDS]; /* in the last reading */
};

/* libibmad's (and perfquery's) name of @f. */
const char *ibw_fec_field_name(enum ibw_fec_field f);
/* "fc", "rs" or "none" */
const char *ibw_fec_layout_name(enum ibw_fec_layout l);
/* The width of @f in bits (16 or 32). */
unsigned ibw_fec_field_bits(enum ibw_fec_field f);

/* Decode the PerfMgt payload @data (the MAD from IB_PC_DATA_OFFS, @len
 * bytes) in @layout. 0, or -1 if it is too short. The mode is left as
 * it was in @r. */
int ibw_fec_decode(const uint8_t *data, size_t len, enum ibw_fec_layout layout,
		   struct ibw_fec_reading *r);

/*
 * A new record: @old (may be NULL) with reading @r folded in: the first
 * reading of a field is its total; then it grows by the increase, or by
 * the whole reading when the field went down (a reset by someone else;
 * counted in resets) or when @ours says we cleared the counters since
 * the last reading (then whatever the reading, and no reset). Returns
 * @old itself, with one more reference, when nothing changed; NULL when
 * out of memory.
 */
struct ibw_fec *ibw_fec_fold(struct ibw_fec *old,
			     const struct ibw_fec_reading *r, int ours);

/* The fields of @r at three quarters of their range or more: worth
 * clearing before they saturate (bit per enum ibw_fec_field). */
uint64_t ibw_fec_near_max(const struct ibw_fec_reading *r);

struct ibw_fec *ibw_fec_ref(struct ibw_fec *f);
void ibw_fec_unref(struct ibw_fec *f);

/* 1 when PortInfoExtended's FECModeActive @mode (with the PMA's
 * IsRSFECCountersSupported @pma_rs) calls for the RS-FEC form, as
 * perfquery -T decides it. */
int ibw_fec_mode_is_rs(int pma_rs, unsigned mode);

/* "none", "fc", "rs", "ll_rs", "rs2" for FECModeActive @mode; "unknown"
 * beyond. */
const char *ibw_fec_mode_name(unsigned mode);
/* "unread", "read", "last_known", "fc_fallback" */
const char *ibw_fec_mode_src_name(enum ibw_fec_mode_src s);

/* 1 when a mode of source @s holds a FECModeActive (read this sweep or
 * before), 0 when none is known. */
static inline int ibw_fec_mode_known(unsigned s)
{
	return s == IBW_FEC_MODE_READ || s == IBW_FEC_MODE_LAST;
}

#endif
