/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The scrapers of /metrics, as the agent sees them come, and a counter
 * sweep schedule aligned with them (docs/api.md, "Over time").
 *
 * Prometheus scrapes a target on a fixed period at a fixed phase. A
 * sweep schedule whose interval divides every scraper's period, and
 * whose sweeps run (and publish) well between two scrape moments, gives
 * each scrape the readings of the sweep before it: every port's reading
 * is then one scrape period newer than at the scrape before, and
 * irate() and rate() are exact at any scrape interval.
 *
 * Pure: the caller passes the times (ibw_now_us() in the agent) and a
 * key per scraper (a hash of what tells one from another), so it reads
 * no clock and is tested without one. The loop's.
 */
#ifndef IBW_SCRAPERS_H
#define IBW_SCRAPERS_H

#include <stdint.h>

/* Scrapers followed at once; a new one takes the stalest slot. */
#define IBW_SCRAPERS_MAX 16

struct ibw_scrapers;

struct ibw_scraper_info {
	uint64_t key;
	uint64_t period_us; /* learned period, 0: not (yet) steady */
	uint64_t last_us; /* its last scrape */
	unsigned scrapes; /* seen since it was last steady or new */
	int aligned; /* the last plan was aligned with it */
};

/* A counter sweep schedule. */
struct ibw_sweep_plan {
	uint64_t interval_us; /* sweeps start this far apart */
	uint64_t start_us; /* the next start */
	uint64_t spread_us; /* each sweep's reads over this */
	unsigned nscrapers; /* scrapers it is aligned with */
};

struct ibw_scrapers *ibw_scrapers_new(void);
void ibw_scrapers_free(struct ibw_scrapers *s);

/* A scrape by @key at @t_us. Times of one key that go back are
 * ignored. */
void ibw_scrapers_seen(struct ibw_scrapers *s, uint64_t key, uint64_t t_us);

/*
 * The schedule for sweeps every @interval_us at most, each spread over
 * @spread_percent of its interval, aligned with the steady scrapers
 * seen lately whose period is at least half @interval_us: the sweeps'
 * interval divides all their periods, and each sweep runs within the
 * longest stretch free of their scrape moments, a margin from either
 * end. A scraper that cannot share such a schedule with those before
 * it (by period, shortest first) is left out. @p->start_us is the
 * first start more than half an interval after @now_us. 1 and @p set;
 * 0 when no scraper fits (@p untouched: keep the plain schedule).
 */
int ibw_scrapers_plan(struct ibw_scrapers *s, uint64_t now_us,
		      uint64_t interval_us, unsigned spread_percent,
		      struct ibw_sweep_plan *p);

/* Up to @max scrapers seen, the most recent first; how many. */
unsigned ibw_scrapers_list(const struct ibw_scrapers *s,
			   struct ibw_scraper_info *out, unsigned max);

#endif
