// SPDX-License-Identifier: BSD-2-Clause
/* The token bucket: burst, refill, cap, and a clock that stands still
 * or steps back. Times are made up: the bucket reads no clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ratelimit.h"

#define T0 1000000000ull /* an arbitrary start, microseconds */

/* How many takes succeed in a row at @now. */
static unsigned drain(struct ibw_ratelimit *rl, uint64_t now)
{
	unsigned n = 0;

	while (n < 100000 && ibw_ratelimit_take(rl, now))
		n++;
	return n;
}

static void test_starts_full(void **state)
{
	struct ibw_ratelimit rl;

	/* The responder's: 200 a second, bursts of 400. */
	ibw_ratelimit_init(&rl, 200, 1000000, 400, T0);
	assert_int_equal(drain(&rl, T0), 400);
	assert_int_equal(ibw_ratelimit_take(&rl, T0), 0);
}

static void test_refill(void **state)
{
	struct ibw_ratelimit rl;

	/* HTTP's and SNMP's: 60 a minute, bursts of 60: one a second. */
	ibw_ratelimit_init(&rl, 60, 60000000, 60, T0);
	assert_int_equal(drain(&rl, T0), 60);
	assert_int_equal(ibw_ratelimit_take(&rl, T0 + 999999), 0);
	assert_int_equal(ibw_ratelimit_take(&rl, T0 + 1000000), 1);
	assert_int_equal(ibw_ratelimit_take(&rl, T0 + 1000000), 0);
	/* ten seconds later: ten more, not eleven */
	assert_int_equal(drain(&rl, T0 + 11000000), 10);
}

static void test_fractions_add_up(void **state)
{
	struct ibw_ratelimit rl;

	ibw_ratelimit_init(&rl, 2, 1000000, 1, T0);
	assert_int_equal(drain(&rl, T0), 1);
	/* a quarter of a second twice: half a token each time */
	assert_int_equal(ibw_ratelimit_take(&rl, T0 + 250000), 0);
	assert_int_equal(ibw_ratelimit_take(&rl, T0 + 500000), 1);
	assert_int_equal(ibw_ratelimit_take(&rl, T0 + 500000), 0);
}

static void test_capped_at_burst(void **state)
{
	struct ibw_ratelimit rl;

	ibw_ratelimit_init(&rl, 200, 1000000, 400, T0);
	assert_int_equal(drain(&rl, T0), 400);
	/* an hour idle refills to the burst, no further */
	assert_int_equal(drain(&rl, T0 + 3600000000ull), 400);
}

static void test_clock_backwards(void **state)
{
	struct ibw_ratelimit rl;

	ibw_ratelimit_init(&rl, 60, 60000000, 60, T0);
	assert_int_equal(drain(&rl, T0), 60);
	/* an earlier time refills nothing (no wrap to a huge interval) */
	assert_int_equal(ibw_ratelimit_take(&rl, T0 - 5000000), 0);
	assert_int_equal(ibw_ratelimit_take(&rl, 0), 0);
	/* ... and does not move the bucket's time back either */
	assert_int_equal(ibw_ratelimit_take(&rl, T0 + 999999), 0);
	assert_int_equal(ibw_ratelimit_take(&rl, T0 + 1000000), 1);
}

static void test_no_refill(void **state)
{
	struct ibw_ratelimit rl;

	ibw_ratelimit_init(&rl, 5, 0, 3, T0);
	assert_int_equal(drain(&rl, T0 + 3600000000ull), 3);
	assert_int_equal(ibw_ratelimit_take(&rl, T0 + 7200000000ull), 0);
	ibw_ratelimit_init(&rl, 0, 1000000, 2, T0);
	assert_int_equal(drain(&rl, T0 + 3600000000ull), 2);
}

static void test_last_us(void **state)
{
	struct ibw_ratelimit rl;

	ibw_ratelimit_init(&rl, 1, 1000000, 1, T0);
	assert_int_equal(rl.last_us, T0);
	ibw_ratelimit_take(&rl, T0 + 42);
	ibw_ratelimit_take(&rl, T0 + 43); /* refused: still a use */
	assert_int_equal(rl.last_us, T0 + 43);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_starts_full),
		cmocka_unit_test(test_refill),
		cmocka_unit_test(test_fractions_add_up),
		cmocka_unit_test(test_capped_at_burst),
		cmocka_unit_test(test_clock_backwards),
		cmocka_unit_test(test_no_refill),
		cmocka_unit_test(test_last_us),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
