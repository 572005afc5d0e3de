/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Answers as http/routes.c's handlers set them (internal to http/): a
 * JSON body, a written document, an RFC 9457 problem with an extension
 * member.
 */
#ifndef IBW_ANSWER_H
#define IBW_ANSWER_H

#include <jansson.h>

#include "json.h"
#include "hreq.h"

/* @j (its reference is dropped here) as @r's answer with status @code. */
void ibw_hreq_set_json(struct ibw_hreq *r, unsigned code, json_t *j);
/* @w's document (ended, finished here) as @r's 200 answer; 503 if it
 * ran out of memory. */
void ibw_hreq_set_written(struct ibw_hreq *r, struct ibw_jw *w);
/* A problem: RFC 9457 problem+json with @fmt as its detail. */
void ibw_hreq_problem(struct ibw_hreq *r, unsigned code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A problem with the extension member @key: @ext (taken). */
void ibw_hreq_problem_ext(struct ibw_hreq *r, unsigned code, const char *key,
			  json_t *ext, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#endif
