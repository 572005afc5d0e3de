/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * infiniband_exporter's series, rendered from a snapshot into the
 * Prometheus renderers' buffer (internal to http/; prom.h is the API).
 */
#ifndef IBW_PROM_EXPORTER_H
#define IBW_PROM_EXPORTER_H

#include "prom_buf.h"
#include "prom_opts.h"
#include "snapshot.h"

/*
 * Its families for each kind of node (switches, then HCAs): the port
 * counters, info, rates, uplinks and collection health; then its
 * collectors' own rows. Sets @b->oom when out of memory.
 */
void ibw_prom_exporter(struct ibw_pb *b, const struct ibw_snapshot *s,
		       const struct ibw_prom_opts *o);

/* The guid label of every counter series of @pv (the exporter's, FEC and
 * congestion): a switch's GUID, an HCA port's own GUID, or its node's
 * while the port GUID is unknown. */
uint64_t ibw_prom_port_guid(const struct ibw_snapshot_port *pv);

#endif
