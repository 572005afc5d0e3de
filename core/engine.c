// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "codec.h"
#include "engine_int.h"
#include "hash.h"

#define RX_BATCH 4096

static void pump(struct ibw_engine *e);
static void transport_lost(struct ibw_engine *e, int err);
static void on_readable(struct ibw_loop *loop, int fd, unsigned events,
			void *arg);

static uint64_t dest_key(const struct ibw_dest *d)
{
	uint64_t h;

	if (!d->directed)
		return d->lid;
	/* A hash of the hop count and the path; the top bit keeps it apart
	 * from LIDs. */
	h = ibw_fnv1a64(IBW_FNV1A64_INIT, &d->hops, sizeof(d->hops));
	h = ibw_fnv1a64(h, &d->path[1], d->hops);
	return h | (1ull << 63);
}

static struct dest_q *dest_get(struct ibw_engine *e, uint64_t key)
{
	unsigned b = (unsigned)(key ^ (key >> 29)) & (DEST_BUCKETS - 1);
	struct dest_q *q;

	for (q = e->buckets[b]; q; q = q->hnext)
		if (q->key == key)
			return q;
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->key = key;
	q->hnext = e->buckets[b];
	e->buckets[b] = q;
	return q;
}

static void dest_put(struct ibw_engine *e, struct dest_q *q)
{
	unsigned b = (unsigned)(q->key ^ (q->key >> 29)) & (DEST_BUCKETS - 1);
	struct dest_q **pp;

	if (q->inflight || q->head || q->runnable || q->blocked)
		return;
	for (pp = &e->buckets[b]; *pp; pp = &(*pp)->hnext) {
		if (*pp == q) {
			*pp = q->hnext;
			free(q);
			return;
		}
	}
}

/*
 * Class groups for the kernel's flow control: recent kernels hold
 * solicited SMP and SA requests beyond a per-agent limit in a backlog
 * (write() succeeds, nothing is sent, and our deadline runs), so the
 * engine never has more than that in flight per group.
 */
static unsigned class_group(uint8_t mclass)
{
	if (mclass == IBW_CLASS_SMI || mclass == IBW_CLASS_SMI_DR)
		return 0;
	return mclass == IBW_CLASS_SA ? 1 : 2;
}

static void run_push(struct ibw_engine *e, struct dest_q *q)
{
	if (q->runnable || q->blocked || !q->head ||
	    q->inflight >= e->cfg.max_per_dest)
		return;
	q->runnable = 1;
	q->run_next = NULL;
	if (e->run_tail)
		e->run_tail->run_next = q;
	else
		e->run_head = q;
	e->run_tail = q;
}

/* @q's next request waits for a place in its class group. */
static void block(struct ibw_engine *e, struct dest_q *q, unsigned g)
{
	q->blocked = 1;
	q->run_next = NULL;
	if (e->blk_tail[g])
		e->blk_tail[g]->run_next = q;
	else
		e->blk_head[g] = q;
	e->blk_tail[g] = q;
	e->st.class_held++;
}

/* A place in group @g came free: its waiting destinations may run. */
static void unblock(struct ibw_engine *e, unsigned g)
{
	struct dest_q *q = e->blk_head[g], *n;

	e->blk_head[g] = e->blk_tail[g] = NULL;
	for (; q; q = n) {
		n = q->run_next;
		q->run_next = NULL;
		q->blocked = 0;
		run_push(e, q);
	}
}

static struct dest_q *run_pop(struct ibw_engine *e)
{
	struct dest_q *q = e->run_head;

	if (!q)
		return NULL;
	e->run_head = q->run_next;
	if (!e->run_head)
		e->run_tail = NULL;
	q->runnable = 0;
	q->run_next = NULL;
	return q;
}

/* In-flight list, kept in deadline order. Tries mostly share a timeout,
 * so the insertion point is nearly always the tail. */
static void fl_insert(struct ibw_engine *e, struct req *r)
{
	struct req *p = e->fl_tail;

	while (p && p->deadline > r->deadline)
		p = p->prev;
	r->prev = p;
	r->next = p ? p->next : e->fl_head;
	if (r->next)
		r->next->prev = r;
	else
		e->fl_tail = r;
	if (p)
		p->next = r;
	else
		e->fl_head = r;
}

static void fl_remove(struct ibw_engine *e, struct req *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		e->fl_head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		e->fl_tail = r->prev;
	r->prev = r->next = NULL;
}

static void arm_deadline(struct ibw_engine *e)
{
	if (!e->fl_head)
		ibw_timer_disarm(e->deadline_timer);
	else if (ibw_timer_deadline(e->deadline_timer) != e->fl_head->deadline)
		ibw_timer_arm_at(e->deadline_timer, e->fl_head->deadline);
}

/*
 * How long a try counts against the window. An answer comes in about
 * the round trip the answered ones took (tens of microseconds to a few
 * milliseconds); a try still unanswered after several of those, while a
 * try sent after it has been answered, most likely waits for its
 * timeout (a destination that went silent, a kind of request nobody
 * answers), and holding the window meanwhile would let a few silent
 * destinations starve every other request. So it becomes a wait: it
 * keeps its place at its destination and in its class's kernel flow
 * control, but not in the window. A fabric that is only slow (answers
 * queue, in the order sent) overtakes nothing: its tries stay in the
 * window, which so still bounds what is in flight.
 */
static uint64_t wait_after(const struct ibw_engine *e)
{
	uint64_t us = 4 * e->rtt_avg_us + 1000;
	uint64_t most = (uint64_t)e->cfg.timeout_ms * 500u;

	if (us < e->cfg.wait_after_min_us)
		us = e->cfg.wait_after_min_us;
	return us < most ? us : most;
}

/* The fresh and the blind list: in the order sent, by fprev/fnext. */
static void tlist_add(struct req **head, struct req **tail, struct req *r)
{
	r->fnext = NULL;
	r->fprev = *tail;
	if (*tail)
		(*tail)->fnext = r;
	else
		*head = r;
	*tail = r;
}

static void tlist_del(struct req **head, struct req **tail, struct req *r)
{
	if (r->fprev)
		r->fprev->fnext = r->fnext;
	else
		*head = r->fnext;
	if (r->fnext)
		r->fnext->fprev = r->fprev;
	else
		*tail = r->fprev;
	r->fprev = r->fnext = NULL;
}

static void fresh_add(struct ibw_engine *e, struct req *r)
{
	r->try_state = TRY_FRESH;
	r->try_seq = ++e->try_seq;
	tlist_add(&e->fresh_head, &e->fresh_tail, r);
	if (++e->fresh > e->st.window_hwm)
		e->st.window_hwm = e->fresh;
}

static void fresh_del(struct ibw_engine *e, struct req *r)
{
	tlist_del(&e->fresh_head, &e->fresh_tail, r);
	e->fresh--;
}

static void blind_del(struct ibw_engine *e, struct req *r)
{
	tlist_del(&e->blind_head, &e->blind_tail, r);
	e->blind--;
}

/* An answer to a try sent as @seq: the blind waits sent before it are
 * overtaken now, waits like any other. */
static void answered(struct ibw_engine *e, uint64_t seq)
{
	struct req *r;

	if (seq <= e->answered_seq)
		return;
	e->answered_seq = seq;
	while ((r = e->blind_head) && r->try_seq < seq) {
		blind_del(e, r);
		r->try_state = TRY_WAIT;
	}
}

/* @r's try ends (answered, timed out, sent again, given up). */
static void try_end(struct ibw_engine *e, struct req *r)
{
	if (r->try_state == TRY_FRESH)
		fresh_del(e, r);
	else if (r->try_state == TRY_BLIND)
		blind_del(e, r);
	if (r->try_state == TRY_WAIT || r->try_state == TRY_BLIND)
		e->st.waiting--;
	r->try_state = TRY_NONE;
}

/*
 * When a try nobody overtook may leave the window all the same: a
 * window full of silent tries (an echo to every host, none of which
 * answers) has no later try that could be answered. Four times
 * wait_after(), and at most BLIND_WINDOWS windows' worth of such blind
 * waits at once, so that a fabric that is only slow (whose round trips
 * the average follows) gets at most five windows in flight.
 */
#define BLIND_WINDOWS 4

static uint64_t blind_after(const struct ibw_engine *e)
{
	uint64_t us = 4 * wait_after(e);
	uint64_t most = (uint64_t)e->cfg.timeout_ms * 500u;

	return us < most ? us : most;
}

/* Tries that have waited long enough, and were overtaken (or may go
 * blind), leave the window. */
static void age(struct ibw_engine *e, uint64_t now)
{
	uint64_t wa = wait_after(e), ba = blind_after(e);
	struct req *r;

	while ((r = e->fresh_head) && now - r->sent_at >= wa) {
		if (e->answered_seq > r->try_seq) {
			fresh_del(e, r);
			r->try_state = TRY_WAIT;
		} else if (now - r->sent_at >= ba &&
			   e->blind < BLIND_WINDOWS * e->cfg.max_inflight) {
			fresh_del(e, r);
			r->try_state = TRY_BLIND;
			tlist_add(&e->blind_head, &e->blind_tail, r);
			e->blind++;
			e->st.blind_waits++;
		} else {
			break;
		}
		e->st.waits++;
		if (++e->st.waiting > e->st.waiting_hwm)
			e->st.waiting_hwm = e->st.waiting;
	}
}

static uint32_t tid_alloc(struct ibw_engine *e)
{
	/* In-flight tries are far fewer than slots, so this ends quickly;
	 * it skips 0 and slots still holding a try in flight. */
	for (;;) {
		uint32_t tid = e->next_tid++;
		struct slot *s = &e->slots[tid & e->slot_mask];

		if (tid && s->state != SLOT_INFLIGHT)
			return tid;
	}
}

/* @r is done with @res: its callback runs from the loop, not here. */
static void finish(struct ibw_engine *e, struct req *r, enum ibw_mad_result res,
		   int status)
{
	r->result = res;
	r->status = status;
	r->next = NULL;
	r->prev = e->done_tail;
	if (e->done_tail)
		e->done_tail->next = r;
	else
		e->done_head = r;
	e->done_tail = r;
	if (!ibw_timer_armed(e->done_timer))
		ibw_timer_arm(e->done_timer, 0);
}

/* Release @r's window place; the caller then completes it. */
static void leave_flight(struct ibw_engine *e, struct req *r,
			 enum slot_state why)
{
	struct slot *s = &e->slots[r->tid & e->slot_mask];
	unsigned g = class_group(r->mad[1]);

	if (s->tid == r->tid && s->state == SLOT_INFLIGHT) {
		s->state = why;
		s->req = NULL;
	}
	fl_remove(e, r);
	try_end(e, r);
	e->st.inflight--;
	e->grp_inflight[g]--;
	r->dq->inflight--;
	run_push(e, r->dq);
	dest_put(e, r->dq);
	r->dq = NULL;
	if (e->blk_head[g])
		unblock(e, g);
}

/* What @r's kind came to, as it ends with @res. */
static void count_kind(struct ibw_engine *e, struct req *r,
		       enum ibw_mad_result res)
{
	struct ibw_mad_kind *k = &e->st.kinds.k[r->kind];

	k->requests++;
	if (r->skipped)
		k->skipped++;
	else if (res == IBW_MAD_TIMEOUT)
		k->timeouts++;
	if (res == IBW_MAD_STATUS)
		k->errors++;
	if (res == IBW_MAD_OK || res == IBW_MAD_STATUS)
		k->answered++;
	if (r->probe)
		e->probing[r->kind] = 0;
}

/*
 * Whether @r (IBW_MAD_F_OPTIONAL) ends unsent: its kind is silent
 * (ibw_mad_kind_silent) and one of it is out already. Else, for a
 * silent kind, @r is that one.
 */
static int skip_silent(struct ibw_engine *e, struct req *r)
{
	if (!(r->r.flags & IBW_MAD_F_OPTIONAL) ||
	    !ibw_mad_kind_silent(&e->st.kinds.k[r->kind]))
		return 0;
	if (e->probing[r->kind])
		return 1;
	e->probing[r->kind] = 1;
	r->probe = 1;
	return 0;
}

/*
 * Whether @r ends unsent: a PerfMgt request to a destination whose PMA
 * let one request run out of its tries and has answered none since its
 * queue was made, while another request to it is out. A node's PMA that
 * stopped answering so costs a sweep one request's tries at each place
 * of its per-destination limit, not its every port's (36 ports of a
 * switch, three attributes each, four at a time: 27 deadlines and their
 * retries). The one out probes: an answer ends the silence.
 */
static int dest_silent(const struct dest_q *q, const struct req *r)
{
	return r->mad[1] == IBW_CLASS_PERF && q->perf_silent && q->inflight;
}

static void complete_now(struct ibw_engine *e, struct req *r,
			 enum ibw_mad_result res, int status,
			 const struct ibw_rx *rx, uint64_t now)
{
	struct ibw_mad_done d;

	memset(&d, 0, sizeof(d));
	d.result = res;
	d.status = status;
	d.tries = r->tries;
	if (rx) {
		d.mad = rx->mad;
		d.len = rx->len;
		d.rtt_us = now - r->sent_at;
	}
	switch (res) {
	case IBW_MAD_OK:
		e->st.ok++;
		break;
	case IBW_MAD_TIMEOUT:
		if (r->skipped)
			e->st.skipped++;
		else
			e->st.timeouts++;
		break;
	case IBW_MAD_STATUS:
		e->st.status_errors++;
		break;
	case IBW_MAD_TRANSPORT:
		e->st.transport_errors++;
		break;
	case IBW_MAD_CANCELLED:
		e->st.cancelled++;
		break;
	}
	count_kind(e, r, res);
	r->r.cb(&d, r->r.arg);
	free(r);
}

/*
 * How long a try waits. A transport that reports unanswered requests (the
 * kernel: ETIMEDOUT at the timeout we gave it) decides when a try has
 * timed out; our own deadline then only stands in for a report that never
 * comes, a little later, so that one clock decides and a try is counted
 * once. Without such reports, our deadline is the timeout.
 */
static uint64_t try_wait_us(const struct ibw_engine *e, unsigned timeout_ms)
{
	uint64_t us = (uint64_t)timeout_ms * 1000u;

	if (e->t && e->t->reports_timeouts)
		us += us / 4 > 20000u ? us / 4 : 20000u;
	return us;
}

static int send_try(struct ibw_engine *e, struct req *r, uint64_t now)
{
	struct slot *s;
	int rc;

	r->tid = tid_alloc(e);
	/* Only the low 32 bits come back (the kernel and umad2sim use the
	 * high ones for the agent). */
	mad_set_field64(r->mad, 0, IB_MAD_TRID_F, r->tid);
	r->tries++;
	r->sent_at = now;
	r->deadline = now + try_wait_us(e, r->r.timeout_ms);
	if (e->lost)
		return e->lost;
	/* The kernel keeps the request waiting for its answer for the
	 * try's timeout and drops answers after that; our retries are
	 * fresh tries with fresh TIDs, so it retries nothing itself. */
	rc = ibw_transport_send(e->t, &r->addr, r->mad, IBW_MAD_SIZE,
				r->r.timeout_ms);
	if (rc < 0) {
		e->st.send_errors++;
		if (ibw_transport_fatal(rc))
			transport_lost(e, rc);
		return rc;
	}
	e->st.sent++;
	s = &e->slots[r->tid & e->slot_mask];
	s->tid = r->tid;
	s->state = SLOT_INFLIGHT;
	s->req = r;
	fl_insert(e, r);
	fresh_add(e, r);
	return 0;
}

static void pump(struct ibw_engine *e)
{
	uint64_t now;
	struct dest_q *q;

	if (e->pumping)
		return;
	e->pumping = 1;
	now = ibw_now_us();
	age(e, now);
	while (e->fresh < e->cfg.max_inflight &&
	       e->st.inflight < e->max_outstanding && (q = run_pop(e))) {
		struct req *r = q->head;
		unsigned g = class_group(r->mad[1]);
		int rc;

		if (!r->probe && (skip_silent(e, r) || dest_silent(q, r))) {
			/* a silent kind's: it ends now, as a timeout */
			q->head = r->next;
			if (!q->head)
				q->tail = NULL;
			r->next = NULL;
			e->st.queued--;
			r->skipped = 1;
			finish(e, r, IBW_MAD_TIMEOUT, ETIMEDOUT);
			run_push(e, q);
			dest_put(e, q);
			continue;
		}
		if (e->grp_inflight[g] >= e->grp_cap[g]) {
			block(e, q, g);
			continue;
		}
		q->head = r->next;
		if (!q->head)
			q->tail = NULL;
		r->next = NULL;
		e->st.queued--;
		q->inflight++;
		e->st.inflight++;
		e->grp_inflight[g]++;
		if (e->st.inflight > e->st.inflight_hwm)
			e->st.inflight_hwm = e->st.inflight;
		r->dq = q;
		rc = send_try(e, r, now);
		if (rc < 0) {
			q->inflight--;
			e->st.inflight--;
			e->grp_inflight[g]--;
			r->dq = NULL;
			finish(e, r, IBW_MAD_TRANSPORT, -rc);
		}
		run_push(e, q);
		dest_put(e, q);
	}
	e->pumping = 0;
	arm_deadline(e);
	/* Held by the window alone: look again when its oldest try may be
	 * a wait, overtaken or blind. (The next answer pumps as well.) */
	if (e->run_head && e->fresh >= e->cfg.max_inflight && e->fresh_head) {
		uint64_t at = e->fresh_head->sent_at + wait_after(e);

		if (e->answered_seq <= e->fresh_head->try_seq)
			at = e->blind < BLIND_WINDOWS * e->cfg.max_inflight
				     ? e->fresh_head->sent_at + blind_after(e)
				     : 0;
		if (at)
			ibw_timer_arm_at(e->age_timer, at);
	}
}

int ibw_engine_submit(struct ibw_engine *e, const struct ibw_mad_req *q)
{
	struct req *r;
	struct dest_q *dq;
	int rc;

	if (!q->cb)
		return -EINVAL;
	if (e->closing)
		return -ESHUTDOWN;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->r = *q;
	r->r.data = NULL;
	if (!r->r.timeout_ms)
		r->r.timeout_ms = e->cfg.timeout_ms;
	if (r->r.retries < 0)
		r->r.retries = e->cfg.retries;
	rc = ibw_eng_build(e, r, q);
	if (rc < 0) {
		free(r);
		return rc;
	}
	r->kind = (uint8_t)(ibw_mad_kinds_get(&e->st.kinds, r->mad) -
			    e->st.kinds.k);
	dq = dest_get(e, dest_key(&q->dest));
	if (!dq) {
		free(r);
		return -ENOMEM;
	}
	r->prev = NULL;
	r->next = NULL;
	if (dq->tail)
		dq->tail->next = r;
	else
		dq->head = r;
	dq->tail = r;
	e->st.submitted++;
	e->st.queued++;
	if (e->st.queued > e->st.queued_hwm)
		e->st.queued_hwm = e->st.queued;
	run_push(e, dq);
	pump(e);
	return 0;
}

static void on_done_timer(struct ibw_timer *t, void *arg)
{
	struct ibw_engine *e = arg;
	struct req *r, *list = e->done_head;

	/* Take the list first: callbacks may finish more requests. */
	e->done_head = e->done_tail = NULL;
	while ((r = list)) {
		list = r->next;
		complete_now(e, r, r->result, r->status, NULL, 0);
	}
	pump(e);
}

/* Either send another try or give up with @res. */
static void retry_or_fail(struct ibw_engine *e, struct req *r,
			  enum ibw_mad_result res, int status, uint64_t now)
{
	struct slot *s = &e->slots[r->tid & e->slot_mask];

	if (r->tries <= (unsigned)r->r.retries) {
		int rc;

		if (s->tid == r->tid && s->state == SLOT_INFLIGHT) {
			s->state = res == IBW_MAD_TIMEOUT ? SLOT_TIMEDOUT
							  : SLOT_CLOSED;
			s->req = NULL;
		}
		fl_remove(e, r);
		try_end(e, r);
		e->st.retries++;
		rc = send_try(e, r, now);
		if (rc == 0)
			return;
		/* Not in flight any more: put it back so leave_flight
		 * below sees the shape it expects. */
		fl_insert(e, r);
		res = IBW_MAD_TRANSPORT;
		status = -rc;
	}
	if (res == IBW_MAD_TIMEOUT && r->mad[1] == IBW_CLASS_PERF && r->dq &&
	    !r->dq->perf_heard)
		r->dq->perf_silent = 1;
	leave_flight(e, r,
		     res == IBW_MAD_TIMEOUT ? SLOT_TIMEDOUT : SLOT_CLOSED);
	finish(e, r, res, status);
}

static void on_age_timer(struct ibw_timer *t, void *arg)
{
	pump(arg);
}

static void on_deadline(struct ibw_timer *t, void *arg)
{
	struct ibw_engine *e = arg;
	uint64_t now = ibw_now_us();
	struct req *r;
	unsigned n = 0, limit = e->st.inflight;

	while ((r = e->fl_head) && r->deadline <= now && n++ <= limit) {
		e->st.try_timeouts++;
		e->st.kinds.k[r->kind].try_timeouts++;
		retry_or_fail(e, r, IBW_MAD_TIMEOUT, ETIMEDOUT, now);
	}
	pump(e);
}

static int response_status(const uint8_t *mad)
{
	if (mad[1] == IBW_CLASS_SMI_DR)
		return (int)ibw_mad_get(mad, IB_DRSMP_STATUS_F);
	return (int)ibw_mad_get(mad, IB_MAD_STATUS_F);
}

static void handle_rx(struct ibw_engine *e, const struct ibw_rx *rx,
		      uint64_t now)
{
	const uint8_t *m = rx->mad;
	struct slot *s;
	struct req *r;
	uint32_t tid;
	int status;

	if (rx->len < 24) {
		e->st.unmatched++;
		return;
	}
	if (!rx->status && !(m[3] & 0x80)) {
		/* A request from another node, not an answer to ours. */
		if (!e->req_cb || !e->req_cb(rx, e->req_arg))
			e->st.unsolicited++;
		return;
	}
	tid = (uint32_t)ibw_mad_get64(m, IB_MAD_TRID_F);
	s = &e->slots[tid & e->slot_mask];
	if (!tid || s->tid != tid) {
		e->st.unmatched++;
		return;
	}
	switch (s->state) {
	case SLOT_INFLIGHT:
		break;
	case SLOT_ANSWERED:
		e->st.duplicates++;
		return;
	case SLOT_TIMEDOUT:
	case SLOT_CLOSED:
		/* The kernel's report on a try our own deadline already
		 * settled is no news; an answer is late. */
		if (!rx->status)
			e->st.late++;
		return;
	default:
		e->st.unmatched++;
		return;
	}
	r = s->req;
	/* The batch's clock (ibw_engine_poll reads it every 64 MADs) may
	 * predate this try: sent from a callback of this batch and answered
	 * at once (a host's "not supported"). */
	if (now < r->sent_at)
		now = ibw_now_us();
	if (rx->status == ETIMEDOUT) {
		/* The kernel's word that this try went unanswered (ibsim
		 * also hands back a MAD it dropped this way, at once). It
		 * is the try's timeout: counted once, here. */
		e->st.try_timeouts++;
		e->st.kernel_timeouts++;
		e->st.kinds.k[r->kind].try_timeouts++;
		retry_or_fail(e, r, IBW_MAD_TIMEOUT, ETIMEDOUT, now);
		pump(e);
		return;
	}
	if (rx->status) {
		/* Our own MAD, handed back unsent for another reason. */
		e->st.returned++;
		retry_or_fail(e, r, IBW_MAD_TRANSPORT, rx->status, now);
		pump(e);
		return;
	}
	if (m[1] != r->mad[1] ||
	    ibw_mad_get(m, IB_MAD_ATTRID_F) != r->r.attr_id) {
		/* Same TID, different conversation: not ours. */
		e->st.mismatched++;
		return;
	}
	status = response_status(m);
	if (status & 0x1) {
		/* Busy: the responder asks us to try again later; let the
		 * try's deadline run. */
		return;
	}
	answered(e, r->try_seq);
	if (r->mad[1] == IBW_CLASS_PERF && r->dq) {
		r->dq->perf_heard = 1;
		r->dq->perf_silent = 0;
	}
	/* what an answered try takes, an average over the last few */
	if (now > r->sent_at) {
		int64_t d =
			(int64_t)(now - r->sent_at) - (int64_t)e->rtt_avg_us;

		e->rtt_avg_us = (uint64_t)((int64_t)e->rtt_avg_us + d / 8);
	}
	leave_flight(e, r, SLOT_ANSWERED);
	complete_now(e, r, status ? IBW_MAD_STATUS : IBW_MAD_OK, status, rx,
		     now);
	pump(e);
}

void ibw_engine_poll(struct ibw_engine *e)
{
	struct ibw_rx rx;
	uint64_t now = ibw_now_us();
	int i, rc;

	if (e->lost)
		return;
	for (i = 0; i < RX_BATCH; i++) {
		rc = ibw_transport_recv(e->t, &rx);
		if (rc == 0) {
			ibw_transport_drained(e->t);
			break;
		}
		if (rc < 0) {
			if (ibw_transport_fatal(rc)) {
				transport_lost(e, rc);
				return;
			}
			/* Nothing to read that makes sense; the deadlines
			 * will settle what was in flight. */
			e->st.recv_errors++;
			break;
		}
		e->st.received++;
		if (!(i & 63))
			now = ibw_now_us();
		handle_rx(e, &rx, now);
	}
}

static void on_readable(struct ibw_loop *loop, int fd, unsigned events,
			void *arg)
{
	ibw_engine_poll(arg);
}

/*
 * The device is gone (an HCA reset, a driver reload): the kernel has
 * marked this file's agents dead, poll says EPOLLERR for good and every
 * read and write fails. Stop watching the fd at once, or a level-triggered
 * error wakes the loop forever; settle what was in flight and waiting, and
 * fail what comes later without touching the device. Reopening is the
 * owner's business (the lost callback).
 */
static void transport_lost(struct ibw_engine *e, int err)
{
	struct req *r;
	struct dest_q *q;
	int b;

	if (e->lost)
		return;
	e->lost = err < 0 ? err : -EIO;
	ibw_loop_unwatch(e->loop, ibw_transport_fd(e->t));
	if (e->reopen_fn) {
		e->reopen_delay_us = e->reopen_first_us;
		e->st.reopen_tries_failed = 0;
		ibw_timer_arm(e->reopen_timer, e->reopen_delay_us);
	}
	/* The queues first, so that no destination is left runnable with
	 * nothing queued; then what is in flight (which may free them). */
	for (b = 0; b < DEST_BUCKETS; b++) {
		for (q = e->buckets[b]; q; q = q->hnext) {
			while ((r = q->head)) {
				q->head = r->next;
				e->st.queued--;
				finish(e, r, IBW_MAD_TRANSPORT, -e->lost);
			}
			q->tail = NULL;
			q->runnable = 0;
			q->blocked = 0;
			q->run_next = NULL;
		}
	}
	e->run_head = e->run_tail = NULL;
	memset(e->blk_head, 0, sizeof(e->blk_head));
	memset(e->blk_tail, 0, sizeof(e->blk_tail));
	while ((r = e->fl_head)) {
		leave_flight(e, r, SLOT_CLOSED);
		finish(e, r, IBW_MAD_TRANSPORT, -e->lost);
	}
	arm_deadline(e);
	if (e->lost_cb)
		e->lost_cb(e, e->lost, e->lost_arg);
}

static void on_reopen_timer(struct ibw_timer *tm, void *arg)
{
	struct ibw_engine *e = arg;
	struct ibw_transport *t = NULL;
	int rc;

	if (!e->lost)
		return;
	if (e->t) {
		/* Closed here, not where the loss was seen: a MAD being
		 * handled then still points into the transport's buffer.
		 * The kernel frees the file's dead agents on this close. */
		ibw_transport_close(e->t);
		e->t = NULL;
	}
	rc = e->reopen_fn(&t, e->reopen_arg);
	if (rc == 0 && t &&
	    ibw_loop_watch(e->loop, ibw_transport_fd(t), IBW_EV_READ,
			   on_readable, e) < 0) {
		ibw_transport_close(t);
		rc = -ENOMEM;
	}
	if (rc < 0 || !t) {
		e->st.reopen_tries_failed++;
		e->reopen_delay_us *= 2;
		if (e->reopen_delay_us > e->reopen_max_us)
			e->reopen_delay_us = e->reopen_max_us;
		ibw_timer_arm(tm, e->reopen_delay_us);
		return;
	}
	/* Every agent was registered afresh on the new file by the open;
	 * what was in flight on the old one has long been settled. */
	e->t = t;
	e->lost = 0;
	e->st.reopens++;
	if (e->back_cb)
		e->back_cb(e, e->reopen_arg);
	pump(e);
}

struct ibw_engine *ibw_engine_new(struct ibw_loop *loop,
				  struct ibw_transport *t,
				  const struct ibw_engine_config *cfg)
{
	struct ibw_engine *e = calloc(1, sizeof(*e));
	uint32_t nslots = 65536;

	if (!e)
		return NULL;
	e->loop = loop;
	e->t = t;
	if (cfg)
		e->cfg = *cfg;
	else
		e->cfg.retries = -1;
	if (!e->cfg.recv_queue_size)
		e->cfg.recv_queue_size = IBW_KERNEL_RECVQ_DEFAULT;
	ibw_engine_set_window(e, e->cfg.max_inflight, e->cfg.max_per_dest);
	if (!e->cfg.timeout_ms)
		e->cfg.timeout_ms = IBW_ENGINE_DEFAULT_TIMEOUT_MS;
	if (!e->cfg.wait_after_min_us)
		e->cfg.wait_after_min_us = IBW_ENGINE_WAIT_AFTER_MIN_US;
	e->grp_cap[0] = e->cfg.max_smp_inflight
				? e->cfg.max_smp_inflight
				: e->cfg.recv_queue_size / IBW_KERNEL_SMP_FRAC;
	e->grp_cap[1] = e->cfg.max_sa_inflight
				? e->cfg.max_sa_inflight
				: e->cfg.recv_queue_size / IBW_KERNEL_SA_FRAC;
	if (!e->grp_cap[0])
		e->grp_cap[0] = 1;
	if (!e->grp_cap[1])
		e->grp_cap[1] = 1;
	e->grp_cap[2] = ~0u;
	if (e->cfg.retries < 0)
		e->cfg.retries = IBW_ENGINE_DEFAULT_RETRIES;
	e->slots = calloc(nslots, sizeof(*e->slots));
	e->slot_mask = nslots - 1;
	/* A fresh TID space per run, so answers meant for an earlier run
	 * of the daemon are not taken for ours. */
	e->next_tid = (uint32_t)ibw_now_us() * 2654435761u;
	e->deadline_timer = ibw_timer_new(loop, on_deadline, e);
	e->done_timer = ibw_timer_new(loop, on_done_timer, e);
	e->reopen_timer = ibw_timer_new(loop, on_reopen_timer, e);
	e->age_timer = ibw_timer_new(loop, on_age_timer, e);
	if (!e->slots || !e->deadline_timer || !e->done_timer ||
	    !e->reopen_timer || !e->age_timer ||
	    ibw_loop_watch(loop, ibw_transport_fd(t), IBW_EV_READ, on_readable,
			   e) < 0) {
		ibw_timer_free(e->deadline_timer);
		ibw_timer_free(e->done_timer);
		ibw_timer_free(e->reopen_timer);
		ibw_timer_free(e->age_timer);
		free(e->slots);
		free(e);
		return NULL;
	}
	return e;
}

void ibw_engine_set_window(struct ibw_engine *e, unsigned max_inflight,
			   unsigned max_per_dest)
{
	struct dest_q *q;
	int b;

	/* The defaults (engine.h) were measured under the latency model:
	 * 128 in flight keeps a dead port's tries from holding a large share
	 * of the window, and 4 per destination keeps a node's management
	 * processor busy without queueing long behind it. */
	e->cfg.max_inflight = max_inflight ? max_inflight
					   : IBW_ENGINE_DEFAULT_MAX_INFLIGHT;
	if (e->cfg.max_inflight > IBW_ENGINE_MAX_INFLIGHT)
		e->cfg.max_inflight = IBW_ENGINE_MAX_INFLIGHT;
	/* Answers to a full window arrive together: half of the receive
	 * ring leaves room for everything else that arrives meanwhile. */
	if (e->cfg.recv_queue_size &&
	    e->cfg.max_inflight > e->cfg.recv_queue_size / 2)
		e->cfg.max_inflight = e->cfg.recv_queue_size / 2
					      ? e->cfg.recv_queue_size / 2
					      : 1;
	e->cfg.max_per_dest = max_per_dest ? max_per_dest
					   : IBW_ENGINE_DEFAULT_MAX_PER_DEST;
	/* Waits cost memory alone (the kernel holds no send for them and
	 * caps only SMPs and SA queries, which the class limits follow):
	 * the window and the waits together stay within the TID slots'
	 * bound. */
	e->max_outstanding = IBW_ENGINE_MAX_INFLIGHT;
	if (!e->slots)
		return;
	/* Destinations held back by the old per-destination limit may run
	 * now. */
	for (b = 0; b < DEST_BUCKETS; b++)
		for (q = e->buckets[b]; q; q = q->hnext)
			run_push(e, q);
	pump(e);
}

int ibw_engine_send_raw(struct ibw_engine *e, const struct ibw_mad_addr *to,
			const uint8_t *mad, size_t len)
{
	int rc;

	if (e->lost)
		return e->lost;
	/* An answer: timeout 0, nothing waits for it. */
	rc = ibw_transport_send(e->t, to, mad, len, 0);
	if (rc < 0) {
		e->st.send_errors++;
		if (ibw_transport_fatal(rc))
			transport_lost(e, rc);
	} else {
		e->st.sent++;
	}
	return rc;
}

void ibw_engine_free(struct ibw_engine *e)
{
	struct req *r;
	struct dest_q *q;
	int b;

	if (!e)
		return;
	if (!e->lost)
		ibw_loop_unwatch(e->loop, ibw_transport_fd(e->t));
	e->closing = 1;
	e->pumping = 1;
	while ((r = e->fl_head)) {
		leave_flight(e, r, SLOT_CLOSED);
		finish(e, r, IBW_MAD_CANCELLED, ECANCELED);
	}
	for (b = 0; b < DEST_BUCKETS; b++) {
		while ((q = e->buckets[b])) {
			while ((r = q->head)) {
				q->head = r->next;
				e->st.queued--;
				finish(e, r, IBW_MAD_CANCELLED, ECANCELED);
			}
			e->buckets[b] = q->hnext;
			free(q);
		}
	}
	e->run_head = e->run_tail = NULL;
	/* Callbacks run last; what they submit now is cancelled too. */
	while ((r = e->done_head)) {
		e->done_head = r->next;
		if (!e->done_head)
			e->done_tail = NULL;
		complete_now(e, r, r->result, r->status, NULL, 0);
	}
	ibw_timer_free(e->deadline_timer);
	ibw_timer_free(e->done_timer);
	ibw_timer_free(e->reopen_timer);
	ibw_timer_free(e->age_timer);
	free(e->slots);
	free(e);
}
