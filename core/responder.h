/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The echo responder: answers vendor-class echo pings (ibping and the
 * seed-000 types) that reach this port, rate-limited per source LID.
 * Malformed and foreign requests are dropped and counted.
 */
#ifndef IBW_RESPONDER_H
#define IBW_RESPONDER_H

#include <stdint.h>

#include "engine.h"

struct ibw_responder_stats {
	uint64_t answered;
	uint64_t malformed; /* not a well-formed echo request: dropped */
	uint64_t rate_limited;
	uint64_t send_errors;
};

struct ibw_responder;

/* Answer on @e's transport as @lid / @port_guid; @rate per second per
 * source (0: 200), bursts of twice that. */
struct ibw_responder *ibw_responder_new(struct ibw_engine *e, uint16_t lid,
					uint64_t port_guid, unsigned rate);
void ibw_responder_free(struct ibw_responder *r);
/* The local LID can change (the SM reassigns it). */
void ibw_responder_set_lid(struct ibw_responder *r, uint16_t lid);
void ibw_responder_get_stats(const struct ibw_responder *r,
			     struct ibw_responder_stats *st);

/* Handle one received request (exposed for the fuzz and unit tests):
 * returns 1 if it was answered, 0 if dropped. */
int ibw_responder_handle(struct ibw_responder *r, const struct ibw_rx *rx);

#endif
