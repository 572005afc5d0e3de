/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The on-demand probes of the HTTP API: /api/v1/trace and /api/v1/ping.
 * Served on the loop's thread (routes.c's table says so): each checks
 * its query, resolves the target and starts a trace or a ping whose
 * callback answers the suspended request and lands it (routes.h,
 * ibw_server_ops).
 */
#ifndef IBW_PROBES_H
#define IBW_PROBES_H

struct ibw_hreq;
struct ibw_snapshot;

void ibw_serve_trace(struct ibw_hreq *r, struct ibw_snapshot *s);
void ibw_serve_ping(struct ibw_hreq *r, struct ibw_snapshot *s);

#endif
