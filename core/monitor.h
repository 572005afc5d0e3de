/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The monitor runs the periodic probes (discovery, then counters), turns
 * what changed into events, keeps the counter state file and publishes
 * immutable snapshots for readers.
 */
#ifndef IBW_MONITOR_H
#define IBW_MONITOR_H

#include "census.h"
#include "counters.h"
#include "hw.h"
#include "discover.h"
#include "engine.h"
#include "events.h"
#include "fabric.h"
#include "links.h"
#include "ping.h"
#include "scrapers.h"
#include "snapshot.h"
#include "trace.h"

/* The intervals when ibw_monitor_opts leaves them 0. Counters every
 * 10 s at most: sweeps aligned with the scrapers of /metrics
 * (core/scrapers.h) run every 7.5 s for 15 s scrapes (docs/api.md). */
#define IBW_DISCOVERY_INTERVAL_US 60000000u
#define IBW_COUNTER_INTERVAL_US 10000000u
/* The link windows' batches in the state file's journal at most this
 * often (docs/operations.md, "The state file") */
#define IBW_STATE_INTERVAL_US 1800000000u
#define IBW_TRACE_INTERVAL_US 60000000u
/* Forwarding tables are read again this often for the route census
 * (docs/routes.md), besides after each discovery that saw a change. */
#define IBW_LFT_INTERVAL_US 300000000u
/* ... and once more this long after such a read: the SM writes its new
 * routes after discovery has seen the change. */
#define IBW_LFT_SETTLE_US 10000000u

struct ibw_monitor_opts {
	uint64_t discovery_interval_us; /* 0: IBW_DISCOVERY_INTERVAL_US */
	uint64_t counter_interval_us; /* 0: IBW_COUNTER_INTERVAL_US */
	/* counter reads are spread over this share of the interval */
	unsigned spread_percent; /* 0: 80 */
	/* every counter sweep at full speed, none spread (benchmarks that
	 * time a sweep's work, not its spacing) */
	int counters_full_speed;
	/* Counter sweeps on the counter interval alone, not aligned with
	 * the scrapers of /metrics (ibw_monitor_scrape_seen) */
	int no_scrape_align;
	const char *state_file; /* NULL: no state file */
	uint64_t state_interval_us; /* 0: IBW_STATE_INTERVAL_US */
	const char *node_name_map; /* NULL: none */
	unsigned events_capacity; /* 0: 4096 */
	struct ibw_discover_opts discover;
	struct ibw_counters_opts counters;
	int no_ping; /* no endport pings */
	struct ibw_ping_opts ping;
	char **watch; /* watched paths: targets as for pings */
	unsigned nwatch;
	uint64_t trace_interval_us; /* 0: IBW_TRACE_INTERVAL_US */
	unsigned local_port; /* traces start here */
	/* The route census (periodic mode only): forwarding tables read
	 * at this interval; 0: IBW_LFT_INTERVAL_US. */
	uint64_t lft_interval_us;
	/* Link health thresholds (core/links.h); have_... 0: the
	 * defaults. */
	int have_link_thresholds;
	struct ibw_link_thresholds link_thresholds;
	/* Running jobs (core/jobsrc.h, periodic mode only): the spool
	 * directory (NULL: no job view), the squeue check's interval (0:
	 * none) and binary (NULL: /usr/bin/squeue). */
	const char *jobs_dir;
	uint64_t jobs_check_us;
	const char *jobs_squeue;
	const char *jobs_host_map; /* NULL: Slurm names are host names */
	/* Hardware health in-band (core/hw.h, periodic mode only):
	 * hw.interval_us 0: none read. */
	struct ibw_hw_opts hw;
};

struct ibw_monitor;

struct ibw_monitor *ibw_monitor_new(struct ibw_engine *e,
				    const struct ibw_monitor_opts *o, char *err,
				    size_t errlen);
/* Saves the state file, if any. Free the engine first: it cancels
 * what is in flight. */
void ibw_monitor_free(struct ibw_monitor *m);

/* Periodic mode: discovery now, counters after it, both repeating. */
int ibw_monitor_start(struct ibw_monitor *m);
/* One cycle (discovery, then counters), then @cb. */
int ibw_monitor_once(struct ibw_monitor *m,
		     void (*cb)(struct ibw_monitor *m, void *arg), void *arg);

/* The published snapshot, a new reference (NULL before the first); its
 * links member is the link view of the last round. Thread-safe, unlike
 * the rest of this API, which is the loop's. */
struct ibw_snapshot *ibw_monitor_snapshot(struct ibw_monitor *m);
/* The engine lost its device: keep the last fabric, mark it stale, pause
 * pings and counter reads, and look again with a backoff. */
void ibw_monitor_device_lost(struct ibw_monitor *m);
/* The device is open again (ibw_engine_set_reopen), our port at
 * @local_lid (0: unknown yet): discover now; when the port is active,
 * pings and counter sweeps resume with every total kept (a counter the
 * device reset is counted as a reset, not a loss). */
void ibw_monitor_device_back(struct ibw_monitor *m, uint16_t local_lid);
/* The pinger, for on-demand pings (NULL with no_ping). */
struct ibw_pinger *ibw_monitor_pinger(struct ibw_monitor *m);
/* The tracer, for on-demand traces, with the last discovery's facts. */
struct ibw_tracer *ibw_monitor_tracer(struct ibw_monitor *m);
/* Our own port's LID, and its master SM's LID (PortInfo:MasterSMLID),
 * as last read; a change of either is a sign of LIDs in flux
 * (core/counters.h), as are the device's return, a discovery that saw
 * LIDs change and an endport the pinger found at another LID. */
void ibw_monitor_set_local_lid(struct ibw_monitor *m, uint16_t lid);
void ibw_monitor_set_sm_lid(struct ibw_monitor *m, uint16_t sm_lid);
struct ibw_events *ibw_monitor_events(struct ibw_monitor *m);
/* On the loop: the cable at (@guid, @port), either end, as the last
 * view has it (@k, whose names point into that view: use them before the
 * loop runs on) and its hour window period by period up to now (@h):
 * 0, or -ENOENT. */
int ibw_monitor_link_history(struct ibw_monitor *m, uint64_t guid,
			     unsigned port, struct ibw_link *k,
			     struct ibw_link_hist *h);
/* Name to LID by the last discovery (a LID, a GUID or a node name, as
 * ping targets); 0 when unknown. */
uint16_t ibw_monitor_resolve(struct ibw_monitor *m, const char *target);
int ibw_monitor_save_state(struct ibw_monitor *m);
/* New sweep intervals (0: the default). A timer due later than its new
 * interval from now is brought forward. */
void ibw_monitor_set_intervals(struct ibw_monitor *m, uint64_t discovery_us,
			       uint64_t counter_us, uint64_t trace_us);
/*
 * A scrape of /metrics by the scraper @key (a hash of what tells one
 * from another) at @t_us (ibw_now_us()). Periodic counter sweeps are
 * aligned with the steady scrapers (core/scrapers.h) unless
 * no_scrape_align.
 */
void ibw_monitor_scrape_seen(struct ibw_monitor *m, uint64_t key,
			     uint64_t t_us);
/* New link health thresholds: the links are judged again at once, and
 * health changes become events as usual. */
void ibw_monitor_set_link_thresholds(struct ibw_monitor *m,
				     const struct ibw_link_thresholds *t);
/* Re-read the node-name map; the old one stays if the new one is bad. */
int ibw_monitor_reload_names(struct ibw_monitor *m, char *err, size_t errlen);
/*
 * SIGHUP: the jobs options (@dir NULL: no job view) take effect, and the
 * host map is read again: a new job source replaces the running one.
 * The strings are the caller's and must outlive the monitor. If the new
 * source cannot start (an unreadable host map) the old one stays:
 * -EINVAL with the reason in @err.
 */
int ibw_monitor_set_jobs(struct ibw_monitor *m, const char *dir,
			 uint64_t check_us, const char *squeue,
			 const char *host_map, char *err, size_t errlen);

#endif
