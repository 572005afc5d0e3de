// SPDX-License-Identifier: BSD-2-Clause
/* SA answers: whole, single-segment RMPP, and cut RMPP transfers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sa.h"

/* An SA GetResp/GetTableResp header with @flags RMPP flags. */
static void sa_mad(uint8_t *m, unsigned flags, unsigned payload, unsigned recsz)
{
	memset(m, 0, 256);
	m[0] = 1;
	m[1] = IBW_CLASS_SA;
	m[2] = 2;
	m[3] = 0x92;
	mad_set_field(m, 0, IB_SA_RMPP_VERS_F, flags ? 1 : 0);
	mad_set_field(m, 0, IB_SA_RMPP_TYPE_F, flags ? 1 : 0);
	mad_set_field(m, 0, IB_SA_RMPP_FLAGS_F, flags);
	mad_set_field(m, 0, IB_SA_RMPP_SEGNUM_F, flags ? 1 : 0);
	mad_set_field(m, 0, IB_SA_RMPP_LEN_F, payload);
	mad_set_field(m, 0, IB_SA_ATTROFFS_F, recsz / 8);
}

static void test_cut_first_segment_is_incomplete(void **state)
{
	uint8_t m[256];
	struct ibw_sa_result r;

	/* Active|First, no Last: 2000 bytes announced, 200 here. */
	sa_mad(m, 0x3, 2000, 112);
	assert_int_equal(ibw_sa_parse(m, sizeof(m), &r), 0);
	assert_false(r.complete);
	assert_int_equal(r.payload_len, 2000);
	assert_int_equal(r.record_size, 112);
	assert_int_equal(r.nrecords, 1);
}

static void test_middle_segment_is_incomplete(void **state)
{
	uint8_t m[256];
	struct ibw_sa_result r;

	sa_mad(m, 0x1, 200, 112); /* Active only */
	assert_int_equal(ibw_sa_parse(m, sizeof(m), &r), 0);
	assert_false(r.complete);
}

static void test_short_answer_is_whole(void **state)
{
	uint8_t m[256];
	struct ibw_sa_result r;

	/* The SA marked it RMPP but it fits in one MAD and came whole (as
	 * umad2sim delivers a one-record table). */
	sa_mad(m, 0x1, 0, 72);
	assert_int_equal(ibw_sa_parse(m, 56 + 72, &r), 0);
	assert_true(r.complete);
	assert_int_equal(r.nrecords, 1);
}

static void test_single_segment_transfer(void **state)
{
	uint8_t m[256];
	struct ibw_sa_result r;

	/* Active|First|Last: the payload length counts the SA header. */
	sa_mad(m, 0x7, 20 + 2 * 72, 72);
	assert_int_equal(ibw_sa_parse(m, sizeof(m), &r), 0);
	assert_true(r.complete);
	assert_int_equal(r.nrecords, 2);
	/* An empty table */
	sa_mad(m, 0x7, 20, 72);
	assert_int_equal(ibw_sa_parse(m, sizeof(m), &r), 0);
	assert_true(r.complete);
	assert_int_equal(r.nrecords, 0);
}

static void test_reassembled_transfer_is_complete(void **state)
{
	static uint8_t m[4096];
	struct ibw_sa_result r;

	/* The kernel hands over the whole table in one buffer. */
	sa_mad(m, 0x3, 20 + 30 * 112, 112);
	assert_int_equal(ibw_sa_parse(m, 56 + 30 * 112, &r), 0);
	assert_true(r.complete);
	assert_int_equal(r.nrecords, 30);
}

static void test_plain_get(void **state)
{
	uint8_t m[256];
	struct ibw_sa_result r;

	sa_mad(m, 0, 0, 112);
	assert_int_equal(ibw_sa_parse(m, sizeof(m), &r), 0);
	assert_true(r.complete);
	assert_int_equal(r.nrecords, 1);
	/* AttributeOffset 0 on a Get: one record */
	sa_mad(m, 0, 0, 0);
	assert_int_equal(ibw_sa_parse(m, sizeof(m), &r), 0);
	assert_int_equal(r.nrecords, 1);
}

static void test_malformed(void **state)
{
	uint8_t m[256];
	struct ibw_sa_result r;

	sa_mad(m, 0, 0, 112);
	assert_int_equal(ibw_sa_parse(m, 40, &r), -EINVAL);
	assert_int_equal(ibw_sa_parse(NULL, 256, &r), -EINVAL);
	m[1] = IBW_CLASS_PERF;
	assert_int_equal(ibw_sa_parse(m, sizeof(m), &r), -EINVAL);
	/* A huge PayloadLength on a single segment does not overrun. */
	sa_mad(m, 0x7, 0xffffffff, 112);
	assert_int_equal(ibw_sa_parse(m, sizeof(m), &r), 0);
	assert_int_equal(r.nrecords, 1);
	sa_mad(m, 0x7, 5, 112); /* shorter than the SA header */
	assert_int_equal(ibw_sa_parse(m, sizeof(m), &r), 0);
	assert_int_equal(r.nrecords, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_first_segment_is_incomplete),
		cmocka_unit_test(test_middle_segment_is_incomplete),
		cmocka_unit_test(test_short_answer_is_whole),
		cmocka_unit_test(test_single_segment_transfer),
		cmocka_unit_test(test_reassembled_transfer_is_complete),
		cmocka_unit_test(test_plain_get),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests_name("sa", tests, NULL, NULL);
}
