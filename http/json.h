/*
 * JSON renderers (jansson). Pure functions of their inputs: each returns
 * a new reference the caller owns.
 */
#ifndef IBW_JSON_H
#define IBW_JSON_H

#include <jansson.h>

#include "codec.h"
#include "counters.h"
#include "engine.h"
#include "events.h"
#include "snapshot.h"
#include "trace.h"
#include "umad.h"

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

/* RFC 3339 UTC with microseconds, from CLOCK_REALTIME microseconds. */
json_t *ibw_json_time(uint64_t realtime_us);

json_t *ibw_json_sweep(const struct ibw_sweep_stats *st);
json_t *ibw_json_counters(const struct ibw_port_ctrs *pc);
/* Every node of @s with its ports, links and counters. */
json_t *ibw_json_nodes(const struct ibw_snapshot *s);
json_t *ibw_json_local_cas(const struct ibw_local_ca *cas, unsigned n);
json_t *ibw_json_events(const struct ibw_event *ev, unsigned n);
/* The document of /api/v1/events: {"last_seq": @last_seq, "events": [...]}
 * with the @n events of @ev. */
json_t *ibw_json_events_doc(uint64_t last_seq, const struct ibw_event *ev,
			    unsigned n);
json_t *ibw_json_endport(const struct ibw_snapshot_endport *v);
json_t *ibw_json_endports(const struct ibw_snapshot *s);
json_t *ibw_json_ping_summary(const struct ibw_ping_summary *s);
json_t *ibw_json_path(const struct ibw_path *p);
json_t *ibw_json_trace(const struct ibw_trace *t);
json_t *ibw_json_watched(const struct ibw_snapshot *s);
/* One node with its ports (NULL if @guid is unknown). */
json_t *ibw_json_node(const struct ibw_snapshot *s, uint64_t guid);

struct ibw_port_filter {
	int type; /* 0 any, 1 switch, 2 CA */
	uint64_t guid; /* 0: any node */
	int state; /* -1 any, else the PortInfo state */
	int errors; /* only ports whose error counters rose */
};

/* Every port, flat, with its node's GUID, name and type. */
json_t *ibw_json_ports(const struct ibw_snapshot *s,
		       const struct ibw_port_filter *f);
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
