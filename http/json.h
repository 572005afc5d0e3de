/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * JSON renderers (jansson) of the status, the local port, nodes, ports,
 * endports, pings and traces (json.c). Pure functions of their inputs:
 * each returns a new reference the caller owns, or (ibw_json_write_*,
 * the documents that grow with the fabric) writes its document into a
 * writer (jw.h) one element at a time. A port's counters and the events
 * have renderers of their own (json_counters.h, json_events.h).
 */
#ifndef IBW_JSON_H
#define IBW_JSON_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "codec.h"
#include "counters.h"
#include "engine.h"
#include "events.h"
#include "jw.h"
#include "snapshot.h"
#include "trace.h"
#include "umad.h"

json_t *ibw_json_sweep(const struct ibw_sweep_stats *st);
/*
 * Part writers: a document written a part at a time, each part ending
 * once @w holds at least @budget bytes (whole elements: one may go past
 * it), so that it can be sent (ibw_jw_take) before the next is written.
 * *@pos, 0 at the start, is where the document stands: the opening is
 * written at 0, the closing after the last element. 1 when the document
 * is complete, 0 when more is to come, a negative errno when @w failed.
 * @s must not change in between (a snapshot does not). The whole-
 * document writers are one part with no budget.
 */
/* Every node of @s with its ports, links and counters: an array. */
void ibw_json_write_nodes(struct ibw_jw *w, const struct ibw_snapshot *s);
int ibw_json_write_nodes_part(struct ibw_jw *w, const struct ibw_snapshot *s,
			      size_t *pos, size_t budget);
json_t *ibw_json_local_cas(const struct ibw_local_ca *cas, unsigned n);
json_t *ibw_json_endport(const struct ibw_snapshot_endport *v);
/* Every endport of @s: an array. */
void ibw_json_write_endports(struct ibw_jw *w, const struct ibw_snapshot *s);
int ibw_json_write_endports_part(struct ibw_jw *w, const struct ibw_snapshot *s,
				 size_t *pos, size_t budget);
json_t *ibw_json_ping_summary(const struct ibw_ping_summary *s);
json_t *ibw_json_path(const struct ibw_path *p);
json_t *ibw_json_trace(const struct ibw_trace *t);
/* The watched targets of @s with their last traces: an array. */
void ibw_json_write_watched(struct ibw_jw *w, const struct ibw_snapshot *s);
/* One node with its ports (NULL if @guid is unknown). */
json_t *ibw_json_node(const struct ibw_snapshot *s, uint64_t guid);

struct ibw_port_filter {
	int type; /* 0 any, 1 switch, 2 CA */
	uint64_t guid; /* 0: any node */
	int state; /* -1 any, else the PortInfo state */
	int errors; /* only ports whose error counters rose */
};

/* Every port that passes @f, flat, with its node's GUID, name and
 * type: an array. */
void ibw_json_write_ports(struct ibw_jw *w, const struct ibw_snapshot *s,
			  const struct ibw_port_filter *f);
int ibw_json_write_ports_part(struct ibw_jw *w, const struct ibw_snapshot *s,
			      const struct ibw_port_filter *f, size_t *pos,
			      size_t budget);
/* The status document of /api/v1/status. */
json_t *ibw_json_status(const struct ibw_snapshot *s,
			const struct ibw_engine_stats *st, uint64_t now_us);

json_t *ibw_json_engine_stats(const struct ibw_engine_stats *st);

/* The local port: what libibumad said at open (@lp) and, when the fabric
 * answered, its live PortInfo (@pi), NodeInfo (@ni) and description. */
json_t *ibw_json_local_port(const struct ibw_local_port *lp,
			    const struct ibw_portinfo *pi,
			    const struct ibw_nodeinfo *ni, const char *desc);

#endif
