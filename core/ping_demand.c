// SPDX-License-Identifier: BSD-2-Clause
/*
 * Pings on demand (/api/v1/ping, the MIB's ping): a count of probes to
 * one LID, one at a time, each answer checked as the periodic probes'
 * are, the round trips and the losses reported at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ping_int.h"

struct run {
	struct ibw_pinger *p;
	uint16_t lid;
	enum ibw_ping_method method;
	enum ibw_echo_type type;
	unsigned count, done;
	unsigned timeout_ms;
	uint16_t seq0;
	uint8_t payload[IBW_ECHO_PAYLOAD];
	struct ibw_ping_probe *probes;
	struct ibw_ping_summary sum;
	double rtt_sum, rtt_sum2;
	ibw_ping_cb cb;
	void *arg;
};

static void run_next(struct run *r);

static void run_done(const struct ibw_mad_done *d, void *arg)
{
	struct run *r = arg;
	struct ibw_ping_probe *pb = &r->probes[r->done];
	int ok = d->result == IBW_MAD_OK;

	pb->seq = (uint16_t)(r->seq0 + r->done);
	pb->result = d->result;
	pb->status = d->status;
	pb->method = r->method;
	if (ok && r->method == IBW_PING_ECHO) {
		struct ibw_echo_reply rep;

		ok = ibw_ping_check_echo(d, r->type, r->p->id, pb->seq, &rep);
		if (!ok) {
			pb->bad_echo = 1;
		} else {
			r->sum.last_reply = rep;
			r->sum.last_reply.data = NULL;
			r->sum.have_reply = 1;
			if (rep.type == IBW_ECHO_IBPING)
				snprintf(r->sum.responder_host,
					 sizeof(r->sum.responder_host), "%s",
					 rep.host);
		}
	}
	if (ibw_ping_no_responder(d)) {
		ok = 1;
		pb->no_responder = 1;
		r->sum.no_responder++;
	}
	r->sum.sent++;
	if (ok && d->result != IBW_MAD_CANCELLED) {
		pb->rtt_us = d->rtt_us;
		r->sum.received++;
		if (r->sum.received == 1 || d->rtt_us < r->sum.rtt_min_us)
			r->sum.rtt_min_us = d->rtt_us;
		if (d->rtt_us > r->sum.rtt_max_us)
			r->sum.rtt_max_us = d->rtt_us;
		r->rtt_sum += (double)d->rtt_us;
		r->rtt_sum2 += (double)d->rtt_us * (double)d->rtt_us;
	}
	r->done++;
	if (d->result == IBW_MAD_CANCELLED)
		r->count = r->done;
	run_next(r);
}

static void run_next(struct run *r)
{
	struct ibw_mad_req q;

	if (r->done < r->count) {
		ibw_ping_build(&q, r->lid, r->method, r->type, r->p->id,
			       (uint16_t)(r->seq0 + r->done), r->payload,
			       r->timeout_ms, 0);
		q.cb = run_done;
		q.arg = r;
		if (ibw_engine_submit(r->p->e, &q) == 0)
			return;
		r->count = r->done; /* cannot send: stop here */
	}
	if (r->sum.received) {
		double mean = r->rtt_sum / r->sum.received;

		r->sum.rtt_avg_us = mean;
		r->sum.rtt_mdev_us = sqrt(
			fmax(0.0, r->rtt_sum2 / r->sum.received - mean * mean));
	}
	r->sum.loss_pct =
		ibw_ping_loss_pct(r->sum.sent - r->sum.received, r->sum.sent);
	r->sum.probes = r->probes;
	r->p->ondemand--;
	r->cb(&r->sum, r->arg);
	free(r->probes);
	free(r);
}

int ibw_ping_run(struct ibw_pinger *p, uint16_t lid,
		 enum ibw_ping_method method, enum ibw_echo_type type,
		 unsigned count, unsigned timeout_ms, ibw_ping_cb cb, void *arg)
{
	struct run *r;

	if (!lid || !count || count > 10000 || !cb)
		return -EINVAL;
	if (p->ondemand >= MAX_ONDEMAND)
		return -EBUSY;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->probes = calloc(count, sizeof(*r->probes));
	if (!r->probes) {
		free(r);
		return -ENOMEM;
	}
	if (method == IBW_PING_AUTO) {
		const struct ibw_endport *ep = NULL;
		unsigned i;

		for (i = 0; i < p->neps; i++)
			if (p->eps[i].lid == lid)
				ep = &p->eps[i];
		method = ep && ep->echo_answered ? IBW_PING_ECHO : IBW_PING_PMA;
	}
	r->p = p;
	r->lid = lid;
	r->method = method;
	r->type = type;
	r->count = count;
	r->timeout_ms = timeout_ms ? timeout_ms : p->o.timeout_ms;
	r->seq0 = (uint16_t)(ibw_now_us() & 0x7fff);
	r->sum.lid = lid;
	r->sum.method = method;
	r->cb = cb;
	r->arg = arg;
	p->ondemand++;
	/* Start from the loop, never inside this call. */
	{
		struct ibw_mad_req q;

		ibw_ping_build(&q, lid, method, type, p->id, r->seq0,
			       r->payload, r->timeout_ms, 0);
		q.cb = run_done;
		q.arg = r;
		if (ibw_engine_submit(p->e, &q) < 0) {
			p->ondemand--;
			free(r->probes);
			free(r);
			return -EIO;
		}
	}
	return 0;
}
