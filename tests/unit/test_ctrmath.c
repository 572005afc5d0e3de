// SPDX-License-Identifier: BSD-2-Clause
/*
 * The arithmetic of running totals (core/ctr_math.c), one rule at a time:
 * first readings, deltas and units, saturation, foreign resets and ours,
 * no wrap, a change of source (PortCounters to PortCountersExtended and
 * back), the reset-before-saturation mark, thresholds and rates; and the
 * hash the state file's checksum is made with (core/hash.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ctr_math.h"
#include "hash.h"

static void test_first_reading_is_the_total(void **state)
{
	struct ibw_ctr_val v = { 0 };

	assert_int_equal(ibw_ctr_fold(&v, 1000, 0xffff, 1, 0), 0);
	assert_true(v.total == 1000);
	assert_false(v.saturated);
}

static void test_deltas_accumulate(void **state)
{
	struct ibw_ctr_val v = { 0 };

	ibw_ctr_fold(&v, 10, 0xffffffff, 4, 0);
	ibw_ctr_fold(&v, 25, 0xffffffff, 4, 0);
	assert_true(v.total == 100); /* words to bytes */
}

static void test_saturation_flagged_and_total_holds(void **state)
{
	struct ibw_ctr_val v = { 0 };

	ibw_ctr_fold(&v, 250, 0xff, 1, 0);
	ibw_ctr_fold(&v, 255, 0xff, 1, 0);
	assert_true(v.saturated);
	assert_true(v.total == 255);
	ibw_ctr_fold(&v, 255, 0xff, 1, 0);
	assert_true(v.total == 255);
	assert_int_equal(v.resets, 0);
}

static void test_foreign_reset_keeps_monotonic(void **state)
{
	struct ibw_ctr_val v = { 0 };
	uint64_t before;

	ibw_ctr_fold(&v, 500, 0xffff, 1, 0);
	before = v.total;
	/* perfquery -R, then 7 more */
	assert_int_equal(ibw_ctr_fold(&v, 7, 0xffff, 1, 0), 1);
	assert_true(v.total == before + 7);
	assert_int_equal(v.resets, 1);
	assert_false(v.saturated);
}

static void test_our_reset_is_not_foreign(void **state)
{
	struct ibw_ctr_val v = { 0 };

	ibw_ctr_fold(&v, 4000000000u, 0xffffffff, 1, 0);
	v.reset_by_us = 1; /* we cleared it after that read */
	assert_int_equal(ibw_ctr_fold(&v, 12, 0xffffffff, 1, 1), 0);
	assert_true(v.total == 4000000012ull);
	assert_int_equal(v.resets, 0);
	assert_false(v.reset_by_us);
}

static void test_64bit_values_exact(void **state)
{
	struct ibw_ctr_val v = { 0 };

	ibw_ctr_fold(&v, 18446744073709551606ull, 0, 1, 0);
	assert_true(v.total == 18446744073709551606ull);
	ibw_ctr_fold(&v, 18446744073709551615ull, 0, 1, 0);
	assert_true(v.total == 18446744073709551615ull);
}

/* Field widths of PortCounters (4, 8, 16, 32 bits) and the 64-bit
 * counters, which have no maximum that matters. */
static void test_field_max(void **state)
{
	assert_true(ibw_ctr_max(4) == 15);
	assert_true(ibw_ctr_max(8) == 255);
	assert_true(ibw_ctr_max(16) == 0xffff);
	assert_true(ibw_ctr_max(32) == 0xffffffffull);
	assert_true(ibw_ctr_max(64) == 0);
	assert_false(ibw_ctr_saturated(0xfffffffeull, ibw_ctr_max(32)));
	assert_true(ibw_ctr_saturated(0xffffffffull, ibw_ctr_max(32)));
	assert_false(ibw_ctr_saturated(UINT64_MAX, ibw_ctr_max(64)));
}

/* A 32-bit data counter stuck at its maximum counts nothing more until
 * it is cleared; once we cleared it, its next reading is all new. */
static void test_saturated_32bit_counter(void **state)
{
	const uint64_t max = ibw_ctr_max(32);
	struct ibw_ctr_val v = { 0 };

	assert_int_equal(ibw_ctr_update(&v, 0xfffffff0u, max, 4, 0),
			 IBW_CTR_STEP_COUNTED);
	assert_false(v.saturated);
	assert_int_equal(ibw_ctr_update(&v, max, max, 4, 0),
			 IBW_CTR_STEP_COUNTED);
	assert_true(v.saturated);
	assert_true(v.total == max * 4);
	/* still stuck: the total holds, the flag stays */
	assert_int_equal(ibw_ctr_update(&v, max, max, 4, 0),
			 IBW_CTR_STEP_COUNTED);
	assert_true(v.total == max * 4);
	assert_true(v.saturated);
	/* PerfSet cleared it; 10 words since */
	v.reset_by_us = 1;
	assert_false(ibw_ctr_would_reset(&v, 10, 0));
	assert_int_equal(ibw_ctr_update(&v, 10, max, 4, 0),
			 IBW_CTR_STEP_COUNTED);
	assert_true(v.total == (max + 10) * 4);
	assert_false(v.saturated);
	assert_false(v.reset_by_us);
	assert_int_equal(v.resets, 0);
}

/* A reading below the last one is a reset by someone else: predicted by
 * ibw_ctr_would_reset(), counted once, and the total grows by the new
 * reading. */
static void test_backwards_reading(void **state)
{
	const uint64_t max = ibw_ctr_max(16);
	struct ibw_ctr_val v = { 0 };

	ibw_ctr_update(&v, 500, max, 1, 0);
	assert_false(ibw_ctr_would_reset(&v, 500, 0)); /* equal: no */
	assert_true(ibw_ctr_would_reset(&v, 499, 0));
	assert_int_equal(ibw_ctr_update(&v, 499, max, 1, 0),
			 IBW_CTR_STEP_RESET);
	assert_true(v.total == 999);
	assert_int_equal(v.resets, 1);
	/* and after that it counts on from there */
	assert_false(ibw_ctr_would_reset(&v, 600, 0));
	assert_int_equal(ibw_ctr_update(&v, 600, max, 1, 0),
			 IBW_CTR_STEP_COUNTED);
	assert_true(v.total == 1100);
	assert_int_equal(v.resets, 1);
	/* a first reading is never a reset, however low */
	memset(&v, 0, sizeof(v));
	assert_false(ibw_ctr_would_reset(&v, 0, 0));
	assert_int_equal(ibw_ctr_update(&v, 0, max, 1, 0),
			 IBW_CTR_STEP_COUNTED);
	assert_int_equal(v.resets, 0);
}

/* PortCounters saturate, they do not wrap: a 32-bit counter near its top
 * that reads low next is a reset, counted by what it shows, never as a
 * wrap through zero. The same for 64-bit ones. */
static void test_no_wrap(void **state)
{
	struct ibw_ctr_val v = { 0 };

	ibw_ctr_update(&v, 0xfffffff0u, ibw_ctr_max(32), 1, 0);
	assert_int_equal(ibw_ctr_update(&v, 5, ibw_ctr_max(32), 1, 0),
			 IBW_CTR_STEP_RESET);
	assert_true(v.total == 0xfffffff0ull + 5);

	memset(&v, 0, sizeof(v));
	ibw_ctr_update(&v, UINT64_MAX - 5, ibw_ctr_max(64), 1, 1);
	assert_int_equal(ibw_ctr_update(&v, 3, ibw_ctr_max(64), 1, 1),
			 IBW_CTR_STEP_RESET);
	assert_true(v.total == UINT64_MAX - 2);
	assert_int_equal(v.resets, 1);
}

/* A node that starts (or stops) answering PortCountersExtended: the
 * 64-bit and the 32-bit counter count from different points, so the first
 * reading of the other width is a new baseline, counted as nothing and
 * never taken for a reset, and the next one counts from it. */
static void test_counter_width_switch(void **state)
{
	const uint64_t max32 = ibw_ctr_max(32), max64 = ibw_ctr_max(64);
	struct ibw_ctr_val v = { 0 };

	ibw_ctr_update(&v, 1000, max32, 4, 0);
	ibw_ctr_update(&v, 1100, max32, 4, 0);
	assert_true(v.total == 4400);

	/* to 64 bits: the extended counter is far ahead */
	assert_false(ibw_ctr_would_reset(&v, 50, 1));
	assert_int_equal(ibw_ctr_update(&v, 5000000000ull, max64, 4, 1),
			 IBW_CTR_STEP_REBASED);
	assert_true(v.total == 4400);
	assert_true(v.raw == 5000000000ull);
	assert_true(v.from_ext);
	assert_int_equal(ibw_ctr_update(&v, 5000000010ull, max64, 4, 1),
			 IBW_CTR_STEP_COUNTED);
	assert_true(v.total == 4440);
	assert_false(v.saturated); /* 64 bits never are */

	/* back to 32 bits, with a lower value: not a reset either */
	assert_false(ibw_ctr_would_reset(&v, 7, 0));
	assert_int_equal(ibw_ctr_update(&v, 7, max32, 4, 0),
			 IBW_CTR_STEP_REBASED);
	assert_true(v.total == 4440);
	assert_false(v.from_ext);
	assert_int_equal(v.resets, 0);
	assert_int_equal(ibw_ctr_update(&v, 9, max32, 4, 0),
			 IBW_CTR_STEP_COUNTED);
	assert_true(v.total == 4448);
}

/* The first reading from PortCountersExtended is the total, like any. */
static void test_first_reading_extended(void **state)
{
	struct ibw_ctr_val v = { 0 };

	assert_int_equal(ibw_ctr_update(&v, 100, ibw_ctr_max(64), 4, 1),
			 IBW_CTR_STEP_COUNTED);
	assert_true(v.total == 400);
	assert_true(v.from_ext);
	assert_true(v.have_raw);
}

/* Clear before saturation: past three quarters of the range. */
static void test_near_max(void **state)
{
	assert_false(ibw_ctr_near_max(0xbfffffffull, ibw_ctr_max(32)));
	assert_true(ibw_ctr_near_max(0xc0000000ull, ibw_ctr_max(32)));
	assert_true(ibw_ctr_near_max(0xffffffffull, ibw_ctr_max(32)));
	assert_false(ibw_ctr_near_max(11, ibw_ctr_max(4)));
	assert_true(ibw_ctr_near_max(12, ibw_ctr_max(4)));
	assert_false(ibw_ctr_near_max(UINT64_MAX, ibw_ctr_max(64)));
}

/* One crossing, one signal; re-armed below; no threshold, no signal. */
static void test_threshold_crossing(void **state)
{
	struct ibw_ctr_val v = { 0 };

	assert_false(ibw_ctr_threshold(&v, 9, 10));
	assert_false(v.over_threshold);
	assert_true(ibw_ctr_threshold(&v, 10, 10)); /* at it is over */
	assert_true(v.over_threshold);
	assert_false(ibw_ctr_threshold(&v, 500, 10));
	assert_true(v.over_threshold);
	assert_false(ibw_ctr_threshold(&v, 2, 10)); /* cleared */
	assert_false(v.over_threshold);
	assert_true(ibw_ctr_threshold(&v, 11, 10));
	memset(&v, 0, sizeof(v));
	assert_false(ibw_ctr_threshold(&v, UINT64_MAX, 0));
	assert_false(v.over_threshold);
}

static void test_rate(void **state)
{
	/* 1000 bytes over half a second */
	assert_true(ibw_ctr_rate(3000, 2000, 500000) == 2000.0);
	assert_true(ibw_ctr_rate(7, 7, 1) == 0.0);
}

/* The steps are FNV-1a 64's (known values from FNV's own offset basis);
 * pieces hash as the whole; and the start value is the one state files
 * were always checked with (tests/unit/test_counters.c loads one). */
static void test_fnv1a64(void **state)
{
	const uint64_t basis = 14695981039346656037ull;
	uint64_t h;

	assert_true(ibw_fnv1a64(basis, "", 0) == 0xcbf29ce484222325ull);
	assert_true(ibw_fnv1a64(basis, "a", 1) == 0xaf63dc4c8601ec8cull);
	assert_true(ibw_fnv1a64(basis, "foobar", 6) == 0x85944171f73967e8ull);
	h = ibw_fnv1a64(IBW_FNV1A64_INIT, "foo", 3);
	assert_true(ibw_fnv1a64(h, "bar", 3) ==
		    ibw_fnv1a64(IBW_FNV1A64_INIT, "foobar", 6));
	assert_true(IBW_FNV1A64_INIT == 1469598103934665603ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_reading_is_the_total),
		cmocka_unit_test(test_deltas_accumulate),
		cmocka_unit_test(test_saturation_flagged_and_total_holds),
		cmocka_unit_test(test_foreign_reset_keeps_monotonic),
		cmocka_unit_test(test_our_reset_is_not_foreign),
		cmocka_unit_test(test_64bit_values_exact),
		cmocka_unit_test(test_field_max),
		cmocka_unit_test(test_saturated_32bit_counter),
		cmocka_unit_test(test_backwards_reading),
		cmocka_unit_test(test_no_wrap),
		cmocka_unit_test(test_counter_width_switch),
		cmocka_unit_test(test_first_reading_extended),
		cmocka_unit_test(test_near_max),
		cmocka_unit_test(test_threshold_crossing),
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_fnv1a64),
	};

	return cmocka_run_group_tests_name("ctrmath", tests, NULL, NULL);
}
