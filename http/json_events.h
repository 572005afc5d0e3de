/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Events as JSON (json_events.c): /api/v1/events, the event stream, a
 * node's and a link's events.
 */
#ifndef IBW_JSON_EVENTS_H
#define IBW_JSON_EVENTS_H

#include <stdint.h>

#include <jansson.h>

#include "events.h"
#include "jw.h"

/* One event. */
json_t *ibw_json_event(const struct ibw_event *e);
/* The document of /api/v1/events: {"last_seq": @last_seq, "events": [...]}
 * with the @n events of @ev. */
void ibw_json_write_events_doc(struct ibw_jw *w, uint64_t last_seq,
			       const struct ibw_event *ev, unsigned n);

#endif
