/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which fabric this is (docs/operations.md, "Many agents, many
 * fabrics"): the subnet prefix our port's PortInfo carries and the port
 * GUID of the master SM its MasterSMLID names, found in the last
 * discovery (no MAD of its own). Two agents on one subnet agree on it;
 * it changes when the master SM moves to another port or the prefix
 * changes, and an event says so.
 */
#ifndef IBW_FABRIC_ID_H
#define IBW_FABRIC_ID_H

#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "fabric.h"

struct ibw_fabric_id {
	int known; /* 0 before the first discovery that found our port */
	uint64_t subnet_prefix; /* GidPrefix */
	uint64_t sm_guid; /* the master SM's port GUID (never 0 when known) */
	uint64_t sm_node_guid; /* its node's GUID */
	uint16_t sm_lid;
	uint8_t sm_port;
	uint64_t since_us; /* CLOCK_REALTIME: when it took this value */
	uint64_t changes; /* times it changed since the agent started */
};

/* Room for ibw_fabric_id_str(): "0x" 16 "/0x" 16 and a NUL. */
#define IBW_FABRIC_ID_LEN 40

/* What @f says through our port @local_port; known 0 when the port or
 * its PortInfo is not in @f, or no port of @f is at its MasterSMLID
 * (the SM is gone and none has taken over yet): no identity then, and
 * ibw_fabric_id_update() keeps the last. */
void ibw_fabric_id_of(const struct ibw_fabric *f, unsigned local_port,
		      struct ibw_fabric_id *id);

/* "0xfe80000000000000/0x0002c90300000001": the prefix and the SM's
 * port GUID, the value of the fabric label. */
void ibw_fabric_id_str(const struct ibw_fabric_id *id, char *buf, size_t n);

/* Whether @a and @b name another fabric (prefix or SM port GUID). */
int ibw_fabric_id_differs(const struct ibw_fabric_id *a,
			  const struct ibw_fabric_id *b);

/*
 * Take @nw (from a discovery at @now_us) as the current identity @cur:
 * an IBW_EVT_FABRIC_CHANGED event into @ev when a known one changes.
 * The SM's LID alone moving is no new fabric. Returns 1 on a change.
 */
int ibw_fabric_id_update(struct ibw_fabric_id *cur,
			 const struct ibw_fabric_id *nw, uint64_t now_us,
			 struct ibw_events *ev);

#endif
