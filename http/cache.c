// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cache.h"

struct slot {
	char key[IBW_CACHE_KEY_MAX];
	struct ibw_body *b; /* NULL: empty */
	uint64_t used;
};

#define HINTS 32

struct hint {
	char key[IBW_CACHE_KEY_MAX];
	size_t len; /* 0: empty */
	uint64_t used;
};

/* Shared by the HTTP server's threads: the slots and hints are under
 * @lock; bodies, once made, are read-only but for their atomic refs. */
struct ibw_cache {
	pthread_mutex_t lock;
	size_t max_bytes;
	size_t bytes; /* of the bodies in the slots */
	unsigned nslots;
	uint64_t tick;
	struct hint hints[HINTS];
	struct slot slots[];
};

/* What a body costs the cache's budget. */
static size_t body_bytes(const struct ibw_body *b)
{
	return b->len + b->gzlen;
}

/*
 * Rendering a big answer builds and frees many small objects: give
 * their pages back to the system rather than keep the peak resident.
 */
static void trim_after(size_t rendered)
{
#ifdef __GLIBC__
	if (rendered > (1u << 20))
		malloc_trim(0);
#else
	(void)rendered;
#endif
}

/*
 * Deflate @len bytes of @in into a growing buffer with @flush. Input
 * deflated earlier with Z_NO_FLUSH may still be held inside @zs, so the
 * output can be more than @len's bound: go on while deflate fills all
 * the room it is given.
 */
static int deflate_into(z_stream *zs, const char *in, size_t len, int flush,
			unsigned char **out, size_t *outlen)
{
	size_t cap = *outlen + deflateBound(zs, len) + 64;
	unsigned char *o;
	int rc;

	zs->next_in = (unsigned char *)(uintptr_t)in;
	zs->avail_in = (uInt)len;
	do {
		o = realloc(*out, cap);
		if (!o)
			return -1;
		*out = o;
		zs->next_out = o + *outlen;
		zs->avail_out = (uInt)(cap - *outlen);
		rc = deflate(zs, flush);
		*outlen = cap - zs->avail_out;
		cap = *outlen + 65536;
	} while ((rc == Z_OK || rc == Z_BUF_ERROR) && !zs->avail_out);
	return (rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR) &&
			       !zs->avail_in
		       ? 0
		       : -1;
}

static void body_gzip(struct ibw_body *b)
{
	memset(&b->zs, 0, sizeof(b->zs));
	/* level 1: the body is repetitive; 15 + 16 asks for a gzip wrapper */
	if (deflateInit2(&b->zs, 1, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return;
	b->have_gz = 1;
	if (deflate_into(&b->zs, b->text, b->len, Z_SYNC_FLUSH, &b->gz,
			 &b->gzlen) < 0) {
		deflateEnd(&b->zs);
		b->have_gz = 0;
		free(b->gz);
		b->gz = NULL;
		b->gzlen = 0;
	}
}

struct ibw_body *ibw_body_new(uint64_t seq, char *text, size_t len, int gzip)
{
	struct ibw_body *b = calloc(1, sizeof(*b));

	if (!b) {
		free(text);
		return NULL;
	}
	b->refs = 1;
	b->seq = seq;
	b->text = text;
	b->len = len;
	if (gzip)
		body_gzip(b);
	trim_after(len);
	return b;
}

struct ibw_body *ibw_body_start(uint64_t seq, size_t keep_text)
{
	struct ibw_body *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->refs = 1;
	b->seq = seq;
	b->keep = keep_text;
	if (deflateInit2(&b->zs, 1, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(b);
		return NULL;
	}
	b->have_gz = 1;
	return b;
}

int ibw_body_append(void *body, const char *p, size_t n)
{
	struct ibw_body *b = body;
	char *t;

	if (deflate_into(&b->zs, p, n, Z_NO_FLUSH, &b->gz, &b->gzlen) < 0)
		return -ENOMEM;
	if (b->len + n <= b->keep) {
		/* Doubling: the text costs O(N) copying. */
		if (b->len + n + 1 > b->cap) {
			size_t cap = b->cap ? b->cap : 65536;

			while (cap < b->len + n + 1)
				cap *= 2;
			t = realloc(b->text, cap);
			if (!t)
				return -ENOMEM;
			b->text = t;
			b->cap = cap;
		}
		memcpy(b->text + b->len, p, n);
		b->text[b->len + n] = '\0';
	} else if (b->text) {
		/* Too big to keep as text too: gzip alone from here. */
		free(b->text);
		b->text = NULL;
		b->cap = 0;
	}
	b->len += n;
	return 0;
}

int ibw_body_end(struct ibw_body *b)
{
	if (deflate_into(&b->zs, "", 0, Z_SYNC_FLUSH, &b->gz, &b->gzlen) < 0)
		return -ENOMEM;
	if (!b->text && b->len <= b->keep) {
		/* An empty text is text too. */
		b->text = calloc(1, 1);
		if (!b->text)
			return -ENOMEM;
	}
	trim_after(b->len);
	return 0;
}

void ibw_body_ref(struct ibw_body *b)
{
	__atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
}

void ibw_body_unref(struct ibw_body *b)
{
	if (b && !__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL)) {
		if (b->have_gz)
			deflateEnd(&b->zs);
		free(b->gz);
		free(b->text);
		free(b);
	}
}

int ibw_body_gzip_tail(struct ibw_body *b, const char *tail, size_t len,
		       unsigned char **out, size_t *outlen)
{
	z_stream zs;
	int rc = -1;

	*out = NULL;
	*outlen = 0;
	if (!b->have_gz || deflateCopy(&zs, &b->zs) != Z_OK)
		return -1;
	if (deflate_into(&zs, tail, len, Z_FINISH, out, outlen) == 0) {
		rc = 0;
	} else {
		free(*out);
		*out = NULL;
		*outlen = 0;
	}
	deflateEnd(&zs);
	return rc;
}

struct ibw_share *ibw_share_new(struct ibw_body *b)
{
	struct ibw_share *sh = calloc(1, sizeof(*sh));

	if (!sh)
		return NULL;
	ibw_body_ref(b);
	sh->body = b;
	return sh;
}

long ibw_share_read_text(struct ibw_share *sh, char *buf, size_t max)
{
	struct ibw_body *b = sh->body;
	size_t n;
	int rc;

	if (!sh->inflating) {
		memset(&sh->zs, 0, sizeof(sh->zs));
		if (inflateInit2(&sh->zs, 15 + 16) != Z_OK)
			return -1;
		sh->inflating = 1;
		sh->zs.next_in = b->gz;
		sh->zs.avail_in = (uInt)b->gzlen;
	}
	if (sh->inflating == 1) {
		sh->zs.next_out = (unsigned char *)buf;
		sh->zs.avail_out = (uInt)max;
		/* A call may only read (the gzip header, a block's
		 * header): go on while there is input and no output. */
		do {
			rc = inflate(&sh->zs, Z_SYNC_FLUSH);
			n = max - sh->zs.avail_out;
		} while (!n && rc == Z_OK && sh->zs.avail_in);
		if (rc != Z_OK && rc != Z_BUF_ERROR)
			return -1;
		if (n)
			return (long)n;
		/* All the flushed stream is out: the tail next. */
		inflateEnd(&sh->zs);
		sh->inflating = 2;
		if (sh->zs.avail_in)
			return -1;
	}
	n = sh->tail_len - sh->tail_off;
	if (n > max)
		n = max;
	memcpy(buf, sh->tail + sh->tail_off, n);
	sh->tail_off += n;
	return (long)n;
}

void ibw_share_free(void *share)
{
	struct ibw_share *sh = share;

	if (!sh)
		return;
	if (sh->inflating == 1)
		inflateEnd(&sh->zs);
	ibw_body_unref(sh->body);
	free(sh->tail);
	free(sh);
}

struct ibw_cache *ibw_cache_new(unsigned slots, size_t max_bytes)
{
	struct ibw_cache *c =
		calloc(1, sizeof(*c) + (size_t)slots * sizeof(c->slots[0]));

	if (c) {
		c->nslots = slots;
		c->max_bytes = max_bytes;
		pthread_mutex_init(&c->lock, NULL);
	}
	return c;
}

size_t ibw_cache_max(const struct ibw_cache *c)
{
	return c->max_bytes;
}

/* Under c->lock. */
static void slot_clear(struct ibw_cache *c, struct slot *s)
{
	if (!s->b)
		return;
	c->bytes -= body_bytes(s->b);
	ibw_body_unref(s->b);
	s->b = NULL;
}

/* Under c->lock. */
static void note_size(struct ibw_cache *c, const char *key, size_t len)
{
	struct hint *h = NULL;
	unsigned i;

	for (i = 0; i < HINTS && !h; i++)
		if (c->hints[i].len && !strcmp(c->hints[i].key, key))
			h = &c->hints[i];
	for (i = 0; i < HINTS && !h; i++)
		if (!c->hints[i].len)
			h = &c->hints[i];
	if (!h) {
		h = &c->hints[0];
		for (i = 1; i < HINTS; i++)
			if (c->hints[i].used < h->used)
				h = &c->hints[i];
	}
	snprintf(h->key, sizeof(h->key), "%s", key);
	/* An empty document is still a size (0 marks a free hint). */
	h->len = len ? len : 1;
	h->used = ++c->tick;
}

void ibw_cache_note_size(struct ibw_cache *c, const char *key, size_t len)
{
	pthread_mutex_lock(&c->lock);
	note_size(c, key, len);
	pthread_mutex_unlock(&c->lock);
}

size_t ibw_cache_size_hint(struct ibw_cache *c, const char *key)
{
	size_t len = 0;
	unsigned i;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < HINTS; i++)
		if (c->hints[i].len && !strcmp(c->hints[i].key, key))
			len = c->hints[i].len;
	pthread_mutex_unlock(&c->lock);
	return len;
}

void ibw_cache_free(struct ibw_cache *c)
{
	unsigned i;

	if (!c)
		return;
	for (i = 0; i < c->nslots; i++)
		slot_clear(c, &c->slots[i]);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

struct ibw_body *ibw_cache_get(struct ibw_cache *c, uint64_t seq,
			       const char *key)
{
	struct ibw_body *b = NULL;
	unsigned i;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->nslots; i++) {
		struct slot *s = &c->slots[i];

		/* Bodies of older snapshots go; a thread still serving an
		 * older one than the newest does not clear the newer. */
		if (s->b && s->b->seq < seq)
			slot_clear(c, s);
	}
	for (i = 0; i < c->nslots; i++) {
		struct slot *s = &c->slots[i];

		if (s->b && s->b->seq == seq && !strcmp(s->key, key)) {
			s->used = ++c->tick;
			ibw_body_ref(s->b);
			b = s->b;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return b;
}

void ibw_cache_put(struct ibw_cache *c, const char *key, struct ibw_body *b)
{
	struct slot *s = NULL;
	unsigned i;

	if (!c->nslots)
		return;
	pthread_mutex_lock(&c->lock);
	note_size(c, key, b->len);
	if (body_bytes(b) > c->max_bytes) {
		/* Never kept: the answer is sent, and the next one under
		 * @key streams (routes.c) or is rendered again. */
		pthread_mutex_unlock(&c->lock);
		return;
	}
	for (i = 0; i < c->nslots && !s; i++)
		if (c->slots[i].b && !strcmp(c->slots[i].key, key))
			s = &c->slots[i];
	/* else the least recently used slot (an empty one first) */
	for (i = 0; i < c->nslots && !s; i++)
		if (!c->slots[i].b)
			s = &c->slots[i];
	if (!s) {
		s = &c->slots[0];
		for (i = 1; i < c->nslots; i++)
			if (c->slots[i].used < s->used)
				s = &c->slots[i];
	}
	/* An answer of an older snapshot never replaces a newer one. */
	if (s->b && s->b->seq > b->seq && !strcmp(s->key, key)) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	slot_clear(c, s);
	/* Room for @b within the budget: the least recently used go. */
	while (c->bytes + body_bytes(b) > c->max_bytes) {
		struct slot *old = NULL;

		for (i = 0; i < c->nslots; i++)
			if (c->slots[i].b &&
			    (!old || c->slots[i].used < old->used))
				old = &c->slots[i];
		if (!old)
			break;
		slot_clear(c, old);
	}
	ibw_body_ref(b);
	c->bytes += body_bytes(b);
	snprintf(s->key, sizeof(s->key), "%s", key);
	s->b = b;
	s->used = ++c->tick;
	pthread_mutex_unlock(&c->lock);
}
