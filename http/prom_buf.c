// SPDX-License-Identifier: BSD-2-Clause
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "links.h"
#include "prom_buf.h"

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
		if (b->sink(b->sink_arg, b->p, b->len) < 0) {
			b->oom = 1;
			return -1;
		}
		b->len = 0;
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
