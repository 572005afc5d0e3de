// SPDX-License-Identifier: BSD-2-Clause
/* The page's sessions: random values, their life, the oldest giving way
 * when the table is full, sign-out, and cookies of any shape refused.
 * Times are made up: the table reads no clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "session.h"

#define T0 1000000000ull /* an arbitrary start, microseconds */
#define TTL 3600000000ull /* an hour */

static void test_open_valid(void **state)
{
	struct ibw_sessions *ss = ibw_sessions_new(4, TTL);
	char a[IBW_SESSION_HEX + 1], b[IBW_SESSION_HEX + 1];

	assert_non_null(ss);
	assert_int_equal(ibw_session_open(ss, T0, a), 0);
	assert_int_equal(ibw_session_open(ss, T0, b), 0);
	assert_int_equal(strlen(a), IBW_SESSION_HEX);
	assert_int_equal(strspn(a, "0123456789abcdef"), IBW_SESSION_HEX);
	/* random: two sign-ins, two values */
	assert_string_not_equal(a, b);
	assert_true(ibw_session_valid(ss, a, T0));
	assert_true(ibw_session_valid(ss, b, T0 + 1));
	ibw_sessions_free(ss);
}

static void test_expiry(void **state)
{
	struct ibw_sessions *ss = ibw_sessions_new(4, TTL);
	char a[IBW_SESSION_HEX + 1];

	ibw_session_open(ss, T0, a);
	assert_true(ibw_session_valid(ss, a, T0 + TTL - 1));
	assert_false(ibw_session_valid(ss, a, T0 + TTL));
	/* ended for good, whatever the clock says later */
	assert_false(ibw_session_valid(ss, a, T0));
	ibw_sessions_free(ss);
}

static void test_oldest_gives_way(void **state)
{
	struct ibw_sessions *ss = ibw_sessions_new(2, TTL);
	char a[IBW_SESSION_HEX + 1], b[IBW_SESSION_HEX + 1];
	char c[IBW_SESSION_HEX + 1];

	ibw_session_open(ss, T0, a);
	ibw_session_open(ss, T0 + 1, b);
	ibw_session_open(ss, T0 + 2, c);
	assert_false(ibw_session_valid(ss, a, T0 + 3));
	assert_true(ibw_session_valid(ss, b, T0 + 3));
	assert_true(ibw_session_valid(ss, c, T0 + 3));
	ibw_sessions_free(ss);
}

static void test_close(void **state)
{
	struct ibw_sessions *ss = ibw_sessions_new(4, TTL);
	char a[IBW_SESSION_HEX + 1], b[IBW_SESSION_HEX + 1];

	ibw_session_open(ss, T0, a);
	ibw_session_open(ss, T0, b);
	assert_int_equal(ibw_session_close(ss, a), 1);
	assert_int_equal(ibw_session_close(ss, a), 0);
	assert_false(ibw_session_valid(ss, a, T0));
	assert_true(ibw_session_valid(ss, b, T0));
	ibw_sessions_free(ss);
}

static void test_malformed(void **state)
{
	struct ibw_sessions *ss = ibw_sessions_new(4, TTL);
	char a[IBW_SESSION_HEX + 1], up[IBW_SESSION_HEX + 1];
	char zeros[IBW_SESSION_HEX + 1];
	unsigned i;

	ibw_session_open(ss, T0, a);
	assert_false(ibw_session_valid(ss, NULL, T0));
	assert_false(ibw_session_valid(ss, "", T0));
	/* one digit short, one too many */
	a[IBW_SESSION_HEX - 1] = '\0';
	assert_false(ibw_session_valid(ss, a, T0));
	/* upper case is not what we sent */
	ibw_session_open(ss, T0, a);
	for (i = 0; i < IBW_SESSION_HEX; i++)
		up[i] = (char)(a[i] >= 'a' ? a[i] - 32 : a[i]);
	up[IBW_SESSION_HEX] = '\0';
	if (strcmp(up, a))
		assert_false(ibw_session_valid(ss, up, T0));
	/* an unused slot's zeros are no session */
	memset(zeros, '0', IBW_SESSION_HEX);
	zeros[IBW_SESSION_HEX] = '\0';
	assert_false(ibw_session_valid(ss, zeros, T0));
	ibw_sessions_free(ss);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_valid),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_oldest_gives_way),
		cmocka_unit_test(test_close),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
