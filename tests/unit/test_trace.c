// SPDX-License-Identifier: BSD-2-Clause
/*
 * Path traces on the in-memory transport, answered by hand: a trace that
 * takes node facts from the last discovery keeps working when a newer
 * discovery replaces (and frees) that fabric while the trace waits for
 * an answer. Under the sanitizer build the old code read freed memory
 * here; the trace now holds the fabric it started with.
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
#include "fabric.h"
#include "loop.h"
#include "trace.h"
#include "transport_mem.h"

#define L 0x0002c90300000010ull /* the local CA, lid 1 */
#define S 0x0002c90300000001ull /* a switch, lid 2 */
#define D 0x0002c90300000011ull /* the destination CA, lid 3 */

/* L port 1 -- S port 1; S port 2 -- D port 1 */
static struct ibw_fabric *three_nodes(void)
{
	struct ibw_fabric *f = ibw_fabric_new();
	struct ibw_fnode *n;
	unsigned p;

	n = ibw_fabric_add_node(f, S, 3);
	n->ni.node_type = IBW_NODE_SWITCH;
	n->ni.num_ports = 2;
	n->ni.node_guid = S;
	snprintf(n->desc, sizeof(n->desc), "switch");
	ibw_dest_dr_parse(&n->dr, "0,1");
	for (p = 0; p < 3; p++) {
		n->ports[p].num = (uint8_t)p;
		n->ports[p].have_pi = 1;
		n->ports[p].pi.lid = 2;
		n->ports[p].pi.state = 4;
	}
	n->ports[1].remote_guid = L;
	n->ports[1].remote_port = 1;
	n->ports[2].remote_guid = D;
	n->ports[2].remote_port = 1;
	for (p = 0; p < 2; p++) {
		uint64_t g = p ? D : L;

		n = ibw_fabric_add_node(f, g, 2);
		n->ni.node_type = IBW_NODE_CA;
		n->ni.num_ports = 1;
		n->ni.node_guid = g;
		n->ni.port_guid = g + 0x10;
		snprintf(n->desc, sizeof(n->desc), "host %u", p);
		ibw_dest_dr_parse(&n->dr, p ? "0,1,2" : "0");
		n->ports[1].num = 1;
		n->ports[1].have_pi = 1;
		n->ports[1].guid = g + 0x10;
		n->ports[1].pi.lid = (uint16_t)(p ? 3 : 1);
		n->ports[1].pi.state = 4;
		n->ports[1].remote_guid = S;
		n->ports[1].remote_port = (uint8_t)(p ? 2 : 1);
	}
	ibw_fabric_freeze(f);
	f->local_guid = L;
	return f;
}

struct rig {
	struct ibw_loop *loop;
	struct ibw_transport *t;
	struct ibw_engine *e;
	int done;
	struct ibw_trace result;
};

static void on_trace(const struct ibw_trace *t, void *arg)
{
	struct rig *g = arg;

	g->result = *t;
	g->done = 1;
}

/* Let the engine send, then take the one MAD it sent. */
static void next_request(struct rig *g, uint8_t mad[IBW_MAD_SIZE])
{
	unsigned i;

	for (i = 0; i < 10 && !ibw_mem_sent_count(g->t); i++)
		ibw_loop_run_once(g->loop, 1000);
	assert_int_equal(ibw_mem_next_sent(g->t, mad, NULL), 1);
}

static void answer(struct rig *g, uint8_t mad[IBW_MAD_SIZE])
{
	unsigned i;

	ibw_mem_make_response(mad, 0);
	assert_int_equal(ibw_mem_inject(g->t, mad, IBW_MAD_SIZE, 0), 0);
	for (i = 0; i < 10; i++)
		ibw_loop_run_once(g->loop, 1000);
}

static void test_fabric_replaced_mid_trace(void **state)
{
	struct ibw_fabric *f1 = three_nodes(), *f2 = three_nodes();
	struct ibw_tracer *tr;
	uint8_t mad[IBW_MAD_SIZE];
	uint8_t *data = mad + IB_SMP_DATA_OFFS;
	struct rig g;

	memset(&g, 0, sizeof(g));
	g.loop = ibw_loop_new();
	g.t = ibw_mem_transport_new();
	g.e = ibw_engine_new(g.loop, g.t, NULL);
	tr = ibw_tracer_new(g.e, 1);
	ibw_tracer_set_local_lid(tr, 1);
	ibw_tracer_set_fabric(tr, f1);
	assert_int_equal(ibw_trace_start(tr, 3, 0, 0, on_trace, &g), 0);

	/* The local NodeInfo is always asked. */
	next_request(&g, mad);
	assert_int_equal(mad_get_field(mad, 0, IB_MAD_ATTRID_F),
			 IBW_ATTR_NODE_INFO);
	mad_set_field(data, 0, IB_NODE_TYPE_F, IBW_NODE_CA);
	mad_set_field(data, 0, IB_NODE_NPORTS_F, 1);
	mad_set_field64(data, 0, IB_NODE_GUID_F, L);
	mad_set_field64(data, 0, IB_NODE_PORT_GUID_F, L + 0x10);
	mad_set_field(data, 0, IB_NODE_LOCAL_PORT_F, 1);
	answer(&g, mad);

	/* The switch comes from the fabric; its forwarding table is read. */
	next_request(&g, mad);
	assert_int_equal(mad_get_field(mad, 0, IB_MAD_ATTRID_F),
			 IBW_ATTR_LINEAR_FWD);

	/* A discovery ends meanwhile: the tracer gets the new fabric and
	 * the old one's last outside reference goes. */
	ibw_tracer_set_fabric(tr, f2);
	ibw_fabric_unref(f1);
	ibw_fabric_unref(f2);

	memset(data, 0xff, 64);
	data[3] = 2; /* lid 3 leaves by port 2 */
	answer(&g, mad);
	assert_int_equal(g.done, 1);
	assert_int_equal(g.result.fwd.status, IBW_TRACE_OK);
	assert_int_equal(g.result.fwd.nhops, 3);
	assert_true(g.result.fwd.hops[1].node_guid == S);
	assert_int_equal(g.result.fwd.hops[1].out_port, 2);
	assert_true(g.result.fwd.hops[2].node_guid == D);

	ibw_tracer_free(tr);
	ibw_engine_free(g.e);
	ibw_transport_close(g.t);
	ibw_loop_free(g.loop);
}

static int reopen_mem(struct ibw_transport **out, void *arg)
{
	struct rig *g = arg;

	*out = g->t = ibw_mem_transport_new();
	return *out ? 0 : -ENOMEM;
}

static void on_back(struct ibw_engine *e, void *arg)
{
}

/* Answer the local NodeInfo, then the switch's LFT block: lid 3 by
 * port 2. */
static void trace_answers(struct rig *g)
{
	uint8_t mad[IBW_MAD_SIZE];
	uint8_t *data = mad + IB_SMP_DATA_OFFS;

	next_request(g, mad);
	assert_int_equal(mad_get_field(mad, 0, IB_MAD_ATTRID_F),
			 IBW_ATTR_NODE_INFO);
	mad_set_field(data, 0, IB_NODE_TYPE_F, IBW_NODE_CA);
	mad_set_field(data, 0, IB_NODE_NPORTS_F, 1);
	mad_set_field64(data, 0, IB_NODE_GUID_F, L);
	mad_set_field64(data, 0, IB_NODE_PORT_GUID_F, L + 0x10);
	mad_set_field(data, 0, IB_NODE_LOCAL_PORT_F, 1);
	answer(g, mad);
	next_request(g, mad);
	assert_int_equal(mad_get_field(mad, 0, IB_MAD_ATTRID_F),
			 IBW_ATTR_LINEAR_FWD);
	memset(data, 0xff, 64);
	data[3] = 2;
	answer(g, mad);
}

/* The device goes away while a trace waits for a forwarding table: the
 * trace ends, and says why; once the device is open
 * again, a trace from the port's new LID goes through on it. */
static void test_device_lost_mid_trace(void **state)
{
	struct ibw_fabric *f = three_nodes();
	struct ibw_tracer *tr;
	uint8_t mad[IBW_MAD_SIZE];
	uint8_t *data = mad + IB_SMP_DATA_OFFS;
	uint64_t end;
	struct rig g;

	memset(&g, 0, sizeof(g));
	g.loop = ibw_loop_new();
	g.t = ibw_mem_transport_new();
	g.e = ibw_engine_new(g.loop, g.t, NULL);
	ibw_engine_set_reopen(g.e, reopen_mem, on_back, &g, 1000, 1000);
	tr = ibw_tracer_new(g.e, 1);
	ibw_tracer_set_local_lid(tr, 1);
	ibw_tracer_set_fabric(tr, f);
	assert_int_equal(ibw_trace_start(tr, 3, 0, 0, on_trace, &g), 0);
	next_request(&g, mad);
	mad_set_field(data, 0, IB_NODE_TYPE_F, IBW_NODE_CA);
	mad_set_field(data, 0, IB_NODE_NPORTS_F, 1);
	mad_set_field64(data, 0, IB_NODE_GUID_F, L);
	mad_set_field64(data, 0, IB_NODE_PORT_GUID_F, L + 0x10);
	mad_set_field(data, 0, IB_NODE_LOCAL_PORT_F, 1);
	answer(&g, mad);
	next_request(&g, mad);
	assert_int_equal(mad_get_field(mad, 0, IB_MAD_ATTRID_F),
			 IBW_ATTR_LINEAR_FWD);
	ibw_mem_kill(g.t);
	end = ibw_now_us() + 2000000u;
	while (!g.done && ibw_now_us() < end)
		ibw_loop_run_once(g.loop, 5000);
	assert_int_equal(g.done, 1);
	/* a hop that did not answer, as the trace reports any MAD that
	 * failed to reach it, and why */
	assert_int_equal(g.result.fwd.status, IBW_TRACE_TIMEOUT);
	assert_non_null(strstr(g.result.fwd.reason, "transport error"));

	end = ibw_now_us() + 2000000u;
	while (ibw_engine_lost(g.e) && ibw_now_us() < end)
		ibw_loop_run_once(g.loop, 5000);
	assert_int_equal(ibw_engine_lost(g.e), 0);
	g.done = 0;
	ibw_tracer_set_local_lid(tr, 4);
	assert_int_equal(ibw_trace_start(tr, 3, 0, 0, on_trace, &g), 0);
	trace_answers(&g);
	assert_int_equal(g.done, 1);
	assert_int_equal(g.result.fwd.status, IBW_TRACE_OK);
	assert_int_equal(g.result.fwd.nhops, 3);
	assert_true(g.result.fwd.hops[2].node_guid == D);

	ibw_tracer_free(tr);
	ibw_engine_free(g.e);
	ibw_fabric_unref(f);
	ibw_transport_close(g.t);
	ibw_loop_free(g.loop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fabric_replaced_mid_trace),
		cmocka_unit_test(test_device_lost_mid_trace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
