// SPDX-License-Identifier: BSD-2-Clause
/*
 * The snapshot's summary and views on the fixture snapshot (a switch with
 * ports 0-3, two hosts): counts, endport states and loss, the port-0 rule
 * (a switch has a port 0, a CA does not), lookups and LIDs; a gone node
 * leaves the counts but keeps its views; sealing again follows a change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "snapfixture.h"

#define SW 0x0002c90300000001ull
#define H1 0x0002c90300000010ull
#define H2 0x0002c90300000011ull

static void test_summary(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();

	assert_non_null(s);
	assert_int_equal(s->sum.nodes, 3);
	assert_int_equal(s->sum.switches, 1);
	assert_int_equal(s->sum.cas, 2);
	assert_int_equal(s->sum.gone_nodes, 0);
	/* switch ports 1-3 and one port per host; switch port 0 is none */
	assert_int_equal(s->sum.ports, 5);
	/* switch port 1 - host 1, switch port 2 - host 2 */
	assert_int_equal(s->sum.links, 2);
	assert_int_equal(s->sum.endports[IBW_EP_UP], 1);
	assert_int_equal(s->sum.endports[IBW_EP_DOWN], 1);
	assert_int_equal(s->sum.endports[IBW_EP_DEGRADED], 0);
	assert_int_equal(s->sum.endports[IBW_EP_UNKNOWN], 0);
	ibw_snapshot_unref(s);
}

static void test_port_views(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	const struct ibw_snapshot_node *nv;
	const struct ibw_snapshot_port *pv;
	unsigned n = 0;

	assert_int_equal(s->nnode_views, 3);
	/* switch ports 0-3, host ports 1 */
	assert_int_equal(s->nport_views, 6);
	ibw_snapshot_foreach_node(s, nv) {
		unsigned first = nv->has_port0 ? 0 : 1, i = 0;

		assert_int_equal(nv->has_port0, nv->is_switch);
		assert_int_equal(nv->nports, nv->n->nports - first);
		ibw_snapshot_foreach_node_port(nv, pv) {
			assert_ptr_equal(pv->node, nv);
			assert_int_equal(pv->p->num, first + i++);
			assert_int_equal(pv->external, pv->p->num != 0);
			n++;
		}
	}
	assert_int_equal(n, s->nport_views);

	nv = ibw_snapshot_find_node(s, SW);
	assert_non_null(nv);
	assert_true(nv->is_switch);
	assert_string_equal(nv->name, "leaf \"A\" \\ 1");
	assert_null(ibw_snapshot_find_node(s, 0x1234));
	/* a switch has a port 0 (not external, no counters here) */
	pv = ibw_snapshot_find_port(s, SW, 0);
	assert_non_null(pv);
	assert_false(pv->external);
	assert_null(pv->ctrs);
	/* port 3 is down: not linked, no peer */
	pv = ibw_snapshot_find_port(s, SW, 3);
	assert_non_null(pv);
	assert_false(pv->link_up);
	assert_string_equal(pv->remote_name, "");
	assert_null(ibw_snapshot_find_port(s, SW, 4));
	/* a CA has none */
	assert_null(ibw_snapshot_find_port(s, H1, 0));
	pv = ibw_snapshot_find_port(s, H2, 1);
	assert_non_null(pv);
	assert_true(pv->external);
	assert_true(pv->link_up);
	assert_non_null(pv->ctrs);
	assert_int_equal(pv->ctrs->guid, H2);
	assert_string_equal(pv->remote_name, "leaf \"A\" \\ 1");
	pv = ibw_snapshot_find_port(s, SW, 2);
	assert_string_equal(pv->remote_name, "node0002 HCA-1");
	assert_ptr_equal(pv->ctrs, ibw_snapshot_port(s, SW, 2));
	ibw_snapshot_unref(s);
}

static void test_lids(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();

	/* a CA port has its own LID; a switch's ports share port 0's */
	s->fabric->nodes[1].ports[1].pi.lid = 7;
	assert_int_equal(ibw_snapshot_lid(s, H1, 1), 7);
	assert_int_equal(ibw_snapshot_lid(s, H1, 0), 2);
	s->fabric->nodes[0].ports[2].pi.lid = 9;
	assert_int_equal(ibw_snapshot_lid(s, SW, 2), 1);
	assert_int_equal(ibw_snapshot_lid(s, 0x1234, 1), 0);
	ibw_snapshot_unref(s);
}

static void test_endport_loss(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	const struct ibw_snapshot_endport *v;
	unsigned i = 0;

	ibw_snapshot_foreach_endport(s, v) {
		assert_ptr_equal(v->ep, &s->endports[i]);
		i++;
	}
	assert_int_equal(i, 2);
	v = &s->endport_views[0];
	assert_true(v->loss_pct == 0.0 && v->window_loss_ratio == 0.0);
	/* 6 of 10 lost, in the window and since start */
	v = &s->endport_views[1];
	assert_true(v->loss_pct == 60.0);
	assert_true(v->window_loss_pct == 60.0);
	assert_true(v->window_loss_ratio == 0.6);
	assert_int_equal(v->window_loss_centipct, 6000);
	/* 1 of 3: hundredths of a percent round down */
	s->endports[1].window_lost = 1;
	s->endports[1].window_n = 3;
	s->endports[1].sent = 0;
	s->endports[1].state = 9; /* not a state: counted unknown */
	assert_int_equal(ibw_snapshot_seal(s), 0);
	v = &s->endport_views[1];
	assert_int_equal(v->window_loss_centipct, 3333);
	assert_true(v->loss_pct == 0.0);
	assert_int_equal(s->sum.endports[IBW_EP_UNKNOWN], 1);
	assert_int_equal(s->sum.endports[IBW_EP_DOWN], 0);
	assert_true(ibw_ping_loss_pct(1, 4) == 25.0);
	assert_true(ibw_ping_loss_pct(3, 0) == 0.0);
	ibw_snapshot_unref(s);
}

static void test_gone_node(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	const struct ibw_snapshot_port *pv;

	s->fabric->nodes[2].gone = 1;
	assert_int_equal(ibw_snapshot_seal(s), 0);
	assert_int_equal(s->sum.nodes, 2);
	assert_int_equal(s->sum.cas, 1);
	assert_int_equal(s->sum.gone_nodes, 1);
	assert_int_equal(s->sum.ports, 4);
	/* the switch's end of its link to the gone host makes no link */
	assert_int_equal(s->sum.links, 1);
	/* its views stay, marked gone */
	pv = ibw_snapshot_find_port(s, H2, 1);
	assert_non_null(pv);
	assert_true(pv->gone);
	ibw_snapshot_unref(s);
}

static void test_empty(void **state)
{
	struct ibw_snapshot *s = ibw_snapshot_new();

	assert_non_null(s);
	assert_int_equal(ibw_snapshot_seal(s), 0);
	assert_int_equal(s->sum.nodes, 0);
	assert_int_equal(s->nport_views, 0);
	assert_null(ibw_snapshot_find_node(s, SW));
	assert_null(ibw_snapshot_find_port(s, SW, 0));
	assert_int_equal(ibw_snapshot_lid(s, SW, 0), 0);
	ibw_snapshot_unref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_port_views),
		cmocka_unit_test(test_lids),
		cmocka_unit_test(test_endport_loss),
		cmocka_unit_test(test_gone_node),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
