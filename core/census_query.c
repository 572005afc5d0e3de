// SPDX-License-Identifier: BSD-2-Clause
/*
 * The route census's lookups: one route walked hop by hop (a trace from
 * the tables), the hops between two endports, and the pairs listed by
 * what became of their routes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census_int.h"

static void fill_hop(const struct ibw_census *c, struct ibw_hop *h,
		     unsigned nodei, unsigned in, unsigned out)
{
	const struct ibw_fnode *n = node(c, nodei);
	unsigned lp = is_switch(n) ? 0 : in ? in : out;

	memset(h, 0, sizeof(*h));
	h->node_guid = n->guid;
	h->type = n->ni.node_type;
	snprintf(h->name, sizeof(h->name), "%s", n->desc);
	if (lp < n->nports && n->ports[lp].have_pi) {
		h->lid = n->ports[lp].pi.lid;
		h->lmc = n->ports[lp].pi.lmc;
	}
	h->port_guid = lp < n->nports && n->ports[lp].guid ? n->ports[lp].guid
							   : n->ni.port_guid;
	h->in_port = (uint8_t)in;
	h->out_port = (uint8_t)out;
	if (out && out < n->nports) {
		const struct ibw_portinfo *pi = &n->ports[out].pi;

		h->state = pi->state;
		h->width = pi->width_active;
		h->speed = pi->speed_active;
		h->speed_ext = pi->speed_ext_active;
	}
}

static const enum ibw_trace_status trace_status[] = {
	[IBW_ROUTE_OK] = IBW_TRACE_OK,
	[IBW_ROUTE_NO_ENTRY] = IBW_TRACE_NO_ROUTE,
	[IBW_ROUTE_PORT_DOWN] = IBW_TRACE_PORT_DOWN,
	[IBW_ROUTE_LOOP] = IBW_TRACE_LOOP,
	[IBW_ROUTE_DEAD_END] = IBW_TRACE_DEAD_END,
	[IBW_ROUTE_NO_TABLE] = IBW_TRACE_ERROR,
};

static void broke(struct ibw_census_route *r, enum ibw_route_status st,
		  const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void broke(struct ibw_census_route *r, enum ibw_route_status st,
		  const char *fmt, ...)
{
	struct ibw_hop *h = &r->path.hops[r->path.nhops - 1];
	va_list ap;

	r->status = st;
	r->path.status = trace_status[st];
	r->path.fail_hop = r->path.nhops - 1;
	r->break_guid = h->node_guid;
	r->break_port = h->out_port;
	va_start(ap, fmt);
	vsnprintf(r->path.reason, sizeof(r->path.reason), fmt, ap);
	va_end(ap);
}

/* The far end of @flat's link as a hop entered by its port. A CA there
 * ends the route: reached, or a dead end. 1 if it ended. */
static int arrive_ca(const struct ibw_census *c, struct ibw_census_route *r,
		     int32_t peer, uint16_t dlid)
{
	unsigned pn = c->nodeof[peer], pp = (unsigned)peer - c->pbase[pn];
	struct ibw_hop *h;

	if (is_switch(node(c, pn)))
		return 0;
	h = &r->path.hops[r->path.nhops++];
	fill_hop(c, h, pn, pp, 0);
	if (in_range(dlid, h->lid, (uint16_t)(1u << h->lmc))) {
		r->status = IBW_ROUTE_OK;
		r->path.status = IBW_TRACE_OK;
		return 1;
	}
	broke(r, IBW_ROUTE_DEAD_END, "reached CA %s (lid %u), not lid %u",
	      h->name, h->lid, dlid);
	return 1;
}

/* Walk from switch @s, entered by @in, to @dlid (the path so far is in
 * @r). O(hops). */
static void walk(const struct ibw_census *c, struct ibw_census_route *r,
		 unsigned s, unsigned in, uint16_t dlid)
{
	unsigned seen[IBW_TRACE_MAX_HOPS + 2], nseen = 0, i;

	for (;;) {
		struct ibw_hop *h;
		struct step st;

		if (r->path.nhops >= IBW_TRACE_MAX_HOPS + 1) {
			broke(r, IBW_ROUTE_LOOP, "more than %d hops",
			      IBW_TRACE_MAX_HOPS);
			return;
		}
		h = &r->path.hops[r->path.nhops++];
		fill_hop(c, h, c->sw[s].node, in, 0);
		for (i = 0; i < nseen; i++)
			if (seen[i] == s) {
				broke(r, IBW_ROUTE_LOOP,
				      "node 0x%016" PRIx64 " seen twice",
				      h->node_guid);
				return;
			}
		seen[nseen++] = s;
		ibw_cen_step(c, s, dlid, &st);
		if (st.done && st.st == IBW_ROUTE_OK && !st.hops) {
			r->status = IBW_ROUTE_OK;
			r->path.status = IBW_TRACE_OK;
			return;
		}
		if (st.out)
			fill_hop(c, h, c->sw[s].node, in, st.out);
		switch (st.done ? st.st : IBW_ROUTE_OK) {
		case IBW_ROUTE_NO_TABLE:
			broke(r, st.st,
			      "the forwarding table of %s was not read",
			      h->name);
			return;
		case IBW_ROUTE_NO_ENTRY:
			broke(r, st.st, "%s has no route to lid %u", h->name,
			      dlid);
			return;
		case IBW_ROUTE_PORT_DOWN:
			if (!active(&node(c, c->sw[s].node)->ports[st.out]))
				broke(r, st.st, "%s port %u is %s", h->name,
				      st.out, ibw_port_state_str(h->state));
			else
				broke(r, st.st, "%s port %u has no link",
				      h->name, st.out);
			return;
		default:
			break;
		}
		r->hops++;
		if (st.done) {
			arrive_ca(c, r,
				  c->peer[c->pbase[c->sw[s].node] + st.out],
				  dlid);
			return;
		}
		s = (unsigned)st.next;
		in = st.next_in;
	}
}

/* The shortest hops from @l's port to @dlid: 0 when unknown. */
static unsigned min_hops(const struct ibw_census *c, const struct rlid *src,
			 uint16_t dlid)
{
	const struct rlid *d = ibw_cen_find_lid(c, dlid);
	int32_t ssw, dsw;
	unsigned extra = 0, dd;

	if (!d)
		return 0;
	if (is_switch(node(c, src->node))) {
		ssw = c->swof[src->node];
	} else {
		int32_t peer = link_of(c, c->pbase[src->node] + src->port);

		if (peer < 0)
			return 0;
		if (!is_switch(node(c, c->nodeof[peer])))
			return (unsigned)peer == c->pbase[d->node] + d->port;
		ssw = c->swof[c->nodeof[peer]];
		extra++;
	}
	if (is_switch(node(c, d->node))) {
		dsw = c->swof[d->node];
	} else {
		int32_t peer = link_of(c, c->pbase[d->node] + d->port);

		if (peer < 0 || !is_switch(node(c, c->nodeof[peer])))
			return 0;
		dsw = c->swof[c->nodeof[peer]];
		extra++;
	}
	dd = c->dist[(size_t)ssw * c->nsw + (unsigned)dsw];
	return dd == NO_DIST ? 0 : dd + extra;
}

void ibw_cen_lookup_from(const struct ibw_census *c, const struct rlid *src,
			 uint16_t dlid, struct ibw_census_route *r)
{
	struct ibw_hop *h;
	int32_t peer;

	memset(r, 0, sizeof(*r));
	if (is_switch(node(c, src->node))) {
		walk(c, r, (unsigned)c->swof[src->node], 0, dlid);
	} else {
		h = &r->path.hops[r->path.nhops++];
		fill_hop(c, h, src->node, 0, src->port);
		if (in_range(dlid, src->lid, src->span)) {
			h->out_port = 0; /* to itself */
			r->path.status = IBW_TRACE_OK;
		} else if ((peer = link_of(c, c->pbase[src->node] +
						      src->port)) < 0) {
			if (!active(&node(c, src->node)->ports[src->port]))
				broke(r, IBW_ROUTE_PORT_DOWN,
				      "%s port %u is %s", h->name, src->port,
				      ibw_port_state_str(h->state));
			else
				broke(r, IBW_ROUTE_PORT_DOWN,
				      "%s port %u has no link", h->name,
				      src->port);
		} else if (r->hops++, !arrive_ca(c, r, peer, dlid)) {
			walk(c, r, (unsigned)c->swof[c->nodeof[peer]],
			     (unsigned)peer - c->pbase[c->nodeof[peer]], dlid);
		}
	}
	r->min_hops = min_hops(c, src, dlid);
	r->minimal = r->status == IBW_ROUTE_OK &&
		     (!r->min_hops || r->hops <= r->min_hops);
}

int ibw_census_lookup(const struct ibw_census *c, uint16_t slid, uint16_t dlid,
		      struct ibw_census_route *r)
{
	const struct rlid *src = ibw_cen_find_lid(c, slid);

	if (!src)
		return -ENOENT;
	ibw_cen_lookup_from(c, src, dlid, r);
	return 0;
}

static void fill_pair(const struct ibw_census *c, unsigned i, unsigned k,
		      uint16_t v, struct ibw_route_pair *p)
{
	const struct rep *e = &c->ep[i], *d = &c->ep[c->dst[k].ep];
	struct rlid src;
	struct ibw_census_route r;

	memset(p, 0, sizeof(*p));
	p->src_guid = node(c, e->node)->guid;
	p->src_port = e->port;
	p->slid = e->lid;
	p->dst_guid = node(c, d->node)->guid;
	p->dst_port = d->port;
	p->dlid = c->dst[k].lid;
	p->status = O_STATUS(v);
	p->hops = O_HOPS(v);
	src.lid = e->lid;
	src.span = e->span;
	src.node = e->node;
	src.port = e->port;
	p->min_hops = min_hops(c, &src, p->dlid);
	if (p->status != IBW_ROUTE_OK) {
		/* where it breaks: walk it (only for the pairs listed) */
		ibw_cen_lookup_from(c, &src, p->dlid, &r);
		p->hops = r.hops;
		p->break_guid = r.break_guid;
		p->break_port = r.break_port;
	}
}

static int selected(unsigned sel, uint16_t v)
{
	if (sel & IBW_CENSUS_SEL(O_STATUS(v)))
		return 1;
	return (sel & IBW_CENSUS_SEL_NON_MINIMAL) &&
	       O_STATUS(v) == IBW_ROUTE_OK && !(v & O_MIN);
}

unsigned ibw_census_pairs(const struct ibw_census *c, unsigned sel,
			  uint64_t skip, struct ibw_route_pair *out,
			  unsigned max, uint64_t *total)
{
	unsigned dmask = sel & 0x3fu, k, i, n = 0;
	uint64_t seen = 0;

	if (sel & IBW_CENSUS_SEL_NON_MINIMAL)
		dmask |= DSEL_NON_MINIMAL;
	for (k = 0; k < c->ndst; k++) {
		if (!(c->dsel[k] & dmask))
			continue;
		for (i = 0; i < c->nep; i++) {
			uint16_t v;

			if (i == c->dst[k].ep)
				continue;
			v = ibw_cen_pair_outcome(c, i, k);
			if (!selected(sel, v))
				continue;
			if (seen++ < skip || n >= max) {
				if (!total && n >= max)
					return n;
				continue;
			}
			fill_pair(c, i, k, v, &out[n++]);
		}
	}
	if (total)
		*total = seen;
	return n;
}

/* Diffs. */
