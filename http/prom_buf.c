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

static int xput(struct ibw_pb *b, const char *s, size_t n)
{
	if (b->xlen + n > b->xcap) {
		size_t cap = (b->xcap + n) * 2;
		char *np = realloc(b->x, cap);

		if (!np)
			return -1;
		b->x = np;
		b->xcap = cap;
	}
	memcpy(b->x + b->xlen, s, n);
	b->xlen += n;
	return 0;
}

/* Where a line of the text handed on is (xst). */
enum { X_START, X_NAME, X_BRACE, X_REST };

/*
 * @n bytes of text at @in into b->x with the label put in: after a
 * sample name's `{` (and a comma unless the braces are empty), or as
 * `{label}` after a name with none. Comments and the rest of each line
 * are copied whole. Pieces may end anywhere: xst and xpm (how much of
 * "ibwatch_" the name began with, -1 not) carry over.
 */
static int relabel(struct ibw_pb *b, const char *in, size_t n)
{
	static const char pre[] = "ibwatch_";
	const char *end = in + n;
	size_t ll = strlen(b->xlabel);
	int rc = 0;

	b->xlen = 0;
	while (in < end && !rc) {
		const char *nl;
		char c = *in;
		int on;

		switch (b->xst) {
		case X_REST:
			nl = memchr(in, '\n', (size_t)(end - in));
			n = nl ? (size_t)(nl - in) + 1 : (size_t)(end - in);
			rc = xput(b, in, n);
			in += n;
			if (nl)
				b->xst = X_START;
			continue;
		case X_BRACE:
			rc = c == '}' ? 0 : xput(b, ",", 1);
			b->xst = X_REST;
			continue;
		case X_START:
			if (c == '#' || c == '\n') {
				b->xst = c == '#' ? X_REST : X_START;
				rc = xput(b, in++, 1);
				continue;
			}
			b->xst = X_NAME;
			b->xpm = 0;
			break;
		default:
			break;
		}
		on = b->xall || b->xpm == (int)sizeof(pre) - 1;
		if (c == '{') {
			rc = xput(b, "{", 1);
			if (on && !rc)
				rc = xput(b, b->xlabel, ll);
			b->xst = on ? X_BRACE : X_REST;
			in++;
		} else if (c == ' ') {
			if (on)
				rc = xput(b, "{", 1) ||
				     xput(b, b->xlabel, ll) || xput(b, "}", 1);
			b->xst = X_REST;
		} else {
			if (b->xpm >= 0 && b->xpm < (int)sizeof(pre) - 1)
				b->xpm = c == pre[b->xpm] ? b->xpm + 1 : -1;
			rc = xput(b, in++, 1);
		}
	}
	return rc;
}

int ibw_pb_flush(struct ibw_pb *b)
{
	const char *p = b->p;
	size_t n = b->len;

	if (b->oom)
		return -1;
	if (!n)
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
		if (relabel(b, b->p, b->len) < 0 || xput(b, "", 1) < 0) {
			b->oom = 1;
		} else {
			free(b->p);
			b->p = b->x;
			b->len = b->xlen - 1;
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
