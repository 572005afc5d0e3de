// SPDX-License-Identifier: BSD-2-Clause
#include <stdlib.h>
#include <string.h>

#include "census.h"
#include "fabric.h"
#include "fmap.h"
#include "ping.h"

/* One cable between two switches, before the bundles are merged. */
struct cable {
	unsigned a, b;
	uint8_t health;
	uint32_t reasons;
	double util;
	int64_t routes;
};

struct epkey {
	uint64_t guid;
	uint8_t port;
	uint8_t state;
};

static int cmp_ep(const void *x, const void *y)
{
	const struct epkey *a = x, *b = y;

	if (a->guid != b->guid)
		return a->guid < b->guid ? -1 : 1;
	return (int)a->port - (int)b->port;
}

static int cmp_cable(const void *x, const void *y)
{
	const struct cable *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	return 0;
}

static int is_switch(const struct ibw_fnode *n)
{
	return n->ni.node_type == IBW_NODE_SWITCH && !n->gone;
}

/* The health of the cable at @n port @p: the link view's, else from the
 * port's state alone (a cable the view has not seen yet). */
static const struct ibw_link *cable_at(const struct ibw_snapshot *s,
				       const struct ibw_fnode *n, unsigned p,
				       uint8_t *health)
{
	const struct ibw_link *k =
		s->links ? ibw_link_view_find(s->links, n->guid, (uint8_t)p)
			 : NULL;
	const struct ibw_portinfo *pi = &n->ports[p].pi;

	if (k)
		*health = (uint8_t)k->health;
	else
		*health = pi->phys_state == IBW_PHYS_LINKUP &&
					  pi->state == IBW_PORT_ACTIVE
				  ? IBW_HEALTH_OK
				  : IBW_HEALTH_DOWN;
	return k;
}

/* @k's other end, seen from switch @guid, is a CA. */
static int lost_host(const struct ibw_link *k, uint64_t guid)
{
	int other = k->end[0].guid == guid ? 1 : 0;

	return k->end[other].node_type != IBW_NODE_SWITCH &&
	       k->health != IBW_HEALTH_OK;
}

static double busiest(const struct ibw_link *k)
{
	double u = -1;
	int e;

	for (e = 0; k && e < 2; e++)
		if (k->end[e].win[IBW_LWIN_SWEEP].utilisation > u)
			u = k->end[e].win[IBW_LWIN_SWEEP].utilisation;
	return u;
}

/* The census' routes over the cable at @n port @p, both ways; -1 when
 * there is no census. */
static int64_t routes_of(const struct ibw_snapshot *s,
			 const struct ibw_fnode *n, unsigned p,
			 const struct ibw_fport *fp)
{
	struct ibw_link_load l;
	int64_t r = 0;

	if (!s->census)
		return -1;
	if (ibw_census_link_load(s->census, n->guid, (uint8_t)p, &l) == 0)
		r += l.routes;
	if (ibw_census_link_load(s->census, fp->remote_guid, fp->remote_port,
				 &l) == 0)
		r += l.routes;
	return r;
}

/* Levels by breadth-first search from the leaves over the cables. */
static int levels(struct ibw_fmap *m, const struct cable *c, unsigned nc)
{
	unsigned *deg = calloc(m->nsw + 1, sizeof(*deg));
	unsigned *adj = malloc((2 * (size_t)nc + 1) * sizeof(*adj));
	unsigned *q = malloc((m->nsw + 1) * sizeof(*q));
	unsigned i, h = 0, t = 0, e;

	if (!deg || !adj || !q) {
		free(deg);
		free(adj);
		free(q);
		return -1;
	}
	for (i = 0; i < nc; i++) {
		deg[c[i].a + 1]++;
		deg[c[i].b + 1]++;
	}
	for (i = 0; i < m->nsw; i++)
		deg[i + 1] += deg[i];
	/* deg[i] is now where i's neighbours start; fill by moving it */
	for (i = 0; i < nc; i++) {
		adj[deg[c[i].a]++] = c[i].b;
		adj[deg[c[i].b]++] = c[i].a;
	}
	for (i = m->nsw; i > 0; i--)
		deg[i] = deg[i - 1];
	deg[0] = 0;
	for (i = 0; i < m->nsw; i++)
		if (m->sw[i].hosts) {
			m->sw[i].level = 1;
			q[t++] = i;
		}
	while (h < t) {
		unsigned u = q[h++];

		for (e = deg[u]; e < deg[u + 1]; e++)
			if (!m->sw[adj[e]].level) {
				m->sw[adj[e]].level = m->sw[u].level + 1;
				q[t++] = adj[e];
			}
	}
	for (i = 0; i < m->nsw; i++)
		if (m->sw[i].level + 1 > m->levels)
			m->levels = m->sw[i].level + 1;
	free(deg);
	free(adj);
	free(q);
	return 0;
}

struct ibw_fmap *ibw_fmap_build(const struct ibw_snapshot *s)
{
	const struct ibw_fabric *f = s->fabric;
	struct ibw_fmap *m = calloc(1, sizeof(*m));
	struct epkey *eps = NULL;
	struct cable *c = NULL;
	unsigned *idx = NULL, i, p, nc = 0, capc = 0, j;

	if (!m)
		return NULL;
	if (!f || !f->nnodes)
		return m;
	idx = malloc(f->nnodes * sizeof(*idx));
	m->sw = calloc(f->nnodes, sizeof(*m->sw));
	eps = malloc((s->nendports + 1) * sizeof(*eps));
	if (!idx || !m->sw || !eps)
		goto fail;
	for (i = 0; i < f->nnodes; i++) {
		idx[i] = is_switch(&f->nodes[i]) ? m->nsw : UINT32_MAX;
		if (is_switch(&f->nodes[i]))
			m->sw[m->nsw++].n = &f->nodes[i];
	}
	for (i = 0; i < s->nendports; i++) {
		eps[i].guid = s->endports[i].node_guid;
		eps[i].port = s->endports[i].port;
		eps[i].state = (uint8_t)s->endports[i].state;
	}
	qsort(eps, s->nendports, sizeof(*eps), cmp_ep);
	for (i = 0; i < m->nsw; i++) {
		struct ibw_fmap_switch *w = &m->sw[i];
		const struct ibw_fnode *n = w->n;

		for (p = 1; p < n->nports; p++) {
			const struct ibw_fport *fp = &n->ports[p];
			const struct ibw_fnode *r;
			const struct ibw_link *k;
			uint8_t h;

			if (!fp->have_pi || fp->gone)
				continue;
			if (!fp->remote_guid) {
				/* A cable gone from discovery that the link
				 * view still has (missing, for a day): its
				 * host stays on the leaf, down. */
				k = s->links ? ibw_link_view_find(s->links,
								  n->guid,
								  (uint8_t)p)
					     : NULL;
				if (k && lost_host(k, n->guid)) {
					w->hosts++;
					w->hosts_down++;
					w->host_links[k->health]++;
					if (k->health > w->health)
						w->health = (uint8_t)k->health;
					m->host_cables++;
				}
				continue;
			}
			r = ibw_fabric_find(f, fp->remote_guid);
			/* a host that went stays on its leaf, down */
			if (!r ||
			    (r->gone && r->ni.node_type == IBW_NODE_SWITCH))
				continue;
			k = cable_at(s, n, p, &h);
			if (r->gone)
				h = IBW_HEALTH_DOWN;
			if (h > w->health)
				w->health = h;
			if (r->ni.node_type != IBW_NODE_SWITCH) {
				struct epkey key = { r->guid, fp->remote_port,
						     0 };
				const struct epkey *ep =
					bsearch(&key, eps, s->nendports,
						sizeof(*eps), cmp_ep);

				w->hosts++;
				w->host_links[h]++;
				if (r->gone || (ep && ep->state == IBW_EP_DOWN))
					w->hosts_down++;
				m->host_cables++;
				continue;
			}
			j = idx[r - f->nodes];
			/* each switch cable once: from its lower end */
			if (j == UINT32_MAX || r->guid < n->guid ||
			    (r == n && fp->remote_port < p))
				continue;
			if (nc == capc) {
				struct cable *x;

				capc = capc ? 2 * capc : 256;
				x = realloc(c, capc * sizeof(*c));
				if (!x)
					goto fail;
				c = x;
			}
			c[nc].a = i;
			c[nc].b = j;
			c[nc].health = h;
			c[nc].reasons = k ? k->reasons : 0;
			c[nc].util = busiest(k);
			c[nc].routes = routes_of(s, n, p, fp);
			nc++;
		}
	}
	m->switch_cables = nc;
	for (i = 0; i < m->nsw; i++)
		m->hosts += m->sw[i].hosts;
	/* the other end's switch is as bad as the cable */
	for (i = 0; i < nc; i++)
		if (c[i].health > m->sw[c[i].b].health)
			m->sw[c[i].b].health = c[i].health;
	if (levels(m, c, nc) < 0)
		goto fail;
	if (nc)
		qsort(c, nc, sizeof(*c), cmp_cable);
	m->b = calloc(nc + 1, sizeof(*m->b));
	if (!m->b)
		goto fail;
	for (i = 0; i < nc; i++) {
		struct ibw_fmap_bundle *b = &m->b[m->nb];

		if (!m->nb || m->b[m->nb - 1].a != c[i].a ||
		    m->b[m->nb - 1].b != c[i].b) {
			b->a = c[i].a;
			b->b = c[i].b;
			b->utilisation = -1;
			b->routes = c[i].routes < 0 ? -1 : 0;
			m->nb++;
		} else {
			b = &m->b[m->nb - 1];
		}
		b->cables++;
		b->count[c[i].health]++;
		if (c[i].health > b->health)
			b->health = c[i].health;
		b->reasons |= c[i].reasons;
		if (c[i].util > b->utilisation)
			b->utilisation = c[i].util;
		if (c[i].routes > 0)
			b->routes += c[i].routes;
	}
	free(idx);
	free(eps);
	free(c);
	return m;
fail:
	free(idx);
	free(eps);
	free(c);
	ibw_fmap_free(m);
	return NULL;
}

void ibw_fmap_free(struct ibw_fmap *m)
{
	if (!m)
		return;
	free(m->sw);
	free(m->b);
	free(m);
}

const struct ibw_fmap_switch *ibw_fmap_switch(const struct ibw_fmap *m,
					      uint64_t guid)
{
	unsigned lo = 0, hi = m->nsw;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (m->sw[mid].n->guid == guid)
			return &m->sw[mid];
		if (m->sw[mid].n->guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
