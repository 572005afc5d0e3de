// SPDX-License-Identifier: BSD-2-Clause
/*
 * Discovery against a fake fabric of four nodes answered by the test
 * (directed-route SMPs routed by their initial path), for what it asks:
 * the Mellanox ExtendedPortInfo goes only to ports of devices on
 * infiniband-diags' list that run at QDR, and FDR10 then shows in the
 * ports' speeds and in the link view.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <infiniband/mad.h>

#include "discover.h"
#include "engine.h"
#include "fabric.h"
#include "ibrate.h"
#include "links.h"
#include "loop.h"
#include "transport_mem.h"

/*
 * A: the local CA, ConnectX-3 (0x1003), port 1 to S port 1, QDR, FDR10.
 * S: a SwitchX (0xc738), 3 ports. Port 2 to B at QDR, port 3 to C at SDR.
 * B: a CA whose DeviceId (0x6340) is not on the list, at QDR.
 * C: a ConnectX-3 at SDR.
 */
enum { A, S, B, C, NN };

static const struct fnode {
	uint64_t guid;
	int sw;
	unsigned devid;
	unsigned nports;
	/* per port 1..3: peer node (-1: none), its port, LinkSpeedActive,
	 * ExtendedPortInfo LinkSpeedEnabled/Active (FDR10 bit 0) */
	int peer[4];
	unsigned peer_port[4];
	unsigned speed[4];
	unsigned mlnx_ena[4], mlnx_act[4];
} nodes[NN] = {
	[A] = { 0xa,
		0,
		0x1003,
		1,
		{ -1, S },
		{ 0, 1 },
		{ 0, 4 },
		{ 0, 1 },
		{ 0, 1 } },
	[S] = { 0x5,
		1,
		0xc738,
		3,
		{ -1, A, B, C },
		{ 0, 1, 1, 1 },
		{ 0, 4, 4, 1 },
		{ 0, 1, 1, 1 },
		{ 0, 1, 0, 0 } },
	[B] = { 0xb,
		0,
		0x6340,
		1,
		{ -1, S },
		{ 0, 2 },
		{ 0, 4 },
		{ 0, 0 },
		{ 0, 0 } },
	[C] = { 0xc,
		0,
		0x1003,
		1,
		{ -1, S },
		{ 0, 3 },
		{ 0, 1 },
		{ 0, 1 },
		{ 0, 0 } },
};

struct rig {
	struct ibw_loop *loop;
	struct ibw_transport *t;
	struct ibw_engine *e;
	struct ibw_discover *d;
	struct ibw_fabric *f;
	int done;
	unsigned epi[NN][4]; /* ExtendedPortInfo asked, by node and port */
	unsigned epi_all;
};

/* The node a directed-route SMP reaches, and the port it arrives on. */
static int route(const uint8_t *m, unsigned *in_port)
{
	unsigned hops = ibw_mad_get(m, IB_DRSMP_HOPCNT_F), i;
	int n = A;

	*in_port = 1;
	for (i = 1; i <= hops; i++) {
		unsigned out = m[128 + i];

		if (out < 1 || out > nodes[n].nports || nodes[n].peer[out] < 0)
			return -1;
		*in_port = nodes[n].peer_port[out];
		n = nodes[n].peer[out];
	}
	return n;
}

static void answer_smp(struct rig *r, uint8_t *m)
{
	unsigned attr = ibw_mad_get(m, IB_MAD_ATTRID_F);
	unsigned mod = ibw_mad_get(m, IB_MAD_ATTRMOD_F);
	uint8_t *d = m + IB_SMP_DATA_OFFS;
	const struct fnode *x;
	unsigned in;
	int n = route(m, &in);

	if (n < 0)
		return; /* nobody there: the try times out */
	x = &nodes[n];
	memset(d, 0, IB_SMP_DATA_SIZE);
	switch (attr) {
	case IB_ATTR_NODE_INFO:
		mad_set_field(d, 0, IB_NODE_BASE_VERS_F, 1);
		mad_set_field(d, 0, IB_NODE_CLASS_VERS_F, 1);
		mad_set_field(d, 0, IB_NODE_TYPE_F, x->sw ? 2 : 1);
		mad_set_field(d, 0, IB_NODE_NPORTS_F, x->nports);
		mad_set_field64(d, 0, IB_NODE_GUID_F, x->guid);
		mad_set_field64(d, 0, IB_NODE_PORT_GUID_F, x->guid);
		mad_set_field(d, 0, IB_NODE_DEVID_F, x->devid);
		mad_set_field(d, 0, IB_NODE_VENDORID_F, 0x2c9);
		mad_set_field(d, 0, IB_NODE_LOCAL_PORT_F, x->sw ? 0 : in);
		break;
	case IB_ATTR_NODE_DESC:
		break;
	case IB_ATTR_SWITCH_INFO:
		mad_set_field(d, 0, IB_SW_LINEAR_FDB_CAP_F, 64);
		break;
	case IB_ATTR_PORT_INFO:
		if (mod > x->nports)
			return;
		mad_set_field(d, 0, IB_PORT_LID_F, 1 + n);
		mad_set_field(d, 0, IB_PORT_LINK_WIDTH_SUPPORTED_F, 3);
		mad_set_field(d, 0, IB_PORT_LINK_WIDTH_ENABLED_F, 3);
		if (!mod) {
			mad_set_field(d, 0, IB_PORT_STATE_F, 4);
			break;
		}
		mad_set_field(d, 0, IB_PORT_LINK_WIDTH_ACTIVE_F, 2);
		mad_set_field(d, 0, IB_PORT_LINK_SPEED_SUPPORTED_F, 7);
		mad_set_field(d, 0, IB_PORT_LINK_SPEED_ENABLED_F, 7);
		mad_set_field(d, 0, IB_PORT_LINK_SPEED_ACTIVE_F, x->speed[mod]);
		mad_set_field(d, 0, IB_PORT_STATE_F, 4);
		mad_set_field(d, 0, IB_PORT_PHYS_STATE_F, 5);
		break;
	case IB_ATTR_MLNX_EXT_PORT_INFO:
		r->epi_all++;
		if (mod > x->nports)
			return;
		r->epi[n][mod]++;
		mad_set_field(d, 0, IB_MLNX_EXT_PORT_LINK_SPEED_SUPPORTED_F,
			      x->mlnx_ena[mod]);
		mad_set_field(d, 0, IB_MLNX_EXT_PORT_LINK_SPEED_ENABLED_F,
			      x->mlnx_ena[mod]);
		mad_set_field(d, 0, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F,
			      x->mlnx_act[mod]);
		break;
	default:
		ibw_mem_make_response(m, 0x0c); /* unsupported */
		ibw_mem_inject(r->t, m, IBW_MAD_SIZE, 0);
		return;
	}
	ibw_mem_make_response(m, 0);
	ibw_mem_inject(r->t, m, IBW_MAD_SIZE, 0);
}

static void discovered(struct ibw_fabric *f, void *arg)
{
	struct rig *r = arg;

	r->f = f;
	r->done = 1;
}

static void discover(struct rig *r)
{
	struct ibw_engine_config cfg = { .max_inflight = 64,
					 .max_per_dest = 8,
					 .timeout_ms = 20 };
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;
	uint64_t end;

	memset(r, 0, sizeof(*r));
	r->loop = ibw_loop_new();
	r->t = ibw_mem_transport_new();
	r->e = ibw_engine_new(r->loop, r->t, &cfg);
	r->d = ibw_discover_new(r->e, NULL);
	assert_int_equal(ibw_discover_start(r->d, discovered, r), 0);
	end = ibw_now_us() + 2000000u;
	while (!r->done && ibw_now_us() < end) {
		while (ibw_mem_next_sent(r->t, m, &to)) {
			assert_int_equal(m[1], IBW_CLASS_SMI_DR);
			answer_smp(r, m);
		}
		ibw_loop_run_once(r->loop, 5000);
	}
	assert_true(r->done);
	assert_non_null(r->f);
}

static void rig_free(struct rig *r)
{
	ibw_discover_free(r->d);
	ibw_engine_free(r->e);
	ibw_fabric_unref(r->f);
	ibw_transport_close(r->t);
	ibw_loop_free(r->loop);
}

static const struct ibw_fport *port_of(struct rig *r, uint64_t guid, unsigned p)
{
	const struct ibw_fnode *n = ibw_fabric_find(r->f, guid);

	assert_non_null(n);
	assert_true(p < n->nports && n->ports[p].have_pi);
	return &n->ports[p];
}

static void end_in(struct rig *r, uint64_t guid, unsigned p,
		   struct ibw_link_end_in *e)
{
	const struct ibw_fnode *n = ibw_fabric_find(r->f, guid);

	memset(e, 0, sizeof(*e));
	e->guid = guid;
	e->port = (uint8_t)p;
	e->node_type = (uint8_t)n->ni.node_type;
	e->pi = &port_of(r, guid, p)->pi;
	if (n->ni.node_type == IBW_NODE_SWITCH)
		e->cap = &n->ports[0].pi;
	e->tick = -1;
}

static void test_ext_port_info_asked_where_advertised(void **state)
{
	struct ibw_port_speeds sp;
	struct ibw_link_end_in a, b;
	struct ibw_link_view *v;
	const struct ibw_link *k;
	struct ibw_links *l;
	struct rig r;

	discover(&r);
	assert_int_equal(r.f->nnodes, NN);
	/* Exactly the three QDR ports of listed devices, once each. */
	assert_int_equal(r.epi_all, 3);
	assert_int_equal(r.epi[A][1], 1);
	assert_int_equal(r.epi[S][1], 1);
	assert_int_equal(r.epi[S][2], 1);
	assert_int_equal(r.epi[S][3], 0); /* SDR */
	assert_int_equal(r.epi[B][1], 0); /* not on the list */
	assert_int_equal(r.epi[C][1], 0); /* SDR */

	ibw_port_speeds(&port_of(&r, 0xa, 1)->pi, NULL, &sp);
	assert_int_equal(sp.speed_active, IBW_SPEED_FDR10);
	ibw_port_speeds(&port_of(&r, 0xb, 1)->pi, NULL, &sp);
	assert_int_equal(sp.speed_active, IBW_SPEED_QDR);
	assert_false(sp.speeds_supported & IBW_SPEED_BIT(IBW_SPEED_FDR10));

	/* The link view: A-S at 4x FDR10, S-B at QDR with QDR its best. */
	l = ibw_links_new(NULL);
	ibw_links_begin(l, 1000000);
	end_in(&r, 0xa, 1, &a);
	end_in(&r, 0x5, 1, &b);
	assert_int_equal(ibw_links_update(l, &a, &b), 0);
	end_in(&r, 0xb, 1, &a);
	end_in(&r, 0x5, 2, &b);
	assert_int_equal(ibw_links_update(l, &a, &b), 0);
	v = ibw_links_view(l, 1000000);
	k = ibw_link_view_find(v, 0xa, 1);
	assert_non_null(k);
	assert_int_equal(k->speed_active, IBW_SPEED_FDR10);
	assert_int_equal(k->speed_best, IBW_SPEED_FDR10);
	assert_float_equal(k->data_bps, 4 * 10.3125e9 * 64 / 66, 1);
	assert_float_equal(k->signal_bps, 41.25e9, 1);
	assert_false(k->reasons & IBW_LR_BIT(IBW_LR_SPEED));
	k = ibw_link_view_find(v, 0xb, 1);
	assert_non_null(k);
	assert_int_equal(k->speed_active, IBW_SPEED_QDR);
	assert_int_equal(k->speed_best, IBW_SPEED_QDR);
	assert_float_equal(k->data_bps, 32e9, 1);
	assert_false(k->reasons & IBW_LR_BIT(IBW_LR_SPEED));
	ibw_link_view_free(v);
	ibw_links_free(l);
	rig_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ext_port_info_asked_where_advertised),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
