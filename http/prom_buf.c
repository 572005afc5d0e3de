// SPDX-License-Identifier: BSD-2-Clause
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "links.h"
#include "prom_buf.h"

void ibw_pb_fabric_label(struct ibw_pb *b, const char *id, int all)
{
	b->xlabel[0] = '\0';
	b->xall = all;
	if (id && *id)
		snprintf(b->xlabel, sizeof(b->xlabel), "fabric=\"%s\"", id);
}

/* Where a line of the text handed on is (xst). */
enum { X_START, X_NAME, X_BRACE, X_REST };

/* Where the sample name at @in ends: its `{`, the space before its
 * value, or a newline; @end when the piece ends first. */
static const char *name_end(const char *in, const char *end)
{
	const char *lim = end - in > 256 ? in + 256 : end, *q = lim, *c;

	/* names are short: three bounded scans beat one byte by byte */
	if ((c = memchr(in, '{', (size_t)(lim - in))))
		q = c;
	if ((c = memchr(in, ' ', (size_t)(q - in))))
		q = c;
	if ((c = memchr(in, '\n', (size_t)(q - in))))
		q = c;
	if (q == lim && lim < end)
		while (q < end && *q != '{' && *q != ' ' && *q != '\n')
			q++;
	return q;
}

/*
 * @n bytes of text at @in into b->x (b->xlen of them) with the label put
 * in: after a sample name's `{` (and a comma unless the braces are
 * empty), or as `{label}` after a name with none. Comments and the rest
 * of each line are copied whole. Pieces may end anywhere: xst and xpm
 * (how much of "ibwatch_" the name began with, -1 not) carry over.
 * Room for the label on every line is taken first, so that the copy
 * itself is plain memcpy (it runs over every byte of /metrics).
 */
static int relabel(struct ibw_pb *b, const char *in, size_t n)
{
	static const char pre[] = "ibwatch_";
	const int plen = (int)sizeof(pre) - 1;
	const char *end = in + n, *p, *q;
	size_t ll = strlen(b->xlabel), lines = 1, need;
	char *o;

	for (p = in; (p = memchr(p, '\n', (size_t)(end - p))); p++)
		lines++;
	need = n + lines * (ll + 3);
	if (need > b->xcap) {
		char *np = realloc(b->x, need);

		if (!np)
			return -1;
		b->x = np;
		b->xcap = need;
	}
	o = b->x;
	while (in < end) {
		int on;

		switch (b->xst) {
		case X_REST:
			p = memchr(in, '\n', (size_t)(end - in));
			q = p ? p + 1 : end;
			memcpy(o, in, (size_t)(q - in));
			o += q - in;
			in = q;
			if (p)
				b->xst = X_START;
			continue;
		case X_BRACE:
			if (*in != '}')
				*o++ = ',';
			b->xst = X_REST;
			continue;
		case X_START:
			if (*in == '#') {
				b->xst = X_REST;
				continue;
			}
			if (*in == '\n') {
				*o++ = *in++;
				continue;
			}
			b->xst = X_NAME;
			b->xpm = 0;
			break;
		default:
			break;
		}
		/* the name, or as much of it as this piece has */
		q = name_end(in, end);
		if (b->xpm == 0 && q - in >= plen)
			b->xpm = memcmp(in, pre, (size_t)plen) ? -1 : plen;
		for (p = in; p < q && b->xpm >= 0 && b->xpm < plen; p++)
			b->xpm = *p == pre[b->xpm] ? b->xpm + 1 : -1;
		memcpy(o, in, (size_t)(q - in));
		o += q - in;
		in = q;
		if (in == end)
			break;
		on = b->xall || b->xpm == plen;
		b->xst = X_REST;
		if (*in == '{') {
			*o++ = *in++;
			if (on) {
				memcpy(o, b->xlabel, ll);
				o += ll;
				b->xst = X_BRACE;
			}
		} else if (*in == ' ' && on) {
			*o++ = '{';
			memcpy(o, b->xlabel, ll);
			o += ll;
			*o++ = '}';
		}
	}
	b->xlen = (size_t)(o - b->x);
	return 0;
}

int ibw_pb_flush(struct ibw_pb *b)
{
	const char *p = b->p;
	size_t n = b->len;

	if (b->oom)
		return -1;
	if (!n || !b->sink)
		return 0;
	if (b->xlabel[0]) {
		if (relabel(b, b->p, b->len) < 0) {
			b->oom = 1;
			return -1;
		}
		p = b->x;
		n = b->xlen;
	}
	if (b->sink(b->sink_arg, p, n) < 0) {
		b->oom = 1;
		return -1;
	}
	b->len = 0;
	return 0;
}

/* Room for @n more bytes and a NUL; 0, or -1 (and b->oom) if none. */
static int grow(struct ibw_pb *b, size_t n)
{
	size_t cap;
	char *np;

	if (b->oom)
		return -1;
	if (b->len + n + 1 <= b->cap)
		return 0;
	if (b->sink && b->len && b->len + n + 1 > b->hold) {
		if (ibw_pb_flush(b) < 0)
			return -1;
		if (n + 1 <= b->cap)
			return 0;
	}
	cap = (b->cap + n + 1) * 2;
	np = realloc(b->p, cap);
	if (!np) {
		b->oom = 1;
		return -1;
	}
	b->p = np;
	b->cap = cap;
	return 0;
}

void ibw_pb_put(struct ibw_pb *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	/* a buffer not yet allocated: NULL + 0 is no pointer to write at */
	if (b->oom || (!b->p && grow(b, 64) < 0))
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		if (grow(b, (size_t)n) < 0)
			return;
	}
}

void ibw_pb_mem(struct ibw_pb *b, const char *s, size_t n)
{
	if (grow(b, n) < 0)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void ibw_pb_u64(struct ibw_pb *b, uint64_t v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	ibw_pb_mem(b, tmp + i, sizeof(tmp) - (size_t)i);
}

void ibw_pb_label(struct ibw_pb *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			ibw_pb_put(b, "\\\\");
		else if (*s == '"')
			ibw_pb_put(b, "\\\"");
		else if (*s == '\n')
			ibw_pb_put(b, "\\n");
		else
			ibw_pb_put(b, "%c", *s);
	}
}

void ibw_pb_family(struct ibw_pb *b, const char *name, const char *type,
		   const char *help)
{
	size_t n = strlen(name);

	/* OpenMetrics names a counter family without its _total. */
	if (b->om && !strcmp(type, "counter") && n > 6 &&
	    !strcmp(name + n - 6, "_total"))
		n -= 6;
	ibw_pb_put(b, "# HELP %.*s %s\n# TYPE %.*s %s\n", (int)n, name, help,
		   (int)n, name, type);
}

char *ibw_pb_finish(struct ibw_pb *b, size_t *len)
{
	if (!b->oom && b->xlabel[0] && b->len) {
		/* the text with the label, NUL-terminated, in place of it */
		/* (room for its NUL: one line's label is never all used) */
		if (relabel(b, b->p, b->len) < 0) {
			b->oom = 1;
		} else {
			free(b->p);
			b->p = b->x;
			b->len = b->xlen;
			b->p[b->len] = '\0';
			b->cap = b->xcap;
			b->x = NULL;
		}
	}
	free(b->x);
	b->x = NULL;
	if (b->oom) {
		free(b->p);
		return NULL;
	}
	if (!b->p) {
		b->p = calloc(1, 1);
		if (!b->p)
			return NULL;
	}
	*len = b->len;
	return b->p;
}

void ibw_prom_link_labels(struct ibw_pb *b, const char *name,
			  const struct ibw_link *k)
{
	ibw_pb_put(b, "%s{guid=\"0x%016" PRIx64 "\",port=\"%u\"", name,
		   k->end[0].guid, (unsigned)k->end[0].port);
	ibw_pb_put(b, ",remote_guid=\"0x%016" PRIx64 "\",remote_port=\"%u\"",
		   k->end[1].guid, (unsigned)k->end[1].port);
}
