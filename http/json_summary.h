/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What one look at the fabric needs, as JSON: `ibwatchd --once`'s
 * default document (docs/api.md, "ibwatchd --once"). A few kilobytes
 * whatever the fabric's size: the status, and the first of the links
 * that are not healthy, the endports that are not up and the broken
 * routes, each with how many there are in all.
 */
#ifndef IBW_JSON_SUMMARY_H
#define IBW_JSON_SUMMARY_H

#include <jansson.h>

#include "engine.h"
#include "snapshot.h"

/* At most this many entries in each list of the summary. */
#define IBW_SUMMARY_LIST_MAX 50

/* The summary of @s (NULL: before any discovery) with the engine's
 * @st and the local port's document @local_port (stolen). */
json_t *ibw_json_once_summary(const struct ibw_snapshot *s,
			      const struct ibw_engine_stats *st,
			      json_t *local_port, uint64_t now_us);

#endif
