// SPDX-License-Identifier: BSD-2-Clause
/* Scrapers learned from their scrapes, and the counter sweep schedule
 * aligned with them. Times are made up: the module reads no clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "scrapers.h"

#define S 1000000ull /* a second, in microseconds */
#define T0 (1000 * S + 123457) /* an arbitrary start */

struct scraper {
	uint64_t key, period, phase; /* scrapes at T0 + phase + k period */
};

/* Scrapes of @sc (@n of them) from T0 to @until, in time order; a
 * scrape @jitter_us late every other time. */
static void feed(struct ibw_scrapers *s, const struct scraper *sc, unsigned n,
		 uint64_t until, uint64_t jitter_us)
{
	uint64_t next[8];
	unsigned i, k = 0, best;

	for (i = 0; i < n; i++)
		next[i] = T0 + sc[i].phase;
	for (;;) {
		best = 0;
		for (i = 1; i < n; i++)
			if (next[i] < next[best])
				best = i;
		if (next[best] > until)
			return;
		ibw_scrapers_seen(s, sc[best].key,
				  next[best] + (k++ % 2 ? jitter_us : 0));
		next[best] += sc[best].period;
	}
}

/* Every sweep of @p for the next minute runs clear of every scrape of
 * @sc by 100 ms at least, and the plan's interval divides each period. */
static void assert_clear(const struct ibw_sweep_plan *p,
			 const struct scraper *sc, unsigned n)
{
	uint64_t a, b, t;
	unsigned i, j;

	for (i = 0; i < n; i++)
		assert_int_equal(sc[i].period % p->interval_us, 0);
	for (j = 0; j < 60 * S / p->interval_us; j++) {
		a = p->start_us + j * p->interval_us;
		b = a + p->spread_us;
		for (i = 0; i < n; i++) {
			t = T0 + sc[i].phase;
			t += (a > t ? (a - t) / sc[i].period : 0) *
			     sc[i].period;
			/* t: the last scrape at or before a, or the first */
			if (t > a) {
				assert_true(t >= b + 100000);
				continue;
			}
			assert_true(a >= t + 100000);
			assert_true(t + sc[i].period >= b + 100000);
		}
	}
}

static void test_learns_one(void **state)
{
	struct ibw_scrapers *s = ibw_scrapers_new();
	struct scraper sc = { 7, 15 * S, 3 * S };
	struct ibw_sweep_plan p;
	uint64_t now;

	/* Two scrapes are one gap: not yet a period. */
	feed(s, &sc, 1, T0 + 3 * S + 15 * S, 0);
	assert_int_equal(ibw_scrapers_plan(s, T0 + 19 * S, 10 * S, 80, &p), 0);
	/* Three are. 15 s in two 7.5 s intervals, no longer than 10 s;
	 * the sweep (80%: 6 s) in the middle of the stretch between two
	 * scrapes. */
	feed(s, &sc, 1, T0 + 3 * S + 30 * S, 0);
	now = T0 + 34 * S;
	assert_int_equal(ibw_scrapers_plan(s, now, 10 * S, 80, &p), 1);
	assert_int_equal(p.interval_us, 7500000);
	assert_int_equal(p.spread_us, 6 * S);
	assert_int_equal(p.nscrapers, 1);
	assert_true(p.start_us > now + p.interval_us / 2);
	assert_true(p.start_us <= now + p.interval_us * 3 / 2);
	assert_int_equal((p.start_us - (T0 + 3 * S)) % p.interval_us, 750000);
	assert_clear(&p, &sc, 1);
	ibw_scrapers_free(s);
}

/* At the common intervals, with the default 10 s sweeps. */
static void test_common_intervals(void **state)
{
	static const struct {
		uint64_t period, interval, spread;
	} c[] = {
		{ 10 * S, 10 * S, 8 * S },  { 15 * S, 7500000, 6 * S },
		{ 30 * S, 10 * S, 8 * S },  { 60 * S, 10 * S, 8 * S },
		{ 20 * S, 10 * S, 8 * S },  { 5 * S, 5 * S, 4 * S },
		{ 45 * S, 9 * S, 7200000 }, { 120 * S, 10 * S, 8 * S },
	};
	struct ibw_sweep_plan p;
	unsigned i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct ibw_scrapers *s = ibw_scrapers_new();
		struct scraper sc = { 1, c[i].period, 1234567 };

		feed(s, &sc, 1, T0 + 4 * c[i].period, 3000);
		assert_int_equal(ibw_scrapers_plan(s, T0 + 4 * c[i].period,
						   10 * S, 80, &p),
				 1);
		assert_int_equal(p.interval_us, c[i].interval);
		assert_int_equal(p.spread_us, c[i].spread);
		assert_clear(&p, &sc, 1);
		ibw_scrapers_free(s);
	}
}

/* Four scrapers at once, at 10, 15, 30 and 60 s, phases apart: 5 s
 * sweeps, in the longest stretch clear of all. */
static void test_several(void **state)
{
	struct ibw_scrapers *s = ibw_scrapers_new();
	struct scraper sc[] = { { 1, 10 * S, 1100000 },
				{ 2, 15 * S, 2700000 },
				{ 3, 30 * S, 9200000 },
				{ 4, 60 * S, 31 * S + 400000 } };
	struct ibw_sweep_plan p;
	uint64_t now = T0 + 200 * S;

	feed(s, sc, 4, now, 5000);
	assert_int_equal(ibw_scrapers_plan(s, now, 10 * S, 80, &p), 1);
	assert_int_equal(p.interval_us, 5 * S);
	assert_int_equal(p.nscrapers, 4);
	assert_clear(&p, sc, 4);
	ibw_scrapers_free(s);
}

/* One whose period shares too little with the others' (7 s and 10 s:
 * a 1 s interval) is left out; the shortest period comes first. */
static void test_left_out(void **state)
{
	struct ibw_scrapers *s = ibw_scrapers_new();
	struct scraper sc[] = { { 1, 10 * S, 0 }, { 2, 7 * S, 500000 } };
	struct ibw_scraper_info info[4];
	struct ibw_sweep_plan p;
	uint64_t now = T0 + 100 * S;
	unsigned n, i;

	feed(s, sc, 2, now, 0);
	assert_int_equal(ibw_scrapers_plan(s, now, 10 * S, 80, &p), 1);
	assert_int_equal(p.interval_us, 7 * S);
	assert_int_equal(p.nscrapers, 1);
	assert_clear(&p, &sc[1], 1);
	n = ibw_scrapers_list(s, info, 4);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++)
		assert_int_equal(info[i].aligned, info[i].key == 2);
	ibw_scrapers_free(s);
}

/* Too fast for the interval (3 s at 10 s: sweeps every 3 s would be
 * more than twice as many reads), or scrapes at no steady period, or a
 * scraper gone: the plain schedule. */
static void test_no_plan(void **state)
{
	struct ibw_scrapers *s = ibw_scrapers_new();
	struct scraper fast = { 1, 3 * S, 0 };
	struct scraper slow = { 2, 10 * S, 0 };
	struct ibw_sweep_plan p;
	uint64_t t;
	unsigned i;

	feed(s, &fast, 1, T0 + 60 * S, 0);
	assert_int_equal(ibw_scrapers_plan(s, T0 + 60 * S, 10 * S, 80, &p), 0);
	/* by hand, now and then */
	for (i = 0, t = T0 + 61 * S; i < 20; i++, t += (i * 7919 % 13) * S)
		ibw_scrapers_seen(s, 9, t);
	assert_int_equal(ibw_scrapers_plan(s, t, 10 * S, 80, &p), 0);
	feed(s, &slow, 1, T0 + 40 * S, 0);
	assert_int_equal(ibw_scrapers_plan(s, T0 + 41 * S, 10 * S, 80, &p), 1);
	/* one scrape missed: still there */
	assert_int_equal(ibw_scrapers_plan(s, T0 + 59 * S, 10 * S, 80, &p), 1);
	/* two: gone */
	assert_int_equal(ibw_scrapers_plan(s, T0 + 61 * S, 10 * S, 80, &p), 0);
	ibw_scrapers_free(s);
}

/* A missed scrape keeps the period; a scraper that starts again at
 * another phase is learned again, at its new phase. */
static void test_missed_and_moved(void **state)
{
	struct ibw_scrapers *s = ibw_scrapers_new();
	struct scraper sc = { 5, 10 * S, 0 };
	struct ibw_sweep_plan p;
	uint64_t t;

	for (t = T0; t <= T0 + 30 * S; t += 10 * S)
		ibw_scrapers_seen(s, 5, t);
	ibw_scrapers_seen(s, 5, T0 + 50 * S + 10000);
	assert_int_equal(ibw_scrapers_plan(s, T0 + 51 * S, 10 * S, 80, &p), 1);
	assert_clear(&p, &sc, 1);
	/* restarted 4.4 s later in its period */
	for (t = T0 + 54 * S + 400000; t <= T0 + 74 * S + 400000; t += 10 * S)
		ibw_scrapers_seen(s, 5, t);
	assert_int_equal(ibw_scrapers_plan(s, T0 + 75 * S, 10 * S, 80, &p), 1);
	sc.phase = 4400000;
	assert_clear(&p, &sc, 1);
	ibw_scrapers_free(s);
}

/* Two stretches between scrapes about as long (3 s and 6 s scrapers
 * 0.75 s apart, 2 s at most between sweeps: 1.5 s): the sweeps stay in the one they are in,
 * however the scrapes' jitter makes one or the other the longer. */
static void test_stays_put(void **state)
{
	struct ibw_scrapers *s = ibw_scrapers_new();
	struct scraper sc[] = { { 1, 3 * S, 0 }, { 2, 6 * S, 750000 } };
	struct ibw_sweep_plan p;
	uint64_t t, phase = UINT64_MAX;
	unsigned k;

	for (k = 0; k < 400; k++) {
		/* every 0.75 s: a scrape of the 3 s scraper (k even, 4 of
		 * 8), of the 6 s one (k = 1 of 8), or none */
		t = T0 + k * 750000ull;
		if (k % 4 == 0)
			ibw_scrapers_seen(s, 1, t + (k % 8 ? 8000 : 0));
		else if (k % 8 == 1)
			ibw_scrapers_seen(s, 2, t + (k % 16 == 1 ? 8000 : 0));
		else
			continue;
		if (!ibw_scrapers_plan(s, t + 1000, 2 * S, 80, &p))
			continue;
		assert_int_equal(p.interval_us, 1500000);
		if (p.nscrapers < 2)
			continue;
		if (phase == UINT64_MAX)
			phase = p.start_us % p.interval_us;
		assert_true(p.start_us % p.interval_us + 20000 >= phase &&
			    p.start_us % p.interval_us <= phase + 20000);
	}
	assert_true(phase != UINT64_MAX);
	assert_clear(&p, sc, 2);
	ibw_scrapers_free(s);
}

/* More keys than slots: the ones that scraped longest ago make room. */
static void test_many_keys(void **state)
{
	struct ibw_scrapers *s = ibw_scrapers_new();
	struct ibw_scraper_info info[IBW_SCRAPERS_MAX + 4];
	unsigned i, n;

	for (i = 0; i < IBW_SCRAPERS_MAX + 4; i++)
		ibw_scrapers_seen(s, 100 + i, T0 + i * S);
	n = ibw_scrapers_list(s, info, IBW_SCRAPERS_MAX + 4);
	assert_int_equal(n, IBW_SCRAPERS_MAX);
	assert_int_equal(info[0].key, 100 + IBW_SCRAPERS_MAX + 3);
	assert_int_equal(info[n - 1].key, 104);
	ibw_scrapers_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_learns_one),
		cmocka_unit_test(test_common_intervals),
		cmocka_unit_test(test_several),
		cmocka_unit_test(test_left_out),
		cmocka_unit_test(test_no_plan),
		cmocka_unit_test(test_missed_and_moved),
		cmocka_unit_test(test_stays_put),
		cmocka_unit_test(test_many_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
