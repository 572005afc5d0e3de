// SPDX-License-Identifier: BSD-2-Clause
/*
 * A request's life in the kernel and fabric model (km_int.h): its tries
 * on the wire, resends, the kernel's timeout report, and the agent's
 * backlog beyond the solicited flow-control limit.
 */
#define _GNU_SOURCE
#include <string.h>

#include "km_int.h"

void km_deliver(struct kfd *kf, struct msg *m)
{
	m->next = NULL;
	if (kf->qtail)
		kf->qtail->next = m;
	else
		kf->qhead = m;
	kf->qtail = m;
}

unsigned km_fc_limit(uint8_t cls)
{
	if (cls == CLS_SMI || cls == CLS_DR)
		return km.fc_smp;
	if (cls == CLS_SA)
		return km.fc_sa;
	return 0;
}

struct agent *km_agent_of(struct kfd *kf, uint32_t id)
{
	return id < NAGENT ? &kf->ag[id] : NULL;
}

/* One try on the wire (or not, for a dead destination). */
static int transmit(struct req *r, uint64_t now)
{
	const uint8_t *mad = r->buf + HDR;

	if (km_dest_dead(r->buf, r->cls, now)) {
		/* Nothing goes out, nothing comes back: the try times
		 * out like one to a port that is down. */
		km.dead_lid++;
		return 0;
	}
	km_pma_set_sent(r->buf);
	if (km_local_answer(r, now) < 0 &&
	    n_write(r->kf->fd, r->buf, r->len) < 0)
		return -1;
	if (r->cls == CLS_DR)
		km.dr_hops += mad[7];
	if (km.latency) {
		unsigned slot = (r->rhead + r->rcount) % NTRY;

		r->ready[slot] = km_model_ready(r, now);
		if (r->rcount < NTRY)
			r->rcount++;
		else
			r->rhead = (r->rhead + 1) % NTRY;
	}
	return 0;
}

/* The ready time of the oldest try nothing came back for yet. */
uint64_t km_pop_try(struct req *r, uint64_t now)
{
	uint64_t t;

	if (!r->rcount)
		return now;
	t = r->ready[r->rhead];
	r->rhead = (r->rhead + 1) % NTRY;
	r->rcount--;
	return t;
}

void km_resched(struct req *r)
{
	uint64_t w = r->try_end;

	if (r->held && r->held_at < w)
		w = r->held_at;
	km_heap_set(r, w);
}

/* An outstanding request of this agent completed: the kernel sends the
 * next one it held back. */
static void fc_release(struct kfd *kf, uint32_t id, uint64_t now)
{
	struct agent *ag = km_agent_of(kf, id);

	if (!ag)
		return;
	if (ag->outstanding)
		ag->outstanding--;
	while (ag->bl_head) {
		struct req *r = ag->bl_head;
		unsigned lim = km_fc_limit(r->cls);

		if (lim && ag->outstanding >= lim)
			break;
		ag->bl_head = r->qnext;
		if (!ag->bl_head)
			ag->bl_tail = NULL;
		ag->backlog--;
		r->qnext = NULL;
		km_start(r, now);
	}
}

/* Answered or reported: the request is done. */
void km_finish(struct req *r, uint64_t now)
{
	struct kfd *kf = r->kf;
	uint32_t id = r->agent;

	km_heap_del(r);
	km_ht_del(r);
	km_req_put(r);
	fc_release(kf, id, now);
}

void km_start(struct req *r, uint64_t now)
{
	struct agent *ag = km_agent_of(r->kf, r->agent);

	r->state = RQ_WAIT;
	r->try_end = now + (uint64_t)r->timeout_ms * 1000;
	r->final = now + (uint64_t)r->timeout_ms * 1000 * (r->tries_left + 1);
	if (ag)
		ag->outstanding++;
	km_ht_add(r);
	if (transmit(r, now) < 0) {
		/* umad2sim could not write to ibsim: as a send that failed
		 * on the wire, the try just gets no answer. */
	}
	km_resched(r);
}

/* The kernel's report for a request nothing answered: the header the
 * program wrote with status ETIMEDOUT, then the MAD header alone, with
 * the TID as it went out (umad2sim puts the agent in bits 32..47). */
static void timeout_report(struct req *r, uint64_t now)
{
	struct msg *m = km_msg_get();
	ib_user_mad_t *u;
	uint8_t *mad;

	km.timeouts++;
	if (m) {
		memcpy(m->buf, r->buf, HDR + MAD_HDR);
		u = (ib_user_mad_t *)(void *)m->buf;
		u->status = KM_ETIMEDOUT;
		mad = m->buf + HDR;
		mad[10] = (uint8_t)(r->agent >> 8);
		mad[11] = (uint8_t)r->agent;
		m->len = HDR + MAD_HDR;
		km_deliver(r->kf, m);
	}
	/* Kept a while so that an answer coming now counts as late. */
	r->state = RQ_LATE;
	if (r->held) {
		km_msg_put(r->held);
		r->held = NULL;
	}
	km_heap_set(r, now + LINGER_US);
	fc_release(r->kf, r->agent, now);
}

static void fire(struct req *r, uint64_t now)
{
	if (r->state == RQ_LATE) {
		km_heap_del(r);
		km_ht_del(r);
		km_req_put(r);
		return;
	}
	if (r->held && r->held_at <= now) {
		struct msg *m = r->held;

		r->held = NULL;
		km.answered++;
		km_deliver(r->kf, m);
		km_finish(r, now);
		return;
	}
	if (r->try_end <= now) {
		if (!r->tries_left) {
			timeout_report(r, now);
			return;
		}
		r->tries_left--;
		r->try_end += (uint64_t)r->timeout_ms * 1000;
		km.resent++;
		transmit(r, now);
	}
	km_resched(r);
}

void km_run_timers(uint64_t now)
{
	while (km.nheap && km.heap[0]->when <= now)
		fire(km.heap[0], now);
}

uint64_t km_next_timer(void)
{
	return km.nheap ? km.heap[0]->when : INF;
}
