/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Test helper: a plain directed-route walk of the fabric on the engine,
 * so that tests and benchmarks know every node, its DR path and its LID.
 */
#ifndef IBW_TEST_WALK_H
#define IBW_TEST_WALK_H

#include "codec.h"
#include "engine.h"
#include "fabric.h"

struct walk_node {
	struct ibw_dest dr; /* directed route from the local port */
	struct ibw_nodeinfo ni; /* as read over @dr */
	struct ibw_portinfo pi; /* port 0 of a switch, the CA's port */
	int have_pi;
};

struct walk {
	struct walk_node *nodes;
	unsigned nnodes, cap;
	unsigned errors; /* probes that failed for another reason than
			    'nothing at the end of this port' */
};

/* Walk the fabric; runs @loop until done or @timeout_ms. Returns 0 or
 * -errno (-ETIMEDOUT). */
int walk_fabric(struct ibw_loop *loop, struct ibw_engine *e, struct walk *w,
		unsigned timeout_ms);
void walk_free(struct walk *w);

/* One sweep of the core's discovery, waited for: the new fabric (the
 * caller owns the reference), or NULL. */
struct ibw_fabric *walk_discover(struct ibw_loop *loop, struct ibw_engine *e,
				 unsigned timeout_ms);

/* Run @loop until @e is idle, at most @timeout_ms; 0 or -ETIMEDOUT. */
int walk_run_until_idle(struct ibw_loop *loop, struct ibw_engine *e,
			unsigned timeout_ms);

#endif
