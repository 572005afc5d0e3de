/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The route census: every unicast route of the fabric from the switches'
 * linear forwarding tables (core/lft.h) and the discovered topology
 * (core/fabric.h), computed without a MAD. For every (source CA port,
 * destination LID) pair: the path, or where it breaks (no entry, a port
 * that is down, a loop, a dead end, a table not read), its hop count and
 * whether it is as short as the topology allows; per link and direction
 * the routes crossing it; per switch and tier the balance of routes over
 * the uplinks; and the changes between two censuses as events. The model,
 * what is covered and the formulas are in docs/routes.md.
 *
 * A census is immutable and reference-counted, like the fabric; it holds
 * references to the fabric and the table set it was computed from, and
 * answers the path of any pair on demand by walking the tables (O(hops)).
 */
#ifndef IBW_CENSUS_H
#define IBW_CENSUS_H

#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "fabric.h"
#include "lft.h"
#include "trace.h"

enum ibw_route_status {
	IBW_ROUTE_OK,
	IBW_ROUTE_NO_ENTRY, /* a switch has no entry (0xff, 0, no port) */
	IBW_ROUTE_PORT_DOWN, /* the output port is not active, or no link */
	IBW_ROUTE_LOOP, /* a switch reached twice */
	IBW_ROUTE_DEAD_END, /* a CA (or router) that is not the destination */
	IBW_ROUTE_NO_TABLE, /* a switch's table could not be read */
	IBW_ROUTE_STATUS_MAX,
};

/* "no entry"; as a JSON key or label value, snake_case: "no_entry". */
const char *ibw_route_status_str(enum ibw_route_status s);
const char *ibw_route_status_key(enum ibw_route_status s);

struct ibw_census_opts {
	unsigned top_links; /* worst-loaded link directions kept; 0: 10 */
};

#define IBW_CENSUS_HOPS_HIST 16 /* the last bin counts longer paths too */

struct ibw_census_summary {
	unsigned sources; /* Active CA ports with a LID */
	unsigned dlids; /* their LIDs (each LID of an LMC range) */
	unsigned switches;
	unsigned tables_missing; /* switches without a table */
	unsigned tables_stale; /* ... with an older table */
	/* Pairs: every source with every destination LID not its own. */
	uint64_t pairs;
	uint64_t routed;
	uint64_t unreachable; /* no entry, port down, dead end, no table */
	uint64_t looping;
	uint64_t non_minimal; /* routed, longer than the shortest path */
	uint64_t by_status[IBW_ROUTE_STATUS_MAX];
	uint64_t hops_hist[IBW_CENSUS_HOPS_HIST]; /* routed pairs by hops */
	unsigned max_hops;
	double mean_hops; /* over routed pairs */
	uint64_t compute_us; /* CPU time of ibw_census_compute() */
	size_t memory_bytes; /* the census's own allocations */
};

/* The routes leaving node @guid by @port towards @peer_guid:@peer_port
 * (one direction of a link). */
struct ibw_link_load {
	uint64_t guid;
	uint8_t port;
	uint64_t peer_guid;
	uint8_t peer_port;
	uint32_t routes;
};

/*
 * The routes a switch sends up, over its uplinks (links to a switch of
 * the next tier): max/mean and the coefficient of variation
 * (population standard deviation / mean) of the uplinks' loads. 0 when
 * no route goes up.
 */
struct ibw_switch_balance {
	uint64_t guid;
	unsigned tier;
	unsigned uplinks;
	uint32_t up_min, up_max;
	uint64_t up_routes; /* sum over the uplinks */
	double max_mean;
	double cv;
};

/* Tier 0: switches with a CA attached; tier k: k switch hops from the
 * nearest of those. */
struct ibw_tier_balance {
	unsigned tier;
	unsigned switches; /* in the tier */
	unsigned with_uplinks; /* ... that have uplinks carrying routes */
	unsigned uplinks;
	double worst_max_mean; /* the least even switch of the tier */
	uint64_t worst_guid;
	double mean_max_mean;
	double mean_cv;
	/* over all uplinks of the tier taken together */
	double max_mean;
	double cv;
};

/* One pair of the census, as listed. */
struct ibw_route_pair {
	uint64_t src_guid; /* node GUID of the source CA */
	uint8_t src_port;
	uint16_t slid; /* the source port's base LID */
	uint64_t dst_guid; /* node GUID of the destination CA */
	uint8_t dst_port;
	uint16_t dlid;
	enum ibw_route_status status;
	unsigned hops; /* links crossed (routed), or up to the break */
	unsigned min_hops; /* the shortest the topology allows, 0: none */
	/* where it breaks: the node and its output port */
	uint64_t break_guid;
	uint8_t break_port;
};

/* One pair's path, walked from the tables on demand. */
struct ibw_census_route {
	enum ibw_route_status status;
	unsigned hops;
	unsigned min_hops; /* 0: no path in the topology, or unknown */
	int minimal;
	uint64_t break_guid;
	uint8_t break_port;
	/* The same shape as a live trace's forward path (core/trace.h):
	 * hop 0 the source, then each switch, then the destination;
	 * ibw_path_equal() compares the two. */
	struct ibw_path path;
};

struct ibw_census;

/* Compute the census of @f (frozen) with the tables of @t. Returns a new
 * census (one reference) or NULL (ENOMEM). */
struct ibw_census *ibw_census_compute(struct ibw_fabric *f,
				      struct ibw_lft_set *t,
				      const struct ibw_census_opts *o);
struct ibw_census *ibw_census_ref(struct ibw_census *c);
void ibw_census_unref(struct ibw_census *c);

const struct ibw_census_summary *ibw_census_summary(const struct ibw_census *c);
struct ibw_fabric *ibw_census_fabric(const struct ibw_census *c);
struct ibw_lft_set *ibw_census_tables(const struct ibw_census *c);

/* Every direction of every link (both ends known, neither gone), in
 * (guid, port) order; *n gets the count. */
const struct ibw_link_load *ibw_census_loads(const struct ibw_census *c,
					     unsigned *n);
/* The @top_links most loaded directions, most first. */
const struct ibw_link_load *ibw_census_top_links(const struct ibw_census *c,
						 unsigned *n);
/* The load leaving @guid by @port: 0 and *out, or -ENOENT (no link). */
int ibw_census_link_load(const struct ibw_census *c, uint64_t guid,
			 uint8_t port, struct ibw_link_load *out);
/* Switches with uplinks, in GUID order. */
const struct ibw_switch_balance *
ibw_census_switch_balance(const struct ibw_census *c, unsigned *n);
/* Tiers 0.. in order. */
const struct ibw_tier_balance *ibw_census_tiers(const struct ibw_census *c,
						unsigned *n);

/* Select pairs for ibw_census_pairs(): statuses, and routed pairs that
 * are not minimal. */
#define IBW_CENSUS_SEL(status) (1u << (status))
#define IBW_CENSUS_SEL_BROKEN                                                  \
	(IBW_CENSUS_SEL(IBW_ROUTE_NO_ENTRY) |                                  \
	 IBW_CENSUS_SEL(IBW_ROUTE_PORT_DOWN) |                                 \
	 IBW_CENSUS_SEL(IBW_ROUTE_LOOP) | IBW_CENSUS_SEL(IBW_ROUTE_DEAD_END) | \
	 IBW_CENSUS_SEL(IBW_ROUTE_NO_TABLE))
#define IBW_CENSUS_SEL_NON_MINIMAL (1u << 16)

/*
 * The pairs @sel selects, in (destination port, its LIDs, source port)
 * order, ports in (node GUID, port) order: skip the first @skip, copy up
 * to @max into @out; returns how many were copied and sets *total (if not
 * NULL) to how many there are in all (a scan of every pair of the
 * destinations concerned).
 */
unsigned ibw_census_pairs(const struct ibw_census *c, unsigned sel,
			  uint64_t skip, struct ibw_route_pair *out,
			  unsigned max, uint64_t *total);

/* The route from the port with LID @slid (a CA port, or a switch) to
 * @dlid, walked from the census's tables: 0, or -ENOENT when no port of
 * the fabric has @slid. */
int ibw_census_lookup(const struct ibw_census *c, uint16_t slid, uint16_t dlid,
		      struct ibw_census_route *r);

struct ibw_census_diff_opts {
	/* a switch's max/mean above this (and not before): an event;
	 * 0: 1.25 */
	double balance_threshold;
	/* a switch's most loaded uplink carrying more than this share
	 * more routes: an event; 0: 0.10 */
	double load_rise;
	/* pairs named in an event's detail at most; 0: 4 */
	unsigned examples;
};

/* What changed between two censuses. Pairs are matched by the ports
 * (node GUID and port number) and the LID's offset in the destination
 * port's range, so that LIDs the SM moved match. */
struct ibw_census_delta {
	uint64_t compared; /* pairs in both */
	uint64_t lost; /* routed in @old, not in @cur */
	uint64_t restored; /* the other way */
	uint64_t new_loops; /* looping in @cur, not in @old */
	unsigned balance_worse; /* switches that crossed the threshold */
	/* switches whose uplinks changed in number or carry more */
	unsigned load_changed;
};

/*
 * Compare @old with @cur (pairs in both): fill @d (if not NULL) and add
 * events to @ev (if not NULL), each only when its count is not 0:
 * - IBW_EVT_ROUTES_LOST: old_value the pairs routed in @old, new_value
 *   the pairs lost;
 * - IBW_EVT_ROUTES_RESTORED: old_value the pairs not routed in @old,
 *   new_value the pairs routed again;
 * - IBW_EVT_ROUTE_LOOPS: old_value the pairs looping in @old, new_value
 *   the pairs newly looping;
 *   for these three, detail names the first @examples pairs ("node0001
 *   HCA-1[1] (lid 3) -> lid 303: no entry at leaf01") and node_guid and
 *   port are where the first one breaks;
 * - IBW_EVT_ROUTE_LOAD, one per switch whose uplinks changed in number
 *   or whose most loaded uplink carries more than @load_rise more
 *   routes: old/new_value that uplink's routes, detail "leaf01: 17
 *   uplinks carry 324..324 routes (was 18 carrying 306..306)";
 * - IBW_EVT_ROUTE_BALANCE, one per switch whose max/mean rose above
 *   @balance_threshold: old/new_value max/mean x 1000.
 * Returns the number of events added.
 */
unsigned ibw_census_diff(const struct ibw_census *old,
			 const struct ibw_census *cur,
			 const struct ibw_census_diff_opts *o,
			 struct ibw_census_delta *d, struct ibw_events *ev);

#endif
