/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The JSON writer (jw.c) and the values the jansson trees share with it:
 * a GUID as text, an exact 64-bit count, RFC 3339 time, and
 * ibw_json_dumps(). The renderers call down into it; it calls none of
 * them.
 */
#ifndef IBW_JW_H
#define IBW_JW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* "0x%016" PRIx64, the GUID form of every ibwatch interface. */
json_t *ibw_json_guid(uint64_t guid);

/*
 * An exact unsigned 64-bit integer. jansson's integers are signed, so a
 * value above INT64_MAX becomes a marked string that ibw_json_dumps()
 * writes back out as a bare number.
 */
json_t *ibw_json_u64(uint64_t v);
/* json_dumps() plus the u64 fix-up; free() the result. */
char *ibw_json_dumps(const json_t *j, size_t flags);

/*
 * A writer that lays a document out piece by piece, byte for byte as
 * ibw_json_dumps(JSON_INDENT(2) | JSON_SORT_KEYS) lays out the tree of
 * the whole document: a big document (every port of the fabric) costs
 * its bytes and one element's tree at a time, not a tree of all of it.
 * Containers open and close; inside an object each member is a key,
 * then a value or a container. Keys must come in the order
 * JSON_SORT_KEYS would put them (strcmp()). Values are written either
 * from a jansson value with ibw_json_dumps() (ibw_jw_value()) or, for
 * the documents that grow with the fabric, straight from C values by
 * the ibw_jw_int() family, which writes the same bytes without building
 * anything. Out of memory sticks: the rest is ignored and
 * ibw_jw_finish() says so.
 */
/* --once's document nests containers 9 deep (a link end's window's
 * error map in its links): room for more. */
#define IBW_JW_DEPTH 16
/* Keys remembered as needing no escapes: 2^IBW_JW_KEY_BITS, room for
 * the 130-odd of a port's element (its counters' names twice). */
#define IBW_JW_KEY_BITS 9

struct ibw_jw {
	char *buf;
	size_t len, cap;
	/* Bytes at the start of @buf already taken by ibw_jw_take(): the
	 * rest of them, up to @len, are still held. */
	size_t off;
	int err; /* negative errno; then nothing more is written */
	FILE *out; /* ibw_jw_init_stream()'s file */
	unsigned depth; /* containers open */
	unsigned char object[IBW_JW_DEPTH]; /* else an array */
	unsigned char filled[IBW_JW_DEPTH]; /* has a member */
	unsigned char keyed; /* a key waits for its value */
	const char *key; /* that key, written with its value */
	/* Keys found plain, by address, and their lengths: checking each
	 * key's bytes again was a third of a big document's time. */
	struct {
		const char *key;
		size_t len;
	} plain[1u << IBW_JW_KEY_BITS];
	/* ibw_jw_time()'s last second (+ 1; 0: none) and its text. */
	uint64_t tsec;
	char tstr[48];
	size_t tlen;
};

/* Printable ASCII without '"' and '\\', what jansson writes as it is:
 * 1, and its length in @len; else 0. */
int ibw_jw_plain(const char *s, size_t *len);
/* An empty writer; ibw_jw_finish() or ibw_jw_release() ends it. */
void ibw_jw_init(struct ibw_jw *w);
/* A writer that sends its bytes on to @f as they come (its buffer holds
 * a few pages at most); ibw_jw_close() ends it. */
void ibw_jw_init_stream(struct ibw_jw *w, FILE *f);
/* The end of a stream: the last bytes written out. 0, or a negative
 * errno (out of memory, a write error, the document not complete). */
int ibw_jw_close(struct ibw_jw *w);
/* Open an array or an object (as a value: after a key, in an array, or
 * as the document). */
void ibw_jw_array(struct ibw_jw *w);
void ibw_jw_object(struct ibw_jw *w);
/* Close the innermost open container. */
void ibw_jw_end(struct ibw_jw *w);
/* The next member's name, in an object. It is written with the value
 * that follows, or not at all when that value is left out (see
 * ibw_jw_string()). The writer remembers by address that a key needs no
 * escapes: @key must last, unchanged, as long as the writer (ours are
 * literals and static tables). */
void ibw_jw_key(struct ibw_jw *w, const char *key);
/* Write @v (stolen; NULL counts as out of memory) as the next value. */
void ibw_jw_value(struct ibw_jw *w, json_t *v);
/*
 * The next value straight from C, byte for byte what ibw_jw_value()
 * writes for the jansson value named. A value jansson refuses to make
 * (a string that is not UTF-8, a real that is not finite) is left out
 * as json_object_set_new() and json_array_append_new() leave out a
 * NULL: in an object with its key, in an array the element; as the
 * document it is an error.
 */
void ibw_jw_int(struct ibw_jw *w, int64_t v); /* json_integer() */
void ibw_jw_u64(struct ibw_jw *w, uint64_t v); /* ibw_json_u64() */
/* json_real() at JSON_REAL_PRECISION(12), as ibw_json_dumps() has it:
 * "%.12g" with ".0" added to an integral figure and the exponent
 * without '+' or leading zeros (jansson's jsonp_dtostr(); the C
 * locale's decimal point). */
void ibw_jw_real(struct ibw_jw *w, double v);
/* A rate or ratio core gives as negative when unknown: null then (and
 * for what is not finite), else ibw_jw_real(). */
void ibw_jw_real_or_null(struct ibw_jw *w, double v);
void ibw_jw_bool(struct ibw_jw *w, int v); /* json_boolean() */
void ibw_jw_null(struct ibw_jw *w); /* json_null() */
/* json_string(): printable ASCII directly, anything else escaped (and
 * checked for UTF-8) by jansson; NULL is left out. */
void ibw_jw_string(struct ibw_jw *w, const char *s);
void ibw_jw_guid(struct ibw_jw *w, uint64_t guid); /* ibw_json_guid() */
void ibw_jw_time(struct ibw_jw *w, uint64_t realtime_us); /* ibw_json_time */
/* The document, NUL-terminated, @len bytes (malloc'ed: the caller frees
 * it), or NULL (out of memory, or the document is not complete). The
 * writer is empty after. */
char *ibw_jw_finish(struct ibw_jw *w, size_t *len);
/* Drop what was written. */
void ibw_jw_release(struct ibw_jw *w);
/*
 * Move up to @max of the bytes written so far to @dst, oldest first; the
 * writer keeps its place in the document (what is open, what comes
 * next), so a document can be sent piece by piece as it is written (an
 * HTTP response streamed from the part writers below). The number of
 * bytes moved.
 */
size_t ibw_jw_take(struct ibw_jw *w, char *dst, size_t max);

/* RFC 3339 UTC with microseconds, from CLOCK_REALTIME microseconds. */
json_t *ibw_json_time(uint64_t realtime_us);

#endif
