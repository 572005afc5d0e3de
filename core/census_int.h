/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The route census's insides, shared by census.c (the computation and
 * its accessors), census_query.c (routes looked up and walked hop by
 * hop, pairs listed) and census_diff.c (two censuses compared into
 * events): not for any other file.
 */
#ifndef IBW_CENSUS_INT_H
#define IBW_CENSUS_INT_H

#include <stdint.h>

#include "census.h"
#include "fabric.h"
#include "lft.h"

/*
 * The outcome of the route from switch s to destination k is one
 * uint16_t: status in bits 0-2, "minimal" in bit 3, hops (links from s
 * to the destination, or to where it breaks) in bits 4-15.
 */
#define O_UNSET 0xffffu
#define O_STATUS(v) ((enum ibw_route_status)((v)&7u))
#define O_MIN 0x8u
#define O_HOPS(v) ((unsigned)(v) >> 4)
#define O_MAXHOPS 0xffeu
#define NO_DIST 0xffu
#define NO_TIER 0xffu
#define DSEL_NON_MINIMAL 0x80u

struct rsw {
	unsigned node; /* index in the fabric's nodes */
	const struct ibw_lft_table *t;
	uint16_t lid;
	uint16_t span; /* 1 << LMC */
	uint8_t tier;
	unsigned nsrc; /* sources hanging off it by an active link */
};

/* An endport: a CA (or router) port with a LID. */
struct rep {
	unsigned node;
	uint8_t port;
	uint16_t lid, span;
	int32_t sw; /* the switch it hangs off by an active link, or -1 */
	unsigned flat;
	unsigned first_dst; /* its LIDs are dst[first_dst ..+span] */
};

/* A destination LID. */
struct rdst {
	uint16_t lid;
	unsigned ep;
};

/* LID ranges for lookups: CA ports and switches' port 0. */
struct rlid {
	uint16_t lid, span;
	unsigned node;
	uint8_t port;
};

struct ibw_census {
	unsigned refs;
	struct ibw_fabric *f;
	struct ibw_lft_set *t;
	struct ibw_census_summary sum;
	unsigned nnodes, nflat;
	unsigned *pbase; /* per node: its ports' first flat index */
	unsigned *nodeof; /* per flat port: its node */
	int32_t *peer; /* per flat port: the flat port across the link */
	int32_t *swof; /* per node: switch index, or -1 */
	struct rsw *sw;
	unsigned nsw;
	struct rep *ep;
	unsigned nep;
	unsigned *abn; /* endports not hanging off a switch */
	unsigned nabn;
	struct rdst *dst;
	unsigned ndst;
	struct rlid *lids;
	unsigned nlids;
	uint8_t *dist; /* nsw x nsw: switch hops over active links */
	uint16_t *out; /* ndst x nsw outcomes */
	/* The same once computed, a byte each, when every hop count fits
	 * in four bits (then out is freed): 13.4 MB instead of 26.9 on the
	 * 57,024-port tree. An outcome is the same number either way. */
	uint8_t *out8;
	uint8_t *dsel; /* per destination: statuses seen, non-minimal */
	uint32_t *load; /* per flat port: routes leaving by it */
	struct ibw_link_load *loads, *top;
	unsigned nloads, ntop;
	struct ibw_switch_balance *bal;
	unsigned nbal;
	struct ibw_tier_balance *tiers;
	unsigned ntiers;
};

static inline const struct ibw_fnode *node(const struct ibw_census *c,
					   unsigned i)
{
	return &c->f->nodes[i];
}

static inline const struct ibw_fport *fport(const struct ibw_census *c,
					    unsigned flat)
{
	unsigned n = c->nodeof[flat];

	return &c->f->nodes[n].ports[flat - c->pbase[n]];
}

static inline int active(const struct ibw_fport *p)
{
	return p->have_pi && p->pi.state == IBW_PORT_ACTIVE;
}

static inline int is_switch(const struct ibw_fnode *n)
{
	return n->ni.node_type == IBW_NODE_SWITCH;
}

static inline int in_range(uint16_t lid, uint16_t base, uint16_t span)
{
	return base && lid >= base && lid - base < span;
}

/* The flat port across the link from @flat: an active port whose peer
 * is known. -1 otherwise. */
static inline int32_t link_of(const struct ibw_census *c, unsigned flat)
{
	return active(fport(c, flat)) ? c->peer[flat] : -1;
}

/* One switch's forwarding decision for @dlid. */
struct step {
	int done; /* the route ends here: @st, @hops */
	enum ibw_route_status st;
	unsigned hops; /* OK: 0 at the switch itself, 1 at the next CA */
	uint8_t out;
	int32_t next; /* not done: the next switch */
	unsigned next_in; /* ... entered by this port */
};

void ibw_cen_step(const struct ibw_census *c, unsigned s, uint16_t dlid,
		  struct step *r);
/* The outcome (O_*) of the route from endport @i to destination @k. */
uint16_t ibw_cen_pair_outcome(const struct ibw_census *c, unsigned i,
			      unsigned k);
/* The LID range @lid is in (a CA port's or a switch's port 0), or NULL. */
const struct rlid *ibw_cen_find_lid(const struct ibw_census *c, uint16_t lid);
/* The route from endport @src to @dlid, walked hop by hop (census_query.c). */
void ibw_cen_lookup_from(const struct ibw_census *c, const struct rlid *src,
			 uint16_t dlid, struct ibw_census_route *r);

#endif
