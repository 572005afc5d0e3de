// SPDX-License-Identifier: BSD-2-Clause
/*
 * MAD engine on the in-memory transport: TID matching, deadlines,
 * retries, silence learned, late/duplicate/unmatched answers, wrong
 * class, bad status and transport failures; the fixture is engine_fx.c's
 * and the device and window tests are test_engine_dev.c's.
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
#include "engine_fx.h"
#include "localport.h"
#include "sa.h"
#include "transport_mem.h"

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
