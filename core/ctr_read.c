// SPDX-License-Identifier: BSD-2-Clause
/*
 * Reading one port in a counter sweep (counters_int.h): its requests,
 * their answers, the NodeInfo that vouches for them, and what they make
 * of its record, clears before saturation; the FEC and the congestion
 * counters. PortSamplesControl (its Tick and OptionMask) is ctr_tick.c's;
 * what each counter is, ctr_desc.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "counters_int.h"
#include "ctr_state.h"
#include "hash.h"
#include "log.h"
#include "loop.h"

static void cap_no_details(struct ibw_counters *c, uint64_t guid)
{
	struct node_cap *nc = ibw_ctr_cap_find(c, guid);

	if (nc)
		nc->no_details = 1;
}

static void cap_no_vl(struct ibw_counters *c, uint64_t guid)
{
	struct node_cap *nc = ibw_ctr_cap_find(c, guid);

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
	return c->o.thresholds[i] ? c->o.thresholds[i]
				  : ibw_ctr_descs[i].threshold;
}

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
		p = ibw_ctr_port_find_w(c, op->guid, op->port);
		if (op->clear_kind == CLEAR_FEC) {
			/* PortExtendedSpeedsCounters: all of them */
			if (p) {
				p->fec_cleared = 1;
				p->fec_clears++;
			}
			c->clears.ext_speeds++;
		} else if (op->clear_kind == CLEAR_CONG) {
			if (p) {
				p->cong_cleared |=
					(uint8_t)(1u << op->clear_attr);
				p->cong_clears++;
			}
			c->clears.congestion++;
		} else {
			for (i = 0; p && i < IBW_CTR_MAX; i++) {
				struct ibw_ctr_val *v;

				if (!(op->reset_mask & ibw_ctr_descs[i].select))
					continue;
				v = ibw_ctr_val_w(p, (enum ibw_ctr)i);
				if (v)
					v->reset_by_us = 1;
			}
			if (p)
				p->clears++;
			c->clears.port_counters++;
		}
	}
	/* An answer after its sweep is no part of the one under way: with
	 * clears on by default, a stray one must not take another's place
	 * (ibw_ctr_settle() keeps the same rule). */
	if (op->sweep == c->sweep_id && c->pending)
		c->pending--;
	free(op);
	ibw_ctr_answered(c);
}

/* A PerfSet of @attr (@payload: PortSelect and CounterSelect set) to
 * @src's port, clearing what @kind and @mask (CLEAR_PC: the counters'
 * select bits) or @cong_attr (CLEAR_CONG) say; reset_done() counts it
 * once the PMA has acknowledged it. */
static void send_clear(struct ibw_counters *c, const struct port_op *src,
		       uint8_t kind, uint32_t mask, uint8_t cong_attr,
		       uint16_t attr, uint8_t *payload)
{
	struct port_op *op = calloc(1, sizeof(*op));

	if (!op)
		return;
	*op = *src;
	op->clear_kind = kind;
	op->reset_mask = mask;
	op->clear_attr = cong_attr;
	if (ibw_ctr_pma_submit(c, src->guid, src->lid, IBW_METHOD_SET, attr,
			       payload, reset_done, op) < 0)
		free(op);
}

/* PerfSet(PortCounters) with CounterSelect: clear counters about to
 * saturate, and those only. Their values were folded into the totals
 * just before; what they count between that reading and the clear is
 * lost, as with any clear (OpenSM's PerfMgr does the same). */
static void reset_counters(struct ibw_counters *c, const struct port_op *src,
			   uint32_t mask)
{
	uint8_t payload[IB_PC_DATA_SZ];

	memset(payload, 0, sizeof(payload));
	mad_set_field(payload, 0, IB_PC_PORT_SELECT_F, src->port);
	mad_set_field(payload, 0, IB_PC_COUNTER_SELECT_F, mask & 0xffff);
	mad_set_field(payload, 0, IB_PC_COUNTER_SELECT2_F, (mask >> 16) & 0xff);
	send_clear(c, src, CLEAR_PC, mask, 0, IBW_ATTR_PORT_COUNTERS, payload);
}

/*
 * PerfSet(PortExtendedSpeedsCounters) with every CounterSelect bit, as
 * perfquery -T -R sends it: the IBA gives no per-field select that both
 * layouts share, and the fields were all folded in just before. The
 * next reading is then counted whole (fec_cleared).
 */
static void reset_fec(struct ibw_counters *c, const struct port_op *src)
{
	uint8_t payload[IB_PC_DATA_SZ];

	memset(payload, 0, sizeof(payload));
	mad_set_field(payload, 0, IB_PESC_PORT_SELECT_F, src->port);
	mad_set_field64(payload, 0, IB_PESC_COUNTER_SELECT_F, ~0ull);
	send_clear(c, src, CLEAR_FEC, 0, 0, IBW_ATTR_PORT_EXT_SPEEDS, payload);
}

/*
 * PerfSet of congestion attribute @a of the port, with PortSelect and
 * CounterSelect as perfquery -R --xmitcc (and the others) send it: the
 * attribute's counters, folded in just before, start again from 0.
 */
static void reset_cong(struct ibw_counters *c, const struct port_op *src,
		       enum ibw_cong_attr a)
{
	uint8_t payload[IB_PC_DATA_SZ];

	memset(payload, 0, sizeof(payload));
	mad_set_field(payload, 0, IB_PC_PORT_SELECT_F, src->port);
	mad_set_field(payload, 0, IB_PC_COUNTER_SELECT_F, 0xffff);
	send_clear(c, src, CLEAR_CONG, 0, (uint8_t)a,
		   (uint16_t)ibw_cong_attr_id(a), payload);
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
	/* the error counters there only where CapabilityMask2 says so:
	 * elsewhere those fields are reserved (zero) */
	if (op->got_ext && d->ext_field >= 0 && (!d->is_error || op->ext_err)) {
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
	struct ibw_port_ctrs *p = ibw_ctr_port_get(c, op->guid, op->port);
	uint64_t now_mono = ibw_now_us(), dt;
	uint64_t prev_x, prev_r, prev_xp, prev_rp;
	uint32_t reset_mask = 0;
	int fec_reset = 0;
	unsigned cong_reset = 0, a;
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
		const struct ibw_ctr_desc *d = &ibw_ctr_descs[i];
		struct ibw_ctr_val *v;
		uint64_t raw, max, before;
		int use_ext = op_raw(op, d, &raw, &max), first;
		enum ibw_ctr_step step;

		if (use_ext < 0)
			continue;
		/* a detail counter's block is made by its first reading */
		v = ibw_ctr_val_w(p, (enum ibw_ctr)i);
		if (!v)
			continue;
		before = v->total;
		first = !v->have_raw;
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

			/* the first reading is a baseline, not an increase */
			if (!first)
				p->error_increments += v->total - before;
			if (ibw_ctr_threshold(v, raw, thr))
				emit(c, IBW_EVT_THRESHOLD_CROSSED, p, d->name,
				     thr, raw);
		}
		/* Clear narrow counters before they saturate, if asked. */
		if (!use_ext && ibw_ctr_near_max(raw, max) &&
		    ((d->is_error && c->o.reset_errors) ||
		     (!d->is_error && c->o.reset_data)))
			reset_mask |= ibw_ctr_descs[i].select;
	}
	for (i = 0; i < 4; i++) {
		struct ibw_ctr_val *v = &p->v[IBW_CTR_XMIT_DATA + i];

		p->pc_raw[i] = ibw_mad_get(
			op->pc, ibw_ctr_descs[IBW_CTR_XMIT_DATA + i].pc_field);
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
		struct ibw_fec *nf =
			ibw_fec_fold(p->fec, &op->fec, p->fec_cleared);

		if (nf) {
			ibw_fec_unref(p->fec);
			p->fec = nf;
			p->fec_cleared = 0;
			/* 32 bits fill in hours at a high raw BER */
			if (c->o.reset_errors && ibw_fec_near_max(&op->fec))
				fec_reset = 1;
		}
	}
	p->fec_fail = op->fec_fail;
	if (op->cong.have) {
		struct ibw_cong *ng =
			ibw_cong_fold(p->cong, &op->cong, p->cong_cleared);

		if (ng) {
			ibw_cong_unref(p->cong);
			p->cong = ng;
			p->cong_cleared &= (uint8_t)~op->cong.have;
			if (c->o.reset_errors)
				cong_reset = ibw_cong_near_max(&op->cong);
		}
	}
	p->cong_fail = op->cong_fail;
	if (p->cong && !op->cong.have && !op->cong_fail)
		p->cong_fail = IBW_CTR_FAIL_ERROR; /* not read this sweep */
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
	if (fec_reset)
		reset_fec(c, op);
	for (a = 0; a < IBW_CONG_NATTR; a++)
		if (cong_reset >> a & 1)
			reset_cong(c, op, (enum ibw_cong_attr)a);
}

/* @op's port could not be read this sweep, for @op->fail (an error
 * when it says nothing). */
void ibw_ctr_port_failed(struct ibw_counters *c, const struct port_op *op)
{
	struct ibw_port_ctrs *p = ibw_ctr_port_get(c, op->guid, op->port);

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
		int use_ext = op_raw(op, &ibw_ctr_descs[i], &raw, &max);

		if (use_ext >= 0 &&
		    ibw_ctr_would_reset(ibw_ctr_val(p, (enum ibw_ctr)i), raw,
					use_ext))
			return 1;
	}
	return 0;
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
void ibw_ctr_flux_sweep_end(struct ibw_counters *c)
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
	if (!ibw_ctr_settle(c, v->sweep, d)) {
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
			ibw_ctr_port_failed(c, op);
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
	ibw_ctr_answered(c);
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
		ibw_ctr_port_failed(c, op);
		free(op);
	}
}

/* A port of job @idx is done with (its readings in, or never sent):
 * the last one sends the job's NodeInfo if readings wait for it. */
void ibw_ctr_job_port_done(struct ibw_counters *c, unsigned idx)
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
			ibw_ctr_port_failed(c, op);
		free(op);
	}
	ibw_ctr_job_port_done(c, idx);
}

/* One of a port's answers is in; the last one settles the port. */
static void port_settled(struct ibw_counters *c, struct port_op *op)
{
	c->jobs[op->job].t_end = ibw_now_us();
	c->pending--;
	if (--op->left)
		return;
	port_done(c, op);
	ibw_ctr_answered(c);
}

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
		(void)ibw_ctr_ask_tick(c, &c->jobs[op->job], NULL);
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
	struct node_cap *nc = ibw_ctr_cap_find(c, guid);

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
	if (ibw_ctr_pma_submit_tries(c, op->guid, op->lid, IBW_METHOD_GET,
				     IBW_ATTR_PORT_EXT_SPEEDS, payload, 0,
				     fec_answer, op) < 0) {
		c->cur.errors++;
		op->fec_fail = IBW_CTR_FAIL_ERROR;
		return -1;
	}
	op->left++;
	return 0;
}

/*
 * PortInfoExtended of a port that has it: its FECModeActive says whether
 * FEC runs (the link view judges the port by it, docs/links.md) and, on
 * a PMA that can count in the RS-FEC form, which form the counters come
 * in (perfquery -T asks the same, LID-routed). A status error (no
 * PortInfoExtended after all) leaves the FC-FEC form and no mode, as
 * perfquery does. No answer does not cost the counters: they are read
 * in the form of the last mode read (mode_src "last_known"), or in the
 * FC-FEC form with no mode ("fc_fallback").
 */
static void pie_answer(const struct ibw_mad_done *d, void *arg)
{
	struct port_op *op = arg;
	struct ibw_counters *c = op->c;
	const struct node_cap *nc;
	const struct ibw_port_ctrs *pr;
	enum ibw_fec_layout layout = IBW_FEC_FC;
	int pma_rs;

	if (op->sweep != c->sweep_id || d->result == IBW_MAD_CANCELLED) {
		port_answer(d, arg);
		return;
	}
	nc = ibw_ctr_cap_find(c, op->guid);
	pma_rs = nc && (nc->capmask & PM_CAP_RSFEC);
	op->fec.mode_src = IBW_FEC_MODE_UNREAD;
	if (d->result == IBW_MAD_OK && d->mad && d->len >= IBW_MAD_SIZE) {
		const uint8_t *pie =
			d->mad + ibw_mad_data_offset(IBW_CLASS_SMI);
		uint32_t capm = ibw_mad_get(pie, IB_PORT_EXT_CAPMASK_F);
		uint32_t mode = ibw_mad_get(pie, IB_PORT_EXT_FEC_MODE_ACTIVE_F);

		/* IsFECModeSupported: then FECModeActive holds */
		if (capm & 1) {
			op->fec.mode = (uint8_t)(mode & 0xff);
			op->fec.mode_src = IBW_FEC_MODE_READ;
		}
	} else if (d->result != IBW_MAD_STATUS) {
		if (d->result == IBW_MAD_TIMEOUT)
			c->cur.timeouts++;
		else
			c->cur.errors++;
		pr = ibw_counters_find(c, op->guid, op->port);
		if (pr && pr->fec && ibw_fec_mode_known(pr->fec->mode_src)) {
			op->fec.mode = pr->fec->mode;
			op->fec.mode_src = IBW_FEC_MODE_LAST;
		} else {
			op->fec.mode_src = IBW_FEC_MODE_FALLBACK;
		}
	}
	if (ibw_fec_mode_known(op->fec.mode_src) &&
	    ibw_fec_mode_is_rs(pma_rs, op->fec.mode))
		layout = IBW_FEC_RS;
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
 * straight away, or PortInfoExtended first (FEC_ASK_MODE), for the mode
 * and the form. */
enum { FEC_NO, FEC_FC, FEC_ASK_MODE };

static int fec_plan(const struct ibw_counters *c, const struct job *j,
		    uint8_t port)
{
	const struct node_cap *nc = ibw_ctr_cap_lookup(c, j->guid);
	const struct ibw_port_ctrs *pr;

	if (!(j->esc[port / 32] >> (port % 32) & 1) || !nc || nc->no_fec ||
	    !nc->have_mask)
		return FEC_NO;
	pr = ibw_counters_find(c, j->guid, port);
	if (pr && pr->fec_lost >= IBW_PSC_TRIES)
		return FEC_NO;
	/* the mode wherever PortInfoExtended has it: the link view
	 * judges the port by it */
	return j->pie ? FEC_ASK_MODE : FEC_FC;
}

/* Once the port's counters answered: its FEC counters, if it has
 * some to ask (a port that is gone costs no more timeouts). */
/*
 * A congestion counter: which one, a timeout cannot tell (its MAD is
 * not there), and it does not need to: it fails the port's congestion
 * counters for this sweep. A status error takes the attribute out of
 * what the PMA is asked for.
 */
static void cong_answer(const struct ibw_mad_done *d, void *arg)
{
	struct port_op *op = arg;
	struct ibw_counters *c = op->c;
	unsigned id, a;

	if (op->sweep != c->sweep_id || d->result == IBW_MAD_CANCELLED) {
		port_answer(d, arg);
		return;
	}
	if (d->mad && d->len >= IBW_MAD_SIZE) {
		id = ibw_mad_get(d->mad, IB_MAD_ATTRID_F);
		for (a = 0; a < IBW_CONG_NATTR; a++)
			if (ibw_cong_attr_id((enum ibw_cong_attr)a) == id)
				break;
		if (a < IBW_CONG_NATTR && d->result == IBW_MAD_OK)
			(void)ibw_cong_decode(d->mad + IB_PC_DATA_OFFS,
					      IB_PC_DATA_SZ,
					      (enum ibw_cong_attr)a, &op->cong);
		else if (a < IBW_CONG_NATTR && d->result == IBW_MAD_STATUS) {
			struct node_cap *nc = ibw_ctr_cap_find(c, op->guid);

			if (nc)
				nc->optmask &= ~ibw_cong_option_bits(
					(enum ibw_cong_attr)a);
		}
	} else if (d->result == IBW_MAD_TIMEOUT) {
		c->cur.timeouts++;
		op->cong_fail = IBW_CTR_FAIL_TIMEOUT;
	} else {
		c->cur.errors++;
		if (op->cong_fail != IBW_CTR_FAIL_TIMEOUT)
			op->cong_fail = IBW_CTR_FAIL_ERROR;
	}
	port_settled(c, op);
}

/* The congestion counters the port's PMA has, once its counters
 * answered: one request each, one try. */
static void ask_cong(struct ibw_counters *c, struct port_op *op)
{
	struct node_cap *nc = ibw_ctr_cap_find(c, op->guid);
	uint8_t payload[IB_PC_DATA_SZ];
	unsigned a;

	if (!op->cong_todo || !nc || !nc->have_optmask)
		return;
	op->cong_todo = 0;
	for (a = 0; a < IBW_CONG_NATTR; a++) {
		if (!ibw_cong_advertised(nc->optmask, (enum ibw_cong_attr)a))
			continue;
		memset(payload, 0, sizeof(payload));
		mad_set_field(payload, 0, IB_PC_PORT_SELECT_F, op->port);
		if (ibw_ctr_pma_submit_tries(
			    c, op->guid, op->lid, IBW_METHOD_GET,
			    (uint16_t)ibw_cong_attr_id((enum ibw_cong_attr)a),
			    payload, 0, cong_answer, op) < 0) {
			c->cur.errors++;
			op->cong_fail = IBW_CTR_FAIL_ERROR;
			continue;
		}
		op->left++;
	}
}

static void ask_fec_todo(struct ibw_counters *c, struct port_op *op)
{
	int todo = op->fec_todo;

	ask_cong(c, op);

	op->fec_todo = FEC_NO;
	if (todo == FEC_FC)
		(void)ask_fec(c, op, IBW_FEC_FC);
	else if (todo == FEC_ASK_MODE)
		(void)ask_pie(c, op);
}

static void query_port(struct ibw_counters *c, const struct job *j,
		       uint8_t port, int want_ext, int ext_err, int details,
		       int want_vl)
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
		ibw_ctr_port_failed(c, &po);
		c->cur.errors++;
		ibw_ctr_job_port_done(c, (unsigned)(j - c->jobs));
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
	op->ext_err = (uint8_t)ext_err;
	op->det_asked = (uint8_t)details;
	op->left = (uint8_t)n;
	op->job = (unsigned)(j - c->jobs);
	op->fec_todo = (uint8_t)fec_plan(c, j, port);
	op->cong_todo = 1;
	for (k = 0; k < n; k++) {
		memset(payload, 0, sizeof(payload));
		/* PortSelect sits at the same place in all five. */
		mad_set_field(payload, 0, IB_PC_PORT_SELECT_F, port);
		cb = attrs[k] == IBW_ATTR_PORT_VL_XMIT_WAIT ? vl_answer
		     : attrs[k] == 0x15 || attrs[k] == 0x16 ? detail_answer
							    : port_answer;
		if (ibw_ctr_pma_submit(c, j->guid, j->lid, IBW_METHOD_GET,
				       attrs[k], payload, cb, op) < 0) {
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

void ibw_ctr_run_job_ports(struct ibw_counters *c, struct job *j)
{
	struct node_cap *nc = ibw_ctr_cap_find(c, j->guid);
	uint32_t mask = nc ? nc->capmask : 0;
	/* 64-bit error counters imply the extended attribute */
	int ext_err = nc && (nc->capmask2 & PM_CAP2_ADDL_EXT);
	int ext = (mask & (PM_CAP_EXT_WIDTH | PM_CAP_EXT_WIDTH_NOIETF)) ||
		  ext_err;
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
		query_port(c, j, j->port_list[i], ext, ext_err, details, vl);
}

/* ClassPortInfo is in: PortSamplesControl first if never asked, then
 * the ports. */
void ibw_ctr_run_job(struct ibw_counters *c, struct job *j)
{
	struct node_cap *nc = ibw_ctr_cap_find(c, j->guid);

	if (nc && nc->psc == PSC_UNASKED && !nc->psc_lost &&
	    ibw_ctr_ask_tick(c, j, ibw_ctr_run_job_ports))
		return;
	ibw_ctr_run_job_ports(c, j);
}
