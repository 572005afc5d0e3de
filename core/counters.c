// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "counters.h"
#include "ctr_state.h"
#include "hash.h"
#include "log.h"
#include "loop.h"

/* PerfMgt ClassPortInfo CapabilityMask bits. */
#define PM_CAP_ALL_PORT_SELECT (1u << 8)
#define PM_CAP_EXT_WIDTH (1u << 9)
#define PM_CAP_EXT_WIDTH_NOIETF (1u << 10)
#define PM_CAP_XMIT_WAIT (1u << 12)
#define PM_CAP_RSFEC (1u << 14) /* IsRSFECCountersSupported */

#define PC(f) IB_PC_##f##_F
#define EXT(f) IB_PC_EXT_##f##_F

static const struct ibw_ctr_desc descs[IBW_CTR_MAX] = {
	[IBW_CTR_SYMBOL_ERRORS] = { "SymbolErrorCounter", "symbol_errors", 16,
				    PC(ERR_SYM), -1, 1, 1, 10 },
	[IBW_CTR_LINK_ERROR_RECOVERY] = { "LinkErrorRecoveryCounter",
					  "link_error_recovery", 8,
					  PC(LINK_RECOVERS), -1, 1, 1, 10 },
	[IBW_CTR_LINK_DOWNED] = { "LinkDownedCounter", "link_downed", 8,
				  PC(LINK_DOWNED), -1, 1, 1, 10 },
	[IBW_CTR_RCV_ERRORS] = { "PortRcvErrors", "receive_errors", 16,
				 PC(ERR_RCV), -1, 1, 1, 10 },
	[IBW_CTR_RCV_REMOTE_PHYS_ERRORS] = { "PortRcvRemotePhysicalErrors",
					     "receive_remote_physical_errors",
					     16, PC(ERR_PHYSRCV), -1, 1, 1,
					     100 },
	[IBW_CTR_RCV_SWITCH_RELAY_ERRORS] = { "PortRcvSwitchRelayErrors",
					      "receive_switch_relay_errors", 16,
					      PC(ERR_SWITCH_REL), -1, 1, 1,
					      100 },
	[IBW_CTR_XMIT_DISCARDS] = { "PortXmitDiscards", "transmit_discards", 16,
				    PC(XMT_DISCARDS), -1, 1, 1, 100 },
	[IBW_CTR_XMIT_CONSTRAINT_ERRORS] = { "PortXmitConstraintErrors",
					     "transmit_constraint_errors", 8,
					     PC(ERR_XMTCONSTR), -1, 1, 1, 100 },
	[IBW_CTR_RCV_CONSTRAINT_ERRORS] = { "PortRcvConstraintErrors",
					    "receive_constraint_errors", 8,
					    PC(ERR_RCVCONSTR), -1, 1, 1, 100 },
	[IBW_CTR_LOCAL_LINK_INTEGRITY_ERRORS] = { "LocalLinkIntegrityErrors",
						  "local_link_integrity_errors",
						  4, PC(ERR_LOCALINTEG), -1, 1,
						  1, 10 },
	[IBW_CTR_EXCESSIVE_BUFFER_OVERRUN_ERRORS] = { "ExcessiveBufferOverrunErrors",
						      "excessive_buffer_overrun_errors",
						      4, PC(ERR_EXCESS_OVR), -1,
						      1, 1, 10 },
	[IBW_CTR_VL15_DROPPED] = { "VL15Dropped", "vl15_dropped", 16,
				   PC(VL15_DROPPED), -1, 1, 1, 100 },
	[IBW_CTR_XMIT_WAIT] = { "PortXmitWait", "transmit_wait", 32,
				PC(XMT_WAIT), -1, 1, 1, 1000 },
	[IBW_CTR_QP1_DROPPED] = { "QP1Dropped", "qp1_dropped", 16, PC(QP1_DROP),
				  -1, 1, 1, 0 },
	[IBW_CTR_XMIT_DATA] = { "PortXmitData", "transmit_data_bytes", 32,
				PC(XMT_BYTES), EXT(XMT_BYTES), 4, 0, 0 },
	[IBW_CTR_RCV_DATA] = { "PortRcvData", "receive_data_bytes", 32,
			       PC(RCV_BYTES), EXT(RCV_BYTES), 4, 0, 0 },
	[IBW_CTR_XMIT_PKTS] = { "PortXmitPkts", "transmit_packets", 32,
				PC(XMT_PKTS), EXT(XMT_PKTS), 1, 0, 0 },
	[IBW_CTR_RCV_PKTS] = { "PortRcvPkts", "receive_packets", 32,
			       PC(RCV_PKTS), EXT(RCV_PKTS), 1, 0, 0 },
	[IBW_CTR_UNICAST_XMIT_PKTS] = { "PortUnicastXmitPkts",
					"unicast_transmit_packets", 0, -1,
					EXT(XMT_UPKTS), 1, 0, 0 },
	[IBW_CTR_UNICAST_RCV_PKTS] = { "PortUnicastRcvPkts",
				       "unicast_receive_packets", 0, -1,
				       EXT(RCV_UPKTS), 1, 0, 0 },
	[IBW_CTR_MULTICAST_XMIT_PKTS] = { "PortMulticastXmitPkts",
					  "multicast_transmit_packets", 0, -1,
					  EXT(XMT_MPKTS), 1, 0, 0 },
	[IBW_CTR_MULTICAST_RCV_PKTS] = { "PortMulticastRcvPkts",
					 "multicast_receive_packets", 0, -1,
					 EXT(RCV_MPKTS), 1, 0, 0 },
#define DET(name, key, attr, f)                         \
	{                                               \
		name, key, 16, -1, -1, 1, 1, 0, attr, f \
	}
	[IBW_CTR_LOCAL_PHYSICAL_ERRORS] = DET("PortLocalPhysicalErrors",
					      "local_physical_errors", 0x15,
					      IB_PC_RCV_LOCAL_PHY_ERR_F),
	[IBW_CTR_MALFORMED_PACKET_ERRORS] = DET("PortMalformedPktErrors",
						"malformed_packet_errors", 0x15,
						IB_PC_RCV_MALFORMED_PKT_ERR_F),
	[IBW_CTR_BUFFER_OVERRUN_ERRORS] = DET("PortBufferOverrunErrors",
					      "buffer_overrun_errors", 0x15,
					      IB_PC_RCV_BUF_OVR_ERR_F),
	[IBW_CTR_DLID_MAPPING_ERRORS] = DET("PortDLIDMappingErrors",
					    "dlid_mapping_errors", 0x15,
					    IB_PC_RCV_DLID_MAP_ERR_F),
	[IBW_CTR_VL_MAPPING_ERRORS] = DET("PortVLMappingErrors",
					  "vl_mapping_errors", 0x15,
					  IB_PC_RCV_VL_MAP_ERR_F),
	[IBW_CTR_LOOPING_ERRORS] = DET("PortLoopingErrors", "looping_errors",
				       0x15, IB_PC_RCV_LOOPING_ERR_F),
	[IBW_CTR_INACTIVE_DISCARDS] = DET("PortInactiveDiscards",
					  "inactive_discards", 0x16,
					  IB_PC_XMT_INACT_DISC_F),
	[IBW_CTR_NEIGHBOR_MTU_DISCARDS] = DET("PortNeighborMTUDiscards",
					      "neighbor_mtu_discards", 0x16,
					      IB_PC_XMT_NEIGH_MTU_DISC_F),
	[IBW_CTR_SW_LIFETIME_LIMIT_DISCARDS] =
		DET("PortSwLifetimeLimitDiscards", "sw_lifetime_limit_discards",
		    0x16, IB_PC_XMT_SW_LIFE_DISC_F),
	[IBW_CTR_SW_HOQ_LIFETIME_LIMIT_DISCARDS] =
		DET("PortSwHOQLifetimeLimitDiscards",
		    "sw_hoq_lifetime_limit_discards", 0x16,
		    IB_PC_XMT_SW_HOL_DISC_F),
#undef DET
};

/* PortCounters CounterSelect bit of each counter (CounterSelect2 for the
 * ones marked 0x10000 and up). */
static const uint32_t select_bit[IBW_CTR_MAX] = {
	[IBW_CTR_SYMBOL_ERRORS] = 1u << 0,
	[IBW_CTR_LINK_ERROR_RECOVERY] = 1u << 1,
	[IBW_CTR_LINK_DOWNED] = 1u << 2,
	[IBW_CTR_RCV_ERRORS] = 1u << 3,
	[IBW_CTR_RCV_REMOTE_PHYS_ERRORS] = 1u << 4,
	[IBW_CTR_RCV_SWITCH_RELAY_ERRORS] = 1u << 5,
	[IBW_CTR_XMIT_DISCARDS] = 1u << 6,
	[IBW_CTR_XMIT_CONSTRAINT_ERRORS] = 1u << 7,
	[IBW_CTR_RCV_CONSTRAINT_ERRORS] = 1u << 8,
	[IBW_CTR_LOCAL_LINK_INTEGRITY_ERRORS] = 1u << 9,
	[IBW_CTR_EXCESSIVE_BUFFER_OVERRUN_ERRORS] = 1u << 10,
	[IBW_CTR_VL15_DROPPED] = 1u << 11,
	[IBW_CTR_XMIT_DATA] = 1u << 12,
	[IBW_CTR_RCV_DATA] = 1u << 13,
	[IBW_CTR_XMIT_PKTS] = 1u << 14,
	[IBW_CTR_RCV_PKTS] = 1u << 15,
	[IBW_CTR_XMIT_WAIT] = 1u << 16, /* CounterSelect2 bit 0 */
};

const struct ibw_ctr_desc *ibw_ctr_desc(enum ibw_ctr c)
{
	return (unsigned)c < IBW_CTR_MAX ? &descs[c] : NULL;
}

int ibw_ctr_lookup(const char *name)
{
	int i;

	for (i = 0; i < IBW_CTR_MAX; i++)
		if (!strcmp(name, descs[i].name) || !strcmp(name, descs[i].key))
			return i;
	return -1;
}

struct node_cap {
	uint64_t guid;
	uint32_t capmask;
	uint8_t have_mask; /* capmask is the PMA's answer */
	uint8_t no_details; /* the detail attributes got a status error */
	uint8_t no_vl; /* PortVLXmitWaitCounters got a status error */
	uint8_t no_fec; /* PortExtendedSpeedsCounters got a status error */
	/* PortSamplesControl, read once per PMA for its Tick (the
	 * PortXmitWait tick): PSC_* below, and the value when read. */
	uint8_t psc;
	uint8_t tick;
	uint8_t psc_lost; /* PortSamplesControl requests unanswered */
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

struct job; /* one node of a sweep */

struct ibw_ctr_table {
	unsigned refs; /* atomic: snapshots drop theirs on any thread */
	struct ibw_port_ctrs *ports;
	unsigned n;
};

struct ibw_counters {
	struct ibw_engine *e;
	struct ibw_events *ev;
	struct ibw_counters_opts o;

	struct ibw_port_ctrs *ports;
	unsigned nports, cap;
	int unsorted;
	/* The table ports was last handed out as (our reference held),
	 * until a write makes the records ours again (own_ports). */
	struct ibw_ctr_table *shared;
	/* (guid, port) to index + 1 in ports, open addressing (0: empty):
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
	ibw_counters_cb cb;
	void *arg;
};

struct job {
	uint64_t guid;
	uint16_t lid;
	uint8_t is_switch;
	uint8_t nports;
	uint8_t port_list[255]; /* the ports to read */
	uint8_t is_sm; /* the port at lid has PortInfo:IsSM */
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
	uint8_t got_pc, got_ext, failed, left;
	uint8_t fail; /* enum ibw_ctr_fail, when it fails */
	uint8_t det_asked, det_fail; /* the details: asked, and how */
	uint64_t read_us; /* CLOCK_REALTIME of its last counters answer */
	uint32_t reset_mask; /* PerfSet: the counters asked to clear */
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
	unsigned job; /* its node's in ibw_counters.jobs */
	struct port_op *next; /* in its job's held list */
};

int ibw_counters_port_cmp(const void *a, const void *b)
{
	const struct ibw_port_ctrs *x = a, *y = b;

	if (x->guid != y->guid)
		return (x->guid > y->guid) - (x->guid < y->guid);
	return (int)x->port - (int)y->port;
}

static unsigned port_hash(uint64_t guid, uint8_t port)
{
	uint64_t h = ibw_fnv1a64(IBW_FNV1A64_INIT, &guid, sizeof(guid));

	return (unsigned)ibw_fnv1a64(h, &port, 1);
}

static void index_put(struct ibw_counters *c, unsigned i)
{
	unsigned h = port_hash(c->ports[i].guid, c->ports[i].port);

	while (c->index[h & c->index_mask])
		h++;
	c->index[h & c->index_mask] = i + 1;
}

/* Index every record again: the array moved or was reordered. The table
 * has at least twice as many slots as the array has room for. */
static void index_rebuild(struct ibw_counters *c)
{
	unsigned size = 512, i;

	while (size < 2 * c->cap)
		size *= 2;
	free(c->index);
	c->index = calloc(size, sizeof(*c->index));
	c->index_mask = size - 1;
	for (i = 0; c->index && i < c->nports; i++)
		index_put(c, i);
}

/* Only records added since the last table was handed out are unsorted,
 * and adding made them ours (own_ports): a shared table is never
 * reordered. */
static void sort_ports(struct ibw_counters *c)
{
	if (!c->unsorted)
		return;
	if (c->nports)
		qsort(c->ports, c->nports, sizeof(*c->ports),
		      ibw_counters_port_cmp);
	c->unsorted = 0;
	index_rebuild(c);
}

const struct ibw_port_ctrs *ibw_counters_find(const struct ibw_counters *c,
					      uint64_t guid, uint8_t port)
{
	const struct ibw_port_ctrs *p;
	unsigned h, k, i;

	if (!c->index) {
		for (i = 0; i < c->nports; i++)
			if (c->ports[i].guid == guid &&
			    c->ports[i].port == port)
				return &c->ports[i];
		return NULL;
	}
	for (h = port_hash(guid, port); (k = c->index[h & c->index_mask]);
	     h++) {
		p = &c->ports[k - 1];
		if (p->guid == guid && p->port == port)
			return p;
	}
	return NULL;
}

/* Free an array of records, with their references to FEC records. */
static void ports_free(struct ibw_port_ctrs *p, unsigned n)
{
	unsigned i;

	for (i = 0; p && i < n; i++)
		ibw_fec_unref(p[i].fec);
	free(p);
}

void ibw_ctr_table_unref(struct ibw_ctr_table *t)
{
	if (!t || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL))
		return;
	ports_free(t->ports, t->n);
	free(t);
}

const struct ibw_port_ctrs *ibw_ctr_table_ports(const struct ibw_ctr_table *t,
						unsigned *n)
{
	*n = t->n;
	return t->ports;
}

/*
 * Make the records ours to write before any write: while a table handed
 * out is held by someone else, they get a copy of their own (at the same
 * places, so the index stays right); when we are its last holder, the
 * array is simply ours again. -ENOMEM: the records are still shared and
 * must not be written.
 */
static int own_ports(struct ibw_counters *c)
{
	struct ibw_ctr_table *t = c->shared;
	struct ibw_port_ctrs *np;
	unsigned i;

	if (!t)
		return 0;
	/* Only we hand out references, so a count of 1 stays 1; acquire
	 * orders the last reader's reads before our writes. */
	if (__atomic_load_n(&t->refs, __ATOMIC_ACQUIRE) == 1) {
		free(t);
		c->shared = NULL;
		return 0;
	}
	np = malloc((c->cap ? c->cap : 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	if (c->nports)
		memcpy(np, c->ports, c->nports * sizeof(*np));
	/* the FEC records are shared by reference too */
	for (i = 0; i < c->nports; i++)
		ibw_fec_ref(np[i].fec);
	c->ports = np;
	c->shared = NULL;
	ibw_ctr_table_unref(t);
	return 0;
}

/* The record of (@guid, @port) to write to, or NULL if there is none. */
static struct ibw_port_ctrs *port_find_w(struct ibw_counters *c, uint64_t guid,
					 uint8_t port)
{
	if (own_ports(c) < 0)
		return NULL;
	return (struct ibw_port_ctrs *)ibw_counters_find(c, guid, port);
}

/* The record of (@guid, @port) to write to, added if new; NULL if out of
 * memory. */
static struct ibw_port_ctrs *port_get(struct ibw_counters *c, uint64_t guid,
				      uint8_t port)
{
	struct ibw_port_ctrs *p = port_find_w(c, guid, port);

	if (p)
		return p;
	if (c->shared)
		return NULL; /* own_ports() failed */
	if (c->nports == c->cap) {
		unsigned cap = c->cap ? c->cap * 2 : 256;
		struct ibw_port_ctrs *np = realloc(c->ports, cap * sizeof(*np));

		if (!np)
			return NULL;
		c->ports = np;
		c->cap = cap;
		index_rebuild(c);
	}
	p = &c->ports[c->nports++];
	memset(p, 0, sizeof(*p));
	p->guid = guid;
	p->port = port;
	c->unsorted = 1;
	if (c->index)
		index_put(c, c->nports - 1);
	return p;
}

/* Index of @guid in the sorted capability table, or where it goes. */
static unsigned cap_index(const struct ibw_counters *c, uint64_t guid)
{
	unsigned lo = 0, hi = c->ncaps;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (c->caps[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct node_cap *cap_find(struct ibw_counters *c, uint64_t guid)
{
	unsigned i = cap_index(c, guid);

	return i < c->ncaps && c->caps[i].guid == guid ? &c->caps[i] : NULL;
}

static void cap_set(struct ibw_counters *c, uint64_t guid, uint32_t mask)
{
	unsigned lo = cap_index(c, guid);

	if (lo < c->ncaps && c->caps[lo].guid == guid) {
		c->caps[lo].capmask = mask;
		c->caps[lo].have_mask = 1;
		return;
	}
	if (c->ncaps == c->capcap) {
		unsigned cap = c->capcap ? c->capcap * 2 : 256;
		struct node_cap *n = realloc(c->caps, cap * sizeof(*n));

		if (!n)
			return;
		c->caps = n;
		c->capcap = cap;
	}
	memmove(&c->caps[lo + 1], &c->caps[lo],
		(c->ncaps - lo) * sizeof(*c->caps));
	memset(&c->caps[lo], 0, sizeof(c->caps[lo]));
	c->caps[lo].guid = guid;
	c->caps[lo].capmask = mask;
	c->caps[lo].have_mask = 1;
	c->ncaps++;
}

/* Where the PMA of node @guid (at @lid) answers: its LID and QP1, or
 * where it redirected us. */
static void pma_dest(struct ibw_counters *c, uint64_t guid, uint16_t lid,
		     struct ibw_dest *d)
{
	struct node_cap *nc = cap_find(c, guid);

	ibw_dest_lid(d, lid);
	if (nc && nc->redirect == IBW_PMA_REDIRECT_FOLLOWED) {
		if (nc->rlid)
			d->lid = nc->rlid;
		d->qpn = nc->rqp;
		d->qkey = nc->rqkey;
		d->sl = nc->rsl;
	}
}

/* One PerfMgt MAD of the sweep to the PMA of node @guid at @lid (or
 * where it redirected us), with @payload (IB_PC_DATA_SZ bytes) or none;
 * counted as pending once it is submitted. Negative errno when not. */
static int pma_submit_tries(struct ibw_counters *c, uint64_t guid, uint16_t lid,
			    uint8_t method, uint16_t attr, uint8_t *payload,
			    int retries, ibw_mad_cb cb, void *arg)
{
	struct ibw_mad_req r;
	int rc;

	memset(&r, 0, sizeof(r));
	pma_dest(c, guid, lid, &r.dest);
	r.mgmt_class = IBW_CLASS_PERF;
	r.method = method;
	r.attr_id = attr;
	r.data = payload;
	r.data_len = payload ? IB_PC_DATA_SZ : 0;
	r.timeout_ms = c->o.timeout_ms;
	r.retries = retries;
	r.cb = cb;
	r.arg = arg;
	rc = ibw_engine_submit(c->e, &r);
	if (rc < 0)
		return rc;
	c->pending++;
	c->cur.mads++;
	return 0;
}

/* ... with the sweep's retries */
static int pma_submit(struct ibw_counters *c, uint64_t guid, uint16_t lid,
		      uint8_t method, uint16_t attr, uint8_t *payload,
		      ibw_mad_cb cb, void *arg)
{
	return pma_submit_tries(c, guid, lid, method, attr, payload,
				c->o.retries, cb, arg);
}

static void cap_no_details(struct ibw_counters *c, uint64_t guid)
{
	struct node_cap *nc = cap_find(c, guid);

	if (nc)
		nc->no_details = 1;
}

static void cap_no_vl(struct ibw_counters *c, uint64_t guid)
{
	struct node_cap *nc = cap_find(c, guid);

	if (nc)
		nc->no_vl = 1;
}

/*
 * PortVLXmitWaitCounters into running totals. The 16-bit fields saturate
 * and nothing else clears them but a PerfSet: a value below the last one
 * is taken as a reset and counted whole, as ibw_ctr_fold() does.
 */
static void fold_vl(struct ibw_port_ctrs *p, const struct ibw_vl_xmit_wait *w)
{
	unsigned k;

	for (k = 0; k < 16; k++) {
		uint16_t raw = w->wait[k];

		if (!p->have_vl)
			p->vl_xmit_wait[k] = raw;
		else if (raw >= p->vl_raw[k])
			p->vl_xmit_wait[k] += raw - p->vl_raw[k];
		else
			p->vl_xmit_wait[k] += raw;
		p->vl_raw[k] = raw;
	}
	p->have_vl = 1;
}

static uint64_t threshold(const struct ibw_counters *c, int i)
{
	return c->o.thresholds[i] ? c->o.thresholds[i] : descs[i].threshold;
}

static void sweep_done_if_idle(struct ibw_counters *c);

static void emit(struct ibw_counters *c, enum ibw_event_kind k,
		 const struct ibw_port_ctrs *p, const char *what,
		 uint64_t old_v, uint64_t new_v)
{
	struct ibw_event e;

	if (!c->ev)
		return;
	memset(&e, 0, sizeof(e));
	e.kind = k;
	e.node_guid = p->guid;
	e.port = p->port;
	e.old_value = old_v;
	e.new_value = new_v;
	snprintf(e.what, sizeof(e.what), "%s", what);
	ibw_events_add(c->ev, &e);
}

static void reset_done(const struct ibw_mad_done *d, void *arg)
{
	struct port_op *op = arg;
	struct ibw_counters *c = op->c;
	struct ibw_port_ctrs *p;
	int i;

	if (d->result == IBW_MAD_CANCELLED) {
		free(op);
		return;
	}
	if (op->sweep == c->sweep_id && d->result == IBW_MAD_OK) {
		p = port_find_w(c, op->guid, op->port);
		for (i = 0; p && i < IBW_CTR_MAX; i++)
			if (op->reset_mask & select_bit[i])
				p->v[i].reset_by_us = 1;
	}
	c->pending--;
	free(op);
	sweep_done_if_idle(c);
}

/* PerfSet(PortCounters) with CounterSelect: clear counters about to
 * saturate. Their values were folded into the totals just before. */
static void reset_counters(struct ibw_counters *c, const struct port_op *src,
			   uint32_t mask)
{
	struct port_op *op = calloc(1, sizeof(*op));
	uint8_t payload[IB_PC_DATA_SZ];

	if (!op)
		return;
	*op = *src;
	op->reset_mask = mask;
	memset(payload, 0, sizeof(payload));
	mad_set_field(payload, 0, IB_PC_PORT_SELECT_F, src->port);
	mad_set_field(payload, 0, IB_PC_COUNTER_SELECT_F, mask & 0xffff);
	mad_set_field(payload, 0, IB_PC_COUNTER_SELECT2_F, (mask >> 16) & 0xff);
	if (pma_submit(c, src->guid, src->lid, IBW_METHOD_SET,
		       IBW_ATTR_PORT_COUNTERS, payload, reset_done, op) < 0)
		free(op);
}

/*
 * Counter @d as @op read it: 1 from PortCountersExtended, 0 from
 * PortCounters or a detail attribute, -1 when @op holds no reading of it.
 * *max is the field's largest value (0: 64 bits, never saturates).
 */
static int op_raw(const struct port_op *op, const struct ibw_ctr_desc *d,
		  uint64_t *raw, uint64_t *max)
{
	if (d->detail_attr) {
		int k = d->detail_attr == 0x16;

		if (!op->got_det[k])
			return -1;
		*raw = ibw_mad_get(op->det[k], d->detail_field);
		*max = ibw_ctr_max(16);
		return 0;
	}
	if (op->got_ext && d->ext_field >= 0) {
		*raw = ibw_mad_get64(op->ext, d->ext_field);
		*max = ibw_ctr_max(64);
		return 1;
	}
	if (d->pc_field < 0)
		return -1;
	*raw = ibw_mad_get(op->pc, d->pc_field);
	*max = ibw_ctr_max(d->pc_bits);
	return 0;
}

static void fold_port(struct ibw_counters *c, struct port_op *op)
{
	struct ibw_port_ctrs *p = port_get(c, op->guid, op->port);
	uint64_t now_mono = ibw_now_us(), dt;
	uint64_t prev_x, prev_r, prev_xp, prev_rp;
	uint32_t reset_mask = 0;
	unsigned nresets = 0;
	const char *first_reset = NULL;
	int i;

	if (!p)
		return;
	p->is_switch = op->is_switch;
	p->lid = op->lid;
	prev_x = p->v[IBW_CTR_XMIT_DATA].total;
	prev_r = p->v[IBW_CTR_RCV_DATA].total;
	prev_xp = p->v[IBW_CTR_XMIT_PKTS].total;
	prev_rp = p->v[IBW_CTR_RCV_PKTS].total;
	p->have_ext = op->got_ext;
	p->error_increments = 0;
	for (i = 0; i < IBW_CTR_MAX; i++) {
		const struct ibw_ctr_desc *d = &descs[i];
		struct ibw_ctr_val *v = &p->v[i];
		uint64_t raw, max;
		int use_ext = op_raw(op, d, &raw, &max);
		enum ibw_ctr_step step;

		if (use_ext < 0)
			continue;
		step = ibw_ctr_update(v, raw, max, d->scale, use_ext);
		if (step == IBW_CTR_STEP_REBASED)
			continue;
		if (step == IBW_CTR_STEP_RESET) {
			nresets++;
			if (!first_reset)
				first_reset = d->name;
		}
		if (d->is_error) {
			uint64_t thr = threshold(c, i);

			p->error_increments += v->last_delta;
			if (ibw_ctr_threshold(v, raw, thr))
				emit(c, IBW_EVT_THRESHOLD_CROSSED, p, d->name,
				     thr, raw);
		}
		/* Clear narrow counters before they saturate, if asked. */
		if (!use_ext && ibw_ctr_near_max(raw, max) &&
		    ((d->is_error && c->o.reset_errors) ||
		     (!d->is_error && c->o.reset_data)))
			reset_mask |= select_bit[i];
	}
	for (i = 0; i < 4; i++) {
		struct ibw_ctr_val *v = &p->v[IBW_CTR_XMIT_DATA + i];

		p->pc_raw[i] = ibw_mad_get(
			op->pc, descs[IBW_CTR_XMIT_DATA + i].pc_field);
		/* Totals come from the 64-bit counters; still say when the
		 * 32-bit ones are stuck at their maximum. */
		if (v->from_ext)
			v->saturated = (uint8_t)ibw_ctr_saturated(
				p->pc_raw[i], ibw_ctr_max(32));
	}
	if (nresets) {
		p->resets += nresets;
		p->discontinuity_us = ibw_realtime_us();
		emit(c, IBW_EVT_COUNTER_RESET, p, first_reset, 0, nresets);
	}
	dt = p->prev_updated_mono ? now_mono - p->prev_updated_mono : 0;
	if (dt) {
		p->xmit_bytes_per_s =
			ibw_ctr_rate(p->v[IBW_CTR_XMIT_DATA].total, prev_x, dt);
		p->rcv_bytes_per_s =
			ibw_ctr_rate(p->v[IBW_CTR_RCV_DATA].total, prev_r, dt);
		p->xmit_pkts_per_s = ibw_ctr_rate(p->v[IBW_CTR_XMIT_PKTS].total,
						  prev_xp, dt);
		p->rcv_pkts_per_s =
			ibw_ctr_rate(p->v[IBW_CTR_RCV_PKTS].total, prev_rp, dt);
	}
	if (op->got_vl)
		fold_vl(p, &op->vl);
	if (op->got_fec) {
		const struct ibw_fec *nf = ibw_fec_fold(p->fec, &op->fec);

		if (nf) {
			ibw_fec_unref(p->fec);
			p->fec = nf;
		}
	}
	p->fec_fail = op->fec_fail;
	/* read before, not this sweep (no longer asked): not current */
	if (p->fec && !op->got_fec && !op->fec_fail)
		p->fec_fail = p->fec_lost >= IBW_PSC_TRIES
				      ? IBW_CTR_FAIL_TIMEOUT
				      : IBW_CTR_FAIL_ERROR;
	/* A port whose counters answer and whose FEC counters do not, in
	 * IBW_PSC_TRIES sweeps in a row (ibsim's PMA advertises them and
	 * drops them), is not asked for them again (fec_plan). */
	if (op->got_fec)
		p->fec_lost = 0;
	else if (op->fec_fail == IBW_CTR_FAIL_TIMEOUT && p->fec_lost < 255)
		p->fec_lost++;
	p->prev_updated_mono = now_mono;
	p->updated_us = op->read_us ? op->read_us : ibw_realtime_us();
	p->stale = 0;
	p->fail = IBW_CTR_FAIL_NONE;
	p->detail_asked = op->det_asked;
	p->detail_fail = op->det_fail;
	p->unreachable = 0;
	c->prog.read++;
	if (reset_mask)
		reset_counters(c, op, reset_mask);
}

/* @op's port could not be read this sweep, for @op->fail (an error
 * when it says nothing). */
static void port_failed(struct ibw_counters *c, const struct port_op *op)
{
	struct ibw_port_ctrs *p = port_get(c, op->guid, op->port);

	/* Keep the last values; never zero or invent them. */
	if (p) {
		p->is_switch = op->is_switch;
		p->stale = 1;
		p->fail = op->fail ? op->fail : IBW_CTR_FAIL_ERROR;
		p->detail_asked = 0;
		p->detail_fail = IBW_CTR_FAIL_NONE;
		p->unreachable++;
	}
	c->unreachable_cur++;
	c->prog.unreachable++;
}

/* Would folding @op count a reset (a counter below its last reading)? */
static int would_reset(struct ibw_counters *c, const struct port_op *op)
{
	const struct ibw_port_ctrs *p =
		ibw_counters_find(c, op->guid, op->port);
	int i;

	if (!p)
		return 0;
	for (i = 0; i < IBW_CTR_MAX; i++) {
		uint64_t raw, max;
		int use_ext = op_raw(op, &descs[i], &raw, &max);

		if (use_ext >= 0 && ibw_ctr_would_reset(&p->v[i], raw, use_ext))
			return 1;
	}
	return 0;
}

/* An answer to a MAD of sweep @sweep settles its place in the current
 * sweep, if it is one of it; 1 when it is to be used. */
static int settle(struct ibw_counters *c, uint64_t sweep,
		  const struct ibw_mad_done *d)
{
	if (sweep != c->sweep_id)
		return 0; /* an old sweep's */
	if (c->pending)
		c->pending--;
	return d->result != IBW_MAD_CANCELLED; /* else the engine goes */
}

static int job_has_port(const struct job *j, unsigned port)
{
	unsigned i;

	for (i = 0; i < j->nports; i++)
		if (j->port_list[i] == port)
			return 1;
	return 0;
}

static void flux_on(struct ibw_counters *c, const char *why)
{
	c->signs++;
	c->settled = 0;
	if (c->flux) {
		log_debug("counters", "LIDs still in flux: %s", why);
		return;
	}
	c->flux = 1;
	log_info("counters",
		 "LIDs in flux (%s)%s until a discovery finds them settled",
		 why,
		 c->o.check == IBW_CHECK_IN_FLUX
			 ? ": every counter reading is checked with NodeInfo"
			 : "");
}

void ibw_counters_lids_moved(struct ibw_counters *c, const char *why)
{
	flux_on(c, why);
}

uint64_t ibw_counters_lid_signs(const struct ibw_counters *c)
{
	return c->signs;
}

void ibw_counters_lids_settled(struct ibw_counters *c, uint64_t signs)
{
	if (c->flux && signs == c->signs)
		c->settled = 1;
}

/* A sweep ends (or had nothing to read): if it started after a settled
 * discovery and no sign came meanwhile, every reading it folded was
 * checked against LIDs that no longer move, and the mode ends. */
static void flux_sweep_end(struct ibw_counters *c)
{
	if (c->closing && c->flux && c->settled &&
	    c->signs == c->closing_signs) {
		c->flux = 0;
		c->settled = 0;
		log_info("counters",
			 "LIDs settled%s (%" PRIu64 " readings checked, "
			 "%" PRIu64 " dropped as another node's so far)",
			 c->o.check == IBW_CHECK_IN_FLUX
				 ? ": counter readings are checked only when "
				   "they go backwards again"
				 : "",
			 c->vs.verified, c->vs.lid_moved);
	}
	c->closing = 0;
}

struct verify_op {
	struct ibw_counters *c;
	uint64_t sweep;
	unsigned job;
};

/*
 * The NodeInfo of a job is in: its held readings are folded if the node
 * at the LID is the node we meant, else dropped (another node there, or
 * no answer to tell). Another node there is a sign of LIDs in flux.
 */
static void verify_answer(const struct ibw_mad_done *d, void *arg)
{
	struct verify_op *v = arg;
	struct ibw_counters *c = v->c;
	struct ibw_nodeinfo ni;
	struct port_op *op;
	struct job *j;
	int ours = 0, other = 0;
	unsigned n = 0;

	/* Cancelled: the engine goes, and ibw_counters_free() the held
	 * readings. */
	if (!settle(c, v->sweep, d)) {
		free(v);
		return;
	}
	j = &c->jobs[v->job];
	j->t_end = ibw_now_us();
	if (d->result == IBW_MAD_OK &&
	    ibw_nodeinfo_decode(d->mad, d->len, &ni) == 0) {
		/* A CA's PMA answers for the port the MAD came in by: on a
		 * CA whose ports traded LIDs, the right node is not enough. */
		ours = ni.node_guid == j->guid &&
		       (j->is_switch || job_has_port(j, ni.local_port));
		other = !ours;
	} else if (d->result == IBW_MAD_TIMEOUT) {
		c->cur.timeouts++;
	} else {
		c->cur.errors++;
	}
	while ((op = j->held)) {
		j->held = op->next;
		c->vs.verified++;
		c->prog.verified++;
		n++;
		if (ours) {
			fold_port(c, op);
		} else {
			if (other) {
				c->vs.lid_moved++;
				c->prog.lid_moved++;
				op->fail = IBW_CTR_FAIL_LID_MOVED;
			} else if (d->result == IBW_MAD_TIMEOUT) {
				op->fail = IBW_CTR_FAIL_TIMEOUT;
			}
			port_failed(c, op);
		}
		free(op);
	}
	if (other) {
		log_info("counters",
			 "LID %u now answers as node 0x%016" PRIx64
			 ", not 0x%016" PRIx64 ": the SM moved the LIDs; %u "
			 "readings dropped until discovery follows",
			 j->lid, ni.node_guid, j->guid, n);
		flux_on(c, "another node answered at a LID");
	}
	free(v);
	sweep_done_if_idle(c);
}

/*
 * All readings of job @idx are in and some are held: ask the node at its
 * LID who it is (NodeInfo, one SMP for all its ports). Sent after the
 * last reading, so the answer speaks for the LID as the readings found
 * it. A question that cannot be sent drops them: a reading nobody
 * vouched for is not folded.
 */
static void verify_job(struct ibw_counters *c, unsigned idx)
{
	struct job *j = &c->jobs[idx];
	struct verify_op *v = calloc(1, sizeof(*v));
	struct ibw_mad_req r;
	struct port_op *op;

	if (v) {
		v->c = c;
		v->sweep = c->sweep_id;
		v->job = idx;
		memset(&r, 0, sizeof(r));
		ibw_dest_lid(&r.dest, j->lid);
		r.mgmt_class = IBW_CLASS_SMI;
		r.method = IBW_METHOD_GET;
		r.attr_id = IBW_ATTR_NODE_INFO;
		r.timeout_ms = c->o.timeout_ms;
		r.retries = c->o.retries;
		r.cb = verify_answer;
		r.arg = v;
		if (ibw_engine_submit(c->e, &r) == 0) {
			c->pending++;
			c->cur.mads++;
			c->vs.nodeinfos++;
			return;
		}
		free(v);
	}
	c->cur.errors++;
	while ((op = j->held)) {
		j->held = op->next;
		port_failed(c, op);
		free(op);
	}
}

/* A port of job @idx is done with (its readings in, or never sent):
 * the last one sends the job's NodeInfo if readings wait for it. */
static void job_port_done(struct ibw_counters *c, unsigned idx)
{
	struct job *j = &c->jobs[idx];

	if (j->open && --j->open == 0 && j->held)
		verify_job(c, idx);
}

/*
 * Between the SM moving the LIDs and our next discovery, a LID of the
 * last discovery may belong to another node: with an LMC, even the old
 * LID of a port that moved can reach the port whose base LID is next to
 * it. Every reading (--counter-check always), or with in-flux a reading
 * that went backwards and while the LIDs are in flux every one, is held
 * until the node at that LID has said who it is (verify_job); the rest
 * are folded now.
 */
static void port_done(struct ibw_counters *c, struct port_op *op)
{
	unsigned idx = op->job;
	struct job *j = &c->jobs[idx];

	if (op->got_pc && !op->failed &&
	    ((c->o.check == IBW_CHECK_ALWAYS && !j->is_protected) || c->flux ||
	     would_reset(c, op))) {
		op->next = j->held;
		j->held = op;
	} else {
		if (op->got_pc && !op->failed)
			fold_port(c, op);
		else
			port_failed(c, op);
		free(op);
	}
	job_port_done(c, idx);
}

/* One of a port's answers is in; the last one settles the port. */
static void port_settled(struct ibw_counters *c, struct port_op *op)
{
	c->jobs[op->job].t_end = ibw_now_us();
	c->pending--;
	if (--op->left)
		return;
	port_done(c, op);
	sweep_done_if_idle(c);
}

static void ask_tick(struct ibw_counters *c, const struct job *j);
static void ask_fec_todo(struct ibw_counters *c, struct port_op *op);

static void port_answer(const struct ibw_mad_done *d, void *arg)
{
	struct port_op *op = arg;
	struct ibw_counters *c = op->c;
	int ext = 0;

	if (op->sweep != c->sweep_id || d->result == IBW_MAD_CANCELLED) {
		/* An old sweep's, or the engine is going away. */
		if (op->sweep == c->sweep_id && c->pending)
			c->pending--;
		if (--op->left == 0)
			free(op);
		return;
	}
	if (d->mad && d->len >= IBW_MAD_SIZE) {
		unsigned attr = ibw_mad_get(d->mad, IB_MAD_ATTRID_F);

		ext = attr == IBW_ATTR_PORT_COUNTERS_EXT;
		if (attr == 0x15 || attr == 0x16) {
			/* Details are extra: a port that has none (a status
			 * error, no answer) keeps its other counters. */
			int k = attr == 0x16;

			if (d->result == IBW_MAD_OK) {
				memcpy(op->det[k], d->mad + IB_PC_DATA_OFFS,
				       IB_PC_DATA_SZ);
				op->got_det[k] = 1;
			} else if (d->result == IBW_MAD_STATUS) {
				/* none here: not asked again */
				cap_no_details(c, op->guid);
				op->det_asked = 0;
			} else {
				op->det_fail = IBW_CTR_FAIL_ERROR;
			}
			goto settled;
		}
	}
	if (d->result == IBW_MAD_OK) {
		if (ext) {
			memcpy(op->ext, d->mad + IB_PC_DATA_OFFS,
			       IB_PC_DATA_SZ);
			op->got_ext = 1;
		} else {
			memcpy(op->pc, d->mad + IB_PC_DATA_OFFS, IB_PC_DATA_SZ);
			op->got_pc = 1;
		}
		op->read_us = ibw_realtime_us();
		/* the node answers: now its Tick and the port's FEC
		 * counters are worth asking */
		ask_tick(c, &c->jobs[op->job]);
		ask_fec_todo(c, op);
	} else {
		if (d->result == IBW_MAD_TIMEOUT)
			c->cur.timeouts++;
		else if (d->result != IBW_MAD_STATUS || !ext)
			c->cur.errors++;
		/* A status error on the extended counters alone (not
		 * supported after all) still leaves PortCounters. */
		if (!ext || d->result != IBW_MAD_STATUS) {
			op->failed = 1;
			if (op->fail != IBW_CTR_FAIL_TIMEOUT)
				op->fail = d->result == IBW_MAD_TIMEOUT
						   ? IBW_CTR_FAIL_TIMEOUT
						   : IBW_CTR_FAIL_ERROR;
		}
	}
settled:
	port_settled(c, op);
}

/*
 * PortVLXmitWaitCounters have their own callback: a timeout comes without
 * a MAD to tell the attribute by, and a port whose VL counters do not
 * answer keeps its other counters. A status error says the node has none
 * after all: it is not asked again.
 */
static void vl_answer(const struct ibw_mad_done *d, void *arg)
{
	struct port_op *op = arg;
	struct ibw_counters *c = op->c;

	if (op->sweep != c->sweep_id || d->result == IBW_MAD_CANCELLED) {
		port_answer(d, arg);
		return;
	}
	if (d->result == IBW_MAD_OK && d->mad &&
	    ibw_vl_xmit_wait_decode(d->mad, d->len, &op->vl) == 0)
		op->got_vl = 1;
	else if (d->result == IBW_MAD_STATUS)
		cap_no_vl(c, op->guid);
	else if (d->result == IBW_MAD_TIMEOUT)
		c->cur.timeouts++;
	else
		c->cur.errors++;
	port_settled(c, op);
}

/* PortRcvErrorDetails and PortXmitDiscardDetails (0x15, 0x16) likewise: a timeout comes without a MAD to tell them by,
 * and a port whose details do not answer keeps its counters. */
static void detail_answer(const struct ibw_mad_done *d, void *arg)
{
	struct port_op *op = arg;
	struct ibw_counters *c = op->c;

	if (op->sweep != c->sweep_id || d->result == IBW_MAD_CANCELLED ||
	    (d->mad && d->len >= IBW_MAD_SIZE)) {
		/* with a MAD, port_answer tells the two apart */
		port_answer(d, arg);
		return;
	}
	if (d->result == IBW_MAD_TIMEOUT) {
		c->cur.timeouts++;
		op->det_fail = IBW_CTR_FAIL_TIMEOUT;
	} else {
		c->cur.errors++;
		if (op->det_fail != IBW_CTR_FAIL_TIMEOUT)
			op->det_fail = IBW_CTR_FAIL_ERROR;
	}
	port_settled(c, op);
}

static void cap_no_fec(struct ibw_counters *c, uint64_t guid)
{
	struct node_cap *nc = cap_find(c, guid);

	if (nc)
		nc->no_fec = 1;
}

/* PortExtendedSpeedsCounters, in the layout op->fec.layout says. */
static void fec_answer(const struct ibw_mad_done *d, void *arg)
{
	struct port_op *op = arg;
	struct ibw_counters *c = op->c;

	if (op->sweep != c->sweep_id || d->result == IBW_MAD_CANCELLED) {
		port_answer(d, arg);
		return;
	}
	if (d->result == IBW_MAD_OK && d->mad && d->len >= IBW_MAD_SIZE &&
	    ibw_fec_decode(d->mad + IB_PC_DATA_OFFS, IB_PC_DATA_SZ,
			   (enum ibw_fec_layout)op->fec.layout,
			   &op->fec) == 0) {
		op->got_fec = 1;
	} else if (d->result == IBW_MAD_STATUS) {
		/* advertised, and not served after all: not asked again */
		cap_no_fec(c, op->guid);
		op->fec_fail = IBW_CTR_FAIL_ERROR;
	} else if (d->result == IBW_MAD_TIMEOUT) {
		c->cur.timeouts++;
		op->fec_fail = IBW_CTR_FAIL_TIMEOUT;
	} else {
		c->cur.errors++;
		op->fec_fail = IBW_CTR_FAIL_ERROR;
	}
	port_settled(c, op);
}

/* Ask for the port's PortExtendedSpeedsCounters in @layout; one more of
 * @op's answers to wait for. -1 if it could not be sent. */
static int ask_fec(struct ibw_counters *c, struct port_op *op,
		   enum ibw_fec_layout layout)
{
	uint8_t payload[IB_PC_DATA_SZ];

	memset(payload, 0, sizeof(payload));
	mad_set_field(payload, 0, IB_PESC_PORT_SELECT_F, op->port);
	op->fec.layout = (uint8_t)layout;
	/* one try: a reading lost costs that sweep's only */
	if (pma_submit_tries(c, op->guid, op->lid, IBW_METHOD_GET,
			     IBW_ATTR_PORT_EXT_SPEEDS, payload, 0, fec_answer,
			     op) < 0) {
		c->cur.errors++;
		op->fec_fail = IBW_CTR_FAIL_ERROR;
		return -1;
	}
	op->left++;
	return 0;
}

/*
 * PortInfoExtended of a port whose PMA can count in the RS-FEC form: its
 * FECModeActive says which form the counters come in (perfquery -T
 * asks the same, LID-routed). A status error (no PortInfoExtended after
 * all) leaves the FC-FEC form, as perfquery does; no answer leaves the
 * counters unread this sweep.
 */
static void pie_answer(const struct ibw_mad_done *d, void *arg)
{
	struct port_op *op = arg;
	struct ibw_counters *c = op->c;
	enum ibw_fec_layout layout = IBW_FEC_FC;

	if (op->sweep != c->sweep_id || d->result == IBW_MAD_CANCELLED) {
		port_answer(d, arg);
		return;
	}
	if (d->result == IBW_MAD_OK && d->mad && d->len >= IBW_MAD_SIZE) {
		const uint8_t *pie =
			d->mad + ibw_mad_data_offset(IBW_CLASS_SMI);
		uint32_t capm = ibw_mad_get(pie, IB_PORT_EXT_CAPMASK_F);
		uint32_t mode = ibw_mad_get(pie, IB_PORT_EXT_FEC_MODE_ACTIVE_F);

		/* IsFECModeSupported, then RS-FEC or RS-FEC2 active */
		if ((capm & 1) && ibw_fec_mode_is_rs(1, mode & 0xffff))
			layout = IBW_FEC_RS;
	} else if (d->result == IBW_MAD_TIMEOUT) {
		c->cur.timeouts++;
		op->fec_fail = IBW_CTR_FAIL_TIMEOUT;
		layout = IBW_FEC_NONE;
	} else if (d->result != IBW_MAD_STATUS) {
		c->cur.errors++;
		op->fec_fail = IBW_CTR_FAIL_ERROR;
		layout = IBW_FEC_NONE;
	}
	if (layout != IBW_FEC_NONE)
		(void)ask_fec(c, op, layout);
	port_settled(c, op);
}

static int ask_pie(struct ibw_counters *c, struct port_op *op)
{
	struct ibw_mad_req r;

	memset(&r, 0, sizeof(r));
	ibw_dest_lid(&r.dest, op->lid);
	r.mgmt_class = IBW_CLASS_SMI;
	r.method = IBW_METHOD_GET;
	r.attr_id = IBW_ATTR_PORT_INFO_EXT;
	r.attr_mod = op->port;
	r.timeout_ms = c->o.timeout_ms;
	r.retries = c->o.retries;
	r.cb = pie_answer;
	r.arg = op;
	if (ibw_engine_submit(c->e, &r) < 0) {
		c->cur.errors++;
		op->fec_fail = IBW_CTR_FAIL_ERROR;
		return -1;
	}
	c->pending++;
	c->cur.mads++;
	op->left++;
	return 0;
}

/* What of a port's FEC counters a sweep reads: nothing, the FC-FEC form
 * straight away, or PortInfoExtended first (FEC_ASK_MODE). */
enum { FEC_NO, FEC_FC, FEC_ASK_MODE };

static int fec_plan(const struct ibw_counters *c, const struct job *j,
		    uint8_t port)
{
	const struct node_cap *nc = cap_find((struct ibw_counters *)c, j->guid);
	const struct ibw_port_ctrs *pr;

	/* Not where an SM listens, for ibsim's sake: see ask_tick(). */
	if (!(j->esc[port / 32] >> (port % 32) & 1) || !nc || nc->no_fec ||
	    !nc->have_mask || j->is_sm)
		return FEC_NO;
	pr = ibw_counters_find(c, j->guid, port);
	if (pr && pr->fec_lost >= IBW_PSC_TRIES)
		return FEC_NO;
	return (nc->capmask & PM_CAP_RSFEC) && j->pie ? FEC_ASK_MODE : FEC_FC;
}

/* Once the port's counters answered: its FEC counters, if it has
 * some to ask (a port that is gone costs no more timeouts). */
static void ask_fec_todo(struct ibw_counters *c, struct port_op *op)
{
	int todo = op->fec_todo;

	op->fec_todo = FEC_NO;
	if (todo == FEC_FC)
		(void)ask_fec(c, op, IBW_FEC_FC);
	else if (todo == FEC_ASK_MODE)
		(void)ask_pie(c, op);
}

static void query_port(struct ibw_counters *c, const struct job *j,
		       uint8_t port, int want_ext, int details, int want_vl)
{
	static const uint16_t all[5] = { IBW_ATTR_PORT_COUNTERS,
					 IBW_ATTR_PORT_COUNTERS_EXT, 0x15, 0x16,
					 IBW_ATTR_PORT_VL_XMIT_WAIT };
	struct port_op *op = calloc(1, sizeof(*op));
	uint16_t attrs[5];
	uint8_t payload[IB_PC_DATA_SZ];
	ibw_mad_cb cb;
	unsigned k, n = 0;

	if (!op) {
		struct port_op po;

		/* Unread this sweep, and said so: every port of a sweep
		 * ends read or unreachable. */
		memset(&po, 0, sizeof(po));
		po.guid = j->guid;
		po.port = port;
		po.is_switch = j->is_switch;
		port_failed(c, &po);
		c->cur.errors++;
		job_port_done(c, (unsigned)(j - c->jobs));
		return;
	}
	for (k = 0; k < 5; k++)
		if (k == 0 || (k == 1 && want_ext) ||
		    ((k == 2 || k == 3) && details) || (k == 4 && want_vl))
			attrs[n++] = all[k];
	op->c = c;
	op->sweep = c->sweep_id;
	op->guid = j->guid;
	op->lid = j->lid;
	op->port = port;
	op->is_switch = j->is_switch;
	op->want_ext = (uint8_t)want_ext;
	op->det_asked = (uint8_t)details;
	op->left = (uint8_t)n;
	op->job = (unsigned)(j - c->jobs);
	op->fec_todo = (uint8_t)fec_plan(c, j, port);
	for (k = 0; k < n; k++) {
		memset(payload, 0, sizeof(payload));
		/* PortSelect sits at the same place in all five. */
		mad_set_field(payload, 0, IB_PC_PORT_SELECT_F, port);
		cb = attrs[k] == IBW_ATTR_PORT_VL_XMIT_WAIT ? vl_answer
		     : attrs[k] == 0x15 || attrs[k] == 0x16 ? detail_answer
							    : port_answer;
		if (pma_submit(c, j->guid, j->lid, IBW_METHOD_GET, attrs[k],
			       payload, cb, op) < 0) {
			c->cur.errors++;
			/* only the counters proper fail the port */
			if (attrs[k] == IBW_ATTR_PORT_COUNTERS ||
			    attrs[k] == IBW_ATTR_PORT_COUNTERS_EXT)
				op->failed = 1;
			else if (attrs[k] == 0x15 || attrs[k] == 0x16)
				op->det_fail = IBW_CTR_FAIL_ERROR;
			if (--op->left == 0) {
				/* none was sent: the port fails */
				port_done(c, op);
				return;
			}
			continue;
		}
	}
}

struct psc_op {
	struct ibw_counters *c;
	uint64_t sweep;
	uint64_t guid;
};

static void psc_answer(const struct ibw_mad_done *d, void *arg)
{
	struct psc_op *op = arg;
	struct ibw_counters *c = op->c;
	struct node_cap *nc = cap_find(c, op->guid);

	c->psc_inflight--;
	if (d->result == IBW_MAD_OK || d->result == IBW_MAD_STATUS)
		c->psc_heard = 1;
	/* An answer after its sweep still tells the tick. */
	if (nc && nc->psc == PSC_ASKING) {
		nc->psc = PSC_UNASKED;
		c->psc_streak = d->result == IBW_MAD_TIMEOUT ? c->psc_streak + 1
							     : 0;
		if (c->psc_streak >= IBW_PSC_SILENT)
			c->psc_quiet = 1;
		if (d->result == IBW_MAD_OK && d->mad &&
		    d->len >= IBW_MAD_SIZE) {
			nc->tick = (uint8_t)ibw_mad_get(
				d->mad + IB_PC_DATA_OFFS, IB_PSC_TICK_F);
			nc->psc = PSC_READ;
		} else if (d->result == IBW_MAD_STATUS ||
			   (d->result == IBW_MAD_TIMEOUT &&
			    ++nc->psc_lost >= IBW_PSC_TRIES)) {
			nc->psc = PSC_NONE;
		}
	}
	/* A timeout is the sweep's, as every one of its MADs' is; an
	 * error status is no error of the fabric's (a PMA without
	 * PortSamplesControl): the counters are read either way. */
	if (!settle(c, op->sweep, d)) {
		free(op);
		return;
	}
	if (d->result == IBW_MAD_TIMEOUT)
		c->cur.timeouts++;
	free(op);
	sweep_done_if_idle(c);
}

/*
 * PortSamplesControl:Tick is the PMA's sampling tick, the unit
 * PortXmitWait counts in (docs/links.md). It is a property of the PMA,
 * not of a port or a sweep: asked once, where ClassPortInfo says the PMA
 * counts PortXmitWait. A status error stops the asking, and so do
 * IBW_PSC_TRIES requests (one a sweep, of one try) left unanswered,
 * which is what ibsim does (it has no handler for the attribute and
 * drops it). Sent once a port read of the node has answered, with no
 * retries: a PMA that does not answer it holds no read of the sweep
 * back, and a node that is gone is not asked. Until some
 * PMA has answered it, at most IBW_PSC_SILENT are asked at once; once
 * IBW_PSC_SILENT in a row went unanswered, the sweep asks no more (the
 * next asks again).
 */
static void ask_tick(struct ibw_counters *c, const struct job *j)
{
	struct node_cap *nc = cap_find(c, j->guid);
	uint8_t payload[IB_PC_DATA_SZ];
	struct psc_op *op;

	if (!nc || nc->psc != PSC_UNASKED ||
	    !(nc->capmask & PM_CAP_XMIT_WAIT) || c->psc_quiet ||
	    (!c->psc_heard && c->psc_inflight >= IBW_PSC_SILENT))
		return;
	/*
	 * Not where an SM listens: ibsim, which has no PortSamplesControl,
	 * hands a GSI MAD it does not answer to the process flagged as the
	 * node's SM, and umad2sim there passes a class that process never
	 * registered to one of its agents (opensm then stopped bringing
	 * relinked ports up in link_health). On hardware the PMA answers
	 * and the SM never sees it; this costs those few nodes their Tick,
	 * which is then assumed.
	 */
	if (j->is_sm)
		return;
	op = calloc(1, sizeof(*op));
	if (!op)
		return;
	op->c = c;
	op->sweep = c->sweep_id;
	op->guid = j->guid;
	memset(payload, 0, sizeof(payload));
	/* A CA's PMA may insist on the port the MAD arrives on. */
	mad_set_field(payload, 0, IB_PSC_PORT_SELECT_F,
		      j->nports ? j->port_list[0] : 1);
	/* not the fabric's error either: Tick stays unknown this sweep */
	if (pma_submit_tries(c, j->guid, j->lid, IBW_METHOD_GET,
			     IBW_ATTR_PORT_SAMPLES_CONTROL, payload, 0,
			     psc_answer, op) < 0) {
		free(op);
		return;
	}
	c->psc_inflight++;
	nc->psc = PSC_ASKING;
}

int ibw_counters_tick(const struct ibw_counters *c, uint64_t guid)
{
	unsigned i = cap_index(c, guid);

	if (i < c->ncaps && c->caps[i].guid == guid &&
	    c->caps[i].psc == PSC_READ)
		return c->caps[i].tick;
	return -1;
}

static void run_job_ports(struct ibw_counters *c, struct job *j)
{
	struct node_cap *nc = cap_find(c, j->guid);
	uint32_t mask = nc ? nc->capmask : 0;
	int ext = (mask & (PM_CAP_EXT_WIDTH | PM_CAP_EXT_WIDTH_NOIETF)) != 0;
	int details = c->o.details && !(nc && nc->no_details);
	/*
	 * No ClassPortInfo bit names PortVLXmitWaitCounters (perfquery
	 * --vlxmitcounters checks none); IsPortCountersXmitWaitSupported
	 * says the PMA counts transmit wait at all, and a port that does
	 * not cannot count it per VL. A status error then stops the asking.
	 */
	int vl = (mask & PM_CAP_XMIT_WAIT) && !(nc && nc->no_vl);
	unsigned i;

	/* every port counted before any is sent: the job's NodeInfo waits
	 * for the last of them (job_port_done) */
	j->open = j->nports;
	for (i = 0; i < j->nports; i++)
		query_port(c, j, j->port_list[i], ext, details, vl);
}

struct cpi_op {
	struct ibw_counters *c;
	uint64_t sweep;
	unsigned job;
};

/* None of @j's ports can be read this sweep, for @why. */
static void fail_job_ports(struct ibw_counters *c, const struct job *j,
			   enum ibw_ctr_fail why)
{
	unsigned i;

	for (i = 0; i < j->nports; i++) {
		struct port_op po;

		memset(&po, 0, sizeof(po));
		po.guid = j->guid;
		po.port = j->port_list[i];
		po.is_switch = j->is_switch;
		po.fail = (uint8_t)why;
		port_failed(c, &po);
	}
}

static void start_cpi(struct ibw_counters *c, unsigned idx);

/* @j's ClassPortInfo is answered or failed: its ports' MADs are now
 * pending themselves, or never will be. */
static void unreserve(struct ibw_counters *c, struct job *j)
{
	c->reserved -= j->reserved;
	j->reserved = 0;
}

const char *ibw_redirect_refusal_str(int why)
{
	switch (why) {
	case IBW_REDIRECT_PARTITION:
		return "partition";
	case IBW_REDIRECT_QKEY:
		return "q_key";
	case IBW_REDIRECT_GID:
		return "gid";
	default:
		return "none";
	}
}

/* Why the redirect in @nc cannot be followed from a umad port, or
 * IBW_REDIRECT_OK. */
static int redirect_refusal(const struct node_cap *nc)
{
	if ((nc->rpkey & 0x7fff) != 0x7fff && nc->rpkey != 0)
		return IBW_REDIRECT_PARTITION;
	if (nc->rqkey && nc->rqkey != IBW_QP1_QKEY)
		return IBW_REDIRECT_QKEY;
	if (!nc->rlid)
		return IBW_REDIRECT_GID;
	return IBW_REDIRECT_OK;
}

/*
 * The PMA answered ClassPortInfo with "redirect required": its counters
 * are served at RedirectLID, RedirectQP with RedirectQ_Key. We follow
 * what a umad port can reach: the default partition (our MADs go out on
 * P_Key index 0), the GSI Q_Key (the kernel sends with QP1's whatever we
 * set) and a LID (RedirectLID 0 means RedirectGID alone, as libibmad
 * reads it). Anything else is reported, with the reason, and the node's
 * counters stay unread. Returns 1 when a ClassPortInfo to the new place
 * is under way.
 */
static int follow_redirect(struct ibw_counters *c, unsigned idx,
			   const uint8_t *mad)
{
	const uint8_t *cpi = mad + IB_PC_DATA_OFFS;
	struct job *j = &c->jobs[idx];
	struct node_cap *nc;
	int was, why;

	if (!cap_find(c, j->guid))
		cap_set(c, j->guid, 0);
	if (!(nc = cap_find(c, j->guid)))
		return 0;
	nc->have_mask = 0;
	was = nc->redirect;
	nc->lid = j->lid;
	nc->rlid = (uint16_t)ibw_mad_get(cpi, IB_CPI_REDIRECT_LID_F);
	nc->rqp = ibw_mad_get(cpi, IB_CPI_REDIRECT_QP_F) & 0xffffff;
	nc->rqkey = ibw_mad_get(cpi, IB_CPI_REDIRECT_QKEY_F);
	nc->rsl = (uint8_t)ibw_mad_get(cpi, IB_CPI_REDIRECT_SL_F);
	nc->rpkey = (uint16_t)ibw_mad_get(cpi, IB_CPI_REDIRECT_PKEY_F);
	mad_decode_field((uint8_t *)cpi, IB_CPI_REDIRECT_GID_F, nc->rgid);
	why = redirect_refusal(nc);
	if (why != IBW_REDIRECT_OK) {
		static const char *const what[] = {
			[IBW_REDIRECT_PARTITION] = "outside the default "
						   "partition, where our MADs "
						   "go",
			[IBW_REDIRECT_QKEY] =
				"with a Q_Key other than the "
				"GSI's, which the kernel does not "
				"send with",
			[IBW_REDIRECT_GID] = "to a GID alone (RedirectLID 0), "
					     "which needs a GRH route",
		};

		if (was != IBW_PMA_REDIRECT_REFUSED || nc->refusal != why)
			log_warn("counters",
				 "the PMA of node 0x%016" PRIx64 " (LID %u) "
				 "redirects to LID %u QP %u Q_Key 0x%08x "
				 "P_Key 0x%04x: not followed (%s); its "
				 "counters stay unread",
				 j->guid, j->lid, nc->rlid, nc->rqp, nc->rqkey,
				 nc->rpkey, what[why]);
		nc->redirect = IBW_PMA_REDIRECT_REFUSED;
		nc->refusal = (uint8_t)why;
		return 0;
	}
	nc->refusal = IBW_REDIRECT_OK;
	if (!nc->rqp)
		nc->rqp = 1;
	if (!nc->rqkey)
		nc->rqkey = IBW_QP1_QKEY;
	nc->redirect = IBW_PMA_REDIRECT_FOLLOWED;
	if (was != nc->redirect)
		log_info("counters",
			 "the PMA of node 0x%016" PRIx64 " (LID %u) redirects "
			 "to LID %u QP %u: following",
			 j->guid, j->lid, nc->rlid, nc->rqp);
	start_cpi(c, idx);
	return 1;
}

/* This answer came from where a redirect sent us: a second redirect is
 * not followed (no loops). */
static int redirected_here(struct ibw_counters *c, const struct job *j)
{
	const struct node_cap *nc = cap_find(c, j->guid);

	return nc && nc->redirect == IBW_PMA_REDIRECT_FOLLOWED &&
	       !nc->have_mask;
}

static void cpi_answer(const struct ibw_mad_done *d, void *arg)
{
	struct cpi_op *op = arg;
	struct ibw_counters *c = op->c;
	struct job *j;

	if (!settle(c, op->sweep, d)) {
		free(op);
		return;
	}
	j = &c->jobs[op->job];
	j->t_end = ibw_now_us();
	unreserve(c, j);
	if (d->result == IBW_MAD_OK) {
		cap_set(c, j->guid,
			ibw_mad_get(d->mad + IB_PC_DATA_OFFS,
				    IB_CPI_CAPMASK_F));
		run_job_ports(c, j);
	} else if (d->result == IBW_MAD_STATUS &&
		   (d->status & IB_MAD_STS_REDIRECT) && d->mad &&
		   d->len >= IBW_MAD_SIZE && !redirected_here(c, j) &&
		   follow_redirect(c, op->job, d->mad)) {
		/* asked again where it sent us */
	} else {
		/* No ClassPortInfo, no counters: the node's ports stay
		 * unread this sweep. */
		if (d->result == IBW_MAD_TIMEOUT)
			c->cur.timeouts++;
		else
			c->cur.errors++;
		fail_job_ports(c, j,
			       d->result == IBW_MAD_TIMEOUT
				       ? IBW_CTR_FAIL_TIMEOUT
				       : IBW_CTR_FAIL_ERROR);
	}
	free(op);
	sweep_done_if_idle(c);
}

static void start_job(struct ibw_counters *c, unsigned idx)
{
	struct job *j = &c->jobs[idx];
	struct node_cap *nc = cap_find(c, j->guid);

	j->t0 = j->t_end = ibw_now_us();
	if (nc && nc->have_mask) {
		run_job_ports(c, j);
		return;
	}
	if (nc && nc->redirect == IBW_PMA_REDIRECT_REFUSED &&
	    nc->lid == j->lid) {
		fail_job_ports(c, j, IBW_CTR_FAIL_ERROR);
		return;
	}
	/* Its ports' MADs follow the answer: PortCounters, the extended
	 * ones and the VL waits a port (at most: the answer may say there
	 * are none), the two details when asked for, and PortSamplesControl
	 * once. */
	j->reserved = (uint16_t)((3 + (c->o.details ? 2 : 0)) * j->nports + 1);
	c->reserved += j->reserved;
	start_cpi(c, idx);
}

/* ClassPortInfo first: its CapabilityMask says which counters the PMA
 * has, and its status whether it is served elsewhere. */
static void start_cpi(struct ibw_counters *c, unsigned idx)
{
	struct job *j = &c->jobs[idx];
	struct cpi_op *op;

	op = calloc(1, sizeof(*op));
	if (!op) {
		unreserve(c, j);
		c->cur.errors++;
		fail_job_ports(c, j, IBW_CTR_FAIL_ERROR);
		return;
	}
	op->c = c;
	op->sweep = c->sweep_id;
	op->job = idx;
	if (pma_submit(c, j->guid, j->lid, IBW_METHOD_GET,
		       IBW_ATTR_CLASS_PORT_INFO, NULL, cpi_answer, op) < 0) {
		free(op);
		unreserve(c, j);
		c->cur.errors++;
		fail_job_ports(c, j, IBW_CTR_FAIL_ERROR);
	}
}

/*
 * An unspread sweep keeps about this many MADs pending, not the whole
 * fabric: queued all at once, the engine's run queue goes round every
 * destination, so consecutive MADs touch nodes all over the fabric (in
 * our tables and in the SMAs' and switches' of a simulator), and the
 * queue holds a request per MAD of the sweep. Well above the engine's
 * window, so the wire never waits on us.
 */
#define IBW_CTR_FEED_MADS 1024u

/* The sweep's jobs, and any readings still held for a NodeInfo (none
 * when a sweep ends: a held reading keeps it pending). */
static void free_jobs(struct ibw_counters *c)
{
	unsigned i;

	for (i = 0; c->jobs && i < c->njobs; i++) {
		struct port_op *op;

		while ((op = c->jobs[i].held)) {
			c->jobs[i].held = op->next;
			free(op);
		}
	}
	free(c->jobs);
	c->jobs = NULL;
	c->njobs = 0;
}

/*
 * The sweep is over: each port's record gets the time its node's reads
 * took, and each kind of node the time some read of it was under way
 * (jobs start in their order, so the union of their spans is one pass).
 */
static void sweep_times(struct ibw_counters *c)
{
	uint64_t cover[2] = { 0, 0 };
	unsigned i, k;

	c->busy_last[0] = c->busy_last[1] = 0;
	for (i = 0; i < c->njobs; i++) {
		const struct job *j = &c->jobs[i];
		uint64_t dur = j->t_end - j->t0;
		int w = j->is_switch;

		if (!j->t0)
			continue; /* never started */
		for (k = 0; k < j->nports; k++) {
			struct ibw_port_ctrs *p =
				port_find_w(c, j->guid, j->port_list[k]);

			if (p)
				p->read_dur_us = dur > UINT32_MAX
							 ? UINT32_MAX
							 : (uint32_t)dur;
		}
		if (j->t_end <= cover[w])
			continue;
		c->busy_last[w] +=
			j->t_end - (j->t0 > cover[w] ? j->t0 : cover[w]);
		cover[w] = j->t_end;
	}
}

/* Every answer of a sweep ends here: the sweep is done, or, unspread,
 * room has been made for more jobs. Those start from the pace timer at
 * once, not from here, so that starting a job never runs inside the
 * answer of another (a callback path that could nest). */
static void sweep_done_if_idle(struct ibw_counters *c)
{
	if (!c->jobs)
		return;
	if (c->next_job < c->njobs) {
		if (!c->pace_interval_us &&
		    c->pending + c->reserved < IBW_CTR_FEED_MADS &&
		    !ibw_timer_armed(c->pace))
			ibw_timer_arm(c->pace, 0);
		return;
	}
	if (c->pending)
		return;
	sweep_times(c);
	sort_ports(c);
	c->cur.duration_us = ibw_now_us() - c->t0_mono;
	c->last = c->cur;
	c->unreachable_last = c->unreachable_cur;
	c->prog.running = 0;
	c->prog.end_us = ibw_realtime_us();
	flux_sweep_end(c);
	free_jobs(c);
	if (c->cb)
		c->cb(c, c->arg);
}

/* Start @left jobs over @spread_us: ticks of at least 10 ms, each
 * starting its share. */
static void set_pace(struct ibw_counters *c, unsigned left, uint64_t spread_us)
{
	uint64_t ticks = spread_us / 10000u;

	if (!spread_us) {
		/* on_pace then feeds IBW_CTR_FEED_MADS at a time */
		c->pace_interval_us = 0;
		return;
	}
	if (ticks < 1)
		ticks = 1;
	if (ticks > left)
		ticks = left;
	c->pace_interval_us = spread_us / ticks;
	c->pace_batch = (unsigned)((left + ticks - 1) / ticks);
}

static void on_pace(struct ibw_timer *t, void *arg)
{
	struct ibw_counters *c = arg;
	unsigned n;

	if (!c->jobs)
		return;
	if (!c->pace_interval_us) {
		/* Unspread: start jobs while there is room; answers make
		 * more (sweep_done_if_idle). */
		while (c->next_job < c->njobs &&
		       c->pending + c->reserved < IBW_CTR_FEED_MADS)
			start_job(c, c->next_job++);
		if (c->next_job >= c->njobs)
			sweep_done_if_idle(c);
		return;
	}
	for (n = 0; n < c->pace_batch && c->next_job < c->njobs; n++)
		start_job(c, c->next_job++);
	if (c->next_job < c->njobs)
		ibw_timer_arm(t, c->pace_interval_us);
	else
		sweep_done_if_idle(c);
}

static int in_scope(const struct ibw_counters *c, const struct ibw_fnode *n)
{
	unsigned i;

	if (c->o.targets) {
		for (i = 0; i < c->o.ntargets; i++)
			if (c->o.targets[i] == n->guid)
				return 1;
		return 0;
	}
	switch (c->o.scope) {
	case IBW_SCOPE_SWITCHES:
		return n->ni.node_type == IBW_NODE_SWITCH;
	case IBW_SCOPE_CAS:
		return n->ni.node_type != IBW_NODE_SWITCH;
	default:
		return 1;
	}
}

/* PortInfoExtended, by the capability masks of @pi (port 0's on a
 * switch), as perfquery checks them before asking. */
static uint8_t fec_pie(const struct ibw_portinfo *pi)
{
	return (pi->capmask & IBW_CAP_CAPMASK2) &&
	       (pi->capmask2 & IBW_CAP2_PORT_INFO_EXT);
}

/* PortExtendedSpeedsCounters are read for a port with its link up whose
 * capability mask (@mask: port 0's on a switch) says IsExtendedSpeeds
 * Supported: the IBA has ports that support FDR or faster keep them. */
static int fec_port(const struct ibw_portinfo *mask, const struct ibw_fport *fp)
{
	return (mask->capmask & IBW_CAP_EXT_SPEEDS) && fp->have_pi &&
	       fp->pi.state >= 2;
}

static void add_switch_job(struct ibw_counters *c, const struct ibw_fnode *n)
{
	struct job *j = &c->jobs[c->njobs];
	unsigned p;

	j->guid = n->guid;
	j->is_switch = 1;
	j->is_protected = n->is_protected;
	j->lid = n->lid;
	j->is_sm = n->nports && n->ports[0].have_pi &&
		   (n->ports[0].pi.capmask & IBW_CAP_IS_SM);
	/* All ports, down ones too: LinkDowned lives there. */
	for (p = 1; p < n->nports; p++)
		j->port_list[j->nports++] = (uint8_t)p;
	/* port 0's capability mask speaks for every port of a switch */
	if (n->nports && n->ports[0].have_pi) {
		const struct ibw_portinfo *pi0 = &n->ports[0].pi;

		j->pie = fec_pie(pi0);
		for (p = 1; p < n->nports; p++)
			if (fec_port(pi0, &n->ports[p]))
				j->esc[p / 32] |= 1u << (p % 32);
	}
	if (j->lid && j->nports)
		c->njobs++;
	else
		memset(j, 0, sizeof(*j));
}

/*
 * A CA's PMA answers for the port a MAD came in by: each active port is
 * read through its own LID, one job per LID (ports that share one, as
 * some CAs' do, share its job and its NodeInfo).
 */
static void add_ca_jobs(struct ibw_counters *c, const struct ibw_fnode *n)
{
	unsigned first = c->njobs, p, k;

	for (p = 1; p < n->nports; p++) {
		const struct ibw_fport *fp = &n->ports[p];
		struct job *j = NULL;

		if (!fp->have_pi || fp->pi.state != 4 || !fp->pi.lid)
			continue;
		for (k = first; k < c->njobs; k++)
			if (c->jobs[k].lid == fp->pi.lid)
				j = &c->jobs[k];
		if (!j) {
			j = &c->jobs[c->njobs++];
			j->guid = n->guid;
			j->is_protected = n->is_protected;
			j->lid = fp->pi.lid;
			j->is_sm = !!(fp->pi.capmask & IBW_CAP_IS_SM);
		}
		j->port_list[j->nports++] = (uint8_t)p;
		/* a CA port's own mask; PortInfoExtended only where all the
		 * ports sharing the LID have it */
		if (fec_port(&fp->pi, fp))
			j->esc[p / 32] |= 1u << (p % 32);
		j->pie = (uint8_t)(j->nports == 1 ? fec_pie(&fp->pi)
						  : j->pie && fec_pie(&fp->pi));
	}
}

int ibw_counters_sweep(struct ibw_counters *c, const struct ibw_fabric *f,
		       uint64_t spread_us, ibw_counters_cb cb, void *arg)
{
	unsigned i, p;

	if (c->jobs)
		return -EBUSY;
	/* a job per switch, per CA LID (at most one a port) */
	for (i = 0, p = 0; i < f->nnodes; i++)
		p += f->nodes[i].nports ? f->nodes[i].nports : 1;
	c->jobs = calloc(p + 1, sizeof(*c->jobs));
	if (!c->jobs)
		return -ENOMEM;
	c->njobs = 0;
	for (i = 0; i < f->nnodes; i++) {
		const struct ibw_fnode *n = &f->nodes[i];

		if (n->gone || !in_scope(c, n))
			continue;
		if (n->ni.node_type == IBW_NODE_SWITCH)
			add_switch_job(c, n);
		else
			add_ca_jobs(c, n);
	}
	c->sweep_id++;
	c->psc_streak = 0;
	c->psc_quiet = 0;
	/* Only a sweep of the fabric of a settled discovery can end the
	 * LIDs' flux: one started before it read at the old LIDs. */
	c->closing = c->flux && c->settled;
	c->closing_signs = c->signs;
	c->next_job = 0;
	c->pending = 0;
	c->reserved = 0;
	c->cb = cb;
	c->arg = arg;
	memset(&c->cur, 0, sizeof(c->cur));
	c->cur.start_us = ibw_realtime_us();
	c->unreachable_cur = 0;
	c->t0_mono = ibw_now_us();
	memset(&c->prog, 0, sizeof(c->prog));
	c->prog.start_us = c->cur.start_us;
	c->prog.spread_us = spread_us;
	for (i = 0; i < c->njobs; i++)
		c->prog.ports += c->jobs[i].nports;
	if (!c->njobs) {
		free(c->jobs);
		c->jobs = NULL;
		c->last = c->cur;
		c->prog.end_us = c->prog.start_us;
		flux_sweep_end(c);
		return -ENOENT;
	}
	c->prog.running = 1;
	set_pace(c, c->njobs, spread_us);
	on_pace(c->pace, c);
	return 0;
}

void ibw_counters_respread(struct ibw_counters *c, uint64_t spread_us)
{
	unsigned left;
	uint64_t batches;

	if (!c->jobs || c->next_job >= c->njobs)
		return;
	left = c->njobs - c->next_job;
	/* Only ever hurry a sweep: a full-speed one (the first after a
	 * start or the port's return) stays so, and a spread one is not
	 * stretched past what it has left (a SIGHUP that changes
	 * nothing, or lengthens the interval). */
	if (spread_us) {
		if (!c->pace_interval_us)
			return;
		batches = (left + c->pace_batch - 1) / c->pace_batch;
		if (spread_us >= batches * c->pace_interval_us)
			return;
	}
	set_pace(c, left, spread_us);
	if (ibw_timer_armed(c->pace) &&
	    ibw_timer_deadline(c->pace) > ibw_now_us() + c->pace_interval_us)
		ibw_timer_arm(c->pace, c->pace_interval_us);
	else if (!ibw_timer_armed(c->pace))
		/* Unspread until now, waiting for answers to make room:
		 * from now on the pace starts the rest. */
		ibw_timer_arm(c->pace, c->pace_interval_us);
}

int ibw_counters_running(const struct ibw_counters *c)
{
	return c->jobs != NULL;
}

struct ibw_counters_progress ibw_counters_progress(const struct ibw_counters *c)
{
	return c->prog;
}

struct ibw_counters_verify
ibw_counters_verify_stats(const struct ibw_counters *c)
{
	struct ibw_counters_verify v = c->vs;

	v.lids_in_flux = c->flux;
	return v;
}

struct ibw_sweep_stats ibw_counters_last_sweep(const struct ibw_counters *c)
{
	return c->last;
}

unsigned ibw_counters_redirects(const struct ibw_counters *c,
				struct ibw_pma_redirect *out, unsigned max)
{
	unsigned i, n = 0;

	for (i = 0; i < c->ncaps; i++) {
		const struct node_cap *nc = &c->caps[i];

		if (!nc->redirect)
			continue;
		if (out && n < max) {
			out[n].guid = nc->guid;
			out[n].lid = nc->lid;
			out[n].redirect_lid = nc->rlid;
			out[n].redirect_qp = nc->rqp;
			out[n].redirect_qkey = nc->rqkey;
			out[n].redirect_pkey = nc->rpkey;
			memcpy(out[n].redirect_gid, nc->rgid, 16);
			out[n].followed = nc->redirect ==
					  IBW_PMA_REDIRECT_FOLLOWED;
			out[n].refusal = nc->refusal;
		}
		n++;
	}
	return n;
}

void ibw_counters_last_busy(const struct ibw_counters *c, uint64_t busy_us[2])
{
	busy_us[0] = c->busy_last[0];
	busy_us[1] = c->busy_last[1];
}

unsigned ibw_counters_unreachable(const struct ibw_counters *c)
{
	return c->unreachable_last;
}

const struct ibw_port_ctrs *ibw_counters_ports(struct ibw_counters *c,
					       unsigned *n)
{
	sort_ports(c);
	*n = c->nports;
	return c->ports;
}

struct ibw_ctr_table *ibw_counters_table(struct ibw_counters *c)
{
	struct ibw_ctr_table *t = c->shared;

	sort_ports(c);
	if (!t) {
		t = malloc(sizeof(*t));
		if (!t)
			return NULL;
		t->refs = 1; /* ours, until the records are written */
		t->ports = c->ports;
		t->n = c->nports;
		c->shared = t;
	}
	__atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
	return t;
}

struct ibw_counters *ibw_counters_new(struct ibw_engine *e,
				      struct ibw_events *ev,
				      const struct ibw_counters_opts *o)
{
	struct ibw_counters *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->e = e;
	c->ev = ev;
	if (o)
		c->o = *o;
	else
		c->o.retries = -1;
	c->pace = ibw_timer_new(ibw_engine_loop(e), on_pace, c);
	if (!c->pace) {
		free(c);
		return NULL;
	}
	return c;
}

void ibw_counters_free(struct ibw_counters *c)
{
	if (!c)
		return;
	ibw_timer_free(c->pace);
	/* a sweep cut short by the engine's going holds readings still */
	free_jobs(c);
	free(c->index);
	if (c->shared)
		ibw_ctr_table_unref(c->shared); /* it owns ports */
	else
		ports_free(c->ports, c->nports);
	free(c->caps);
	free(c);
}

int ibw_counters_save(const struct ibw_counters *c, const char *path,
		      const struct ibw_links *links)
{
	return ibw_ctr_state_save(path, c->ports, c->nports, links);
}

int ibw_counters_load(struct ibw_counters *c, const char *path,
		      struct ibw_links *links, unsigned *bad_links)
{
	struct ibw_port_ctrs *ports;
	unsigned n, cap;
	int rc = ibw_ctr_state_load(path, &ports, &n, &cap, links, bad_links);

	if (rc < 0)
		return rc;
	if (c->shared)
		ibw_ctr_table_unref(c->shared); /* it owns ports */
	else
		ports_free(c->ports, c->nports);
	c->shared = NULL;
	c->ports = ports;
	c->nports = n;
	c->cap = cap;
	c->unsorted = 1;
	sort_ports(c);
	return 0;
}
