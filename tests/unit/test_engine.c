// SPDX-License-Identifier: BSD-2-Clause
/*
 * MAD engine on the in-memory transport: TID matching, deadlines,
 * retries, windows, late/duplicate/unmatched answers, wrong class, bad
 * status and transport failures.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "codec.h"
#include "engine.h"
#include "localport.h"
#include "sa.h"
#include "transport_mem.h"

struct fx {
	struct ibw_loop *loop;
	struct ibw_transport *t;
	struct ibw_engine *e;
};

struct outcome {
	int calls;
	struct ibw_mad_done d;
	uint8_t mad[IBW_MAD_SIZE];
	int inside_submit; /* set while the test is inside submit() */
};

static int in_submit;

static void on_done(const struct ibw_mad_done *d, void *arg)
{
	struct outcome *o = arg;

	o->calls++;
	o->d = *d;
	o->inside_submit = in_submit;
	if (d->mad)
		memcpy(o->mad, d->mad, IBW_MAD_SIZE);
	o->d.mad = d->mad ? o->mad : NULL;
}

static int fx_setup_cfg(void **state, unsigned maxif, unsigned perdest,
			unsigned timeout_ms, int retries)
{
	struct fx *f = calloc(1, sizeof(*f));
	/* Tries stay in the window until half their timeout: the tests of
	 * the window do not depend on how fast this machine answers. */
	struct ibw_engine_config cfg = { .max_inflight = maxif,
					 .max_per_dest = perdest,
					 .timeout_ms = timeout_ms,
					 .retries = retries,
					 .wait_after_min_us = 10000000 };

	f->loop = ibw_loop_new();
	f->t = ibw_mem_transport_new();
	f->e = ibw_engine_new(f->loop, f->t, &cfg);
	if (!f->loop || !f->t || !f->e)
		return -1;
	*state = f;
	return 0;
}

static int fx_setup(void **state)
{
	return fx_setup_cfg(state, 64, 8, 20, 0);
}

static int fx_setup_window(void **state)
{
	return fx_setup_cfg(state, 4, 2, 1000, 0);
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	ibw_engine_free(f->e);
	ibw_transport_close(f->t);
	ibw_loop_free(f->loop);
	free(f);
	return 0;
}

/* Run the loop until @cond or 2 s pass. */
#define RUN_UNTIL(f, cond)                                  \
	do {                                                \
		uint64_t end_ = ibw_now_us() + 2000000u;    \
		while (!(cond) && ibw_now_us() < end_)      \
			ibw_loop_run_once((f)->loop, 5000); \
	} while (0)

static void fired(struct ibw_timer *t, void *arg)
{
	*(int *)arg = 1;
}

/* Run the loop until a timer @ms away has fired, and so every timer due
 * before it (the loop runs them in deadline order); returns how often
 * the loop woke meanwhile. Unlike running it for @ms of the clock, this
 * cannot end before the loop ran once, however late this thread gets
 * the CPU. */
static uint64_t run_past(struct fx *f, unsigned ms)
{
	struct ibw_timer *t;
	uint64_t w0 = ibw_loop_wakeups(f->loop);
	int done = 0;

	t = ibw_timer_new(f->loop, fired, &done);
	assert_non_null(t);
	ibw_timer_arm(t, ms * 1000u);
	while (!done)
		ibw_loop_run_once(f->loop, -1);
	ibw_timer_free(t);
	return ibw_loop_wakeups(f->loop) - w0;
}

static void submit_get(struct fx *f, uint16_t lid, uint16_t attr,
		       struct outcome *o, int retries)
{
	struct ibw_mad_req r;

	memset(&r, 0, sizeof(r));
	ibw_dest_lid(&r.dest, lid);
	r.mgmt_class = IBW_CLASS_SMI;
	r.method = IBW_METHOD_GET;
	r.attr_id = attr;
	r.retries = retries;
	r.cb = on_done;
	r.arg = o;
	in_submit = 1;
	assert_int_equal(ibw_engine_submit(f->e, &r), 0);
	in_submit = 0;
}

static uint32_t tid_of(const uint8_t *mad)
{
	return (uint32_t)ibw_mad_get64(mad, IB_MAD_TRID_F);
}

/* Answer @req with @status, and mark the answer with @tag in the data. */
static void answer(struct fx *f, uint8_t *req, int status, uint8_t tag)
{
	ibw_mem_make_response(req, status);
	req[IB_SMP_DATA_OFFS] = tag;
	assert_int_equal(ibw_mem_inject(f->t, req, IBW_MAD_SIZE, 0), 0);
}

static struct ibw_engine_stats stats(struct fx *f)
{
	struct ibw_engine_stats st;

	ibw_engine_get_stats(f->e, &st);
	return st;
}

static void test_tid_matching_out_of_order(void **state)
{
	struct fx *f = *state;
	struct outcome o[3];
	uint8_t req[3][IBW_MAD_SIZE];
	struct ibw_mad_addr to;
	int i;

	memset(o, 0, sizeof(o));
	for (i = 0; i < 3; i++)
		submit_get(f, (uint16_t)(10 + i), IBW_ATTR_NODE_INFO, &o[i], 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(ibw_mem_next_sent(f->t, req[i], &to), 1);
		assert_int_equal(to.lid, 10 + i);
	}
	assert_int_not_equal(tid_of(req[0]), tid_of(req[1]));
	assert_int_not_equal(tid_of(req[1]), tid_of(req[2]));
	/* Answer in reverse order: each callback gets its own answer. */
	answer(f, req[2], 0, 0xc2);
	answer(f, req[0], 0, 0xc0);
	answer(f, req[1], 0, 0xc1);
	RUN_UNTIL(f, o[0].calls && o[1].calls && o[2].calls);
	for (i = 0; i < 3; i++) {
		assert_int_equal(o[i].calls, 1);
		assert_int_equal(o[i].d.result, IBW_MAD_OK);
		assert_int_equal(o[i].mad[IB_SMP_DATA_OFFS], 0xc0 + i);
		assert_int_equal(o[i].d.tries, 1);
	}
	assert_int_equal(stats(f).ok, 3);
	assert_int_equal(stats(f).inflight, 0);
}

static void test_only_low_32_tid_bits_matter(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t req[IBW_MAD_SIZE];
	uint64_t tid;

	submit_get(f, 5, IBW_ATTR_NODE_INFO, &o, 0);
	assert_int_equal(ibw_mem_next_sent(f->t, req, NULL), 1);
	/* The kernel and umad2sim put the agent id in the high bits. */
	tid = ibw_mad_get64(req, IB_MAD_TRID_F) | (0x1234ull << 32);
	mad_set_field64(req, 0, IB_MAD_TRID_F, tid);
	answer(f, req, 0, 1);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(o.d.result, IBW_MAD_OK);
}

static void test_deadline_expiry(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint64_t t0 = ibw_now_us();

	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 0);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(o.calls, 1);
	assert_int_equal(o.d.result, IBW_MAD_TIMEOUT);
	assert_int_equal(o.d.tries, 1);
	/* 20 ms deadline: not before it. */
	assert_true(ibw_now_us() - t0 >= 20000);
	assert_int_equal(stats(f).try_timeouts, 1);
	assert_int_equal(stats(f).timeouts, 1);
	assert_int_equal(ibw_mem_sent_count(f->t), 1);
}

static void submit_pma(struct fx *f, uint16_t lid, uint16_t attr,
		       unsigned flags, struct outcome *o)
{
	struct ibw_mad_req r;

	memset(&r, 0, sizeof(r));
	ibw_dest_lid(&r.dest, lid);
	r.mgmt_class = IBW_CLASS_PERF;
	r.method = IBW_METHOD_GET;
	r.attr_id = attr;
	r.retries = 0;
	r.flags = flags;
	r.cb = on_done;
	r.arg = o;
	assert_int_equal(ibw_engine_submit(f->e, &r), 0);
}

static const struct ibw_mad_kind *kind_of(const struct ibw_engine_stats *st,
					  uint16_t attr)
{
	unsigned i;

	for (i = 0; i < st->kinds.n; i++)
		if (st->kinds.k[i].mgmt_class == IBW_CLASS_PERF &&
		    st->kinds.k[i].attr == attr)
			return &st->kinds.k[i];
	return NULL;
}

/*
 * Silence learned once (IBW_MAD_F_OPTIONAL): an attribute no node has
 * answered, after IBW_MAD_SILENT_TRIES unanswered tries, goes out one at
 * a time and the rest end at once as timeouts, unsent and counted as
 * skipped; a request without the flag is never skipped; the first answer
 * to the one out ends the silence.
 */
static void test_silence_learned(void **state)
{
	struct fx *f = *state;
	struct outcome first[IBW_MAD_SILENT_TRIES], later[40], plain[4],
		again[8];
	struct ibw_engine_stats st;
	const struct ibw_mad_kind *k;
	uint8_t req[IBW_MAD_SIZE];
	unsigned i, n, sent0;

	memset(first, 0, sizeof(first));
	memset(later, 0, sizeof(later));
	memset(plain, 0, sizeof(plain));
	memset(again, 0, sizeof(again));
	for (i = 0; i < IBW_MAD_SILENT_TRIES; i++)
		submit_pma(f, (uint16_t)(10 + i), IBW_ATTR_PORT_EXT_SPEEDS,
			   IBW_MAD_F_OPTIONAL, &first[i]);
	RUN_UNTIL(f, first[IBW_MAD_SILENT_TRIES - 1].calls);
	st = stats(f);
	assert_int_equal(st.timeouts, IBW_MAD_SILENT_TRIES);
	assert_int_equal(st.skipped, 0);
	sent0 = ibw_mem_sent_count(f->t);
	assert_int_equal(sent0, IBW_MAD_SILENT_TRIES);

	/* Now silent: of 40 more, one goes out, 39 end at once. */
	for (i = 0; i < 40; i++)
		submit_pma(f, (uint16_t)(100 + i), IBW_ATTR_PORT_EXT_SPEEDS,
			   IBW_MAD_F_OPTIONAL, &later[i]);
	/* ... and the same attribute without the flag is sent as ever */
	for (i = 0; i < 4; i++)
		submit_pma(f, (uint16_t)(200 + i), IBW_ATTR_PORT_EXT_SPEEDS, 0,
			   &plain[i]);
	run_past(f, 5);
	for (i = 0, n = 0; i < 40; i++)
		n += later[i].calls && later[i].d.result == IBW_MAD_TIMEOUT &&
		     later[i].d.tries == 0;
	assert_int_equal(n, 39);
	assert_int_equal(ibw_mem_sent_count(f->t), sent0 + 1 + 4);
	st = stats(f);
	assert_int_equal(st.skipped, 39);
	k = kind_of(&st, IBW_ATTR_PORT_EXT_SPEEDS);
	assert_non_null(k);
	assert_int_equal(k->skipped, 39);
	assert_int_equal(k->answered, 0);

	/* The one out is answered: the kind is heard, nothing skipped. */
	for (i = 0; i < sent0; i++)
		ibw_mem_next_sent(f->t, req, NULL);
	ibw_mem_next_sent(f->t, req, NULL);
	answer(f, req, 0, 1);
	RUN_UNTIL(f, stats(f).ok == 1);
	for (i = 0, n = 0; i < 40; i++)
		n += later[i].calls && later[i].d.result == IBW_MAD_OK;
	assert_int_equal(n, 1);
	st = stats(f);
	assert_int_equal(kind_of(&st, IBW_ATTR_PORT_EXT_SPEEDS)->answered, 1);
	sent0 = ibw_mem_sent_count(f->t);
	for (i = 0; i < 8; i++)
		submit_pma(f, (uint16_t)(300 + i), IBW_ATTR_PORT_EXT_SPEEDS,
			   IBW_MAD_F_OPTIONAL, &again[i]);
	run_past(f, 5);
	assert_int_equal(ibw_mem_sent_count(f->t), sent0 + 8);
	assert_int_equal(stats(f).skipped, 39);
}

static int all_called(const struct outcome *o, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (!o[i].calls)
			return 0;
	return 1;
}

/*
 * A destination's PMA falls silent: once a PerfMgt request to it has run
 * out of tries with none answered since its queue was made, the requests
 * queued for it end at once as timeouts (skipped) while one is out; a
 * queue made later, or one whose PMA answered, sends as ever, and so do
 * other classes.
 */
static void test_dest_silence(void **state)
{
	struct fx *f = *state;
	struct outcome o[40], heard[20], smp = { 0 };
	uint8_t req[IBW_MAD_SIZE];
	struct ibw_mad_addr to;
	unsigned i, n, sent0;

	memset(o, 0, sizeof(o));
	for (i = 0; i < 40; i++)
		submit_pma(f, 9, IBW_ATTR_PORT_COUNTERS, 0, &o[i]);
	RUN_UNTIL(f, all_called(o, 40));
	for (i = 0, n = 0; i < 40; i++)
		n += o[i].calls && o[i].d.result == IBW_MAD_TIMEOUT;
	assert_int_equal(n, 40);
	/* eight at once (the per-destination limit), then one probe */
	assert_int_equal(ibw_mem_sent_count(f->t), 9);
	assert_int_equal(stats(f).skipped, 31);
	assert_int_equal(stats(f).timeouts, 9);

	/* a later queue (the next sweep) sends as ever; an SMP too */
	sent0 = ibw_mem_sent_count(f->t);
	memset(o, 0, sizeof(o));
	for (i = 0; i < 8; i++)
		submit_pma(f, 9, IBW_ATTR_PORT_COUNTERS, 0, &o[i]);
	submit_get(f, 9, IBW_ATTR_NODE_INFO, &smp, 0);
	RUN_UNTIL(f, all_called(o, 8) && smp.calls);
	assert_int_equal(ibw_mem_sent_count(f->t), sent0 + 9);
	assert_int_equal(stats(f).skipped, 31);

	/* a PMA that answered one is not silent when others go unanswered */
	while (ibw_mem_next_sent(f->t, req, NULL))
		;
	memset(heard, 0, sizeof(heard));
	for (i = 0; i < 20; i++)
		submit_pma(f, 10, IBW_ATTR_PORT_COUNTERS, 0, &heard[i]);
	assert_true(ibw_mem_next_sent(f->t, req, &to));
	answer(f, req, 0, 1);
	RUN_UNTIL(f, all_called(heard, 20));
	for (i = 0, n = 0; i < 20; i++)
		n += heard[i].d.result == IBW_MAD_OK;
	assert_int_equal(n, 1);
	assert_int_equal(stats(f).skipped, 31);
}

static void test_retries_then_timeout(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t a[IBW_MAD_SIZE], b[IBW_MAD_SIZE], c[IBW_MAD_SIZE];

	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 2);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(o.d.result, IBW_MAD_TIMEOUT);
	assert_int_equal(o.d.tries, 3);
	assert_int_equal(ibw_mem_sent_count(f->t), 3);
	assert_int_equal(stats(f).retries, 2);
	assert_int_equal(stats(f).try_timeouts, 3);
	assert_int_equal(stats(f).timeouts, 1);
	/* Every try has a TID of its own. */
	ibw_mem_next_sent(f->t, a, NULL);
	ibw_mem_next_sent(f->t, b, NULL);
	ibw_mem_next_sent(f->t, c, NULL);
	assert_int_not_equal(tid_of(a), tid_of(b));
	assert_int_not_equal(tid_of(b), tid_of(c));
	assert_memory_equal(a + 24, b + 24, IBW_MAD_SIZE - 24);
}

static void test_retry_answered(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t a[IBW_MAD_SIZE], b[IBW_MAD_SIZE];

	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 2);
	assert_int_equal(ibw_mem_next_sent(f->t, a, NULL), 1);
	RUN_UNTIL(f, ibw_mem_sent_count(f->t) == 2);
	assert_int_equal(ibw_mem_next_sent(f->t, b, NULL), 1);
	answer(f, b, 0, 9);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(o.d.result, IBW_MAD_OK);
	assert_int_equal(o.d.tries, 2);
	/* The first try's answer now arrives: late, and ignored. */
	answer(f, a, 0, 8);
	RUN_UNTIL(f, stats(f).received == 2);
	assert_int_equal(o.calls, 1);
	assert_int_equal(stats(f).late, 1);
}

static void test_late_answer(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t a[IBW_MAD_SIZE];

	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 0);
	ibw_mem_next_sent(f->t, a, NULL);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(o.d.result, IBW_MAD_TIMEOUT);
	answer(f, a, 0, 1);
	RUN_UNTIL(f, stats(f).received == 1);
	assert_int_equal(o.calls, 1);
	assert_int_equal(stats(f).late, 1);
	assert_int_equal(stats(f).ok, 0);
}

static void test_duplicate_answer(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t a[IBW_MAD_SIZE], copy[IBW_MAD_SIZE];

	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 0);
	ibw_mem_next_sent(f->t, a, NULL);
	memcpy(copy, a, sizeof(copy));
	answer(f, a, 0, 1);
	answer(f, copy, 0, 1);
	RUN_UNTIL(f, stats(f).received == 2);
	assert_int_equal(o.calls, 1);
	assert_int_equal(stats(f).duplicates, 1);
}

static void test_unmatched_answer(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t a[IBW_MAD_SIZE];

	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 0);
	ibw_mem_next_sent(f->t, a, NULL);
	mad_set_field64(a, 0, IB_MAD_TRID_F, tid_of(a) + 7777);
	answer(f, a, 0, 1);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(stats(f).unmatched, 1);
	assert_int_equal(o.d.result, IBW_MAD_TIMEOUT);
}

static void test_short_mad_is_dropped(void **state)
{
	struct fx *f = *state;
	uint8_t junk[10] = { 1, 0x81, 1, 0x81 };

	assert_int_equal(ibw_mem_inject(f->t, junk, sizeof(junk), 0), 0);
	RUN_UNTIL(f, stats(f).received == 1);
	assert_int_equal(stats(f).unmatched, 1);
}

static void test_wrong_class_is_not_an_answer(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t a[IBW_MAD_SIZE], good[IBW_MAD_SIZE];

	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 0);
	ibw_mem_next_sent(f->t, a, NULL);
	memcpy(good, a, sizeof(good));
	a[1] = IBW_CLASS_PERF; /* same TID, another class */
	answer(f, a, 0, 1);
	RUN_UNTIL(f, stats(f).received == 1);
	assert_int_equal(stats(f).mismatched, 1);
	assert_int_equal(o.calls, 0);
	/* The real answer still completes the request. */
	answer(f, good, 0, 2);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(o.d.result, IBW_MAD_OK);
	assert_int_equal(o.mad[IB_SMP_DATA_OFFS], 2);
}

static void test_wrong_attribute_is_not_an_answer(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t a[IBW_MAD_SIZE];

	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 0);
	ibw_mem_next_sent(f->t, a, NULL);
	mad_set_field(a, 0, IB_MAD_ATTRID_F, IBW_ATTR_PORT_INFO);
	answer(f, a, 0, 1);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(stats(f).mismatched, 1);
	assert_int_equal(o.d.result, IBW_MAD_TIMEOUT);
}

static void test_bad_status(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t a[IBW_MAD_SIZE];

	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 2);
	ibw_mem_next_sent(f->t, a, NULL);
	answer(f, a, 0x1c, 1); /* invalid attribute or modifier */
	RUN_UNTIL(f, o.calls);
	assert_int_equal(o.d.result, IBW_MAD_STATUS);
	assert_int_equal(o.d.status, 0x1c);
	assert_non_null(o.d.mad);
	/* A status is an answer: no retry. */
	assert_int_equal(ibw_mem_sent_count(f->t), 1);
	assert_int_equal(stats(f).status_errors, 1);
}

static void test_busy_status_waits(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t a[IBW_MAD_SIZE];

	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 0);
	ibw_mem_next_sent(f->t, a, NULL);
	answer(f, a, 0x1, 1);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(o.d.result, IBW_MAD_TIMEOUT);
}

static void test_dr_status_field(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	struct ibw_mad_req r;
	uint8_t a[IBW_MAD_SIZE];

	memset(&r, 0, sizeof(r));
	assert_int_equal(ibw_dest_dr_parse(&r.dest, "0,1,3"), 0);
	r.mgmt_class = IBW_CLASS_SMI_DR;
	r.method = IBW_METHOD_GET;
	r.attr_id = IBW_ATTR_NODE_INFO;
	r.retries = 0;
	r.cb = on_done;
	r.arg = &o;
	assert_int_equal(ibw_engine_submit(f->e, &r), 0);
	ibw_mem_next_sent(f->t, a, NULL);
	assert_int_equal(ibw_mad_get(a, IB_DRSMP_HOPCNT_F), 2);
	answer(f, a, 0, 1);
	RUN_UNTIL(f, o.calls);
	/* The direction bit set in the answer is not a status. */
	assert_int_equal(o.d.result, IBW_MAD_OK);
}

static void test_send_failure(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };

	ibw_mem_fail_sends(f->t, 1, EIO);
	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 0);
	/* Never called back from inside submit(). */
	assert_int_equal(o.calls, 0);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(o.calls, 1);
	assert_int_equal(o.inside_submit, 0);
	assert_int_equal(o.d.result, IBW_MAD_TRANSPORT);
	assert_int_equal(o.d.status, EIO);
	assert_int_equal(stats(f).send_errors, 1);
	assert_int_equal(stats(f).inflight, 0);
}

/* The kernel reports a request nobody answered as its own 24-byte MAD
 * header with status ETIMEDOUT, after the timeout it was sent with: that
 * is the try's timeout, counted once, not a transport error. */
static void test_kernel_timeout_report(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t a[IBW_MAD_SIZE];

	ibw_mem_set_reports_timeouts(f->t, 1);
	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 0);
	ibw_mem_next_sent(f->t, a, NULL);
	/* sent with the engine's timeout (fx_setup: 20 ms) */
	assert_int_equal(ibw_mem_sent_timeout(f->t), 20);
	assert_int_equal(ibw_mem_inject(f->t, a, 24, ETIMEDOUT), 0);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(o.calls, 1);
	assert_int_equal(o.d.result, IBW_MAD_TIMEOUT);
	assert_int_equal(o.d.status, ETIMEDOUT);
	/* Past our own stand-in deadline (20 ms) too: still one timeout. */
	run_past(f, 60);
	assert_int_equal(stats(f).try_timeouts, 1);
	assert_int_equal(stats(f).kernel_timeouts, 1);
	assert_int_equal(stats(f).timeouts, 1);
	assert_int_equal(stats(f).transport_errors, 0);
	assert_int_equal(stats(f).returned, 0);
	assert_int_equal(stats(f).late, 0);
}

/* Our deadline settles a try whose report never came; the report that
 * comes after it is no second timeout, and no late answer. */
static void test_kernel_report_after_our_deadline(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t a[IBW_MAD_SIZE];

	ibw_mem_set_reports_timeouts(f->t, 1);
	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 0);
	ibw_mem_next_sent(f->t, a, NULL);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(o.d.result, IBW_MAD_TIMEOUT);
	assert_int_equal(ibw_mem_inject(f->t, a, 24, ETIMEDOUT), 0);
	RUN_UNTIL(f, stats(f).received == 1);
	assert_int_equal(stats(f).try_timeouts, 1);
	assert_int_equal(stats(f).kernel_timeouts, 0);
	assert_int_equal(stats(f).late, 0);
	assert_int_equal(stats(f).received, 1);
}

/* Every try carries its timeout to the kernel; a retry is a fresh TID
 * with the same timeout, and an answer we send carries none. */
static void test_every_try_has_a_timeout(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t a[IBW_MAD_SIZE], b[IBW_MAD_SIZE];
	struct ibw_mad_addr to = { .lid = 3, .qpn = 1 };

	ibw_mem_set_reports_timeouts(f->t, 1);
	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 1);
	ibw_mem_next_sent(f->t, a, NULL);
	assert_int_equal(ibw_mem_sent_timeout(f->t), 20);
	ibw_mem_inject(f->t, a, 24, ETIMEDOUT);
	RUN_UNTIL(f, ibw_mem_sent_count(f->t) == 2);
	ibw_mem_next_sent(f->t, b, NULL);
	assert_int_equal(ibw_mem_sent_timeout(f->t), 20);
	assert_true(tid_of(a) != tid_of(b));
	answer(f, b, 0, 1);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(o.d.result, IBW_MAD_OK);
	assert_int_equal(o.d.tries, 2);
	assert_int_equal(stats(f).try_timeouts, 1);
	assert_int_equal(ibw_engine_send_raw(f->e, &to, a, IBW_MAD_SIZE), 0);
	ibw_mem_next_sent(f->t, a, NULL);
	assert_int_equal(ibw_mem_sent_timeout(f->t), 0);
}

/* The kernel holds SA requests beyond its per-agent limit unsent while
 * our deadlines run: the engine keeps within that limit itself, and
 * other classes go on past the held ones. */
static void test_sa_class_limit(void **state)
{
	struct fx *f = *state;
	struct ibw_engine_config cfg = { .max_inflight = 64,
					 .max_per_dest = 8,
					 .timeout_ms = 1000,
					 .max_sa_inflight = 2 };
	struct ibw_engine *e = ibw_engine_new(f->loop, f->t, &cfg);
	struct outcome o[6];
	struct ibw_mad_req r;
	uint8_t m[IBW_MAD_SIZE];
	int i;

	assert_non_null(e);
	memset(o, 0, sizeof(o));
	for (i = 0; i < 5; i++) {
		memset(&r, 0, sizeof(r));
		ibw_dest_lid(&r.dest, (uint16_t)(10 + i));
		r.mgmt_class = IBW_CLASS_SA;
		r.method = IBW_METHOD_GET;
		r.attr_id = 0x11;
		r.cb = on_done;
		r.arg = &o[i];
		r.retries = 0;
		assert_int_equal(ibw_engine_submit(e, &r), 0);
	}
	memset(&r, 0, sizeof(r));
	ibw_dest_lid(&r.dest, 20);
	r.mgmt_class = IBW_CLASS_PERF;
	r.method = IBW_METHOD_GET;
	r.attr_id = IBW_ATTR_CLASS_PORT_INFO;
	r.cb = on_done;
	r.arg = &o[5];
	r.retries = 0;
	assert_int_equal(ibw_engine_submit(e, &r), 0);
	/* two SA requests and the PMA one */
	assert_int_equal(ibw_mem_sent_count(f->t), 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(ibw_mem_next_sent(f->t, m, NULL), 1);
		if (m[1] == IBW_CLASS_SA && i == 0)
			answer(f, m, 0, 1);
	}
	RUN_UNTIL(f, ibw_mem_sent_count(f->t) == 4);
	assert_int_equal(ibw_mem_sent_count(f->t), 4);
	ibw_engine_free(e);
}

static int lost_calls, lost_err;

static void on_lost(struct ibw_engine *e, int err, void *arg)
{
	lost_calls++;
	lost_err = err;
}

/* The device goes away (HCA reset): the fd stays readable for good, as
 * EPOLLERR does. The engine must stop reading at once, settle what was
 * in flight and queued, say so once, and never touch the device again. */
static void test_device_lost_no_spin(void **state)
{
	struct fx *f = *state;
	struct outcome o[3];
	unsigned calls;

	memset(o, 0, sizeof(o));
	lost_calls = 0;
	ibw_engine_set_lost_handler(f->e, on_lost, NULL);
	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o[0], 2);
	submit_get(f, 8, IBW_ATTR_NODE_INFO, &o[1], 2);
	ibw_mem_kill(f->t);
	RUN_UNTIL(f, o[0].calls && o[1].calls);
	assert_int_equal(o[0].d.result, IBW_MAD_TRANSPORT);
	assert_int_equal(o[0].d.status, EIO);
	assert_int_equal(o[1].d.result, IBW_MAD_TRANSPORT);
	assert_int_equal(lost_calls, 1);
	assert_int_equal(lost_err, -EIO);
	assert_int_equal(ibw_engine_lost(f->e), -EIO);
	assert_int_equal(stats(f).device_lost, EIO);
	calls = ibw_mem_recv_calls(f->t);
	/* The fd is still readable: a loop that watched it would wake for
	 * it again and again. Waiting for a timer 20 ms away, it wakes
	 * once, for the timer, and reads nothing. */
	assert_int_equal(run_past(f, 20), 1);
	assert_int_equal(ibw_mem_recv_calls(f->t), calls);
	/* What comes later fails without a send. */
	submit_get(f, 9, IBW_ATTR_NODE_INFO, &o[2], 2);
	RUN_UNTIL(f, o[2].calls);
	assert_int_equal(o[2].d.result, IBW_MAD_TRANSPORT);
	assert_int_equal(ibw_mem_sent_count(f->t), 2);
	assert_int_equal(lost_calls, 1);
	assert_int_equal(stats(f).inflight, 0);
	assert_int_equal(stats(f).queued, 0);
}

/* The opener of test_device_reopened: fails @fails times, then opens a
 * fresh transport; records the backoff it was called at. */
struct reopener {
	struct fx *f;
	int fails;
	unsigned calls;
	uint64_t delays[8];
	int backs;
	int requests; /* requests from elsewhere seen */
};

static int reopen_cb(struct ibw_transport **out, void *arg)
{
	struct reopener *ro = arg;

	/* the engine has closed the dead one before asking */
	assert_null(ibw_engine_transport(ro->f->e));
	ro->f->t = NULL;
	if (ro->calls < 8)
		ro->delays[ro->calls] = ibw_engine_reopen_delay(ro->f->e);
	ro->calls++;
	if (ro->fails-- > 0)
		return -ENODEV;
	*out = ro->f->t = ibw_mem_transport_new();
	return 0;
}

static void back_cb(struct ibw_engine *e, void *arg)
{
	((struct reopener *)arg)->backs++;
}

static int request_cb(const struct ibw_rx *rx, void *arg)
{
	((struct reopener *)arg)->requests++;
	return 1;
}

/* The device goes away with requests in flight and comes back after
 * three failed opens: the tries back off 1, 2, 4, 4 ms (doubling up to
 * the limit), the requests of the lost device fail, and the new device
 * carries requests and delivers requests from others to the handler
 * registered before the loss. */
static void test_device_reopened(void **state)
{
	struct fx *f = *state;
	struct reopener ro;
	struct outcome o[3];
	uint8_t a[IBW_MAD_SIZE];

	memset(&ro, 0, sizeof(ro));
	memset(o, 0, sizeof(o));
	ro.f = f;
	ro.fails = 3;
	ibw_engine_set_reopen(f->e, reopen_cb, back_cb, &ro, 1000, 4000);
	ibw_engine_set_request_handler(f->e, request_cb, &ro);
	assert_true(ibw_engine_reopen_delay(f->e) == 0);
	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o[0], 2);
	RUN_UNTIL(f, ibw_mem_sent_count(f->t) == 1);
	ibw_mem_kill(f->t);
	RUN_UNTIL(f, o[0].calls);
	assert_int_equal(o[0].d.result, IBW_MAD_TRANSPORT);
	/* Still away: what is asked now fails without waiting. */
	submit_get(f, 8, IBW_ATTR_NODE_INFO, &o[1], 2);
	RUN_UNTIL(f, o[1].calls);
	assert_int_equal(o[1].d.result, IBW_MAD_TRANSPORT);
	RUN_UNTIL(f, ro.backs);
	assert_int_equal(ro.backs, 1);
	assert_int_equal(ro.calls, 4);
	assert_true(ro.delays[0] == 1000 && ro.delays[1] == 2000 &&
		    ro.delays[2] == 4000 && ro.delays[3] == 4000);
	assert_int_equal(stats(f).reopens, 1);
	assert_int_equal(stats(f).reopen_tries_failed, 3);
	assert_int_equal(ibw_engine_lost(f->e), 0);
	assert_int_equal(stats(f).device_lost, 0);
	assert_ptr_equal(ibw_engine_transport(f->e), f->t);
	assert_true(ibw_engine_reopen_delay(f->e) == 0);

	submit_get(f, 9, IBW_ATTR_NODE_INFO, &o[2], 2);
	RUN_UNTIL(f, ibw_mem_sent_count(f->t) == 1);
	assert_int_equal(ibw_mem_next_sent(f->t, a, NULL), 1);
	answer(f, a, 0, 1);
	RUN_UNTIL(f, o[2].calls);
	assert_int_equal(o[2].d.result, IBW_MAD_OK);
	/* a request from elsewhere (a Get, not an answer) */
	memset(a, 0, sizeof(a));
	a[0] = 1;
	a[1] = IBW_CLASS_VENDOR_ECHO;
	a[2] = 1;
	a[3] = IBW_METHOD_GET;
	ibw_mem_inject(f->t, a, IBW_MAD_SIZE, 0);
	RUN_UNTIL(f, ro.requests);
	assert_int_equal(ro.requests, 1);
}

static void test_returned_send_is_retried(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t a[IBW_MAD_SIZE];

	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 1);
	ibw_mem_next_sent(f->t, a, NULL);
	ibw_mem_inject(f->t, a, IBW_MAD_SIZE, ETIMEDOUT);
	RUN_UNTIL(f, ibw_mem_sent_count(f->t) == 2);
	ibw_mem_next_sent(f->t, a, NULL);
	answer(f, a, 0, 1);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(o.d.result, IBW_MAD_OK);
	assert_int_equal(o.d.tries, 2);
}

static void test_recv_error_keeps_engine_alive(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	uint8_t a[IBW_MAD_SIZE];

	submit_get(f, 7, IBW_ATTR_NODE_INFO, &o, 0);
	ibw_mem_next_sent(f->t, a, NULL);
	/* A failure that is not the device going away. */
	ibw_mem_fail_recv(f->t, ENOMEM);
	RUN_UNTIL(f, stats(f).recv_errors == 1);
	assert_int_equal(stats(f).recv_errors, 1);
	answer(f, a, 0, 1);
	RUN_UNTIL(f, o.calls);
	assert_int_equal(o.d.result, IBW_MAD_OK);
}

static void test_window_limits(void **state)
{
	struct fx *f = *state;
	struct outcome oa[10], ob[10];
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;
	int i, na = 0, nb = 0, done;

	memset(oa, 0, sizeof(oa));
	memset(ob, 0, sizeof(ob));
	for (i = 0; i < 10; i++) {
		submit_get(f, 100, IBW_ATTR_NODE_INFO, &oa[i], 0);
		submit_get(f, 200, IBW_ATTR_NODE_INFO, &ob[i], 0);
	}
	/* Global window 4, two per destination. */
	assert_int_equal(stats(f).inflight, 4);
	assert_int_equal(stats(f).queued, 16);
	while (ibw_mem_next_sent(f->t, m, &to)) {
		na += to.lid == 100;
		nb += to.lid == 200;
		answer(f, m, 0, 1);
		RUN_UNTIL(f, stats(f).received == (uint64_t)(na + nb));
		assert_true(stats(f).inflight <= 4);
	}
	assert_int_equal(na, 10);
	assert_int_equal(nb, 10);
	for (done = 0, i = 0; i < 10; i++)
		done += oa[i].calls + ob[i].calls;
	assert_int_equal(done, 20);
	assert_int_equal(stats(f).inflight_hwm, 4);
	assert_int_equal(stats(f).queued_hwm, 16);
}

/*
 * Tries to silent destinations leave the window once they have waited
 * a while, so they do not hold back requests to destinations that
 * answer; they still time out as before and are counted.
 */
static void test_waits_leave_window(void **state)
{
	struct fx *f = *state;
	struct ibw_engine_config cfg = { .max_inflight = 4,
					 .max_per_dest = 2,
					 .timeout_ms = 300,
					 .wait_after_min_us = 2000 };
	struct outcome silent[4], live[8];
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;
	struct ibw_engine_stats st;
	int i, answered = 0;

	ibw_engine_free(f->e);
	f->e = ibw_engine_new(f->loop, f->t, &cfg);
	assert_non_null(f->e);
	memset(silent, 0, sizeof(silent));
	memset(live, 0, sizeof(live));
	for (i = 0; i < 4; i++)
		submit_get(f, (uint16_t)(10 + i), IBW_ATTR_NODE_INFO,
			   &silent[i], 0);
	for (i = 0; i < 8; i++)
		submit_get(f, (uint16_t)(100 + i % 4), IBW_ATTR_NODE_INFO,
			   &live[i], 0);
	/* The window is full of tries nobody will answer. */
	assert_int_equal(ibw_mem_sent_count(f->t), 4);
	for (i = 0; i < 4; i++)
		assert_true(ibw_mem_next_sent(f->t, m, &to));
	/* Once they have waited (2 ms here), the others go out, and their
	 * answers come long before the silent ones time out. */
	RUN_UNTIL(f, ibw_mem_sent_count(f->t) > 4);
	while (answered < 8) {
		uint64_t end = ibw_now_us() + 1000000u;

		while (!ibw_mem_next_sent(f->t, m, &to) && ibw_now_us() < end)
			ibw_loop_run_once(f->loop, 1000);
		assert_true(to.lid >= 100);
		answer(f, m, 0, 1);
		answered++;
		RUN_UNTIL(f, stats(f).ok == (uint64_t)answered);
	}
	for (i = 0; i < 8; i++)
		assert_int_equal(live[i].calls, 1);
	st = stats(f);
	assert_int_equal(st.ok, 8);
	assert_int_equal(st.waiting, 4);
	assert_true(st.waits >= 4);
	assert_int_equal(st.timeouts, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(silent[i].calls, 0);
	/* The silent ones time out on their own clock, counted. */
	RUN_UNTIL(f, stats(f).timeouts == 4);
	st = stats(f);
	assert_int_equal(st.timeouts, 4);
	assert_int_equal(st.waiting, 0);
	assert_int_equal(st.inflight, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(silent[i].d.result, IBW_MAD_TIMEOUT);
}

/*
 * A fabric that is only slow answers in the order sent: no try is
 * overtaken, so none is a wait but the blind ones, at most four windows'
 * worth: what is in flight stays bounded (here 4 + 16 of 100), however
 * long the answers take, and everything completes once they come.
 */
static void test_slow_fabric_stays_bounded(void **state)
{
	struct fx *f = *state;
	struct ibw_engine_config cfg = { .max_inflight = 4,
					 .max_per_dest = 2,
					 .timeout_ms = 2000,
					 .wait_after_min_us = 1000 };
	static struct outcome o[100];
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;
	struct ibw_engine_stats st;
	uint64_t end;
	int i, n = 0;

	ibw_engine_free(f->e);
	f->e = ibw_engine_new(f->loop, f->t, &cfg);
	assert_non_null(f->e);
	memset(o, 0, sizeof(o));
	for (i = 0; i < 100; i++)
		submit_get(f, (uint16_t)(100 + i), IBW_ATTR_NODE_INFO, &o[i],
			   0);
	/* nothing answered for 100 ms: only blind waits leave the window */
	run_past(f, 100);
	st = stats(f);
	assert_int_equal(st.inflight, 20);
	assert_int_equal(st.blind_waits, 16);
	assert_int_equal(ibw_mem_sent_count(f->t), 20);
	/* then answers, in the order sent, each a moment later */
	end = ibw_now_us() + 10000000u;
	while (n < 100 && ibw_now_us() < end) {
		if (ibw_mem_next_sent(f->t, m, &to)) {
			answer(f, m, 0, 1);
			n++;
		}
		ibw_loop_run_once(f->loop, 1);
		st = stats(f);
		assert_true(st.inflight <= 20);
	}
	RUN_UNTIL(f, stats(f).ok == 100);
	st = stats(f);
	assert_int_equal(st.ok, 100);
	assert_int_equal(st.timeouts, 0);
	assert_true(st.inflight_hwm <= 20);
}

/*
 * The kernel's limits follow ib_core's recv_queue_size: a quarter of it
 * for SMPs in flight, a 32nd for SA requests, and the window is kept to
 * half of it. The value is read from the module parameter's file.
 */
static void test_recv_queue_limits(void **state)
{
	struct fx *f = *state;
	struct ibw_engine_config cfg = { .max_inflight = 128,
					 .max_per_dest = 8,
					 .timeout_ms = 1000,
					 .wait_after_min_us = 10000000,
					 .recv_queue_size = 64 };
	static struct outcome o[40];
	char path[] = "/tmp/ibw_recvq_XXXXXX";
	struct ibw_engine_stats st;
	unsigned q = 0;
	FILE *fp;
	int fd, i;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_non_null(fp);
	fputs("1024\n", fp);
	fclose(fp);
	assert_int_equal(ibw_kernel_recvq_read(path, &q), 0);
	assert_int_equal(q, 1024);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("many\n", fp);
	fclose(fp);
	assert_int_equal(ibw_kernel_recvq_read(path, &q), -EINVAL);
	unlink(path);
	assert_int_equal(ibw_kernel_recvq_read(path, &q), -ENOENT);
	assert_int_equal(q, 1024);

	/* the default, 512: 128 SMPs, 16 SA requests, a window of 128 */
	st = stats(f);
	assert_int_equal(st.recv_queue_size, 512);
	assert_int_equal(st.smp_limit, 128);
	assert_int_equal(st.sa_limit, 16);

	ibw_engine_free(f->e);
	f->e = ibw_engine_new(f->loop, f->t, &cfg);
	assert_non_null(f->e);
	st = stats(f);
	assert_int_equal(st.recv_queue_size, 64);
	assert_int_equal(st.smp_limit, 16);
	assert_int_equal(st.sa_limit, 2);
	assert_int_equal(st.window, 32);
	memset(o, 0, sizeof(o));
	for (i = 0; i < 40; i++)
		submit_get(f, (uint16_t)(100 + i), IBW_ATTR_NODE_INFO, &o[i],
			   0);
	assert_int_equal(ibw_mem_sent_count(f->t), 16);
	assert_int_equal(stats(f).inflight, 16);
}

static void on_local(struct ibw_localport_query *q, void *arg)
{
	(void)q;
	*(int *)arg = 1;
}

static void on_sa(const struct ibw_sa_result *r, void *arg)
{
	(void)r;
	(void)arg;
}

/*
 * SA requests go out on the SL the local port names for its SM
 * (PortInfo MasterSMSL), as libibmad's do: on a QoS fabric SL 0 may not
 * reach the SM. Other classes keep SL 0.
 */
static void test_sa_on_smsl(void **state)
{
	struct fx *f = *state;
	struct ibw_localport_query q;
	static struct outcome o;
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;
	struct ibw_mad_req r;
	int done = 0;

	assert_int_equal(ibw_localport_query(f->e, 1, &q, on_local, &done), 0);
	while (ibw_mem_next_sent(f->t, m, &to)) {
		ibw_mem_make_response(m, 0);
		if (ibw_mad_get(m, IB_MAD_ATTRID_F) == IBW_ATTR_PORT_INFO) {
			mad_set_field(m + IB_SMP_DATA_OFFS, 0, IB_PORT_SMLID_F,
				      7);
			mad_set_field(m + IB_SMP_DATA_OFFS, 0, IB_PORT_SMSL_F,
				      5);
		}
		assert_int_equal(ibw_mem_inject(f->t, m, IBW_MAD_SIZE, 0), 0);
	}
	RUN_UNTIL(f, done);
	assert_true(q.have_portinfo);
	assert_int_equal(q.pi.sm_lid, 7);
	assert_int_equal(q.pi.sm_sl, 5);

	assert_int_equal(ibw_sa_query(f->e, 7, IBW_METHOD_GET, 0x0011, 0, 0,
				      NULL, 0, on_sa, NULL),
			 0);
	assert_true(ibw_mem_next_sent(f->t, m, &to));
	assert_int_equal(m[1], IBW_CLASS_SA);
	assert_int_equal(to.lid, 7);
	assert_int_equal(to.sl, 5);

	memset(&r, 0, sizeof(r));
	ibw_dest_lid(&r.dest, 9);
	r.mgmt_class = IBW_CLASS_PERF;
	r.method = IBW_METHOD_GET;
	r.attr_id = IBW_ATTR_CLASS_PORT_INFO;
	r.cb = on_done;
	r.arg = &o;
	assert_int_equal(ibw_engine_submit(f->e, &r), 0);
	assert_true(ibw_mem_next_sent(f->t, m, &to));
	assert_int_equal(m[1], IBW_CLASS_PERF);
	assert_int_equal(to.sl, 0);

	/* set directly (the daemon does so from sysfs at start) */
	ibw_engine_set_sa_sl(f->e, 2);
	assert_int_equal(ibw_sa_query(f->e, 7, IBW_METHOD_GET, 0x0011, 0, 0,
				      NULL, 0, on_sa, NULL),
			 0);
	assert_true(ibw_mem_next_sent(f->t, m, &to));
	assert_int_equal(to.sl, 2);
}

struct chain {
	struct fx *f;
	struct outcome second;
	int first_done;
};

/* The first answer's callback sends a second request, which the other
 * side answers at once: the answer is read in the same batch. */
static void on_first(const struct ibw_mad_done *d, void *arg)
{
	struct chain *c = arg;
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;

	(void)d;
	c->first_done = 1;
	usleep(2000); /* the batch's clock is older than what is sent now */
	submit_get(c->f, 6, IBW_ATTR_NODE_INFO, &c->second, 0);
	assert_true(ibw_mem_next_sent(c->f->t, m, &to));
	ibw_mem_make_response(m, 0x000c);
	assert_int_equal(ibw_mem_inject(c->f->t, m, IBW_MAD_SIZE, 0), 0);
}

/*
 * A try sent from a callback and answered within the same batch of
 * received MADs gets its true round trip, not the batch's older clock
 * minus its later send time (which wrapped around to 584,942 years).
 */
static void test_rtt_answered_in_same_batch(void **state)
{
	struct fx *f = *state;
	struct chain c;
	struct ibw_mad_req r;
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;

	memset(&c, 0, sizeof(c));
	c.f = f;
	memset(&r, 0, sizeof(r));
	ibw_dest_lid(&r.dest, 5);
	r.mgmt_class = IBW_CLASS_SMI;
	r.method = IBW_METHOD_GET;
	r.attr_id = IBW_ATTR_NODE_INFO;
	r.cb = on_first;
	r.arg = &c;
	assert_int_equal(ibw_engine_submit(f->e, &r), 0);
	assert_true(ibw_mem_next_sent(f->t, m, &to));
	answer(f, m, 0, 1);
	RUN_UNTIL(f, c.second.calls == 1);
	assert_int_equal(c.first_done, 1);
	assert_int_equal(c.second.calls, 1);
	assert_int_equal(c.second.d.result, IBW_MAD_STATUS);
	assert_int_equal(c.second.d.status, 0x000c);
	assert_true(c.second.d.rtt_us < 1000000u);
}

static void test_per_dest_limit(void **state)
{
	struct fx *f = *state;
	/* Still in flight at teardown, which cancels them: keep them alive. */
	static struct outcome o[6];
	int i;

	memset(o, 0, sizeof(o));
	for (i = 0; i < 6; i++)
		submit_get(f, 100, IBW_ATTR_NODE_INFO, &o[i], 0);
	/* One busy destination cannot take the whole window. */
	assert_int_equal(stats(f).inflight, 2);
	assert_int_equal(ibw_mem_sent_count(f->t), 2);
	ibw_engine_set_window(f->e, 4, 4);
	assert_int_equal(stats(f).inflight, 4);
}

static void test_free_cancels(void **state)
{
	struct fx *f = *state;
	struct outcome o[3];
	int i;

	memset(o, 0, sizeof(o));
	for (i = 0; i < 3; i++)
		submit_get(f, 9, IBW_ATTR_NODE_INFO, &o[i], 0);
	ibw_engine_free(f->e);
	f->e = ibw_engine_new(f->loop, f->t, NULL);
	for (i = 0; i < 3; i++) {
		assert_int_equal(o[i].calls, 1);
		assert_int_equal(o[i].d.result, IBW_MAD_CANCELLED);
	}
}

static void test_malformed_requests(void **state)
{
	struct fx *f = *state;
	struct outcome o = { 0 };
	struct ibw_mad_req r;
	uint8_t big[300];

	memset(&r, 0, sizeof(r));
	r.mgmt_class = IBW_CLASS_SMI;
	r.method = IBW_METHOD_GET;
	r.cb = on_done;
	r.arg = &o;
	/* LID 0 */
	assert_int_equal(ibw_engine_submit(f->e, &r), -EINVAL);
	/* directed dest on a LID-routed class */
	ibw_dest_dr_parse(&r.dest, "0,1");
	assert_int_equal(ibw_engine_submit(f->e, &r), -EINVAL);
	/* payload too big */
	ibw_dest_lid(&r.dest, 3);
	r.data = big;
	r.data_len = sizeof(big);
	assert_int_equal(ibw_engine_submit(f->e, &r), -EINVAL);
	/* no callback */
	r.data_len = 0;
	r.cb = NULL;
	assert_int_equal(ibw_engine_submit(f->e, &r), -EINVAL);
	assert_int_equal(o.calls, 0);
}

/* A configured M_Key goes into every SMP, LID-routed and directed, and
 * nowhere else: an SA request keeps its SM_Key (the same bytes) zero. */
static void test_mkey_in_every_smp(void **state)
{
	static const uint8_t classes[] = { IBW_CLASS_SMI, IBW_CLASS_SMI_DR,
					   IBW_CLASS_SA, IBW_CLASS_PERF };
	const uint64_t key = 0x1122334455667788ull;
	struct ibw_loop *loop = ibw_loop_new();
	struct ibw_transport *t = ibw_mem_transport_new();
	struct ibw_engine *e = ibw_engine_new(loop, t, NULL);
	struct outcome o[4];
	struct ibw_mad_req r;
	uint8_t m[IBW_MAD_SIZE];
	unsigned i;

	ibw_engine_set_mkey(e, key);
	memset(o, 0, sizeof(o));
	for (i = 0; i < 4; i++) {
		memset(&r, 0, sizeof(r));
		if (classes[i] == IBW_CLASS_SMI_DR)
			assert_int_equal(ibw_dest_dr_parse(&r.dest, "0,1"), 0);
		else
			ibw_dest_lid(&r.dest, 7);
		r.mgmt_class = classes[i];
		r.method = IBW_METHOD_GET;
		r.attr_id = IBW_ATTR_NODE_INFO;
		r.cb = on_done;
		r.arg = &o[i];
		assert_int_equal(ibw_engine_submit(e, &r), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(ibw_mem_next_sent(t, m, NULL), 1);
		if (m[1] == IBW_CLASS_SMI || m[1] == IBW_CLASS_SMI_DR)
			assert_true(ibw_mad_get64(m, IB_MAD_MKEY_F) == key);
		else
			assert_true(ibw_mad_get64(m, IB_MAD_MKEY_F) == 0);
	}
	ibw_engine_free(e);
	ibw_transport_close(t);
	ibw_loop_free(loop);

	/* none configured: zero, as infiniband-diags without --m_key */
	loop = ibw_loop_new();
	t = ibw_mem_transport_new();
	e = ibw_engine_new(loop, t, NULL);
	memset(&r, 0, sizeof(r));
	assert_int_equal(ibw_dest_dr_parse(&r.dest, "0"), 0);
	r.mgmt_class = IBW_CLASS_SMI_DR;
	r.method = IBW_METHOD_GET;
	r.attr_id = IBW_ATTR_NODE_INFO;
	r.cb = on_done;
	r.arg = &o[0];
	assert_int_equal(ibw_engine_submit(e, &r), 0);
	assert_int_equal(ibw_mem_next_sent(t, m, NULL), 1);
	assert_true(ibw_mad_get64(m, IB_MAD_MKEY_F) == 0);
	ibw_engine_free(e);
	ibw_transport_close(t);
	ibw_loop_free(loop);
}

static void test_dr_parse(void **state)
{
	struct ibw_dest d;
	char buf[64];

	assert_int_equal(ibw_dest_dr_parse(&d, "0"), 0);
	assert_int_equal(d.hops, 0);
	assert_int_equal(ibw_dest_dr_parse(&d, "0,1,36,2"), 0);
	assert_int_equal(d.hops, 3);
	assert_int_equal(d.path[2], 36);
	assert_string_equal(ibw_dest_str(&d, buf, sizeof(buf)), "dr 0,1,36,2");
	assert_int_equal(ibw_dest_dr_parse(&d, "1,2"), -EINVAL);
	assert_int_equal(ibw_dest_dr_parse(&d, "0,256"), -EINVAL);
	assert_int_equal(ibw_dest_dr_parse(&d, "0,0"), -EINVAL);
	assert_int_equal(ibw_dest_dr_parse(&d, "0,1,"), -EINVAL);
	assert_int_equal(ibw_dest_dr_parse(&d, ""), -EINVAL);
	ibw_dest_lid(&d, 42);
	assert_string_equal(ibw_dest_str(&d, buf, sizeof(buf)), "lid 42");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tid_matching_out_of_order,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_only_low_32_tid_bits_matter,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_deadline_expiry, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_silence_learned, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_dest_silence, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_retries_then_timeout,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_retry_answered, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_late_answer, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_answer, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_unmatched_answer, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_short_mad_is_dropped,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_wrong_class_is_not_an_answer, fx_setup,
			fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_wrong_attribute_is_not_an_answer, fx_setup,
			fx_teardown),
		cmocka_unit_test_setup_teardown(test_bad_status, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_busy_status_waits,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_dr_status_field, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_send_failure, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_kernel_timeout_report,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_kernel_report_after_our_deadline, fx_setup,
			fx_teardown),
		cmocka_unit_test_setup_teardown(test_every_try_has_a_timeout,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_sa_class_limit, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_device_lost_no_spin,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_device_reopened, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_returned_send_is_retried,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_recv_error_keeps_engine_alive, fx_setup,
			fx_teardown),
		cmocka_unit_test_setup_teardown(test_window_limits,
						fx_setup_window, fx_teardown),
		cmocka_unit_test_setup_teardown(test_waits_leave_window,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_slow_fabric_stays_bounded,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_recv_queue_limits,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_sa_on_smsl, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_rtt_answered_in_same_batch,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_per_dest_limit,
						fx_setup_window, fx_teardown),
		cmocka_unit_test_setup_teardown(test_free_cancels, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_malformed_requests,
						fx_setup, fx_teardown),
		cmocka_unit_test(test_mkey_in_every_smp),
		cmocka_unit_test(test_dr_parse),
	};

	return cmocka_run_group_tests_name("engine", tests, NULL, NULL);
}
