/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The response cache: answers rendered once per snapshot and shared,
 * without a copy, by every response sending them. A body is
 * reference-counted; it may also hold its text gzipped as a flushed,
 * unfinished deflate stream, which each response finishes (a copy of
 * it) with its own live tail. A cache keeps bodies by key (a path and
 * its query) for one snapshot at a time. No libmicrohttpd here: the
 * server points its responses into these buffers. Thread-safe: the
 * server's threads share one cache; a miss may be rendered by two of
 * them at once, and the last put wins.
 */
#ifndef IBW_CACHE_H
#define IBW_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <zlib.h>

/* Read-only once made, except refs (ibw_body_ref/unref) and zs, which
 * zlib's deflateCopy() takes without const. */
struct ibw_body {
	unsigned refs; /* atomic: responses on any thread hold them */
	uint64_t seq; /* the snapshot it was rendered from */
	char *text;
	size_t len;
	int have_gz;
	z_stream zs; /* flushed after text, not finished */
	unsigned char *gz;
	size_t gzlen;
	size_t keep, cap; /* ibw_body_start's, while it is made */
};

/*
 * A body of @len bytes of @text (taken: freed with the body, or at once
 * on failure), gzipped too when @gzip. NULL when out of memory. Gives
 * the pages of a big rendering back to the system (malloc_trim).
 */
struct ibw_body *ibw_body_new(uint64_t seq, char *text, size_t len, int gzip);
/*
 * A body made piece by piece (ibw_body_append, the sink of
 * ibw_prom_render_snapshot_to) and gzipped as it comes: its text is
 * kept while it is at most @keep_text bytes, else only the gzip stream
 * (text NULL, len still the text's length; ibw_share_read_text gives
 * the text back). NULL when out of memory.
 */
struct ibw_body *ibw_body_start(uint64_t seq, size_t keep_text);
/* void *: a sink. 0, or -ENOMEM (the body is then no good: unref it). */
int ibw_body_append(void *body, const char *p, size_t n);
/* The last of it: 0, or -ENOMEM. */
int ibw_body_end(struct ibw_body *b);
void ibw_body_ref(struct ibw_body *b);
void ibw_body_unref(struct ibw_body *b);
/*
 * Finish a copy of @b's gzip stream with @len bytes of @tail: the whole
 * gzip tail of a response that sends @b->gz first. 0, with *@out
 * malloc'ed, or -1 (@b has no gzip, or out of memory).
 */
int ibw_body_gzip_tail(struct ibw_body *b, const char *tail, size_t len,
		       unsigned char **out, size_t *outlen);

/*
 * What one response sends: a reference to a body (text, or its gzip
 * stream when @gz) and a live tail after it (text, or the gzip stream's
 * end when @gz). Owned by the response until it is sent.
 */
struct ibw_share {
	struct ibw_body *body;
	char *tail;
	size_t tail_len;
	int gz;
	/* ibw_share_read_text's place */
	int inflating; /* 0 not yet, 1 zs inflates the body, 2 done */
	z_stream zs;
	size_t tail_off;
};

/* A share of @b (a new reference) with no tail; NULL when out of memory. */
struct ibw_share *ibw_share_new(struct ibw_body *b);
/* void *: it is the response's free callback too. */
void ibw_share_free(void *share);
/*
 * The text of a share whose body keeps only gzip (text NULL, not @gz),
 * then its tail, up to @max bytes at a time into @buf, inflated as it
 * is read: the number of bytes, 0 at the end, -1 on an error.
 */
long ibw_share_read_text(struct ibw_share *sh, char *buf, size_t max);

struct ibw_cache;

/* A key is at most this long, NUL included (longer ones are cut). */
#define IBW_CACHE_KEY_MAX 96

/*
 * At most @slots bodies of @max_bytes in all (text and gzip; SIZE_MAX: no
 * limit); the least recently used goes first, and a body bigger than
 * @max_bytes is never kept.
 */
struct ibw_cache *ibw_cache_new(unsigned slots, size_t max_bytes);
/* The @max_bytes it was made with. */
size_t ibw_cache_max(const struct ibw_cache *c);
void ibw_cache_free(struct ibw_cache *c);
/*
 * The body kept under @key for snapshot @seq, as a new reference, or
 * NULL. Bodies of any other snapshot are dropped first: nobody asks for
 * them again (responses still sending one hold their own references).
 */
struct ibw_body *ibw_cache_get(struct ibw_cache *c, uint64_t seq,
			       const char *key);
/* Keep @b under @key (the cache takes its own reference), in place of
 * what @key held, else in an empty or the least recently used slot,
 * dropping the least recently used bodies while the bytes kept would be
 * over the limit. A body over the limit is not kept (its size is noted,
 * as by ibw_cache_note_size). */
void ibw_cache_put(struct ibw_cache *c, const char *key, struct ibw_body *b);
/*
 * Sizes seen, by key, of any snapshot: whether the next answer under
 * @key is worth rendering whole to keep, or too big and better streamed
 * from the start. 0 when not known (or forgotten: a few dozen keys are
 * remembered, the least recently noted go first).
 */
size_t ibw_cache_size_hint(struct ibw_cache *c, const char *key);
void ibw_cache_note_size(struct ibw_cache *c, const char *key, size_t len);

#endif
