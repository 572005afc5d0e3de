// SPDX-License-Identifier: BSD-2-Clause
/* Names from the fabric: hostile bytes in, valid UTF-8 without control
 * characters out. The expected strings are what Python's
 * bytes.decode("utf-8", "replace") gives, control characters aside. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "codec.h"
#include "namemap.h"
#include "jobs.h"
#include "safename.h"

#define FFFD "\xef\xbf\xbd"

static void check(const char *in, size_t len, const char *want)
{
	char out[IBW_NAME_SIZE];
	size_t n = ibw_name_sanitize(out, sizeof(out), in, len);

	assert_string_equal(out, want);
	assert_int_equal(n, strlen(want));
}

#define CHECK(in, want) check(in, sizeof(in) - 1, want)

static void test_valid_kept(void **state)
{
	CHECK("node0001 HCA-1", "node0001 HCA-1");
	/* quotes and backslashes are valid text: each front end escapes
	 * them for its own format */
	CHECK("a \"q\" \\ b", "a \"q\" \\ b");
	CHECK("n\xc3\xb8"
	      "de \xe6\x97\xa5 \xf0\x9f\x98\x80",
	      "n\xc3\xb8"
	      "de \xe6\x97\xa5 \xf0\x9f\x98\x80");
	CHECK("\xef\xbf\xbf\xf4\x8f\xbf\xbf", "\xef\xbf\xbf\xf4\x8f\xbf\xbf");
}

static void test_controls(void **state)
{
	CHECK("a\nb\rc\td\x7f", "a?b?c?d?");
	check("a\0b", 3, "a?b");
	/* C1 controls are valid UTF-8 but control characters all the same */
	CHECK("x\xc2\x85y\xc2\x9f", "x?y?");
	CHECK("\xc2\xa0", "\xc2\xa0");
}

static void test_invalid(void **state)
{
	CHECK("node0003 \xff\xfe\xc3 HCA-1",
	      "node0003 " FFFD FFFD FFFD " HCA-1");
	/* a lone continuation byte, a bad lead */
	CHECK("\x80z\xf5\xbf", FFFD "z" FFFD FFFD);
	/* overlong forms: C0/C1 leads, E0 80, F0 80 */
	CHECK("\xc0\xaf", FFFD FFFD);
	CHECK("\xc1\xbf", FFFD FFFD);
	CHECK("\xe0\x80\xaf", FFFD FFFD FFFD);
	CHECK("\xf0\x80\x80\xaf", FFFD FFFD FFFD FFFD);
	/* surrogates (U+D800, U+DFFF) and beyond U+10FFFF */
	CHECK("\xed\xa0\x80", FFFD FFFD FFFD);
	CHECK("\xed\xbf\xbf", FFFD FFFD FFFD);
	CHECK("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD);
	/* a sequence broken inside the string: one U+FFFD for the
	 * maximal subpart, the next byte starts afresh */
	CHECK("\xf0\x9f\x98"
	      "A",
	      FFFD "A");
	CHECK("\xe6\x97"
	      "\xe6\x97\xa5",
	      FFFD "\xe6\x97\xa5");
}

static void test_cut_at_end(void **state)
{
	/* cut by the end of the field: dropped, not replaced */
	CHECK("ab\xf0\x9f\x98", "ab");
	CHECK("ab\xe6\x97", "ab");
	CHECK("ab\xc3", "ab");
	/* but an invalid one at the end is still invalid */
	CHECK("ab\xed\xa0", "ab" FFFD FFFD);
}

static void test_bounded(void **state)
{
	char in[64], out[IBW_NAME_SIZE], small[8];
	size_t n;

	/* 64 bad bytes: the worst case still fits an IBW_NAME_SIZE name */
	memset(in, 0xff, sizeof(in));
	n = ibw_name_sanitize(out, sizeof(out), in, sizeof(in));
	assert_int_equal(n, 64 * 3);
	assert_int_equal(strlen(out), 64 * 3);
	/* a small buffer holds whole characters only */
	n = ibw_name_sanitize(small, sizeof(small), in, sizeof(in));
	assert_int_equal(n, 6);
	assert_string_equal(small, FFFD FFFD);
	n = ibw_name_sanitize(small, sizeof(small), "abcde\xc3\xb8", 7);
	assert_string_equal(small, "abcde\xc3\xb8");
	n = ibw_name_sanitize(small, sizeof(small), "abcdef\xc3\xb8", 8);
	assert_string_equal(small, "abcdef");
	n = ibw_name_sanitize(small, 1, "abc", 3);
	assert_int_equal(n, 0);
	assert_string_equal(small, "");
}

/* The wire: 64 octets, NUL-padded, a 4-byte character cut at byte 64. */
static void test_nodedesc(void **state)
{
	uint8_t mad[256] = { 1, 0x81, 1, 0x81 };
	char buf[IBW_NAME_SIZE];
	uint8_t *d = mad + IB_SMP_DATA_OFFS;

	memset(d, 'x', 61);
	memcpy(d + 61, "\xf0\x9f\x98", 3);
	d[64] = 0x80; /* beyond the field: never read */
	assert_int_equal(
		ibw_nodedesc_decode(mad, sizeof(mad), buf, sizeof(buf)), 0);
	assert_int_equal(strlen(buf), 61);
	assert_int_equal(buf[60], 'x');

	memset(d, 0, 64);
	memcpy(d, "n\0\"q\"\\\xff\n", 8);
	assert_int_equal(
		ibw_nodedesc_decode(mad, sizeof(mad), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "n?\"q\"\\" FFFD "?");

	memset(d, 0xfe, 64);
	assert_int_equal(
		ibw_nodedesc_decode(mad, sizeof(mad), buf, sizeof(buf)), 0);
	assert_int_equal(strlen(buf), 192);
	assert_int_equal(ibw_nodedesc_decode(mad, sizeof(mad), buf, 65),
			 -EINVAL);
}

static void test_trim(void **state)
{
	char s[32];

	strcpy(s, "ab\xf0\x9f\x98");
	ibw_name_trim(s);
	assert_string_equal(s, "ab");
	strcpy(s, "ab\xe6\x97");
	ibw_name_trim(s);
	assert_string_equal(s, "ab");
	strcpy(s, "ab\xc3");
	ibw_name_trim(s);
	assert_string_equal(s, "ab");
	strcpy(s, "ab\xf0\x9f\x98\x80");
	ibw_name_trim(s);
	assert_string_equal(s, "ab\xf0\x9f\x98\x80");
	strcpy(s, "a" FFFD);
	ibw_name_trim(s);
	assert_string_equal(s, "a" FFFD);
	strcpy(s, "abc");
	ibw_name_trim(s);
	assert_string_equal(s, "abc");
	s[0] = '\0';
	ibw_name_trim(s);
	assert_string_equal(s, "");
}

/* A name in a log line: quoted, its quotes and backslashes escaped, cut
 * between characters; a name of the largest size always fits. */
static void test_quote(void **state)
{
	char q[IBW_NAME_QUOTED_SIZE], small[7], big[IBW_NAME_SIZE];

	(void)state;
	assert_string_equal(ibw_name_quote(q, sizeof(q), "a \"b\" \\ c"),
			    "\"a \\\"b\\\" \\\\ c\"");
	assert_string_equal(ibw_name_quote(q, sizeof(q), ""), "\"\"");
	/* 7 bytes: the quotes, 4 of text, NUL; U+00E9 never cut in two */
	assert_string_equal(ibw_name_quote(small, sizeof(small), "ab\xc3\xa9x"),
			    "\"ab\xc3\xa9\"");
	assert_string_equal(ibw_name_quote(small, sizeof(small), "abc\xc3\xa9"),
			    "\"abc\"");
	memset(big, '"', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ibw_name_quote(q, sizeof(q), big);
	assert_int_equal(strlen(q), 2 * (sizeof(big) - 1) + 2);
}

/* A job file's texts are made safe where they enter, as names are. */
static void test_jobfile(void **state)
{
	static const char text[] = "job_id=4711\nuser=al\xffice\x01\n"
				   "partition=g\"p\\u\xc3\nnodes=n[1-2]\n";
	struct ibw_job j;
	char err[128];

	(void)state;
	assert_int_equal(
		ibw_job_parse(text, sizeof(text) - 1, &j, err, sizeof(err)), 0);
	assert_string_equal(j.user, "al" FFFD "ice?");
	/* a character cut by the end of the text is dropped */
	assert_string_equal(j.partition, "g\"p\\u");
	assert_string_equal(j.nodes, "n[1-2]");
	assert_int_equal(j.nhosts, 2);
	ibw_job_clear(&j);
}

/* A node-name-map name is made safe the same way. */
static void test_namemap(void **state)
{
	static const char text[] = "0x1 \"bad \xff\xc3 \\ n\xc3\xb8\"\n";
	char err[128];
	struct ibw_namemap *m = ibw_namemap_parse(text, sizeof(text) - 1, "map",
						  err, sizeof(err));

	assert_non_null(m);
	assert_string_equal(ibw_namemap_get(m, 1),
			    "bad " FFFD FFFD " \\ n\xc3\xb8");
	ibw_namemap_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_kept),
		cmocka_unit_test(test_controls),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_cut_at_end),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_nodedesc),
		cmocka_unit_test(test_trim),
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_jobfile),
		cmocka_unit_test(test_namemap),
	};

	return cmocka_run_group_tests_name("safename", tests, NULL, NULL);
}
