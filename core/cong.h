/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The congestion counters of the PerfMgt class (IBA annex A10, as
 * libibmad defines their fields and perfquery reads them):
 * SwPortVLCongestion (0x30, --swportvlcong), PortRcvConCtrl (0x31,
 * --rcvcc), PortSLRcvFECN (0x32, --slrcvfecn), PortSLRcvBECN (0x33,
 * --slrcvbecn), PortXmitConCtrl (0x34, --xmitcc) and PortVLXmitTimeCong
 * (0x35, --vlxmittimecc). A PMA says which it implements in
 * PortSamplesControl:OptionMask (bits 48 to 54 of the 64-bit field:
 * "which counters are implemented"); a node that does not is never asked.
 *
 * A port's totals are an immutable, reference-counted record shared with
 * snapshots, as the FEC counters' (core/fec.h).
 */
#ifndef IBW_CONG_H
#define IBW_CONG_H

#include <stddef.h>
#include <stdint.h>

enum ibw_cong_attr {
	IBW_CONG_SW_VL, /* SwPortVLCongestion: 16 x 16 bits, by VL */
	IBW_CONG_RCV_CC, /* PortRcvConCtrl: PortPktRcvFECN, ...BECN */
	IBW_CONG_SL_FECN, /* PortSLRcvFECN: 16 x 32 bits, by SL */
	IBW_CONG_SL_BECN, /* PortSLRcvBECN: likewise */
	IBW_CONG_XMIT_CC, /* PortXmitConCtrl: PortXmitTimeCong */
	IBW_CONG_VL_XMIT_TC, /* PortVLXmitTimeCong: 15 x 32 bits, VL 0-14 */
	IBW_CONG_NATTR
};

/* All their fields, attribute after attribute (ibw_cong_first()). */
#define IBW_CONG_NFIELDS (16 + 2 + 16 + 16 + 1 + 15)

struct ibw_cong_reading {
	uint8_t have; /* bit per enum ibw_cong_attr: answered */
	uint32_t v[IBW_CONG_NFIELDS];
};

struct ibw_cong {
	unsigned refs; /* atomic */
	uint8_t have; /* attributes ever read */
	uint32_t resets; /* readings in which some field went backwards */
	uint32_t raw[IBW_CONG_NFIELDS];
	uint64_t total[IBW_CONG_NFIELDS];
};

/* The attribute's id (0x30..0x35), its first field's index among all
 * and its number of fields. */
unsigned ibw_cong_attr_id(enum ibw_cong_attr a);
unsigned ibw_cong_first(enum ibw_cong_attr a);
unsigned ibw_cong_count(enum ibw_cong_attr a);
/* The attribute of field @i. */
enum ibw_cong_attr ibw_cong_attr_of(unsigned i);
/* libibmad's (perfquery's) name of field @i. */
const char *ibw_cong_field_name(unsigned i);
/* 1 when PortSamplesControl:OptionMask @mask says the PMA has @a. */
int ibw_cong_advertised(uint64_t mask, enum ibw_cong_attr a);
/* The OptionMask bits that say the PMA has @a. */
uint64_t ibw_cong_option_bits(enum ibw_cong_attr a);

/* Decode @a's payload @data (from IB_PC_DATA_OFFS, @len bytes) into
 * @r. 0, or -1 if too short. */
int ibw_cong_decode(const uint8_t *data, size_t len, enum ibw_cong_attr a,
		    struct ibw_cong_reading *r);

/* A new record: @old (may be NULL) with @r folded in, as ibw_fec_fold():
 * the fields of the attributes in @ours (bit per enum ibw_cong_attr) we
 * cleared since the last reading count whole, as no reset; @old itself
 * with one more reference when nothing changed; NULL when out of
 * memory. */
struct ibw_cong *ibw_cong_fold(struct ibw_cong *old,
			       const struct ibw_cong_reading *r, unsigned ours);

/* The attributes of @r with a field at three quarters of its range or
 * more (SwPortVLCongestion's are 16 bits, the others' 32): worth
 * clearing before they saturate. Bit per enum ibw_cong_attr. */
unsigned ibw_cong_near_max(const struct ibw_cong_reading *r);
struct ibw_cong *ibw_cong_ref(struct ibw_cong *c);
void ibw_cong_unref(struct ibw_cong *c);

#endif
