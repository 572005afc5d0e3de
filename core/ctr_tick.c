// SPDX-License-Identifier: BSD-2-Clause
/*
 * PortSamplesControl in a counter sweep (counters_int.h): its Tick, the
 * unit PortXmitWait counts in, and its OptionMask, which optional
 * counters the PMA has, read once per PMA. Below the reads: what waits
 * for the answer is the caller's @then.
 */
#include <stdlib.h>
#include <string.h>

#include "counters_int.h"

struct psc_op {
	struct ibw_counters *c;
	uint64_t sweep;
	uint64_t guid;
	unsigned job;
	/* the job's ports wait for it: what starts them then */
	void (*then)(struct ibw_counters *c, struct job *j);
};

static void psc_answer(const struct ibw_mad_done *d, void *arg)
{
	struct psc_op *op = arg;
	struct ibw_counters *c = op->c;
	struct node_cap *nc = ibw_ctr_cap_find(c, op->guid);

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
			/* and which optional counters it has */
			nc->optmask = ibw_mad_get64(d->mad + IB_PC_DATA_OFFS,
						    IB_PSC_OPTION_MASK_F);
			nc->have_optmask = 1;
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
	if (!ibw_ctr_settle(c, op->sweep, d)) {
		free(op);
		return;
	}
	if (d->result == IBW_MAD_TIMEOUT)
		c->cur.timeouts++;
	if (op->then)
		op->then(c, &c->jobs[op->job]);
	free(op);
	ibw_ctr_answered(c);
}

/*
 * PortSamplesControl is mandatory for a PMA. Its Tick is the PMA's
 * sampling tick, the unit PortXmitWait counts in (docs/links.md), and its
 * OptionMask says which optional counters the PMA has (the congestion
 * ones among them). A property of the PMA, not of a port or a sweep:
 * asked once of every PMA. A status error stops the asking, and so do
 * IBW_PSC_TRIES requests (one a sweep, of one try) left unanswered,
 * which is what ibsim alone does (it has no handler for the attribute
 * and drops it). The first time, it is asked right after ClassPortInfo
 * and the node's ports wait for its answer (@then starts them), so that the first
 * sweep, --once's only one, already reads the counters its OptionMask
 * names; later tries go out once a port read of the node has answered,
 * and hold nothing back. Either way with no retries, and until some
 * PMA has answered it, at most IBW_PSC_SILENT are asked at once; once
 * IBW_PSC_SILENT in a row went unanswered, the sweep asks no more (the
 * next asks again). 1 if asked.
 */
int ibw_ctr_ask_tick(struct ibw_counters *c, const struct job *j,
		     void (*then)(struct ibw_counters *c, struct job *j))
{
	struct node_cap *nc = ibw_ctr_cap_find(c, j->guid);
	uint8_t payload[IB_PC_DATA_SZ];
	struct psc_op *op;

	if (!nc || nc->psc != PSC_UNASKED || nc->psc_sweep == c->sweep_id ||
	    c->psc_quiet ||
	    (!c->psc_heard && c->psc_inflight >= IBW_PSC_SILENT))
		return 0;
	op = calloc(1, sizeof(*op));
	if (!op)
		return 0;
	op->c = c;
	op->sweep = c->sweep_id;
	op->guid = j->guid;
	op->job = (unsigned)(j - c->jobs);
	op->then = then;
	memset(payload, 0, sizeof(payload));
	/* A CA's PMA may insist on the port the MAD arrives on. */
	mad_set_field(payload, 0, IB_PSC_PORT_SELECT_F,
		      j->nports ? j->port_list[0] : 1);
	/* not the fabric's error either: Tick stays unknown this sweep */
	if (ibw_ctr_pma_submit_tries(c, j->guid, j->lid, IBW_METHOD_GET,
				     IBW_ATTR_PORT_SAMPLES_CONTROL, payload, 0,
				     psc_answer, op) < 0) {
		free(op);
		return 0;
	}
	c->psc_inflight++;
	nc->psc = PSC_ASKING;
	nc->psc_sweep = c->sweep_id;
	return 1;
}

int ibw_counters_tick(const struct ibw_counters *c, uint64_t guid)
{
	unsigned i = ibw_ctr_cap_index(c, guid);

	if (i < c->ncaps && c->caps[i].guid == guid &&
	    c->caps[i].psc == PSC_READ)
		return c->caps[i].tick;
	return -1;
}
