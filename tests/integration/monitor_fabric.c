// SPDX-License-Identifier: BSD-2-Clause
/*
 * The monitor in periodic mode on the simulated fabric: a threshold
 * crossing is one event; an unlinked host turns gone (one event) and
 * comes back; a port whose counters stop answering is stale with its
 * last values kept.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"
#include "monitor.h"
#include "simcon.h"
#include "umad.h"

static struct ibw_loop *loop;
static struct ibw_transport *tr;
static struct ibw_engine *eng;
static struct ibw_monitor *mon;

static void console(const char *line)
{
	assert_int_equal(sim_console(line), 0);
}

/* Run until @n more counter sweeps (and discoveries) are done. */
static void wait_sweeps(unsigned n)
{
	struct ibw_snapshot *s = ibw_monitor_snapshot(mon);
	uint64_t c0 = s->counter_sweeps, d0 = s->discoveries;
	uint64_t end = ibw_now_us() + 20000000u;

	ibw_snapshot_unref(s);
	for (;;) {
		s = ibw_monitor_snapshot(mon);
		if (s->counter_sweeps >= c0 + n && s->discoveries >= d0 + n) {
			ibw_snapshot_unref(s);
			return;
		}
		ibw_snapshot_unref(s);
		assert_true(ibw_now_us() < end);
		ibw_loop_run_once(loop, 50000);
	}
}

static const struct ibw_fnode *by_desc(const struct ibw_snapshot *s,
				       const char *desc)
{
	unsigned i;

	for (i = 0; i < s->fabric->nnodes; i++)
		if (!strcmp(s->fabric->nodes[i].desc, desc))
			return &s->fabric->nodes[i];
	return NULL;
}

static unsigned count(enum ibw_event_kind k, uint64_t guid)
{
	static struct ibw_event ev[4096];
	unsigned n = ibw_events_since(ibw_monitor_events(mon), 0, ev, 4096);
	unsigned i, c = 0;

	for (i = 0; i < n; i++)
		c += ev[i].kind == k && ev[i].node_guid == guid;
	return c;
}

static int setup(void **state)
{
	char err[256];
	struct ibw_local_port lp;
	struct ibw_monitor_opts o;

	memset(&o, 0, sizeof(o));
	o.discovery_interval_us = 300000;
	o.counter_interval_us = 300000;
	o.discover.retries = -1;
	o.counters.retries = -1;
	loop = ibw_loop_new();
	if (ibw_umad_open(NULL, 0, &tr, &lp, err, sizeof(err)) < 0)
		return -1;
	eng = ibw_engine_new(loop, tr, NULL);
	mon = ibw_monitor_new(eng, &o, err, sizeof(err));
	if (!mon || ibw_monitor_start(mon) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	ibw_engine_free(eng);
	ibw_monitor_free(mon);
	ibw_transport_close(tr);
	ibw_loop_free(loop);
	return 0;
}

static void test_threshold_crossing_is_one_event(void **state)
{
	struct ibw_snapshot *s;
	uint64_t g;

	wait_sweeps(1);
	s = ibw_monitor_snapshot(mon);
	g = by_desc(s, "node0020 HCA-1")->guid;
	ibw_snapshot_unref(s);
	assert_int_equal(count(IBW_EVT_THRESHOLD_CROSSED, g), 0);
	console("PerformanceSet \"node0020\"[1] "
		"PortCounters.SymbolErrorCounter=500");
	wait_sweeps(2);
	assert_int_equal(count(IBW_EVT_THRESHOLD_CROSSED, g), 1);
	wait_sweeps(2);
	assert_int_equal(count(IBW_EVT_THRESHOLD_CROSSED, g), 1);
}

static void test_unlinked_host_is_gone_then_back(void **state)
{
	struct ibw_snapshot *s;
	const struct ibw_fnode *n;
	uint64_t g;

	s = ibw_monitor_snapshot(mon);
	g = by_desc(s, "node0030 HCA-1")->guid;
	ibw_snapshot_unref(s);
	console("Unlink \"node0030\"[1]");
	wait_sweeps(2);
	s = ibw_monitor_snapshot(mon);
	n = ibw_fabric_find(s->fabric, g);
	assert_non_null(n); /* still in the picture ... */
	assert_true(n->gone); /* ... as gone */
	ibw_snapshot_unref(s);
	assert_int_equal(count(IBW_EVT_NODE_GONE, g), 1);
	assert_int_equal(count(IBW_EVT_LINK_DOWN, g), 1);
	console("Relink \"node0030\"[1]");
	wait_sweeps(2);
	s = ibw_monitor_snapshot(mon);
	n = ibw_fabric_find(s->fabric, g);
	assert_false(n->gone);
	ibw_snapshot_unref(s);
	assert_int_equal(count(IBW_EVT_NODE_ADDED, g), 1);
	assert_int_equal(count(IBW_EVT_LINK_UP, g), 1);
	assert_int_equal(count(IBW_EVT_NODE_GONE, g), 1);
}

static void test_silent_port_is_stale_not_zeroed(void **state)
{
	struct ibw_snapshot *s;
	const struct ibw_port_ctrs *p;
	uint64_t g, before;

	console("PerformanceSet \"node0040\"[1] "
		"PortCounters.SymbolErrorCounter=3");
	wait_sweeps(1);
	s = ibw_monitor_snapshot(mon);
	g = by_desc(s, "node0040 HCA-1")->guid;
	p = ibw_snapshot_port(s, g, 1);
	assert_non_null(p);
	assert_false(p->stale);
	before = p->v[IBW_CTR_SYMBOL_ERRORS].total;
	assert_true(before == 3);
	ibw_snapshot_unref(s);
	/* Drop every PortCounters MAD (attribute 18) into that port. */
	console("Error \"node0040\"[1] 100 18");
	wait_sweeps(2);
	s = ibw_monitor_snapshot(mon);
	p = ibw_snapshot_port(s, g, 1);
	assert_true(p->stale);
	assert_true(p->unreachable >= 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == before);
	assert_true(s->unreachable_ports >= 1);
	ibw_snapshot_unref(s);
	console("Error \"node0040\"[1] 0");
	wait_sweeps(2);
	s = ibw_monitor_snapshot(mon);
	p = ibw_snapshot_port(s, g, 1);
	assert_false(p->stale);
	ibw_snapshot_unref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threshold_crossing_is_one_event),
		cmocka_unit_test(test_unlinked_host_is_gone_then_back),
		cmocka_unit_test(test_silent_port_is_stale_not_zeroed),
	};

	return cmocka_run_group_tests_name("monitor_fabric", tests, setup,
					   teardown);
}
