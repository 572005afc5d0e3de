// SPDX-License-Identifier: BSD-2-Clause
/* JSON renderers: exact 64-bit integers, times, GUIDs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"

static void test_u64_exact(void **state)
{
	json_t *o = json_object();
	char *s;

	json_object_set_new(o, "big", ibw_json_u64(18446744073709551615ull));
	json_object_set_new(o, "mid", ibw_json_u64(9223372036854775808ull));
	json_object_set_new(o, "small", ibw_json_u64(42));
	json_object_set_new(o, "text", json_string("u64:1 \"quoted\""));
	s = ibw_json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(s, "{\"big\":18446744073709551615,"
			       "\"mid\":9223372036854775808,\"small\":42,"
			       "\"text\":\"u64:1 \\\"quoted\\\"\"}");
	free(s);
	json_decref(o);
}

static void test_guid_and_time(void **state)
{
	json_t *g = ibw_json_guid(0x2c90300a00001ull);
	json_t *t = ibw_json_time(1795306300478040ull);
	json_t *z = ibw_json_time(0);

	assert_string_equal(json_string_value(g), "0x0002c90300a00001");
	assert_string_equal(json_string_value(t), "2026-11-22T00:11:40."
						  "478040Z");
	assert_true(json_is_null(z));
	json_decref(g);
	json_decref(t);
	json_decref(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64_exact),
		cmocka_unit_test(test_guid_and_time),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
