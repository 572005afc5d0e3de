/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The counter sweep's insides, shared by its two halves: counters.c runs
 * sweeps (the port records and their index, what each PMA can do, its
 * ClassPortInfo and redirection, jobs and their pacing, the API), and
 * ctr_read.c reads ports (the requests of one port, their answers, the
 * NodeInfo that vouches for them, folding them into the records,
 * PortSamplesControl's Tick and the FEC counters). Not an API: only
 * those two include it.
 */
#ifndef IBW_COUNTERS_INT_H
#define IBW_COUNTERS_INT_H

#include "counters.h"

/* PerfMgt ClassPortInfo CapabilityMask bits. */
#define PM_CAP_ALL_PORT_SELECT (1u << 8)
#define PM_CAP_EXT_WIDTH (1u << 9)
#define PM_CAP_EXT_WIDTH_NOIETF (1u << 10)
#define PM_CAP_XMIT_WAIT (1u << 12)
#define PM_CAP_RSFEC (1u << 14) /* IsRSFECCountersSupported */
/* CapabilityMask2 bit 1: IsAdditionalPortCountersExtendedSupported,
 * PortCountersExtended carries the error counters and PortXmitWait in
 * 64 bits (ConnectX-5 and later; perfquery -x prints them then). */
#define PM_CAP2_ADDL_EXT (1u << 1)

struct node_cap {
	uint64_t guid;
	uint32_t capmask;
	uint32_t capmask2; /* ClassPortInfo CapabilityMask2 */
	uint8_t have_mask; /* capmask is the PMA's answer */
	uint8_t no_details; /* the detail attributes got a status error */
	uint8_t no_vl; /* PortVLXmitWaitCounters got a status error */
	uint8_t no_fec; /* PortExtendedSpeedsCounters got a status error */
	/* PortSamplesControl:OptionMask as read with the Tick: which
	 * optional counters the PMA has (the congestion ones: cong.h);
	 * an attribute that got a status error is taken out */
	uint8_t have_optmask;
	uint64_t optmask;
	/* PortSamplesControl, read once per PMA for its Tick (the
	 * PortXmitWait tick): PSC_* below, and the value when read. */
	uint8_t psc;
	uint8_t tick;
	uint8_t psc_lost; /* PortSamplesControl requests unanswered */
	/* sweeps in a row whose ClassPortInfo of it went unanswered, or
	 * whose reads all did (the mask is then asked again): from one,
	 * it is asked with one try, at the sweep's start */
	uint8_t cpi_lost;
	uint64_t psc_sweep; /* the sweep that last asked it (one a sweep) */
	/* PMA ClassPortInfo redirection (IBA 13.4.8.1: status "redirect
	 * required"): where this node's PMA is really served. */
	uint8_t redirect; /* IBW_PMA_REDIRECT_* */
	uint8_t refusal; /* enum ibw_redirect_refusal */
	uint8_t rsl;
	uint16_t lid, rlid, rpkey;
	uint32_t rqp, rqkey;
	uint8_t rgid[16];
};

#define IBW_PSC_TRIES 3
/* PortSamplesControl requests unanswered in a row, by any PMA, after
 * which a sweep asks no more PMA for it: a fabric whose PMAs do not
 * serve it (ibsim's) would otherwise send one a node to time out. */
#define IBW_PSC_SILENT 16

enum {
	PSC_UNASKED, /* not yet, or the last try timed out */
	PSC_ASKING,
	PSC_READ, /* tick holds PortSamplesControl:Tick */
	PSC_NONE, /* a status error: the PMA does not serve it */
};

/* A job's ClassPortInfo sent ahead of its turn (job.early) */
enum { EARLY_NONE, EARLY_OUT, EARLY_FAILED };

/* What a PerfSet of ours clears before saturation (port_op.clear_kind) */
enum { CLEAR_PC, CLEAR_FEC, CLEAR_CONG };

struct job; /* one node of a sweep */

/*
 * The port records live in chunks of IBW_CTR_CHUNK, each shared by
 * reference between the counters and the tables handed out: a write
 * copies only its record's chunk while a table holds it, so a sweep
 * spread over the interval copies what it touched between two
 * snapshots, not every record of the fabric each time.
 */
#define IBW_CTR_CHUNK 256

struct ibw_ctr_chunk {
	unsigned refs; /* atomic: tables drop theirs on any thread */
	struct ibw_port_ctrs r[IBW_CTR_CHUNK]; /* unused ones zero */
};

struct ibw_ctr_table {
	unsigned refs; /* atomic: snapshots drop theirs on any thread */
	struct ibw_ctr_chunk **chunks; /* a reference on each */
	unsigned *order; /* the records by (guid, port) */
	unsigned n;
};

struct ibw_counters {
	struct ibw_engine *e;
	struct ibw_events *ev;
	struct ibw_counters_opts o;

	struct ibw_ctr_chunk **chunks; /* record i: chunks[i / CHUNK] */
	unsigned nports, cap; /* cap: chunks x IBW_CTR_CHUNK */
	/* The records by (guid, port), indices: redone when ports were
	 * added (unsorted); records never move. */
	unsigned *order;
	int unsorted;
	/* The table last handed out (our reference held), until a write
	 * (own_record). */
	struct ibw_ctr_table *shared;
	/* (guid, port) to index + 1 in the records, open addressing (0: empty):
	 * a sweep looks a port up per answer, and a first sweep adds every
	 * port unsorted. NULL if it could not be allocated (then a scan). */
	uint32_t *index;
	unsigned index_mask;

	struct node_cap *caps;
	unsigned ncaps, capcap;

	/* the sweep in progress */
	struct job *jobs;
	unsigned njobs, next_job;
	unsigned pending;
	/* MADs the started jobs still waiting for their ClassPortInfo will
	 * send: an unspread sweep counts them as pending already. */
	unsigned reserved;
	/* ClassPortInfo sent at the sweep's start and not yet answered:
	 * pending, but not held against the feed (IBW_CTR_FEED_MADS) */
	unsigned early_out;
	/* Jobs whose turn came while their ClassPortInfo was out and that
	 * has since been answered: their ports wait for room in the feed,
	 * first in, first started (ready[ready_head .. ready_tail)). */
	unsigned *ready;
	unsigned ready_head, ready_tail;
	uint64_t sweep_id;
	struct ibw_timer *pace;
	uint64_t pace_interval_us;
	unsigned pace_batch;
	uint64_t t0_mono;
	struct ibw_sweep_stats cur, last;
	unsigned unreachable_cur, unreachable_last;
	uint64_t busy_last[2]; /* ibw_counters_last_busy() */
	struct ibw_counters_progress prog; /* this sweep's, or the last's */
	/* LIDs in flux (counters.h): the mode, the signs so far, whether
	 * a discovery since the last sign found the LIDs settled, and
	 * whether the sweep under way can end the mode (it started after
	 * that discovery; with the signs as of its start). */
	int flux, settled, closing;
	uint64_t signs, closing_signs;
	/* PortSamplesControl timeouts in a row (any PMA), and whether this
	 * sweep stopped asking for it */
	unsigned psc_streak;
	int psc_quiet;
	/* ... in flight now, and whether any PMA ever answered it: until
	 * one has, at most IBW_PSC_SILENT are asked at once, so a fabric
	 * whose PMAs ignore it costs that many timeouts, not one a node */
	unsigned psc_inflight;
	int psc_heard;
	struct ibw_counters_verify vs; /* lids_in_flux unused here */
	struct ibw_counters_clears clears;
	ibw_counters_cb cb;
	void *arg;
	/* the sweep's step after each answer (counters.c), which the layers
	 * below call through ibw_ctr_answered() */
	void (*answered)(struct ibw_counters *c);
};

struct job {
	uint64_t guid;
	uint16_t lid;
	uint8_t is_switch;
	uint8_t nports;
	uint8_t port_list[255]; /* the ports to read */
	/* answers none of our SMPs (M_Key): no NodeInfo can vouch for its
	 * readings, so they are checked as with in-flux */
	uint8_t is_protected;
	uint8_t have_cap;
	/* Ports that advertise extended speeds (PortInfo:CapabilityMask,
	 * port 0's on a switch): their PortExtendedSpeedsCounters are
	 * read; pie: their PortInfoExtended can tell the FEC mode. */
	uint8_t pie;
	uint32_t esc[8];
	uint16_t reserved; /* its share of ibw_counters.reserved */
	/* EARLY_*: its ClassPortInfo went out at the sweep's start; when it
	 * failed, why (enum ibw_ctr_fail); whether its turn came while that
	 * was still out (its answer then starts the ports) */
	uint8_t early, early_fail, turn;
	/* Its ports whose readings are not all in yet, and the readings
	 * held for the NodeInfo sent once they are (verify_job). */
	uint16_t open;
	struct port_op *held;
	/* monotonic: when it started, and its last answer so far */
	uint64_t t0, t_end;
};

struct port_op {
	struct ibw_counters *c;
	uint64_t sweep;
	uint64_t guid;
	uint16_t lid;
	uint8_t port;
	uint8_t is_switch;
	uint8_t want_ext;
	uint8_t ext_err; /* its error counters are read from the extended */
	uint8_t got_pc, got_ext, failed, left;
	uint8_t fail; /* enum ibw_ctr_fail, when it fails */
	uint8_t det_asked, det_fail; /* the details: asked, and how */
	uint64_t read_us; /* CLOCK_REALTIME of its last counters answer */
	uint32_t reset_mask; /* PerfSet: the counters asked to clear */
	uint8_t clear_kind; /* CLEAR_*: which attribute a PerfSet clears */
	uint8_t clear_attr; /* CLEAR_CONG: its enum ibw_cong_attr */
	uint8_t pc[IB_PC_DATA_SZ];
	uint8_t ext[IB_PC_DATA_SZ];
	uint8_t got_det[2]; /* PortRcvErrorDetails, PortXmitDiscardDetails */
	uint8_t det[2][IB_PC_DATA_SZ];
	uint8_t got_vl; /* PortVLXmitWaitCounters */
	struct ibw_vl_xmit_wait vl;
	/* PortExtendedSpeedsCounters: what is still to ask (FEC_*, once
	 * the port's counters answer), what came, how it failed */
	uint8_t fec_todo, got_fec, fec_fail;
	struct ibw_fec_reading fec;
	/* the congestion counters: to ask (1), as the FEC ones */
	uint8_t cong_todo, cong_fail;
	struct ibw_cong_reading cong;
	unsigned job; /* its node's in ibw_counters.jobs */
	struct port_op *next; /* in its job's held list */
};

/* ctr_desc.c: each counter's description (ibw_ctr_desc()) */
extern const struct ibw_ctr_desc ibw_ctr_descs[IBW_CTR_MAX];

/* ctr_pma.c */
/* Node @guid's capabilities: NULL if never heard of; ..._get makes an
 * entry (no mask yet) if new, NULL without memory. Entries move when
 * one is made: pointers to others go stale. */
struct node_cap *ibw_ctr_cap_find(struct ibw_counters *c, uint64_t guid);
const struct node_cap *ibw_ctr_cap_lookup(const struct ibw_counters *c,
					  uint64_t guid);
struct node_cap *ibw_ctr_cap_get(struct ibw_counters *c, uint64_t guid);
/* Index of @guid in the sorted table, or where it goes. */
unsigned ibw_ctr_cap_index(const struct ibw_counters *c, uint64_t guid);
/* One PerfMgt MAD of the sweep to the PMA of node @guid at @lid (or
 * where it redirected us), with @payload (IB_PC_DATA_SZ bytes) or none,
 * with @retries or the sweep's; counted as pending once submitted.
 * Negative errno when not. */
int ibw_ctr_pma_submit_tries(struct ibw_counters *c, uint64_t guid,
			     uint16_t lid, uint8_t method, uint16_t attr,
			     uint8_t *payload, int retries, ibw_mad_cb cb,
			     void *arg);
int ibw_ctr_pma_submit(struct ibw_counters *c, uint64_t guid, uint16_t lid,
		       uint8_t method, uint16_t attr, uint8_t *payload,
		       ibw_mad_cb cb, void *arg);
/* An answer to a MAD of sweep @sweep settles its place in the current
 * sweep, if it is one of it; 1 when it is to be used. */
int ibw_ctr_settle(struct ibw_counters *c, uint64_t sweep,
		   const struct ibw_mad_done *d);
/* An answer of the sweep is handled: c->answered, the sweep's step. */
void ibw_ctr_answered(struct ibw_counters *c);

/* ctr_store.c */
/* Port (@guid, @port)'s record to write to: NULL if none; ..._get makes
 * it if new (NULL without memory). */
struct ibw_port_ctrs *ibw_ctr_port_find_w(struct ibw_counters *c, uint64_t guid,
					  uint8_t port);
struct ibw_port_ctrs *ibw_ctr_port_get(struct ibw_counters *c, uint64_t guid,
				       uint8_t port);
/* The records put in (guid, port) order (their index order; records
 * never move). 0, or -ENOMEM (then in the order they came). */
int ibw_ctr_sort_ports(struct ibw_counters *c);
/* Free @c's records: its references to their chunks. */
void ibw_ctr_chunks_free(struct ibw_counters *c);

/* ctr_read.c */
void ibw_ctr_run_job_ports(struct ibw_counters *c, struct job *j);
void ibw_ctr_port_failed(struct ibw_counters *c, const struct port_op *op);
void ibw_ctr_job_port_done(struct ibw_counters *c, unsigned idx);
/* The LIDs-in-flux bookkeeping at the end of a sweep. */
void ibw_ctr_flux_sweep_end(struct ibw_counters *c);

/* ClassPortInfo is in: PortSamplesControl first if never asked, then
 * the ports. */
void ibw_ctr_run_job(struct ibw_counters *c, struct job *j);

/* ctr_tick.c */
/* PortSamplesControl of @j's PMA asked, if it is due: 1 if asked (@then,
 * if not NULL, runs on its answer: the job's ports wait for it). */
int ibw_ctr_ask_tick(struct ibw_counters *c, const struct job *j,
		     void (*then)(struct ibw_counters *c, struct job *j));

#endif
