// SPDX-License-Identifier: BSD-2-Clause
/*
 * The route census on a hand-built fabric and hand-written tables: a
 * two-level tree of two leaves and two spines (the spines also linked to
 * each other), two hosts per leaf.
 *
 *   H1 H2          H3 H4        lids 1 2 3 4
 *    1  2           1  2
 *     L1             L2          lids 10 11
 *    3  4           3  4
 *    |   \_______  /   |
 *    |    _______\/    |
 *    1  2/        \ 1  2
 *     S1 --3----3-- S2           lids 12 13
 *
 * L1 port 3 - S1 port 1, L1 port 4 - S2 port 1, L2 port 3 - S1 port 2,
 * L2 port 4 - S2 port 2, S1 port 3 - S2 port 3. The base tables route
 * up to S1 for H1/H3, to S2 for H2/H4 (minimal and even); each test
 * changes one thing: a hole, a loop, a port down, a detour, a missing
 * table, a dead end, an uneven leaf, an LMC range.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <infiniband/mad.h>

#include "engine.h"
#include "events.h"
#include "fabric.h"
#include "lft.h"
#include "loop.h"
#include "census.h"
#include "transport_mem.h"

#define H1 0x0001000000000001ull
#define H2 0x0001000000000002ull
#define H3 0x0001000000000003ull
#define H4 0x0001000000000004ull
#define L1 0x0002000000000001ull
#define L2 0x0002000000000002ull
#define S1 0x0002000000000011ull
#define S2 0x0002000000000012ull

#define TOP 16

struct rig {
	struct ibw_fabric *f;
	uint8_t t[4][TOP + 1]; /* L1, L2, S1, S2 */
	int drop[4]; /* no table for this switch */
	unsigned h4_lmc;
};

static struct ibw_fnode *nd(struct ibw_fabric *f, uint64_t guid)
{
	unsigned i;

	for (i = 0; i < f->nnodes; i++)
		if (f->nodes[i].guid == guid)
			return &f->nodes[i];
	fail_msg("no node 0x%llx", (unsigned long long)guid);
	return NULL;
}

static void add(struct ibw_fabric *f, uint64_t guid, enum ibw_node_type type,
		unsigned nports, const char *desc, uint16_t lid, unsigned lmc)
{
	struct ibw_fnode *n = ibw_fabric_add_node(f, guid, nports + 1);
	unsigned p;

	assert_non_null(n);
	n->ni.node_type = type;
	n->ni.num_ports = nports;
	n->ni.node_guid = guid;
	n->ni.port_guid = type == IBW_NODE_SWITCH ? guid : guid + 0x100;
	snprintf(n->desc, sizeof(n->desc), "%s", desc);
	n->lid = lid;
	for (p = type == IBW_NODE_SWITCH ? 0 : 1; p <= nports; p++) {
		struct ibw_fport *fp = &n->ports[p];

		fp->have_pi = 1;
		fp->guid = n->ni.port_guid;
		fp->pi.lid = lid;
		fp->pi.lmc = (uint8_t)lmc;
		fp->pi.state = p == 0 ? IBW_PORT_ACTIVE : IBW_PORT_DOWN;
		fp->pi.width_active = 2;
		fp->pi.speed_active = 4;
	}
}

static void link2(struct ibw_fabric *f, uint64_t a, unsigned pa, uint64_t b,
		  unsigned pb)
{
	struct ibw_fport *x = &nd(f, a)->ports[pa], *y = &nd(f, b)->ports[pb];

	x->remote_guid = b;
	x->remote_port = (uint8_t)pb;
	y->remote_guid = a;
	y->remote_port = (uint8_t)pa;
	x->pi.state = y->pi.state = IBW_PORT_ACTIVE;
}

static void build(struct rig *g)
{
	struct ibw_fabric *f = ibw_fabric_new();

	add(f, H1, IBW_NODE_CA, 1, "host1", 1, 0);
	add(f, H2, IBW_NODE_CA, 1, "host2", 2, 0);
	add(f, H3, IBW_NODE_CA, 1, "host3", 3, 0);
	add(f, H4, IBW_NODE_CA, 1, "host4", 4, g->h4_lmc);
	add(f, L1, IBW_NODE_SWITCH, 4, "leaf1", 10, 0);
	add(f, L2, IBW_NODE_SWITCH, 4, "leaf2", 11, 0);
	add(f, S1, IBW_NODE_SWITCH, 3, "spine1", 12, 0);
	add(f, S2, IBW_NODE_SWITCH, 3, "spine2", 13, 0);
	ibw_fabric_freeze(f);
	link2(f, H1, 1, L1, 1);
	link2(f, H2, 1, L1, 2);
	link2(f, H3, 1, L2, 1);
	link2(f, H4, 1, L2, 2);
	link2(f, L1, 3, S1, 1);
	link2(f, L1, 4, S2, 1);
	link2(f, L2, 3, S1, 2);
	link2(f, L2, 4, S2, 2);
	link2(f, S1, 3, S2, 3);
	g->f = f;
}

/* Minimal, even tables: hosts 1/3 by S1, 2/4 by S2. */
static void base_tables(struct rig *g)
{
	uint8_t *l1 = g->t[0], *l2 = g->t[1], *s1 = g->t[2], *s2 = g->t[3];

	memset(g->t, 0xff, sizeof(g->t));
	l1[1] = 1, l1[2] = 2, l1[3] = 3, l1[4] = 4, l1[5] = 4;
	l2[1] = 3, l2[2] = 4, l2[3] = 1, l2[4] = 2, l2[5] = 2;
	s1[1] = 1, s1[2] = 1, s1[3] = 2, s1[4] = 2, s1[5] = 2;
	s2[1] = 1, s2[2] = 1, s2[3] = 2, s2[4] = 2, s2[5] = 2;
	l1[10] = 0, l1[11] = 3, l1[12] = 3, l1[13] = 4;
	l2[10] = 3, l2[11] = 0, l2[12] = 3, l2[13] = 4;
	s1[10] = 1, s1[11] = 2, s1[12] = 0, s1[13] = 3;
	s2[10] = 1, s2[11] = 2, s2[12] = 3, s2[13] = 0;
}

static struct ibw_census *census(struct rig *g)
{
	static const uint64_t sw[4] = { L1, L2, S1, S2 };
	static const uint16_t lid[4] = { 10, 11, 12, 13 };
	struct ibw_lft_set *s = ibw_lft_set_new();
	struct ibw_census *c;
	unsigned i;

	for (i = 0; i < 4; i++)
		assert_non_null(ibw_lft_set_add(s, sw[i], lid[i], TOP,
						g->drop[i] ? NULL : g->t[i],
						g->drop[i] ? 0 : TOP + 1));
	ibw_lft_set_freeze(s);
	c = ibw_census_compute(g->f, s, NULL);
	assert_non_null(c);
	ibw_lft_set_unref(s);
	return c;
}

static struct rig *rig_new(void)
{
	static struct rig g;

	memset(&g, 0, sizeof(g));
	build(&g);
	base_tables(&g);
	return &g;
}

static void rig_free(struct rig *g)
{
	ibw_fabric_unref(g->f);
}

static uint32_t load(const struct ibw_census *c, uint64_t guid, uint8_t port)
{
	struct ibw_link_load l;

	assert_int_equal(ibw_census_link_load(c, guid, port, &l), 0);
	return l.routes;
}

static void test_all_routed(void **state)
{
	struct rig *g = rig_new();
	struct ibw_census *c = census(g);
	const struct ibw_census_summary *s = ibw_census_summary(c);
	struct ibw_census_route r;

	(void)state;
	assert_int_equal(s->sources, 4);
	assert_int_equal(s->dlids, 4);
	assert_int_equal(s->switches, 4);
	assert_int_equal(s->pairs, 12);
	assert_int_equal(s->routed, 12);
	assert_int_equal(s->unreachable, 0);
	assert_int_equal(s->looping, 0);
	assert_int_equal(s->non_minimal, 0);
	/* 4 pairs within a leaf (2 links), 8 across (4 links) */
	assert_int_equal(s->hops_hist[2], 4);
	assert_int_equal(s->hops_hist[4], 8);
	assert_int_equal(s->max_hops, 4);
	assert_true(s->memory_bytes > 0);

	/* H1 -> lid 3: host1, leaf1, spine1, leaf2, host3 */
	assert_int_equal(ibw_census_lookup(c, 1, 3, &r), 0);
	assert_int_equal(r.status, IBW_ROUTE_OK);
	assert_int_equal(r.path.status, IBW_TRACE_OK);
	assert_int_equal(r.hops, 4);
	assert_int_equal(r.min_hops, 4);
	assert_true(r.minimal);
	assert_int_equal(r.path.nhops, 5);
	assert_true(r.path.hops[0].node_guid == H1);
	assert_int_equal(r.path.hops[0].in_port, 0);
	assert_int_equal(r.path.hops[0].out_port, 1);
	assert_true(r.path.hops[1].node_guid == L1);
	assert_int_equal(r.path.hops[1].in_port, 1);
	assert_int_equal(r.path.hops[1].out_port, 3);
	assert_true(r.path.hops[2].node_guid == S1);
	assert_int_equal(r.path.hops[2].in_port, 1);
	assert_int_equal(r.path.hops[2].out_port, 2);
	assert_true(r.path.hops[3].node_guid == L2);
	assert_int_equal(r.path.hops[3].in_port, 3);
	assert_int_equal(r.path.hops[3].out_port, 1);
	assert_true(r.path.hops[4].node_guid == H3);
	assert_true(r.path.hops[4].port_guid == H3 + 0x100);
	assert_int_equal(r.path.hops[4].in_port, 1);
	assert_int_equal(r.path.hops[4].lid, 3);
	assert_string_equal(r.path.hops[2].name, "spine1");

	/* from a switch: leaf2 -> lid 2 goes by spine2 */
	assert_int_equal(ibw_census_lookup(c, 11, 2, &r), 0);
	assert_int_equal(r.status, IBW_ROUTE_OK);
	assert_int_equal(r.hops, 3);
	assert_true(r.path.hops[0].node_guid == L2);
	assert_int_equal(r.path.hops[0].out_port, 4);
	assert_true(r.path.hops[1].node_guid == S2);
	/* to a switch: host4 -> leaf1 */
	assert_int_equal(ibw_census_lookup(c, 4, 10, &r), 0);
	assert_int_equal(r.status, IBW_ROUTE_OK);
	assert_int_equal(r.hops, 3);
	assert_true(r.path.hops[3].node_guid == L1);
	assert_int_equal(r.path.hops[3].out_port, 0);
	/* an unknown source */
	assert_int_equal(ibw_census_lookup(c, 99, 3, &r), -ENOENT);
	/* an unassigned destination: no entry at the first switch */
	assert_int_equal(ibw_census_lookup(c, 1, 9, &r), 0);
	assert_int_equal(r.status, IBW_ROUTE_NO_ENTRY);
	ibw_census_unref(c);
	rig_free(g);
}

static void test_loads_and_balance(void **state)
{
	struct rig *g = rig_new();
	struct ibw_census *c = census(g);
	const struct ibw_switch_balance *b;
	const struct ibw_tier_balance *t;
	const struct ibw_link_load *top, *all;
	unsigned n, i;
	uint64_t sum = 0;

	(void)state;
	/* up from leaf1: H1,H2 -> 3 by S1, -> 4 by S2 */
	assert_int_equal(load(c, L1, 3), 2);
	assert_int_equal(load(c, L1, 4), 2);
	assert_int_equal(load(c, S1, 2), 2);
	assert_int_equal(load(c, S2, 2), 2);
	/* down to H1: from H2 and from H3, H4 by S1 */
	assert_int_equal(load(c, L1, 1), 3);
	assert_int_equal(load(c, S1, 1), 2);
	/* every host sends 3 routes */
	assert_int_equal(load(c, H1, 1), 3);
	assert_int_equal(load(c, H4, 1), 3);
	/* the spine-spine link carries nothing */
	assert_int_equal(load(c, S1, 3), 0);
	assert_int_equal(load(c, S2, 3), 0);
	assert_int_equal(ibw_census_link_load(c, S1, 0,
					      &(struct ibw_link_load){ 0 }),
			 -ENOENT);
	/* both directions of 9 links */
	all = ibw_census_loads(c, &n);
	assert_int_equal(n, 18);
	/* each route crosses hops links: 4*2 + 8*4 */
	for (i = 0; i < n; i++)
		sum += all[i].routes;
	assert_int_equal(sum, 40);
	top = ibw_census_top_links(c, &n);
	assert_int_equal(n, 10);
	assert_int_equal(top[0].routes, 3);
	for (i = 1; i < n; i++)
		assert_true(top[i].routes <= top[i - 1].routes);

	b = ibw_census_switch_balance(c, &n);
	assert_int_equal(n, 2); /* the leaves; spines have no uplinks */
	assert_true(b[0].guid == L1);
	assert_int_equal(b[0].tier, 0);
	assert_int_equal(b[0].uplinks, 2);
	assert_int_equal(b[0].up_routes, 4);
	assert_true(b[0].max_mean > 0.999 && b[0].max_mean < 1.001);
	assert_true(b[0].cv < 0.001);
	t = ibw_census_tiers(c, &n);
	assert_int_equal(n, 2);
	assert_int_equal(t[0].switches, 2);
	assert_int_equal(t[0].with_uplinks, 2);
	assert_int_equal(t[0].uplinks, 4);
	assert_int_equal(t[1].switches, 2);
	assert_int_equal(t[1].uplinks, 0);
	ibw_census_unref(c);

	/* Leaf1 sends everything up by S1: loads 4 and 0, max/mean 2,
	 * cv 1 (population standard deviation 2 over mean 2). */
	g->t[0][4] = 3;
	c = census(g);
	assert_int_equal(load(c, L1, 3), 4);
	assert_int_equal(load(c, L1, 4), 0);
	b = ibw_census_switch_balance(c, &n);
	assert_true(b[0].guid == L1);
	assert_int_equal(b[0].up_min, 0);
	assert_int_equal(b[0].up_max, 4);
	assert_true(b[0].max_mean > 1.999 && b[0].max_mean < 2.001);
	assert_true(b[0].cv > 0.999 && b[0].cv < 1.001);
	t = ibw_census_tiers(c, &n);
	assert_true(t[0].worst_guid == L1);
	assert_true(t[0].worst_max_mean > 1.999);
	/* the tier's 4 uplinks: 4, 0, 2, 2 */
	assert_true(t[0].max_mean > 1.999 && t[0].max_mean < 2.001);
	ibw_census_unref(c);
	rig_free(g);
}

static void test_hole(void **state)
{
	struct rig *g = rig_new();
	struct ibw_census *c;
	struct ibw_route_pair p[4];
	struct ibw_census_route r;
	uint64_t total;
	unsigned n;

	(void)state;
	g->t[0][3] = 0xff; /* leaf1 forgets host3 */
	c = census(g);
	assert_int_equal(ibw_census_summary(c)->pairs, 12);
	assert_int_equal(ibw_census_summary(c)->routed, 10);
	assert_int_equal(ibw_census_summary(c)->unreachable, 2);
	assert_int_equal(ibw_census_summary(c)->by_status[IBW_ROUTE_NO_ENTRY],
			 2);
	n = ibw_census_pairs(c, IBW_CENSUS_SEL_BROKEN, 0, p, 4, &total);
	assert_int_equal(n, 2);
	assert_int_equal(total, 2);
	assert_true(p[0].src_guid == H1);
	assert_true(p[1].src_guid == H2);
	assert_int_equal(p[0].dlid, 3);
	assert_true(p[0].dst_guid == H3);
	assert_int_equal(p[0].status, IBW_ROUTE_NO_ENTRY);
	assert_true(p[0].break_guid == L1);
	assert_int_equal(p[0].hops, 1);
	assert_int_equal(p[0].min_hops, 4);
	/* skip one */
	n = ibw_census_pairs(c, IBW_CENSUS_SEL_BROKEN, 1, p, 4, &total);
	assert_int_equal(n, 1);
	assert_true(p[0].src_guid == H2);
	/* the path names the hop and the reason as a trace does */
	assert_int_equal(ibw_census_lookup(c, 2, 3, &r), 0);
	assert_int_equal(r.status, IBW_ROUTE_NO_ENTRY);
	assert_int_equal(r.path.status, IBW_TRACE_NO_ROUTE);
	assert_int_equal(r.path.fail_hop, 1);
	assert_string_equal(r.path.reason, "leaf1 has no route to lid 3");
	assert_true(r.break_guid == L1);
	/* the route from leaf2's side is untouched */
	assert_int_equal(ibw_census_lookup(c, 4, 3, &r), 0);
	assert_int_equal(r.status, IBW_ROUTE_OK);
	ibw_census_unref(c);
	rig_free(g);
}

static void test_loop(void **state)
{
	struct rig *g = rig_new();
	struct ibw_census *c;
	struct ibw_route_pair p[4];
	struct ibw_census_route r;
	uint64_t total;

	(void)state;
	/* leaf2 sends lid 1 to spine2, spine2 sends it back */
	g->t[1][1] = 4;
	g->t[3][1] = 2;
	c = census(g);
	assert_int_equal(ibw_census_summary(c)->looping, 2);
	assert_int_equal(ibw_census_summary(c)->routed, 10);
	assert_int_equal(ibw_census_pairs(c, IBW_CENSUS_SEL(IBW_ROUTE_LOOP), 0,
					  p, 4, &total),
			 2);
	assert_true(p[0].src_guid == H3 && p[1].src_guid == H4);
	assert_int_equal(p[0].dlid, 1);
	assert_int_equal(ibw_census_lookup(c, 3, 1, &r), 0);
	assert_int_equal(r.status, IBW_ROUTE_LOOP);
	assert_int_equal(r.path.status, IBW_TRACE_LOOP);
	/* host3, leaf2, spine2, leaf2 again */
	assert_int_equal(r.path.nhops, 4);
	assert_true(r.path.hops[3].node_guid == L2);
	assert_non_null(strstr(r.path.reason, "seen twice"));
	/* host2 (on leaf1) still reaches host1 */
	assert_int_equal(ibw_census_lookup(c, 2, 1, &r), 0);
	assert_int_equal(r.status, IBW_ROUTE_OK);
	ibw_census_unref(c);
	rig_free(g);
}

/* A line of @nsw switches (LIDs 100 up) with a host at each end (LIDs 1
 * and 2), every table routing both hosts along the line: the hosts'
 * routes take nsw + 1 hops. */
static struct ibw_census *chain(unsigned nsw)
{
	struct ibw_fabric *f = ibw_fabric_new();
	struct ibw_lft_set *s = ibw_lft_set_new();
	struct ibw_census *c;
	uint8_t t[128];
	unsigned i;

	assert_true(nsw >= 2 && 100 + nsw < sizeof(t));
	add(f, H1, IBW_NODE_CA, 1, "host1", 1, 0);
	add(f, H2, IBW_NODE_CA, 1, "host2", 2, 0);
	for (i = 0; i < nsw; i++)
		add(f, L1 + i, IBW_NODE_SWITCH, 3, "sw", (uint16_t)(100 + i),
		    0);
	ibw_fabric_freeze(f);
	/* port 1 toward host1, port 2 toward host2, port 3 the hosts */
	link2(f, H1, 1, L1, 3);
	link2(f, H2, 1, L1 + nsw - 1, 3);
	for (i = 0; i + 1 < nsw; i++)
		link2(f, L1 + i, 2, L1 + i + 1, 1);
	for (i = 0; i < nsw; i++) {
		unsigned j;

		memset(t, 0xff, sizeof(t));
		t[1] = i == 0 ? 3 : 1;
		t[2] = i == nsw - 1 ? 3 : 2;
		for (j = 0; j < nsw; j++)
			t[100 + j] = j == i ? 0 : j < i ? 1 : 2;
		assert_non_null(ibw_lft_set_add(s, L1 + i, (uint16_t)(100 + i),
						100 + nsw, t, 100 + nsw + 1));
	}
	ibw_lft_set_freeze(s);
	c = ibw_census_compute(f, s, NULL);
	assert_non_null(c);
	ibw_lft_set_unref(s);
	ibw_fabric_unref(f);
	return c;
}

/* The outcomes are kept a byte each when every hop count fits in four
 * bits, two bytes else: a route of 5 hops and one of 21 read back the
 * same way. */
static void test_long_routes(void **state)
{
	static const unsigned nsw[2] = { 4, 20 };
	struct ibw_census_route r;
	struct ibw_route_pair p[4];
	uint64_t total;
	unsigned k;

	(void)state;
	for (k = 0; k < 2; k++) {
		struct ibw_census *c = chain(nsw[k]);

		assert_int_equal(ibw_census_summary(c)->looping, 0);
		assert_int_equal(ibw_census_lookup(c, 1, 2, &r), 0);
		assert_int_equal(r.status, IBW_ROUTE_OK);
		assert_int_equal(r.hops, nsw[k] + 1);
		assert_int_equal(ibw_census_lookup(c, 2, 1, &r), 0);
		assert_int_equal(r.status, IBW_ROUTE_OK);
		assert_int_equal(r.hops, nsw[k] + 1);
		/* the pairs' outcomes, read from the kept outcomes */
		assert_int_equal(ibw_census_pairs(c,
						  IBW_CENSUS_SEL(IBW_ROUTE_OK),
						  0, p, 4, &total),
				 2);
		assert_int_equal(total, 2);
		assert_int_equal(p[0].hops, nsw[k] + 1);
		assert_int_equal(p[1].hops, nsw[k] + 1);
		assert_true(p[0].dlid == 1 && p[1].dlid == 2);
		ibw_census_unref(c);
	}
}

static void test_port_down(void **state)
{
	struct rig *g = rig_new();
	struct ibw_census *c;
	struct ibw_route_pair p[4];
	struct ibw_census_route r;
	uint64_t total;

	(void)state;
	/* the leaf1 - spine1 link is down, tables unchanged */
	nd(g->f, L1)->ports[3].pi.state = IBW_PORT_DOWN;
	nd(g->f, S1)->ports[1].pi.state = IBW_PORT_DOWN;
	c = census(g);
	/* H1, H2 -> 3 up by it; H3, H4 -> 1 down by it */
	assert_int_equal(ibw_census_summary(c)->by_status[IBW_ROUTE_PORT_DOWN],
			 4);
	assert_int_equal(
		ibw_census_pairs(c, IBW_CENSUS_SEL_BROKEN, 0, p, 4, &total), 4);
	assert_int_equal(total, 4);
	assert_int_equal(ibw_census_lookup(c, 1, 3, &r), 0);
	assert_int_equal(r.status, IBW_ROUTE_PORT_DOWN);
	assert_true(r.break_guid == L1);
	assert_int_equal(r.break_port, 3);
	assert_string_equal(r.path.reason, "leaf1 port 3 is down");
	assert_int_equal(ibw_census_lookup(c, 3, 1, &r), 0);
	assert_int_equal(r.status, IBW_ROUTE_PORT_DOWN);
	assert_true(r.break_guid == S1);
	assert_int_equal(r.break_port, 1);
	ibw_census_unref(c);

	/* a host port that is down is neither source nor destination */
	nd(g->f, H4)->ports[1].pi.state = IBW_PORT_DOWN;
	nd(g->f, L2)->ports[2].pi.state = IBW_PORT_DOWN;
	c = census(g);
	assert_int_equal(ibw_census_summary(c)->sources, 3);
	assert_int_equal(ibw_census_summary(c)->pairs, 6);
	/* ... but its path answers: down at its own port */
	assert_int_equal(ibw_census_lookup(c, 4, 1, &r), 0);
	assert_int_equal(r.status, IBW_ROUTE_PORT_DOWN);
	assert_true(r.break_guid == H4);
	ibw_census_unref(c);
	rig_free(g);
}

static void test_non_minimal(void **state)
{
	struct rig *g = rig_new();
	struct ibw_census *c;
	struct ibw_route_pair p[4];
	struct ibw_census_route r;
	uint64_t total;

	(void)state;
	/* spine1 sends lid 3 over to spine2: 5 links instead of 4 */
	g->t[2][3] = 3;
	c = census(g);
	assert_int_equal(ibw_census_summary(c)->routed, 12);
	assert_int_equal(ibw_census_summary(c)->non_minimal, 2);
	assert_int_equal(ibw_census_summary(c)->hops_hist[5], 2);
	assert_int_equal(ibw_census_pairs(c, IBW_CENSUS_SEL_NON_MINIMAL, 0, p,
					  4, &total),
			 2);
	assert_int_equal(p[0].status, IBW_ROUTE_OK);
	assert_int_equal(p[0].hops, 5);
	assert_int_equal(p[0].min_hops, 4);
	assert_int_equal(
		ibw_census_pairs(c, IBW_CENSUS_SEL_BROKEN, 0, p, 4, &total), 0);
	assert_int_equal(total, 0);
	assert_int_equal(ibw_census_lookup(c, 1, 3, &r), 0);
	assert_int_equal(r.status, IBW_ROUTE_OK);
	assert_int_equal(r.hops, 5);
	assert_int_equal(r.min_hops, 4);
	assert_false(r.minimal);
	assert_int_equal(load(c, S1, 3), 2);
	ibw_census_unref(c);
	rig_free(g);
}

static void test_dead_end_and_no_table(void **state)
{
	struct rig *g = rig_new();
	struct ibw_census *c;
	struct ibw_census_route r;

	(void)state;
	g->t[0][3] = 2; /* leaf1 sends lid 3 to host2 */
	c = census(g);
	/* host1 -> 3, and host2 -> 3 sent back down its own link */
	assert_int_equal(ibw_census_summary(c)->by_status[IBW_ROUTE_DEAD_END],
			 2);
	assert_int_equal(ibw_census_lookup(c, 1, 3, &r), 0);
	assert_int_equal(r.status, IBW_ROUTE_DEAD_END);
	assert_true(r.path.hops[r.path.nhops - 1].node_guid == H2);
	ibw_census_unref(c);

	base_tables(g);
	g->drop[2] = 1; /* spine1's table not read */
	c = census(g);
	assert_int_equal(ibw_census_summary(c)->tables_missing, 1);
	/* H1, H2 -> 3 and H3, H4 -> 1 cross spine1 */
	assert_int_equal(ibw_census_summary(c)->by_status[IBW_ROUTE_NO_TABLE],
			 4);
	assert_int_equal(ibw_census_lookup(c, 1, 3, &r), 0);
	assert_int_equal(r.status, IBW_ROUTE_NO_TABLE);
	assert_true(r.break_guid == S1);
	assert_string_equal(r.path.reason, "the forwarding table of spine1 was "
					   "not read");
	ibw_census_unref(c);
	rig_free(g);
}

static void test_lmc(void **state)
{
	struct rig g;
	struct ibw_census *c;
	const struct ibw_census_summary *s;

	(void)state;
	memset(&g, 0, sizeof(g));
	g.h4_lmc = 1; /* host4: lids 4 and 5 */
	build(&g);
	base_tables(&g);
	g.t[1][5] = 0xff; /* leaf2 has no entry for lid 5 */
	c = census(&g);
	s = ibw_census_summary(c);
	assert_int_equal(s->dlids, 5);
	/* 4 sources x 5 LIDs, less each port's own (1+1+1+2) */
	assert_int_equal(s->pairs, 15);
	/* lid 5 from H1, H2 (by S2, then leaf2) and H3 */
	assert_int_equal(s->by_status[IBW_ROUTE_NO_ENTRY], 3);
	/* H4 sends 3 routes, and nothing to its own LIDs */
	assert_int_equal(load(c, H4, 1), 3);
	ibw_census_unref(c);
	ibw_fabric_unref(g.f);
}

static void test_diff(void **state)
{
	struct rig *g = rig_new();
	struct ibw_census *base, *hole, *loop, *uneven;
	struct ibw_census_delta d;
	struct ibw_events *ev = ibw_events_new(64);
	struct ibw_event e[8];
	const struct ibw_census_diff_opts quiet = { .balance_threshold = 2.5 };
	unsigned n;

	(void)state;
	base = census(g);
	g->t[0][3] = 0xff;
	hole = census(g);
	base_tables(g);
	g->t[1][1] = 4;
	g->t[3][1] = 2;
	loop = census(g);
	base_tables(g);
	g->t[0][4] = 3;
	uneven = census(g);

	/* the same census: nothing */
	assert_int_equal(ibw_census_diff(base, base, NULL, &d, ev), 0);
	assert_int_equal(d.compared, 12);
	assert_int_equal(d.lost + d.restored + d.new_loops, 0);

	/* a hole: 2 routes lost, named (the threshold above the balance
	 * the hole leaves: see below) */
	assert_int_equal(ibw_census_diff(base, hole, &quiet, &d, ev), 1);
	assert_int_equal(d.lost, 2);
	assert_int_equal(ibw_events_since(ev, 0, e, 8), 1);
	assert_int_equal(e[0].kind, IBW_EVT_ROUTES_LOST);
	assert_int_equal(e[0].old_value, 12);
	assert_int_equal(e[0].new_value, 2);
	assert_true(e[0].node_guid == L1);
	assert_string_equal(e[0].detail, "host1[1] (lid 1) -> lid 3: no entry "
					 "at leaf1; "
					 "host2[1] (lid 2) -> lid 3: no entry "
					 "at leaf1");
	/* ... and back */
	assert_int_equal(ibw_census_diff(hole, base, &quiet, &d, ev), 1);
	assert_int_equal(d.restored, 2);
	n = ibw_events_since(ev, 1, e, 8);
	assert_int_equal(n, 1);
	assert_int_equal(e[0].kind, IBW_EVT_ROUTES_RESTORED);
	assert_int_equal(e[0].new_value, 2);

	/* a loop: lost, and loops appeared */
	assert_int_equal(ibw_census_diff(base, loop, &quiet, &d, ev), 2);
	assert_int_equal(d.lost, 2);
	assert_int_equal(d.new_loops, 2);
	n = ibw_events_since(ev, 2, e, 8);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].kind, IBW_EVT_ROUTES_LOST);
	assert_int_equal(e[1].kind, IBW_EVT_ROUTE_LOOPS);
	assert_int_equal(e[1].new_value, 2);
	assert_non_null(strstr(e[1].detail, "host3[1] (lid 3) -> lid 1: loop"));
	/* a loop that stays is not news */
	assert_int_equal(ibw_census_diff(loop, loop, NULL, &d, ev), 0);
	/* with the default threshold the hole also unbalances leaf1: its
	 * uplinks carry 0 and 2 routes */
	assert_int_equal(ibw_census_diff(base, hole, NULL, &d, ev), 2);
	n = ibw_events_since(ev, 4, e, 8);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].kind, IBW_EVT_ROUTES_LOST);
	assert_int_equal(e[1].kind, IBW_EVT_ROUTE_BALANCE);
	assert_true(e[1].node_guid == L1);
	assert_string_equal(e[1].detail, "leaf1: 2 uplinks carry 0..2 routes, "
					 "max/mean 2.00 (was 1.00), cv 1.00");

	/* leaf1's uplinks uneven: its busiest uplink carries twice as
	 * many routes (a load event) and the balance crossed the
	 * threshold; neither the other way */
	assert_int_equal(ibw_census_diff(base, uneven, NULL, &d, ev), 2);
	assert_int_equal(d.lost, 0);
	assert_int_equal(d.balance_worse, 1);
	assert_int_equal(d.load_changed, 1);
	n = ibw_events_since(ev, 6, e, 8);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].kind, IBW_EVT_ROUTE_LOAD);
	assert_true(e[0].node_guid == L1);
	assert_int_equal(e[0].old_value, 2);
	assert_int_equal(e[0].new_value, 4);
	assert_int_equal(e[1].kind, IBW_EVT_ROUTE_BALANCE);
	assert_true(e[1].node_guid == L1);
	assert_int_equal(e[1].old_value, 1000);
	assert_int_equal(e[1].new_value, 2000);
	assert_int_equal(ibw_census_diff(uneven, base, NULL, &d, ev), 0);
	/* ... and thresholds above it: nothing */
	assert_int_equal(ibw_census_diff(base, uneven,
					 &(struct ibw_census_diff_opts){
						 .balance_threshold = 2.5,
						 .load_rise = 1.5 },
					 &d, ev),
			 0);

	/* no events ring: the delta alone */
	assert_int_equal(ibw_census_diff(base, hole, NULL, &d, NULL), 0);
	assert_int_equal(d.lost, 2);

	ibw_census_unref(base);
	ibw_census_unref(hole);
	ibw_census_unref(loop);
	ibw_census_unref(uneven);
	ibw_events_free(ev);
	rig_free(g);
}

/* A spine link goes (leaf1 - spine1): first the tables still use it
 * (routes lost, named), then the SM reroutes by spine2 (none lost, the
 * surviving uplink carries what the lost one did). */
static void test_diff_unlink(void **state)
{
	struct rig *g = rig_new();
	struct ibw_census *before, *down, *rerouted;
	struct ibw_census_delta d;
	struct ibw_events *ev = ibw_events_new(64);
	struct ibw_event e[8];
	const struct ibw_switch_balance *b;
	struct ibw_link_load l;
	struct ibw_fabric *f0 = g->f;
	uint64_t total;
	unsigned n;

	(void)state;
	before = census(g);
	build(g); /* the next sweep's fabric */
	nd(g->f, L1)->ports[3].pi.state = IBW_PORT_DOWN;
	nd(g->f, S1)->ports[1].pi.state = IBW_PORT_DOWN;
	nd(g->f, L1)->ports[3].remote_guid = 0;
	nd(g->f, S1)->ports[1].remote_guid = 0;
	down = census(g);
	ibw_census_diff(before, down, NULL, &d, ev);
	assert_int_equal(d.lost, 4);
	n = ibw_events_since(ev, 0, e, 8);
	assert_true(n >= 1);
	assert_int_equal(e[0].kind, IBW_EVT_ROUTES_LOST);
	assert_int_equal(e[0].new_value, 4);
	assert_non_null(strstr(e[0].detail, "host1[1] (lid 1) -> lid 3: "
					    "port down at leaf1[3]"));
	assert_int_equal(ibw_census_pairs(down, IBW_CENSUS_SEL_BROKEN, 0, NULL,
					  0, &total),
			 0);
	assert_int_equal(total, 4);

	/* rerouted: lids 1 and 3 by spine2 too */
	g->t[0][3] = 4;
	g->t[1][1] = 4;
	rerouted = census(g);
	assert_int_equal(ibw_census_summary(rerouted)->routed, 12);
	ibw_census_diff(before, rerouted, NULL, &d, ev);
	assert_int_equal(d.lost, 0);
	assert_int_equal(d.compared, 12);
	n = ibw_events_since(ev, n, e, 8);
	/* leaf1: one uplink left with all 4 routes; leaf2: still two,
	 * but all 4 up by spine2 */
	assert_int_equal(n, 3);
	assert_int_equal(e[0].kind, IBW_EVT_ROUTE_LOAD);
	assert_true(e[0].node_guid == L1);
	assert_string_equal(e[0].detail, "leaf1: 1 uplinks carry 4..4 routes "
					 "(was 2 carrying 2..2)");
	assert_int_equal(e[1].kind, IBW_EVT_ROUTE_LOAD);
	assert_true(e[1].node_guid == L2);
	assert_int_equal(e[2].kind, IBW_EVT_ROUTE_BALANCE);
	assert_true(e[2].node_guid == L2);
	b = ibw_census_switch_balance(rerouted, &n);
	assert_true(b[0].guid == L1);
	assert_int_equal(b[0].uplinks, 1);
	assert_int_equal(b[0].up_routes, 4);
	assert_int_equal(load(rerouted, L1, 4), 4);
	assert_int_equal(load(rerouted, S2, 1), 4);
	assert_int_equal(ibw_census_link_load(rerouted, L1, 3, &l), -ENOENT);
	ibw_census_unref(before);
	ibw_census_unref(down);
	ibw_census_unref(rerouted);
	ibw_fabric_unref(f0);
	ibw_events_free(ev);
	rig_free(g);
}

/* A host that moved to another LID is the same pair: matched by port. */
static void test_diff_lid_moved(void **state)
{
	struct rig *g = rig_new();
	struct ibw_census *a, *b;
	struct ibw_census_delta d;
	struct ibw_fabric *old;

	(void)state;
	a = census(g);
	/* the next sweep's fabric: a census's fabric never changes */
	old = g->f;
	build(g);
	nd(g->f, H3)->ports[1].pi.lid = 6;
	g->t[0][6] = 0xff; /* and no route to its new LID from leaf1 */
	g->t[1][6] = 1;
	g->t[2][6] = 2;
	g->t[3][6] = 2;
	b = census(g);
	ibw_census_diff(a, b, NULL, &d, NULL);
	assert_int_equal(d.compared, 12);
	assert_int_equal(d.lost, 2);
	ibw_census_unref(a);
	ibw_census_unref(b);
	ibw_fabric_unref(old);
	rig_free(g);
}

static void test_lft_set(void **state)
{
	struct ibw_lft_set *s = ibw_lft_set_new();
	uint8_t ports[3] = { 0, 5, 0xff };
	const struct ibw_lft_table *t;

	(void)state;
	assert_non_null(ibw_lft_set_add(s, 30, 7, 2, ports, 3));
	assert_non_null(ibw_lft_set_add(s, 10, 8, 0, NULL, 0));
	ibw_lft_set_freeze(s);
	assert_int_equal(ibw_lft_count(s), 2);
	assert_true(ibw_lft_at(s, 0)->guid == 10);
	t = ibw_lft_find(s, 30);
	assert_non_null(t);
	assert_int_equal(ibw_lft_port(t, 1), 5);
	assert_int_equal(ibw_lft_port(t, 2), 0xff);
	assert_int_equal(ibw_lft_port(t, 3), 0xff); /* beyond top */
	assert_int_equal(ibw_lft_port(ibw_lft_find(s, 10), 0), 0xff);
	assert_null(ibw_lft_find(s, 20));
	ibw_lft_set_unref(s);
}

/* The reader on the in-memory transport: switch A (LID 5, top 100: two
 * blocks, LID-routed), switch B (no LID, top 63: one block, directed). */
#define SWA 0x0003000000000001ull
#define SWB 0x0003000000000002ull

struct lrig {
	struct ibw_loop *loop;
	struct ibw_transport *t;
	struct ibw_engine *e;
	struct ibw_lft *l;
	struct ibw_fabric *f;
	unsigned done;
	struct ibw_lft_set *last;
};

static void on_set(struct ibw_lft_set *s, void *arg)
{
	struct lrig *g = arg;

	ibw_lft_set_unref(g->last);
	g->last = ibw_lft_set_ref(s);
	g->done++;
}

static void spin(struct lrig *g)
{
	unsigned i;

	for (i = 0; i < 10; i++)
		ibw_loop_run_once(g->loop, 1000);
}

/* Take the next request: it must be an LFT Get of @block, by LID (1) or
 * directed route (0). */
static void take(struct lrig *g, uint8_t mad[IBW_MAD_SIZE], uint32_t block,
		 int by_lid)
{
	spin(g);
	assert_int_equal(ibw_mem_next_sent(g->t, mad, NULL), 1);
	assert_int_equal(mad_get_field(mad, 0, IB_MAD_ATTRID_F),
			 IBW_ATTR_LINEAR_FWD);
	assert_int_equal(mad_get_field(mad, 0, IB_MAD_ATTRMOD_F), block);
	assert_int_equal(mad[1], by_lid ? 0x01 : 0x81);
}

/* Answer with every entry = @port + the entry's index, or @status. */
static void reply(struct lrig *g, uint8_t mad[IBW_MAD_SIZE], uint8_t port,
		  int status)
{
	unsigned i;

	for (i = 0; i < IBW_LFT_BLOCK; i++)
		mad[IB_SMP_DATA_OFFS + i] = (uint8_t)(port + i % 4);
	ibw_mem_make_response(mad, status);
	assert_int_equal(ibw_mem_inject(g->t, mad, IBW_MAD_SIZE, 0), 0);
}

static void test_lft_reader(void **state)
{
	struct lrig g;
	struct ibw_fnode *n;
	const struct ibw_lft_table *a, *b;
	const struct ibw_lft_stats *st;
	uint8_t m0[IBW_MAD_SIZE], m1[IBW_MAD_SIZE], m2[IBW_MAD_SIZE];
	/* Every failure here is a status answer: a try that timed out
	 * while a loaded machine was slow between take and reply would be
	 * one the test did not make. */
	struct ibw_lft_opts o = { .window = 2,
				  .retries = 0,
				  .timeout_ms = 10000 };

	(void)state;
	memset(&g, 0, sizeof(g));
	g.loop = ibw_loop_new();
	g.t = ibw_mem_transport_new();
	g.e = ibw_engine_new(g.loop, g.t, NULL);
	g.f = ibw_fabric_new();
	n = ibw_fabric_add_node(g.f, SWA, 5);
	n->ni.node_type = IBW_NODE_SWITCH;
	n->lid = 5;
	n->lft_cap = 1024;
	n->lft_top = 100;
	ibw_dest_dr_parse(&n->dr, "0,1");
	n = ibw_fabric_add_node(g.f, SWB, 5);
	n->ni.node_type = IBW_NODE_SWITCH;
	n->lft_cap = 1024;
	n->lft_top = 63;
	ibw_dest_dr_parse(&n->dr, "0,1,2");
	n = ibw_fabric_add_node(g.f, 0x0001000000000009ull, 2);
	n->ni.node_type = IBW_NODE_CA;
	ibw_fabric_freeze(g.f);
	g.l = ibw_lft_new(g.e, &o, on_set, &g);
	assert_null(ibw_lft_get(g.l));
	assert_int_equal(ibw_lft_refresh(g.l, g.f), 0);
	assert_true(ibw_lft_busy(g.l));

	/* Two in flight (the window): block 0 of A by LID, of B by DR. */
	take(&g, m1, 0, 1);
	take(&g, m2, 0, 0);
	spin(&g);
	assert_int_equal(ibw_mem_next_sent(g.t, m0, NULL), 0);
	reply(&g, m1, 10, 0);
	reply(&g, m2, 20, 0);
	/* A's block 1 fails by LID (a bad status), then goes by DR */
	take(&g, m1, 1, 1);
	reply(&g, m1, 0, 0x1c);
	take(&g, m1, 1, 0);
	reply(&g, m1, 30, 0);
	spin(&g);
	assert_int_equal(g.done, 1);
	assert_false(ibw_lft_busy(g.l));
	/* top is the end: nothing more was asked */
	assert_int_equal(ibw_mem_next_sent(g.t, m0, NULL), 0);

	a = ibw_lft_find(g.last, SWA);
	b = ibw_lft_find(g.last, SWB);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(ibw_lft_count(g.last), 2); /* not the CA */
	assert_int_equal(a->n, 101);
	assert_int_equal(a->lid, 5);
	assert_int_equal(ibw_lft_port(a, 0), 10);
	assert_int_equal(ibw_lft_port(a, 63), 13);
	assert_int_equal(ibw_lft_port(a, 64), 30);
	assert_int_equal(ibw_lft_port(a, 100), 30);
	assert_int_equal(ibw_lft_port(a, 101), 0xff); /* beyond top */
	assert_int_equal(b->n, 64);
	assert_int_equal(b->lid, 0);
	assert_int_equal(ibw_lft_port(b, 5), 21);
	assert_false(a->stale || b->stale);
	st = ibw_lft_set_stats(g.last);
	assert_int_equal(st->blocks, 3);
	assert_int_equal(st->mads, 4);
	assert_int_equal(st->lid_fallbacks, 1);
	assert_int_equal(st->failed_blocks, 0);
	assert_int_equal(st->fresh, 2);
	assert_int_equal(ibw_lft_mads(g.l), 4);

	/* Again; B fails: its old table stays, marked stale. */
	assert_int_equal(ibw_lft_refresh(g.l, g.f), 0);
	take(&g, m1, 0, 1);
	take(&g, m2, 0, 0);
	reply(&g, m1, 40, 0);
	reply(&g, m2, 0, 0x1c);
	take(&g, m1, 1, 1);
	reply(&g, m1, 50, 0);
	spin(&g);
	assert_int_equal(g.done, 2);
	a = ibw_lft_find(g.last, SWA);
	b = ibw_lft_find(g.last, SWB);
	assert_int_equal(ibw_lft_port(a, 0), 40);
	assert_false(a->stale);
	assert_true(b->stale);
	assert_int_equal(b->blocks_failed, 1);
	assert_int_equal(ibw_lft_port(b, 5), 21);
	st = ibw_lft_set_stats(g.last);
	assert_int_equal(st->stale, 1);
	assert_int_equal(st->fresh, 1);
	assert_int_equal(st->failed_blocks, 1);
	assert_int_equal(ibw_lft_refreshes(g.l), 2);

	/* A refresh in flight when the engine goes: no new set. */
	assert_int_equal(ibw_lft_refresh(g.l, g.f), 0);
	spin(&g);
	ibw_engine_free(g.e);
	assert_int_equal(g.done, 2);
	assert_false(ibw_lft_busy(g.l));
	ibw_lft_free(g.l);
	ibw_transport_close(g.t);

	/* ... and the reader freed first, its requests still out: they
	 * complete into nothing (the sanitizer build checks the memory). */
	g.t = ibw_mem_transport_new();
	g.e = ibw_engine_new(g.loop, g.t, NULL);
	g.l = ibw_lft_new(g.e, &o, on_set, &g);
	assert_int_equal(ibw_lft_refresh(g.l, g.f), 0);
	take(&g, m1, 0, 1);
	ibw_lft_free(g.l);
	reply(&g, m1, 10, 0);
	spin(&g);
	ibw_engine_free(g.e);
	assert_int_equal(g.done, 2);

	ibw_lft_set_unref(g.last);
	ibw_fabric_unref(g.f);
	ibw_transport_close(g.t);
	ibw_loop_free(g.loop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_routed),
		cmocka_unit_test(test_loads_and_balance),
		cmocka_unit_test(test_hole),
		cmocka_unit_test(test_loop),
		cmocka_unit_test(test_long_routes),
		cmocka_unit_test(test_port_down),
		cmocka_unit_test(test_non_minimal),
		cmocka_unit_test(test_dead_end_and_no_table),
		cmocka_unit_test(test_lmc),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_diff_unlink),
		cmocka_unit_test(test_diff_lid_moved),
		cmocka_unit_test(test_lft_set),
		cmocka_unit_test(test_lft_reader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
