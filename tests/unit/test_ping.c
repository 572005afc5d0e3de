/*
 * Echo wire format, the responder (with fuzzed requests), and the
 * endport state machine.
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
#include "ping.h"
#include "responder.h"
#include "transport_mem.h"

static void request(uint8_t *m, enum ibw_echo_type type, uint16_t id,
		    uint16_t seq, const char *data)
{
	memset(m, 0, 256);
	m[0] = 1;
	m[1] = 0x32;
	m[2] = 1;
	m[3] = 0x01;
	mad_set_field64(m, 0, IB_MAD_TRID_F, 0x1234);
	mad_set_field(m, 0, IB_VEND2_OUI_F, IBW_ECHO_OUI);
	ibw_echo_request(m + IBW_ECHO_OFFS, type, id, seq, data,
			 data ? strlen(data) : 0);
}

static void test_echo_roundtrip(void **state)
{
	uint8_t m[256];
	struct ibw_echo_reply r;

	request(m, IBW_ECHO_REQ, 7, 9, "hello fabric");
	assert_int_equal(ibw_echo_answer(m, 256, "h.d", 5, 0x1122), 0);
	assert_int_equal(m[3], 0x81);
	assert_true(ibw_mad_get64(m, IB_MAD_TRID_F) == 0x1234);
	assert_int_equal(ibw_echo_parse_reply(m, 256, &r), 0);
	assert_int_equal(r.type, IBW_ECHO_RESP);
	assert_int_equal(r.id, 7);
	assert_int_equal(r.seq, 9);
	assert_memory_equal(r.data, "hello fabric", 12);
}

static void test_timestamp_and_info(void **state)
{
	uint8_t m[256];
	struct ibw_echo_reply r;

	uint32_t before, after;

	before = ibw_echo_timestamp();
	request(m, IBW_TS_REQ, 1, 2, NULL);
	assert_int_equal(ibw_echo_answer(m, 256, "h", 5, 0x1122), 0);
	after = ibw_echo_timestamp();
	assert_int_equal(ibw_echo_parse_reply(m, 256, &r), 0);
	assert_int_equal(r.type, IBW_TS_RESP);
	/* Every stamp is a time of this test, in ms since midnight UTC
	 * (unless midnight fell inside it: then only the order is known). */
	if (before <= after) {
		assert_true(r.ts_orig >= before && r.ts_orig <= after);
		assert_true(r.ts_recv >= r.ts_orig && r.ts_recv <= after);
		assert_true(r.ts_xmit >= r.ts_recv && r.ts_xmit <= after);
	}
	assert_true(r.ts_xmit < 86400000u);

	request(m, IBW_INFO_REQ, 1, 2, NULL);
	assert_int_equal(
		ibw_echo_answer(m, 256, "h", 0xbeef, 0x0002c90300a00001ull), 0);
	assert_int_equal(ibw_echo_parse_reply(m, 256, &r), 0);
	assert_int_equal(r.type, IBW_INFO_RESP);
	assert_int_equal(r.lid, 0xbeef);
	assert_true(r.port_guid == 0x0002c90300a00001ull);
}

static void test_ibping_compatible(void **state)
{
	uint8_t m[256];
	struct ibw_echo_reply r;
	int i;

	/* ibping sends zeros from byte 40; the answer is host.domain. */
	request(m, IBW_ECHO_IBPING, 0, 0, NULL);
	for (i = IBW_ECHO_OFFS; i < 256; i++)
		assert_int_equal(m[i], 0);
	assert_int_equal(ibw_echo_answer(m, 256, "node0002.cluster", 5, 1), 0);
	assert_string_equal((char *)m + IBW_ECHO_OFFS, "node0002.cluster");
	assert_int_equal(ibw_echo_parse_reply(m, 256, &r), 0);
	assert_int_equal(r.type, IBW_ECHO_IBPING);
	assert_string_equal(r.host, "node0002.cluster");
	/* ibping -S answering one of our typed requests: its host name
	 * overwrites the type byte. */
	request(m, IBW_ECHO_REQ, 3, 4, "x");
	m[3] = 0x81;
	strcpy((char *)m + IBW_ECHO_OFFS, "vm.(none)");
	assert_int_equal(ibw_echo_parse_reply(m, 256, &r), 0);
	assert_int_equal(r.type, IBW_ECHO_IBPING);
	assert_string_equal(r.host, "vm.(none)");
}

static void test_malformed_requests_refused(void **state)
{
	uint8_t m[256];

	request(m, IBW_ECHO_REQ, 1, 1, NULL);
	m[1] = 0x33; /* another class */
	assert_int_equal(ibw_echo_answer(m, 256, "h", 1, 1), -EINVAL);
	request(m, IBW_ECHO_REQ, 1, 1, NULL);
	mad_set_field(m, 0, IB_VEND2_OUI_F, 0x0002c9);
	assert_int_equal(ibw_echo_answer(m, 256, "h", 1, 1), -EINVAL);
	request(m, IBW_ECHO_REQ, 1, 1, NULL);
	m[3] = 0x02; /* Set */
	assert_int_equal(ibw_echo_answer(m, 256, "h", 1, 1), -EINVAL);
	request(m, IBW_ECHO_REQ, 1, 1, NULL);
	m[3] = 0x81; /* a response, not a request */
	assert_int_equal(ibw_echo_answer(m, 256, "h", 1, 1), -EINVAL);
	request(m, IBW_ECHO_REQ, 1, 1, NULL);
	m[IBW_ECHO_OFFS] = 2; /* a response type in a request */
	assert_int_equal(ibw_echo_answer(m, 256, "h", 1, 1), -EINVAL);
	request(m, IBW_ECHO_REQ, 1, 1, NULL);
	mad_set_field(m, 0, IB_MAD_ATTRID_F, 5);
	assert_int_equal(ibw_echo_answer(m, 256, "h", 1, 1), -EINVAL);
	request(m, IBW_ECHO_REQ, 1, 1, NULL);
	assert_int_equal(ibw_echo_answer(m, 100, "h", 1, 1), -EINVAL);
	assert_int_equal(ibw_echo_answer(NULL, 256, "h", 1, 1), -EINVAL);
}

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
	unsigned sent, received;
};

static void on_pinged(const struct ibw_ping_summary *sum, void *arg)
{
	struct pinged *pd = arg;

	pd->done = 1;
	pd->sent = sum->sent;
	pd->received = sum->received;
}

/* The device goes away in the middle of a ping run: the run ends with
 * what it got (the probes after the loss fail without a send). Once the
 * device is open again, at a new LID, the echo responder registered
 * before the loss answers on the new transport and a new run gets every
 * answer. */
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
		cmocka_unit_test(test_device_lost_mid_ping),
	};

	return cmocka_run_group_tests_name("ping", tests, NULL, NULL);
}
