// SPDX-License-Identifier: BSD-2-Clause
/* The sign-in form's body: the token field found among others, decoded
 * as a browser encodes it, and nothing made up when it is not there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "signin.h"

/* The token of @body, or NULL; @want NULL: none expected. */
static void expect(const char *body, const char *want)
{
	char *t = ibw_signin_form_token(body, strlen(body));

	if (!want) {
		assert_null(t);
		return;
	}
	assert_non_null(t);
	assert_string_equal(t, want);
	free(t);
}

static void test_plain(void **state)
{
	expect("token=s3cret-token", "s3cret-token");
	expect("a=1&token=abc&b=2", "abc");
	expect("token=", "");
}

static void test_decoded(void **state)
{
	/* a space is '+', a '+' is %2B; URLSearchParams writes these */
	expect("token=a%2Bb+c%3D%26", "a+b c=&");
	/* UTF-8 as its bytes */
	expect("token=%C3%A9t%C3%A9", "\xc3\xa9t\xc3\xa9");
	/* a malformed escape stays as it came */
	expect("token=%zz1", "%zz1");
}

static void test_absent(void **state)
{
	expect("", NULL);
	expect("tokens=abc", NULL);
	expect("xtoken=abc&y=1", NULL);
	expect("token", NULL);
	expect("&&&", NULL);
}

/* Only @len bytes are read: the body is not NUL-terminated for us. */
static void test_length(void **state)
{
	char *t = ibw_signin_form_token("token=abcdef", 9);

	assert_non_null(t);
	assert_string_equal(t, "abc");
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_decoded),
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
