// SPDX-License-Identifier: BSD-2-Clause
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "negotiate.h"

/* A q-value ("0", "0.5", "1.000") in thousandths; 1000 for anything
 * malformed, so a bad parameter never refuses what was asked for. */
static int parse_q(const char *s, size_t n)
{
	int v = 0, digits = 0;
	size_t i = 0;

	if (n && (s[0] == '0' || s[0] == '1'))
		v = (s[i++] - '0') * 1000;
	else
		return 1000;
	if (i < n && s[i] == '.') {
		int scale = 100;

		for (i++; i < n && isdigit((unsigned char)s[i]) && digits < 3;
		     i++, digits++, scale /= 10)
			v += (s[i] - '0') * scale;
	}
	return i == n && v <= 1000 ? v : 1000;
}

/* One element of a comma-separated header: its value (up to the first
 * ';', trimmed) and its q. Returns the start of the next element, NULL
 * at the end. */
static const char *element(const char *p, const char **val, size_t *vlen,
			   int *q)
{
	const char *end, *semi;

	while (*p == ' ' || *p == '\t' || *p == ',')
		p++;
	if (!*p)
		return NULL;
	end = p + strcspn(p, ",");
	semi = memchr(p, ';', (size_t)(end - p));
	*val = p;
	*vlen = (size_t)((semi ? semi : end) - p);
	while (*vlen && ((*val)[*vlen - 1] == ' ' || (*val)[*vlen - 1] == '\t'))
		(*vlen)--;
	*q = 1000;
	while (semi) {
		const char *a = semi + 1, *b;

		semi = memchr(a, ';', (size_t)(end - a));
		b = semi ? semi : end;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		if (b - a >= 2 && (a[0] == 'q' || a[0] == 'Q') && a[1] == '=') {
			size_t n = (size_t)(b - a - 2);

			while (n &&
			       (a[2 + n - 1] == ' ' || a[2 + n - 1] == '\t'))
				n--;
			*q = parse_q(a + 2, n);
		}
	}
	return end;
}

static int same(const char *a, size_t alen, const char *b)
{
	return strlen(b) == alen && !strncasecmp(a, b, alen);
}

int ibw_neg_media_q(const char *accept, const char *type, int *exact)
{
	const char *p = accept, *v;
	const char *slash = strchr(type, '/');
	size_t vlen, tlen = slash ? (size_t)(slash - type) : strlen(type);
	int q, best = -1, best_spec = -1;

	if (exact)
		*exact = 0;
	if (!accept || !*accept)
		return 1000;
	while ((p = element(p, &v, &vlen, &q))) {
		int spec = -1;

		if (same(v, vlen, type))
			spec = 2;
		else if (vlen == tlen + 2 && !strncasecmp(v, type, tlen) &&
			 !strncmp(v + tlen, "/*", 2))
			spec = 1;
		else if (same(v, vlen, "*/*"))
			spec = 0;
		if (spec < 0)
			continue;
		if (spec == 2 && exact)
			*exact = 1;
		/* The most specific range decides; among equals, the
		 * highest q. */
		if (spec > best_spec || (spec == best_spec && q > best)) {
			best_spec = spec;
			best = q;
		}
	}
	return best_spec < 0 ? 0 : best;
}

int ibw_neg_coding_q(const char *accept, const char *coding)
{
	const char *p = accept, *v;
	size_t vlen;
	int q, own = -1, star = -1;
	int identity = !strcasecmp(coding, "identity");

	if (!accept)
		return identity ? 1000 : 0;
	while ((p = element(p, &v, &vlen, &q))) {
		if (same(v, vlen, coding))
			own = own > q ? own : q;
		else if (same(v, vlen, "*"))
			star = star > q ? star : q;
	}
	if (own >= 0)
		return own;
	if (star >= 0)
		return star;
	/* Unlisted identity stays acceptable (RFC 9110 12.5.3), but as the
	 * least wanted: "gzip;q=0.5" still asks for gzip. */
	return identity ? 1 : 0;
}
