// SPDX-License-Identifier: BSD-2-Clause
/*
 * Link health from the FEC counters (core/link_fec, through core/links):
 * raw BER from corrected symbols at a set rate, per lane and per link,
 * over the four windows; the raw-BER threshold crossed and not before;
 * the bad lane named; uncorrectable blocks and symbol errors as the
 * effective BER, judged as UFM's PDR plugin counts; thresholds by name.
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "codec.h"
#include "fec.h"
#include "links.h"
#include "linkside.h"

#define SEC 1000000ull
#define T0 (1699999200ull * SEC)
/* 4x EDR: its signalling rate, and that over 10 Gb/s (4x SDR) */
#define SIG 103.125e9
#define K 10.3125

/* An EDR port (FEC is judged only where an extended speed runs). */
static void at_edr(struct side *s)
{
	s->pi.capmask |= IBW_CAP_EXT_SPEEDS;
	s->pi.speed_ext_active = 2;
	s->pi.speed_ext_enabled = 3;
	s->pi.speed_ext_supported = 3;
}

/* FEC counters in @layout, read with FECModeActive RS-FEC (rs) or Fire
 * Code (fc), at EDR. */
static void with_fec(struct side *s, enum ibw_fec_layout layout)
{
	at_edr(s);
	s->fec.mode = layout == IBW_FEC_RS ? 2 : 1;
	s->fec.mode_src = IBW_FEC_MODE_READ;
	s->fec.layout = (uint8_t)layout;
	s->fec.have = ~0ull;
	s->in.fec = &s->fec;
}

static void round_at(struct ibw_links *l, uint64_t t, struct side *a,
		     struct side *b)
{
	ibw_links_begin(l, t);
	a->in.ctr_us = b->in.ctr_us = t;
	assert_int_equal(ibw_links_update(l, &a->in, &b->in), 0);
}

static int has(const struct ibw_link *k, enum ibw_link_reason r)
{
	return (k->reasons & IBW_LR_BIT(r)) != 0;
}

/*
 * Lane 2 of the HCA's receiver corrects @rate x K symbols a second
 * (RS-FEC), read every 10 s for 20 minutes on a 4x EDR link (K x 10 Gb/s
 * signalling): the raw BER is rate / 1e10, lane 2's rate / 2.5e9.
 */
static struct ibw_link_view *steady(struct ibw_links *l, double rate,
				    uint64_t *end_t)
{
	struct side sw, hca;
	uint64_t t = T0;
	int i;

	mk(&sw, 0x20, 3, 1, IBW_WIDTH_4X);
	mk(&hca, 0x10, 1, 0, IBW_WIDTH_4X);
	with_fec(&sw, IBW_FEC_RS);
	with_fec(&hca, IBW_FEC_RS);
	for (i = 0; i <= 120; i++, t += 10 * SEC) {
		uint64_t c = (uint64_t)llround(rate * K * 10 * i);

		hca.fec.total[IBW_FEC_CORR_SYM0 + 2] = c;
		hca.fec.total[IBW_FEC_PORT_CORR_SYM] = c;
		/* a little on the other lanes, far below lane 2 */
		hca.fec.total[IBW_FEC_CORR_SYM0 + 0] = (uint64_t)i;
		hca.fec.total[IBW_FEC_PORT_CORR_SYM] += (uint64_t)i;
		round_at(l, t, &sw, &hca);
	}
	*end_t = t - 10 * SEC;
	return ibw_links_view(l, *end_t);
}

static void test_raw_ber_steady_rate(void **state)
{
	struct ibw_link_thresholds th;
	struct ibw_links *l;
	struct ibw_link_view *v;
	const struct ibw_link_end *h, *s;
	const struct ibw_link_fec_win *w;
	uint64_t t;
	double want;

	(void)state;
	/* 1.1e-6 against the default raw_ber_degraded of 1e-6 */
	ibw_link_thresholds_default(&th);
	assert_true(fabs(th.fec.raw_ber_degraded - 1e-6) < 1e-18);
	l = ibw_links_new(&th);
	v = steady(l, 11000, &t);
	assert_int_equal(v->n, 1);
	h = end_by_guid(&v->links[0], 0x10);
	s = end_by_guid(&v->links[0], 0x20);
	assert_non_null(h->fec);
	assert_non_null(s->fec);
	assert_int_equal(h->fec->layout, IBW_FEC_RS);
	assert_int_equal(h->fec->lanes, 4);
	want = (11000.0 * K + 0.1) / SIG;
	for (int wi = 0; wi < IBW_FWIN_MAX; wi++) {
		w = &h->fec->win[wi];
		assert_true(w->bits > 0);
		assert_true(fabs(w->raw_ber - want) / want < 0.01);
		/* lane 2 alone: 11000 a second over a quarter of the bits */
		assert_true(
			fabs(ibw_link_fec_lane_ber(w, 4, 2) - 11000 / 2.5e9) /
				(11000 / 2.5e9) <
			0.01);
		assert_true(ibw_link_fec_lane_ber(w, 4, 1) == 0);
		assert_int_equal(w->uncorrectable, 0);
		assert_true(w->effective_ber == 0);
	}
	/* the windows' spans: 10 s, 11-12 min, all 20 min, all 20 min */
	assert_true(fabs(h->fec->win[IBW_FWIN_SWEEP].seconds - 10) < 0.01);
	assert_true(h->fec->win[IBW_FWIN_12M].seconds >= 660 &&
		    h->fec->win[IBW_FWIN_12M].seconds <= 720);
	assert_true(fabs(h->fec->win[IBW_FWIN_125M].seconds - 1200) < 0.01);
	assert_true(fabs(h->fec->win[IBW_FWIN_DAY].seconds - 1200) < 0.01);
	assert_true(fabs(h->fec->win[IBW_FWIN_125M].corrected -
			 (11000.0 * K * 1200 + 120)) < 1);
	/* degraded for raw BER at the HCA, the lane named, the switch's
	 * receiver clean */
	assert_int_equal(v->links[0].health, IBW_HEALTH_DEGRADED);
	assert_true(has(&v->links[0], IBW_LR_RAW_BER));
	assert_false(has(&v->links[0], IBW_LR_EFFECTIVE_BER));
	assert_true(h->reasons & IBW_LR_BIT(IBW_LR_RAW_BER));
	assert_int_equal(h->fec->bad_lane, 2);
	assert_int_equal(s->fec->bad_lane, -1);
	assert_int_equal(s->reasons, 0);
	assert_true(fabs(v->links[0].raw_ber - want) / want < 0.01);
	assert_true(v->links[0].effective_ber == 0);
	ibw_link_view_unref(v);
	ibw_links_free(l);

	/* 0.9e-6: not yet */
	l = ibw_links_new(&th);
	v = steady(l, 9000, &t);
	h = end_by_guid(&v->links[0], 0x10);
	assert_int_equal(v->links[0].health, IBW_HEALTH_OK);
	assert_int_equal(v->links[0].reasons, 0);
	assert_int_equal(h->fec->bad_lane, -1);
	want = (9000.0 * K + 0.1) / SIG;
	assert_true(fabs(v->links[0].raw_ber - want) / want < 0.01);
	ibw_link_view_unref(v);
	ibw_links_free(l);

	/* over raw_ber_failing: failing */
	assert_int_equal(
		ibw_link_thresholds_set(&th, "raw_ber_failing", "1e-6"), 0);
	l = ibw_links_new(&th);
	v = steady(l, 11000, &t);
	assert_int_equal(v->links[0].health, IBW_HEALTH_FAILING);
	ibw_link_view_unref(v);
	ibw_links_free(l);
}

/* The raw BER spread over all lanes: no lane is named. */
static void test_no_bad_lane_when_spread(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	const struct ibw_link_end *h;
	struct side sw, hca;
	uint64_t t = T0;
	int i, k;

	(void)state;
	mk(&sw, 0x20, 3, 1, IBW_WIDTH_4X);
	mk(&hca, 0x10, 1, 0, IBW_WIDTH_4X);
	at_edr(&sw);
	with_fec(&hca, IBW_FEC_FC);
	for (i = 0; i <= 30; i++, t += 10 * SEC) {
		for (k = 0; k < 4; k++)
			hca.fec.total[IBW_FEC_CORR_BLK0 + k] =
				(uint64_t)(i * 100000 * K * (k + 1));
		round_at(l, t, &sw, &hca);
	}
	v = ibw_links_view(l, t - 10 * SEC);
	h = end_by_guid(&v->links[0], 0x10);
	assert_non_null(h->fec);
	assert_null(end_by_guid(&v->links[0], 0x20)->fec);
	assert_int_equal(h->fec->layout, IBW_FEC_FC);
	/* FC-FEC: corrected blocks, summed over the lanes: 1e5 a second */
	assert_true(fabs(h->fec->win[IBW_FWIN_12M].raw_ber - 1e-5) < 1e-9);
	assert_int_equal(v->links[0].health, IBW_HEALTH_DEGRADED);
	assert_int_equal(h->fec->bad_lane, -1);
	ibw_link_view_unref(v);
	ibw_links_free(l);
}

/*
 * Uncorrectable blocks and symbol errors are the effective errors: one
 * block makes the link effective-BER degraded (at 4x EDR, 1e-14 over 12
 * minutes allows 0.72); the larger of the two counts a reading.
 */
static void test_effective(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	const struct ibw_link_end *h;
	struct side sw, hca;
	uint64_t t = T0;
	int i;

	(void)state;
	mk(&sw, 0x20, 3, 1, IBW_WIDTH_4X);
	mk(&hca, 0x10, 1, 0, IBW_WIDTH_4X);
	with_fec(&sw, IBW_FEC_FC);
	with_fec(&hca, IBW_FEC_FC);
	for (i = 0; i <= 5; i++, t += 10 * SEC)
		round_at(l, t, &sw, &hca);
	v = ibw_links_view(l, t - 10 * SEC);
	assert_int_equal(v->links[0].health, IBW_HEALTH_OK);
	ibw_link_view_unref(v);

	hca.fec.total[IBW_FEC_UNCORR_BLK0 + 1] = 1;
	round_at(l, t, &sw, &hca);
	v = ibw_links_view(l, t);
	h = end_by_guid(&v->links[0], 0x10);
	assert_int_equal(v->links[0].health, IBW_HEALTH_DEGRADED);
	assert_int_equal(v->links[0].reasons, IBW_LR_BIT(IBW_LR_EFFECTIVE_BER));
	assert_int_equal(h->fec->win[IBW_FWIN_SWEEP].uncorrectable, 1);
	assert_int_equal(h->fec->win[IBW_FWIN_12M].effective, 1);
	assert_true(fabs(h->fec->win[IBW_FWIN_12M].effective_ber * 60 * SIG -
			 1) < 1e-6);
	assert_int_equal(h->fec->bad_lane, -1);
	ibw_link_view_unref(v);

	/* 3 symbol errors with 1 more block: 3 effective errors */
	t += 10 * SEC;
	hca.fec.total[IBW_FEC_UNCORR_BLK0 + 1] = 2;
	hca.in.err[IBW_LERR_SYMBOL] = 3;
	round_at(l, t, &sw, &hca);
	v = ibw_links_view(l, t);
	h = end_by_guid(&v->links[0], 0x10);
	assert_int_equal(h->fec->win[IBW_FWIN_12M].effective, 4);
	assert_int_equal(h->fec->win[IBW_FWIN_12M].uncorrectable, 2);
	/* symbol errors at a FEC port are judged as effective errors, not
	 * by the estimate (reason ber) */
	assert_false(has(&v->links[0], IBW_LR_BER));
	ibw_link_view_unref(v);
	ibw_links_free(l);
}

/* With no FEC counters the estimate from SymbolErrorCounter stays. */
static void test_no_fec_keeps_estimate(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	struct side sw, hca;
	uint64_t t = T0;
	int i;

	(void)state;
	mk(&sw, 0x20, 3, 1, IBW_WIDTH_4X);
	mk(&hca, 0x10, 1, 0, IBW_WIDTH_4X);
	for (i = 0; i <= 30; i++, t += 10 * SEC) {
		hca.in.err[IBW_LERR_SYMBOL] = 1000ull * i;
		round_at(l, t, &sw, &hca);
	}
	v = ibw_links_view(l, t - 10 * SEC);
	assert_null(v->links[0].end[0].fec);
	assert_null(v->links[0].end[1].fec);
	assert_true(has(&v->links[0], IBW_LR_BER));
	assert_true(v->links[0].raw_ber < 0 && v->links[0].effective_ber < 0);
	ibw_link_view_unref(v);
	ibw_links_free(l);
}

/* When FEC runs: never below FDR; FECModeActive where it was read;
 * without it, from HDR on (PAM4 needs RS-FEC), unknown at FDR and EDR. */
static void test_fec_runs_rule(void **state)
{
	enum ibw_link_judge_why why;
	unsigned m;

	(void)state;
	for (m = 0; m < 5; m++) {
		assert_int_equal(ibw_link_fec_runs(IBW_SPEED_SDR, 1, m, &why),
				 0);
		assert_int_equal(why, IBW_LJ_SPEED);
		assert_int_equal(ibw_link_fec_runs(IBW_SPEED_QDR, 1, m, &why),
				 0);
		assert_int_equal(ibw_link_fec_runs(IBW_SPEED_FDR10, 1, m, &why),
				 0);
		assert_int_equal(why, IBW_LJ_SPEED);
	}
	assert_int_equal(ibw_link_fec_runs(IBW_SPEED_QDR, 0, 0, &why), 0);
	assert_int_equal(ibw_link_fec_runs(IBW_SPEED_EDR, 1, 0, &why), 0);
	assert_int_equal(why, IBW_LJ_MODE_OFF);
	assert_int_equal(ibw_link_fec_runs(IBW_SPEED_FDR, 1, 1, &why), 1);
	assert_int_equal(why, IBW_LJ_MODE_ON);
	assert_int_equal(ibw_link_fec_runs(IBW_SPEED_EDR, 1, 2, &why), 1);
	assert_int_equal(ibw_link_fec_runs(IBW_SPEED_FDR, 0, 0, &why), -1);
	assert_int_equal(why, IBW_LJ_SPEED_OPTIONAL);
	assert_int_equal(ibw_link_fec_runs(IBW_SPEED_EDR, 0, 2, &why), -1);
	assert_int_equal(ibw_link_fec_runs(IBW_SPEED_HDR, 0, 0, &why), 1);
	assert_int_equal(why, IBW_LJ_SPEED_IMPLIES);
	assert_int_equal(ibw_link_fec_runs(IBW_SPEED_NDR, 0, 0, NULL), 1);
	assert_int_equal(ibw_link_fec_runs(IBW_SPEED_XDR, 0, 0, NULL), 1);
	/* a mode read wins over the speed */
	assert_int_equal(ibw_link_fec_runs(IBW_SPEED_HDR, 1, 0, &why), 0);
	assert_int_equal(why, IBW_LJ_MODE_OFF);
	assert_string_equal(ibw_link_judge_why_str(IBW_LJ_MODE_OFF),
			    "fec_mode_off");
	assert_string_equal(ibw_link_judge_why_str(IBW_LJ_MAX), "unknown");
}

/*
 * The HCA's receiver counts 1,000 symbol errors every 10 s for 5 minutes
 * (1e-9 and more at the speeds used), its FEC counters read all zero:
 * the view, built as @s's speed and mode say.
 */
static struct ibw_link_view *symbol_errors(struct ibw_links *l, struct side *sw,
					   struct side *hca)
{
	uint64_t t = T0;
	int i;

	for (i = 0; i <= 30; i++, t += 10 * SEC) {
		hca->in.err[IBW_LERR_SYMBOL] = 1000ull * (uint64_t)i;
		round_at(l, t, sw, hca);
	}
	return ibw_links_view(l, t - 10 * SEC);
}

/* Both ends at EDR (ext 2), HDR (4) or QDR with FDR supported (0), FEC
 * counters in @layout with FECModeActive @mode read (@mode -1: unread). */
static void both_at(struct side *sw, struct side *hca, unsigned ext,
		    enum ibw_fec_layout layout, int mode)
{
	struct side *e[2] = { sw, hca };
	int i;

	mk(sw, 0x20, 3, 1, IBW_WIDTH_4X);
	mk(hca, 0x10, 1, 0, IBW_WIDTH_4X);
	for (i = 0; i < 2; i++) {
		with_fec(e[i], layout);
		e[i]->pi.speed_active = 4; /* QDR */
		e[i]->pi.speed_enabled = e[i]->pi.speed_supported = 7;
		e[i]->pi.speed_ext_active = (uint8_t)ext;
		e[i]->pi.speed_ext_enabled = (uint8_t)(ext ? 2 * ext - 1 : 1);
		e[i]->pi.speed_ext_supported = e[i]->pi.speed_ext_enabled;
		e[i]->fec.mode = (uint8_t)(mode < 0 ? 0 : mode);
		e[i]->fec.mode_src = mode < 0 ? IBW_FEC_MODE_UNREAD
					      : IBW_FEC_MODE_READ;
	}
}

/*
 * Where FEC does not run the SymbolErrorCounter estimate judges, up to
 * failing, though the port answers FEC counters (all zero): an EDR link
 * with FECModeActive 0, an FDR-capable one trained at QDR, an EDR one
 * whose mode is unknown (a PortInfoExtended timeout with none known).
 */
static void test_no_fec_running_judged_by_symbols(void **state)
{
	static const struct {
		unsigned ext;
		int mode;
		enum ibw_fec_mode_src src;
		enum ibw_link_judge_why why;
		int8_t active;
	} cases[] = {
		{ 2, 0, IBW_FEC_MODE_READ, IBW_LJ_MODE_OFF, 0 },
		{ 0, 0, IBW_FEC_MODE_READ, IBW_LJ_SPEED, 0 },
		{ 0, -1, IBW_FEC_MODE_UNREAD, IBW_LJ_SPEED, 0 },
		{ 2, -1, IBW_FEC_MODE_UNREAD, IBW_LJ_SPEED_OPTIONAL, -1 },
		{ 2, 2, IBW_FEC_MODE_FALLBACK, IBW_LJ_SPEED_OPTIONAL, -1 },
	};
	unsigned c;

	(void)state;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct ibw_links *l = ibw_links_new(NULL);
		struct ibw_link_view *v;
		const struct ibw_link_end *h;
		struct side sw, hca;

		both_at(&sw, &hca, cases[c].ext, IBW_FEC_FC, cases[c].mode);
		hca.fec.mode_src = sw.fec.mode_src = (uint8_t)cases[c].src;
		v = symbol_errors(l, &sw, &hca);
		h = end_by_guid(&v->links[0], 0x10);
		assert_int_equal(h->sp.speed_active,
				 cases[c].ext ? IBW_SPEED_EDR : IBW_SPEED_QDR);
		/* the FEC counters are read and shown, not judged by */
		assert_non_null(h->fec);
		assert_true(h->fec->win[IBW_FWIN_12M].bits > 0);
		assert_int_equal(h->by_fec, 0);
		assert_int_equal(h->why, cases[c].why);
		assert_int_equal(h->fec_active, cases[c].active);
		assert_int_equal(h->fec_mode_src, cases[c].src);
		assert_int_equal(v->links[0].health, IBW_HEALTH_FAILING);
		assert_int_equal(h->reasons, IBW_LR_BIT(IBW_LR_BER));
		/* a QDR link that both ends could run at FDR is slow too */
		assert_int_equal(
			v->links[0].reasons,
			IBW_LR_BIT(IBW_LR_BER) |
				(cases[c].ext ? 0 : IBW_LR_BIT(IBW_LR_SPEED)));
		assert_true(v->links[0].raw_ber < 0);
		ibw_link_view_unref(v);
		ibw_links_free(l);
	}
}

/* Where FEC runs (HDR, mode read or not; EDR with RS-FEC read) the FEC
 * counters judge: the symbol errors count as effective errors. */
static void test_fec_running_judged_by_fec(void **state)
{
	static const struct {
		unsigned ext;
		int mode;
		enum ibw_link_judge_why why;
	} cases[] = {
		{ 4, -1, IBW_LJ_SPEED_IMPLIES },
		{ 4, 2, IBW_LJ_MODE_ON },
		{ 2, 2, IBW_LJ_MODE_ON },
	};
	unsigned c;

	(void)state;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct ibw_links *l = ibw_links_new(NULL);
		struct ibw_link_view *v;
		const struct ibw_link_end *h;
		struct side sw, hca;

		both_at(&sw, &hca, cases[c].ext, IBW_FEC_RS, cases[c].mode);
		v = symbol_errors(l, &sw, &hca);
		h = end_by_guid(&v->links[0], 0x10);
		assert_int_equal(h->by_fec, 1);
		assert_int_equal(h->fec_active, 1);
		assert_int_equal(h->why, cases[c].why);
		assert_int_equal(v->links[0].health, IBW_HEALTH_DEGRADED);
		assert_int_equal(h->reasons, IBW_LR_BIT(IBW_LR_EFFECTIVE_BER));
		assert_true(v->links[0].effective_ber > 0);
		ibw_link_view_unref(v);
		ibw_links_free(l);
	}
}

/* The mode is kept from the last FEC reading: a sweep whose FEC read
 * failed (no fec given) judges by the mode before. */
static void test_mode_kept(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	const struct ibw_link_end *h;
	struct side sw, hca;
	uint64_t t = T0 + 400 * SEC;

	(void)state;
	both_at(&sw, &hca, 2, IBW_FEC_FC, 0);
	v = symbol_errors(l, &sw, &hca);
	ibw_link_view_unref(v);
	hca.in.fec = NULL;
	hca.in.err[IBW_LERR_SYMBOL] += 1000;
	round_at(l, t, &sw, &hca);
	v = ibw_links_view(l, t);
	h = end_by_guid(&v->links[0], 0x10);
	assert_int_equal(h->fec_mode_src, IBW_FEC_MODE_READ);
	assert_int_equal(h->why, IBW_LJ_MODE_OFF);
	assert_int_equal(v->links[0].health, IBW_HEALTH_FAILING);
	ibw_link_view_unref(v);
	ibw_links_free(l);
}

/* A reset (totals back), another width: a new base, no false sample. */
static void test_rebase(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	const struct ibw_link_end *h;
	struct side sw, hca;
	uint64_t t = T0;

	(void)state;
	mk(&sw, 0x20, 3, 1, IBW_WIDTH_4X);
	mk(&hca, 0x10, 1, 0, IBW_WIDTH_4X);
	with_fec(&hca, IBW_FEC_RS);
	hca.fec.total[IBW_FEC_PORT_CORR_SYM] = 1000;
	round_at(l, t, &sw, &hca);
	t += 10 * SEC;
	hca.fec.total[IBW_FEC_PORT_CORR_SYM] = 10;
	round_at(l, t, &sw, &hca);
	v = ibw_links_view(l, t);
	h = end_by_guid(&v->links[0], 0x10);
	assert_true(h->fec->win[IBW_FWIN_12M].corrected == 0);
	assert_true(h->fec->win[IBW_FWIN_12M].bits == 0);
	ibw_link_view_unref(v);

	t += 10 * SEC;
	hca.fec.total[IBW_FEC_PORT_CORR_SYM] = 20;
	round_at(l, t, &sw, &hca);
	t += 10 * SEC;
	hca.pi.width_active = sw.pi.width_active = IBW_WIDTH_1X;
	hca.fec.total[IBW_FEC_PORT_CORR_SYM] = 30;
	round_at(l, t, &sw, &hca);
	v = ibw_links_view(l, t);
	h = end_by_guid(&v->links[0], 0x10);
	/* 1x now: one lane, the 4x windows gone */
	assert_int_equal(h->fec->lanes, 1);
	assert_true(h->fec->win[IBW_FWIN_12M].corrected == 0);
	ibw_link_view_unref(v);
	ibw_links_free(l);
}

static void test_thresholds_by_name(void **state)
{
	struct ibw_link_thresholds t;

	(void)state;
	ibw_link_thresholds_default(&t);
	assert_true(t.fec.effective_ber_12m == 1e-14);
	assert_true(t.fec.effective_ber_125m == 1e-15);
	assert_true(t.fec.raw_ber_failing == 1e-4);
	assert_true(t.fec.bad_lane_factor == 10);
	assert_int_equal(
		ibw_link_thresholds_set(&t, "raw_ber_degraded", "2e-7"), 0);
	assert_true(t.fec.raw_ber_degraded == 2e-7);
	assert_int_equal(ibw_link_thresholds_set(&t, "effective_ber_12m", "0"),
			 0);
	assert_true(t.fec.effective_ber_12m == 0);
	assert_int_equal(ibw_link_thresholds_set(&t, "effective_ber_125m", "x"),
			 -EINVAL);
	assert_int_equal(ibw_link_thresholds_set(&t, "bad_lane_factor", "-1"),
			 -EINVAL);
	assert_true(t.fec.effective_ber_125m == 1e-15);
	assert_string_equal(ibw_link_reason_str(IBW_LR_RAW_BER), "raw_ber");
	assert_int_equal(ibw_link_reason_lookup("effective_ber"),
			 IBW_LR_EFFECTIVE_BER);
	assert_string_equal(ibw_fwin_name(IBW_FWIN_125M), "125m");
}

static int keep_one(const char *line, void *arg)
{
	char **out = arg;

	if (*out)
		return -ENOSPC;
	*out = strdup(line);
	return *out ? 0 : -ENOMEM;
}

/* The FEC windows and bases survive a restart through the state file's
 * line; broken FEC words restore nothing. */
static void test_save_load(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL), *m;
	struct ibw_link_view *v, *w;
	const struct ibw_link_fec *a, *b;
	struct side sw, hca;
	uint64_t t = T0;
	char *line = NULL, *bad, *fb;
	unsigned end, slot, idx;
	int i, wi, k, n;

	(void)state;
	mk(&sw, 0x20, 3, 1, IBW_WIDTH_4X);
	mk(&hca, 0x10, 1, 0, IBW_WIDTH_4X);
	with_fec(&sw, IBW_FEC_RS);
	with_fec(&hca, IBW_FEC_RS);
	for (i = 0; i <= 120; i++, t += 10 * SEC) {
		hca.fec.total[IBW_FEC_CORR_SYM0 + 2] = 1546875ull * i;
		hca.fec.total[IBW_FEC_PORT_CORR_SYM] = 1546875ull * i;
		hca.fec.total[IBW_FEC_PORT_UNCORR_BLK] = (uint64_t)(i / 60);
		round_at(l, t, &sw, &hca);
	}
	t -= 10 * SEC;
	assert_int_equal(ibw_links_save(l, keep_one, &line), 0);
	assert_non_null(line);
	assert_non_null(strstr(line, " f 0 2 4 "));
	assert_non_null(strstr(line, " fb 0 "));

	m = ibw_links_new(NULL);
	assert_int_equal(ibw_links_load_line(m, line), 0);
	/* the restarted agent's first round reads the same totals */
	round_at(m, t, &sw, &hca);
	v = ibw_links_view(l, t);
	w = ibw_links_view(m, t);
	assert_int_equal(w->n, 1);
	for (k = 0; k < 2; k++) {
		a = v->links[0].end[k].fec;
		b = w->links[0].end[k].fec;
		assert_non_null(a);
		assert_non_null(b);
		assert_int_equal(a->layout, b->layout);
		assert_int_equal(a->lanes, b->lanes);
		assert_int_equal(a->bad_lane, b->bad_lane);
		assert_int_equal(a->raw_state, b->raw_state);
		assert_int_equal(a->effective_state, b->effective_state);
		for (wi = IBW_FWIN_12M; wi < IBW_FWIN_MAX; wi++) {
			assert_true(a->win[wi].seconds == b->win[wi].seconds);
			assert_true(a->win[wi].bits == b->win[wi].bits);
			assert_true(a->win[wi].corrected ==
				    b->win[wi].corrected);
			assert_true(a->win[wi].raw_ber == b->win[wi].raw_ber);
			assert_int_equal(a->win[wi].uncorrectable,
					 b->win[wi].uncorrectable);
			assert_int_equal(a->win[wi].effective,
					 b->win[wi].effective);
			for (n = 0; n < IBW_FEC_LANES; n++)
				assert_true(a->win[wi].lane[n] ==
					    b->win[wi].lane[n]);
		}
	}
	/* degraded for raw BER (1.5e-6) with lane 2 named, as before */
	assert_int_equal(w->links[0].health, IBW_HEALTH_DEGRADED);
	assert_true(has(&w->links[0], IBW_LR_RAW_BER));
	assert_int_equal(w->links[0].end[0].fec->bad_lane, 2);
	assert_true(w->links[0].end[0].fec->win[IBW_FWIN_DAY].uncorrectable ==
		    2);
	/* no new reading since the restart: the sweep window is empty */
	assert_true(w->links[0].end[0].fec->win[IBW_FWIN_SWEEP].bits == 0);
	ibw_link_view_unref(w);

	/* The base carries over: what was corrected while the agent was
	 * away counts at its first reading. */
	t += 10 * SEC;
	hca.fec.total[IBW_FEC_CORR_SYM0 + 2] += 1546875;
	hca.fec.total[IBW_FEC_PORT_CORR_SYM] += 1546875;
	round_at(m, t, &sw, &hca);
	w = ibw_links_view(m, t);
	assert_true(w->links[0].end[0].fec->win[IBW_FWIN_SWEEP].corrected ==
		    1546875);
	/* 10 s at 4x EDR, in a float */
	assert_true(fabs(w->links[0].end[0].fec->win[IBW_FWIN_SWEEP].bits -
			 10 * SIG) < 10 * SIG * 1e-6);
	ibw_link_view_unref(w);
	ibw_link_view_unref(v);
	ibw_links_free(m);

	/* A bucket before its base; an index that is not its slot's; a
	 * lane count out of range; a cut line. */
	m = ibw_links_new(NULL);
	n = (int)(strstr(line, " f 0 ") - line);
	assert_true(asprintf(&bad, "%.*s fb 0 0 12 1000 1 0 0 0 1 1 1 1", n,
			     line) > 0);
	assert_int_equal(ibw_links_load_line(m, bad), -EINVAL);
	free(bad);
	fb = strstr(line, " fb ");
	assert_int_equal(sscanf(fb, " fb %u %u %u", &end, &slot, &idx), 3);
	n = (int)(fb - line);
	assert_true(asprintf(&bad, "%.*s fb %u %u %u%s", n, line, end, slot,
			     idx + 1,
			     strchr(strchr(strchr(fb + 4, ' ') + 1, ' ') + 1,
				    ' ')) > 0);
	assert_int_equal(ibw_links_load_line(m, bad), -EINVAL);
	free(bad);
	bad = strdup(line);
	memcpy(strstr(bad, " f 0 2 4 "), " f 0 2 0 ", 9);
	assert_int_equal(ibw_links_load_line(m, bad), -EINVAL);
	bad[strlen(bad) - 3] = '\0';
	assert_int_equal(ibw_links_load_line(m, bad), -EINVAL);
	free(bad);
	assert_int_equal(ibw_links_count(m), 0);
	ibw_links_free(m);
	free(line);
	ibw_links_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw_ber_steady_rate),
		cmocka_unit_test(test_no_bad_lane_when_spread),
		cmocka_unit_test(test_effective),
		cmocka_unit_test(test_no_fec_keeps_estimate),
		cmocka_unit_test(test_fec_runs_rule),
		cmocka_unit_test(test_no_fec_running_judged_by_symbols),
		cmocka_unit_test(test_fec_running_judged_by_fec),
		cmocka_unit_test(test_mode_kept),
		cmocka_unit_test(test_rebase),
		cmocka_unit_test(test_thresholds_by_name),
		cmocka_unit_test(test_save_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
