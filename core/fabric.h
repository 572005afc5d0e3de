/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The picture of the fabric one discovery sweep produced: nodes (by node
 * GUID), their ports and the links between them. Built by discover.c,
 * then frozen and shared by reference: readers never see it change.
 */
#ifndef IBW_FABRIC_H
#define IBW_FABRIC_H

#include <stdint.h>

#include "codec.h"
#include "engine.h"
#include "events.h"
#include "safename.h"

struct ibw_fport {
	uint8_t num;
	uint8_t have_pi;
	uint8_t gone; /* vanished since an earlier sweep */
	uint64_t guid; /* 0 when never reached through this port */
	struct ibw_portinfo pi;
	uint64_t remote_guid; /* 0: no link */
	uint8_t remote_port;
	/* The port is active, but the node behind it answered no SMP we
	 * sent through it: its SMA refuses us (M_Key protection, our key
	 * wrong or missing), or hangs. */
	uint8_t peer_protected;
};

struct ibw_fnode {
	uint64_t guid;
	struct ibw_nodeinfo ni;
	char desc[IBW_NAME_SIZE];
	struct ibw_dest dr; /* a directed route from the local port */
	uint16_t lid; /* switch: port 0; CA: its first port with a LID */
	uint16_t lft_cap, lft_top; /* switches: linear forwarding table */
	uint8_t gone; /* not reached by the last sweep */
	uint64_t gone_since_us; /* CLOCK_REALTIME */
	/* Known from an earlier sweep and still there behind an active
	 * link, but refusing our SMPs (see ibw_fport.peer_protected): kept
	 * with what we last read, not gone. */
	uint8_t is_protected;
	uint64_t protected_since_us; /* CLOCK_REALTIME */
	unsigned nports; /* num_ports + 1: ports[0] is switch port 0 */
	struct ibw_fport *ports;
};

struct ibw_sweep_stats {
	uint64_t start_us; /* CLOCK_REALTIME */
	uint64_t duration_us;
	uint64_t mads;
	uint64_t timeouts;
	uint64_t errors; /* failed queries other than timeouts */
};

struct ibw_fabric {
	unsigned refs; /* atomic: a snapshot may drop it on any thread */
	unsigned nnodes, cap;
	struct ibw_fnode *nodes; /* sorted by guid once frozen */
	struct ibw_sweep_stats sweep;
	uint64_t local_guid; /* the node ibwatchd runs on */
	/* Ports of switches that refuse us, which the sweep looked past
	 * (so they are not in @nodes), behind which a NodeInfo went
	 * unanswered too: peer_protected of ports we could not read. */
	struct ibw_refusal {
		uint64_t guid;
		uint8_t port;
	} * refusals;
	unsigned nrefusals, refusals_cap;
};

/* Note that a NodeInfo through (@guid, @port) went unanswered; only
 * while building. 0 or -ENOMEM. */
int ibw_fabric_add_refusal(struct ibw_fabric *f, uint64_t guid, uint8_t port);

struct ibw_fabric *ibw_fabric_new(void);
struct ibw_fabric *ibw_fabric_ref(struct ibw_fabric *f);
void ibw_fabric_unref(struct ibw_fabric *f);

/* Add a node with @nports ports (ports[0..nports-1]); returns it or NULL.
 * Only while building. Pointers stay valid until the next add. */
struct ibw_fnode *ibw_fabric_add_node(struct ibw_fabric *f, uint64_t guid,
				      unsigned nports);
/* Sort and index: after this the fabric is read-only. */
void ibw_fabric_freeze(struct ibw_fabric *f);

/* The ports of @n that exist: a switch's from 0 (its management port),
 * any other node's from 1 (a CA has no port 0). */
unsigned ibw_fabric_first_port(const struct ibw_fnode *n);

/*
 * Whether port @p of @n is an endport, addressed by a LID and a port GUID
 * of its own: a switch's port 0 (its management port; the physical ports
 * have no LID), a CA's or router's ports from 1 (they have no port 0).
 * The one place this rule lives; the probe code asks it on the live
 * fabric, the snapshot's views on the published one.
 */
int ibw_fabric_endport(const struct ibw_fnode *n, unsigned p);

/* The LID of port @p of @n if it is an endport whose PortInfo was read,
 * else 0 (no LID, not read, not an endport). */
uint16_t ibw_fabric_endport_lid(const struct ibw_fnode *n, unsigned p);

const struct ibw_fnode *ibw_fabric_find(const struct ibw_fabric *f,
					uint64_t guid);
const struct ibw_fnode *ibw_fabric_find_lid(const struct ibw_fabric *f,
					    uint16_t lid,
					    const struct ibw_fport **port);

/*
 * Compare @old with @cur (both frozen) and add the differences to @ev:
 * nodes and ports added or gone, links up or down, LID, state, width and
 * speed changes. Nodes of @old missing from @cur are copied into @cur
 * marked gone, so a vanished node stays visible as such; or, when a port
 * of @cur that led to one is active but found its peer refusing SMPs
 * (peer_protected), marked protected with that link kept: neither gone
 * nor down. Returns the number of events added.
 */
unsigned ibw_fabric_diff(const struct ibw_fabric *old, struct ibw_fabric *cur,
			 struct ibw_events *ev);

#endif
