/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What core/monitor.c, core/monitor_links.c (the link view's rounds
 * and their events) and core/monitor_traces.c (the watched traces)
 * share: the monitor's state.
 */
#ifndef IBW_MONITOR_INT_H
#define IBW_MONITOR_INT_H

#include "localport.h"
#include "monitor.h"
#include "namemap.h"

struct ibw_monitor {
	struct ibw_engine *e;
	struct ibw_jobsrc *jobsrc; /* NULL: no job view */
	/* the job views (with their census walks), made on first use by
	 * the readers of the snapshots; NULL without a job source */
	struct ibw_jobcache *jobcache;
	struct ibw_loop *loop;
	struct ibw_monitor_opts o;
	char *state_file;
	char *map_path;
	struct ibw_namemap *names;
	struct ibw_events *ev;
	struct ibw_discover *disc;
	struct ibw_counters *ctrs;
	struct ibw_pinger *pinger;
	struct ibw_timer *pub_timer;
	struct ibw_tracer *tracer;
	struct ibw_watched *watched;
	struct ibw_timer *trace_timer;
	unsigned trace_pending;
	void (*trace_done)(struct ibw_monitor *m); /* the round's caller's */
	struct ibw_fabric *fabric; /* last discovery */
	/* a discovery being diffed against it (events name from it) */
	const struct ibw_fabric *diffing;
	/* The published snapshot: swapped here on the loop's thread, taken
	 * by readers on any thread (the HTTP server's), under snap_lock. */
	struct ibw_snapshot *snap;
	/* Link health (core/links.h): the windows, and the view of the
	 * last round with what it was built from, so that publishing with
	 * nothing new (pings, traces) reuses it. */
	struct ibw_links *links;
	struct ibw_link_view *lview;
	uint64_t lview_discoveries, lview_sweeps;
	int lerr_ctr[IBW_LERR_MAX]; /* enum ibw_ctr of each, -1 none */
	/* names reloaded, or a hardware sweep judged the cable modules:
	 * a round without a new fabric or counter sweep */
	int lview_dirty;
	/* The route census: the table reader and the last census, which
	 * the next one is compared with for events. */
	struct ibw_lft *lft;
	struct ibw_census *census;
	/* Hardware health (core/hw.h): the sweeper and its last view. */
	struct ibw_hw *hw;
	struct ibw_hw_view *hwview;
	pthread_mutex_t snap_lock;
	struct ibw_timer *disc_timer, *ctr_timer;
	uint64_t discoveries, counter_sweeps;
	/* The counter sweep under way (or the last): why it runs, and
	 * another to run at full speed as soon as it ends. Sweeps start on
	 * a fixed period: ctr_timer fires an interval after the last
	 * start; one due while a sweep still runs (ctr_due) starts when
	 * that one ends. */
	enum ibw_sweep_reason ctr_reason, again_reason;
	int ctr_again, ctr_due;
	uint64_t ctr_next_us; /* monotonic: when the next is due */
	/* The scrapers of /metrics (core/scrapers.h), and the schedule of
	 * the sweep under way (or the last): aligned with them when
	 * plan.nscrapers, else every counter interval. */
	struct ibw_scrapers *scrapers;
	struct ibw_sweep_plan plan;
	/* While a sweep runs: publish what it read at least once a second;
	 * ports settled (read or not) as of the last snapshot. */
	struct ibw_timer *progress_timer;
	unsigned published_settled;
	uint64_t logged_seq;
	/* LIDs in flux (core/counters.h): events looked at for signs up to
	 * here; the counters' signs when the discovery under way started;
	 * our own port's LID and its SM's, as last told. */
	uint64_t sign_seq;
	uint64_t disc_signs;
	uint16_t local_lid, sm_lid;
	struct ibw_fabric_id fabric_id; /* as of the last discovery */
	int state_err; /* last state-file error logged, to log it once */
	struct ibw_ctr_journal *journal; /* the state file's writer */
	int periodic;
	int once_tracing;
	uint64_t started_us;
	uint64_t snap_seq;
	/* The local port is not active: the last fabric is kept, marked
	 * stale, and discovery retried with a growing backoff. */
	int local_lost;
	uint8_t lost_state;
	uint64_t lost_since_us, backoff_us;
	/* the device was opened again: look at once, not after backoff */
	int look_now;
	uint64_t last_good_us; /* the last discovery with the port active */
	/* a lost ping makes us ask our own port first */
	struct ibw_localport_query lq;
	int lq_running;
	uint64_t lq_last_us;
	void (*once_cb)(struct ibw_monitor *m, void *arg);
	void *once_arg;
	uint64_t round_t0; /* --once: when its ping round started */
	unsigned once_left; /* --once: the sweep and the round, until done */
};

/* Feed the link view a round and take a new view, with its events;
 * nothing when neither the fabric, the counters nor the names changed. */
void ibw_monitor_update_links(struct ibw_monitor *m);

/* Build a new snapshot from the monitor's state and swap it in
 * (core/monitor_publish.c). */
void ibw_mon_publish(struct ibw_monitor *m);
/* Log the events added since the last call. */
void ibw_mon_log_events(struct ibw_monitor *m);

/* monitor_traces.c: a round of the watched traces, unless one is
 * running; @done runs when it is over (at once if there is nothing to
 * trace). */
void ibw_mon_start_watched(struct ibw_monitor *m,
			   void (*done)(struct ibw_monitor *m));

#endif
