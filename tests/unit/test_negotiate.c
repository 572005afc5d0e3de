// SPDX-License-Identifier: BSD-2-Clause
/*
 * Accept and Accept-Encoding with q-values: what /metrics and the API
 * choose from the headers real clients send.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "negotiate.h"

#define OM "application/openmetrics-text"

/* Prometheus 2.x's scrape Accept header. */
static const char prom_accept[] =
	"application/openmetrics-text;version=1.0.0,application/"
	"openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
	"q=0.5,*/*;q=0.1";

static void test_media(void **state)
{
	int exact;

	(void)state;
	assert_int_equal(ibw_neg_media_q(prom_accept, OM, &exact), 1000);
	assert_true(exact);
	assert_int_equal(ibw_neg_media_q(prom_accept, "text/plain", NULL), 500);
	assert_int_equal(
		ibw_neg_media_q(prom_accept, "application/json", &exact), 100);
	assert_false(exact);
	/* no header: anything goes; a wildcard names nothing exactly */
	assert_int_equal(ibw_neg_media_q(NULL, OM, &exact), 1000);
	assert_false(exact);
	assert_int_equal(ibw_neg_media_q("*/*", OM, &exact), 1000);
	assert_false(exact);
	/* the most specific range decides, whatever its order */
	assert_int_equal(ibw_neg_media_q("text/plain;q=0, text/*", "text/plain",
					 NULL),
			 0);
	assert_int_equal(ibw_neg_media_q("text/*;q=0.3, */*;q=0.9",
					 "text/plain", NULL),
			 300);
	assert_int_equal(ibw_neg_media_q("text/html", "application/json", NULL),
			 0);
	/* case, spaces, other parameters, odd q-values */
	assert_int_equal(ibw_neg_media_q(" Application/JSON ; charset=utf-8 ;"
					 " q=0.25 ",
					 "application/json", NULL),
			 250);
	assert_int_equal(
		ibw_neg_media_q("text/plain;q=1.0", "text/plain", NULL), 1000);
	assert_int_equal(
		ibw_neg_media_q("text/plain;q=0.000", "text/plain", NULL), 0);
	/* malformed q: taken as 1, never as a refusal */
	assert_int_equal(ibw_neg_media_q("text/plain;q=x", "text/plain", NULL),
			 1000);
}

static void test_coding(void **state)
{
	(void)state;
	assert_int_equal(ibw_neg_coding_q("gzip", "gzip"), 1000);
	assert_int_equal(ibw_neg_coding_q("gzip;q=0", "gzip"), 0);
	assert_int_equal(ibw_neg_coding_q("deflate, gzip;q=0.5", "gzip"), 500);
	assert_int_equal(ibw_neg_coding_q("*", "gzip"), 1000);
	assert_int_equal(ibw_neg_coding_q("*;q=0, gzip", "gzip"), 1000);
	assert_int_equal(ibw_neg_coding_q("br", "gzip"), 0);
	/* "gzipped" is not gzip */
	assert_int_equal(ibw_neg_coding_q("gzipped", "gzip"), 0);
	/* identity: acceptable unless refused */
	assert_int_equal(ibw_neg_coding_q(NULL, "identity"), 1000);
	assert_int_equal(ibw_neg_coding_q(NULL, "gzip"), 0);
	/* unlisted: acceptable, but below any coding listed */
	assert_int_equal(ibw_neg_coding_q("gzip;q=0.5", "identity"), 1);
	assert_int_equal(ibw_neg_coding_q("gzip, identity;q=0", "identity"), 0);
	assert_int_equal(ibw_neg_coding_q("*;q=0", "identity"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_media),
		cmocka_unit_test(test_coding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
