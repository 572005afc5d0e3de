/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ask the fabric about the local port: NodeInfo, NodeDescription and
 * PortInfo by directed route with zero hops. sysfs (and umad2sim's fake
 * of it) can be stale; this is the live answer.
 */
#ifndef IBW_LOCALPORT_H
#define IBW_LOCALPORT_H

#include "codec.h"
#include "engine.h"
#include "safename.h"

struct ibw_localport_query;

struct ibw_localport_part {
	struct ibw_localport_query *q;
	uint16_t attr;
};

struct ibw_localport_query {
	/* results, valid once the callback ran */
	int have_nodeinfo, have_portinfo, have_desc;
	struct ibw_nodeinfo ni;
	struct ibw_portinfo pi;
	char desc[IBW_NAME_SIZE];
	enum ibw_mad_result first_error; /* IBW_MAD_OK when all answered */
	int first_status;

	/* private */
	struct ibw_engine *e;
	struct ibw_localport_part parts[3];
	unsigned pending;
	void (*cb)(struct ibw_localport_query *q, void *arg);
	void *arg;
};

/* Start the three queries for local port @portnum; @cb runs once all
 * three are settled, never from inside this call. Returns -errno if
 * nothing could be started (and @cb will not run), else 0. */
int ibw_localport_query(struct ibw_engine *e, int portnum,
			struct ibw_localport_query *q,
			void (*cb)(struct ibw_localport_query *q, void *arg),
			void *arg);

#endif
