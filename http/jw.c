// SPDX-License-Identifier: BSD-2-Clause
/*
 * The JSON writer (json.h, struct ibw_jw): documents written element by
 * element into a buffer or a stream, byte for byte as jansson's
 * json_dumps() would write the same tree; and the values the jansson
 * trees share with it.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jw.h"

/* The JSON values the trees (json.c and the rest) and the writer share:
 * a GUID as text, a 64-bit count exact, the dump that writes it bare. */

json_t *ibw_json_guid(uint64_t guid)
{
	char buf[19];

	snprintf(buf, sizeof(buf), "0x%016" PRIx64, guid);
	return json_string(buf);
}

#define U64_MARK "\x01u64:"

json_t *ibw_json_u64(uint64_t v)
{
	char buf[32];

	if (v <= (uint64_t)INT64_MAX)
		return json_integer((json_int_t)v);
	snprintf(buf, sizeof(buf), U64_MARK "%" PRIu64, v);
	return json_string(buf);
}

char *ibw_json_dumps(const json_t *j, size_t flags)
{
	/* jansson writes the mark's \x01 as the six characters \u0001. */
	static const char pat[] = "\"\\u0001u64:";
	char *s, *p, *w;

	/* Milliseconds with microseconds: no binary noise in the output. */
	if (!(flags & JSON_REAL_PRECISION(31)))
		flags |= JSON_REAL_PRECISION(12);
	s = json_dumps(j, flags);

	if (!s || !strstr(s, pat))
		return s;
	for (p = w = s; *p;) {
		if (!strncmp(p, pat, sizeof(pat) - 1)) {
			p += sizeof(pat) - 1;
			while (*p >= '0' && *p <= '9')
				*w++ = *p++;
			if (*p == '"')
				p++;
			continue;
		}
		*w++ = *p++;
	}
	*w = '\0';
	return s;
}

#define JW_STREAM_BUF 65536
/* What a part writer's buffer keeps between parts: a part is written up
 * to IBW_STREAM_PART plus one element (a switch of /api/v1/nodes is
 * about 150 KB), and giving that back after each part cost fresh pages
 * for the next. */
#define JW_KEEP_BUF (1u << 20)

void ibw_jw_init(struct ibw_jw *w)
{
	memset(w, 0, sizeof(*w));
}

void ibw_jw_release(struct ibw_jw *w)
{
	free(w->buf);
	ibw_jw_init(w);
}

void ibw_jw_init_stream(struct ibw_jw *w, FILE *f)
{
	ibw_jw_init(w);
	w->out = f;
}

/* A stream's bytes so far, out to its file. */
static void jw_flush(struct ibw_jw *w)
{
	if (w->err || !w->len)
		return;
	if (fwrite(w->buf, 1, w->len, w->out) != w->len)
		w->err = -EIO;
	w->len = 0;
}

int ibw_jw_close(struct ibw_jw *w)
{
	int rc;

	if (!w->err && (w->depth || w->keyed))
		w->err = -EINVAL;
	jw_flush(w);
	if (!w->err && fflush(w->out))
		w->err = -EIO;
	rc = w->err;
	ibw_jw_release(w);
	return rc;
}

static void jw_fail(struct ibw_jw *w, int err)
{
	if (!w->err)
		w->err = err;
}

/* Room for @n more bytes (and the NUL ibw_jw_finish() adds): where they
 * go, or NULL (the writer failed). The caller adds @n to len. */
static char *jw_room_slow(struct ibw_jw *w, size_t n)
{
	size_t cap;
	char *b;

	if (w->err)
		return NULL;
	/* A stream holds a few pages at most. */
	if (w->out && w->len + n > JW_STREAM_BUF)
		jw_flush(w);
	if (w->len + n + 1 > w->cap) {
		/* Doubling: a document of N bytes costs O(N) copying. */
		for (cap = w->cap ? w->cap : 4096; cap < w->len + n + 1;)
			cap *= 2;
		b = realloc(w->buf, cap);
		if (!b) {
			jw_fail(w, -ENOMEM);
			return NULL;
		}
		w->buf = b;
		w->cap = cap;
	}
	return w->err ? NULL : w->buf + w->len;
}

static inline char *jw_room(struct ibw_jw *w, size_t n)
{
	/* The common case first: a few bytes into a buffer with room. */
	if (!w->err && w->len + n + 1 <= w->cap &&
	    (!w->out || w->len + n <= JW_STREAM_BUF))
		return w->buf + w->len;
	return jw_room_slow(w, n);
}

static void jw_put(struct ibw_jw *w, const char *s, size_t n)
{
	char *d = jw_room(w, n);

	if (!d)
		return;
	memcpy(d, s, n);
	w->len += n;
}

/* A line break and the indentation of @depth levels (JSON_INDENT(2));
 * IBW_JW_DEPTH bounds @depth. */
static const char jw_indent[] = "\n                                ";

/* What jansson writes before a member of the innermost container: a
 * comma after the one before, then a new line at its depth. */
static void jw_member(struct ibw_jw *w)
{
	unsigned d = w->depth - 1;

	if (w->filled[d])
		jw_put(w, ",", 1);
	w->filled[d] = 1;
	jw_put(w, jw_indent, 1 + 2 * (size_t)w->depth);
}

/* 1 for the bytes jansson writes as they are: printable ASCII but '"'
 * and '\\' (0 for NUL, which ends the scan). */
#define JW_P4(c) (c) >= 0x20 && (c) <= 0x7e && (c) != '"' && (c) != '\\'
#define JW_P(c) JW_P4(c), JW_P4((c) + 1), JW_P4((c) + 2), JW_P4((c) + 3)
#define JW_P16(c) JW_P((c)), JW_P((c) + 4), JW_P((c) + 8), JW_P((c) + 12)
static const unsigned char jw_plain_byte[256] = {
	JW_P16(0x00), JW_P16(0x10), JW_P16(0x20), JW_P16(0x30),
	JW_P16(0x40), JW_P16(0x50), JW_P16(0x60), JW_P16(0x70),
};

/* Printable ASCII without '"' and '\\': what jansson writes as it is.
 * A table, since every string of a document is scanned. */
int ibw_jw_plain(const char *s, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s;

	while (jw_plain_byte[*p])
		p++;
	if (*p)
		return 0;
	*len = (size_t)(p - (const unsigned char *)s);
	return 1;
}

/* @s as jansson writes the string (quotes, escapes; malloc'ed), or NULL
 * when jansson would not make it: not UTF-8 (or out of memory). */
static char *jw_escaped(const char *s)
{
	json_t *j = json_string(s);
	char *t;

	if (!j)
		return NULL;
	t = json_dumps(j, JSON_ENCODE_ANY);
	json_decref(j);
	return t;
}

/* A plain string (ibw_jw_plain()) of @n bytes, quoted. */
static void jw_put_plain(struct ibw_jw *w, const char *s, size_t n)
{
	jw_put(w, "\"", 1);
	jw_put(w, s, n);
	jw_put(w, "\"", 1);
}

/* Whether @key is plain (ibw_jw_plain()), and its length: remembered by
 * address, since a document writes the same few dozen keys over and
 * over (ibw_jw_key() says a key must not change). */
static int jw_plain_key(struct ibw_jw *w, const char *key, size_t *len)
{
	/* Fibonacci hashing (the product's top bits): literals sit a few
	 * bytes apart. */
	uint64_t a = (uintptr_t)key * UINT64_C(0x9e3779b97f4a7c15);
	unsigned h = (unsigned)(a >> (64 - IBW_JW_KEY_BITS));

	if (w->plain[h].key == key) {
		*len = w->plain[h].len;
		return 1;
	}
	if (!ibw_jw_plain(key, len))
		return 0;
	w->plain[h].key = key;
	w->plain[h].len = *len;
	return 1;
}

/* What goes before a member's value: the separator, the new line, its
 * key and ": ", in one piece for a plain key (all of ours). */
static void jw_keyed_member(struct ibw_jw *w)
{
	unsigned d = w->depth - 1;
	size_t kn, ind = 1 + 2 * (size_t)w->depth, n;
	char *p;

	if (!jw_plain_key(w, w->key, &kn)) {
		p = jw_escaped(w->key);
		/* Ours are constants: one jansson refuses is a bug (or
		 * memory ran out). */
		if (!p) {
			jw_fail(w, -EINVAL);
			return;
		}
		jw_member(w);
		jw_put(w, p, strlen(p));
		jw_put(w, ": ", 2);
		free(p);
		return;
	}
	n = (w->filled[d] ? 1 : 0) + ind + kn + 4;
	p = jw_room(w, n);
	if (!p)
		return;
	if (w->filled[d])
		*p++ = ',';
	w->filled[d] = 1;
	memcpy(p, jw_indent, ind);
	p += ind;
	*p++ = '"';
	memcpy(p, w->key, kn);
	p += kn;
	memcpy(p, "\": ", 3);
	w->len += n;
}

/* Whether a value may come now, and what goes before it: the member's
 * separator and key, or the element's separator. */
static int jw_before_value(struct ibw_jw *w)
{
	if (w->err)
		return -1;
	if (w->keyed) {
		w->keyed = 0;
		jw_keyed_member(w);
		return w->err ? -1 : 0;
	}
	if (!w->depth) {
		/* One document per writer. */
		if (w->cap)
			jw_fail(w, -EINVAL);
		return w->err ? -1 : 0;
	}
	if (w->object[w->depth - 1]) {
		jw_fail(w, -EINVAL); /* a member without its key */
		return -1;
	}
	jw_member(w);
	return w->err ? -1 : 0;
}

static void jw_open(struct ibw_jw *w, int object)
{
	if (jw_before_value(w) < 0)
		return;
	if (w->depth == IBW_JW_DEPTH) {
		jw_fail(w, -E2BIG);
		return;
	}
	jw_put(w, object ? "{" : "[", 1);
	w->object[w->depth] = (unsigned char)object;
	w->filled[w->depth] = 0;
	w->depth++;
}

void ibw_jw_array(struct ibw_jw *w)
{
	jw_open(w, 0);
}

void ibw_jw_object(struct ibw_jw *w)
{
	jw_open(w, 1);
}

void ibw_jw_end(struct ibw_jw *w)
{
	unsigned d;

	if (w->err)
		return;
	if (!w->depth || w->keyed) {
		jw_fail(w, -EINVAL);
		return;
	}
	d = --w->depth;
	/* jansson writes an empty container as "[]" or "{}". */
	if (w->filled[d])
		jw_put(w, jw_indent, 1 + 2 * (size_t)d);
	jw_put(w, w->object[d] ? "}" : "]", 1);
}

void ibw_jw_key(struct ibw_jw *w, const char *key)
{
	if (w->err)
		return;
	if (!w->depth || !w->object[w->depth - 1] || w->keyed) {
		jw_fail(w, -EINVAL);
		return;
	}
	w->keyed = 1;
	w->key = key;
}

void ibw_jw_value(struct ibw_jw *w, json_t *v)
{
	char *t, *p, *nl;

	if (!v) {
		jw_fail(w, -ENOMEM);
		return;
	}
	if (jw_before_value(w) < 0) {
		json_decref(v);
		return;
	}
	t = ibw_json_dumps(v,
			   JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	json_decref(v);
	if (!t) {
		jw_fail(w, -ENOMEM);
		return;
	}
	/* Written alone it starts at depth 0: each of its line breaks
	 * (strings hold none: jansson escapes them) gets the depth it
	 * has in the document. */
	for (p = t; (nl = strchr(p, '\n')); p = nl + 1) {
		jw_put(w, p, (size_t)(nl - p));
		jw_put(w, jw_indent, 1 + 2 * (size_t)w->depth);
	}
	jw_put(w, p, strlen(p));
	free(t);
}

/* A value jansson would not have made: its member or element is left
 * out, as jansson leaves out a NULL. */
static void jw_leave_out(struct ibw_jw *w)
{
	if (w->err)
		return;
	if (w->keyed)
		w->keyed = 0;
	else if (!w->depth)
		jw_fail(w, -EINVAL); /* the document itself */
}

/* @n bytes of a scalar value. */
static void jw_scalar(struct ibw_jw *w, const char *s, size_t n)
{
	if (jw_before_value(w) < 0)
		return;
	jw_put(w, s, n);
}

/* "00" to "99": two digits per division, for the counters' many. */
static const char jw_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

/* The decimal digits of @v, ending at @end: where they start. */
static char *jw_digits(char *end, uint64_t v)
{
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		end -= 2;
		memcpy(end, &jw_pairs[2 * r], 2);
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, &jw_pairs[2 * v], 2);
	} else {
		*--end = (char)('0' + v);
	}
	return end;
}

void ibw_jw_u64(struct ibw_jw *w, uint64_t v)
{
	char buf[24], *e = buf + sizeof(buf), *p = jw_digits(e, v);

	jw_scalar(w, p, (size_t)(e - p));
}

void ibw_jw_int(struct ibw_jw *w, int64_t v)
{
	char buf[24], *e = buf + sizeof(buf), *p;

	if (v >= 0)
		p = jw_digits(e, (uint64_t)v);
	else {
		p = jw_digits(e, 0 - (uint64_t)v);
		*--p = '-';
	}
	jw_scalar(w, p, (size_t)(e - p));
}

void ibw_jw_real_or_null(struct ibw_jw *w, double v)
{
	if (v < 0 || !isfinite(v))
		ibw_jw_null(w);
	else
		ibw_jw_real(w, v);
}

void ibw_jw_real(struct ibw_jw *w, double v)
{
	char buf[48], *p, *q, *e;
	int n;

	/* json_real() refuses what JSON cannot hold. */
	if (!isfinite(v)) {
		jw_leave_out(w);
		return;
	}
	/* An integer of fewer than 13 digits: "%.12g" writes its digits
	 * and nothing else, jansson adds ".0" (most rates are 0). */
	if (v > -1e12 && v < 1e12 && v == (double)(int64_t)v &&
	    (v != 0 || !signbit(v))) {
		e = buf + sizeof(buf);
		*--e = '0';
		*--e = '.';
		p = jw_digits(e, (uint64_t)(v < 0 ? -v : v));
		if (v < 0)
			*--p = '-';
		jw_scalar(w, p, (size_t)(buf + sizeof(buf) - p));
		return;
	}
	n = snprintf(buf, sizeof(buf) - 3, "%.12g", v);
	if (n < 0 || (size_t)n >= sizeof(buf) - 3) {
		jw_fail(w, -EINVAL);
		return;
	}
	/* jsonp_dtostr(): a dot or an exponent, so it reads back as a
	 * real; then no '+' and no leading zeros in the exponent. */
	if (!strchr(buf, '.') && !strchr(buf, 'e')) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	p = strchr(buf, 'e');
	if (p) {
		p++;
		q = p + 1;
		if (*p == '-')
			p++;
		while (*q == '0')
			q++;
		if (q != p) {
			memmove(p, q, (size_t)(buf + n + 1 - q));
			n -= (int)(q - p);
		}
	}
	jw_scalar(w, buf, (size_t)n);
}

void ibw_jw_bool(struct ibw_jw *w, int v)
{
	if (v)
		jw_scalar(w, "true", 4);
	else
		jw_scalar(w, "false", 5);
}

void ibw_jw_null(struct ibw_jw *w)
{
	jw_scalar(w, "null", 4);
}

void ibw_jw_string(struct ibw_jw *w, const char *s)
{
	size_t n;
	char *t;

	if (s && ibw_jw_plain(s, &n)) {
		if (jw_before_value(w) == 0)
			jw_put_plain(w, s, n);
		return;
	}
	if (w->err)
		return;
	/* jansson's escaping and its UTF-8 check: what it refuses to make
	 * is left out, as the tree left it out. */
	t = s ? jw_escaped(s) : NULL;
	if (!t) {
		jw_leave_out(w);
		return;
	}
	if (jw_before_value(w) == 0)
		jw_put(w, t, strlen(t));
	free(t);
}

void ibw_jw_guid(struct ibw_jw *w, uint64_t guid)
{
	static const char hex[] = "0123456789abcdef";
	char buf[21];
	int i;

	buf[0] = '"';
	buf[1] = '0';
	buf[2] = 'x';
	for (i = 0; i < 16; i++)
		buf[3 + i] = hex[(guid >> (60 - 4 * i)) & 0xf];
	buf[19] = '"';
	jw_scalar(w, buf, 20);
}

/* "YYYY-MM-DDTHH:MM:SS" of @secs (UTC) in @buf: its length. */
static size_t time_secs_str(char *buf, size_t cap, uint64_t secs)
{
	time_t t = (time_t)secs;
	struct tm tm;
	int n;

	memset(&tm, 0, sizeof(tm));
	gmtime_r(&t, &tm);
	n = snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d",
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		     tm.tm_min, tm.tm_sec);
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ" of @us, into @buf (28 bytes),
 * as ibw_json_time() has it. */
static void time_str(char *buf, size_t cap, uint64_t us)
{
	size_t n = time_secs_str(buf, cap, us / 1000000u);

	snprintf(buf + n, cap - n, ".%06uZ", (unsigned)(us % 1000000u));
}

void ibw_jw_time(struct ibw_jw *w, uint64_t us)
{
	char buf[sizeof(w->tstr) + 10], *p;
	unsigned frac = (unsigned)(us % 1000000u);
	int i;

	if (!us) {
		ibw_jw_null(w);
		return;
	}
	/* A document's times fall in a few seconds: gmtime_r() and
	 * snprintf() once a second, not once a time. */
	if (w->tsec != us / 1000000u + 1) {
		w->tlen =
			time_secs_str(w->tstr, sizeof(w->tstr), us / 1000000u);
		w->tsec = us / 1000000u + 1;
	}
	p = buf;
	*p++ = '"';
	memcpy(p, w->tstr, w->tlen);
	p += w->tlen;
	*p++ = '.';
	for (i = 5; i >= 0; i--, frac /= 10)
		p[i] = (char)('0' + frac % 10);
	p += 6;
	*p++ = 'Z';
	*p++ = '"';
	jw_scalar(w, buf, (size_t)(p - buf));
}

char *ibw_jw_finish(struct ibw_jw *w, size_t *len)
{
	char *b;

	if (w->err || w->depth || w->keyed || !w->len || w->out) {
		ibw_jw_release(w);
		return NULL;
	}
	w->buf[w->len] = '\0';
	/* Give the doubling's spare back. */
	b = realloc(w->buf, w->len + 1);
	if (!b)
		b = w->buf;
	if (len)
		*len = w->len;
	ibw_jw_init(w);
	return b;
}

size_t ibw_jw_take(struct ibw_jw *w, char *dst, size_t max)
{
	size_t held = w->len - w->off;
	size_t n = held < max ? held : max;
	char *b;

	if (!n)
		return 0;
	/* Taken from the front without moving the rest: a 32 MB prefix
	 * sent 32 KB at a time was moved 1,000 times, most of a first
	 * streamed answer's time. */
	memcpy(dst, w->buf + w->off, n);
	w->off += n;
	if (w->off < w->len)
		return n;
	w->off = 0;
	w->len = 0;
	/* A part that grew the buffer (the prefix of a document too big to
	 * keep) gives it back once sent; the capacity stays non-zero, which
	 * is how a writer at depth 0 knows its document was written. */
	if (w->cap > JW_KEEP_BUF && (b = realloc(w->buf, JW_KEEP_BUF))) {
		w->buf = b;
		w->cap = JW_KEEP_BUF;
	}
	return n;
}

json_t *ibw_json_time(uint64_t us)
{
	char buf[80];

	if (!us)
		return json_null();
	time_str(buf, sizeof(buf), us);
	return json_string(buf);
}
