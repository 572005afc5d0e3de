// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctr_journal.h"
#include "localport.h"
#include "log.h"
#include "loop.h"
#include "jobcache.h"
#include "jobsrc.h"
#include "monitor.h"
#include "namemap.h"
#include "monitor_int.h"

/*
 * Signs that the SM is moving LIDs in the events since the last look: a
 * discovery's lid_changed, and the pinger's endport_moved (it follows a
 * port to its new LID before discovery does). Events pushed out of the
 * ring before we looked may have been such signs too. On one, the
 * counters are in "LIDs in flux" until the LIDs settle (with
 * --counter-check in-flux they check every reading then). 1 if there
 * was.
 */
static int watch_lids(struct ibw_monitor *m)
{
	struct ibw_event evs[64];
	const char *why = NULL;
	unsigned n, i;

	while ((n = ibw_events_since(m->ev, m->sign_seq, evs, 64)) > 0) {
		if (evs[0].seq > m->sign_seq + 1)
			why = "events were lost unread";
		for (i = 0; i < n; i++) {
			if (evs[i].kind == IBW_EVT_LID_CHANGED)
				why = "a discovery found LIDs changed";
			else if (evs[i].kind == IBW_EVT_ENDPORT_MOVED && !why)
				why = "an endport answered at another LID";
			m->sign_seq = evs[i].seq;
		}
	}
	if (why)
		ibw_counters_lids_moved(m->ctrs, why);
	return why != NULL;
}

static void trace_round_done(struct ibw_monitor *m)
{
	ibw_mon_publish(m);
	ibw_mon_log_events(m);
	if (m->periodic) {
		ibw_timer_arm(m->trace_timer, m->o.trace_interval_us);
	} else if (m->once_tracing) {
		m->once_tracing = 0;
		if (m->once_cb)
			m->once_cb(m, m->once_arg);
	}
}

static void on_trace_timer(struct ibw_timer *t, void *arg)
{
	struct ibw_monitor *m = arg;

	if (m->local_lost) {
		ibw_timer_arm(t, m->o.trace_interval_us);
		return;
	}
	ibw_mon_start_watched(m, trace_round_done);
}

static void once_finish(struct ibw_monitor *m)
{
	ibw_mon_publish(m);
	ibw_mon_log_events(m);
	if (m->o.nwatch) {
		/* then the watched paths, once */
		m->once_tracing = 1;
		ibw_mon_start_watched(m, trace_round_done);
		return;
	}
	if (m->once_cb)
		m->once_cb(m, m->once_arg);
}

/* --once: the counter sweep or the ping round is over. */
static void once_step(struct ibw_monitor *m)
{
	if (m->once_left && --m->once_left == 0)
		once_finish(m);
}

static void ping_round_done(struct ibw_pinger *p, void *arg)
{
	struct ibw_monitor *m = arg;
	const struct ibw_endport *eps;
	unsigned n, i, up = 0;

	eps = ibw_pinger_endports(p, &n);
	for (i = 0; i < n; i++)
		up += eps[i].received > 0;
	log_debug("ping", "round: %u endports, %u answered, %.3f s", n, up,
		  (double)(ibw_now_us() - m->round_t0) / 1e6);
	once_step(m);
}

/* The node's name: the name map's, else its description (@arg: the
 * monitor; an ibw_namer). */
static const char *name_of(const struct ibw_fnode *n, void *arg)
{
	struct ibw_monitor *m = arg;

	return ibw_namemap_name(m->names, n->guid, n->desc);
}

/* ibw_events_namer: a node of the fabric being taken in, else of ours. */
static void name_event(void *arg, uint64_t guid, char *buf)
{
	struct ibw_monitor *m = arg;
	const struct ibw_fnode *n = NULL;

	if (m->diffing)
		n = ibw_fabric_find(m->diffing, guid);
	if (!n && m->fabric)
		n = ibw_fabric_find(m->fabric, guid);
	if (n)
		snprintf(buf, IBW_NAME_SIZE, "%s", name_of(n, m));
}

/* Pings change state between sweeps: publish what they found at the
 * ping interval. */
static void on_pub_timer(struct ibw_timer *t, void *arg)
{
	struct ibw_monitor *m = arg;

	watch_lids(m);
	ibw_mon_publish(m);
	ibw_mon_log_events(m);
	ibw_timer_arm(t, m->o.ping.interval_us ? m->o.ping.interval_us
					       : 10000000u);
}

/* What a running counter sweep has read reaches readers at least this
 * often, not only when it ends: a spread sweep takes most of its
 * interval, and a full-speed one on a large fabric seconds. */
#define PROGRESS_US 1000000u

static void start_counters(struct ibw_monitor *m, enum ibw_sweep_reason why);

/*
 * Give back to the system the pages the last sweep, discovery or census
 * freed. glibc keeps what is freed inside its heap and returns only its
 * top; the old snapshot's records, views and fabric lie between what
 * lives on, so the agent's RSS grew by what it had ever held at once
 * (34 MB more than it used, idle on the 57,024-port tree, where this
 * takes a few milliseconds; docs/benchmarks.md).
 */
static void trim_heap(void)
{
#ifdef __GLIBC__
	uint64_t t0 = ibw_now_us();

	malloc_trim(0);
	log_debug("monitor", "heap trimmed in %.1f ms",
		  (double)(ibw_now_us() - t0) / 1e3);
#endif
}

static void counters_done(struct ibw_counters *c, void *arg)
{
	struct ibw_monitor *m = arg;
	struct ibw_sweep_stats st = ibw_counters_last_sweep(c);
	int rc;

	ibw_timer_disarm(m->progress_timer);
	m->counter_sweeps++;
	log_debug("counters",
		  "sweep: %" PRIu64 " MADs, %" PRIu64 " timeouts, %u ports "
		  "unreachable, %.3f s",
		  st.mads, st.timeouts, ibw_counters_unreachable(c),
		  (double)st.duration_us / 1e6);
	/* The links take this sweep first, so that the state file has
	 * their windows up to it. */
	ibw_mon_publish(m);
	if (m->state_file) {
		rc = ibw_counters_journal_save(c, m->journal, m->links,
					       ibw_realtime_us(), 0);
		if (rc < 0 && rc != m->state_err)
			log_warn("counters",
				 "cannot write state file %s: %s (said once "
				 "until it changes)",
				 m->state_file, strerror(-rc));
		else if (rc == 0 && m->state_err)
			log_info("counters", "state file %s written again",
				 m->state_file);
		m->state_err = rc;
	}
	ibw_mon_log_events(m);
	trim_heap();
	if (m->periodic) {
		if (m->ctr_again) {
			m->ctr_again = 0;
			m->ctr_due = 0;
			if (!m->local_lost)
				start_counters(m, m->again_reason);
		} else if (m->ctr_due) {
			/* it ran past its period: the next starts now */
			m->ctr_due = 0;
			if (!m->local_lost)
				start_counters(m, IBW_SWEEP_INTERVAL);
		}
	} else {
		once_step(m);
	}
}

static void on_progress_timer(struct ibw_timer *t, void *arg)
{
	struct ibw_monitor *m = arg;
	struct ibw_counters_progress p = ibw_counters_progress(m->ctrs);
	uint64_t t0;

	if (!p.running)
		return;
	/* a move the pinger found checks the rest of this sweep */
	watch_lids(m);
	if (p.read + p.unreachable != m->published_settled) {
		t0 = ibw_now_us();
		ibw_mon_publish(m);
		ibw_mon_log_events(m);
		log_debug("counters",
			  "sweep under way: %u of %u ports read, %u "
			  "unreachable; published in %.2f ms",
			  p.read, p.ports, p.unreachable,
			  (double)(ibw_now_us() - t0) / 1e3);
	}
	ibw_timer_arm(t, PROGRESS_US);
}

/*
 * The next interval's sweep is due an interval after this one was: from
 * its due time, not from when the timer ran, so that the period does not
 * creep by the loop's latency and a port is read at the same phase every
 * interval (a scraper at the interval, or a multiple of it, then sees one
 * new reading each scrape). One that started late (the one before ran
 * past its period) or for another reason starts a new schedule.
 */
static void schedule_next(struct ibw_monitor *m, enum ibw_sweep_reason why)
{
	uint64_t now = ibw_now_us(), c = m->o.counter_interval_us;

	if (m->plan.nscrapers)
		m->ctr_next_us = m->plan.start_us;
	else if (why == IBW_SWEEP_INTERVAL && m->ctr_next_us &&
		 now >= m->ctr_next_us && now - m->ctr_next_us < c / 4)
		m->ctr_next_us += c;
	else
		m->ctr_next_us = now + c;
	ibw_timer_arm_at(m->ctr_timer, m->ctr_next_us);
}

/*
 * The schedule for the sweep about to start and the next: aligned with
 * the scrapers of /metrics when they allow it (core/scrapers.h), so
 * that each scrape finds every port read one scrape period after the
 * reading the scrape before found, by a sweep that ended well before
 * it; else every counter interval. Said when it changes.
 */
static int plan_sweeps(struct ibw_monitor *m)
{
	struct ibw_sweep_plan p;
	unsigned pct = m->o.counters_full_speed ? 0 : m->o.spread_percent;
	int changed;

	memset(&p, 0, sizeof(p));
	if (!m->periodic || m->o.no_scrape_align ||
	    !ibw_scrapers_plan(m->scrapers, ibw_now_us(),
			       m->o.counter_interval_us, pct, &p))
		p.interval_us = m->o.counter_interval_us;
	changed = p.nscrapers != m->plan.nscrapers ||
		  p.interval_us != m->plan.interval_us;
	if (changed) {
		if (p.nscrapers)
			log_info("counters",
				 "counter sweeps every %.3g s, aligned with "
				 "%u scraper%s of /metrics",
				 (double)p.interval_us / 1e6, p.nscrapers,
				 p.nscrapers == 1 ? "" : "s");
		else if (m->plan.nscrapers)
			log_info("counters",
				 "counter sweeps every %.3g s: no steady "
				 "scraper of /metrics to align with",
				 (double)p.interval_us / 1e6);
	}
	m->plan = p;
	return changed;
}

/*
 * Start a counter sweep for @why. The interval's sweeps are spread over
 * its spread share so that no switch sees a burst; the first after start
 * and after the local port came back run at full speed, since readers
 * have no current counters until they end.
 *
 * Sweeps start an interval apart, start to start, and read the nodes in
 * the same order at the same pace: each port is read once an interval,
 * so its reading is never more than an interval old (plus the second a
 * running sweep waits to publish()). Timed from the end instead, a spread
 * sweep made that 1.8 intervals, and a scraper at the interval saw one
 * reading twice, then two at once: rates of 0, then of 1.8 times the
 * truth.
 */
static void start_counters(struct ibw_monitor *m, enum ibw_sweep_reason why)
{
	uint64_t spread = 0;
	int rc;

	if (!m->fabric)
		return;
	watch_lids(m);
	if (ibw_counters_running(m->ctrs)) {
		if (why != IBW_SWEEP_INTERVAL) {
			/* What it read while the port was lost timed out:
			 * send the rest now, then read all again. */
			ibw_counters_respread(m->ctrs, 0);
			m->ctr_again = 1;
			m->again_reason = why;
		}
		return;
	}
	plan_sweeps(m);
	if (m->periodic && why == IBW_SWEEP_INTERVAL &&
	    !m->o.counters_full_speed)
		spread = m->plan.nscrapers ? m->plan.spread_us
					   : m->o.counter_interval_us *
						     m->o.spread_percent / 100;
	m->ctr_reason = why;
	if (why != IBW_SWEEP_INTERVAL)
		log_info("counters", "counter sweep at full speed (%s)",
			 ibw_snapshot_sweep_reason_str(why));
	rc = ibw_counters_sweep(m->ctrs, m->fabric, spread, counters_done, m);
	if (m->periodic && (rc == 0 || rc == -ENOENT))
		schedule_next(m, why);
	if (rc == 0 && m->periodic && ibw_counters_running(m->ctrs)) {
		ibw_timer_arm(m->progress_timer, PROGRESS_US);
	} else if (rc == -ENOENT) {
		/* Nothing in scope: a sweep of nothing is still done. */
		counters_done(m->ctrs, m);
	} else if (rc < 0 && rc != -EBUSY) {
		log_warn("counters", "cannot start a sweep: %s", strerror(-rc));
		if (m->periodic)
			ibw_timer_arm(m->ctr_timer, m->o.counter_interval_us);
	}
}

static void on_ctr_timer(struct ibw_timer *t, void *arg)
{
	struct ibw_monitor *m = arg;

	if (m->local_lost) {
		/* Every read would time out: keep the last ones. */
		ibw_timer_arm(t, m->o.counter_interval_us);
		return;
	}
	if (ibw_counters_running(m->ctrs)) {
		m->ctr_due = 1; /* counters_done() starts it */
		return;
	}
	start_counters(m, IBW_SWEEP_INTERVAL);
}

void ibw_monitor_scrape_seen(struct ibw_monitor *m, uint64_t key, uint64_t t_us)
{
	ibw_scrapers_seen(m->scrapers, key, t_us);
	/* A scraper just steady, or one more: the next sweep on the new
	 * schedule, not the one after it. Only on a change, so that
	 * scrapes do not keep putting a sweep off. */
	if (!m->periodic || m->o.no_scrape_align || m->local_lost ||
	    !ibw_timer_armed(m->ctr_timer) || ibw_counters_running(m->ctrs) ||
	    !plan_sweeps(m) || !m->plan.nscrapers)
		return;
	m->ctr_next_us = m->plan.start_us;
	ibw_timer_arm_at(m->ctr_timer, m->plan.start_us);
}

/* Is the port we sweep from active in @f? Its state in @state. */
static int local_port_ok(const struct ibw_monitor *m,
			 const struct ibw_fabric *f, uint8_t *state)
{
	const struct ibw_fnode *ln = ibw_fabric_find(f, f->local_guid);
	unsigned lp = m->o.local_port ? m->o.local_port : 1;

	*state = 0;
	if (!ln || lp >= ln->nports || !ln->ports[lp].have_pi)
		return 0;
	*state = ln->ports[lp].pi.state;
	return *state == IBW_PORT_ACTIVE;
}

/* Which fabric @f is, and an event when that is not what it was. */
static void note_fabric_id(struct ibw_monitor *m, const struct ibw_fabric *f)
{
	struct ibw_fabric_id id;
	char a[IBW_FABRIC_ID_LEN], b[IBW_FABRIC_ID_LEN];
	struct ibw_fabric_id old = m->fabric_id;

	ibw_fabric_id_of(f, m->o.local_port ? m->o.local_port : 1, &id);
	ibw_fabric_id_str(&old, a, sizeof(a));
	ibw_fabric_id_str(&id, b, sizeof(b));
	if (ibw_fabric_id_update(&m->fabric_id, &id, ibw_realtime_us(), m->ev))
		log_warn("monitor",
			 "another fabric: %s, was %s (master SM LID %u)", b, a,
			 (unsigned)id.sm_lid);
	else if (!old.known && id.known)
		log_info("monitor", "fabric %s (master SM LID %u)", b,
			 (unsigned)id.sm_lid);
}

/* Our own port lost (@state its PortState, 0 none; @what its name, or
 * "unreachable") or back. */
static void local_port_event(struct ibw_monitor *m, enum ibw_event_kind kind,
			     uint8_t state, const char *what, uint64_t lost_ms)
{
	struct ibw_event e;

	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.node_guid = m->fabric ? m->fabric->local_guid : 0;
	e.port = (uint8_t)(m->o.local_port ? m->o.local_port : 1);
	e.old_value = state;
	e.new_value = lost_ms;
	snprintf(e.what, sizeof(e.what), "%s", what);
	ibw_events_add(m->ev, &e);
}

/* A discovery found our own port not active: keep the last fabric
 * (nothing is gone because we cannot see it), mark it all stale, and
 * look again soon: 1 s, doubling up to the discovery interval. */
static void enter_lost(struct ibw_monitor *m, uint8_t state)
{
	uint64_t now = ibw_realtime_us();
	/* state 0: no PortInfo at all (the device is gone, or the port
	 * did not answer), which PortInfo's own names would call
	 * "nochange" */
	const char *what = state ? ibw_port_state_str(state) : "unreachable";

	if (!m->local_lost) {
		m->local_lost = 1;
		m->lost_since_us = now;
		m->backoff_us = 0;
		local_port_event(m, IBW_EVT_LOCAL_PORT_LOST, state, what, 0);
		log_warn("monitor",
			 "local port %u is %s: keeping the last picture of "
			 "the fabric (%u nodes), marked stale; pings and "
			 "counter reads pause until it is back",
			 m->o.local_port ? m->o.local_port : 1, what,
			 m->fabric ? m->fabric->nnodes : 0);
		if (m->pinger)
			ibw_pinger_pause(m->pinger, 1);
	}
	m->lost_state = state;
	m->backoff_us = m->backoff_us ? 2 * m->backoff_us : 1000000u;
	if (m->backoff_us > m->o.discovery_interval_us)
		m->backoff_us = m->o.discovery_interval_us;
	log_debug("monitor", "local port still %s; next look in %.1f s", what,
		  (double)m->backoff_us / 1e6);
	ibw_mon_publish(m);
	/* (a sweep still running re-arms it when it ends) */
	ibw_timer_arm(m->disc_timer, m->look_now ? 0 : m->backoff_us);
	m->look_now = 0;
}

void ibw_monitor_device_lost(struct ibw_monitor *m)
{
	/* One sweep of --once simply ends with what it had. */
	if (m->periodic)
		enter_lost(m, 0);
}

void ibw_monitor_device_back(struct ibw_monitor *m, uint16_t local_lid)
{
	if (local_lid)
		ibw_monitor_set_local_lid(m, local_lid);
	if (!m->periodic)
		return;
	log_info("monitor", "the umad device is open again: discovering now");
	/* whatever reset it may have had the SM give LIDs anew */
	ibw_counters_lids_moved(m->ctrs, "the umad device is back");
	/* A discovery that was failing on the closed device may still be
	 * settling: it looks again at once when it ends. */
	m->look_now = 1;
	ibw_timer_arm(m->disc_timer, 0);
}

static void on_local_lost(struct ibw_monitor *m, struct ibw_fabric *f,
			  uint8_t state)
{
	ibw_fabric_unref(f);
	enter_lost(m, state);
}

static void on_local_answer(struct ibw_localport_query *q, void *arg)
{
	struct ibw_monitor *m = arg;

	m->lq_running = 0;
	if (m->local_lost || !m->periodic)
		return;
	if (!q->have_portinfo)
		enter_lost(m, 0);
	else if (q->pi.state != IBW_PORT_ACTIVE)
		enter_lost(m, q->pi.state);
}

/* A ping was lost: before endports go down for it, check that our own
 * port is still active (a local SMP, answered at once). */
static void on_ping_loss(void *arg)
{
	struct ibw_monitor *m = arg;
	uint64_t now = ibw_now_us();
	int port = (int)(m->o.local_port ? m->o.local_port : 1);

	if (m->local_lost || m->lq_running || now - m->lq_last_us < 100000u)
		return;
	m->lq_last_us = now;
	if (ibw_localport_query(m->e, port, &m->lq, on_local_answer, m) == 0)
		m->lq_running = 1;
}

/*
 * A new set of forwarding tables: the census of the newest fabric with
 * them, its changes from the last census as events, and a snapshot. The
 * computation is tens of milliseconds on the largest tree we test
 * (docs/routes.md), so it runs here in the loop.
 */
static void on_tables(struct ibw_lft_set *t, void *arg)
{
	struct ibw_monitor *m = arg;
	const struct ibw_lft_stats *st = ibw_lft_set_stats(t);
	const struct ibw_census_summary *cs;
	struct ibw_census *c;

	if (!m->fabric)
		return;
	c = ibw_census_compute(m->fabric, t, NULL);
	if (!c) {
		log_err("monitor", "out of memory: route census not computed");
		return;
	}
	cs = ibw_census_summary(c);
	log_debug("routes",
		  "tables: %u switches (%u stale, %u missing), %" PRIu64
		  " MADs, %.3f s; census: %" PRIu64 " pairs, %" PRIu64
		  " routed, %" PRIu64 " unreachable, %" PRIu64
		  " looping, %.1f ms CPU",
		  st->switches, st->stale, st->missing, st->mads,
		  (double)st->duration_us / 1e6, cs->pairs, cs->routed,
		  cs->unreachable, cs->looping, (double)cs->compute_us / 1e3);
	if (m->census)
		ibw_census_diff(m->census, c, NULL, NULL, m->ev);
	ibw_census_unref(m->census);
	m->census = c;
	ibw_mon_publish(m);
	ibw_mon_log_events(m);
	trim_heap();
}

static void on_hw(struct ibw_hw_view *v, void *arg)
{
	struct ibw_monitor *m = arg;

	ibw_hw_view_unref(m->hwview);
	m->hwview = ibw_hw_view_ref(v);
	m->lview_dirty = 1; /* the cable modules judge links too */
	ibw_mon_publish(m);
	ibw_mon_log_events(m);
}

static void discovery_done(struct ibw_fabric *f, void *arg)
{
	struct ibw_monitor *m = arg;
	unsigned nev;
	uint8_t st;
	int back = m->local_lost;

	/* A discovery the device's loss cut short is no picture of the
	 * fabric: its local port answered before the loss, the rest failed
	 * with transport errors. */
	if (m->periodic && ibw_engine_lost(m->e)) {
		on_local_lost(m, f, 0);
		return;
	}
	if (m->periodic && !local_port_ok(m, f, &st)) {
		on_local_lost(m, f, st);
		return;
	}
	m->look_now = 0;
	if (back) {
		log_info("monitor",
			 "local port is active again after %.1f s: sweeping",
			 (double)(ibw_realtime_us() - m->lost_since_us) / 1e6);
		m->local_lost = 0;
		local_port_event(
			m, IBW_EVT_LOCAL_PORT_BACK, IBW_PORT_ACTIVE, "active",
			(ibw_realtime_us() - m->lost_since_us) / 1000u);
		if (m->pinger)
			ibw_pinger_pause(m->pinger, 0);
	}
	m->last_good_us = ibw_realtime_us();
	m->discoveries++;
	/* events of the diff name their nodes from the new fabric */
	m->diffing = f;
	nev = ibw_fabric_diff(m->fabric, f, m->ev);
	m->diffing = NULL;
	/* No LID changed against the last discovery, and no sign came since
	 * this one started: the LIDs have settled. */
	if (!watch_lids(m))
		ibw_counters_lids_settled(m->ctrs, m->disc_signs);
	log_debug("discover",
		  "sweep: %u nodes, %" PRIu64 " MADs, %" PRIu64 " timeouts, %u "
		  "changes, %.3f "
		  "s",
		  f->nnodes, f->sweep.mads, f->sweep.timeouts, nev,
		  (double)f->sweep.duration_us / 1e6);
	ibw_fabric_unref(m->fabric);
	m->fabric = f;
	ibw_discover_set_prev(m->disc, f);
	note_fabric_id(m, f);
	if (m->pinger)
		ibw_pinger_update(m->pinger, f, name_of, m);
	ibw_tracer_set_fabric(m->tracer, f);
	if (m->hw)
		ibw_hw_set_fabric(m->hw, f);
	/* A change (or the first sweep) may move routes: read the tables
	 * now; else later reads use the newest fabric. */
	if (m->lft && (nev || m->discoveries == 1)) {
		int rc = ibw_lft_refresh(m->lft, f);

		if (rc < 0)
			log_warn("routes", "cannot read forwarding tables: %s",
				 strerror(-rc));
	} else if (m->lft) {
		ibw_lft_set_fabric(m->lft, f);
	}
	ibw_mon_publish(m);
	ibw_mon_log_events(m);
	trim_heap();
	if (m->periodic) {
		ibw_timer_arm(m->disc_timer, m->o.discovery_interval_us);
		/* The first counter sweep and pings follow the first
		 * discovery. */
		if (m->discoveries == 1) {
			start_counters(m, IBW_SWEEP_START);
			if (m->o.nwatch)
				ibw_mon_start_watched(m, trace_round_done);
			if (m->pinger) {
				ibw_pinger_start(m->pinger);
				ibw_timer_arm(m->pub_timer,
					      m->o.ping.interval_us
						      ? m->o.ping.interval_us
						      : 10000000u);
			}
		} else if (back) {
			start_counters(m, IBW_SWEEP_PORT_BACK);
		}
	} else {
		/*
		 * --once: the ping round runs beside the counter sweep, not
		 * after it. Both wait mostly for answers (the simulator's
		 * MAD rate, or a 200 ms echo no responder answers), so one
		 * after the other the round's wait is added to the whole;
		 * the engine's window keeps them from flooding a node.
		 * Either may end before the other starts (nothing to
		 * ping, nothing in scope): hence the count first.
		 */
		m->once_left = 2;
		m->round_t0 = ibw_now_us();
		if (!m->pinger ||
		    ibw_pinger_round(m->pinger, ping_round_done, m) < 0)
			once_step(m);
		start_counters(m, IBW_SWEEP_START);
	}
}

/* Start a discovery, with the signs of LIDs in flux so far: only one
 * that started after the last sign can find them settled. */
static int discover(struct ibw_monitor *m)
{
	uint64_t signs;
	int rc;

	watch_lids(m);
	signs = ibw_counters_lid_signs(m->ctrs);
	rc = ibw_discover_start(m->disc, discovery_done, m);
	if (rc == 0)
		m->disc_signs = signs;
	return rc;
}

static void on_disc_timer(struct ibw_timer *t, void *arg)
{
	struct ibw_monitor *m = arg;
	int rc = discover(m);

	if (rc == -EBUSY)
		return; /* the sweep running re-arms the timer when done */
	if (rc < 0) {
		log_warn("discover", "cannot start a sweep: %s", strerror(-rc));
		ibw_timer_arm(t, m->o.discovery_interval_us);
	}
}

static void shorten(struct ibw_timer *t, uint64_t interval_us)
{
	uint64_t due = ibw_now_us() + interval_us;

	if (ibw_timer_armed(t) && ibw_timer_deadline(t) > due)
		ibw_timer_arm_at(t, due);
}

void ibw_monitor_set_intervals(struct ibw_monitor *m, uint64_t discovery_us,
			       uint64_t counter_us, uint64_t trace_us)
{
	m->o.discovery_interval_us = discovery_us ? discovery_us
						  : IBW_DISCOVERY_INTERVAL_US;
	m->o.counter_interval_us = counter_us ? counter_us
					      : IBW_COUNTER_INTERVAL_US;
	m->o.trace_interval_us = trace_us ? trace_us : IBW_TRACE_INTERVAL_US;
	shorten(m->disc_timer, m->o.discovery_interval_us);
	shorten(m->ctr_timer, m->o.counter_interval_us);
	if (ibw_timer_armed(m->ctr_timer))
		m->ctr_next_us = ibw_timer_deadline(m->ctr_timer);
	shorten(m->trace_timer, m->o.trace_interval_us);
	/* A sweep spread over the old interval hurries up too. */
	if (!m->o.counters_full_speed)
		ibw_counters_respread(m->ctrs, m->o.counter_interval_us *
						       m->o.spread_percent /
						       100);
}

struct ibw_monitor *ibw_monitor_new(struct ibw_engine *e,
				    const struct ibw_monitor_opts *o, char *err,
				    size_t errlen)
{
	struct ibw_monitor *m = calloc(1, sizeof(*m));
	int rc;

	if (!m)
		return NULL;
	pthread_mutex_init(&m->snap_lock, NULL);
	m->e = e;
	m->loop = ibw_engine_loop(e);
	m->started_us = ibw_realtime_us();
	m->o = *o;
	if (!m->o.discovery_interval_us)
		m->o.discovery_interval_us = IBW_DISCOVERY_INTERVAL_US;
	if (!m->o.counter_interval_us)
		m->o.counter_interval_us = IBW_COUNTER_INTERVAL_US;
	if (!m->o.spread_percent || m->o.spread_percent > 100)
		m->o.spread_percent = 80;
	m->ev = ibw_events_new(o->events_capacity ? o->events_capacity : 4096);
	if (m->ev)
		ibw_events_set_namer(m->ev, name_event, m);
	if (!o->have_link_thresholds)
		ibw_link_thresholds_default(&m->o.link_thresholds);
	m->links = ibw_links_new(&m->o.link_thresholds);
	if (m->links)
		ibw_links_save_fec(m->links, 0);
	/* by name once, not per port and round */
	for (rc = 0; rc < IBW_LERR_MAX; rc++)
		m->lerr_ctr[rc] = ibw_ctr_lookup(ibw_link_err_key(rc));
	m->disc = ibw_discover_new(e, &o->discover);
	m->ctrs = ibw_counters_new(e, m->ev, &o->counters);
	m->disc_timer = ibw_timer_new(m->loop, on_disc_timer, m);
	m->pub_timer = ibw_timer_new(m->loop, on_pub_timer, m);
	m->trace_timer = ibw_timer_new(m->loop, on_trace_timer, m);
	m->tracer = ibw_tracer_new(e, o->local_port ? o->local_port : 1);
	if (!m->o.trace_interval_us)
		m->o.trace_interval_us = IBW_TRACE_INTERVAL_US;
	if (o->nwatch) {
		unsigned i;

		m->watched = calloc(o->nwatch, sizeof(*m->watched));
		for (i = 0; m->watched && i < o->nwatch; i++)
			snprintf(m->watched[i].target,
				 sizeof(m->watched[i].target), "%s",
				 o->watch[i]);
	}
	if (!o->no_ping)
		m->pinger = ibw_pinger_new(e, m->ev, &o->ping);
	if (m->pinger)
		ibw_pinger_on_loss(m->pinger, on_ping_loss, m);
	m->ctr_timer = ibw_timer_new(m->loop, on_ctr_timer, m);
	m->progress_timer = ibw_timer_new(m->loop, on_progress_timer, m);
	m->scrapers = ibw_scrapers_new();
	if (!m->ev || !m->disc || !m->ctrs || !m->disc_timer || !m->ctr_timer ||
	    !m->progress_timer || !m->links || !m->scrapers) {
		snprintf(err, errlen, "out of memory");
		ibw_monitor_free(m);
		return NULL;
	}
	if (o->node_name_map) {
		m->map_path = strdup(o->node_name_map);
		m->names = ibw_namemap_load(o->node_name_map, err, errlen);
		if (!m->names) {
			ibw_monitor_free(m);
			return NULL;
		}
	}
	if (o->state_file) {
		unsigned bad = 0;

		m->state_file = strdup(o->state_file);
		m->journal = ibw_ctr_journal_new(
			o->state_file, o->state_interval_us
					       ? o->state_interval_us
					       : IBW_STATE_INTERVAL_US);
		if (!m->state_file || !m->journal) {
			snprintf(err, errlen, "out of memory");
			ibw_monitor_free(m);
			return NULL;
		}
		rc = ibw_counters_journal_load(m->ctrs, m->journal, m->links,
					       &bad);
		if (bad)
			log_warn("monitor",
				 "state file %s: %u link lines not understood: "
				 "their windows start afresh",
				 o->state_file, bad);
		if (rc == -EBADMSG)
			log_warn("counters",
				 "state file %s is torn or corrupt: ignored, "
				 "totals start afresh",
				 o->state_file);
		else if (rc < 0 && rc != -ENOENT)
			log_warn("counters", "cannot read state file %s: %s",
				 o->state_file, strerror(-rc));
		else if (rc == 0)
			log_info("counters",
				 "totals (and %zu links' windows) restored "
				 "from %s and %" PRIu64
				 " batches of its journal",
				 ibw_links_count(m->links), o->state_file,
				 ibw_ctr_journal_stats(m->journal)
					 .loaded_batches);
	}
	ibw_mon_publish(m);
	return m;
}

void ibw_monitor_free(struct ibw_monitor *m)
{
	if (!m)
		return;
	if (m->state_file && m->ctrs && m->counter_sweeps) {
		/* the FEC windows too, this once (ibw_links_save_fec) */
		if (m->links)
			ibw_links_save_fec(m->links, 1);
		ibw_monitor_save_state(m);
	}
	ibw_jobsrc_free(m->jobsrc);
	ibw_jobcache_free(m->jobcache);
	ibw_timer_free(m->disc_timer);
	ibw_timer_free(m->ctr_timer);
	ibw_timer_free(m->progress_timer);
	ibw_scrapers_free(m->scrapers);
	ibw_timer_free(m->pub_timer);
	ibw_timer_free(m->trace_timer);
	ibw_pinger_free(m->pinger);
	ibw_tracer_free(m->tracer);
	ibw_lft_free(m->lft);
	ibw_census_unref(m->census);
	ibw_hw_free(m->hw);
	ibw_hw_view_unref(m->hwview);
	free(m->watched);
	ibw_discover_free(m->disc);
	ibw_counters_free(m->ctrs);
	ibw_events_free(m->ev);
	ibw_fabric_unref(m->fabric);
	ibw_snapshot_unref(m->snap);
	ibw_link_view_unref(m->lview);
	ibw_links_free(m->links);
	pthread_mutex_destroy(&m->snap_lock);
	ibw_namemap_free(m->names);
	free(m->state_file);
	ibw_ctr_journal_free(m->journal);
	free(m->map_path);
	free(m);
}

/* The job set changed: a snapshot with it now. */
static void on_jobs(void *arg)
{
	struct ibw_monitor *m = arg;

	if (m->fabric)
		ibw_mon_publish(m);
}

int ibw_monitor_start(struct ibw_monitor *m)
{
	struct ibw_lft_opts lo;

	m->periodic = 1;
	/* The census is a periodic mode's: --once prints no routes. */
	memset(&lo, 0, sizeof(lo));
	lo.retries = -1;
	lo.interval_us = m->o.lft_interval_us ? m->o.lft_interval_us
					      : IBW_LFT_INTERVAL_US;
	lo.settle_us = IBW_LFT_SETTLE_US;
	m->lft = ibw_lft_new(m->e, &lo, on_tables, m);
	if (!m->lft)
		return -ENOMEM;
	if (m->o.hw.interval_us &&
	    !(m->hw = ibw_hw_new(m->e, m->loop, &m->o.hw, m->ev, on_hw, m)))
		return -ENOMEM;
	if (m->o.jobs_dir) {
		struct ibw_jobsrc_opts jo = { m->o.jobs_dir, m->o.jobs_check_us,
					      m->o.jobs_squeue,
					      m->o.jobs_host_map };
		char err[256];

		m->jobsrc = ibw_jobsrc_new(m->loop, &jo, on_jobs, m, err,
					   sizeof(err));
		if (!m->jobsrc) {
			log_err("monitor", "jobs: %s", err);
			return -EINVAL;
		}
		m->jobcache = ibw_jobcache_new();
		if (!m->jobcache) {
			log_err("monitor", "jobs: out of memory");
			return -ENOMEM;
		}
	}
	ibw_timer_arm(m->disc_timer, 0);
	return 0;
}

int ibw_monitor_set_jobs(struct ibw_monitor *m, const char *dir,
			 uint64_t check_us, const char *squeue,
			 const char *host_map, char *err, size_t errlen)
{
	struct ibw_jobsrc_opts jo = { dir, check_us, squeue, host_map };
	struct ibw_jobsrc *js = NULL;

	/* the caller's strings from now on, even if the old source stays:
	 * it holds copies, and the old strings may be gone */
	m->o.jobs_dir = dir;
	m->o.jobs_check_us = check_us;
	m->o.jobs_squeue = squeue;
	m->o.jobs_host_map = host_map;
	if (m->periodic && dir) {
		if (!m->jobcache && !(m->jobcache = ibw_jobcache_new())) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		/* Made before the old one goes, so a bad host map leaves
		 * the job view as it was. Their squeue checks may overlap
		 * for a moment: the old one's squeue is killed, and each
		 * acts only on what its own squeue said. */
		js = ibw_jobsrc_new(m->loop, &jo, on_jobs, m, err, errlen);
		if (!js)
			return -EINVAL;
	}
	ibw_jobsrc_free(m->jobsrc);
	m->jobsrc = js;
	if (m->periodic && m->fabric)
		ibw_mon_publish(m);
	return 0;
}

int ibw_monitor_once(struct ibw_monitor *m,
		     void (*cb)(struct ibw_monitor *m, void *arg), void *arg)
{
	m->periodic = 0;
	m->once_cb = cb;
	m->once_arg = arg;
	return discover(m);
}

struct ibw_snapshot *ibw_monitor_snapshot(struct ibw_monitor *m)
{
	struct ibw_snapshot *s;

	pthread_mutex_lock(&m->snap_lock);
	s = ibw_snapshot_ref(m->snap);
	pthread_mutex_unlock(&m->snap_lock);
	return s;
}

struct ibw_pinger *ibw_monitor_pinger(struct ibw_monitor *m)
{
	return m->pinger;
}

struct ibw_tracer *ibw_monitor_tracer(struct ibw_monitor *m)
{
	return m->tracer;
}

void ibw_monitor_set_local_lid(struct ibw_monitor *m, uint16_t lid)
{
	if (lid && m->local_lid && lid != m->local_lid)
		ibw_counters_lids_moved(m->ctrs, "our own port's LID changed");
	if (lid)
		m->local_lid = lid;
	ibw_tracer_set_local_lid(m->tracer, lid);
}

void ibw_monitor_set_sm_lid(struct ibw_monitor *m, uint16_t sm_lid)
{
	if (sm_lid && m->sm_lid && sm_lid != m->sm_lid)
		ibw_counters_lids_moved(m->ctrs, "the master SM changed");
	if (sm_lid)
		m->sm_lid = sm_lid;
}

struct ibw_events *ibw_monitor_events(struct ibw_monitor *m)
{
	return m->ev;
}

int ibw_monitor_save_state(struct ibw_monitor *m)
{
	if (!m->state_file || !m->journal)
		return 0;
	return ibw_counters_journal_save(m->ctrs, m->journal, m->links,
					 ibw_realtime_us(), 1);
}

void ibw_monitor_set_link_thresholds(struct ibw_monitor *m,
				     const struct ibw_link_thresholds *t)
{
	if (!memcmp(t, &m->o.link_thresholds, sizeof(*t)))
		return;
	m->o.link_thresholds = *t;
	ibw_links_set_thresholds(m->links, t);
	m->lview_dirty = 1;
	ibw_mon_publish(m);
	ibw_mon_log_events(m);
}

int ibw_monitor_reload_names(struct ibw_monitor *m, char *err, size_t errlen)
{
	struct ibw_namemap *n;

	if (!m->map_path)
		return 0;
	n = ibw_namemap_load(m->map_path, err, errlen);
	if (!n)
		return -EINVAL;
	ibw_namemap_free(m->names);
	m->names = n;
	m->lview_dirty = 1; /* the links carry the names */
	ibw_mon_publish(m);
	return 0;
}
