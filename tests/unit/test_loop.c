// SPDX-License-Identifier: BSD-2-Clause
/* Event loop: timer order, re-arming, fd events, hooks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "loop.h"

static int order[8];
static int norder;

static void rec(struct ibw_timer *t, void *arg)
{
	order[norder++] = (int)(intptr_t)arg;
}

static void test_timers_fire_in_deadline_order(void **state)
{
	struct ibw_loop *l = ibw_loop_new();
	struct ibw_timer *a = ibw_timer_new(l, rec, (void *)1);
	struct ibw_timer *b = ibw_timer_new(l, rec, (void *)2);
	struct ibw_timer *c = ibw_timer_new(l, rec, (void *)3);
	uint64_t end = ibw_now_us() + 1000000;

	norder = 0;
	ibw_timer_arm(a, 30000);
	ibw_timer_arm(b, 10000);
	ibw_timer_arm(c, 20000);
	ibw_timer_arm(a, 5000); /* re-arming moves it */
	while (norder < 3 && ibw_now_us() < end)
		ibw_loop_run_once(l, 50000);
	assert_int_equal(norder, 3);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 3);
	assert_false(ibw_timer_armed(a));
	ibw_timer_free(a);
	ibw_timer_free(b);
	ibw_timer_free(c);
	ibw_loop_free(l);
}

static void test_disarmed_timer_does_not_fire(void **state)
{
	struct ibw_loop *l = ibw_loop_new();
	struct ibw_timer *a = ibw_timer_new(l, rec, (void *)1);
	struct ibw_timer *b = ibw_timer_new(l, rec, (void *)2);

	norder = 0;
	ibw_timer_arm(a, 5000);
	ibw_timer_disarm(a);
	/* Until a timer due after it has fired: timers run in deadline
	 * order, so a would have run first. */
	ibw_timer_arm(b, 30000);
	while (norder == 0)
		ibw_loop_run_once(l, -1);
	assert_int_equal(norder, 1);
	assert_int_equal(order[0], 2);
	ibw_timer_free(a);
	ibw_timer_free(b);
	ibw_loop_free(l);
}

static int reads;

static void on_read(struct ibw_loop *l, int fd, unsigned ev, void *arg)
{
	char buf[16];

	assert_true(ev & IBW_EV_READ);
	if (read(fd, buf, sizeof(buf)) > 0)
		reads++;
	ibw_loop_unwatch(l, fd);
}

static int hooks;

static void hook(struct ibw_loop *l, void *arg)
{
	hooks++;
}

static void test_fd_and_hooks(void **state)
{
	struct ibw_loop *l = ibw_loop_new();
	int p[2];

	assert_int_equal(pipe(p), 0);
	reads = hooks = 0;
	assert_int_equal(ibw_loop_watch(l, p[0], IBW_EV_READ, on_read, NULL),
			 0);
	assert_int_equal(ibw_loop_add_hook(l, hook, NULL), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	ibw_loop_run_once(l, 100000);
	assert_int_equal(reads, 1);
	assert_int_equal(hooks, 1);
	/* Unwatched inside its callback: more data wakes nobody. */
	assert_int_equal(write(p[1], "y", 1), 1);
	ibw_loop_run_once(l, 10000);
	assert_int_equal(reads, 1);
	ibw_loop_del_hook(l, hook, NULL);
	ibw_loop_run_once(l, 0);
	assert_int_equal(hooks, 2);
	assert_int_equal(ibw_loop_watch(l, -1, IBW_EV_READ, on_read, NULL),
			 -22);
	close(p[0]);
	close(p[1]);
	ibw_loop_free(l);
}

static void stopper(struct ibw_timer *t, void *arg)
{
	ibw_loop_stop(arg);
}

static void test_run_until_stopped(void **state)
{
	struct ibw_loop *l = ibw_loop_new();
	struct ibw_timer *t = ibw_timer_new(l, stopper, l);

	ibw_timer_arm(t, 1000);
	assert_int_equal(ibw_loop_run(l), 0);
	assert_true(ibw_loop_stopped(l));
	ibw_timer_free(t);
	ibw_loop_free(l);
}

/* One wakeup per wait: a loop with one timer to wait for wakes once
 * for it, not in a poll of its own (the count the daemon reports to show
 * it is idle). */
static void test_wakeups_count_waits(void **state)
{
	struct ibw_loop *l = ibw_loop_new();
	struct ibw_timer *t = ibw_timer_new(l, stopper, l);

	assert_int_equal(ibw_loop_wakeups(l), 0);
	ibw_loop_run_once(l, 0);
	assert_int_equal(ibw_loop_wakeups(l), 1);
	ibw_timer_arm(t, 20000);
	assert_int_equal(ibw_loop_run(l), 0);
	assert_int_equal(ibw_loop_wakeups(l), 2);
	ibw_timer_free(t);
	ibw_loop_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timers_fire_in_deadline_order),
		cmocka_unit_test(test_disarmed_timer_does_not_fire),
		cmocka_unit_test(test_fd_and_hooks),
		cmocka_unit_test(test_run_until_stopped),
		cmocka_unit_test(test_wakeups_count_waits),
	};

	return cmocka_run_group_tests_name("loop", tests, NULL, NULL);
}
