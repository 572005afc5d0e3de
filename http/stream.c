// SPDX-License-Identifier: BSD-2-Clause
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "stream.h"

struct ibw_stream {
	struct ibw_snapshot *s;
	ibw_stream_part_fn part;
	const void *query; /* @q, or NULL */
	struct ibw_jw w;
	size_t pos; /* the part writer's */
	int done; /* the document is written (maybe not yet sent) */
	size_t sent;
	struct ibw_cache *c; /* noted in when the stream ends; or NULL */
	char key[IBW_CACHE_KEY_MAX];
	max_align_t q[]; /* the query's copy */
};

struct ibw_stream *ibw_stream_new(struct ibw_snapshot *s,
				  ibw_stream_part_fn part, const void *query,
				  size_t size)
{
	struct ibw_stream *st = calloc(1, sizeof(*st) + (query ? size : 0));

	if (!st)
		return NULL;
	ibw_snapshot_ref(s);
	st->s = s;
	st->part = part;
	if (query) {
		memcpy(st->q, query, size);
		st->query = st->q;
	}
	ibw_jw_init(&st->w);
	return st;
}

int ibw_stream_fill(struct ibw_stream *st, size_t budget)
{
	int rc = st->done;

	while (!st->done && st->w.len < budget) {
		rc = st->part(&st->w, st->s, st->query, &st->pos, budget);
		if (rc < 0)
			return rc;
		st->done = rc;
	}
	return st->done;
}

char *ibw_stream_text(struct ibw_stream *st, size_t *len)
{
	if (!st->done || st->sent)
		return NULL;
	return ibw_jw_finish(&st->w, len);
}

void ibw_stream_note_in(struct ibw_stream *st, struct ibw_cache *c,
			const char *key)
{
	st->c = c;
	snprintf(st->key, sizeof(st->key), "%s", key);
}

ssize_t ibw_stream_read(void *stream, uint64_t pos, char *buf, size_t max)
{
	struct ibw_stream *st = stream;
	size_t n;

	(void)pos;
	if (!st->w.len && ibw_stream_fill(st, IBW_STREAM_PART) < 0)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	if (!st->w.len) {
		if (st->c) {
			ibw_cache_note_size(st->c, st->key, st->sent);
			st->c = NULL;
		}
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	n = ibw_jw_take(&st->w, buf, max);
	st->sent += n;
	return (ssize_t)n;
}

void ibw_stream_free(void *stream)
{
	struct ibw_stream *st = stream;

	if (!st)
		return;
	ibw_jw_release(&st->w);
	ibw_snapshot_unref(st->s);
	free(st);
}
