// SPDX-License-Identifier: BSD-2-Clause
/*
 * Where the option parsers' errors go (opt_table.h): the caller's
 * buffer, each line prefixed with where the option came from; and the
 * number parser every row shares. Below both the table's own parsers
 * (opt_table.c) and the reader (options.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt_err.h"

/* Where errors go while parsing: the caller's buffer, each line
 * prefixed with where it comes from. */
static struct {
	char *buf;
	size_t len, cap;
	char where[512];
	int in_file;
	unsigned n;
} sink;

void ibw_opt_sink(char *buf, size_t cap)
{
	memset(&sink, 0, sizeof(sink));
	sink.buf = buf;
	sink.cap = cap;
	if (buf && cap)
		buf[0] = '\0';
}

void ibw_opt_where(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sink.where, sizeof(sink.where), fmt, ap);
	va_end(ap);
}

void ibw_opt_in_file(int in_file)
{
	sink.in_file = in_file;
}

void ibw_opt_err(const char *fmt, ...)
{
	char msg[512];
	const char *m = msg;
	size_t n;
	va_list ap;
	int w;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	/* In the file, options are named without their dashes. */
	if (sink.in_file && !strncmp(m, "--", 2))
		m += 2;
	sink.n++;
	if (!sink.buf || sink.len >= sink.cap)
		return;
	w = snprintf(sink.buf + sink.len, sink.cap - sink.len, "%s: %s\n",
		     sink.where, m);
	if (w > 0)
		sink.len += (size_t)w < sink.cap - sink.len
				    ? (size_t)w
				    : sink.cap - sink.len - 1;
}

int ibw_opt_parse_uint(const char *opt, const char *s, unsigned long long max,
		       unsigned long long *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > max) {
		ibw_opt_err("%s: '%s' is not a number in 0..%llu\n", opt, s,
			    max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}
