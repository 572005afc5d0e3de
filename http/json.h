/*
 * JSON renderers (jansson). Pure functions of their inputs: each returns
 * a new reference the caller owns.
 */
#ifndef IBW_JSON_H
#define IBW_JSON_H

#include <jansson.h>

#include "codec.h"
#include "engine.h"
#include "umad.h"

/* "0x%016" PRIx64, the GUID form of every ibwatch interface. */
json_t *ibw_json_guid(uint64_t guid);

json_t *ibw_json_engine_stats(const struct ibw_engine_stats *st);

/* The local port: what libibumad said at open (@lp) and, when the fabric
 * answered, its live PortInfo (@pi), NodeInfo (@ni) and description. */
json_t *ibw_json_local_port(const struct ibw_local_port *lp,
			    const struct ibw_portinfo *pi,
			    const struct ibw_nodeinfo *ni, const char *desc);

#endif
