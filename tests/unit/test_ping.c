// SPDX-License-Identifier: BSD-2-Clause
/*
 * The echo responder (with fuzzed requests), the endport state machine,
 * and the confirmation of a loss across a LID change; the echo wire
 * format is in test_ping_echo.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec.h"
#include "echo.h"
#include "fabric.h"
#include "loop.h"
#include "ping.h"
#include "responder.h"
#include "sa.h"
#include "transport_mem.h"

#include "ping_fx.h"

struct rig {
	struct ibw_loop *loop;
	struct ibw_transport *t;
	struct ibw_engine *e;
	struct ibw_responder *r;
};

static void rig_init(struct rig *g, unsigned rate)
{
	g->loop = ibw_loop_new();
	g->t = ibw_mem_transport_new();
	g->e = ibw_engine_new(g->loop, g->t, NULL);
	g->r = ibw_responder_new(g->e, 9, 0x99, rate);
}

static void rig_free(struct rig *g)
{
	ibw_responder_free(g->r);
	ibw_engine_free(g->e);
	ibw_transport_close(g->t);
	ibw_loop_free(g->loop);
}

static void test_responder_fuzz(void **state)
{
	struct rig g;
	struct ibw_responder_stats st;
	uint8_t m[300];
	struct ibw_rx rx;
	unsigned i, j, answered = 0;

	rig_init(&g, 1000000);
	srand(12345);
	for (i = 0; i < 20000; i++) {
		/* Random bytes, but often with a plausible header so that
		 * the deeper checks are reached too. */
		for (j = 0; j < sizeof(m); j++)
			m[j] = (uint8_t)rand();
		if (i % 2) {
			request(m, (enum ibw_echo_type)(rand() % 8),
				(uint16_t)rand(), (uint16_t)rand(), NULL);
			m[rand() % 48] ^= (uint8_t)(1u << (rand() % 8));
		}
		memset(&rx, 0, sizeof(rx));
		rx.mad = m;
		rx.len = (size_t)(rand() % (int)sizeof(m));
		rx.from.lid = (uint16_t)rand();
		answered += (unsigned)ibw_responder_handle(g.r, &rx);
	}
	ibw_responder_get_stats(g.r, &st);
	assert_int_equal(st.answered, answered);
	assert_int_equal(st.answered + st.malformed + st.rate_limited +
				 st.send_errors,
			 20000);
	assert_true(st.malformed > 15000);
	/* every answer it sent is a well-formed GetResp */
	while (ibw_mem_next_sent(g.t, m, NULL)) {
		struct ibw_echo_reply r;

		assert_int_equal(m[3], 0x81);
		assert_int_equal(ibw_echo_parse_reply(m, 256, &r), 0);
	}
	rig_free(&g);
}

static void test_responder_answers_and_rate_limits(void **state)
{
	uint64_t t0;
	struct rig g;
	struct ibw_responder_stats st;
	uint8_t m[256], out[256];
	struct ibw_mad_addr to;
	struct ibw_rx rx;
	unsigned i;

	t0 = ibw_now_us();
	rig_init(&g, 10); /* 10/s per source, bursts of 20 */
	for (i = 0; i < 100; i++) {
		request(m, IBW_ECHO_REQ, 1, (uint16_t)i, "abc");
		memset(&rx, 0, sizeof(rx));
		rx.mad = m;
		rx.len = 256;
		rx.from.lid = 33;
		rx.from.qpn = 1;
		ibw_responder_handle(g.r, &rx);
	}
	ibw_responder_get_stats(g.r, &st);
	/* The burst of 20, plus what 10/s refilled while the loop ran
	 * (nothing, unless this machine stalled for 100 ms or more). */
	assert_true(st.answered >= 20);
	assert_true(st.answered <= 20 + (ibw_now_us() - t0) * 10 / 1000000);
	assert_int_equal(st.answered + st.rate_limited, 100);
	/* another source is not held back by the first */
	request(m, IBW_ECHO_REQ, 1, 1, "abc");
	rx.from.lid = 34;
	assert_int_equal(ibw_responder_handle(g.r, &rx), 1);
	assert_int_equal(ibw_mem_next_sent(g.t, out, &to), 1);
	assert_int_equal(to.lid, 33);
	assert_int_equal(to.qpn, 1);
	assert_true(to.qkey == IBW_QP1_QKEY);
	rig_free(&g);
}

/* An echo request that came on P_Key index 1 with a global route is
 * answered on index 1, back along that route. */
static void test_responder_answers_on_request_pkey(void **state)
{
	struct rig g;
	uint8_t m[256], out[256];
	struct ibw_mad_addr to;
	struct ibw_rx rx;

	rig_init(&g, 10);
	request(m, IBW_ECHO_REQ, 1, 1, "abc");
	memset(&rx, 0, sizeof(rx));
	rx.mad = m;
	rx.len = 256;
	rx.from.lid = 33;
	rx.from.qpn = 1;
	rx.from.sl = 2;
	rx.from.pkey_index = 1;
	rx.from.grh_present = 1;
	rx.from.hop_limit = 7;
	rx.from.flow_label = 0x12345;
	rx.from.gid[15] = 0x42;
	assert_int_equal(ibw_responder_handle(g.r, &rx), 1);
	assert_int_equal(ibw_mem_next_sent(g.t, out, &to), 1);
	assert_int_equal(to.pkey_index, 1);
	assert_int_equal(to.sl, 2);
	assert_int_equal(to.grh_present, 1);
	assert_int_equal(to.hop_limit, 7);
	assert_int_equal(to.flow_label, 0x12345);
	assert_int_equal(to.gid[15], 0x42);
	assert_true(to.qkey == IBW_QP1_QKEY);
	/* an answer: nothing waits for it in the kernel */
	assert_int_equal(ibw_mem_sent_timeout(g.t), 0);
	rig_free(&g);
}

static unsigned n_events(struct ibw_events *ev, uint64_t v)
{
	struct ibw_event e[64];
	unsigned n = ibw_events_since(ev, 0, e, 64), i, c = 0;

	for (i = 0; i < n; i++)
		c += e[i].kind == IBW_EVT_ENDPORT_STATE && e[i].new_value == v;
	return c;
}

static void test_state_machine(void **state)
{
	struct ibw_events *ev = ibw_events_new(64);
	struct ibw_ping_opts o;
	struct ibw_endport ep;
	int i;

	memset(&o, 0, sizeof(o));
	o.down_after = 3;
	o.up_after = 2;
	o.window = 20;
	memset(&ep, 0, sizeof(ep));
	ibw_endport_account(&ep, &o, 1, 50, ev);
	assert_int_equal(ep.state, IBW_EP_UNKNOWN);
	ibw_endport_account(&ep, &o, 1, 70, ev);
	assert_int_equal(ep.state, IBW_EP_UP);
	assert_int_equal(ibw_events_last_seq(ev), 0); /* coming up: quiet */
	assert_int_equal(ep.rtt_min_us, 50);
	assert_int_equal(ep.rtt_max_us, 70);
	assert_true(ep.rtt_avg_us == 60.0);
	assert_true(ep.rtt_mdev_us == 10.0);
	/* two losses: not yet down; the third: down, one event */
	ibw_endport_account(&ep, &o, 0, 0, ev);
	ibw_endport_account(&ep, &o, 0, 0, ev);
	assert_int_not_equal(ep.state, IBW_EP_DOWN);
	ibw_endport_account(&ep, &o, 0, 0, ev);
	assert_int_equal(ep.state, IBW_EP_DOWN);
	ibw_endport_account(&ep, &o, 0, 0, ev);
	assert_int_equal(n_events(ev, IBW_EP_DOWN), 1);
	/* one answer is not enough to come back (hysteresis) */
	ibw_endport_account(&ep, &o, 1, 10, ev);
	assert_int_equal(ep.state, IBW_EP_DOWN);
	ibw_endport_account(&ep, &o, 1, 10, ev);
	assert_int_not_equal(ep.state, IBW_EP_DOWN);
	for (i = 0; i < 30; i++)
		ibw_endport_account(&ep, &o, 1, 10, ev);
	assert_int_equal(ep.state, IBW_EP_UP);
	/* every other probe lost: degraded, never down */
	for (i = 0; i < 40; i++)
		ibw_endport_account(&ep, &o, i % 2, 10, ev);
	assert_int_equal(ep.state, IBW_EP_DEGRADED);
	assert_int_equal(ep.window_lost, 10);
	assert_int_equal(n_events(ev, IBW_EP_DOWN), 1);
	/* clean again: back up once the window is */
	for (i = 0; i < 20; i++)
		ibw_endport_account(&ep, &o, 1, 10, ev);
	assert_int_equal(ep.state, IBW_EP_UP);
	assert_true(ep.sent == 2 + 4 + 32 + 40 + 20);
	ibw_events_free(ev);
}

/*
 * A loss confirmed before an endport goes down. The fabric: our CA
 * (0x10, LID 1, the SM at LID 1) and a CA 0x20 whose port 1 (GUID 0x21)
 * the discovery found at LID 5, by directed route 0,1. What the fabric
 * answers is in struct moving: the port's real LID, what the SA says,
 * whether directed routes reach the node (and which node).
 */
struct moving {
	uint16_t lid; /* the port's LID now; PMA pings answered there */
	int unrouted; /* ... unless the SM has not routed it yet */
	uint16_t sa_lid; /* the SA's NodeRecord; 0: no record */
	int sa_silent; /* the SM is away */
	uint64_t dr_node; /* the node at 0,1; 0: no answer */
	unsigned sa_asked, dr_asked, pings_at_new;
};

struct cf_rig {
	struct ibw_loop *loop;
	struct ibw_transport *t;
	struct ibw_engine *e;
	struct ibw_events *ev;
	struct ibw_pinger *p;
	int round_done;
};

static struct ibw_fabric *two_cas(void)
{
	struct ibw_fabric *f = ibw_fabric_new();
	struct ibw_fnode *n;

	n = ibw_fabric_add_node(f, 0x10, 2);
	n->ni.node_type = IBW_NODE_CA;
	n->ni.num_ports = 1;
	n->ni.local_port = 1;
	n->ports[1].num = 1;
	n->ports[1].guid = 0x11;
	n->ports[1].have_pi = 1;
	n->ports[1].pi.state = IBW_PORT_ACTIVE;
	n->ports[1].pi.lid = 1;
	n->ports[1].pi.sm_lid = 1;
	ibw_dest_dr_parse(&n->dr, "0");
	n = ibw_fabric_add_node(f, 0x20, 2);
	n->ni.node_type = IBW_NODE_CA;
	n->ni.num_ports = 1;
	n->ports[1].num = 1;
	n->ports[1].guid = 0x21;
	n->ports[1].have_pi = 1;
	n->ports[1].pi.state = IBW_PORT_ACTIVE;
	n->ports[1].pi.lid = 5;
	ibw_dest_dr_parse(&n->dr, "0,1");
	f->local_guid = 0x10;
	ibw_fabric_freeze(f);
	return f;
}

static void cf_init(struct cf_rig *g, int with_sm)
{
	struct ibw_engine_config cfg = { .max_inflight = 64,
					 .max_per_dest = 8,
					 .timeout_ms = 10 };
	struct ibw_ping_opts o;
	struct ibw_fabric *f = two_cas();
	static char *target = "0x21";
	struct ibw_fnode *ln = (struct ibw_fnode *)ibw_fabric_find(f, 0x10);

	if (!with_sm)
		ln->ports[1].pi.sm_lid = 0;
	memset(g, 0, sizeof(*g));
	memset(&o, 0, sizeof(o));
	o.method = IBW_PING_PMA;
	o.timeout_ms = 10;
	o.down_after = 2;
	o.up_after = 2;
	o.targets = &target;
	o.ntargets = 1;
	g->loop = ibw_loop_new();
	g->t = ibw_mem_transport_new();
	g->e = ibw_engine_new(g->loop, g->t, &cfg);
	g->ev = ibw_events_new(64);
	g->p = ibw_pinger_new(g->e, g->ev, &o);
	ibw_pinger_update(g->p, f, NULL, NULL);
	ibw_fabric_unref(f);
}

static void cf_free(struct cf_rig *g)
{
	ibw_engine_free(g->e);
	ibw_pinger_free(g->p);
	ibw_events_free(g->ev);
	ibw_transport_close(g->t);
	ibw_loop_free(g->loop);
}

/* Answer what the fabric of @mv answers; the rest gets nothing. */
static void cf_serve(struct cf_rig *g, struct moving *mv)
{
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;

	while (ibw_mem_next_sent(g->t, m, &to)) {
		unsigned attr = ibw_mad_get(m, IB_MAD_ATTRID_F);

		if (m[1] == IBW_CLASS_PERF) {
			if (!mv->lid || to.lid != mv->lid || mv->unrouted)
				continue;
			if (to.lid != 5)
				mv->pings_at_new++;
		} else if (m[1] == IBW_CLASS_SA) {
			uint8_t *rec = m + IB_SA_DATA_OFFS;

			assert_int_equal(attr, IBW_SA_ATTR_NODE_RECORD);
			assert_int_equal(to.lid, 1); /* the SM our port names */
			/* asked by the endport's port GUID */
			assert_true(mad_get_field64(rec + 4, 0,
						    IB_NODE_PORT_GUID_F) ==
				    0x21);
			mv->sa_asked++;
			if (mv->sa_silent)
				continue;
			ibw_mem_make_response(m, mv->sa_lid ? 0 : 0x0400);
			mad_set_field(m, 0, IB_SA_ATTROFFS_F, 14);
			memset(rec, 0, IB_SA_DATA_SIZE);
			rec[0] = (uint8_t)(mv->sa_lid >> 8);
			rec[1] = (uint8_t)mv->sa_lid;
		} else if (m[1] == IBW_CLASS_SMI_DR) {
			uint8_t *d = m + IB_SMP_DATA_OFFS;

			mv->dr_asked++;
			/* the route the discovery found */
			assert_int_equal(ibw_mad_get(m, IB_DRSMP_HOPCNT_F), 1);
			if (!mv->dr_node)
				continue;
			if (attr == IBW_ATTR_NODE_INFO) {
				mad_set_field64(d, 0, IB_NODE_GUID_F,
						mv->dr_node);
				mad_set_field64(d, 0, IB_NODE_PORT_GUID_F,
						mv->dr_node + 1);
				mad_set_field(d, 0, IB_NODE_NPORTS_F, 1);
			} else {
				assert_int_equal(attr, IBW_ATTR_PORT_INFO);
				assert_int_equal(
					ibw_mad_get(m, IB_MAD_ATTRMOD_F), 1);
				mad_set_field(d, 0, IB_PORT_LID_F, mv->lid);
				mad_set_field(d, 0, IB_PORT_STATE_F,
					      IBW_PORT_ACTIVE);
			}
		} else {
			fail_msg("unexpected class 0x%x", m[1]);
		}
		ibw_mem_make_response(
			m, m[1] == IBW_CLASS_SA && !mv->sa_lid ? 0x0400 : 0);
		ibw_mem_inject(g->t, m, IBW_MAD_SIZE, 0);
	}
}

static void cf_round_done(struct ibw_pinger *p, void *arg)
{
	((struct cf_rig *)arg)->round_done = 1;
}

/* One probe of the endport, settled (with its confirmation, if any). */
static const struct ibw_endport *cf_round(struct cf_rig *g, struct moving *mv)
{
	uint64_t end = ibw_now_us() + 5000000u;
	unsigned n;

	g->round_done = 0;
	assert_int_equal(ibw_pinger_round(g->p, cf_round_done, g), 0);
	while (!g->round_done && ibw_now_us() < end) {
		cf_serve(g, mv);
		ibw_loop_run_once(g->loop, 5000);
	}
	assert_true(g->round_done);
	return ibw_pinger_endports(g->p, &n);
}

static unsigned cf_events(struct cf_rig *g, enum ibw_event_kind k,
			  struct ibw_event *last)
{
	struct ibw_event e[64];
	unsigned n = ibw_events_since(g->ev, 0, e, 64), i, c = 0;

	for (i = 0; i < n; i++) {
		if (e[i].kind != k)
			continue;
		c++;
		if (last)
			*last = e[i];
	}
	return c;
}

/* Up at LID 5, then its port moves to @mv->lid. */
static const struct ibw_endport *
cf_up_then_move(struct cf_rig *g, struct moving *mv, uint16_t new_lid)
{
	const struct ibw_endport *ep;

	mv->lid = 5;
	cf_round(g, mv);
	ep = cf_round(g, mv);
	assert_int_equal(ep->state, IBW_EP_UP);
	assert_int_equal(mv->sa_asked + mv->dr_asked, 0);
	mv->lid = new_lid;
	/* the first loss is one loss: nothing asked yet */
	ep = cf_round(g, mv);
	assert_int_equal(ep->state, IBW_EP_UP);
	assert_int_equal(mv->sa_asked + mv->dr_asked, 0);
	return cf_round(g, mv); /* the second would take it down */
}

/* The SA names the new LID and it answers there: moved, not down. */
static void test_confirm_moved_by_sa(void **state)
{
	struct cf_rig g;
	struct moving mv = { 0 };
	struct ibw_event e;
	const struct ibw_endport *ep;

	cf_init(&g, 1);
	mv.sa_lid = 9;
	mv.dr_node = 0x20;
	ep = cf_up_then_move(&g, &mv, 9);
	assert_int_equal(mv.sa_asked, 1);
	assert_int_equal(mv.dr_asked, 0); /* the SA was enough */
	assert_int_equal(ep->state, IBW_EP_UP);
	assert_int_equal(ep->lid, 9);
	assert_int_equal(cf_events(&g, IBW_EVT_ENDPORT_STATE, NULL), 0);
	assert_int_equal(cf_events(&g, IBW_EVT_ENDPORT_MOVED, &e), 1);
	assert_true(e.node_guid == 0x20 && e.port == 1 && e.peer_guid == 0x21);
	assert_int_equal(e.old_value, 5);
	assert_int_equal(e.new_value, 9);
	assert_string_equal(e.what, "found by the SA");
	/* the probe that found it counts as answered, the first as lost */
	assert_int_equal(ep->sent, 4);
	assert_int_equal(ep->received, 3);
	/* and the pings go to the new LID from now on */
	ep = cf_round(&g, &mv);
	assert_int_equal(ep->received, 4);
	assert_int_equal(mv.pings_at_new, 2);
	assert_int_equal(mv.sa_asked, 1);
	cf_free(&g);
}

/* The SM is away (its SA silent), or its records lag (the old LID):
 * the port itself, by directed route, names the new LID. */
static void test_confirm_moved_by_directed_route(void **state)
{
	struct cf_rig g;
	struct moving mv = { 0 };
	struct ibw_event e;
	const struct ibw_endport *ep;
	int lag;

	for (lag = 0; lag < 2; lag++) {
		memset(&mv, 0, sizeof(mv));
		cf_init(&g, 1);
		mv.sa_silent = !lag;
		mv.sa_lid = 5;
		mv.dr_node = 0x20;
		ep = cf_up_then_move(&g, &mv, 12);
		assert_int_equal(mv.sa_asked, 1);
		assert_int_equal(mv.dr_asked, 2); /* NodeInfo, PortInfo */
		assert_int_equal(ep->state, IBW_EP_UP);
		assert_int_equal(ep->lid, 12);
		assert_int_equal(cf_events(&g, IBW_EVT_ENDPORT_STATE, NULL), 0);
		assert_int_equal(cf_events(&g, IBW_EVT_ENDPORT_MOVED, &e), 1);
		assert_int_equal(e.old_value, 5);
		assert_int_equal(e.new_value, 12);
		assert_string_equal(e.what, "found by a directed route");
		cf_free(&g);
	}
	/* No SM known at all: the directed route alone. */
	memset(&mv, 0, sizeof(mv));
	cf_init(&g, 0);
	mv.dr_node = 0x20;
	ep = cf_up_then_move(&g, &mv, 12);
	assert_int_equal(mv.sa_asked, 0);
	assert_int_equal(ep->state, IBW_EP_UP);
	assert_int_equal(ep->lid, 12);
	cf_free(&g);
}

/* The port names its new LID but the SM has not routed it yet: the
 * endport follows it all the same (its losses were at an address it no
 * longer had) and is not down; it goes down only if it stays silent at
 * its new LID. */
static void test_confirm_moved_not_routed_yet(void **state)
{
	struct cf_rig g;
	struct moving mv = { 0 };
	struct ibw_event e;
	const struct ibw_endport *ep;
	int sa;

	for (sa = 0; sa < 2; sa++) {
		memset(&mv, 0, sizeof(mv));
		cf_init(&g, 1);
		mv.sa_lid = sa ? 12 : 0; /* the SA knows it, or has no record */
		mv.dr_node = 0x20;
		mv.lid = 5;
		cf_round(&g, &mv);
		cf_round(&g, &mv);
		mv.lid = 12;
		mv.unrouted = 1;
		cf_round(&g, &mv);
		ep = cf_round(&g, &mv);
		assert_int_equal(mv.dr_asked, 2);
		assert_int_equal(ep->state, IBW_EP_UP);
		assert_int_equal(ep->lid, 12);
		assert_int_equal(cf_events(&g, IBW_EVT_ENDPORT_MOVED, &e), 1);
		assert_int_equal(e.old_value, 5);
		assert_int_equal(e.new_value, 12);
		assert_string_equal(e.what, "found by its port, silent there "
					    "yet");
		assert_int_equal(ep->received, 2);
		/* routed: answered at 12 */
		mv.unrouted = 0;
		ep = cf_round(&g, &mv);
		assert_int_equal(ep->received, 3);
		assert_int_equal(ep->state, IBW_EP_UP);
		cf_free(&g);
	}
	/* Never answering at its new LID: down after all, at 12. */
	memset(&mv, 0, sizeof(mv));
	cf_init(&g, 1);
	mv.dr_node = 0x20;
	mv.lid = 5;
	cf_round(&g, &mv);
	cf_round(&g, &mv);
	mv.lid = 12;
	mv.unrouted = 1;
	cf_round(&g, &mv);
	ep = cf_round(&g, &mv);
	assert_int_equal(ep->state, IBW_EP_UP);
	/* one more loss there makes down_after (2) in a row at 12 */
	ep = cf_round(&g, &mv);
	assert_int_equal(ep->state, IBW_EP_DOWN);
	assert_int_equal(ep->lid, 12);
	assert_int_equal(cf_events(&g, IBW_EVT_ENDPORT_MOVED, NULL), 1);
	assert_int_equal(cf_events(&g, IBW_EVT_ENDPORT_STATE, NULL), 1);
	cf_free(&g);
}

/* Really gone, or only its LID's answer missing: down as before. */
static void test_confirm_really_down(void **state)
{
	struct cf_rig g;
	struct moving mv = { 0 };
	const struct ibw_endport *ep;

	/* Its port keeps LID 5 (SA and port agree) but nothing answers
	 * there: down, at LID 5, without pinging anywhere else. */
	cf_init(&g, 1);
	mv.sa_lid = 5;
	mv.dr_node = 0x20;
	ep = cf_up_then_move(&g, &mv, 5);
	mv.lid = 0;
	ep = cf_round(&g, &mv);
	ep = cf_round(&g, &mv);
	assert_int_equal(ep->state, IBW_EP_DOWN);
	assert_int_equal(ep->lid, 5);
	assert_int_equal(mv.pings_at_new, 0);
	assert_int_equal(cf_events(&g, IBW_EVT_ENDPORT_STATE, NULL), 1);
	assert_int_equal(cf_events(&g, IBW_EVT_ENDPORT_MOVED, NULL), 0);
	assert_string_equal(ep->reason, "2 probes in a row unanswered");
	/* Down is down: no more questions for every further loss. */
	mv.sa_asked = mv.dr_asked = 0;
	ep = cf_round(&g, &mv);
	assert_int_equal(mv.sa_asked + mv.dr_asked, 0);
	cf_free(&g);

	/* Its port is active at LID 5, by directed route, but nothing
	 * routes LID 5 to it (a link of the path down before the SM routes
	 * around it): down all the same, and the reason says the port is
	 * up; an answer clears that. */
	memset(&mv, 0, sizeof(mv));
	cf_init(&g, 1);
	mv.sa_lid = 5;
	mv.dr_node = 0x20;
	mv.lid = 5;
	cf_round(&g, &mv);
	cf_round(&g, &mv);
	mv.unrouted = 1;
	cf_round(&g, &mv);
	ep = cf_round(&g, &mv);
	assert_int_equal(mv.dr_asked, 2); /* NodeInfo, PortInfo */
	assert_int_equal(ep->state, IBW_EP_DOWN);
	assert_int_equal(ep->lid, 5);
	assert_string_equal(ep->reason,
			    "2 probes in a row unanswered; port active");
	{
		struct ibw_event e;

		assert_int_equal(cf_events(&g, IBW_EVT_ENDPORT_STATE, &e), 1);
		assert_string_equal(e.what, ep->reason);
	}
	assert_int_equal(cf_events(&g, IBW_EVT_ENDPORT_MOVED, NULL), 0);
	mv.unrouted = 0;
	cf_round(&g, &mv);
	ep = cf_round(&g, &mv);
	assert_int_equal(ep->state, IBW_EP_UP);
	assert_string_equal(ep->reason, "2 probes in a row answered");
	assert_int_equal(ep->still_active, 0);
	cf_free(&g);

	/* The SA names a LID that is silent too, and the directed route
	 * now reaches another node: nothing says where it is. */
	memset(&mv, 0, sizeof(mv));
	cf_init(&g, 1);
	mv.sa_lid = 9;
	mv.dr_node = 0x30;
	ep = cf_up_then_move(&g, &mv, 0);
	assert_int_equal(mv.sa_asked, 1);
	assert_int_equal(mv.dr_asked, 1); /* NodeInfo: not our node */
	assert_int_equal(ep->state, IBW_EP_DOWN);
	assert_int_equal(ep->lid, 5);
	assert_int_equal(cf_events(&g, IBW_EVT_ENDPORT_MOVED, NULL), 0);
	assert_int_equal(cf_events(&g, IBW_EVT_ENDPORT_STATE, NULL), 1);
	cf_free(&g);
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

/* The fabric as a loop back to ourselves: every MAD sent is received,
 * so the responder answers the pinger's echo requests and the pinger
 * gets the answers; at most @max MADs. Returns how many went round. */
static unsigned loop_back(struct rig *g, unsigned max)
{
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;
	unsigned n = 0, i;

	for (i = 0; i < 20 && n < max; i++) {
		while (n < max && ibw_mem_next_sent(g->t, m, &to)) {
			assert_int_equal(ibw_mem_inject_from(
						 g->t, m, IBW_MAD_SIZE, 0, &to),
					 0);
			n++;
		}
		ibw_loop_run_once(g->loop, 1000);
	}
	return n;
}

struct pinged {
	int done;
	unsigned sent, received, no_responder;
};

static void on_pinged(const struct ibw_ping_summary *sum, void *arg)
{
	struct pinged *pd = arg;

	pd->done = 1;
	pd->sent = sum->sent;
	pd->received = sum->received;
	pd->no_responder = sum->no_responder;
}

/* The device goes away in the middle of a ping run: the run ends with
 * what it got (the probes after the loss fail without a send). Once the
 * device is open again, at a new LID, the echo responder registered
 * before the loss answers on the new transport and a new run gets every
 * answer. */
/*
 * A round over many endports: each answer is found by its port GUID
 * (the index grows several times on the way), so every endport gets
 * its own outcome: those at odd LIDs answer, the others do not.
 */
/* A fabric of @n single-port CAs (LIDs from 10), frozen; node GUIDs
 * that differ in the low bits, as one vendor's do. */
static struct ibw_fabric *many_cas(unsigned n)
{
	struct ibw_fabric *f = ibw_fabric_new();
	unsigned i;

	for (i = 0; i < n; i++) {
		struct ibw_fnode *nd = ibw_fabric_add_node(f, 0x100 + 2 * i, 2);

		nd->ni.node_type = IBW_NODE_CA;
		nd->ni.num_ports = 1;
		nd->ports[1].num = 1;
		nd->ports[1].guid = 0x101 + 2 * i;
		nd->ports[1].have_pi = 1;
		nd->ports[1].pi.state = IBW_PORT_ACTIVE;
		nd->ports[1].pi.lid = (uint16_t)(10 + i);
	}
	f->local_guid = 0x100;
	ibw_fabric_freeze(f);
	return f;
}

static void test_round_many_endports(void **state)
{
	struct ibw_engine_config cfg = { .max_inflight = 64,
					 .max_per_dest = 8,
					 .timeout_ms = 10 };
	struct ibw_fabric *f;
	const struct ibw_endport *eps;
	struct ibw_ping_opts o;
	struct cf_rig g;
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;
	uint64_t end;
	unsigned i, n, answered = 0;

	(void)state;
	f = many_cas(300);
	memset(&g, 0, sizeof(g));
	memset(&o, 0, sizeof(o));
	o.method = IBW_PING_PMA;
	o.timeout_ms = 10;
	o.down_after = 1;
	o.up_after = 1;
	g.loop = ibw_loop_new();
	g.t = ibw_mem_transport_new();
	g.e = ibw_engine_new(g.loop, g.t, &cfg);
	g.p = ibw_pinger_new(g.e, NULL, &o);
	ibw_pinger_update(g.p, f, NULL, NULL);
	/* a second discovery of the same fabric adds nobody */
	ibw_pinger_update(g.p, f, NULL, NULL);
	eps = ibw_pinger_endports(g.p, &n);
	assert_int_equal(n, 300);
	assert_int_equal(ibw_pinger_round(g.p, cf_round_done, &g), 0);
	end = ibw_now_us() + 5000000u;
	while (!g.round_done && ibw_now_us() < end) {
		while (ibw_mem_next_sent(g.t, m, &to)) {
			if (!(to.lid & 1))
				continue;
			ibw_mem_make_response(m, 0);
			ibw_mem_inject(g.t, m, IBW_MAD_SIZE, 0);
		}
		ibw_loop_run_once(g.loop, 5000);
	}
	assert_true(g.round_done);
	eps = ibw_pinger_endports(g.p, &n);
	for (i = 0; i < n; i++) {
		assert_int_equal(eps[i].sent, 1);
		assert_int_equal(eps[i].received, eps[i].lid & 1);
		assert_int_equal(eps[i].state,
				 eps[i].lid & 1 ? IBW_EP_UP : IBW_EP_DOWN);
		answered += eps[i].received;
	}
	assert_int_equal(answered, 150);
	cf_free(&g);
	ibw_fabric_unref(f);
}

/*
 * Auto pings where no host answers the echo class at all (ibsim drops
 * it): until a look for a responder is seen answered, at most 16 are in
 * flight and the other endports ping by PMA. A round over 300 endports
 * sends 16 echoes, and every endport is up by PMA.
 */
static void test_auto_silent_echo_held(void **state)
{
	struct ibw_engine_config cfg = { .max_inflight = 64,
					 .max_per_dest = 8,
					 .timeout_ms = 10 };
	struct ibw_fabric *f;
	const struct ibw_endport *eps;
	struct ibw_ping_opts o;
	struct cf_rig g;
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;
	uint64_t end;
	unsigned i, n, echoes = 0, pmas = 0;

	(void)state;
	f = many_cas(300);
	memset(&g, 0, sizeof(g));
	memset(&o, 0, sizeof(o));
	o.method = IBW_PING_AUTO;
	o.timeout_ms = 10;
	o.down_after = 1;
	o.up_after = 1;
	g.loop = ibw_loop_new();
	g.t = ibw_mem_transport_new();
	g.e = ibw_engine_new(g.loop, g.t, &cfg);
	g.p = ibw_pinger_new(g.e, NULL, &o);
	ibw_pinger_update(g.p, f, NULL, NULL);
	assert_int_equal(ibw_pinger_round(g.p, cf_round_done, &g), 0);
	end = ibw_now_us() + 10000000u;
	while (!g.round_done && ibw_now_us() < end) {
		while (ibw_mem_next_sent(g.t, m, &to)) {
			if (m[1] == IBW_CLASS_VENDOR_ECHO) {
				echoes++; /* dropped: never answered */
				continue;
			}
			assert_int_equal(m[1], IBW_CLASS_PERF);
			pmas++;
			ibw_mem_make_response(m, 0);
			ibw_mem_inject(g.t, m, IBW_MAD_SIZE, 0);
		}
		ibw_loop_run_once(g.loop, 5000);
	}
	assert_true(g.round_done);
	print_message("# echoes %u, PMA pings %u\n", echoes, pmas);
	assert_int_equal(echoes, 16);
	assert_int_equal(pmas, 300);
	eps = ibw_pinger_endports(g.p, &n);
	assert_int_equal(n, 300);
	for (i = 0; i < n; i++)
		assert_int_equal(eps[i].state, IBW_EP_UP);
	cf_free(&g);
	ibw_fabric_unref(f);
}

/*
 * A Linux host where no process registered the echo class answers the
 * echo at once, from its kernel's MAD layer: GetResp with status 0x000C
 * (method/attribute not supported; mad.c's generate_unmatched_resp).
 * ibsim drops it instead (docs/testing.md, Simulator vs real host). An
 * auto ping takes that answer as "no responder" and asks the PMA in the
 * same probe: the endport is up, and no try waited for its timeout.
 */
static void test_auto_echo_unsupported_answer(void **state)
{
	struct ibw_engine_config cfg = { .max_inflight = 64,
					 .max_per_dest = 8,
					 .timeout_ms = 5000 };
	struct ibw_fabric *f = two_cas();
	static char *target = "0x21";
	const struct ibw_endport *ep;
	struct ibw_engine_stats st;
	struct ibw_ping_opts o;
	struct cf_rig g;
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;
	unsigned echoes = 0, pmas = 0, n;
	uint64_t end;

	(void)state;
	memset(&g, 0, sizeof(g));
	memset(&o, 0, sizeof(o));
	o.method = IBW_PING_AUTO;
	o.timeout_ms = 5000;
	o.down_after = 1;
	o.up_after = 1;
	o.targets = &target;
	o.ntargets = 1;
	g.loop = ibw_loop_new();
	g.t = ibw_mem_transport_new();
	g.e = ibw_engine_new(g.loop, g.t, &cfg);
	g.ev = ibw_events_new(64);
	g.p = ibw_pinger_new(g.e, g.ev, &o);
	ibw_pinger_update(g.p, f, NULL, NULL);
	ibw_fabric_unref(f);
	assert_int_equal(ibw_pinger_round(g.p, cf_round_done, &g), 0);
	end = ibw_now_us() + 5000000u;
	while (!g.round_done && ibw_now_us() < end) {
		while (ibw_mem_next_sent(g.t, m, &to)) {
			assert_int_equal(to.lid, 5);
			if (m[1] == IBW_CLASS_VENDOR_ECHO) {
				echoes++;
				ibw_mem_make_response(m, 0x000c);
			} else {
				assert_int_equal(m[1], IBW_CLASS_PERF);
				pmas++;
				ibw_mem_make_response(m, 0);
			}
			ibw_mem_inject(g.t, m, IBW_MAD_SIZE, 0);
		}
		ibw_loop_run_once(g.loop, 5000);
	}
	assert_true(g.round_done);
	assert_int_equal(echoes, 1);
	assert_int_equal(pmas, 1);
	ep = ibw_pinger_endports(g.p, &n);
	assert_int_equal(n, 1);
	assert_int_equal(ep->state, IBW_EP_UP);
	assert_int_equal(ep->received, 1);
	assert_int_equal(ep->last_method, IBW_PING_PMA);
	ibw_engine_get_stats(g.e, &st);
	assert_int_equal(st.try_timeouts, 0);
	assert_int_equal(st.status_errors, 1);
	cf_free(&g);
}

/*
 * --ping-method echo to a host whose MAD layer has no agent for the echo
 * class: the answer is GetResp status 0x000C at once. The endport is up
 * (no responder), not lost, and nothing waits for a timeout. A PMA that
 * answers with a redirect (status 0x0002) is alive too; a "busy" or an
 * "invalid field" answer says nothing of the kind and is not counted
 * so. On demand the same: received, with result "no responder".
 */
static void test_echo_unsupported_is_alive(void **state)
{
	struct ibw_engine_config cfg = { .max_inflight = 64,
					 .max_per_dest = 8,
					 .timeout_ms = 5000 };
	static const struct {
		int method, status, alive;
	} cases[] = {
		{ IBW_PING_ECHO, 0x000c, 1 }, { IBW_PING_ECHO, 0x0008, 1 },
		{ IBW_PING_PMA, 0x0002, 1 },  { IBW_PING_ECHO, 0x001c, 0 },
		{ IBW_PING_PMA, 0x001c, 0 },
	};
	static char *target = "0x21";
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ibw_fabric *f = two_cas();
		const struct ibw_endport *ep;
		struct ibw_engine_stats st;
		struct ibw_ping_opts o;
		struct pinged pd;
		struct cf_rig g;
		uint8_t m[IBW_MAD_SIZE];
		struct ibw_mad_addr to;
		unsigned n, sent = 0, others = 0;
		uint64_t end;

		memset(&g, 0, sizeof(g));
		memset(&o, 0, sizeof(o));
		o.method = (enum ibw_ping_method)cases[i].method;
		o.timeout_ms = 5000;
		o.retries = 0;
		o.down_after = 1;
		o.up_after = 1;
		o.targets = &target;
		o.ntargets = 1;
		g.loop = ibw_loop_new();
		g.t = ibw_mem_transport_new();
		g.e = ibw_engine_new(g.loop, g.t, &cfg);
		g.ev = ibw_events_new(64);
		g.p = ibw_pinger_new(g.e, g.ev, &o);
		ibw_pinger_update(g.p, f, NULL, NULL);
		ibw_fabric_unref(f);
		assert_int_equal(ibw_pinger_round(g.p, cf_round_done, &g), 0);
		memset(&pd, 0, sizeof(pd));
		assert_int_equal(
			ibw_ping_run(g.p, 5,
				     (enum ibw_ping_method)cases[i].method,
				     IBW_ECHO_REQ, 2, 5000, on_pinged, &pd),
			0);
		end = ibw_now_us() + 5000000u;
		while ((!g.round_done || !pd.done) && ibw_now_us() < end) {
			while (ibw_mem_next_sent(g.t, m, &to)) {
				/* A lost probe is confirmed with the SA and a
				 * directed route: those get the same answer. */
				if (to.lid == 5) {
					assert_int_equal(
						m[1],
						cases[i].method == IBW_PING_ECHO
							? IBW_CLASS_VENDOR_ECHO
							: IBW_CLASS_PERF);
					sent++;
				} else {
					others++;
				}
				ibw_mem_make_response(m, cases[i].status);
				ibw_mem_inject(g.t, m, IBW_MAD_SIZE, 0);
			}
			ibw_loop_run_once(g.loop, 5000);
		}
		assert_true(g.round_done);
		assert_int_equal(pd.done, 1);
		/* one a probe, nothing more */
		assert_int_equal(sent, 3);
		if (cases[i].alive)
			assert_int_equal(others, 0); /* nothing to confirm */
		ep = ibw_pinger_endports(g.p, &n);
		assert_int_equal(n, 1);
		assert_int_equal(ep->state,
				 cases[i].alive ? IBW_EP_UP : IBW_EP_DOWN);
		assert_int_equal(ep->received, cases[i].alive ? 1 : 0);
		assert_int_equal(ep->echo_answered, 0);
		assert_int_equal(pd.sent, 2);
		assert_int_equal(pd.received, cases[i].alive ? 2 : 0);
		assert_int_equal(pd.no_responder, cases[i].alive ? 2 : 0);
		ibw_engine_get_stats(g.e, &st);
		assert_int_equal(st.try_timeouts, 0);
		cf_free(&g);
	}
}

static void test_device_lost_mid_ping(void **state)
{
	struct ibw_responder_stats st;
	struct ibw_ping_opts o;
	struct ibw_pinger *p;
	struct pinged pd;
	uint64_t end;
	struct rig g;

	memset(&o, 0, sizeof(o));
	o.timeout_ms = 50;
	rig_init(&g, 1000000);
	ibw_engine_set_reopen(g.e, reopen_mem, on_back, &g, 1000, 1000);
	p = ibw_pinger_new(g.e, NULL, &o);
	assert_non_null(p);
	memset(&pd, 0, sizeof(pd));
	assert_int_equal(ibw_ping_run(p, 9, IBW_PING_ECHO, IBW_ECHO_REQ, 4, 50,
				      on_pinged, &pd),
			 0);
	/* the first probe's request and its answer */
	while (ibw_mem_sent_count(g.t) < 1)
		ibw_loop_run_once(g.loop, 1000);
	assert_int_equal(loop_back(&g, 2), 2);
	ibw_mem_kill(g.t);
	end = ibw_now_us() + 2000000u;
	while (!pd.done && ibw_now_us() < end)
		ibw_loop_run_once(g.loop, 5000);
	assert_int_equal(pd.done, 1);
	assert_int_equal(pd.sent, 4);
	assert_int_equal(pd.received, 1);

	end = ibw_now_us() + 2000000u;
	while (ibw_engine_lost(g.e) && ibw_now_us() < end)
		ibw_loop_run_once(g.loop, 5000);
	assert_int_equal(ibw_engine_lost(g.e), 0);
	ibw_responder_set_lid(g.r, 12);
	ibw_responder_get_stats(g.r, &st);
	assert_true(st.answered == pd.received);
	memset(&pd, 0, sizeof(pd));
	assert_int_equal(ibw_ping_run(p, 12, IBW_PING_ECHO, IBW_ECHO_REQ, 3, 50,
				      on_pinged, &pd),
			 0);
	end = ibw_now_us() + 2000000u;
	while (!pd.done && ibw_now_us() < end)
		loop_back(&g, ~0u);
	assert_int_equal(pd.done, 1);
	assert_int_equal(pd.sent, 3);
	assert_int_equal(pd.received, 3);
	ibw_responder_get_stats(g.r, &st);
	assert_true(st.answered == 4);
	ibw_pinger_free(p);
	rig_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_echo_roundtrip),
		cmocka_unit_test(test_timestamp_and_info),
		cmocka_unit_test(test_ibping_compatible),
		cmocka_unit_test(test_malformed_requests_refused),
		cmocka_unit_test(test_responder_fuzz),
		cmocka_unit_test(test_responder_answers_and_rate_limits),
		cmocka_unit_test(test_responder_answers_on_request_pkey),
		cmocka_unit_test(test_state_machine),
		cmocka_unit_test(test_confirm_moved_by_sa),
		cmocka_unit_test(test_confirm_moved_by_directed_route),
		cmocka_unit_test(test_confirm_moved_not_routed_yet),
		cmocka_unit_test(test_confirm_really_down),
		cmocka_unit_test(test_round_many_endports),
		cmocka_unit_test(test_auto_echo_unsupported_answer),
		cmocka_unit_test(test_auto_silent_echo_held),
		cmocka_unit_test(test_echo_unsupported_is_alive),
		cmocka_unit_test(test_device_lost_mid_ping),
	};

	return cmocka_run_group_tests_name("ping", tests, NULL, NULL);
}
