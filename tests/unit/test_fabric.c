// SPDX-License-Identifier: BSD-2-Clause
/* Fabric diffs: what changed between two sweeps becomes events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fabric.h"
#include "fabric_id.h"

/* A switch 0x20 (4 ports) with hosts 0x10 and 0x11 on ports 1 and 2. */
static struct ibw_fabric *make(int with_host2, uint16_t lid1, int width)
{
	struct ibw_fabric *f = ibw_fabric_new();
	struct ibw_fnode *sw, *h;
	unsigned p;

	sw = ibw_fabric_add_node(f, 0x20, 5);
	sw->ni.node_type = IBW_NODE_SWITCH;
	sw->ni.num_ports = 4;
	for (p = 0; p < 5; p++) {
		sw->ports[p].have_pi = 1;
		sw->ports[p].pi.lid = 1;
		sw->ports[p].pi.state =
			p == 0 || p == 1 || (p == 2 && with_host2) ? 4 : 1;
		sw->ports[p].pi.width_active = 2;
	}
	sw->ports[1].remote_guid = 0x10;
	sw->ports[1].remote_port = 1;
	sw->ports[1].pi.width_active = (uint8_t)width;
	h = ibw_fabric_add_node(f, 0x10, 2);
	h->ni.node_type = IBW_NODE_CA;
	h->ports[1].have_pi = 1;
	h->ports[1].pi.lid = lid1;
	h->ports[1].pi.state = 4;
	h->ports[1].pi.width_active = (uint8_t)width;
	h->ports[1].remote_guid = 0x20;
	h->ports[1].remote_port = 1;
	if (with_host2) {
		sw = &f->nodes[0];
		sw->ports[2].remote_guid = 0x11;
		sw->ports[2].remote_port = 1;
		h = ibw_fabric_add_node(f, 0x11, 2);
		h->ni.node_type = IBW_NODE_CA;
		h->ports[1].have_pi = 1;
		h->ports[1].pi.lid = 3;
		h->ports[1].pi.state = 4;
		h->ports[1].pi.width_active = 2;
		h->ports[1].remote_guid = 0x20;
		h->ports[1].remote_port = 2;
	}
	ibw_fabric_freeze(f);
	return f;
}

static unsigned kinds(struct ibw_events *ev, uint64_t since,
		      enum ibw_event_kind k, struct ibw_event *last)
{
	struct ibw_event e[64];
	unsigned n = ibw_events_since(ev, since, e, 64), i, c = 0;

	for (i = 0; i < n; i++) {
		if (e[i].kind == k) {
			c++;
			if (last)
				*last = e[i];
		}
	}
	return c;
}

static void test_first_sweep_has_no_events(void **state)
{
	struct ibw_events *ev = ibw_events_new(64);
	struct ibw_fabric *a = make(1, 2, 2);

	assert_int_equal(ibw_fabric_diff(NULL, a, ev), 0);
	assert_int_equal(ibw_events_last_seq(ev), 0);
	ibw_fabric_unref(a);
	ibw_events_free(ev);
}

static void test_host_gone_and_back(void **state)
{
	struct ibw_events *ev = ibw_events_new(64);
	struct ibw_fabric *a = make(1, 2, 2), *b = make(0, 2, 2), *c;
	const struct ibw_fnode *n;
	struct ibw_event e;
	uint64_t s;

	ibw_fabric_diff(a, b, ev);
	assert_int_equal(kinds(ev, 0, IBW_EVT_NODE_GONE, &e), 1);
	assert_true(e.node_guid == 0x11);
	/* the link, once, from its lower end (0x11 < 0x20) */
	assert_int_equal(kinds(ev, 0, IBW_EVT_LINK_DOWN, &e), 1);
	assert_true(e.node_guid == 0x11 && e.peer_guid == 0x20);
	assert_int_equal(kinds(ev, 0, IBW_EVT_PORT_STATE_CHANGED, &e), 1);
	assert_true(e.node_guid == 0x20 && e.port == 2 && e.new_value == 1);
	/* the gone host is still in the picture, marked */
	n = ibw_fabric_find(b, 0x11);
	assert_non_null(n);
	assert_true(n->gone);
	assert_true(n->gone_since_us > 0);
	assert_int_equal(n->ports[1].remote_guid, 0);

	/* Still gone next sweep: no second event, still there. */
	s = ibw_events_last_seq(ev);
	c = make(0, 2, 2);
	ibw_fabric_diff(b, c, ev);
	assert_int_equal(kinds(ev, s, IBW_EVT_NODE_GONE, NULL), 0);
	assert_non_null(ibw_fabric_find(c, 0x11));
	ibw_fabric_unref(b);
	b = c;

	/* Back: added, link up. */
	s = ibw_events_last_seq(ev);
	c = make(1, 2, 2);
	ibw_fabric_diff(b, c, ev);
	assert_int_equal(kinds(ev, s, IBW_EVT_NODE_ADDED, &e), 1);
	assert_true(e.node_guid == 0x11);
	assert_int_equal(kinds(ev, s, IBW_EVT_LINK_UP, NULL), 1);
	assert_false(ibw_fabric_find(c, 0x11)->gone);
	ibw_fabric_unref(a);
	ibw_fabric_unref(b);
	ibw_fabric_unref(c);
	ibw_events_free(ev);
}

/* As make(0, 2, 2), but switch port 2 is active and the host behind it
 * answered none of our SMPs (it refuses our M_Key). */
static struct ibw_fabric *make_refused(void)
{
	struct ibw_fabric *f = make(0, 2, 2);
	struct ibw_fnode *sw = (struct ibw_fnode *)ibw_fabric_find(f, 0x20);

	sw->ports[2].pi.state = 4;
	sw->ports[2].peer_protected = 1;
	return f;
}

/* A host that starts refusing our SMPs behind an active port is kept,
 * protected, with its link: neither gone nor down. */
static void test_protected_not_gone(void **state)
{
	struct ibw_events *ev = ibw_events_new(64);
	struct ibw_fabric *a = make(1, 2, 2), *b = make_refused(), *c, *d;
	const struct ibw_fnode *n, *sw;
	uint64_t since, s;

	assert_int_equal(ibw_fabric_diff(a, b, ev), 0);
	assert_int_equal(ibw_events_last_seq(ev), 0);
	n = ibw_fabric_find(b, 0x11);
	assert_non_null(n);
	assert_false(n->gone);
	assert_true(n->is_protected);
	since = n->protected_since_us;
	assert_true(since > 0);
	/* what we last read of it stays, and its link both ways */
	assert_int_equal(n->ports[1].pi.lid, 3);
	assert_true(n->ports[1].remote_guid == 0x20);
	assert_int_equal(n->ports[1].remote_port, 2);
	sw = ibw_fabric_find(b, 0x20);
	assert_true(sw->ports[2].remote_guid == 0x11);
	assert_int_equal(sw->ports[2].remote_port, 1);

	/* Still refusing: still there, since the same time, no events. */
	c = make_refused();
	assert_int_equal(ibw_fabric_diff(b, c, ev), 0);
	n = ibw_fabric_find(c, 0x11);
	assert_true(n && n->is_protected && !n->gone);
	assert_true(n->protected_since_us == since);

	/* Answering again (our key is right now): no news, not protected. */
	d = make(1, 2, 2);
	assert_int_equal(ibw_fabric_diff(c, d, ev), 0);
	n = ibw_fabric_find(d, 0x11);
	assert_true(n && !n->is_protected && !n->gone);
	ibw_fabric_unref(b);
	ibw_fabric_unref(c);

	/* Refusing, then its link goes down: now it is gone. */
	b = make_refused();
	ibw_fabric_diff(d, b, ev);
	s = ibw_events_last_seq(ev);
	c = make(0, 2, 2);
	ibw_fabric_diff(b, c, ev);
	assert_int_equal(kinds(ev, s, IBW_EVT_NODE_GONE, NULL), 1);
	assert_int_equal(kinds(ev, s, IBW_EVT_LINK_DOWN, NULL), 1);
	n = ibw_fabric_find(c, 0x11);
	assert_true(n && n->gone && !n->is_protected);

	/* A refusing port with nobody known behind it: only the flag. */
	ibw_fabric_unref(d);
	d = make_refused();
	s = ibw_events_last_seq(ev);
	ibw_fabric_diff(c, d, ev);
	assert_int_equal(kinds(ev, s, IBW_EVT_NODE_GONE, NULL), 0);
	n = ibw_fabric_find(d, 0x11);
	assert_true(n && n->gone && !n->is_protected);
	sw = ibw_fabric_find(d, 0x20);
	assert_true(sw->ports[2].peer_protected && !sw->ports[2].remote_guid);
	ibw_fabric_unref(a);
	ibw_fabric_unref(b);
	ibw_fabric_unref(c);
	ibw_fabric_unref(d);
	ibw_events_free(ev);
}

/* Our CA 0x01 port 1 - switch 0x20 port 3; hosts 0x10 and 0x11 on the
 * switch's ports 1 and 2. With @refusing, the switch refuses our SMPs:
 * the sweep looked past it (0x10 answered through it, knowing only its
 * own end of the link; 0x11 did not: a refusal). */
static struct ibw_fabric *behind_switch(int refusing)
{
	struct ibw_fabric *f = ibw_fabric_new();
	struct ibw_fnode *a, *sw, *h;
	unsigned p;

	a = ibw_fabric_add_node(f, 0x01, 2);
	a->ni.node_type = IBW_NODE_CA;
	a->ports[1].have_pi = 1;
	a->ports[1].pi.state = 4;
	a->ports[1].pi.lid = 9;
	if (refusing) {
		a->ports[1].peer_protected = 1;
		ibw_fabric_add_refusal(f, 0x20, 2);
	} else {
		a->ports[1].remote_guid = 0x20;
		a->ports[1].remote_port = 3;
		sw = ibw_fabric_add_node(f, 0x20, 5);
		sw->ni.node_type = IBW_NODE_SWITCH;
		sw->ni.num_ports = 4;
		for (p = 0; p < 5; p++) {
			sw->ports[p].have_pi = 1;
			sw->ports[p].pi.state = p == 4 ? 1 : 4;
			sw->ports[p].pi.lid = 1;
		}
		sw->ports[1].remote_guid = 0x10;
		sw->ports[1].remote_port = 1;
		sw->ports[2].remote_guid = 0x11;
		sw->ports[2].remote_port = 1;
		sw->ports[3].remote_guid = 0x01;
		sw->ports[3].remote_port = 1;
		h = ibw_fabric_add_node(f, 0x11, 2);
		h->ni.node_type = IBW_NODE_CA;
		h->ports[1].have_pi = 1;
		h->ports[1].pi.state = 4;
		h->ports[1].pi.lid = 3;
		h->ports[1].remote_guid = 0x20;
		h->ports[1].remote_port = 2;
	}
	h = ibw_fabric_add_node(f, 0x10, 2);
	h->ni.node_type = IBW_NODE_CA;
	h->ports[1].have_pi = 1;
	h->ports[1].pi.state = 4;
	h->ports[1].pi.lid = 2;
	h->ports[1].remote_guid = 0x20;
	h->ports[1].remote_port = 1;
	ibw_fabric_freeze(f);
	return f;
}

/* A switch that refuses us, looked past: it and a host behind it that
 * refuses us too are protected, every link kept, nothing gone. */
static void test_protected_switch_looked_past(void **state)
{
	struct ibw_events *ev = ibw_events_new(64);
	struct ibw_fabric *a = behind_switch(0), *b = behind_switch(1);
	const struct ibw_fnode *sw, *h;

	assert_int_equal(ibw_fabric_diff(a, b, ev), 0);
	assert_int_equal(ibw_events_last_seq(ev), 0);
	assert_int_equal(b->nnodes, 4);
	sw = ibw_fabric_find(b, 0x20);
	assert_true(sw && sw->is_protected && !sw->gone);
	assert_true(sw->ports[1].remote_guid == 0x10);
	assert_true(sw->ports[2].remote_guid == 0x11);
	assert_true(sw->ports[3].remote_guid == 0x01);
	assert_true(ibw_fabric_find(b, 0x01)->ports[1].remote_guid == 0x20);
	h = ibw_fabric_find(b, 0x11);
	assert_true(h && h->is_protected && !h->gone);
	assert_true(h->ports[1].remote_guid == 0x20);
	assert_int_equal(h->ports[1].remote_port, 2);
	h = ibw_fabric_find(b, 0x10);
	assert_true(h && !h->is_protected && !h->gone);
	ibw_fabric_unref(a);
	ibw_fabric_unref(b);
	ibw_events_free(ev);
}

/* A NodeDescription lost in one sweep (NodeInfo answered) keeps the
 * previous name, also when the node goes the sweep after. */
static void test_lost_description_keeps_the_name(void **state)
{
	struct ibw_events *ev = ibw_events_new(64);
	struct ibw_fabric *a = make(1, 2, 2), *b = make(1, 2, 2), *c;

	snprintf(((struct ibw_fnode *)ibw_fabric_find(a, 0x11))->desc, 65,
		 "host two");
	ibw_fabric_diff(a, b, ev); /* b's description of 0x11 is empty */
	assert_string_equal(ibw_fabric_find(b, 0x11)->desc, "host two");
	c = make(0, 2, 2);
	ibw_fabric_diff(b, c, ev);
	assert_true(ibw_fabric_find(c, 0x11)->gone);
	assert_string_equal(ibw_fabric_find(c, 0x11)->desc, "host two");
	ibw_fabric_unref(a);
	ibw_fabric_unref(b);
	ibw_fabric_unref(c);
	ibw_events_free(ev);
}

static void test_lid_and_width_changes(void **state)
{
	struct ibw_events *ev = ibw_events_new(64);
	struct ibw_fabric *a = make(1, 2, 2), *b = make(1, 7, 1);
	struct ibw_event e;

	ibw_fabric_diff(a, b, ev);
	assert_int_equal(kinds(ev, 0, IBW_EVT_LID_CHANGED, &e), 1);
	assert_true(e.node_guid == 0x10 && e.old_value == 2 &&
		    e.new_value == 7);
	/* both ends of the link narrowed */
	assert_int_equal(kinds(ev, 0, IBW_EVT_LINK_WIDTH_CHANGED, NULL), 2);
	assert_int_equal(kinds(ev, 0, IBW_EVT_NODE_GONE, NULL), 0);
	ibw_fabric_unref(a);
	ibw_fabric_unref(b);
	ibw_events_free(ev);
}

static void test_find_lid(void **state)
{
	struct ibw_fabric *a = make(1, 2, 2);
	const struct ibw_fport *p = NULL;

	assert_true(ibw_fabric_find_lid(a, 3, &p)->guid == 0x11);
	assert_int_equal(p->num, 1);
	assert_true(ibw_fabric_find_lid(a, 1, &p)->guid == 0x20);
	assert_int_equal(p->num, 0);
	assert_null(ibw_fabric_find_lid(a, 99, NULL));
	ibw_fabric_unref(a);
}

/* make()'s fabric seen from host 0x10 (LID 2), its port's MasterSMLID
 * @sm_lid and prefix @prefix; the hosts' port GUIDs are 0x1001/0x1101. */
static struct ibw_fabric *seen_from_host(uint16_t sm_lid, uint64_t prefix)
{
	struct ibw_fabric *f = make(1, 2, 2);
	struct ibw_fnode *h = (struct ibw_fnode *)ibw_fabric_find(f, 0x10);

	f->local_guid = 0x10;
	h->ports[1].pi.sm_lid = sm_lid;
	h->ports[1].pi.gid_prefix = prefix;
	h->ports[1].guid = 0x1001;
	((struct ibw_fnode *)ibw_fabric_find(f, 0x11))->ports[1].guid = 0x1101;
	((struct ibw_fnode *)ibw_fabric_find(f, 0x20))->ports[0].guid = 0x20;
	return f;
}

/*
 * Which fabric: our port's prefix and the port GUID at its MasterSMLID
 * (an HCA's port, a switch's port 0); unknown without our port; an
 * event when the SM moves or the prefix changes, none at the first
 * discovery or when only the SM's LID moves.
 */
static void test_fabric_identity(void **state)
{
	struct ibw_events *ev = ibw_events_new(16);
	struct ibw_fabric *f = seen_from_host(3, 0xfe80000000000000ull);
	struct ibw_fabric_id cur = { 0 }, id;
	struct ibw_event last;
	char buf[IBW_FABRIC_ID_LEN];

	ibw_fabric_id_of(f, 1, &id);
	assert_true(id.known);
	assert_true(id.sm_guid == 0x1101 && id.sm_node_guid == 0x11);
	assert_int_equal(id.sm_port, 1);
	ibw_fabric_id_str(&id, buf, sizeof(buf));
	assert_string_equal(buf, "0xfe80000000000000/0x0000000000001101");
	assert_int_equal(ibw_fabric_id_update(&cur, &id, 100, ev), 0);
	assert_int_equal(kinds(ev, 0, IBW_EVT_FABRIC_CHANGED, NULL), 0);
	assert_true(cur.known && cur.since_us == 100 && cur.changes == 0);
	/* port 2 of the host has no PortInfo: nothing known */
	ibw_fabric_id_of(f, 2, &id);
	assert_false(id.known);
	assert_int_equal(ibw_fabric_id_update(&cur, &id, 150, ev), 0);
	assert_true(cur.known && cur.sm_guid == 0x1101);
	ibw_fabric_unref(f);

	/* the SM fails over to the switch (LID 1, port 0) */
	f = seen_from_host(1, 0xfe80000000000000ull);
	ibw_fabric_id_of(f, 1, &id);
	assert_true(id.sm_guid == 0x20 && id.sm_port == 0);
	assert_int_equal(ibw_fabric_id_update(&cur, &id, 200, ev), 1);
	assert_int_equal(kinds(ev, 0, IBW_EVT_FABRIC_CHANGED, &last), 1);
	assert_true(last.old_value == 0x1101 && last.new_value == 0x20);
	assert_string_equal(last.what, "master_sm");
	assert_string_equal(last.detail,
			    "fabric 0xfe80000000000000/0x0000000000001101 -> "
			    "0xfe80000000000000/0x0000000000000020 (master SM "
			    "LID 3 -> 1)");
	assert_true(cur.since_us == 200 && cur.changes == 1);
	ibw_fabric_unref(f);

	/* a new prefix */
	f = seen_from_host(1, 0xfe800000000000abull);
	ibw_fabric_id_of(f, 1, &id);
	assert_int_equal(ibw_fabric_id_update(&cur, &id, 300, ev), 1);
	assert_int_equal(kinds(ev, 0, IBW_EVT_FABRIC_CHANGED, &last), 2);
	assert_string_equal(last.what, "subnet_prefix");
	assert_true(cur.changes == 2);
	ibw_fabric_unref(f);

	/* the SM's host gone, PortInfo still naming its LID: no identity,
	 * the last kept, no event */
	f = seen_from_host(99, 0xfe800000000000abull);
	ibw_fabric_id_of(f, 1, &id);
	assert_false(id.known);
	assert_int_equal(ibw_fabric_id_update(&cur, &id, 400, ev), 0);
	assert_true(cur.known && cur.sm_guid == 0x20 && cur.changes == 2);
	assert_int_equal(kinds(ev, 0, IBW_EVT_FABRIC_CHANGED, NULL), 2);
	ibw_fabric_unref(f);
	ibw_events_free(ev);
}

static void test_event_ring_bounded(void **state)
{
	struct ibw_events *ev = ibw_events_new(4);
	struct ibw_event e, out[8];
	unsigned i, n;

	memset(&e, 0, sizeof(e));
	for (i = 0; i < 10; i++) {
		e.port = (uint8_t)i;
		ibw_events_add(ev, &e);
	}
	assert_int_equal(ibw_events_last_seq(ev), 10);
	assert_int_equal(ibw_events_overwritten(ev), 6);
	n = ibw_events_since(ev, 0, out, 8);
	assert_int_equal(n, 4);
	assert_int_equal(out[0].seq, 7);
	assert_int_equal(out[3].port, 9);
	n = ibw_events_since(ev, 9, out, 8);
	assert_int_equal(n, 1);
	assert_int_equal(ibw_events_since(ev, 10, out, 8), 0);
	ibw_events_free(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_sweep_has_no_events),
		cmocka_unit_test(test_host_gone_and_back),
		cmocka_unit_test(test_protected_not_gone),
		cmocka_unit_test(test_protected_switch_looked_past),
		cmocka_unit_test(test_lid_and_width_changes),
		cmocka_unit_test(test_lost_description_keeps_the_name),
		cmocka_unit_test(test_find_lid),
		cmocka_unit_test(test_event_ring_bounded),
		cmocka_unit_test(test_fabric_identity),
	};

	return cmocka_run_group_tests_name("fabric", tests, NULL, NULL);
}
