/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The congestion counters' series (http/prom_cong.c), rendered from a
 * snapshot into the Prometheus renderers' buffer (internal to http/).
 */
#ifndef IBW_PROM_CONG_H
#define IBW_PROM_CONG_H

#include "prom_buf.h"
#include "snapshot.h"

/* ibwatch_{switch,hca}_port_{xmit_time_cong,rcv_fecn,...}_total for
 * every port whose congestion counters the last counter sweep read. */
void ibw_prom_cong(struct ibw_pb *b, const struct ibw_snapshot *s);

#endif
