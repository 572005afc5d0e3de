// SPDX-License-Identifier: BSD-2-Clause
/*
 * Two route censuses compared: the events a new one brings (routes lost
 * and found, loads moved), with examples of the pairs behind them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census_int.h"

static int cmp_ep_key(uint64_t g1, uint8_t p1, uint64_t g2, uint8_t p2)
{
	if (g1 != g2)
		return g1 < g2 ? -1 : 1;
	return (p1 > p2) - (p1 < p2);
}

/* The endport of @c with the node GUID and port, or -1. */
static int find_ep(const struct ibw_census *c, uint64_t guid, uint8_t port)
{
	unsigned lo = 0, hi = c->nep;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		int r = cmp_ep_key(node(c, c->ep[mid].node)->guid,
				   c->ep[mid].port, guid, port);

		if (!r)
			return (int)mid;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

struct examples {
	char buf[sizeof(((struct ibw_event *)0)->detail)];
	size_t off;
	unsigned n, max;
	uint64_t guid; /* where the first example breaks */
	uint8_t port;
};

static void example(struct examples *ex, const struct ibw_census *c, unsigned i,
		    unsigned k)
{
	const struct rep *e = &c->ep[i];
	const struct ibw_fnode *sn = node(c, e->node);
	struct rlid src;
	struct ibw_census_route r;
	const struct ibw_fnode *bn;
	int w;

	if (ex->n >= ex->max || ex->off + 1 >= sizeof(ex->buf))
		return;
	src.lid = e->lid;
	src.span = e->span;
	src.node = e->node;
	src.port = e->port;
	ibw_cen_lookup_from(c, &src, c->dst[k].lid, &r);
	bn = ibw_fabric_find(c->f, r.break_guid);
	if (r.status == IBW_ROUTE_OK)
		w = snprintf(ex->buf + ex->off, sizeof(ex->buf) - ex->off,
			     "%s%s[%u] (lid %u) -> lid %u: %u hops",
			     ex->n ? "; " : "", sn->desc, e->port, e->lid,
			     c->dst[k].lid, r.hops);
	else if (r.status == IBW_ROUTE_PORT_DOWN)
		w = snprintf(ex->buf + ex->off, sizeof(ex->buf) - ex->off,
			     "%s%s[%u] (lid %u) -> lid %u: port down at %s[%u]",
			     ex->n ? "; " : "", sn->desc, e->port, e->lid,
			     c->dst[k].lid, bn ? bn->desc : "?", r.break_port);
	else
		w = snprintf(ex->buf + ex->off, sizeof(ex->buf) - ex->off,
			     "%s%s[%u] (lid %u) -> lid %u: %s at %s",
			     ex->n ? "; " : "", sn->desc, e->port, e->lid,
			     c->dst[k].lid, ibw_route_status_str(r.status),
			     bn ? bn->desc : "?");
	if (w < 0)
		return;
	ex->off += (size_t)w;
	if (ex->off >= sizeof(ex->buf))
		ex->off = sizeof(ex->buf) - 1;
	if (!ex->n++) {
		ex->guid = r.break_guid;
		ex->port = r.break_port;
	}
}

static void emit(struct ibw_events *ev, enum ibw_event_kind kind,
		 uint64_t old_v, uint64_t new_v, const struct examples *ex)
{
	struct ibw_event e;

	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.node_guid = ex->guid;
	e.port = ex->port;
	e.old_value = old_v;
	e.new_value = new_v;
	snprintf(e.detail, sizeof(e.detail), "%s", ex->buf);
	ibw_events_add(ev, &e);
}

static const struct ibw_switch_balance *find_bal(const struct ibw_census *c,
						 uint64_t guid)
{
	unsigned lo = 0, hi = c->nbal;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (c->bal[mid].guid == guid)
			return &c->bal[mid];
		if (c->bal[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void load_event(const struct ibw_census *c, uint64_t guid,
		       const struct ibw_switch_balance *a,
		       const struct ibw_switch_balance *b,
		       struct ibw_events *ev)
{
	const struct ibw_fnode *n = ibw_fabric_find(c->f, guid);
	struct ibw_event e;

	memset(&e, 0, sizeof(e));
	e.kind = IBW_EVT_ROUTE_LOAD;
	e.node_guid = guid;
	e.old_value = a ? a->up_max : 0;
	e.new_value = b ? b->up_max : 0;
	snprintf(e.what, sizeof(e.what), "uplinks");
	snprintf(e.detail, sizeof(e.detail),
		 "%s: %u uplinks carry %u..%u routes (was %u carrying %u..%u)",
		 n ? n->desc : "?", b ? b->uplinks : 0, b ? b->up_min : 0,
		 b ? b->up_max : 0, a ? a->uplinks : 0, a ? a->up_min : 0,
		 a ? a->up_max : 0);
	ibw_events_add(ev, &e);
}

/* Switches whose uplinks changed in number, or whose most loaded uplink
 * carries more than load_rise more. */
static unsigned load_events(const struct ibw_census *old,
			    const struct ibw_census *cur,
			    const struct ibw_census_diff_opts *o,
			    struct ibw_census_delta *dl, struct ibw_events *ev)
{
	double rise = o && o->load_rise > 0 ? o->load_rise : 0.10;
	unsigned i, nev = 0;

	for (i = 0; i < cur->nbal; i++) {
		const struct ibw_switch_balance *b = &cur->bal[i];
		const struct ibw_switch_balance *a = find_bal(old, b->guid);

		if (!a && !ibw_fabric_find(old->f, b->guid))
			continue; /* a new switch */
		if (a && a->uplinks == b->uplinks &&
		    b->up_max <= a->up_max * (1.0 + rise))
			continue;
		dl->load_changed++;
		if (ev) {
			load_event(cur, b->guid, a, b, ev);
			nev++;
		}
	}
	/* ... and those left without an uplink */
	for (i = 0; i < old->nbal; i++) {
		const struct ibw_fnode *n =
			ibw_fabric_find(cur->f, old->bal[i].guid);

		if (!n || n->gone || find_bal(cur, old->bal[i].guid))
			continue;
		dl->load_changed++;
		if (ev) {
			load_event(cur, old->bal[i].guid, &old->bal[i], NULL,
				   ev);
			nev++;
		}
	}
	return nev;
}

unsigned ibw_census_diff(const struct ibw_census *old,
			 const struct ibw_census *cur,
			 const struct ibw_census_diff_opts *o,
			 struct ibw_census_delta *d, struct ibw_events *ev)
{
	struct ibw_census_delta dl;
	struct examples lost, back, loops;
	double thr = o && o->balance_threshold > 0 ? o->balance_threshold
						   : 1.25;
	unsigned max = o && o->examples ? o->examples : 4;
	unsigned i, k, nev = 0;
	int *map = NULL;

	memset(&dl, 0, sizeof(dl));
	memset(&lost, 0, sizeof(lost));
	memset(&back, 0, sizeof(back));
	memset(&loops, 0, sizeof(loops));
	lost.max = back.max = loops.max = max;
	if (!old || !cur)
		goto done;
	/* cur's endports in old */
	map = calloc(cur->nep ? cur->nep : 1, sizeof(*map));
	if (!map)
		goto done;
	for (i = 0; i < cur->nep; i++)
		map[i] = find_ep(old, node(cur, cur->ep[i].node)->guid,
				 cur->ep[i].port);
	for (k = 0; k < cur->ndst; k++) {
		unsigned de = cur->dst[k].ep, off;
		int od = map[de];
		unsigned ok;

		if (od < 0)
			continue;
		off = cur->dst[k].lid - cur->ep[de].lid;
		if (off >= old->ep[od].span)
			continue;
		ok = old->ep[od].first_dst + off;
		for (i = 0; i < cur->nep; i++) {
			enum ibw_route_status a, b;

			if (i == de || map[i] < 0)
				continue;
			a = O_STATUS(ibw_cen_pair_outcome(old, (unsigned)map[i],
							  ok));
			b = O_STATUS(ibw_cen_pair_outcome(cur, i, k));
			dl.compared++;
			if (a == b)
				continue;
			if (a == IBW_ROUTE_OK) {
				dl.lost++;
				example(&lost, cur, i, k);
			} else if (b == IBW_ROUTE_OK) {
				dl.restored++;
				example(&back, cur, i, k);
			}
			if (b == IBW_ROUTE_LOOP) {
				dl.new_loops++;
				example(&loops, cur, i, k);
			}
		}
	}
	if (ev && dl.lost) {
		emit(ev, IBW_EVT_ROUTES_LOST, old->sum.routed, dl.lost, &lost);
		nev++;
	}
	if (ev && dl.restored) {
		emit(ev, IBW_EVT_ROUTES_RESTORED,
		     old->sum.pairs - old->sum.routed, dl.restored, &back);
		nev++;
	}
	if (ev && dl.new_loops) {
		emit(ev, IBW_EVT_ROUTE_LOOPS, old->sum.looping, dl.new_loops,
		     &loops);
		nev++;
	}
	nev += load_events(old, cur, o, &dl, ev);
	for (i = 0; i < cur->nbal; i++) {
		const struct ibw_switch_balance *b = &cur->bal[i];
		const struct ibw_switch_balance *a = find_bal(old, b->guid);
		const struct ibw_fnode *n;
		struct ibw_event e;

		if (b->max_mean <= thr || (a && a->max_mean > thr))
			continue;
		dl.balance_worse++;
		if (!ev)
			continue;
		n = ibw_fabric_find(cur->f, b->guid);
		memset(&e, 0, sizeof(e));
		e.kind = IBW_EVT_ROUTE_BALANCE;
		e.node_guid = b->guid;
		e.old_value = a ? (uint64_t)(a->max_mean * 1000 + 0.5) : 0;
		e.new_value = (uint64_t)(b->max_mean * 1000 + 0.5);
		snprintf(e.what, sizeof(e.what), "uplinks");
		snprintf(e.detail, sizeof(e.detail),
			 "%s: %u uplinks carry %u..%u routes, max/mean %.2f "
			 "(was %.2f), cv %.2f",
			 n ? n->desc : "?", b->uplinks, b->up_min, b->up_max,
			 b->max_mean, a ? a->max_mean : 0.0, b->cv);
		ibw_events_add(ev, &e);
		nev++;
	}
done:
	free(map);
	if (d)
		*d = dl;
	return nev;
}
