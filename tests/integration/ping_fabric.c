// SPDX-License-Identifier: BSD-2-Clause
/*
 * Pings on the simulated fabric, through the core API: a host driven
 * down by Unlink and back up by Relink (one event each), 50% injected
 * loss measured and seen as degraded, and a responder (started by
 * ping.sh on node0002) that survives a stray class and malformed echo
 * requests and still answers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "discover.h"
#include "echo.h"
#include "engine.h"
#include "ping.h"
#include "simcon.h"
#include "umad.h"
#include "walk.h"

static struct ibw_loop *loop;
static struct ibw_transport *tr;
static struct ibw_engine *eng;
static struct ibw_fabric *fab;
static struct ibw_events *ev;

static void console(const char *line)
{
	assert_int_equal(sim_console(line), 0);
}

static int setup(void **state)
{
	char err[256];
	struct ibw_local_port lp;

	loop = ibw_loop_new();
	if (ibw_umad_open(NULL, 0, &tr, &lp, err, sizeof(err)) < 0)
		return -1;
	eng = ibw_engine_new(loop, tr, NULL);
	ev = ibw_events_new(1024);
	fab = walk_discover(loop, eng, 30000);
	if (!fab)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	ibw_engine_free(eng);
	ibw_fabric_unref(fab);
	ibw_events_free(ev);
	ibw_transport_close(tr);
	ibw_loop_free(loop);
	return 0;
}

static const struct ibw_endport *only(struct ibw_pinger *p)
{
	unsigned n;
	const struct ibw_endport *ep = ibw_pinger_endports(p, &n);

	assert_int_equal(n, 1);
	return ep;
}

/* Run until @cond or @ms pass; returns the milliseconds it took. */
#define RUN_UNTIL(cond, ms)                                             \
	({                                                              \
		uint64_t t0_ = ibw_now_us(), end_ = t0_ + (ms)*1000ull; \
		while (!(cond) && ibw_now_us() < end_)                  \
			ibw_loop_run_once(loop, 10000);                 \
		(unsigned)((ibw_now_us() - t0_) / 1000);                \
	})

static unsigned state_events(uint64_t guid, enum ibw_endport_state s)
{
	static struct ibw_event e[1024];
	unsigned n = ibw_events_since(ev, 0, e, 1024), i, c = 0;

	for (i = 0; i < n; i++)
		c += e[i].kind == IBW_EVT_ENDPORT_STATE &&
		     e[i].peer_guid == guid && e[i].new_value == s;
	return c;
}

static void test_unlink_down_relink_up(void **state)
{
	char *targets[] = { "node0010 HCA-1" };
	struct ibw_ping_opts o = { 0 };
	const struct ibw_endport *ep;
	struct ibw_pinger *p;
	uint64_t s0;

	o.interval_us = 50000;
	o.timeout_ms = 50;
	o.method = IBW_PING_PMA;
	o.down_after = 3;
	o.up_after = 2;
	o.targets = targets;
	o.ntargets = 1;
	p = ibw_pinger_new(eng, ev, &o);
	ibw_pinger_update(p, fab, NULL, NULL);
	ep = only(p);
	assert_true(ep->found);
	ibw_pinger_start(p);
	RUN_UNTIL(only(p)->state == IBW_EP_UP, 3000);
	assert_int_equal(only(p)->state, IBW_EP_UP);

	console("Unlink \"node0010\"[1]");
	s0 = only(p)->sent;
	RUN_UNTIL(only(p)->state == IBW_EP_DOWN, 3000);
	assert_int_equal(only(p)->state, IBW_EP_DOWN);
	/* within the configured number of intervals: counted in probes,
	 * one an interval (and one more that may have been in flight) */
	assert_true(only(p)->sent - s0 <= 3 + 1);
	/* It stays down, with no second event, over three more probes (the
	 * pinger's count, not a time). */
	s0 = only(p)->sent;
	RUN_UNTIL(only(p)->sent >= s0 + 3, 3000);
	assert_true(only(p)->sent >= s0 + 3);
	assert_int_equal(only(p)->state, IBW_EP_DOWN);
	assert_int_equal(state_events(ep->port_guid, IBW_EP_DOWN), 1);

	console("Relink \"node0010\"[1]");
	RUN_UNTIL(only(p)->state == IBW_EP_UP, 3000);
	assert_int_equal(only(p)->state, IBW_EP_UP);
	s0 = only(p)->sent;
	RUN_UNTIL(only(p)->sent >= s0 + 3, 3000);
	assert_true(only(p)->sent >= s0 + 3);
	assert_int_equal(only(p)->state, IBW_EP_UP);
	assert_int_equal(state_events(ep->port_guid, IBW_EP_UP), 1);
	assert_int_equal(state_events(ep->port_guid, IBW_EP_DOWN), 1);
	ibw_engine_free(eng); /* cancel in-flight probes before the free */
	eng = ibw_engine_new(loop, tr, NULL);
	ibw_pinger_free(p);
}

/* Echo to the responder: ibsim drops a MAD entering the errored port
 * once (a PMA or SMP request is checked twice, once on the way in and
 * once by the port that answers it, which makes 75%). */
static void test_half_loss_is_degraded(void **state)
{
	char *targets[] = { "node0002 HCA-1" };
	struct ibw_ping_opts o = { 0 };
	struct ibw_pinger *p;
	uint64_t s0, r0;
	double loss;

	o.interval_us = 10000;
	o.timeout_ms = 50;
	o.method = IBW_PING_ECHO;
	o.down_after = 20; /* 50% loss rarely loses 20 in a row */
	o.window = 40;
	o.targets = targets;
	o.ntargets = 1;
	p = ibw_pinger_new(eng, ev, &o);
	ibw_pinger_update(p, fab, NULL, NULL);
	ibw_pinger_start(p);
	RUN_UNTIL(only(p)->state == IBW_EP_UP, 3000);
	assert_int_equal(only(p)->state, IBW_EP_UP);

	console("Error \"node0002\"[1] 50");
	s0 = only(p)->sent;
	r0 = only(p)->received;
	RUN_UNTIL(only(p)->sent >= s0 + 120, 10000);
	assert_true(only(p)->sent >= s0 + 120);
	loss = 100.0 *
	       (double)((only(p)->sent - s0) - (only(p)->received - r0)) /
	       (double)(only(p)->sent - s0);
	fprintf(stderr, "measured loss %.1f%% over %llu probes, state %s\n",
		loss, (unsigned long long)(only(p)->sent - s0),
		ibw_endport_state_str(only(p)->state));
	/* 50% of the MADs entering the port are dropped: each probe's
	 * request is lost with p = 0.5 (its reply leaves by that port and is
	 * not). Over n >= 120 probes one standard deviation is
	 * 100 * sqrt(0.25 / n) <= 4.6 points: allow 4 of them (a false
	 * failure about once in 16,000 runs). 75%, what dropping both ways
	 * would give, is more than 5 away. */
	{
		double n = (double)(only(p)->sent - s0);
		double sd = 100.0 * sqrt(0.25 / n);

		assert_true(loss >= 50.0 - 4 * sd && loss <= 50.0 + 4 * sd);
	}
	assert_int_equal(only(p)->state, IBW_EP_DEGRADED);

	console("Error \"node0002\"[1] 0");
	RUN_UNTIL(only(p)->state == IBW_EP_UP, 5000);
	assert_int_equal(only(p)->state, IBW_EP_UP);
	ibw_engine_free(eng);
	eng = ibw_engine_new(loop, tr, NULL);
	ibw_pinger_free(p);
}

struct one {
	int done;
	struct ibw_mad_done d;
};

static void on_one(const struct ibw_mad_done *d, void *arg)
{
	struct one *o = arg;

	o->d = *d;
	o->done = 1;
}

/* Send an echo request with Type @type to @lid; returns the result. */
static enum ibw_mad_result raw_echo(uint16_t lid, uint8_t type)
{
	uint8_t payload[IBW_ECHO_PAYLOAD];
	struct ibw_mad_req r;
	struct one o = { 0 };

	ibw_echo_request(payload, IBW_ECHO_REQ, 1, 1, "x", 1);
	payload[0] = type;
	memset(&r, 0, sizeof(r));
	ibw_dest_lid(&r.dest, lid);
	r.mgmt_class = IBW_CLASS_VENDOR_ECHO;
	r.method = IBW_METHOD_GET;
	r.data = payload;
	r.data_len = sizeof(payload);
	r.timeout_ms = 100;
	r.retries = 0;
	r.cb = on_one;
	r.arg = &o;
	assert_int_equal(ibw_engine_submit(eng, &r), 0);
	RUN_UNTIL(o.done, 2000);
	assert_true(o.done);
	return o.d.result;
}

static void test_responder_survives_strays(void **state)
{
	const char *lidtxt = getenv("IBW_RESPONDER_LID");
	uint16_t lid = (uint16_t)(lidtxt ? atoi(lidtxt) : 0);
	char cmd[256];
	int i;

	assert_int_not_equal(lid, 0);
	assert_int_equal(raw_echo(lid, IBW_ECHO_REQ), IBW_MAD_OK);
	/* malformed echo requests: a response type, an unknown type */
	for (i = 0; i < 20; i++) {
		assert_int_equal(raw_echo(lid, IBW_ECHO_RESP), IBW_MAD_TIMEOUT);
		assert_int_equal(raw_echo(lid, (uint8_t)(7 + i)),
				 IBW_MAD_TIMEOUT);
	}
	/* a stray class: SMInfo at the responder's port */
	snprintf(cmd, sizeof(cmd), "timeout 5 sminfo %u >/dev/null 2>&1", lid);
	if (system(cmd) == -1)
		fail_msg("cannot run sminfo");
	/* still there, still answering */
	assert_int_equal(raw_echo(lid, IBW_ECHO_REQ), IBW_MAD_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_responder_survives_strays),
		cmocka_unit_test(test_unlink_down_relink_up),
		cmocka_unit_test(test_half_loss_is_degraded),
	};

	return cmocka_run_group_tests_name("ping_fabric", tests, setup,
					   teardown);
}
