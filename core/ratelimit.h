/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A token bucket: at most @burst events at once, refilled at @n events
 * per @period_us. Pure: the caller passes the time (any microsecond
 * clock that does not go backwards, ibw_now_us() in the agent), so the
 * bucket reads no clock and is tested without one. The echo responder
 * (per source LID), the SNMP notifications and the HTTP on-demand
 * probes (per client address) each keep theirs.
 */
#ifndef IBW_RATELIMIT_H
#define IBW_RATELIMIT_H

#include <stdint.h>

/* Caller-allocated (embedded in a table); the fields are its state. */
struct ibw_ratelimit {
	double tokens; /* events allowed now */
	double burst; /* the most it holds */
	double n; /* refill: n tokens ... */
	double period_us; /* ... per this many microseconds */
	uint64_t last_us; /* the time of the last take: readable, as an age */
};

/* Start full (@burst tokens) at @now_us. A @period_us of 0 never refills. */
void ibw_ratelimit_init(struct ibw_ratelimit *rl, unsigned n,
			uint64_t period_us, unsigned burst, uint64_t now_us);
/*
 * Refill for the time since the last call, then take one token: 1 if
 * there was one (the event may go), 0 if not (over the limit; nothing
 * is taken). A @now_us before the last call's refills nothing.
 */
int ibw_ratelimit_take(struct ibw_ratelimit *rl, uint64_t now_us);

#endif
