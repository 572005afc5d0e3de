/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PerfMgt counters: ClassPortInfo per node, then PortCounters (and
 * PortCountersExtended where the node supports it) per port, merged into
 * 64-bit running totals that stay monotonic across saturation, resets by
 * other tools and restarts of ibwatchd (a state file).
 *
 * This is the sweep and the port records; the arithmetic of the totals is
 * ctr_math.h, the state file's format ctr_state.h.
 */
#ifndef IBW_COUNTERS_H
#define IBW_COUNTERS_H

#include <stdint.h>

#include "ctr_math.h"
#include "cong.h"
#include "fec.h"
#include "engine.h"
#include "events.h"
#include "fabric.h"

/*
 * The counters, described by core/ctr_desc.c's table (ibw_ctr_desc()).
 * Append-only: the state file's port lines (core/ctr_state.c) hold the
 * counters in this order under a format version, so a new counter goes
 * at the end (before IBW_CTR_MAX) and an existing one is never moved;
 * the base counters come before the detail ones (IBW_CTR_NBASE).
 */
enum ibw_ctr {
	IBW_CTR_SYMBOL_ERRORS,
	IBW_CTR_LINK_ERROR_RECOVERY,
	IBW_CTR_LINK_DOWNED,
	IBW_CTR_RCV_ERRORS,
	IBW_CTR_RCV_REMOTE_PHYS_ERRORS,
	IBW_CTR_RCV_SWITCH_RELAY_ERRORS,
	IBW_CTR_XMIT_DISCARDS,
	IBW_CTR_XMIT_CONSTRAINT_ERRORS,
	IBW_CTR_RCV_CONSTRAINT_ERRORS,
	IBW_CTR_LOCAL_LINK_INTEGRITY_ERRORS,
	IBW_CTR_EXCESSIVE_BUFFER_OVERRUN_ERRORS,
	IBW_CTR_VL15_DROPPED,
	IBW_CTR_XMIT_WAIT,
	IBW_CTR_QP1_DROPPED,
	IBW_CTR_XMIT_DATA, /* bytes (the MADs count 4-octet words) */
	IBW_CTR_RCV_DATA,
	IBW_CTR_XMIT_PKTS,
	IBW_CTR_RCV_PKTS,
	IBW_CTR_UNICAST_XMIT_PKTS, /* PortCountersExtended only */
	IBW_CTR_UNICAST_RCV_PKTS,
	IBW_CTR_MULTICAST_XMIT_PKTS,
	IBW_CTR_MULTICAST_RCV_PKTS,
	/* PortRcvErrorDetails, with --detail-counters */
	IBW_CTR_LOCAL_PHYSICAL_ERRORS,
	IBW_CTR_MALFORMED_PACKET_ERRORS,
	IBW_CTR_BUFFER_OVERRUN_ERRORS,
	IBW_CTR_DLID_MAPPING_ERRORS,
	IBW_CTR_VL_MAPPING_ERRORS,
	IBW_CTR_LOOPING_ERRORS,
	/* PortXmitDiscardDetails, with --detail-counters */
	IBW_CTR_INACTIVE_DISCARDS,
	IBW_CTR_NEIGHBOR_MTU_DISCARDS,
	IBW_CTR_SW_LIFETIME_LIMIT_DISCARDS,
	IBW_CTR_SW_HOQ_LIFETIME_LIMIT_DISCARDS,
	IBW_CTR_MAX,
};

/* The counters every port record holds; the rest are the detail
 * counters, read only with --detail-counters and held apart. */
#define IBW_CTR_NBASE IBW_CTR_LOCAL_PHYSICAL_ERRORS
#define IBW_CTR_NDETAIL (IBW_CTR_MAX - IBW_CTR_NBASE)

/* A port's detail counters, shared by reference as its record's chunk
 * is (counters_int.h): written only through ibw_ctr_val_w(). */
struct ibw_ctr_details {
	unsigned refs;
	struct ibw_ctr_val v[IBW_CTR_NDETAIL];
};

struct ibw_ctr_desc {
	const char *name; /* as perfquery prints it */
	const char *key; /* snake_case, for JSON */
	unsigned pc_bits; /* width in PortCounters; 0: not there */
	int pc_field; /* libibmad field in PortCounters, or -1 */
	int ext_field; /* in PortCountersExtended, or -1 */
	unsigned scale; /* raw unit to ours: 4 for the data counters */
	int is_error;
	uint64_t threshold; /* default error threshold, 0: none */
	/* its PortCounters CounterSelect bit, for a clear (CounterSelect2's
	 * from bit 16); 0: none */
	uint32_t select;
	/* PortRcvErrorDetails (0x15), PortXmitDiscardDetails (0x16), or 0 */
	uint16_t detail_attr;
	int detail_field; /* the field in it */
	/* The Prometheus series: infiniband_<kind>_port_<metric>_total as
	 * infiniband_exporter names it, or, for a counter the exporter does
	 * not read (@ibwatch_metric), ibwatch_<kind>_port_<metric>_total. */
	const char *metric;
	int ibwatch_metric;
	unsigned mib_col; /* its column of IBWATCH-MIB's ibwPortTable */
};

const struct ibw_ctr_desc *ibw_ctr_desc(enum ibw_ctr c);
/* The counter of ibwPortTable's column @col, or -1 when none is. */
int ibw_ctr_by_mib_col(unsigned col);
/* By perfquery name ("SymbolErrorCounter") or key ("symbol_errors"). */
int ibw_ctr_lookup(const char *name);

/* Why the last sweep could not read a port (or its details). */
enum ibw_ctr_fail {
	IBW_CTR_FAIL_NONE,
	IBW_CTR_FAIL_TIMEOUT, /* a read went unanswered */
	IBW_CTR_FAIL_ERROR, /* answered with an error, or not sent */
	IBW_CTR_FAIL_LID_MOVED, /* another node answered at the LID */
};

struct ibw_port_ctrs {
	uint64_t guid; /* node GUID */
	uint8_t port;
	uint8_t is_switch;
	uint8_t have_ext; /* PortCountersExtended read */
	uint8_t stale; /* the last sweep could not read this port */
	uint8_t fail; /* enum ibw_ctr_fail: why, when stale */
	/* The last sweep asked for the port's detail counters, and how
	 * that went (enum ibw_ctr_fail); the port is not stale for it. */
	uint8_t detail_asked, detail_fail;
	uint16_t lid; /* where it was read */
	uint32_t unreachable; /* sweeps in a row without an answer */
	uint32_t resets; /* all counters' foreign resets */
	/* Our clears of its narrow counters before they saturate
	 * (reset-counters), acknowledged by its PMA since ibwatchd
	 * started: PortCounters', PortExtendedSpeedsCounters', the
	 * congestion attributes'. */
	uint32_t clears, fec_clears, cong_clears;
	/* How long the reads of its node (a CA's: of its LID) took in the
	 * sweep that last tried it, from ClassPortInfo to the last answer
	 * or NodeInfo. */
	uint32_t read_dur_us;
	/* CLOCK_REALTIME of the last good read: when its answer came */
	uint64_t updated_us;
	uint64_t discontinuity_us; /* of the last foreign reset */
	uint64_t prev_updated_mono; /* for rates */
	double xmit_bytes_per_s, rcv_bytes_per_s;
	double xmit_pkts_per_s, rcv_pkts_per_s;
	uint64_t error_increments; /* last sweep, all error counters */
	/* Counter @c's value: v[c] below IBW_CTR_NBASE, else in det (NULL
	 * while none was ever read: the ten values' 240 bytes are then in
	 * no set of records). Read through ibw_ctr_val(). */
	struct ibw_ctr_val v[IBW_CTR_NBASE];
	struct ibw_ctr_details *det;
	/* The 32-bit PortCounters data/packet values as last read, for the
	 * saturation flags; raw as well. */
	uint32_t pc_raw[4];
	/* PortVLXmitWaitCounters (16 bits per VL, ticks), read where the
	 * node's PMA advertises PortXmitWait (docs/links.md): the values
	 * last read and running totals. have_vl 0: never read. */
	uint8_t have_vl;
	uint16_t vl_raw[16];
	uint64_t vl_xmit_wait[16];
	/* PortExtendedSpeedsCounters (core/fec.h), read where the port
	 * advertises extended speeds: immutable, shared with snapshots by
	 * reference; NULL: never read. fec_fail: enum ibw_ctr_fail of the
	 * last sweep's read of them (the port is not stale for it); 0
	 * also where they were not asked. */
	struct ibw_fec *fec;
	uint8_t fec_fail;
	uint8_t fec_cleared; /* we cleared them after the last reading */
	uint8_t fec_lost; /* sweeps in a row they went unanswered */
	/* The congestion counters (core/cong.h), where the PMA's
	 * OptionMask has them: as fec; NULL: never read. */
	struct ibw_cong *cong;
	uint8_t cong_fail;
	uint8_t cong_cleared; /* attributes cleared by us since read */
};

/* Counter @c of @p (all zero when never read). */
extern const struct ibw_ctr_val ibw_ctr_val_none;
static inline const struct ibw_ctr_val *
ibw_ctr_val(const struct ibw_port_ctrs *p, enum ibw_ctr c)
{
	if ((unsigned)c < IBW_CTR_NBASE)
		return &p->v[c];
	if ((unsigned)c < IBW_CTR_MAX && p->det)
		return &p->det->v[c - IBW_CTR_NBASE];
	return &ibw_ctr_val_none;
}
/* Counter @c of @p to write to, in a record the caller may write: a
 * detail counter's block is made, or copied while a snapshot shares it.
 * NULL when out of memory. */
struct ibw_ctr_val *ibw_ctr_val_w(struct ibw_port_ctrs *p, enum ibw_ctr c);
/* A reference to a port's detail counters, and dropping one. */
void ibw_ctr_details_ref(struct ibw_ctr_details *d);
void ibw_ctr_details_unref(struct ibw_ctr_details *d);
/* The blocks a record holds by reference (FEC, congestion, detail
 * counters): one more reference to each, for a copy of @p; or @p's
 * dropped, for a record let go. */
void ibw_ctr_port_share(const struct ibw_port_ctrs *p);
void ibw_ctr_port_release(struct ibw_port_ctrs *p);

enum ibw_ctr_scope {
	IBW_SCOPE_ALL,
	IBW_SCOPE_SWITCHES,
	IBW_SCOPE_CAS,
};

/*
 * Which counter readings are checked with a NodeInfo to their LID before
 * they are folded (see "LIDs in flux" below). ALWAYS: every one, one
 * NodeInfo per node and sweep. IN_FLUX: a reading that went backwards,
 * and every one while the LIDs are in flux; a reading taken after the SM
 * moved a LID to another node but before any sign of it reached us is
 * then folded into the wrong port's totals.
 */
enum ibw_ctr_check {
	IBW_CHECK_ALWAYS,
	IBW_CHECK_IN_FLUX,
};

struct ibw_counters_opts {
	enum ibw_ctr_scope scope;
	const uint64_t *targets; /* if set: only these node GUIDs */
	unsigned ntargets;
	uint64_t thresholds[IBW_CTR_MAX]; /* 0: the default */
	/* Clear narrow counters at 3/4 of their range, before they
	 * saturate: data/packet counters (PortCounters' 32-bit ones, where
	 * no 64-bit ones are read), error counters (PortCounters' 4- to
	 * 32-bit ones where CapabilityMask2 offers no 64-bit ones, and the
	 * FEC counters). Both on by default (reset-counters all). */
	int reset_data;
	int reset_errors;
	int details; /* also PortRcvErrorDetails, PortXmitDiscardDetails */
	enum ibw_ctr_check check; /* which readings a NodeInfo vouches for */
	unsigned timeout_ms; /* 0: the engine's */
	int retries; /* -1: the engine's */
};

struct ibw_counters;

typedef void (*ibw_counters_cb)(struct ibw_counters *c, void *arg);

struct ibw_counters *ibw_counters_new(struct ibw_engine *e,
				      struct ibw_events *ev,
				      const struct ibw_counters_opts *o);
void ibw_counters_free(struct ibw_counters *c);

/*
 * Read every port of @f in scope: a switch's ports through its LID, each
 * active port of a CA through its own (a CA answers for the port a MAD
 * came in by; a dual-port CA has two LIDs). Sends are spread over
 * @spread_us (0: all at once). @cb runs when every answer is in. 0,
 * -EBUSY if a sweep runs.
 */
int ibw_counters_sweep(struct ibw_counters *c, const struct ibw_fabric *f,
		       uint64_t spread_us, ibw_counters_cb cb, void *arg);
int ibw_counters_running(const struct ibw_counters *c);
/* Spread what the running sweep has not sent yet over @spread_us from
 * now (the interval changed; 0: send it all now). */
void ibw_counters_respread(struct ibw_counters *c, uint64_t spread_us);

/* The sweep under way, or else the last one: how far it got. */
struct ibw_counters_progress {
	int running;
	uint64_t start_us; /* CLOCK_REALTIME; 0: no sweep yet */
	uint64_t end_us; /* CLOCK_REALTIME; 0 while it runs */
	uint64_t spread_us; /* its reads spread over this; 0: full speed */
	unsigned ports; /* ports it reads */
	unsigned read; /* ports read so far */
	unsigned unreachable; /* ports that did not answer so far */
	/* readings checked with NodeInfo so far (ibw_counters_lids_moved),
	 * and of those the ones dropped because another node answered at
	 * the LID (counted in unreachable too) */
	unsigned verified;
	unsigned lid_moved;
};

struct ibw_counters_progress
ibw_counters_progress(const struct ibw_counters *c);

/*
 * LIDs in flux. Between the SM moving LIDs and the next discovery, a LID
 * of the last discovery may answer for another node, whose counters must
 * not land in this port's totals. With IBW_CHECK_ALWAYS every reading is
 * checked: one NodeInfo to the LID, sent once all of that node's
 * readings are in, must name the node meant. With IBW_CHECK_IN_FLUX a
 * reading below the last one is, and while the LIDs are in flux every
 * reading. A node marked protected (it answers none of our SMPs) is
 * checked as with IBW_CHECK_IN_FLUX whatever the option: a NodeInfo
 * could only time out. A reading of another node, or one no NodeInfo
 * vouched for, is dropped (the port is stale for that sweep).
 *
 * ibw_counters_lids_moved() is a sign that the SM is moving LIDs (@why,
 * for the log): the mode is on from now, and another node found at a
 * LID is such a sign too. ibw_counters_lids_settled() says that a
 * discovery found no LID changed against the one before; @signs is
 * ibw_counters_lid_signs() as it was when that discovery started, so
 * that a sign during it does not count as settled. The mode is off once
 * a counter sweep that started after such a discovery has ended with no
 * sign meanwhile. With IBW_CHECK_IN_FLUX, outside the mode no NodeInfo
 * is sent for a reading that did not go backwards.
 */
void ibw_counters_lids_moved(struct ibw_counters *c, const char *why);
uint64_t ibw_counters_lid_signs(const struct ibw_counters *c);
void ibw_counters_lids_settled(struct ibw_counters *c, uint64_t signs);

/* Since ibw_counters_new(). */
struct ibw_counters_verify {
	int lids_in_flux; /* the mode above is on */
	uint64_t nodeinfos; /* NodeInfo SMPs sent to check readings */
	uint64_t verified; /* readings checked with them */
	uint64_t lid_moved; /* readings dropped: another node at the LID */
};

struct ibw_counters_verify
ibw_counters_verify_stats(const struct ibw_counters *c);

struct ibw_sweep_stats ibw_counters_last_sweep(const struct ibw_counters *c);

/* Clears of narrow counters before they saturate (reset-counters) that
 * PMAs acknowledged since ibw_counters_new(). */
struct ibw_counters_clears {
	uint64_t port_counters; /* PerfSet(PortCounters) */
	uint64_t ext_speeds; /* PerfSet(PortExtendedSpeedsCounters) */
	uint64_t congestion; /* PerfSet of a congestion attribute */
};

struct ibw_counters_clears ibw_counters_clears(const struct ibw_counters *c);
/*
 * How long the last sweep spent reading the nodes of each kind ([0] CAs,
 * [1] switches): the time some read of that kind was under way, its
 * pauses between spread reads left out. What an unspread sweep of them
 * alone would about take.
 */
void ibw_counters_last_busy(const struct ibw_counters *c, uint64_t busy_us[2]);
/* Ports that did not answer in the last sweep. */
unsigned ibw_counters_unreachable(const struct ibw_counters *c);

enum {
	IBW_PMA_REDIRECT_NONE = 0,
	IBW_PMA_REDIRECT_FOLLOWED,
	IBW_PMA_REDIRECT_REFUSED, /* see enum ibw_redirect_refusal */
};

/* Why a redirect is not followed. */
enum ibw_redirect_refusal {
	IBW_REDIRECT_OK = 0,
	/* RedirectP_Key outside the default partition: our MADs go out on
	 * P_Key index 0 */
	IBW_REDIRECT_PARTITION,
	/* a Q_Key other than the GSI's: the kernel sends every umad MAD
	 * with QP1's own Q_Key, whatever the sender sets, so the QP there
	 * would drop it */
	IBW_REDIRECT_QKEY,
	/* RedirectLID 0: served at RedirectGID alone, which needs a GRH
	 * route we do not build (libibmad refuses these too) */
	IBW_REDIRECT_GID,
};

const char *ibw_redirect_refusal_str(int why);

/* A node whose PMA answered ClassPortInfo with "redirect required". */
struct ibw_pma_redirect {
	uint64_t guid;
	uint16_t lid; /* where we asked */
	uint16_t redirect_lid; /* where it sent us (0: a GID alone) */
	uint32_t redirect_qp;
	uint32_t redirect_qkey;
	uint16_t redirect_pkey;
	uint8_t redirect_gid[16]; /* all zero when none was given */
	int followed;
	int refusal; /* enum ibw_redirect_refusal, when not followed */
};

/* The redirecting nodes: how many there are; the first @max in @out. */
unsigned ibw_counters_redirects(const struct ibw_counters *c,
				struct ibw_pma_redirect *out, unsigned max);

/* How many port records there are; record @i of them by (guid, port)
 * (sorting those a running sweep added), valid until the next answer,
 * sweep or load. */
unsigned ibw_counters_nports(struct ibw_counters *c);
const struct ibw_port_ctrs *ibw_counters_port_at(struct ibw_counters *c,
						 unsigned i);

/*
 * The port records as an immutable table shared by reference, sorted
 * as ibw_counters_port_at(): a snapshot holds one instead of a copy.
 * The records are kept in chunks shared by reference too, and a chunk
 * is copied only when a sweep writes to one of its records while a
 * table still holds it: a sweep spread over the interval copies the
 * chunks it touched between two snapshots, not every record (on the
 * largest trees the records are the biggest thing ibwatchd holds).
 * NULL if out of memory.
 */
struct ibw_ctr_table;
struct ibw_ctr_table *ibw_counters_table(struct ibw_counters *c);
/* The number of records of @t, record @i of them by (guid, port), and
 * the record of (@guid, @port) or NULL; valid as long as @t is held. */
unsigned ibw_ctr_table_n(const struct ibw_ctr_table *t);
const struct ibw_port_ctrs *ibw_ctr_table_at(const struct ibw_ctr_table *t,
					     unsigned i);
const struct ibw_port_ctrs *ibw_ctr_table_find(const struct ibw_ctr_table *t,
					       uint64_t guid, uint8_t port);
/* Thread-safe: the last holder, on any thread, frees the table. */
void ibw_ctr_table_unref(struct ibw_ctr_table *t);
const struct ibw_port_ctrs *ibw_counters_find(const struct ibw_counters *c,
					      uint64_t guid, uint8_t port);
/* Order of port records (struct ibw_port_ctrs) by (guid, port), for
 * qsort() and bsearch() over arrays of them. */
int ibw_counters_port_cmp(const void *a, const void *b);

/* PortSamplesControl:Tick of node @guid's PMA (0..255: the PortXmitWait
 * tick is Tick + 1 symbol times, docs/links.md), -1 when not read: not
 * asked yet, no answer, or the PMA does not serve it. */
int ibw_counters_tick(const struct ibw_counters *c, uint64_t guid);

struct ibw_links;

/* The state file: written atomically (temporary file, fsync, rename);
 * a torn or corrupt file is refused with -EBADMSG. It also carries the
 * link windows of @links (NULL: none; core/ctr_state.h). */
int ibw_counters_save(struct ibw_counters *c, const char *path,
		      const struct ibw_links *links);
int ibw_counters_load(struct ibw_counters *c, const char *path,
		      struct ibw_links *links, unsigned *bad_links);

/* The same through a journal (core/ctr_journal.h): after a sweep, what
 * changed (@snapshot 0) or a whole snapshot (1, at a stop); and the
 * snapshot with its journal read back. */
struct ibw_ctr_journal;
int ibw_counters_journal_save(struct ibw_counters *c, struct ibw_ctr_journal *j,
			      const struct ibw_links *links, uint64_t now_us,
			      int snapshot);
int ibw_counters_journal_load(struct ibw_counters *c, struct ibw_ctr_journal *j,
			      struct ibw_links *links, unsigned *bad_links);

#endif
