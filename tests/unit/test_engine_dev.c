// SPDX-License-Identifier: BSD-2-Clause
/*
 * MAD engine on the in-memory transport, continued: the device lost and
 * reopened, returned sends and receive errors, the window, the waits, a
 * slow fabric and the kernel's receive-queue limits. The fixture is
 * engine_fx.c's; main() is test_engine.c's.
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

static int lost_calls, lost_err;

static void on_lost(struct ibw_engine *e, int err, void *arg)
{
	lost_calls++;
	lost_err = err;
}

/* The device goes away (HCA reset): the fd stays readable for good, as
 * EPOLLERR does. The engine must stop reading at once, settle what was
 * in flight and queued, say so once, and never touch the device again. */
void test_device_lost_no_spin(void **state)
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
void test_device_reopened(void **state)
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

void test_returned_send_is_retried(void **state)
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

void test_recv_error_keeps_engine_alive(void **state)
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

void test_window_limits(void **state)
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
void test_waits_leave_window(void **state)
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
void test_slow_fabric_stays_bounded(void **state)
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
void test_recv_queue_limits(void **state)
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
