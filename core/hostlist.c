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

/* "1-3,07,10-12" between @s and @e into @t's group @g. */
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
			/* a padded lower bound pads the upper one alike */
			if (p[0] == '0' && wl > 1 && wh != wl)
				return -EINVAL;
		} else {
			if (digits(p, end, &r->lo, &wl))
				return -EINVAL;
			r->hi = r->lo;
		}
		/* zero padding: a lower bound with a leading zero sets the
		 * width, as Slurm prints it */
		r->width = p[0] == '0' && wl > 1 ? wl : 0;
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

/* Every name of @t from group @g on, @buf holding @len bytes so far. */
static long emit(const struct term *t, unsigned g, char *buf, size_t len,
		 int (*cb)(const char *, void *), void *arg)
{
	unsigned i;
	unsigned long v;
	long rc;

	if (len + t->litlen[g] >= IBW_HOSTLIST_NAME)
		return -E2BIG;
	memcpy(buf + len, t->lit[g], t->litlen[g]);
	len += t->litlen[g];
	if (g == t->ng) {
		buf[len] = '\0';
		return cb ? cb(buf, arg) : 0;
	}
	for (i = 0; i < t->nr[g]; i++)
		for (v = t->r[g][i].lo; v <= t->r[g][i].hi; v++) {
			int n = snprintf(buf + len, IBW_HOSTLIST_NAME - len,
					 "%0*lu", t->r[g][i].width, v);

			if (n < 0 || len + (size_t)n >= IBW_HOSTLIST_NAME)
				return -E2BIG;
			rc = emit(t, g + 1, buf, len + (size_t)n, cb, arg);
			if (rc)
				return rc;
		}
	return 0;
}

/* The end of the term starting at @p: the next comma outside brackets. */
static const char *term_end(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']')
			depth--;
		else if (*p == ',' && depth == 0)
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
					rc = emit(t, 0, buf, 0, NULL, NULL);
			} else {
				rc = emit(t, 0, buf, 0, cb, arg);
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
