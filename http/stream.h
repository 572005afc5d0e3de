/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A JSON document sent as it is written: a response body read part by
 * part from a part writer of json.h, for the documents that grow with
 * the fabric and are too big to keep whole (routes.c decides). A stream
 * holds a reference to its snapshot, the writer and where the document
 * stands; what it holds between two reads is one part (about
 * IBW_STREAM_PART bytes) and what the part writer's element costs, not
 * the document. One thread at a time reads a stream (the connection's),
 * any thread may free it.
 */
#ifndef IBW_STREAM_H
#define IBW_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cache.h"
#include "json.h"

/* Bytes a part is written up to before it is sent: also libmicrohttpd's
 * block, so a 200 MB document goes out in a few hundred sends. */
#define IBW_STREAM_PART 262144

/* A part writer of json.h, with its document's query (what the caller
 * parsed from the request: a port or a link filter; NULL or ignored by
 * the documents without one). */
typedef int (*ibw_stream_part_fn)(struct ibw_jw *w,
				  const struct ibw_snapshot *s,
				  const void *query, size_t *pos,
				  size_t budget);

struct ibw_stream;

/* A stream of @part's document of @s (a new reference is taken) with
 * the query @query of @size bytes (copied: it must hold no pointer;
 * NULL: none, @part is then given NULL). NULL when out of memory. */
struct ibw_stream *ibw_stream_new(struct ibw_snapshot *s,
				  ibw_stream_part_fn part, const void *query,
				  size_t size);
/*
 * Write parts until @st holds at least @budget bytes, or the document
 * is complete: 1 complete, 0 more to come, a negative errno.
 */
int ibw_stream_fill(struct ibw_stream *st, size_t budget);
/* The whole document, when it is complete and nothing was read yet:
 * the text (malloc'ed, the caller's) and its @len; else NULL. */
char *ibw_stream_text(struct ibw_stream *st, size_t *len);
/* When the stream ends, note its length under @key in @c (the size
 * hint that sends the next answer under @key the same way). */
void ibw_stream_note_in(struct ibw_stream *st, struct ibw_cache *c,
			const char *key);
/*
 * libmicrohttpd's content reader (MHD_ContentReaderCallback): up to
 * @max bytes into @buf, written as they are needed; the end of the
 * document ends the stream, a failure ends it with an error (the client
 * sees a cut answer, never a wrong one).
 */
ssize_t ibw_stream_read(void *stream, uint64_t pos, char *buf, size_t max);
/* libmicrohttpd's free callback too: a client gone mid-stream lands
 * here. */
void ibw_stream_free(void *stream);

#endif
