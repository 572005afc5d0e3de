/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The pinger's insides, shared by ping.c (the endports, periodic probes,
 * confirming a loss) and ping_demand.c (pings on demand): not for any
 * other file.
 */
#ifndef IBW_PING_INT_H
#define IBW_PING_INT_H

#include <stdint.h>

#include "echo.h"
#include "engine.h"
#include "events.h"
#include "loop.h"
#include "ping.h"

#define MAX_ONDEMAND 16
#define ECHO_PATTERN_LEN 32

struct ibw_pinger {
	struct ibw_engine *e;
	struct ibw_events *ev;
	struct ibw_ping_opts o;
	struct ibw_endport *eps;
	unsigned neps, cap;
	struct ibw_timer *timer;
	int periodic;
	int paused; /* the local port is gone: no probes */
	void (*loss_cb)(void *arg);
	void *loss_arg;
	unsigned round_left;
	void (*round_cb)(struct ibw_pinger *p, void *arg);
	void *round_arg;
	unsigned ondemand;
	/* Endports by port GUID: open addressing, slot = index + 1, 0
	 * empty; NULL (out of memory) falls back to a scan. A probe's
	 * answer finds its endport here, so a round over every endport of
	 * a large fabric is not quadratic. */
	unsigned *gidx;
	unsigned gidx_cap; /* a power of two, at least twice neps */
	uint16_t id; /* echo identifier of this pinger */
	uint16_t sm_lid; /* the SA, for confirming losses (0: unknown) */
	unsigned looks_inflight; /* auto looks for a responder */
	int looks_answered; /* the last look that ended was answered */
};

/* The request for one probe. */
void ibw_ping_build(struct ibw_mad_req *r, uint16_t lid, enum ibw_ping_method m,
		    enum ibw_echo_type type, uint16_t id, uint16_t seq,
		    uint8_t *payload, unsigned timeout_ms, int retries);
/* Did an echo answer echo what we sent? Fills @rep (@host for
 * ibping-style answers). 1 good, 0 bad. */
int ibw_ping_check_echo(const struct ibw_mad_done *d, enum ibw_echo_type type,
			uint16_t id, uint16_t seq, struct ibw_echo_reply *rep);

#endif
