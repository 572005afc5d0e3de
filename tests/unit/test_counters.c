// SPDX-License-Identifier: BSD-2-Clause
/*
 * The counter sweep on a fake fabric: totals, thresholds, stale ports,
 * resets, PMA redirection, LIDs in flux and the readings' checks. The
 * state file is tested in test_counters_state.c, what a sweep asks and
 * its pace in test_counters_pace.c, the arithmetic of the totals alone
 * in test_ctrmath.c.
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

static void test_descriptor_lookup(void **state)
{
	assert_int_equal(ibw_ctr_lookup("SymbolErrorCounter"),
			 IBW_CTR_SYMBOL_ERRORS);
	assert_int_equal(ibw_ctr_lookup("symbol_errors"),
			 IBW_CTR_SYMBOL_ERRORS);
	assert_int_equal(ibw_ctr_lookup("nonsense"), -1);
	/* infiniband-diags' default thresholds */
	assert_int_equal(ibw_ctr_desc(IBW_CTR_SYMBOL_ERRORS)->threshold, 10);
	assert_int_equal(ibw_ctr_desc(IBW_CTR_XMIT_DISCARDS)->threshold, 100);
	assert_int_equal(ibw_ctr_desc(IBW_CTR_XMIT_DATA)->scale, 4);
}

static void test_sweep_threshold_stale_and_state(void **state)
{
	struct rig r, r2;
	struct fake fk = { .sym = 5,
			   .xmit_data = 1000,
			   .ext_xmit_pkts = 18446744073709551606ull };
	const struct ibw_port_ctrs *p;

	rig_init(&r);
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_non_null(p);
	assert_true(p->have_ext);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 5);
	assert_true(p->v[IBW_CTR_XMIT_PKTS].total == 18446744073709551606ull);
	assert_true(p->v[IBW_CTR_XMIT_DATA].total == 400); /* ext words */
	assert_int_equal(count_events(&r, IBW_EVT_THRESHOLD_CROSSED), 0);

	/* Crossing SymbolErrorCounter's default threshold (10): one event,
	 * and not another while it stays above. */
	fk.sym = 1000;
	sweep(&r, &fk);
	fk.sym = 1003;
	sweep(&r, &fk);
	assert_int_equal(count_events(&r, IBW_EVT_THRESHOLD_CROSSED), 1);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 1003);

	/* Saturated 32-bit PortXmitData is flagged. */
	fk.xmit_data = 0xffffffffu;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_XMIT_DATA].saturated);

	/* No answer: stale, values kept, never zeroed. */
	fk.silent = 1;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->stale);
	assert_int_equal(p->unreachable, 1);
	assert_int_equal(ibw_counters_unreachable(r.c), 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 1003);

	/* The state file carries totals to a new instance. */
	assert_int_equal(ibw_counters_save(r.c, path, NULL), 0);
	rig_init(&r2);
	assert_int_equal(ibw_counters_load(r2.c, path, NULL, NULL), 0);
	p = ibw_counters_find(r2.c, 0x10, 1);
	assert_non_null(p);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 1003);
	assert_true(p->v[IBW_CTR_XMIT_PKTS].total == 18446744073709551606ull);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].over_threshold);
	/* ... and a reset while we were down is seen as one. */
	fk.silent = 0;
	fk.sym = 2;
	sweep(&r2, &fk);
	p = ibw_counters_find(r2.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 1005);
	assert_int_equal(p->v[IBW_CTR_SYMBOL_ERRORS].resets, 1);
	assert_int_equal(count_events(&r2, IBW_EVT_COUNTER_RESET), 1);
	/* back under the threshold: re-armed, no new crossing event */
	assert_int_equal(count_events(&r2, IBW_EVT_THRESHOLD_CROSSED), 0);
	rig_free(&r);
	rig_free(&r2);
}

/* PMA redirection (ClassPortInfo status "redirect required") is followed
 * within the default partition: ClassPortInfo and the counters are read
 * where it points, and the node is reported as redirecting. */
static void test_pma_redirect_followed(void **state)
{
	struct rig r;
	struct ibw_pma_redirect rd;
	const struct ibw_port_ctrs *p;
	unsigned home = 0, away = 0;

	rig_init(&r);
	sweep_redirect(&r, &to9, &home, &away);
	assert_int_equal(home, 1);
	/* ClassPortInfo, PortSamplesControl, PortCounters, ext,
	 * PortVLXmitWaitCounters */
	assert_int_equal(away, 5);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_non_null(p);
	assert_false(p->stale);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 7);
	assert_int_equal(ibw_counters_redirects(r.c, &rd, 1), 1);
	assert_true(rd.guid == 0x10);
	assert_int_equal(rd.lid, 5);
	assert_int_equal(rd.redirect_lid, 9);
	assert_int_equal(rd.redirect_qp, 0x1234);
	assert_int_equal(rd.followed, 1);
	assert_int_equal(rd.refusal, IBW_REDIRECT_OK);
	/* the next sweep goes straight to where it was sent */
	home = away = 0;
	sweep_redirect(&r, &to9, &home, &away);
	assert_int_equal(home, 0);
	assert_int_equal(away, 3); /* PortCounters, ext, VL */
	rig_free(&r);
}

/* Outside the default partition it is reported, not followed, and the
 * port is unreachable rather than read at the wrong place. */
static void test_pma_redirect_other_partition(void **state)
{
	static const struct redir other = { 9, 0x80010000u, 0x8001, NULL };
	struct rig r;
	struct ibw_pma_redirect rd;
	unsigned home = 0, away = 0;

	rig_init(&r);
	sweep_redirect(&r, &other, &home, &away);
	assert_int_equal(home, 1);
	assert_int_equal(away, 0);
	assert_int_equal(ibw_counters_unreachable(r.c), 1);
	assert_int_equal(ibw_counters_redirects(r.c, &rd, 1), 1);
	assert_int_equal(rd.followed, 0);
	assert_int_equal(rd.refusal, IBW_REDIRECT_PARTITION);
	assert_int_equal(rd.redirect_pkey, 0x8001);
	rig_free(&r);
}

/*
 * The kernel sends every umad MAD with QP1's own Q_Key, whatever the
 * sender sets: a redirect to a QP with another Q_Key cannot be reached
 * and is reported so, not "followed" into timeouts. RedirectLID 0 means
 * RedirectGID alone: reported as a GID redirect, not taken for the same
 * LID. A GID beside a LID is reported and the LID followed.
 */
static void test_pma_redirect_qkey_and_gid(void **state)
{
	static const struct redir foreign = { 9, 0x5678, 0xffff, NULL };
	static const struct redir gid_only = { 0, 0x80010000u, 0xffff,
					       "fe80::2:c903:0:99" };
	static const struct redir gid_lid = { 9, 0x80010000u, 0xffff,
					      "fe80::2:c903:0:99" };
	struct ibw_pma_redirect rd;
	unsigned home = 0, away = 0;
	struct rig r;
	uint8_t g[16];

	assert_int_equal(inet_pton(AF_INET6, "fe80::2:c903:0:99", g), 1);
	rig_init(&r);
	sweep_redirect(&r, &foreign, &home, &away);
	assert_int_equal(home, 1);
	assert_int_equal(away, 0);
	assert_int_equal(ibw_counters_unreachable(r.c), 1);
	assert_int_equal(ibw_counters_redirects(r.c, &rd, 1), 1);
	assert_int_equal(rd.followed, 0);
	assert_int_equal(rd.refusal, IBW_REDIRECT_QKEY);
	assert_int_equal(rd.redirect_qkey, 0x5678);
	assert_string_equal(ibw_redirect_refusal_str(rd.refusal), "q_key");
	rig_free(&r);

	home = away = 0;
	rig_init(&r);
	sweep_redirect(&r, &gid_only, &home, &away);
	assert_int_equal(home, 1);
	assert_int_equal(away, 0);
	assert_int_equal(ibw_counters_unreachable(r.c), 1);
	assert_int_equal(ibw_counters_redirects(r.c, &rd, 1), 1);
	assert_int_equal(rd.followed, 0);
	assert_int_equal(rd.refusal, IBW_REDIRECT_GID);
	assert_int_equal(rd.redirect_lid, 0);
	assert_memory_equal(rd.redirect_gid, g, 16);
	assert_string_equal(ibw_redirect_refusal_str(rd.refusal), "gid");
	rig_free(&r);

	home = away = 0;
	rig_init(&r);
	sweep_redirect(&r, &gid_lid, &home, &away);
	assert_int_equal(home, 1);
	assert_int_equal(away, 5);
	assert_int_equal(ibw_counters_unreachable(r.c), 0);
	assert_int_equal(ibw_counters_redirects(r.c, &rd, 1), 1);
	assert_int_equal(rd.followed, 1);
	assert_memory_equal(rd.redirect_gid, g, 16);
	rig_free(&r);
}

/* A counter below its last reading is checked before it counts as a
 * reset: a LID the SM gave to another node (between its move and our
 * next discovery) answers with that node's counters, which must not land
 * in this port's totals. */
static void test_moved_lid_is_not_a_reset(void **state)
{
	struct rig r;
	struct fake fk = { .sym = 8, .xmit_data = 1000, .ext_xmit_pkts = 7 };
	const struct ibw_port_ctrs *p;

	rig_init_in_flux(&r);
	sweep(&r, &fk);
	/* Another node now at LID 5, its counter lower. */
	fk.sym = 3;
	fk.lid_owner = 0x77;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_int_equal(fk.who, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 8);
	assert_int_equal(p->v[IBW_CTR_SYMBOL_ERRORS].resets, 0);
	assert_true(p->stale);
	assert_int_equal(count_events(&r, IBW_EVT_COUNTER_RESET), 0);
	/* Another node at a LID is a sign of LIDs in flux. */
	assert_true(ibw_counters_verify_stats(r.c).lids_in_flux);
	assert_true(ibw_counters_verify_stats(r.c).lid_moved == 1);
	/* Our node again, counting on: no reset, the total goes on; read
	 * in flux, it is checked too. */
	fk.sym = 9;
	fk.lid_owner = 0;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_int_equal(fk.who, 2);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 9);
	assert_false(p->stale);
	/* A discovery finds the LIDs settled; the sweep after it ends the
	 * mode. */
	ibw_counters_lids_settled(r.c, ibw_counters_lid_signs(r.c));
	sweep(&r, &fk);
	assert_int_equal(fk.who, 3);
	assert_false(ibw_counters_verify_stats(r.c).lids_in_flux);
	/* A real reset, confirmed by the node itself, counts. */
	fk.sym = 2;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_int_equal(fk.who, 4);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 11);
	assert_int_equal(p->v[IBW_CTR_SYMBOL_ERRORS].resets, 1);
	assert_int_equal(count_events(&r, IBW_EVT_COUNTER_RESET), 1);
	rig_free(&r);
}

/*
 * LIDs in flux: every reading is checked, so a reading of another node
 * whose counters are higher is dropped too (outside the mode it lands in
 * the port's totals, and the node's own lower reading after it is taken
 * for a reset nobody made). Outside the mode a reading that did not go
 * backwards costs no NodeInfo.
 */
static void test_lids_in_flux_higher_reading(void **state)
{
	struct fake fk = { 0 };
	const struct ibw_port_ctrs *p;
	struct ibw_counters_progress pr;
	uint64_t warm;
	struct rig r;

	(void)state;
	/* Outside the mode: the window this mode closes. */
	fk.sym = 8;
	rig_init_in_flux(&r);
	sweep(&r, &fk);
	sweep(&r, &fk);
	warm = ibw_counters_last_sweep(r.c).mads;
	assert_int_equal(fk.who, 0);
	assert_false(ibw_counters_verify_stats(r.c).lids_in_flux);
	fk.sym = 50;
	fk.lid_owner = 0x77;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 0);
	assert_true(ibw_counters_last_sweep(r.c).mads == warm);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 50);
	rig_free(&r);

	/* In the mode. */
	memset(&fk, 0, sizeof(fk));
	fk.sym = 8;
	rig_init_in_flux(&r);
	sweep(&r, &fk);
	sweep(&r, &fk);
	assert_int_equal(fk.who, 0);
	ibw_counters_lids_moved(r.c, "a test");
	assert_true(ibw_counters_verify_stats(r.c).lids_in_flux);
	fk.sym = 50;
	fk.lid_owner = 0x77;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 1);
	assert_true(ibw_counters_last_sweep(r.c).mads == warm + 1);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 8);
	assert_true(p->stale);
	pr = ibw_counters_progress(r.c);
	assert_int_equal(pr.verified, 1);
	assert_int_equal(pr.lid_moved, 1);
	assert_int_equal(pr.unreachable, 1);
	assert_int_equal(pr.read, 0);
	/* The node itself again, lower than the other's: no reset. */
	fk.sym = 9;
	fk.lid_owner = 0;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 2);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 9);
	assert_int_equal(p->v[IBW_CTR_SYMBOL_ERRORS].resets, 0);
	assert_false(p->stale);
	assert_int_equal(count_events(&r, IBW_EVT_COUNTER_RESET), 0);
	pr = ibw_counters_progress(r.c);
	assert_int_equal(pr.verified, 1);
	assert_int_equal(pr.lid_moved, 0);
	assert_int_equal(pr.read, 1);
	assert_true(ibw_counters_verify_stats(r.c).nodeinfos == 2);
	assert_true(ibw_counters_verify_stats(r.c).verified == 2);
	assert_true(ibw_counters_verify_stats(r.c).lid_moved == 1);
	/* The CA itself, but by another of its ports (they traded LIDs):
	 * that port's counters, dropped too. */
	fk.sym = 70;
	fk.owner_port = 2;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 9);
	assert_true(p->stale);
	assert_true(ibw_counters_verify_stats(r.c).lid_moved == 2);
	rig_free(&r);
}

/* In the mode, one NodeInfo per LID and sweep: a switch's ports share
 * one, sent once all their readings are in. */
static void test_lids_in_flux_one_nodeinfo_per_lid(void **state)
{
	struct fake fk = { 0 };
	const struct ibw_port_ctrs *p;
	struct ibw_counters_progress pr;
	struct rig r;
	unsigned k;

	(void)state;
	rig_init_in_flux(&r);
	ibw_fabric_unref(r.f);
	r.f = switch_and_ca();
	fk.switch_guid = 0x20;
	fk.sym = 4;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 0);
	ibw_counters_lids_moved(r.c, "a test");
	fk.sym = 6;
	sweep(&r, &fk);
	assert_int_equal(fk.who_at[1], 1);
	assert_int_equal(fk.who_at[5], 1);
	assert_int_equal(fk.who, 2);
	pr = ibw_counters_progress(r.c);
	assert_int_equal(pr.verified, 5);
	assert_int_equal(pr.read, 5);
	for (k = 1; k <= 4; k++) {
		p = ibw_counters_find(r.c, 0x20, (uint8_t)k);
		assert_non_null(p);
		assert_false(p->stale);
		assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 6);
	}
	/* Both LIDs another node's now: every reading dropped, still one
	 * question each. */
	fk.lid_owner = 0x77;
	fk.sym = 40;
	sweep(&r, &fk);
	assert_int_equal(fk.who_at[1], 2);
	assert_int_equal(fk.who_at[5], 2);
	pr = ibw_counters_progress(r.c);
	assert_int_equal(pr.verified, 5);
	assert_int_equal(pr.lid_moved, 5);
	assert_int_equal(pr.read, 0);
	for (k = 1; k <= 4; k++) {
		p = ibw_counters_find(r.c, 0x20, (uint8_t)k);
		assert_true(p->stale);
		assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 6);
	}
	rig_free(&r);
}

/*
 * --counter-check always (the default): every reading is checked, one
 * NodeInfo per node and sweep, with no sign of LIDs in flux. A LID that
 * reaches another node before anything told us (the SM moved it, or
 * with an LMC the old LID of a port that moved now reaches the port
 * whose base LID is next to it) gives that node's higher counters: they
 * are dropped, not folded, and the node's own lower reading after them
 * is no reset nobody made.
 */
static void test_always_checked(void **state)
{
	struct fake fk = { .sym = 8 };
	const struct ibw_port_ctrs *p;
	struct ibw_counters_progress pr;
	uint64_t cold, warm;
	struct rig r;
	unsigned k;

	(void)state;
	rig_init(&r);
	sweep(&r, &fk);
	cold = ibw_counters_last_sweep(r.c).mads;
	assert_int_equal(fk.who, 1);
	sweep(&r, &fk);
	warm = ibw_counters_last_sweep(r.c).mads;
	/* PortCounters, ext, VL waits, and the NodeInfo */
	assert_int_equal(warm, 4);
	assert_true(cold > warm);
	assert_int_equal(fk.who, 2);
	assert_false(ibw_counters_verify_stats(r.c).lids_in_flux);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_false(p->stale);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 8);

	/* No sign, and another node at the LID, its counters higher. */
	fk.sym = 50;
	fk.lid_owner = 0x77;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 3);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 8);
	assert_true(p->stale);
	pr = ibw_counters_progress(r.c);
	assert_int_equal(pr.lid_moved, 1);
	assert_int_equal(pr.read, 0);
	/* that is a sign: the mode is on, for the log and the status */
	assert_true(ibw_counters_verify_stats(r.c).lids_in_flux);

	/* The node itself again, lower than the other's: no reset. */
	fk.sym = 9;
	fk.lid_owner = 0;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 9);
	assert_int_equal(p->v[IBW_CTR_SYMBOL_ERRORS].resets, 0);
	assert_false(p->stale);
	assert_int_equal(count_events(&r, IBW_EVT_COUNTER_RESET), 0);

	/* After the LIDs settle the readings are still checked. */
	ibw_counters_lids_settled(r.c, ibw_counters_lid_signs(r.c));
	sweep(&r, &fk);
	sweep(&r, &fk);
	assert_false(ibw_counters_verify_stats(r.c).lids_in_flux);
	assert_int_equal(fk.who, 6);
	rig_free(&r);

	/* A switch's four ports share one question; the CA has its own. */
	memset(&fk, 0, sizeof(fk));
	rig_init(&r);
	ibw_fabric_unref(r.f);
	r.f = switch_and_ca();
	fk.switch_guid = 0x20;
	fk.sym = 4;
	sweep(&r, &fk);
	assert_int_equal(fk.who_at[1], 1);
	assert_int_equal(fk.who_at[5], 1);
	assert_int_equal(fk.who, 2);
	for (k = 1; k <= 4; k++) {
		p = ibw_counters_find(r.c, 0x20, (uint8_t)k);
		assert_non_null(p);
		assert_false(p->stale);
		assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 4);
	}
	rig_free(&r);
}

/*
 * A node that answers none of our SMPs (its SM protects it with an M_Key
 * we do not have) still answers PerfMgt: with always, a NodeInfo could
 * only time out, so a node discovery marked protected is checked as with
 * in-flux and its counters go on; one not marked loses its readings.
 */
static void test_always_protected_node(void **state)
{
	struct fake fk = { .sym = 8, .smi_silent = 1 };
	const struct ibw_port_ctrs *p;
	struct rig r;

	(void)state;
	rig_init(&r);
	ibw_fabric_unref(r.f);
	r.f = one_ca(5, 1);
	sweep(&r, &fk);
	fk.sym = 12;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 0);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_false(p->stale);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 12);
	/* Gone backwards, it is asked, and with no answer not counted. */
	fk.sym = 2;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 1);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->stale);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 12);
	rig_free(&r);

	/* Not marked: each reading waits for a NodeInfo that never comes. */
	memset(&fk, 0, sizeof(fk));
	fk.sym = 8;
	fk.smi_silent = 1;
	rig_init(&r);
	ibw_fabric_unref(r.f);
	r.f = one_ca(5, 0);
	sweep(&r, &fk);
	assert_int_equal(fk.who, 1);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_non_null(p);
	assert_true(p->stale);
	rig_free(&r);
}

/*
 * The mode ends after a discovery that started after the last sign and
 * found no LID changed, once the counter sweep after it has run checked;
 * a discovery that started before a sign, or a sign during that sweep,
 * keeps it on.
 */
static void test_lids_in_flux_turns_off(void **state)
{
	struct fake fk = { 0 };
	uint64_t before;
	struct rig r;

	(void)state;
	fk.sym = 3;
	rig_init_in_flux(&r);
	sweep(&r, &fk);
	before = ibw_counters_lid_signs(r.c);
	ibw_counters_lids_moved(r.c, "a test");
	/* a discovery that started before the sign: not settled */
	ibw_counters_lids_settled(r.c, before);
	sweep(&r, &fk);
	assert_int_equal(fk.who, 1);
	assert_true(ibw_counters_verify_stats(r.c).lids_in_flux);

	/* Settled, but another sign while the next sweep runs. */
	ibw_counters_lids_settled(r.c, ibw_counters_lid_signs(r.c));
	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, r.f, 0, swept, &r), 0);
	ibw_counters_lids_moved(r.c, "another test");
	run_until_done(&r, &fk);
	assert_int_equal(fk.who, 2);
	assert_true(ibw_counters_verify_stats(r.c).lids_in_flux);

	/* A sweep that started before the settled discovery ended does not
	 * end the mode either: it read the old discovery's LIDs. */
	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, r.f, 0, swept, &r), 0);
	ibw_counters_lids_settled(r.c, ibw_counters_lid_signs(r.c));
	run_until_done(&r, &fk);
	assert_int_equal(fk.who, 3);
	assert_true(ibw_counters_verify_stats(r.c).lids_in_flux);

	/* The sweep after it, checked, ends the mode ... */
	sweep(&r, &fk);
	assert_int_equal(fk.who, 4);
	assert_false(ibw_counters_verify_stats(r.c).lids_in_flux);
	/* ... and the next costs no NodeInfo. */
	fk.sym = 5;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 4);
	assert_true(ibw_counters_find(r.c, 0x10, 1)
			    ->v[IBW_CTR_SYMBOL_ERRORS]
			    .total == 5);
	rig_free(&r);
}

/* The device goes away in the middle of a sweep and comes back reset,
 * its port at a new LID: the sweep ends with the port unreachable and
 * its totals kept; after the reopen a sweep of the new discovery reads
 * it at its new LID, and the counter that restarted from zero is a
 * reset, confirmed by the node and counted, not a loss. */
static void test_device_lost_mid_sweep(void **state)
{
	struct fake fk = { .sym = 8, .xmit_data = 1000, .ext_xmit_pkts = 7 };
	const struct ibw_port_ctrs *p;
	uint64_t end;
	struct rig r;

	rig_init(&r);
	ibw_engine_set_reopen(r.e, reopen_mem, on_back, &r, 1000, 4000);
	back_calls = 0;
	sweep(&r, &fk);
	assert_int_equal(served_lid, 5);

	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, r.f, 0, swept, &r), 0);
	ibw_loop_run_once(r.loop, 0);
	assert_true(ibw_mem_sent_count(r.t) > 0);
	ibw_mem_kill(r.t);
	end = ibw_now_us() + 2000000u;
	while (!r.done && ibw_now_us() < end)
		ibw_loop_run_once(r.loop, 5000);
	assert_true(r.done);
	assert_true(ibw_engine_lost(r.e) != 0);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->stale);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 8);

	end = ibw_now_us() + 2000000u;
	while (!back_calls && ibw_now_us() < end)
		ibw_loop_run_once(r.loop, 5000);
	assert_int_equal(back_calls, 1);
	assert_int_equal(ibw_engine_lost(r.e), 0);
	assert_ptr_equal(ibw_engine_transport(r.e), r.t);

	/* The new discovery: the CA at LID 7, its counters from zero. */
	ibw_fabric_unref(r.f);
	r.f = one_ca(7, 0);
	fk.sym = 3;
	fk.who = 0;
	sweep(&r, &fk);
	assert_int_equal(served_lid, 7);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_false(p->stale);
	assert_int_equal(fk.who, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 11);
	assert_int_equal(p->v[IBW_CTR_SYMBOL_ERRORS].resets, 1);
	assert_int_equal(count_events(&r, IBW_EVT_COUNTER_RESET), 1);
	rig_free(&r);
}

/* Off unless asked (ibwatchd asks by default: reset-counters all); with
 * --reset-counters data a 32-bit data counter past
 * three quarters of its range is cleared after it was counted, and the
 * next reading is not taken for someone else's reset. */
static void test_reset_before_saturation(void **state)
{
	struct ibw_counters_opts co;
	struct rig r;
	struct fake fk = { 0 };
	const struct ibw_port_ctrs *p;

	fk.capmask = 0x100; /* no PortCountersExtended */
	fk.xmit_data = 0xf0000000u;
	rig_init(&r);
	sweep(&r, &fk);
	assert_int_equal(fk.sets, 0); /* never unless asked */
	rig_free(&r);

	memset(&co, 0, sizeof(co));
	co.retries = -1;
	co.reset_data = 1;
	rig_init_opts(&r, &co);
	sweep(&r, &fk);
	assert_int_equal(fk.sets, 1);
	assert_int_equal(fk.last_select, 1u << 12); /* PortXmitData only */
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_XMIT_DATA].total == 0xf0000000ull * 4);
	fk.xmit_data = 100; /* counting again from zero */
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_XMIT_DATA].total == (0xf0000000ull + 100) * 4);
	assert_int_equal(p->v[IBW_CTR_XMIT_DATA].resets, 0);
	assert_int_equal(p->resets, 0);
	rig_free(&r);
}

/*
 * A PMA whose CapabilityMask2 says IsAdditionalPortCountersExtended
 * Supported: the error counters come from PortCountersExtended in 64
 * bits, so a SymbolErrorCounter past 16 bits counts on (PortCounters'
 * is stuck at 65535) and nothing is cleared, errors asked or not. Where
 * the bit is not set, those fields are reserved: the narrow counter is
 * read, and cleared at three quarters of its range.
 */
static void test_ext_error_counters(void **state)
{
	struct ibw_counters_opts co;
	struct rig r;
	struct fake fk = { 0 };
	const struct ibw_port_ctrs *p;

	memset(&co, 0, sizeof(co));
	co.retries = -1;
	co.reset_data = co.reset_errors = 1;
	fk.capmask = 0x1200;
	fk.capmask2 = 1u << 1;
	fk.sym = 65535;
	fk.ext_sym = 100000;
	rig_init_opts(&r, &co);
	sweep(&r, &fk);
	fk.ext_sym = 300000;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 300000);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].from_ext);
	assert_false(p->v[IBW_CTR_SYMBOL_ERRORS].saturated);
	assert_int_equal(fk.sets, 0);
	assert_int_equal(p->clears, 0);
	rig_free(&r);

	/* the same answers from a PMA without the bit */
	fk.capmask2 = 0;
	fk.sym = 60000;
	rig_init_opts(&r, &co);
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 60000);
	assert_false(p->v[IBW_CTR_SYMBOL_ERRORS].from_ext);
	assert_int_equal(fk.sets, 1);
	assert_int_equal(fk.last_select, 1u << 0); /* SymbolErrorCounter */
	assert_int_equal(p->clears, 1);
	assert_true(ibw_counters_clears(r.c).port_counters == 1);
	fk.sym = 5; /* cleared, and counting again */
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 60005);
	assert_int_equal(p->resets, 0);
	rig_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_descriptor_lookup),
		cmocka_unit_test_setup_teardown(
			test_sweep_threshold_stale_and_state, setup_path,
			teardown_path),
		cmocka_unit_test(test_reset_before_saturation),
		cmocka_unit_test(test_ext_error_counters),
		cmocka_unit_test(test_moved_lid_is_not_a_reset),
		cmocka_unit_test(test_lids_in_flux_higher_reading),
		cmocka_unit_test(test_lids_in_flux_one_nodeinfo_per_lid),
		cmocka_unit_test(test_lids_in_flux_turns_off),
		cmocka_unit_test(test_always_checked),
		cmocka_unit_test(test_always_protected_node),
		cmocka_unit_test(test_pma_redirect_followed),
		cmocka_unit_test(test_pma_redirect_other_partition),
		cmocka_unit_test(test_pma_redirect_qkey_and_gid),
		cmocka_unit_test_setup_teardown(test_state_file_corruption,
						setup_path, teardown_path),
		cmocka_unit_test_setup_teardown(test_state_file_links,
						setup_path, teardown_path),
		cmocka_unit_test_setup_teardown(test_state_file_from_before,
						setup_path, teardown_path),
		cmocka_unit_test(test_progress_and_order),
		cmocka_unit_test(test_device_lost_mid_sweep),
		cmocka_unit_test(test_vl_xmit_wait),
		cmocka_unit_test(test_samples_control_tick),
		cmocka_unit_test(test_fec_mode_and_pie_timeout),
		cmocka_unit_test(test_shared_table),
		cmocka_unit_test(test_unspread_is_bounded),
		cmocka_unit_test(test_dual_port_ca),
		cmocka_unit_test(test_silent_pma_asked_early),
		cmocka_unit_test(test_samples_control_silent_fabric),
	};

	return cmocka_run_group_tests_name("counters", tests, NULL, NULL);
}
