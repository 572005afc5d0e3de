// SPDX-License-Identifier: BSD-2-Clause
/*
 * The route census computed: every endport's route to every destination
 * LID from the switches' forwarding tables (outcomes, hops, whether
 * minimal), the links' loads and the switches' and tiers' balance; and
 * its accessors. Lookups are census_query.c's, comparisons
 * census_diff.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "census_int.h"

static const char *const status_names[] = {
	[IBW_ROUTE_OK] = "ok",
	[IBW_ROUTE_NO_ENTRY] = "no entry",
	[IBW_ROUTE_PORT_DOWN] = "port down",
	[IBW_ROUTE_LOOP] = "loop",
	[IBW_ROUTE_DEAD_END] = "dead end",
	[IBW_ROUTE_NO_TABLE] = "no table",
};

static const char *const status_keys[] = {
	[IBW_ROUTE_OK] = "ok",
	[IBW_ROUTE_NO_ENTRY] = "no_entry",
	[IBW_ROUTE_PORT_DOWN] = "port_down",
	[IBW_ROUTE_LOOP] = "loop",
	[IBW_ROUTE_DEAD_END] = "dead_end",
	[IBW_ROUTE_NO_TABLE] = "no_table",
};

const char *ibw_route_status_str(enum ibw_route_status s)
{
	return (unsigned)s < IBW_ROUTE_STATUS_MAX ? status_names[s] : "unknown";
}

const char *ibw_route_status_key(enum ibw_route_status s)
{
	return (unsigned)s < IBW_ROUTE_STATUS_MAX ? status_keys[s] : "unknown";
}

/* Allocation that counts towards the census's memory. */
static void *zalloc(struct ibw_census *c, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (p)
		c->sum.memory_bytes += (n ? n : 1) * size;
	return p;
}

void ibw_cen_step(const struct ibw_census *c, unsigned s, uint16_t dlid,
		  struct step *r)
{
	const struct rsw *w = &c->sw[s];
	const struct ibw_fnode *n = node(c, w->node);
	unsigned flat;
	int32_t peer;
	const struct ibw_fnode *pn;
	const struct ibw_fport *pp;

	memset(r, 0, sizeof(*r));
	r->done = 1;
	r->next = -1;
	if (in_range(dlid, w->lid, w->span)) {
		r->st = IBW_ROUTE_OK;
		return;
	}
	if (!w->t || !w->t->ports) {
		r->st = IBW_ROUTE_NO_TABLE;
		return;
	}
	r->out = ibw_lft_port(w->t, dlid);
	/* 0 would be the switch itself, which @dlid is not. */
	if (r->out == 0xff || !r->out || r->out >= n->nports) {
		r->st = IBW_ROUTE_NO_ENTRY;
		return;
	}
	flat = c->pbase[w->node] + r->out;
	peer = link_of(c, flat);
	if (peer < 0) {
		r->st = IBW_ROUTE_PORT_DOWN;
		return;
	}
	pn = node(c, c->nodeof[peer]);
	if (is_switch(pn)) {
		r->done = 0;
		r->next = c->swof[c->nodeof[peer]];
		r->next_in = (unsigned)peer - c->pbase[c->nodeof[peer]];
		return;
	}
	pp = fport(c, (unsigned)peer);
	r->hops = 1;
	r->st = pp->have_pi && in_range(dlid, pp->pi.lid, 1u << pp->pi.lmc)
			? IBW_ROUTE_OK
			: IBW_ROUTE_DEAD_END;
}

static uint16_t enc(enum ibw_route_status st, unsigned hops, int minimal)
{
	if (hops > O_MAXHOPS)
		hops = O_MAXHOPS;
	return (uint16_t)(st | (minimal ? O_MIN : 0) | hops << 4);
}

/* Work space of one computation. */
struct ctx {
	struct ibw_census *c;
	uint32_t *mark;
	uint32_t stamp;
	unsigned *chain;
	uint64_t *acc;
	unsigned *order, *bucket;
	uint32_t *okd; /* per switch: destinations routed from it */
};

/* Minimal: @hops from switch @s equals the topology's shortest. */
static int minimal_from(const struct ibw_census *c, unsigned s, int32_t dsw,
			unsigned hops, unsigned last)
{
	unsigned d;

	if (dsw < 0)
		return 1; /* no shorter way known */
	d = c->dist[(size_t)s * c->nsw + (unsigned)dsw];
	return d != NO_DIST && hops <= d + last;
}

/* The outcome of every switch on the way from @s to destination @k,
 * memoised in column @o. */
static void resolve(struct ctx *x, uint16_t *o, unsigned k, unsigned s)
{
	struct ibw_census *c = x->c;
	uint16_t dlid = c->dst[k].lid;
	int32_t dsw = c->ep[c->dst[k].ep].sw;
	unsigned n = 0, cur = s, hops;
	enum ibw_route_status st;
	struct step r;

	x->stamp++;
	for (;;) {
		if (o[cur] != O_UNSET) {
			st = O_STATUS(o[cur]);
			hops = O_HOPS(o[cur]);
			break;
		}
		if (x->mark[cur] == x->stamp) {
			st = IBW_ROUTE_LOOP;
			hops = 0;
			break;
		}
		x->mark[cur] = x->stamp;
		ibw_cen_step(c, cur, dlid, &r);
		if (r.done) {
			st = r.st;
			hops = r.hops;
			o[cur] =
				enc(st, hops,
				    st == IBW_ROUTE_OK &&
					    minimal_from(c, cur, dsw, hops, 1));
			break;
		}
		x->chain[n++] = cur;
		cur = (unsigned)r.next;
	}
	while (n--) {
		cur = x->chain[n];
		hops++;
		o[cur] = enc(st, hops,
			     st == IBW_ROUTE_OK &&
				     minimal_from(c, cur, dsw, hops, 1));
	}
}

/* A pair whose source does not hang off a switch: its own port down, no
 * link, or a CA across the link. */
static uint16_t direct(const struct ibw_census *c, const struct rep *e,
		       uint16_t dlid)
{
	int32_t peer = link_of(c, e->flat);
	const struct ibw_fport *pp;

	if (peer < 0)
		return enc(IBW_ROUTE_PORT_DOWN, 0, 0);
	if (is_switch(node(c, c->nodeof[peer])))
		return enc(IBW_ROUTE_NO_TABLE, 1, 0); /* not reached */
	pp = fport(c, (unsigned)peer);
	if (pp->have_pi && in_range(dlid, pp->pi.lid, 1u << pp->pi.lmc))
		return enc(IBW_ROUTE_OK, 1, 1);
	return enc(IBW_ROUTE_DEAD_END, 1, 0);
}

/* The outcome of pair (endport @i, destination @k). Hops from the
 * source port. */
uint16_t ibw_cen_pair_outcome(const struct ibw_census *c, unsigned i,
			      unsigned k)
{
	const struct rep *e = &c->ep[i];
	uint16_t v;

	if (e->sw < 0)
		return direct(c, e, c->dst[k].lid);
	v = c->out8 ? c->out8[(size_t)k * c->nsw + (unsigned)e->sw]
		    : c->out[(size_t)k * c->nsw + (unsigned)e->sw];
	return (uint16_t)((v & 0xfu) | (O_HOPS(v) + 1u) << 4);
}

static int cmp_lid(const void *a, const void *b)
{
	const struct rlid *x = a, *y = b;

	return (x->lid > y->lid) - (x->lid < y->lid);
}

const struct rlid *ibw_cen_find_lid(const struct ibw_census *c, uint16_t lid)
{
	unsigned lo = 0, hi = c->nlids;

	if (!lid)
		return NULL;
	/* the last range starting at or below @lid */
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (c->lids[mid].lid <= lid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || !in_range(lid, c->lids[lo - 1].lid, c->lids[lo - 1].span))
		return NULL;
	return &c->lids[lo - 1];
}

static int build_index(struct ibw_census *c)
{
	const struct ibw_fabric *f = c->f;
	unsigned i, p, flat = 0;

	c->nnodes = f->nnodes;
	c->pbase = zalloc(c, f->nnodes + 1, sizeof(*c->pbase));
	c->swof = zalloc(c, f->nnodes, sizeof(*c->swof));
	if (!c->pbase || !c->swof)
		return -ENOMEM;
	for (i = 0; i < f->nnodes; i++) {
		c->pbase[i] = flat;
		flat += f->nodes[i].nports;
		c->swof[i] = -1;
	}
	c->pbase[f->nnodes] = flat;
	c->nflat = flat;
	c->nodeof = zalloc(c, flat, sizeof(*c->nodeof));
	c->peer = zalloc(c, flat, sizeof(*c->peer));
	c->load = zalloc(c, flat, sizeof(*c->load));
	c->sw = zalloc(c, f->nnodes, sizeof(*c->sw));
	c->lids = zalloc(c, flat, sizeof(*c->lids));
	if (!c->nodeof || !c->peer || !c->load || !c->sw || !c->lids)
		return -ENOMEM;
	for (i = 0; i < f->nnodes; i++) {
		const struct ibw_fnode *n = &f->nodes[i];

		for (p = 0; p < n->nports; p++) {
			const struct ibw_fport *fp = &n->ports[p];
			const struct ibw_fnode *rn;
			unsigned at = c->pbase[i] + p;

			c->nodeof[at] = i;
			c->peer[at] = -1;
			if (n->gone || !fp->remote_guid)
				continue;
			rn = ibw_fabric_find(f, fp->remote_guid);
			if (!rn || rn->gone || fp->remote_port >= rn->nports)
				continue;
			c->peer[at] = (int32_t)(c->pbase[rn - f->nodes] +
						fp->remote_port);
		}
	}
	/* switches and LID ranges */
	for (i = 0; i < f->nnodes; i++) {
		const struct ibw_fnode *n = &f->nodes[i];

		if (n->gone)
			continue;
		for (p = 0; p < n->nports; p++) {
			const struct ibw_fport *fp = &n->ports[p];
			struct rlid *l;

			if (!ibw_fabric_endport_lid(n, p))
				continue;
			l = &c->lids[c->nlids++];
			l->lid = fp->pi.lid;
			l->span = (uint16_t)(1u << fp->pi.lmc);
			l->node = i;
			l->port = (uint8_t)p;
		}
		if (is_switch(n)) {
			struct rsw *w = &c->sw[c->nsw];

			w->node = i;
			w->t = ibw_lft_find(c->t, n->guid);
			if (n->nports && n->ports[0].have_pi) {
				w->lid = n->ports[0].pi.lid;
				w->span = (uint16_t)(1u << n->ports[0].pi.lmc);
			}
			w->tier = NO_TIER;
			if (!w->t || !w->t->ports)
				c->sum.tables_missing++;
			else if (w->t->stale)
				c->sum.tables_stale++;
			c->swof[i] = (int32_t)c->nsw++;
		}
	}
	qsort(c->lids, c->nlids, sizeof(*c->lids), cmp_lid);
	c->sum.switches = c->nsw;
	return 0;
}

static int build_endports(struct ibw_census *c)
{
	const struct ibw_fabric *f = c->f;
	unsigned i, p, n = 0, d = 0;

	for (i = 0; i < c->nlids; i++)
		if (!is_switch(node(c, c->lids[i].node)))
			n++;
	c->ep = zalloc(c, n, sizeof(*c->ep));
	c->abn = zalloc(c, n, sizeof(*c->abn));
	if (!c->ep || !c->abn)
		return -ENOMEM;
	/* In (node GUID, port) order: the fabric's node order. */
	for (i = 0; i < f->nnodes; i++) {
		const struct ibw_fnode *fn = &f->nodes[i];

		if (fn->gone || is_switch(fn))
			continue;
		for (p = 1; p < fn->nports; p++) {
			const struct ibw_fport *fp = &fn->ports[p];
			struct rep *e;
			int32_t peer;

			/* Routes between ports that are up: a port that is
			 * down (a second port not cabled, with a LID left
			 * from before) is the port's news, not the
			 * routing's. */
			if (!fp->have_pi || !fp->pi.lid || !active(fp))
				continue;
			e = &c->ep[c->nep];
			e->node = i;
			e->port = (uint8_t)p;
			e->lid = fp->pi.lid;
			e->span = (uint16_t)(1u << fp->pi.lmc);
			if (e->lid + e->span > 0xc000u)
				e->span = (uint16_t)(0xc000u - e->lid);
			e->flat = c->pbase[i] + p;
			e->first_dst = d;
			d += e->span;
			e->sw = -1;
			peer = link_of(c, e->flat);
			if (peer >= 0 && is_switch(node(c, c->nodeof[peer])))
				e->sw = c->swof[c->nodeof[peer]];
			if (e->sw >= 0)
				c->sw[e->sw].nsrc++;
			else
				c->abn[c->nabn++] = c->nep;
			c->nep++;
		}
	}
	c->dst = zalloc(c, d, sizeof(*c->dst));
	if (!c->dst)
		return -ENOMEM;
	for (i = 0; i < c->nep; i++)
		for (p = 0; p < c->ep[i].span; p++) {
			c->dst[c->ndst].lid = (uint16_t)(c->ep[i].lid + p);
			c->dst[c->ndst++].ep = i;
		}
	c->sum.sources = c->nep;
	c->sum.dlids = c->ndst;
	return 0;
}

/* Out-edges of the switch graph: active links between two switches. */
struct graph {
	unsigned *first; /* nsw + 1 */
	unsigned *to;
	unsigned *port; /* the out port of each edge */
};

static void graph_free(struct graph *g)
{
	free(g->first);
	free(g->to);
	free(g->port);
}

static int build_graph(const struct ibw_census *c, struct graph *g)
{
	unsigned s, p, m = 0;

	memset(g, 0, sizeof(*g));
	g->first = calloc(c->nsw + 1, sizeof(*g->first));
	g->to = calloc(c->nflat ? c->nflat : 1, sizeof(*g->to));
	g->port = calloc(c->nflat ? c->nflat : 1, sizeof(*g->port));
	if (!g->first || !g->to || !g->port) {
		graph_free(g);
		return -ENOMEM;
	}
	for (s = 0; s < c->nsw; s++) {
		const struct ibw_fnode *n = node(c, c->sw[s].node);

		g->first[s] = m;
		for (p = 1; p < n->nports; p++) {
			int32_t peer = link_of(c, c->pbase[c->sw[s].node] + p);

			if (peer < 0 || c->swof[c->nodeof[peer]] < 0)
				continue;
			g->to[m] = (unsigned)c->swof[c->nodeof[peer]];
			g->port[m++] = p;
		}
	}
	g->first[c->nsw] = m;
	return 0;
}

/* Shortest switch hops from every switch to every other, and tiers. */
static int distances(struct ibw_census *c, const struct graph *g)
{
	unsigned *queue = calloc(c->nsw ? c->nsw : 1, sizeof(*queue));
	unsigned s, head, tail, e;

	c->dist = zalloc(c, (size_t)c->nsw * c->nsw, 1);
	if (!queue || !c->dist) {
		free(queue);
		return -ENOMEM;
	}
	memset(c->dist, NO_DIST, (size_t)c->nsw * c->nsw);
	for (s = 0; s < c->nsw; s++) {
		uint8_t *d = &c->dist[(size_t)s * c->nsw];

		d[s] = 0;
		head = tail = 0;
		queue[tail++] = s;
		while (head < tail) {
			unsigned u = queue[head++];

			if (d[u] >= NO_DIST - 1)
				continue;
			for (e = g->first[u]; e < g->first[u + 1]; e++)
				if (d[g->to[e]] == NO_DIST) {
					d[g->to[e]] = (uint8_t)(d[u] + 1);
					queue[tail++] = g->to[e];
				}
		}
	}
	/* Tiers: breadth first from every switch with a CA attached. */
	head = tail = 0;
	for (s = 0; s < c->nsw; s++)
		if (c->sw[s].nsrc) {
			c->sw[s].tier = 0;
			queue[tail++] = s;
		}
	while (head < tail) {
		unsigned u = queue[head++];

		for (e = g->first[u]; e < g->first[u + 1]; e++)
			if (c->sw[g->to[e]].tier == NO_TIER &&
			    c->sw[u].tier + 1u < NO_TIER) {
				c->sw[g->to[e]].tier =
					(uint8_t)(c->sw[u].tier + 1);
				queue[tail++] = g->to[e];
			}
	}
	free(queue);
	return 0;
}

/* The outcomes in a byte each, if every hop count fits (fat trees: six
 * at most); else, or without the memory, they stay as they are. */
static void compact_out(struct ibw_census *c)
{
	size_t i, n = (size_t)c->ndst * c->nsw;
	uint8_t *b;

	for (i = 0; i < n; i++)
		if (c->out[i] > 0xffu)
			return;
	b = malloc(n ? n : 1);
	if (!b)
		return;
	for (i = 0; i < n; i++)
		b[i] = (uint8_t)c->out[i];
	free(c->out);
	c->out = NULL;
	c->out8 = b;
	c->sum.memory_bytes -= n;
}

/* Counts and loads for destination @k, whose column is resolved. */
static void tally(struct ctx *x, unsigned k)
{
	struct ibw_census *c = x->c;
	const uint16_t *o = &c->out[(size_t)k * c->nsw];
	const struct rdst *dk = &c->dst[k];
	int32_t dsw = c->ep[dk->ep].sw;
	unsigned s, i, h, maxh = 0, nord;
	struct ibw_census_summary *sum = &c->sum;

	for (s = 0; s < c->nsw; s++) {
		uint64_t n = c->sw[s].nsrc - ((int32_t)s == dsw ? 1u : 0u);
		enum ibw_route_status st = O_STATUS(o[s]);

		x->acc[s] = n;
		if (st == IBW_ROUTE_OK) {
			x->okd[s]++;
			if (O_HOPS(o[s]) > maxh)
				maxh = O_HOPS(o[s]);
		}
		if (!n)
			continue;
		c->dsel[k] |= (uint8_t)(1u << st);
		sum->by_status[st] += n;
		if (st != IBW_ROUTE_OK)
			continue;
		h = O_HOPS(o[s]) + 1;
		sum->hops_hist[h < IBW_CENSUS_HOPS_HIST
				       ? h
				       : IBW_CENSUS_HOPS_HIST - 1] += n;
		if (h > sum->max_hops)
			sum->max_hops = h;
		if (!(o[s] & O_MIN)) {
			sum->non_minimal += n;
			c->dsel[k] |= DSEL_NON_MINIMAL;
		}
	}
	/* Sources that do not hang off a switch. */
	for (i = 0; i < c->nabn; i++) {
		const struct rep *e = &c->ep[c->abn[i]];
		uint16_t v;

		if (c->abn[i] == dk->ep)
			continue;
		v = direct(c, e, dk->lid);
		c->dsel[k] |= (uint8_t)(1u << O_STATUS(v));
		sum->by_status[O_STATUS(v)]++;
		if (O_STATUS(v) == IBW_ROUTE_OK) {
			sum->hops_hist[1]++;
			if (sum->max_hops < 1)
				sum->max_hops = 1;
			c->load[e->flat]++;
		}
	}
	/* Loads: the routes entering each switch flow on by its entry,
	 * farthest switches first (a counting sort by hops). */
	memset(x->bucket, 0, (maxh + 2) * sizeof(*x->bucket));
	for (s = 0; s < c->nsw; s++)
		if (O_STATUS(o[s]) == IBW_ROUTE_OK && O_HOPS(o[s]))
			x->bucket[O_HOPS(o[s])]++;
	for (h = maxh, i = 0; h > 0; h--) {
		unsigned n = x->bucket[h];

		x->bucket[h] = i;
		i += n;
	}
	nord = i;
	for (s = 0; s < c->nsw; s++)
		if (O_STATUS(o[s]) == IBW_ROUTE_OK && O_HOPS(o[s]))
			x->order[x->bucket[O_HOPS(o[s])]++] = s;
	for (i = 0; i < nord; i++) {
		struct step r;

		s = x->order[i];
		if (!x->acc[s])
			continue;
		ibw_cen_step(c, s, dk->lid, &r);
		c->load[c->pbase[c->sw[s].node] + r.out] += (uint32_t)x->acc[s];
		if (!r.done)
			x->acc[r.next] += x->acc[s];
	}
}

static int cmp_load_desc(const void *a, const void *b)
{
	const struct ibw_link_load *x = a, *y = b;

	if (x->routes != y->routes)
		return x->routes < y->routes ? 1 : -1;
	if (x->guid != y->guid)
		return x->guid > y->guid ? 1 : -1;
	return (x->port > y->port) - (x->port < y->port);
}

static int build_loads(struct ibw_census *c, unsigned ntop)
{
	unsigned i, p, n = 0;

	for (i = 0; i < c->nflat; i++)
		if (c->peer[i] >= 0)
			n++;
	c->loads = zalloc(c, n, sizeof(*c->loads));
	if (!c->loads)
		return -ENOMEM;
	for (i = 0; i < c->nnodes; i++) {
		const struct ibw_fnode *fn = node(c, i);

		for (p = 0; p < fn->nports; p++) {
			unsigned at = c->pbase[i] + p;
			struct ibw_link_load *l;

			if (c->peer[at] < 0)
				continue;
			l = &c->loads[c->nloads++];
			l->guid = fn->guid;
			l->port = (uint8_t)p;
			l->peer_guid = node(c, c->nodeof[c->peer[at]])->guid;
			l->peer_port =
				(uint8_t)((unsigned)c->peer[at] -
					  c->pbase[c->nodeof[c->peer[at]]]);
			l->routes = c->load[at];
		}
	}
	c->ntop = ntop < c->nloads ? ntop : c->nloads;
	c->top = zalloc(c, c->nloads, sizeof(*c->top));
	if (!c->top)
		return -ENOMEM;
	memcpy(c->top, c->loads, c->nloads * sizeof(*c->top));
	qsort(c->top, c->nloads, sizeof(*c->top), cmp_load_desc);
	return 0;
}

static void spread(const uint32_t *v, unsigned n, double *max_mean, double *cv)
{
	double sum = 0, mean, var = 0, max = 0;
	unsigned i;

	for (i = 0; i < n; i++) {
		sum += v[i];
		if (v[i] > max)
			max = v[i];
	}
	*max_mean = *cv = 0;
	if (!n || sum <= 0)
		return;
	mean = sum / n;
	for (i = 0; i < n; i++)
		var += (v[i] - mean) * (v[i] - mean);
	*max_mean = max / mean;
	*cv = sqrt(var / n) / mean;
}

static int build_balance(struct ibw_census *c, const struct graph *g)
{
	unsigned s, e, t, maxtier = 0, n, any = 0;
	uint32_t *v = calloc(c->nflat ? c->nflat : 1, sizeof(*v));

	c->bal = zalloc(c, c->nsw, sizeof(*c->bal));
	if (!v || !c->bal) {
		free(v);
		return -ENOMEM;
	}
	for (s = 0; s < c->nsw; s++) {
		struct ibw_switch_balance *b = &c->bal[c->nbal];

		if (c->sw[s].tier == NO_TIER)
			continue;
		any = 1;
		if (c->sw[s].tier > maxtier)
			maxtier = c->sw[s].tier;
		n = 0;
		for (e = g->first[s]; e < g->first[s + 1]; e++)
			if (c->sw[g->to[e]].tier != NO_TIER &&
			    c->sw[g->to[e]].tier > c->sw[s].tier)
				v[n++] = c->load[c->pbase[c->sw[s].node] +
						 g->port[e]];
		if (!n)
			continue;
		memset(b, 0, sizeof(*b));
		b->guid = node(c, c->sw[s].node)->guid;
		b->tier = c->sw[s].tier;
		b->uplinks = n;
		b->up_min = UINT32_MAX;
		for (e = 0; e < n; e++) {
			b->up_routes += v[e];
			if (v[e] < b->up_min)
				b->up_min = v[e];
			if (v[e] > b->up_max)
				b->up_max = v[e];
		}
		spread(v, n, &b->max_mean, &b->cv);
		c->nbal++;
	}
	c->ntiers = any ? maxtier + 1 : 0;
	c->tiers = zalloc(c, c->ntiers, sizeof(*c->tiers));
	if (!c->tiers) {
		free(v);
		return -ENOMEM;
	}
	for (t = 0; t < c->ntiers; t++) {
		struct ibw_tier_balance *tb = &c->tiers[t];
		unsigned i;

		tb->tier = t;
		n = 0;
		for (s = 0; s < c->nsw; s++) {
			if (c->sw[s].tier != t)
				continue;
			tb->switches++;
			for (e = g->first[s]; e < g->first[s + 1]; e++)
				if (c->sw[g->to[e]].tier != NO_TIER &&
				    c->sw[g->to[e]].tier > t)
					v[n++] =
						c->load[c->pbase[c->sw[s].node] +
							g->port[e]];
		}
		tb->uplinks = n;
		spread(v, n, &tb->max_mean, &tb->cv);
		for (i = 0; i < c->nbal; i++) {
			const struct ibw_switch_balance *b = &c->bal[i];

			if (b->tier != t || !b->up_routes)
				continue;
			tb->with_uplinks++;
			tb->mean_max_mean += b->max_mean;
			tb->mean_cv += b->cv;
			if (b->max_mean > tb->worst_max_mean) {
				tb->worst_max_mean = b->max_mean;
				tb->worst_guid = b->guid;
			}
		}
		if (tb->with_uplinks) {
			tb->mean_max_mean /= tb->with_uplinks;
			tb->mean_cv /= tb->with_uplinks;
		}
	}
	free(v);
	return 0;
}

static uint64_t cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int compute(struct ibw_census *c, unsigned ntop)
{
	struct ctx x;
	struct graph g;
	unsigned k, s, i;
	uint64_t hop_sum = 0;
	int rc = -ENOMEM;

	if (build_index(c) < 0 || build_endports(c) < 0)
		return -ENOMEM;
	if (build_graph(c, &g) < 0)
		return -ENOMEM;
	memset(&x, 0, sizeof(x));
	x.c = c;
	x.mark = calloc(c->nsw + 1, sizeof(*x.mark));
	x.chain = calloc(c->nsw + 1, sizeof(*x.chain));
	x.acc = calloc(c->nsw + 1, sizeof(*x.acc));
	x.order = calloc(c->nsw + 1, sizeof(*x.order));
	x.bucket = calloc(c->nsw + O_MAXHOPS + 3, sizeof(*x.bucket));
	x.okd = calloc(c->nsw + 1, sizeof(*x.okd));
	c->out = zalloc(c, (size_t)c->ndst * c->nsw, sizeof(*c->out));
	c->dsel = zalloc(c, c->ndst, 1);
	if (!x.mark || !x.chain || !x.acc || !x.order || !x.bucket || !x.okd ||
	    !c->out || !c->dsel || distances(c, &g) < 0)
		goto out;
	memset(c->out, 0xff, (size_t)c->ndst * c->nsw * sizeof(*c->out));
	/* Per destination: every switch's way there, memoised, so each
	 * switch is walked from once; then counts and loads. */
	for (k = 0; k < c->ndst; k++) {
		uint16_t *o = &c->out[(size_t)k * c->nsw];

		for (s = 0; s < c->nsw; s++)
			if (o[s] == O_UNSET)
				resolve(&x, o, k, s);
		tally(&x, k);
	}
	/* Routes leaving each source port: those its switch routes, less
	 * its own LIDs. */
	for (i = 0; i < c->nep; i++) {
		const struct rep *e = &c->ep[i];
		uint32_t n;

		if (e->sw < 0)
			continue;
		n = x.okd[e->sw];
		for (k = e->first_dst; k < e->first_dst + e->span; k++)
			if (O_STATUS(c->out[(size_t)k * c->nsw + e->sw]) ==
			    IBW_ROUTE_OK)
				n--;
		c->load[e->flat] += n;
	}
	for (i = 0; i < IBW_ROUTE_STATUS_MAX; i++)
		c->sum.pairs += c->sum.by_status[i];
	c->sum.routed = c->sum.by_status[IBW_ROUTE_OK];
	c->sum.looping = c->sum.by_status[IBW_ROUTE_LOOP];
	c->sum.unreachable = c->sum.pairs - c->sum.routed - c->sum.looping;
	for (i = 0; i < IBW_CENSUS_HOPS_HIST; i++)
		hop_sum += c->sum.hops_hist[i] * i;
	if (c->sum.routed)
		c->sum.mean_hops = (double)hop_sum / (double)c->sum.routed;
	if (build_loads(c, ntop) < 0 || build_balance(c, &g) < 0)
		goto out;
	compact_out(c);
	rc = 0;
out:
	free(x.mark);
	free(x.chain);
	free(x.acc);
	free(x.order);
	free(x.bucket);
	free(x.okd);
	graph_free(&g);
	return rc;
}

struct ibw_census *ibw_census_compute(struct ibw_fabric *f,
				      struct ibw_lft_set *t,
				      const struct ibw_census_opts *o)
{
	struct ibw_census *c;
	uint64_t t0 = cpu_us();

	if (!f)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->refs = 1;
	c->f = ibw_fabric_ref(f);
	c->t = ibw_lft_set_ref(t);
	c->sum.memory_bytes = sizeof(*c);
	if (compute(c, o && o->top_links ? o->top_links : 10) < 0) {
		ibw_census_unref(c);
		return NULL;
	}
	c->sum.compute_us = cpu_us() - t0;
	return c;
}

struct ibw_census *ibw_census_ref(struct ibw_census *c)
{
	/* Atomic: snapshots holding it are let go on HTTP threads too. */
	if (c)
		__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
	return c;
}

void ibw_census_unref(struct ibw_census *c)
{
	if (!c || __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL))
		return;
	free(c->pbase);
	free(c->nodeof);
	free(c->peer);
	free(c->swof);
	free(c->sw);
	free(c->ep);
	free(c->abn);
	free(c->dst);
	free(c->lids);
	free(c->dist);
	free(c->out);
	free(c->out8);
	free(c->dsel);
	free(c->load);
	free(c->loads);
	free(c->top);
	free(c->bal);
	free(c->tiers);
	ibw_lft_set_unref(c->t);
	ibw_fabric_unref(c->f);
	free(c);
}

const struct ibw_census_summary *ibw_census_summary(const struct ibw_census *c)
{
	return &c->sum;
}

struct ibw_fabric *ibw_census_fabric(const struct ibw_census *c)
{
	return c->f;
}

struct ibw_lft_set *ibw_census_tables(const struct ibw_census *c)
{
	return c->t;
}

const struct ibw_link_load *ibw_census_loads(const struct ibw_census *c,
					     unsigned *n)
{
	*n = c->nloads;
	return c->loads;
}

const struct ibw_link_load *ibw_census_top_links(const struct ibw_census *c,
						 unsigned *n)
{
	*n = c->ntop;
	return c->top;
}

int ibw_census_link_load(const struct ibw_census *c, uint64_t guid,
			 uint8_t port, struct ibw_link_load *out)
{
	unsigned lo = 0, hi = c->nloads;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		const struct ibw_link_load *l = &c->loads[mid];

		if (l->guid == guid && l->port == port) {
			*out = *l;
			return 0;
		}
		if (l->guid < guid || (l->guid == guid && l->port < port))
			lo = mid + 1;
		else
			hi = mid;
	}
	return -ENOENT;
}

const struct ibw_switch_balance *
ibw_census_switch_balance(const struct ibw_census *c, unsigned *n)
{
	*n = c->nbal;
	return c->bal;
}

const struct ibw_tier_balance *ibw_census_tiers(const struct ibw_census *c,
						unsigned *n)
{
	*n = c->ntiers;
	return c->tiers;
}

/* Walking one route. */
