/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The FEC counters' series (http/prom_fec.c), rendered from a snapshot
 * into the Prometheus renderers' buffer (internal to http/).
 */
#ifndef IBW_PROM_FEC_H
#define IBW_PROM_FEC_H

#include "prom_buf.h"
#include "snapshot.h"

/* ibwatch_{switch,hca}_port_fec_* for every port whose FEC counters the
 * last counter sweep read. */
void ibw_prom_fec(struct ibw_pb *b, const struct ibw_snapshot *s);

struct ibw_link;

/* The links' raw and effective BER from the FEC counters (core/links.h),
 * for the cables @by (@n, in the order they are to be written). */
void ibw_prom_link_fec(struct ibw_pb *b, const struct ibw_link *const *by,
		       size_t n);

#endif
