// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

/* One bracket group's ranges: lo..hi, printed at least @width wide. */
struct range {
	unsigned long lo, hi;
	int width;
};

/* A name: literal pieces and the bracket groups between them. */
#define MAX_GROUPS 8
#define MAX_RANGES 256

struct term {
	const char *lit[MAX_GROUPS + 1]; /* literal text before group i */
	size_t litlen[MAX_GROUPS + 1];
	struct range r[MAX_GROUPS][MAX_RANGES];
	unsigned nr[MAX_GROUPS];
	unsigned ng;
};

static int digits(const char *s, const char *e, unsigned long *v, int *w)
{
	unsigned long x = 0;
	const char *p;

	if (s == e || e - s > 18)
		return -EINVAL;
	for (p = s; p < e; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		x = x * 10 + (unsigned long)(*p - '0');
	}
	*v = x;
	*w = (int)(e - s);
	return 0;
}

/*
 * Slurm refuses a range of more hosts than this ("Too many hosts in
 * range"), whatever the list's total.
 */
#define SLURM_MAX_RANGE 65536

/*
 * "1-3,07,10-12" between @s and @e into @t's group @g. As Slurm's
 * _parse_single_range: the width is the lower bound's digit count, the
 * upper bound's is free ("01-100" is 01..100, "1-03" 1..3, "001-1" 001).
 */
static int parse_group(const char *s, const char *e, struct term *t, unsigned g)
{
	const char *p = s;

	while (p <= e) {
		const char *c = memchr(p, ',', (size_t)(e - p));
		const char *end = c ? c : e;
		const char *dash = memchr(p, '-', (size_t)(end - p));
		struct range *r;
		int wl, wh;

		if (t->nr[g] == MAX_RANGES)
			return -E2BIG;
		r = &t->r[g][t->nr[g]++];
		if (dash) {
			if (digits(p, dash, &r->lo, &wl) ||
			    digits(dash + 1, end, &r->hi, &wh) || r->hi < r->lo)
				return -EINVAL;
			if (r->hi - r->lo >= SLURM_MAX_RANGE)
				return -E2BIG;
		} else {
			if (digits(p, end, &r->lo, &wl))
				return -EINVAL;
			r->hi = r->lo;
		}
		r->width = wl;
		if (!c)
			break;
		p = c + 1;
	}
	return 0;
}

/* One comma-separated term, @s to @e. */
static int parse_term(const char *s, const char *e, struct term *t)
{
	const char *p = s, *lb;
	int rc;

	memset(t->nr, 0, sizeof(t->nr));
	t->ng = 0;
	if (s == e)
		return -EINVAL;
	while ((lb = memchr(p, '[', (size_t)(e - p)))) {
		const char *rb = memchr(lb, ']', (size_t)(e - lb));

		if (!rb || t->ng == MAX_GROUPS ||
		    memchr(lb + 1, '[', (size_t)(rb - lb - 1)))
			return -EINVAL;
		t->lit[t->ng] = p;
		t->litlen[t->ng] = (size_t)(lb - p);
		rc = parse_group(lb + 1, rb, t, t->ng);
		if (rc)
			return rc;
		t->ng++;
		p = rb + 1;
	}
	if (memchr(p, ']', (size_t)(e - p)))
		return -EINVAL;
	/* Slurm refuses text after the last group ("n[1-2]x") */
	if (t->ng && p != e)
		return -EINVAL;
	t->lit[t->ng] = p;
	t->litlen[t->ng] = (size_t)(e - p);
	return 0;
}

/* The number of names @t makes, saturating at IBW_HOSTLIST_MAX + 1. */
static unsigned long count(const struct term *t)
{
	unsigned long n = 1, m;
	unsigned g, i;

	for (g = 0; g < t->ng; g++) {
		m = 0;
		for (i = 0; i < t->nr[g]; i++) {
			m += t->r[g][i].hi - t->r[g][i].lo + 1;
			if (m > IBW_HOSTLIST_MAX)
				return IBW_HOSTLIST_MAX + 1;
		}
		n *= m;
		if (n > IBW_HOSTLIST_MAX)
			return IBW_HOSTLIST_MAX + 1;
	}
	return n;
}

/* The @k-th number of group @g: its value and width. */
static void nth(const struct term *t, unsigned g, unsigned long k,
		unsigned long *v, int *w)
{
	unsigned i;

	for (i = 0; i < t->nr[g]; i++) {
		unsigned long m = t->r[g][i].hi - t->r[g][i].lo + 1;

		if (k < m) {
			*v = t->r[g][i].lo + k;
			*w = t->r[g][i].width;
			return;
		}
		k -= m;
	}
	*v = 0;
	*w = 0;
}

static unsigned long group_size(const struct term *t, unsigned g)
{
	unsigned long m = 0;
	unsigned i;

	for (i = 0; i < t->nr[g]; i++)
		m += t->r[g][i].hi - t->r[g][i].lo + 1;
	return m;
}

/*
 * Every name of @t, in scontrol's order: the last group varies fastest,
 * then the first, the second, and so on (a[1-2]b[1-2]c[1-2] gives a1b1c1
 * a1b1c2 a2b1c1 a2b1c2 a1b2c1 ...).
 */
static long emit(const struct term *t, char *buf,
		 int (*cb)(const char *, void *), void *arg)
{
	unsigned long d[MAX_GROUPS], m[MAX_GROUPS];
	unsigned ord[MAX_GROUPS], g, i;
	long rc;

	for (g = 0; g < t->ng; g++) {
		d[g] = 0;
		m[g] = group_size(t, g);
		if (!m[g])
			return 0;
	}
	if (t->ng) {
		ord[0] = t->ng - 1;
		for (g = 0; g + 1 < t->ng; g++)
			ord[g + 1] = g;
	}
	for (;;) {
		size_t len = 0;

		for (g = 0; g <= t->ng; g++) {
			unsigned long v;
			int w, n;

			if (len + t->litlen[g] >= IBW_HOSTLIST_NAME)
				return -E2BIG;
			memcpy(buf + len, t->lit[g], t->litlen[g]);
			len += t->litlen[g];
			if (g == t->ng)
				break;
			nth(t, g, d[g], &v, &w);
			n = snprintf(buf + len, IBW_HOSTLIST_NAME - len,
				     "%0*lu", w, v);
			if (n < 0 || len + (size_t)n >= IBW_HOSTLIST_NAME)
				return -E2BIG;
			len += (size_t)n;
		}
		buf[len] = '\0';
		rc = cb ? cb(buf, arg) : 0;
		if (rc)
			return rc;
		/* the odometer, in that order */
		for (i = 0; i < t->ng; i++) {
			g = ord[i];
			if (++d[g] < m[g])
				break;
			d[g] = 0;
		}
		if (i == t->ng)
			return 0;
	}
}

/*
 * The end of the term starting at @p: the next separator outside
 * brackets, a comma or, as scontrol, a space or a tab.
 */
static const char *term_end(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']')
			depth--;
		else if (depth == 0 && (*p == ',' || *p == ' ' || *p == '\t'))
			break;
	}
	return p;
}

long ibw_hostlist_expand(const char *expr,
			 int (*cb)(const char *name, void *arg), void *arg)
{
	struct term *t;
	char buf[IBW_HOSTLIST_NAME];
	unsigned long total = 0;
	const char *p, *e;
	long rc = 0;
	int pass;

	if (!expr)
		return -EINVAL;
	t = malloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	/* pass 0 checks and counts everything, pass 1 calls back */
	for (pass = 0; pass < 2 && rc >= 0; pass++) {
		for (p = expr; rc >= 0; p = e + 1) {
			e = term_end(p);
			if (e == p) {
				/* an empty term ("a,,b", ""): none, as Slurm */
				if (!*e)
					break;
				continue;
			}
			rc = parse_term(p, e, t);
			if (rc < 0)
				break;
			if (pass == 0) {
				total += count(t);
				if (total > IBW_HOSTLIST_MAX)
					rc = -E2BIG;
				else
					rc = emit(t, buf, NULL, NULL);
			} else {
				rc = emit(t, buf, cb, arg);
				if (rc > 0)
					break;
			}
			if (!*e)
				break;
		}
	}
	free(t);
	if (rc < 0)
		return rc;
	return rc > 0 ? rc : (long)total;
}
