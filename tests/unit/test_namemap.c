// SPDX-License-Identifier: BSD-2-Clause
/* node-name-map parsing: good maps, and bad lines named by number. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "namemap.h"

static void test_good_map(void **state)
{
	static const char text[] = "# comment\n"
				   "\n"
				   "0x0002c90300a00001 \"node0001\"\n"
				   "  0x0002c90300a00002   \"leaf 01\"   # "
				   "trailing comment\n"
				   "0x3 bare\n"
				   "0x3 \"again\"\n";
	char err[128];
	struct ibw_namemap *m = ibw_namemap_parse(text, sizeof(text) - 1, "map",
						  err, sizeof(err));

	assert_non_null(m);
	assert_int_equal(ibw_namemap_count(m), 3);
	assert_string_equal(ibw_namemap_get(m, 0x0002c90300a00001ull), "node000"
								       "1");
	assert_string_equal(ibw_namemap_get(m, 0x0002c90300a00002ull), "leaf "
								       "01");
	assert_string_equal(ibw_namemap_get(m, 3), "again"); /* later wins */
	assert_null(ibw_namemap_get(m, 4));
	ibw_namemap_free(m);
}

static void expect_error(const char *text, const char *msg)
{
	char err[128] = "";
	struct ibw_namemap *m =
		ibw_namemap_parse(text, strlen(text), "f", err, sizeof(err));

	assert_null(m);
	assert_string_equal(err, msg);
}

static void test_bad_lines(void **state)
{
	expect_error("0x1 \"a\"\nzz \"b\"\n", "f:2: not a GUID");
	expect_error("0x1\n", "f:1: GUID without a name");
	expect_error("#\n#\n0x1 \"open\n", "f:3: unterminated quote");
	expect_error("0x1 \"a\" b\n", "f:1: text after the name");
	expect_error("0x1 \"\"\n", "f:1: empty name");
	expect_error("0x0 \"zero\"\n", "f:1: not a GUID");
	expect_error("0x1 \"a\x01\"\n", "f:1: control character in the name");
}

static void test_missing_file(void **state)
{
	char err[128];

	assert_null(ibw_namemap_load("/nonexistent/map", err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/map"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_map),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_missing_file),
	};

	return cmocka_run_group_tests_name("namemap", tests, NULL, NULL);
}
