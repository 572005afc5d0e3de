// SPDX-License-Identifier: BSD-2-Clause
/*
 * The counter sweep's PerfMgt requests (counters_int.h): the PMAs'
 * capabilities, kept sorted by node GUID; a request submitted to a PMA,
 * or where it redirected us; and an answer's settling, which tells the
 * sweep above through its answered hook. Calls nothing of the reads or
 * the sweep.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "counters_int.h"

/* Index of @guid in the sorted capability table, or where it goes. */
unsigned ibw_ctr_cap_index(const struct ibw_counters *c, uint64_t guid)
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

struct node_cap *ibw_ctr_cap_find(struct ibw_counters *c, uint64_t guid)
{
	unsigned i = ibw_ctr_cap_index(c, guid);

	return i < c->ncaps && c->caps[i].guid == guid ? &c->caps[i] : NULL;
}

const struct node_cap *ibw_ctr_cap_lookup(const struct ibw_counters *c,
					  uint64_t guid)
{
	unsigned i = ibw_ctr_cap_index(c, guid);

	return i < c->ncaps && c->caps[i].guid == guid ? &c->caps[i] : NULL;
}

/* Node @guid's entry, made (no mask yet) if new; NULL without memory.
 * Entries move when one is made: pointers to others go stale. */
struct node_cap *ibw_ctr_cap_get(struct ibw_counters *c, uint64_t guid)
{
	unsigned lo = ibw_ctr_cap_index(c, guid);

	if (lo < c->ncaps && c->caps[lo].guid == guid)
		return &c->caps[lo];
	if (c->ncaps == c->capcap) {
		unsigned cap = c->capcap ? c->capcap * 2 : 256;
		struct node_cap *n = realloc(c->caps, cap * sizeof(*n));

		if (!n)
			return NULL;
		c->caps = n;
		c->capcap = cap;
	}
	memmove(&c->caps[lo + 1], &c->caps[lo],
		(c->ncaps - lo) * sizeof(*c->caps));
	memset(&c->caps[lo], 0, sizeof(c->caps[lo]));
	c->caps[lo].guid = guid;
	c->ncaps++;
	return &c->caps[lo];
}

/* Where the PMA of node @guid (at @lid) answers: its LID and QP1, or
 * where it redirected us. */
static void pma_dest(struct ibw_counters *c, uint64_t guid, uint16_t lid,
		     struct ibw_dest *d)
{
	struct node_cap *nc = ibw_ctr_cap_find(c, guid);

	ibw_dest_lid(d, lid);
	if (nc && nc->redirect == IBW_PMA_REDIRECT_FOLLOWED) {
		if (nc->rlid)
			d->lid = nc->rlid;
		d->qpn = nc->rqp;
		d->qkey = nc->rqkey;
		d->sl = nc->rsl;
	}
}

/* The PerfMgt attributes a PMA need not implement: the detail counters,
 * PortVLXmitWaitCounters, PortExtendedSpeedsCounters and the
 * congestion counters (IBA 16.1.4, annex A10). */
static int optional_attr(uint16_t attr)
{
	/* 0x15, 0x16: PortRcvErrorDetails, PortXmitDiscardDetails; 0x30 to
	 * 0x35: core/cong.h's */
	return attr == 0x0015 || attr == 0x0016 ||
	       attr == IBW_ATTR_PORT_VL_XMIT_WAIT ||
	       attr == IBW_ATTR_PORT_EXT_SPEEDS ||
	       (attr >= 0x0030 && attr <= 0x0035);
}

/* One PerfMgt MAD of the sweep to the PMA of node @guid at @lid (or
 * where it redirected us), with @payload (IB_PC_DATA_SZ bytes) or none;
 * counted as pending once it is submitted. Negative errno when not. */
int ibw_ctr_pma_submit_tries(struct ibw_counters *c, uint64_t guid,
			     uint16_t lid, uint8_t method, uint16_t attr,
			     uint8_t *payload, int retries, ibw_mad_cb cb,
			     void *arg)
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
	/* Attributes a PMA may implement and still never answer (ibsim's
	 * drops PortExtendedSpeedsCounters): silence is learned once */
	if (method == IBW_METHOD_GET && optional_attr(attr))
		r.flags = IBW_MAD_F_OPTIONAL;
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
int ibw_ctr_pma_submit(struct ibw_counters *c, uint64_t guid, uint16_t lid,
		       uint8_t method, uint16_t attr, uint8_t *payload,
		       ibw_mad_cb cb, void *arg)
{
	return ibw_ctr_pma_submit_tries(c, guid, lid, method, attr, payload,
					c->o.retries, cb, arg);
}

/* An answer to a MAD of sweep @sweep settles its place in the current
 * sweep, if it is one of it; 1 when it is to be used. */
int ibw_ctr_settle(struct ibw_counters *c, uint64_t sweep,
		   const struct ibw_mad_done *d)
{
	if (sweep != c->sweep_id)
		return 0; /* an old sweep's */
	if (c->pending)
		c->pending--;
	return d->result != IBW_MAD_CANCELLED; /* else the engine goes */
}

void ibw_ctr_answered(struct ibw_counters *c)
{
	if (c->answered)
		c->answered(c);
}
