// SPDX-License-Identifier: BSD-2-Clause
/*
 * The monitor's link view (core/links.h): each cable's ends from the
 * last discovery and the counters' totals, fed as a round, and an event
 * for each change of a cable's health, naming the jobs it affects.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobcache.h"
#include "log.h"
#include "monitor_int.h"

/* One end of a cable as core/links.h takes it: PortInfo (port 0's
 * capability masks on a switch) and the counters' running totals. */
static void link_end(struct ibw_monitor *m, const struct ibw_fnode *n,
		     unsigned p, struct ibw_link_end_in *e)
{
	const struct ibw_fport *fp = &n->ports[p];
	const struct ibw_port_ctrs *c =
		ibw_counters_find(m->ctrs, n->guid, (uint8_t)p);
	int sw = n->ni.node_type == IBW_NODE_SWITCH;
	const struct ibw_hw_module *mod;
	int k, i;

	memset(e, 0, sizeof(*e));
	e->guid = n->guid;
	e->port = (uint8_t)p;
	e->node_type = (uint8_t)n->ni.node_type;
	e->lid = sw ? n->lid : fp->pi.lid;
	e->name = ibw_namemap_name(m->names, n->guid, n->desc);
	e->pi = &fp->pi;
	if (sw && n->nports && n->ports[0].have_pi)
		e->cap = &n->ports[0].pi;
	/* the cable module as the last hardware sweep judged it */
	mod = ibw_hw_node_module(ibw_hw_view_find(m->hwview, n->guid), p);
	if (mod)
		e->module = mod->judged;
	/* A record loaded from the state file and not read since is no
	 * reading: its journal may hold it as of a sweep older than the
	 * links' bases (ctr_journal.h), which it would take back. */
	if (!c || !c->updated_us || c->updated_us < m->started_us)
		return;
	/* -1 where the PMA's PortSamplesControl was not read: then the
	 * shortest tick is assumed (docs/links.md). */
	e->tick = ibw_counters_tick(m->ctrs, n->guid);
	e->have_ctrs = 1;
	e->ctr_us = c->updated_us;
	for (k = 0; k < IBW_LERR_MAX; k++) {
		i = m->lerr_ctr[k];
		if (i < 0)
			continue;
		e->err[k] = ibw_ctr_val(c, (enum ibw_ctr)i)->total;
		if (ibw_ctr_val(c, (enum ibw_ctr)i)->saturated)
			e->saturated |= 1u << k;
	}
	e->xmit_wait = c->v[IBW_CTR_XMIT_WAIT].total;
	if (c->v[IBW_CTR_XMIT_WAIT].saturated)
		e->saturated |= IBW_LINK_SAT_XMIT_WAIT;
	e->xmit_bytes = c->v[IBW_CTR_XMIT_DATA].total;
	/* only a reading of this sweep: old totals would add bits without
	 * corrections and thin the raw BER out */
	e->fec = c->fec_fail == IBW_CTR_FAIL_NONE ? c->fec : NULL;
	if (c->have_vl) {
		/* A 16-bit VL wait field stuck at 65535 adds nothing from
		 * then on: its ratio would read 0 on the busiest VL, so the
		 * VL is left out (no ratio) until something clears it. */
		e->vl_mask = 0xffff;
		for (k = 0; k < 16; k++)
			if (c->vl_raw[k] == UINT16_MAX)
				e->vl_mask &= (uint16_t) ~(1u << k);
		memcpy(e->vl_xmit_wait, c->vl_xmit_wait,
		       sizeof(e->vl_xmit_wait));
	}
}

/* The running jobs whose routes cross @k, from the last snapshot's job
 * view: "4711,4712". */
static void affects(struct ibw_monitor *m, const struct ibw_link *k, char *buf,
		    size_t len)
{
	struct ibw_jobview *v = ibw_jobcache_view(m->snap);
	unsigned *ids, n, i;
	size_t at = 0;

	buf[0] = '\0';
	ids = v && v->n ? malloc(v->n * sizeof(*ids)) : NULL;
	if (!ids) {
		ibw_jobview_unref(v);
		return;
	}
	n = ibw_jobview_cable_jobs(v, k->end[0].guid, k->end[0].port,
				   k->end[1].guid, k->end[1].port, ids, v->n);
	for (i = 0; i < n && i < v->n; i++) {
		const char *id = v->jobs[ids[i]].job->id;

		if (at + strlen(id) + 5 >= len) {
			snprintf(buf + at, len - at, "%s...", at ? "," : "");
			break;
		}
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       at ? "," : "", id);
	}
	free(ids);
	ibw_jobview_unref(v);
}

static void on_link_change(const struct ibw_link_change *c, void *arg)
{
	struct ibw_monitor *m = arg;
	const struct ibw_link *k = c->link;
	struct ibw_event e;
	char now[200], was[200], lanes[200];
	int n;

	memset(&e, 0, sizeof(e));
	e.kind = IBW_EVT_LINK_HEALTH_CHANGED;
	e.node_guid = k->end[0].guid;
	e.port = k->end[0].port;
	e.peer_guid = k->end[1].guid;
	e.peer_port = k->end[1].port;
	e.old_value = c->from;
	e.new_value = k->health;
	e.reasons = k->reasons;
	e.old_reasons = c->from_reasons;
	ibw_link_reasons_fmt(k->reasons, now, sizeof(now));
	ibw_link_reasons_fmt(c->from_reasons, was, sizeof(was));
	n = snprintf(e.detail, sizeof(e.detail), "%s (%s) -> %s (%s)",
		     ibw_link_health_str(c->from), was,
		     ibw_link_health_str(k->health), now);
	affects(m, k, e.affects, sizeof(e.affects));
	/* "; " and the lanes the raw BER is on, where one carries it:
	 * agent/mib.c takes them from there for ibwLinkBadLane. */
	if (n > 0 && (size_t)n + 2 < sizeof(e.detail) &&
	    ibw_link_bad_lanes_fmt(k, lanes, sizeof(lanes)) > 0)
		snprintf(e.detail + n, sizeof(e.detail) - (size_t)n, "; %s",
			 lanes);
	ibw_events_add(m->ev, &e);
}

/*
 * Feed the link view one round from the last discovery and the counters'
 * totals: every cable once, both ends discovered with PortInfo. Only a
 * new fabric, a counter sweep or new names make a new round; otherwise
 * the last view stands.
 */
void ibw_monitor_update_links(struct ibw_monitor *m)
{
	const struct ibw_fabric *f = m->fabric;
	struct ibw_link_view *v;
	struct ibw_link_end_in a, b;
	uint64_t now;
	unsigned i, p;

	if (!m->links || !f)
		return;
	if (m->lview && m->lview_discoveries == m->discoveries &&
	    m->lview_sweeps == m->counter_sweeps && !m->lview_dirty)
		return;
	now = ibw_realtime_us();
	ibw_links_begin(m->links, now);
	for (i = 0; i < f->nnodes; i++) {
		const struct ibw_fnode *n = &f->nodes[i];

		if (n->gone)
			continue;
		for (p = 1; p < n->nports; p++) {
			const struct ibw_fport *fp = &n->ports[p];
			const struct ibw_fnode *r;
			const struct ibw_fport *rp;

			if (!fp->have_pi || fp->gone || !fp->remote_guid)
				continue;
			r = ibw_fabric_find(f, fp->remote_guid);
			if (!r || r->gone || !fp->remote_port ||
			    fp->remote_port >= r->nports)
				continue;
			rp = &r->ports[fp->remote_port];
			if (!rp->have_pi || rp->gone)
				continue;
			/* each cable once: from its lower end when both
			 * ends know it */
			if (rp->remote_guid == n->guid &&
			    rp->remote_port == p &&
			    (r->guid < n->guid ||
			     (r->guid == n->guid && fp->remote_port < p)))
				continue;
			link_end(m, n, p, &a);
			link_end(m, r, fp->remote_port, &b);
			if (ibw_links_update(m->links, &a, &b) == -ENOMEM)
				log_err("monitor",
					"out of memory: link "
					"0x%016" PRIx64 "/%u left out",
					n->guid, p);
		}
	}
	v = ibw_links_view(m->links, now);
	if (!v) {
		log_err("monitor", "out of memory: link view not updated");
		return;
	}
	ibw_link_view_changes(m->lview, v, on_link_change, m);
	ibw_link_view_unref(m->lview);
	m->lview = v;
	m->lview_discoveries = m->discoveries;
	m->lview_sweeps = m->counter_sweeps;
	m->lview_dirty = 0;
}

int ibw_monitor_link_history(struct ibw_monitor *m, uint64_t guid,
			     unsigned port, struct ibw_link *k,
			     struct ibw_link_hist *h)
{
	const struct ibw_link *l;

	if (!m->lview || port > 255 ||
	    !(l = ibw_link_view_find(m->lview, guid, (uint8_t)port)))
		return -ENOENT;
	*k = *l;
	return ibw_links_history(m->links, l->end[0].guid, l->end[0].port,
				 l->end[1].guid, l->end[1].port,
				 ibw_realtime_us(), h);
}
