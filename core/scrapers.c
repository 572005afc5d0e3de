// SPDX-License-Identifier: BSD-2-Clause
#include <stdlib.h>
#include <string.h>

#include "scrapers.h"

struct track {
	uint64_t key;
	uint64_t last_us; /* its last scrape, as it came */
	uint64_t anchor_us; /* a scrape moment, smoothed */
	uint64_t gap_us; /* the last gap, while not steady */
	uint64_t period_us; /* 0: not steady */
	unsigned scrapes;
	int used, aligned;
};

struct ibw_scrapers {
	struct track t[IBW_SCRAPERS_MAX];
	/* The last plan's: where in its interval its sweeps started. */
	uint64_t plan_iv, plan_phase;
};

struct ibw_scrapers *ibw_scrapers_new(void)
{
	return calloc(1, sizeof(struct ibw_scrapers));
}

void ibw_scrapers_free(struct ibw_scrapers *s)
{
	free(s);
}

/* How far a scrape may come from its moment and still be on it: the
 * scraper's own jitter, and ours in taking the time, under load. */
static uint64_t tolerance(uint64_t period_us)
{
	return period_us / 50 + 20000;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* Periods are set in whole tenths of a second, or at least in
 * milliseconds: a gap measured a few milliseconds off one is that one,
 * so that the periods of several scrapers have a common divisor. */
static uint64_t snap(uint64_t us)
{
	uint64_t tenth = (us + 50000) / 100000 * 100000;

	if (tenth && absdiff(us, tenth) <= 20000)
		return tenth;
	return (us + 500) / 1000 * 1000;
}

static void restart(struct track *t, uint64_t t_us, uint64_t gap_us)
{
	t->last_us = t->anchor_us = t_us;
	t->gap_us = gap_us;
	t->period_us = 0;
	t->scrapes = 1;
}

/* @key's track; else a free one, or the one that scraped longest ago,
 * emptied. */
static struct track *slot_for(struct ibw_scrapers *s, uint64_t key)
{
	struct track *pick = NULL;
	unsigned i;

	for (i = 0; i < IBW_SCRAPERS_MAX; i++)
		if (s->t[i].used && s->t[i].key == key)
			return &s->t[i];
	for (i = 0; i < IBW_SCRAPERS_MAX; i++) {
		struct track *t = &s->t[i];

		if (!t->used) {
			pick = t;
			break;
		}
		if (!pick || t->last_us < pick->last_us)
			pick = t;
	}
	memset(pick, 0, sizeof(*pick));
	pick->key = key;
	return pick;
}

void ibw_scrapers_seen(struct ibw_scrapers *s, uint64_t key, uint64_t t_us)
{
	struct track *t = slot_for(s, key);
	uint64_t g, n, due;

	if (!t->used) {
		t->used = 1;
		restart(t, t_us, 0);
		return;
	}
	if (t_us <= t->last_us)
		return;
	g = t_us - t->last_us;
	if (t->period_us) {
		/* On its schedule, perhaps a scrape or three missed (one
		 * that failed, or timed out before it reached us). */
		n = (g + t->period_us / 2) / t->period_us;
		if (n >= 1 && n <= 4 &&
		    absdiff(g, n * t->period_us) <= tolerance(t->period_us)) {
			/* Follow a phase that moves (another clock's rate)
			 * without jumping at one late scrape. */
			due = t->anchor_us + n * t->period_us;
			if (t_us >= due)
				t->anchor_us = due + (t_us - due) / 4;
			else
				t->anchor_us = due - (due - t_us) / 4;
			t->last_us = t_us;
			t->scrapes++;
			return;
		}
		restart(t, t_us, g);
		return;
	}
	/* Steady after two gaps alike. */
	if (t->gap_us && absdiff(g, t->gap_us) <= tolerance(g)) {
		t->period_us = snap((g + t->gap_us) / 2);
		t->anchor_us = t->last_us = t_us;
		t->scrapes++;
		return;
	}
	t->gap_us = g;
	t->last_us = t->anchor_us = t_us;
	t->scrapes++;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t r = a % b;

		a = b;
		b = r;
	}
	return a;
}

/* Keep this far from a scrape moment: its jitter, ours, and the tail
 * of a sweep (its last answers, a publish), on a loaded machine too. */
static uint64_t margin(uint64_t interval_us)
{
	return interval_us / 20 > 250000 ? interval_us / 20 : 250000;
}

static int by_period(const void *a, const void *b)
{
	const struct track *x = *(const struct track *const *)a;
	const struct track *y = *(const struct track *const *)b;

	if (x->period_us != y->period_us)
		return x->period_us < y->period_us ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The stretch of the circle [0, @iv) free of the scrape moments of
 * @set that holds @at, or the longest with @at >= @iv: where it starts
 * (@from) and how long it is. */
static uint64_t free_gap(struct track *const *set, unsigned n, uint64_t iv,
			 uint64_t at, uint64_t *from)
{
	uint64_t pt[IBW_SCRAPERS_MAX], best, g;
	unsigned i;

	for (i = 0; i < n; i++)
		pt[i] = set[i]->anchor_us % iv;
	qsort(pt, n, sizeof(pt[0]), by_value);
	best = pt[0] + iv - pt[n - 1];
	*from = pt[n - 1];
	for (i = 1; i < n; i++) {
		g = pt[i] - pt[i - 1];
		if (at < iv && at >= pt[i - 1] && at < pt[i]) {
			*from = pt[i - 1];
			return g;
		}
		if (at >= iv && g > best) {
			best = g;
			*from = pt[i - 1];
		}
	}
	return best; /* the wrap-around one holds @at, or is the longest */
}

static uint64_t longest_gap(struct track *const *set, unsigned n, uint64_t iv,
			    uint64_t *from)
{
	return free_gap(set, n, iv, UINT64_MAX, from);
}

/* The interval for scrapers whose periods have @g as their greatest
 * common divisor: @g split in as few parts as keep one no longer than
 * @c; 0 when that would be under half @c. */
static uint64_t interval_for(uint64_t g, uint64_t c)
{
	uint64_t k = (g + c - 1) / c;

	if (g < c / 2)
		return 0;
	return g / k;
}

/* Is a stretch of @gap long enough for a sweep at interval @iv? */
static int fits_in(uint64_t gap, uint64_t iv)
{
	return gap >= 2 * margin(iv) + iv / 10;
}

/* Does a sweep fit between the scrapes of @set at interval @iv? */
static int fits(struct track *const *set, unsigned n, uint64_t iv)
{
	uint64_t from;

	return fits_in(longest_gap(set, n, iv, &from), iv);
}

int ibw_scrapers_plan(struct ibw_scrapers *s, uint64_t now_us,
		      uint64_t interval_us, unsigned spread_percent,
		      struct ibw_sweep_plan *p)
{
	struct track *cand[IBW_SCRAPERS_MAX], *set[IBW_SCRAPERS_MAX];
	uint64_t g = 0, iv = 0, ng, niv, from, gap, m, spread, start, after;
	unsigned nc = 0, n = 0, i;

	for (i = 0; i < IBW_SCRAPERS_MAX; i++) {
		struct track *t = &s->t[i];

		t->aligned = 0;
		/* Steady, and not gone: one scrape may be missing. */
		if (!t->used || !t->period_us || t->period_us < 1000 ||
		    t->period_us < interval_us / 2 ||
		    now_us > t->last_us + 2 * t->period_us +
				     tolerance(t->period_us))
			continue;
		cand[nc++] = t;
	}
	if (!nc)
		return 0;
	qsort(cand, nc, sizeof(cand[0]), by_period);
	for (i = 0; i < nc; i++) {
		ng = gcd(g, cand[i]->period_us);
		niv = interval_for(ng, interval_us);
		if (!niv)
			continue;
		set[n] = cand[i];
		if (!fits(set, n + 1, niv))
			continue;
		n++;
		g = ng;
		iv = niv;
	}
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		set[i]->aligned = 1;
	/* The stretch the sweeps run in already while a sweep fits there:
	 * two about as long would swap at each scrape's jitter, and each
	 * move costs a scrape a reading early or late. */
	gap = 0;
	if (s->plan_iv == iv)
		gap = free_gap(set, n, iv, s->plan_phase, &from);
	if (!fits_in(gap, iv))
		gap = longest_gap(set, n, iv, &from);
	m = margin(iv);
	spread = iv * spread_percent / 100;
	if (spread > gap - 2 * m)
		spread = gap - 2 * m;
	/* In the middle of the stretch: as far from both ends as can be. */
	start = from + m + (gap - 2 * m - spread) / 2;
	/* The first such moment more than half an interval from now. */
	after = now_us + iv / 2;
	start %= iv;
	s->plan_iv = iv;
	s->plan_phase = start;
	start = after - after % iv + start;
	if (start <= after)
		start += iv;
	p->interval_us = iv;
	p->start_us = start;
	p->spread_us = spread;
	p->nscrapers = n;
	return 1;
}

static int by_recent(const void *a, const void *b)
{
	const struct ibw_scraper_info *x = a, *y = b;

	return x->last_us > y->last_us ? -1 : x->last_us < y->last_us;
}

unsigned ibw_scrapers_list(const struct ibw_scrapers *s,
			   struct ibw_scraper_info *out, unsigned max)
{
	struct ibw_scraper_info all[IBW_SCRAPERS_MAX];
	unsigned n = 0, i;

	for (i = 0; i < IBW_SCRAPERS_MAX; i++) {
		const struct track *t = &s->t[i];

		if (!t->used)
			continue;
		all[n].key = t->key;
		all[n].period_us = t->period_us;
		all[n].last_us = t->last_us;
		all[n].scrapes = t->scrapes;
		all[n].aligned = t->aligned;
		n++;
	}
	qsort(all, n, sizeof(all[0]), by_recent);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof(all[0]));
	return n;
}
