// SPDX-License-Identifier: BSD-2-Clause
/*
 * The monitor's watched traces: the paths it traces every
 * trace-interval (--watch), each target resolved by name, GUID or LID in
 * the fabric of the last discovery, and an event when a path changes.
 * The round's end is the caller's (monitor.c): it calls nothing there.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "loop.h"
#include "monitor_int.h"

struct wctx {
	struct ibw_monitor *m;
	unsigned i;
};

static void on_watched(const struct ibw_trace *t, void *arg)
{
	struct wctx *w = arg;
	struct ibw_monitor *m = w->m;
	struct ibw_watched *wp = &m->watched[w->i];

	free(w);
	if (t->cancelled) {
		m->trace_pending--;
		return;
	}
	if (t->fwd.status == IBW_TRACE_OK && wp->have_good &&
	    !ibw_path_equal(&wp->good, &t->fwd)) {
		struct ibw_event e;
		char a[240], b[240];

		memset(&e, 0, sizeof(e));
		e.kind = IBW_EVT_PATH_CHANGED;
		e.new_value = t->dlid;
		e.old_value = wp->last.dlid;
		snprintf(e.what, sizeof(e.what), "%.47s", wp->target);
		ibw_path_str(&wp->good, a, sizeof(a));
		ibw_path_str(&t->fwd, b, sizeof(b));
		snprintf(e.detail, sizeof(e.detail), "%s (ok) -> %s (ok)", a,
			 b);
		ibw_events_add(m->ev, &e);
		wp->changes++;
	}
	if (t->fwd.status == IBW_TRACE_OK) {
		wp->good = t->fwd;
		wp->have_good = 1;
	}
	wp->last = *t;
	wp->have = 1;
	wp->traces++;
	wp->last_us = ibw_realtime_us();
	if (--m->trace_pending == 0)
		m->trace_done(m);
}

/* The LID of the endport @t (a GUID or a name) names among the last
 * discovery's nodes whose gone flag is @gone; 0 if none. */
static uint16_t resolve_in(struct ibw_monitor *m, const char *t, int gone)
{
	const struct ibw_fnode *n;
	char *end;
	unsigned long long v = strtoull(t, &end, 0);
	unsigned i, p;

	for (i = 0; m->fabric && i < m->fabric->nnodes; i++) {
		n = &m->fabric->nodes[i];
		if (!n->gone != !gone)
			continue;
		for (p = 0; p < n->nports; p++) {
			const struct ibw_fport *fp = &n->ports[p];
			int match = (*t && !*end)
					    ? (fp->guid == v || n->guid == v)
					    : !strcmp(ibw_namemap_name(m->names,
								       n->guid,
								       n->desc),
						      t) ||
						      !strcmp(n->desc, t);

			if (match && fp->have_pi && fp->pi.lid &&
			    ibw_fabric_endport(n, p))
				return fp->pi.lid;
		}
	}
	return 0;
}

/* A LID as itself; else the endport @t names, live first, then one a
 * discovery lost at its last LID: asking a host that just went away
 * answers "no answer" (504), not "unknown target". */
uint16_t ibw_monitor_resolve(struct ibw_monitor *m, const char *t)
{
	char *end;
	unsigned long long v;
	uint16_t lid;

	v = strtoull(t, &end, 0);
	if (*t && !*end && strncmp(t, "0x", 2) && v && v < 0xc000)
		return (uint16_t)v;
	lid = resolve_in(m, t, 0);
	return lid ? lid : resolve_in(m, t, 1);
}

void ibw_mon_start_watched(struct ibw_monitor *m,
			   void (*done)(struct ibw_monitor *m))
{
	unsigned i;

	if (m->trace_pending)
		return;
	m->trace_done = done;
	for (i = 0; i < m->o.nwatch; i++) {
		struct ibw_watched *wp = &m->watched[i];
		struct wctx *w;
		uint16_t lid = ibw_monitor_resolve(m, wp->target);

		if (lid)
			wp->lid = lid;
		if (!wp->lid)
			continue;
		w = calloc(1, sizeof(*w));
		if (!w)
			continue;
		w->m = m;
		w->i = i;
		/* Watched paths read every forwarding table afresh: they
		 * are there to notice changes. */
		if (ibw_trace_start(m->tracer, wp->lid, IBW_TRACE_NOCACHE, 0,
				    on_watched, w) < 0) {
			free(w);
			continue;
		}
		m->trace_pending++;
	}
	if (!m->trace_pending)
		m->trace_done(m);
}
