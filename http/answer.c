// SPDX-License-Identifier: BSD-2-Clause
/*
 * Answers: status titles, JSON bodies and problem documents (RFC 9457)
 * for the handlers of http/routes.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"

static const char *title(unsigned code)
{
	switch (code) {
	case 303:
		return "See Other";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 413:
		return "Content Too Large";
	case 406:
		return "Not Acceptable";
	case 429:
		return "Too Many Requests";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	}
	return "Error";
}

void ibw_hreq_set_json(struct ibw_hreq *r, unsigned code, json_t *j)
{
	free(r->body);
	r->body = ibw_json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(j);
	r->len = r->body ? strlen(r->body) : 0;
	r->code = code;
	r->ctype = "application/json";
}

/* A 200 with the document of @w (ended); 503 if it ran out of memory. */
void ibw_hreq_set_written(struct ibw_hreq *r, struct ibw_jw *w)
{
	free(r->body);
	r->body = ibw_jw_finish(w, &r->len);
	if (!r->body) {
		ibw_hreq_problem(r, 503, "out of memory");
		return;
	}
	r->code = 200;
	r->ctype = "application/json";
}

/*
 * Replace each byte of @s that is not part of valid UTF-8 with '?': a
 * detail quotes what the client sent, and JSON strings must be UTF-8.
 */
static void utf8_clean(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		unsigned n, lo = 0x80, hi = 0xbf, i;

		if (*p < 0x80) {
			p++;
			continue;
		}
		if (*p >= 0xc2 && *p <= 0xdf) {
			n = 1;
		} else if (*p >= 0xe0 && *p <= 0xef) {
			n = 2;
			if (*p == 0xe0)
				lo = 0xa0; /* no overlong forms */
			if (*p == 0xed)
				hi = 0x9f; /* no surrogates */
		} else if (*p >= 0xf0 && *p <= 0xf4) {
			n = 3;
			if (*p == 0xf0)
				lo = 0x90;
			if (*p == 0xf4)
				hi = 0x8f; /* nothing above U+10FFFF */
		} else {
			*p++ = '?';
			continue;
		}
		for (i = 1; i <= n; i++) {
			unsigned a = i == 1 ? lo : 0x80, b = i == 1 ? hi : 0xbf;

			if (p[i] < a || p[i] > b)
				break;
		}
		if (i <= n) {
			*p++ = '?';
			continue;
		}
		p += n + 1;
	}
}

static void problem(struct ibw_hreq *r, unsigned code, const char *key,
		    json_t *ext, const char *fmt, va_list ap)
{
	char detail[512];
	json_t *j;

	vsnprintf(detail, sizeof(detail), fmt, ap);
	utf8_clean(detail);
	j = json_pack("{s:s, s:s, s:i, s:s}", "type", "about:blank", "title",
		      title(code), "status", code, "detail", detail);
	if (key && ext)
		json_object_set_new(j, key, ext);
	ibw_hreq_set_json(r, code, j);
	r->ctype = "application/problem+json";
}

/* RFC 9457 problem details. */
void ibw_hreq_problem(struct ibw_hreq *r, unsigned code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	problem(r, code, NULL, NULL, fmt, ap);
	va_end(ap);
}

/* ... with an extension member: what the probe found before it gave up. */
void ibw_hreq_problem_ext(struct ibw_hreq *r, unsigned code, const char *key,
			  json_t *ext, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	problem(r, code, key, ext, fmt, ap);
	va_end(ap);
}
