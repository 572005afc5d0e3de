/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The route census (core/census.h) as JSON: /api/v1/routes and
 * /api/v1/routes/{src}/{dst}, and the detail of the census events. Pure
 * functions of a snapshot and its census: each returns a new reference
 * the caller owns. docs/api.md has the documents.
 */
#ifndef IBW_JSON_ROUTES_H
#define IBW_JSON_ROUTES_H

#include <jansson.h>
#include <stdint.h>

#include "census.h"
#include "events.h"
#include "snapshot.h"

/* The summary: the tables' read, the counts, the most loaded links and
 * the balance per tier. @s->census must not be NULL. */
json_t *ibw_json_routes(const struct ibw_snapshot *s);
/* The broken pairs (unreachable or looping), skipping @offset, at most
 * @limit of them, with their total. */
json_t *ibw_json_routes_broken(const struct ibw_snapshot *s, uint64_t offset,
			       unsigned limit);
/* The routes leaving (@guid, @port) across its link, NULL if no link of
 * the census is there. */
json_t *ibw_json_routes_link(const struct ibw_snapshot *s, uint64_t guid,
			     unsigned port);
/* The route from LID @slid to LID @dlid, NULL if no port has @slid. */
json_t *ibw_json_route(const struct ibw_snapshot *s, uint16_t slid,
		       uint16_t dlid);
/* Add a census event's own fields (its detail) to its object @o. */
void ibw_json_route_event(json_t *o, const struct ibw_event *e);

#endif
