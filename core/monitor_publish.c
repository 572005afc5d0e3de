// SPDX-License-Identifier: BSD-2-Clause
/*
 * The monitor's snapshots: each built from the monitor's state as it is
 * (the fabric, the counters' table by reference, the endports, the
 * watched paths, the link view, census, hardware and jobs) and swapped
 * in for readers on any thread; and the events since the last look,
 * logged.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "jobsrc.h"
#include "log.h"
#include "monitor_int.h"

/* Build a new snapshot from the current state and swap it in. */
void ibw_mon_publish(struct ibw_monitor *m)
{
	struct ibw_snapshot *s = ibw_snapshot_new(), *old;
	unsigned n, i;

	if (!s) {
		log_err("monitor", "out of memory: snapshot not published");
		return;
	}
	s->seq = ++m->snap_seq;
	s->taken_us = ibw_realtime_us();
	s->fabric = ibw_fabric_ref(m->fabric);
	if (s->fabric && m->names) {
		s->names = calloc(s->fabric->nnodes + 1, sizeof(*s->names));
		for (i = 0; s->names && i < s->fabric->nnodes; i++) {
			const char *nm = ibw_namemap_get(
				m->names, s->fabric->nodes[i].guid);

			s->names[i] = nm ? strdup(nm) : NULL;
		}
	}
	/* The counters' records by reference, not a copy of them. */
	s->ports_table = ibw_counters_table(m->ctrs);
	if (s->ports_table)
		s->nports = ibw_ctr_table_n(s->ports_table);
	if (m->pinger) {
		const struct ibw_endport *eps =
			ibw_pinger_endports(m->pinger, &n);

		if (n) {
			s->endports = malloc(n * sizeof(*s->endports));
			if (s->endports) {
				memcpy(s->endports, eps,
				       n * sizeof(*s->endports));
				s->nendports = n;
			}
		}
	}
	if (m->o.nwatch) {
		s->watched = malloc(m->o.nwatch * sizeof(*s->watched));
		if (s->watched) {
			memcpy(s->watched, m->watched,
			       m->o.nwatch * sizeof(*s->watched));
			s->nwatched = m->o.nwatch;
		}
	}
	if (m->fabric) {
		const struct ibw_fnode *ln =
			ibw_fabric_find(m->fabric, m->fabric->local_guid);
		unsigned lp = m->o.local_port ? m->o.local_port : 1;

		s->discovery = m->fabric->sweep;
		if (ln && lp < ln->nports && ln->ports[lp].have_pi)
			s->local_state = ln->ports[lp].pi.state;
	}
	s->fabric_id = m->fabric_id;
	s->started_us = m->started_us;
	/* Three missed discoveries or counter sweeps make the data stale;
	 * without our own port it is stale at once. */
	s->fresh_until_us =
		(m->last_good_us ? m->last_good_us : m->started_us) +
		3 * (m->o.discovery_interval_us > m->o.counter_interval_us
			     ? m->o.discovery_interval_us
			     : m->o.counter_interval_us);
	s->local_lost = m->local_lost;
	if (m->local_lost) {
		s->local_state = m->lost_state;
		s->fresh_until_us = 0;
	}
	s->counters = ibw_counters_last_sweep(m->ctrs);
	ibw_counters_last_busy(m->ctrs, s->counters_busy_us);
	s->counter_sweep = ibw_counters_progress(m->ctrs);
	s->counter_sweep_reason = m->ctr_reason;
	s->counter_interval_us = m->plan.interval_us ? m->plan.interval_us
						     : m->o.counter_interval_us;
	s->counter_aligned_scrapers = m->plan.nscrapers;
	s->counter_verify = ibw_counters_verify_stats(m->ctrs);
	s->counter_clears = ibw_counters_clears(m->ctrs);
	if (m->journal) {
		s->have_state_file = 1;
		s->state_file = ibw_ctr_journal_stats(m->journal);
		s->state_err = m->state_err;
	}
	s->unreachable_ports = ibw_counters_unreachable(m->ctrs);
	n = ibw_counters_redirects(m->ctrs, NULL, 0);
	if (n && (s->pma_redirects = calloc(n, sizeof(*s->pma_redirects))))
		s->npma_redirects =
			ibw_counters_redirects(m->ctrs, s->pma_redirects, n);
	s->discoveries = m->discoveries;
	s->counter_sweeps = m->counter_sweeps;
	ibw_monitor_update_links(m);
	s->links = ibw_link_view_ref(m->lview);
	s->census = m->census ? ibw_census_ref(m->census) : NULL;
	s->hw = ibw_hw_view_ref(m->hwview);
	s->jobs = m->jobsrc ? ibw_jobset_ref(ibw_jobsrc_set(m->jobsrc)) : NULL;
	s->jobcache = m->jobcache;
	if (ibw_snapshot_seal(s) < 0) {
		log_err("monitor", "out of memory: snapshot not published");
		ibw_snapshot_unref(s);
		return;
	}
	pthread_mutex_lock(&m->snap_lock);
	old = m->snap;
	m->snap = s;
	m->published_settled =
		s->counter_sweep.read + s->counter_sweep.unreachable;
	pthread_mutex_unlock(&m->snap_lock);
	/* Outside the lock: freeing a big snapshot takes a while. */
	ibw_snapshot_unref(old);
}

void ibw_mon_log_events(struct ibw_monitor *m)
{
	struct ibw_event evs[64];
	unsigned n, i;

	while ((n = ibw_events_since(m->ev, m->logged_seq, evs, 64)) > 0) {
		for (i = 0; i < n; i++) {
			const struct ibw_event *e = &evs[i];
			char q[IBW_NAME_QUOTED_SIZE] = "";

			/* the name quoted: where it ends is plain */
			if (e->name[0])
				ibw_name_quote(q, sizeof(q), e->name);
			log_info("event",
				 "%s node 0x%016" PRIx64 "%s%s port %u%s%s"
				 " old %" PRIu64 " new %" PRIu64,
				 ibw_event_kind_str(e->kind), e->node_guid,
				 q[0] ? " " : "", q, e->port,
				 e->what[0] ? " " : "", e->what, e->old_value,
				 e->new_value);
			if (e->kind == IBW_EVT_PATH_CHANGED)
				log_info("event", "path to %s changed: %s",
					 e->what, e->detail);
			if (e->kind == IBW_EVT_LINK_HEALTH_CHANGED)
				log_info("event",
					 "link 0x%016" PRIx64
					 "/%u - 0x%016" PRIx64 "/%u: %s",
					 e->node_guid, e->port, e->peer_guid,
					 e->peer_port, e->detail);
			if (e->kind >= IBW_EVT_ROUTES_LOST &&
			    e->kind <= IBW_EVT_ROUTE_LOAD)
				log_info("event", "%s: %s",
					 ibw_event_kind_str(e->kind),
					 e->detail);
			if (e->kind == IBW_EVT_ENDPORT_STATE)
				log_info("event",
					 "endport 0x%016" PRIx64 "%s%s is %s "
					 "(was %s)",
					 e->peer_guid, q[0] ? " " : "", q,
					 ibw_endport_state_str(e->new_value),
					 ibw_endport_state_str(e->old_value));
			m->logged_seq = e->seq;
		}
	}
}
