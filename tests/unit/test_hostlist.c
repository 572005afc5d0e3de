// SPDX-License-Identifier: BSD-2-Clause
/*
 * Slurm hostlist expressions (core/hostlist.h): a table of cases, each
 * as `scontrol show hostnames` (Slurm 22.05) expands it; the slurm test
 * (tests/integration/slurm.sh) asks scontrol itself again, and
 * hostlist_scontrol compares 10,000 generated expressions with it.
 * Malformed expressions are refused and nothing is called; the bounds
 * hold.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "hostlist.h"

struct out {
	char buf[4096];
	size_t len;
	long calls;
};

static int add(const char *name, void *arg)
{
	struct out *o = arg;
	int n = snprintf(o->buf + o->len, sizeof(o->buf) - o->len, "%s%s",
			 o->len ? " " : "", name);

	if (n > 0 && o->len + (size_t)n < sizeof(o->buf))
		o->len += (size_t)n;
	o->calls++;
	return 0;
}

static const struct {
	const char *expr, *want;
} cases[] = {
	{ "node[0001-0003,0007]", "node0001 node0002 node0003 node0007" },
	{ "gpu[1-2]-ib[01-02]", "gpu1-ib01 gpu1-ib02 gpu2-ib01 gpu2-ib02" },
	{ "n[08-11]", "n08 n09 n10 n11" },
	{ "n[8-11]", "n8 n9 n10 n11" },
	{ "node[009-011]", "node009 node010 node011" },
	{ "a,b[1-3],c", "a b1 b2 b3 c" },
	{ "x[0]", "x0" },
	{ "rack[1-2]n[001-002]", "rack1n001 rack1n002 rack2n001 rack2n002" },
	{ "node[1-03]", "node1 node2 node3" },
	{ "n[00-02]", "n00 n01 n02" },
	{ "n[1,1]", "n1 n1" },
	{ "a,,b", "a b" },
	{ ",a,", "a" },
	{ "", "" },
	{ "node0001", "node0001" },
	{ "[1-2]", "1 2" },
	/* widths as Slurm: the lower bound's digits, the upper bound free */
	{ "n[1-03]", "n1 n2 n3" },
	{ "n[001-1]", "n001" },
	{ "n[9-011]", "n9 n10 n11" },
	{ "n[098-101]", "n098 n099 n100 n101" },
	{ "n[1-2]x[01-10]",
	  "n1x01 n1x02 n1x03 n1x04 n1x05 n1x06 n1x07 n1x08 n1x09 n1x10 "
	  "n2x01 n2x02 n2x03 n2x04 n2x05 n2x06 n2x07 n2x08 n2x09 n2x10" },
	/* scontrol's separators: a comma, a space, a tab */
	{ "a b\tc[1-2]", "a b c1 c2" },
	/* several groups: the last varies fastest, then the first, ... */
	{ "a[1-2]b[1-2]c[1-2]",
	  "a1b1c1 a1b1c2 a2b1c1 a2b1c2 a1b2c1 a1b2c2 a2b2c1 a2b2c2" },
};

static void test_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct out o = { .len = 0 };
		long n = ibw_hostlist_expand(cases[i].expr, add, &o);

		print_message("%s -> %s\n", cases[i].expr, o.buf);
		assert_string_equal(o.buf, cases[i].want);
		assert_int_equal(n, o.calls);
	}
}

/* node01..node100 as Slurm's own compressor writes it */
static void test_wider_upper_bound(void **state)
{
	struct out o = { .len = 0 };
	long n = ibw_hostlist_expand("node[01-100]", add, &o);

	(void)state;
	assert_int_equal(n, 100);
	assert_int_equal(o.calls, 100);
	assert_memory_equal(o.buf, "node01 node02 ", 14);
	assert_non_null(strstr(o.buf, " node09 node10 "));
	assert_non_null(strstr(o.buf, " node99 node100"));
	assert_string_equal(o.buf + o.len - 15, " node99 node100");
	assert_int_equal(ibw_hostlist_expand("n[001-1000]", NULL, NULL), 1000);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"n[3-1]",      "n[1-2",	   "n1]",    "n[01-2]x", "a[1-2]b,c",
		"n[[1]]",      "n[]",	   "n[a-b]", "n[1-]",	 "n[-1]",
		"n[1,,2]",     "n[1-2-3]", "n]1[",   "n[ 1]",	 "n[+1]",
		"n[1-2]x[1]y", NULL,
	};
	size_t i;

	(void)state;
	for (i = 0; bad[i]; i++) {
		struct out o = { .len = 0 };

		assert_int_equal(ibw_hostlist_expand(bad[i], add, &o), -EINVAL);
		assert_int_equal(o.calls, 0);
	}
	assert_int_equal(ibw_hostlist_expand(NULL, add, NULL), -EINVAL);
}

static int stop_at_3(const char *name, void *arg)
{
	(void)name;
	return ++*(int *)arg == 3 ? 7 : 0;
}

static void test_bounds(void **state)
{
	char name[400];
	int n = 0;

	(void)state;
	/* 1000 x 1000 x 2 names: over the bound, refused before any call */
	assert_int_equal(ibw_hostlist_expand("a[1-1000]b[1-1000]c[1-2]",
					     stop_at_3, &n),
			 -E2BIG);
	assert_int_equal(n, 0);
	/* the callback's stop */
	assert_int_equal(ibw_hostlist_expand("a[1-10]", stop_at_3, &n), 7);
	assert_int_equal(n, 3);
	/* a name longer than IBW_HOSTLIST_NAME */
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(ibw_hostlist_expand(name, NULL, NULL), -E2BIG);
	/* Slurm's bound on one range: 65536 names */
	assert_int_equal(ibw_hostlist_expand("n[1-65536]", NULL, NULL), 65536);
	assert_int_equal(ibw_hostlist_expand("n[0-65536]", NULL, NULL), -E2BIG);
	/* the count without a callback */
	assert_int_equal(ibw_hostlist_expand("n[1-1000]", NULL, NULL), 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_wider_upper_bound),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
