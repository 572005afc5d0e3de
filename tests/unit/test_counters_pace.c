// SPDX-License-Identifier: BSD-2-Clause
/*
 * What a counter sweep asks of a PMA and how it paces itself:
 * PortVLXmitWaitCounters, FEC mode and counters, PortSamplesControl's
 * Tick, progress and order, the bounded queue, silent PMAs asked early,
 * a dual-port CA.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "counters.h"
#include "events.h"
#include "hash.h"
#include "links.h"
#include "transport_mem.h"

#include "ctr_fx.h"

/* How far a sweep got (ports, read, unreachable, spread, running), and
 * the port records, sorted also while a sweep adds ports out of order,
 * each port once however many sweeps ran. */
/*
 * PortVLXmitWaitCounters: read where ClassPortInfo advertises PortXmitWait
 * (bit 12), non-zero values decoded into the right VLs and folded into
 * totals across a reset and the 16-bit maximum; never asked of a node
 * without the bit; a status error stops the asking and keeps the port's
 * other counters.
 */
void test_vl_xmit_wait(void **state)
{
	struct rig r;
	struct fake fk;
	const struct ibw_port_ctrs *p;
	int k;

	memset(&fk, 0, sizeof(fk));
	fk.capmask = 0x1200;
	for (k = 0; k < 16; k++)
		fk.vl[k] = (uint16_t)(1000 * k + 7);
	fk.vl[15] = 65535;
	rig_init(&r);
	sweep(&r, &fk);
	assert_int_equal(fk.vl_asked, 1);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_non_null(p);
	assert_true(p->have_vl);
	for (k = 0; k < 15; k++) {
		assert_int_equal(p->vl_raw[k], 1000 * k + 7);
		assert_true(p->vl_xmit_wait[k] == (uint64_t)(1000 * k + 7));
	}
	assert_int_equal(p->vl_raw[15], 65535);
	/* VL0 grows by 100; VL1 went down (cleared by someone): counted
	 * whole; VL15 stays at its maximum. */
	fk.vl[0] = 107;
	fk.vl[1] = 3;
	sweep(&r, &fk);
	assert_int_equal(fk.vl_asked, 2);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->vl_xmit_wait[0] == 107);
	assert_true(p->vl_xmit_wait[1] == 1007 + 3);
	assert_true(p->vl_xmit_wait[15] == 65535);
	/* A status error: the port keeps its counters, and the node is not
	 * asked again. */
	fk.vl_status = 0x0c; /* attribute not supported */
	fk.sym = 9;
	sweep(&r, &fk);
	assert_int_equal(fk.vl_asked, 3);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_false(p->stale);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 9);
	sweep(&r, &fk);
	assert_int_equal(fk.vl_asked, 3);
	rig_free(&r);

	/* A node without IsPortCountersXmitWaitSupported: never asked. */
	memset(&fk, 0, sizeof(fk));
	fk.capmask = 0x0200;
	fk.sym = 4;
	rig_init(&r);
	sweep(&r, &fk);
	sweep(&r, &fk);
	assert_int_equal(fk.vl_asked, 0);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_false(p->have_vl);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 4);
	rig_free(&r);
}

/*
 * FECModeActive travels with the FEC counters; a PortInfoExtended that
 * goes unanswered costs them nothing: they are read in the form of the
 * last mode read ("last_known"), or, with none known, in the FC-FEC
 * form ("fc_fallback"). The mode is asked where PortInfoExtended is,
 * whether or not the PMA counts in the RS-FEC form.
 */
void test_fec_mode_and_pie_timeout(void **state)
{
	struct fake fk = { 0 };
	const struct ibw_port_ctrs *p;
	struct rig r;

	(void)state;
	rig_init(&r);
	ibw_fabric_unref(r.f);
	r.f = one_fec_ca();
	fk.capmask = 0x1200 | 1u << 14; /* IsRSFECCountersSupported */
	fk.pie_mode = 2;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_non_null(p);
	assert_non_null(p->fec);
	assert_int_equal(fk.pie_asked, 1);
	assert_int_equal(fk.pesc_asked, 1);
	assert_int_equal(p->fec->layout, IBW_FEC_RS);
	assert_int_equal(p->fec->mode, 2);
	assert_int_equal(p->fec->mode_src, IBW_FEC_MODE_READ);

	fk.pie_silent = 1;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(fk.pie_asked >= 2);
	assert_int_equal(fk.pesc_asked, 2);
	assert_int_equal(p->fec_fail, IBW_CTR_FAIL_NONE);
	assert_int_equal(p->fec->layout, IBW_FEC_RS);
	assert_int_equal(p->fec->mode, 2);
	assert_int_equal(p->fec->mode_src, IBW_FEC_MODE_LAST);
	assert_int_equal(p->fec_lost, 0);
	rig_free(&r);

	/* no mode known: the FC-FEC form; a PMA without the RS-FEC form
	 * still has the mode asked */
	rig_init(&r);
	ibw_fabric_unref(r.f);
	r.f = one_fec_ca();
	memset(&fk, 0, sizeof(fk));
	fk.pie_silent = 1;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(fk.pie_asked >= 1);
	assert_int_equal(fk.pesc_asked, 1);
	assert_non_null(p->fec);
	assert_int_equal(p->fec_fail, IBW_CTR_FAIL_NONE);
	assert_int_equal(p->fec->layout, IBW_FEC_FC);
	assert_int_equal(p->fec->mode_src, IBW_FEC_MODE_FALLBACK);
	fk.pie_silent = 0;
	fk.pie_mode = 0;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_int_equal(p->fec->layout, IBW_FEC_FC);
	assert_int_equal(p->fec->mode, 0);
	assert_int_equal(p->fec->mode_src, IBW_FEC_MODE_READ);
	assert_string_equal(ibw_fec_mode_src_name(IBW_FEC_MODE_LAST),
			    "last_known");
	assert_string_equal(ibw_fec_mode_name(0), "none");
	rig_free(&r);
}

/*
 * PortSamplesControl:Tick is read once per PMA (it is mandatory)
 * and kept: a crafted Tick comes back as it was answered; a PMA that
 * answers with a status error (as ibsim does) is not asked again and
 * its tick stays unknown; one without PortXmitWait is asked all the same.
 */
void test_samples_control_tick(void **state)
{
	struct fake fk = { 0 };
	struct rig r;
	int i;

	rig_init(&r);
	assert_int_equal(ibw_counters_tick(r.c, 0x10), -1);
	fk.tick = 31; /* Switch-IB's, per ibdiagnet's manual */
	sweep(&r, &fk);
	assert_int_equal(fk.psc_asked, 1);
	assert_int_equal(ibw_counters_tick(r.c, 0x10), 31);
	fk.tick = 7;
	sweep(&r, &fk);
	assert_int_equal(fk.psc_asked, 1); /* kept, not asked again */
	assert_int_equal(ibw_counters_tick(r.c, 0x10), 31);
	assert_int_equal(ibw_counters_tick(r.c, 0x11), -1);
	rig_free(&r);

	rig_init(&r);
	memset(&fk, 0, sizeof(fk));
	fk.psc_status = 0x0c; /* unsupported method/attribute */
	sweep(&r, &fk);
	sweep(&r, &fk);
	assert_int_equal(fk.psc_asked, 1);
	assert_int_equal(ibw_counters_tick(r.c, 0x10), -1);
	assert_false(ibw_counters_find(r.c, 0x10, 1)->stale);
	rig_free(&r);

	/* Dropped (ibsim): asked in three sweeps, one try each, then no
	 * more; the counters are read all the same, and each sweep that
	 * asked counts its timeout, as every MAD of a sweep's is. */
	rig_init(&r);
	memset(&fk, 0, sizeof(fk));
	fk.psc_silent = 1;
	for (i = 0; i < 5; i++) {
		sweep(&r, &fk);
		assert_false(ibw_counters_find(r.c, 0x10, 1)->stale);
		assert_int_equal(ibw_counters_last_sweep(r.c).timeouts,
				 i < 3 ? 1 : 0);
	}
	assert_int_equal(fk.psc_asked, 3);
	assert_int_equal(ibw_counters_tick(r.c, 0x10), -1);
	rig_free(&r);

	/* A port where an SM runs (IsSM) is asked like any other: on
	 * hardware its PMA answers, and the test bed's model answers for
	 * the SM's node before ibsim would hand the MAD to opensm. */
	rig_init(&r);
	memset(&fk, 0, sizeof(fk));
	ibw_fabric_unref(r.f);
	r.f = ibw_fabric_new();
	{
		struct ibw_fnode *n = ibw_fabric_add_node(r.f, 0x10, 2);

		n->ni.node_type = IBW_NODE_CA;
		n->ni.num_ports = 1;
		n->ports[1].have_pi = 1;
		n->ports[1].pi.state = 4;
		n->ports[1].pi.lid = 5;
		n->ports[1].pi.capmask = IBW_CAP_IS_SM;
		n->lid = 5;
		ibw_fabric_freeze(r.f);
	}
	sweep(&r, &fk);
	assert_int_equal(fk.psc_asked, 1);
	assert_false(ibw_counters_find(r.c, 0x10, 1)->stale);
	rig_free(&r);

	rig_init(&r);
	memset(&fk, 0, sizeof(fk));
	/* PortSamplesControl is mandatory: asked of a PMA without
	 * IsPortCountersXmitWaitSupported too (its OptionMask names the
	 * congestion counters), once, before the ports are read */
	fk.capmask = 0x0200;
	fk.tick = 7;
	sweep(&r, &fk);
	sweep(&r, &fk);
	assert_int_equal(fk.psc_asked, 1);
	assert_int_equal(ibw_counters_tick(r.c, 0x10), 7);
	rig_free(&r);
}

void test_progress_and_order(void **state)
{
	struct ibw_fabric *f1 = many_cas(0x1000, 600);
	struct ibw_fabric *f2 = many_cas(0x0ffe, 602);
	struct ibw_counters_progress p;
	struct fake fk = { 0 };
	uint64_t end;
	struct rig r;

	/* Tries of 200 ms: what is tested is the order and the progress,
	 * and on a loaded machine a loop turn of 600 nodes' answers
	 * (ClassPortInfo, PortSamplesControl, then the ports) took longer
	 * than 20 ms tries; the silent sweep at the end then takes a few
	 * seconds. */
	rig_init_cfg(&r, NULL, 200);
	fk.fab = f1;
	p = ibw_counters_progress(r.c);
	assert_false(p.running);
	assert_true(p.start_us == 0);
	/* A full-speed sweep: every port read. */
	assert_int_equal(ibw_counters_sweep(r.c, f1, 0, swept, &r), 0);
	p = ibw_counters_progress(r.c);
	assert_true(p.running);
	assert_int_equal(p.ports, 600);
	assert_true(p.spread_us == 0 && p.start_us && !p.end_us);
	run_until_done(&r, &fk);
	p = ibw_counters_progress(r.c);
	assert_false(p.running);
	assert_int_equal(p.read, 600);
	assert_int_equal(p.unreachable, 0);
	assert_true(p.end_us >= p.start_us);
	assert_sorted(r.c, 600);
	/* Again: the same 600 records, found, not added. */
	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, f1, 0, swept, &r), 0);
	run_until_done(&r, &fk);
	assert_sorted(r.c, 600);

	/* Spread over 0.6 s: two new nodes below the others, read in its
	 * first tick (after their ClassPortInfo), added at the end. */
	r.done = 0;
	fk.fab = f2;
	assert_int_equal(ibw_counters_sweep(r.c, f2, 600000, swept, &r), 0);
	end = ibw_now_us() + 5000000u;
	while ((!ibw_counters_find(r.c, 0x0ffe, 1) ||
		!ibw_counters_find(r.c, 0x0fff, 1)) &&
	       ibw_now_us() < end) {
		serve(&r, &fk);
		ibw_loop_run_once(r.loop, 5000);
	}
	p = ibw_counters_progress(r.c);
	assert_true(p.running);
	assert_true(p.spread_us == 600000);
	assert_int_equal(p.ports, 602);
	assert_true(p.read >= 2 && p.read < 602);
	assert_sorted(r.c, 602);
	run_until_done(&r, &fk);
	p = ibw_counters_progress(r.c);
	assert_int_equal(p.read, 602);
	assert_sorted(r.c, 602);

	/* Nobody answers: every port unreachable, none read. */
	fk.silent = 1;
	fk.fab = f1;
	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, f1, 0, swept, &r), 0);
	run_until_done(&r, &fk);
	p = ibw_counters_progress(r.c);
	assert_int_equal(p.read, 0);
	assert_int_equal(p.unreachable, 600);
	assert_sorted(r.c, 602);
	ibw_fabric_unref(f1);
	ibw_fabric_unref(f2);
	rig_free(&r);
}

/*
 * An unspread sweep keeps about 1,024 MADs queued or in flight, not one
 * per MAD of the fabric: warm, that alone; cold, beside it one
 * ClassPortInfo per PMA whose mask is not known, all sent at the start
 * (a silent PMA then waits out its deadline beside the others' reads).
 * A respread in the middle takes over the rest.
 */
void test_unspread_is_bounded(void **state)
{
	struct ibw_fabric *f = many_cas(0x1000, 3000);
	struct ibw_counters_progress p;
	struct ibw_engine_stats st;
	struct fake fk = { 0 };
	unsigned warm_max = 0;
	uint64_t end;
	struct rig r;

	/* The fake answers from this thread between loop turns: on a busy
	 * machine a turn can take longer than 20 ms, and a try timed out
	 * here would be a port not read, which this test is not about. */
	rig_init_cfg(&r, NULL, 5000);
	fk.fab = f;
	assert_int_equal(ibw_counters_sweep(r.c, f, 0, swept, &r), 0);
	run_until_done(&r, &fk);
	assert_int_equal(ibw_counters_progress(r.c).read, 3000);
	ibw_engine_get_stats(r.e, &st);
	assert_true(st.queued_hwm >= 3000);
	assert_true(st.queued_hwm <= 3000 + 1024 + 2);
	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, f, 0, swept, &r), 0);
	warm_max = run_queue_max(&r, &fk);
	p = ibw_counters_progress(r.c);
	assert_int_equal(p.read, 3000);
	assert_true(warm_max > 0);
	assert_true(warm_max <= 1024 + 2);
	ibw_engine_get_stats(r.e, &st);
	/* 3,000 ClassPortInfo and PortSamplesControl (once per PMA, for
	 * its Tick), then 18,000 counter reads: PortCounters,
	 * PortCountersExtended and PortVLXmitWaitCounters (the fake PMA
	 * advertises PortXmitWait) per port, twice, and the NodeInfo that
	 * checks each node's readings, twice */
	assert_int_equal(st.submitted, 2 * 3000 + 2 * 3 * 3000 + 2 * 3000);

	/* A respread (a SIGHUP) once some are read only ever hurries a
	 * sweep: a full-speed one is not spread over the new interval. */
	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, f, 0, swept, &r), 0);
	end = ibw_now_us() + 5000000u;
	while (ibw_counters_progress(r.c).read < 100 && ibw_now_us() < end) {
		serve(&r, &fk);
		ibw_loop_run_once(r.loop, 5000);
	}
	ibw_counters_respread(r.c, 60000000u);
	run_until_done(&r, &fk);
	assert_true(r.done);
	assert_int_equal(ibw_counters_progress(r.c).read, 3000);

	/* A spread one is hurried: over a minute, then the rest at once. */
	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, f, 60000000u, swept, &r), 0);
	end = ibw_now_us() + 5000000u;
	while (ibw_counters_progress(r.c).read < 10 && ibw_now_us() < end) {
		serve(&r, &fk);
		ibw_loop_run_once(r.loop, 5000);
	}
	p = ibw_counters_progress(r.c);
	assert_false(r.done);
	assert_true(p.read < 3000);
	ibw_counters_respread(r.c, 0);
	assert_true(run_queue_max(&r, &fk) <= 1024 + 2);
	assert_int_equal(ibw_counters_progress(r.c).read, 3000);
	ibw_fabric_unref(f);
	rig_free(&r);
}

/*
 * A PMA that never answers: its ClassPortInfo goes out at the sweep's
 * start, not at its node's turn, so it waits out its deadline beside the
 * others' reads; the next sweep asks it with one try; once it answers it
 * is read again. A node known to answer that falls silent costs its
 * reads' tries once, then one ClassPortInfo try a sweep.
 */
void test_silent_pma_asked_early(void **state)
{
	struct ibw_fabric *f = many_cas(0x1000, 40);
	const struct ibw_port_ctrs *p;
	struct fake fk = { .dead_lid = 40 };
	struct ibw_counters_opts co = { .retries = 2 };
	struct rig r;
	int i;

	(void)state;
	rig_init_opts(&r, &co);
	fk.fab = f;
	for (i = 0; i < 2; i++) {
		fk.dead_asked = fk.seen = 0;
		r.done = 0;
		assert_int_equal(ibw_counters_sweep(r.c, f, 0, swept, &r), 0);
		run_until_done(&r, &fk);
		/* the last node in order, asked among the first 40 MADs */
		assert_true(fk.dead_first >= 1 && fk.dead_first <= 40);
		/* three tries at first, then one */
		assert_int_equal(fk.dead_asked, i == 0 ? 3 : 1);
		p = ibw_counters_find(r.c, 0x1000 + 39, 1);
		assert_non_null(p);
		assert_true(p->stale);
		assert_int_equal(p->fail, IBW_CTR_FAIL_TIMEOUT);
		assert_int_equal(p->unreachable, i + 1);
		assert_int_equal(ibw_counters_progress(r.c).read, 39);
		assert_int_equal(ibw_counters_last_sweep(r.c).timeouts, 1);
	}
	/* it answers again: read, and known */
	fk.dead_lid = 0;
	sweep_over(&r, f, &fk);
	p = ibw_counters_find(r.c, 0x1000 + 39, 1);
	assert_false(p->stale);
	assert_int_equal(ibw_counters_progress(r.c).read, 40);
	/* known, then silent: its reads wait out their tries once... */
	fk.dead_lid = 40;
	fk.dead_asked = 0;
	sweep_over(&r, f, &fk);
	assert_true(fk.dead_asked >= 2 * 3);
	p = ibw_counters_find(r.c, 0x1000 + 39, 1);
	assert_true(p->stale);
	/* ... then it is one ClassPortInfo try a sweep */
	fk.dead_asked = 0;
	sweep_over(&r, f, &fk);
	assert_int_equal(fk.dead_asked, 1);
	assert_int_equal(ibw_counters_progress(r.c).read, 39);
	fk.dead_lid = 0;
	sweep_over(&r, f, &fk);
	assert_int_equal(ibw_counters_progress(r.c).read, 40);
	ibw_fabric_unref(f);
	rig_free(&r);
}

void test_dual_port_ca(void **state)
{
	struct ibw_fabric *f = ibw_fabric_new();
	struct ibw_fnode *n = ibw_fabric_add_node(f, 0x10, 3);
	const struct ibw_port_ctrs *p1, *p2;
	unsigned per_lid[2] = { 0, 0 }, k;
	uint64_t busy[2], end;
	struct rig r;

	n->ni.node_type = IBW_NODE_CA;
	n->ni.num_ports = 2;
	for (k = 1; k <= 2; k++) {
		n->ports[k].have_pi = 1;
		n->ports[k].pi.state = 4;
		n->ports[k].pi.lid = (uint16_t)(4 + k);
	}
	n->lid = 5;
	ibw_fabric_freeze(f);
	rig_init(&r);
	for (k = 0; k < 2; k++) {
		r.done = 0;
		assert_int_equal(ibw_counters_sweep(r.c, f, 0, swept, &r), 0);
		end = ibw_now_us() + 2000000u;
		while (!r.done && ibw_now_us() < end) {
			serve_dual(&r, per_lid, k == 1);
			ibw_loop_run_once(r.loop, 5000);
		}
		assert_true(r.done);
		assert_int_equal(ibw_counters_progress(r.c).ports, 2);
		p1 = ibw_counters_find(r.c, 0x10, 1);
		p2 = ibw_counters_find(r.c, 0x10, 2);
		assert_non_null(p1);
		assert_non_null(p2);
		assert_false(p1->stale);
		assert_int_equal(p1->lid, 5);
		assert_int_equal(p1->v[IBW_CTR_XMIT_DATA].total, 4000);
		assert_true(p1->read_dur_us > 0);
		ibw_counters_last_busy(r.c, busy);
		assert_true(busy[0] > 0);
		assert_int_equal(busy[1], 0);
		if (k == 0) {
			/* ClassPortInfo, PortCounters, the extended ones and
			 * the NodeInfo, at each LID; PortSamplesControl once
			 * for the node (mandatory, whatever its mask), at the
			 * LID that first answered ClassPortInfo */
			assert_int_equal(per_lid[0] + per_lid[1], 9);
			assert_true(per_lid[0] >= 4 && per_lid[1] >= 4);
			assert_false(p2->stale);
			assert_int_equal(p2->lid, 6);
			assert_int_equal(p2->v[IBW_CTR_XMIT_DATA].total, 8000);
			assert_int_equal(p2->fail, IBW_CTR_FAIL_NONE);
		} else {
			/* LID 6 went silent: its port alone is stale, its
			 * totals kept, for a timeout */
			assert_true(p2->stale);
			assert_int_equal(p2->fail, IBW_CTR_FAIL_TIMEOUT);
			assert_int_equal(p2->v[IBW_CTR_XMIT_DATA].total, 8000);
			assert_int_equal(ibw_counters_unreachable(r.c), 1);
		}
	}
	ibw_fabric_unref(f);
	rig_free(&r);
}

/*
 * A fabric whose PMAs drop PortSamplesControl (ibsim): once 16 in a row
 * went unanswered, the sweep asks no more PMA for it, so a spread sweep
 * of 40 CAs asks the first few, not every one; the next sweep asks
 * again. The counters are read throughout.
 */
void test_samples_control_silent_fabric(void **state)
{
	struct ibw_fabric *f = many_cas(0x1000, 40);
	struct fake fk = { 0 };
	uint64_t end;
	unsigned first;
	struct rig r;
	int k;

	rig_init(&r);
	fk.fab = f;
	fk.psc_silent = 1;
	for (k = 0; k < 2; k++) {
		r.done = 0;
		/* a job every 25 ms, each PortSamplesControl a 20 ms try */
		assert_int_equal(
			ibw_counters_sweep(r.c, f, 1000000u, swept, &r), 0);
		end = ibw_now_us() + 5000000u;
		while (!r.done && ibw_now_us() < end) {
			serve(&r, &fk);
			ibw_loop_run_once(r.loop, 5000);
		}
		assert_true(r.done);
		assert_int_equal(ibw_counters_progress(r.c).read, 40);
		/* Until a PMA answers it, 16 at once; 16 timeouts in a
		 * row end the asking for the sweep: 16 a sweep, each
		 * counted as the sweep's timeout. On a loaded machine a
		 * timeout can fire after the next job has asked: one or
		 * two more, never the 40. */
		if (k == 0) {
			first = fk.psc_asked;
			assert_in_range(first, 16, 18);
			assert_int_equal(ibw_counters_last_sweep(r.c).timeouts,
					 first);
		} else {
			assert_in_range(fk.psc_asked - first, 16, 18);
		}
	}
	ibw_fabric_unref(f);
	rig_free(&r);
}
