/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fabric as a map (docs/api.md, /api/v1/map): switches by level, found from the
 * topology (level 1: switches with a CA attached, the leaves; level k:
 * k-1 switch hops from the nearest leaf; 0: no leaf reachable), each
 * leaf's hosts as one tile (how many, how many down, their cables'
 * health), and the cables between two switches as one bundle per pair
 * (how many, their health, the busiest direction's utilisation). Built
 * from a snapshot: the fabric, the link view and the endports; a few
 * hundred bytes per switch and bundle however many hosts there are.
 */
#ifndef IBW_FMAP_H
#define IBW_FMAP_H

#include <stdint.h>

#include "links.h"
#include "snapshot.h"

struct ibw_fmap_switch {
	const struct ibw_fnode *n; /* in the snapshot's fabric */
	unsigned level;
	unsigned hosts; /* CA ports cabled to it */
	unsigned hosts_down; /* ... whose endport is down */
	unsigned host_links[IBW_HEALTH_MAX]; /* their cables by health */
	uint8_t health; /* the worst of all its cables */
};

struct ibw_fmap_bundle {
	unsigned a, b; /* switch indices, a's GUID the lower */
	unsigned cables;
	unsigned count[IBW_HEALTH_MAX];
	uint8_t health; /* the worst */
	double utilisation; /* the busiest direction, last sweep; -1 */
	uint32_t reasons; /* of all its cables */
	/* routed pairs of the last route census crossing its cables, both
	 * ways; -1: no census */
	int64_t routes;
};

struct ibw_fmap {
	struct ibw_fmap_switch *sw; /* in GUID order */
	unsigned nsw;
	struct ibw_fmap_bundle *b; /* in (a, b) order */
	unsigned nb;
	unsigned levels; /* the highest level + 1 */
	unsigned hosts, host_cables, switch_cables;
};

/* NULL on ENOMEM; an empty map before the first discovery. */
struct ibw_fmap *ibw_fmap_build(const struct ibw_snapshot *s);
void ibw_fmap_free(struct ibw_fmap *m);
/* The switch with @guid, or NULL. */
const struct ibw_fmap_switch *ibw_fmap_switch(const struct ibw_fmap *m,
					      uint64_t guid);

#endif
