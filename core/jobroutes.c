// SPDX-License-Identifier: BSD-2-Clause
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobroutes.h"

struct jr_port {
	uint64_t guid;
	uint8_t port;
	uint16_t lid;
};

struct jr_entry {
	char id[sizeof(((struct ibw_job *)0)->id)];
	struct ibw_census *census; /* one reference */
	struct jr_port *ports;
	unsigned nports;
	struct ibw_jobview_link *links;
	unsigned nlinks;
	uint64_t pairs, pairs_routed;
	int partial;
	uint64_t used; /* the generation that last took or put it */
};

struct ibw_jobroutes {
	unsigned refs; /* atomic */
	pthread_mutex_t lock;
	struct jr_entry *v;
	unsigned n, cap;
	unsigned hint; /* where find() looks first */
	uint64_t gen, walked, reused;
};

struct ibw_jobroutes *ibw_jobroutes_new(void)
{
	struct ibw_jobroutes *r = calloc(1, sizeof(*r));

	if (r) {
		r->refs = 1;
		pthread_mutex_init(&r->lock, NULL);
	}
	return r;
}

struct ibw_jobroutes *ibw_jobroutes_ref(struct ibw_jobroutes *r)
{
	if (r)
		__atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
	return r;
}

static void drop(struct jr_entry *e)
{
	ibw_census_unref(e->census);
	free(e->ports);
	free(e->links);
}

void ibw_jobroutes_unref(struct ibw_jobroutes *r)
{
	unsigned i;

	if (!r || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (i = 0; i < r->n; i++)
		drop(&r->v[i]);
	free(r->v);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

uint64_t ibw_jobroutes_begin(struct ibw_jobroutes *r)
{
	uint64_t g;

	pthread_mutex_lock(&r->lock);
	g = ++r->gen;
	r->hint = 0;
	pthread_mutex_unlock(&r->lock);
	return g;
}

/* Under the lock: the entry of job @id, or NULL. A build asks for its
 * jobs in the job set's order, the order they were put in, so the one
 * after the last found is tried first: a view of N jobs costs N looks,
 * not N^2 / 2. */
static struct jr_entry *find(struct ibw_jobroutes *r, const char *id)
{
	unsigned i;

	if (r->hint < r->n && !strcmp(r->v[r->hint].id, id))
		return &r->v[r->hint++];
	/* again the last one (a take that failed, then its put) */
	if (r->hint && r->hint <= r->n && !strcmp(r->v[r->hint - 1].id, id))
		return &r->v[r->hint - 1];
	for (i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].id, id)) {
			r->hint = i + 1;
			return &r->v[i];
		}
	return NULL;
}

static int same_ports(const struct jr_entry *e, const struct ibw_jobview_job *j)
{
	unsigned i;

	if (e->nports != j->nports)
		return 0;
	for (i = 0; i < j->nports; i++)
		if (e->ports[i].guid != j->ports[i].n->guid ||
		    e->ports[i].port != j->ports[i].port ||
		    e->ports[i].lid != j->ports[i].lid)
			return 0;
	return 1;
}

int ibw_jobroutes_take(struct ibw_jobroutes *r, uint64_t gen,
		       const struct ibw_census *census,
		       struct ibw_jobview_job *j)
{
	struct jr_entry *e;
	int rc = 0;

	pthread_mutex_lock(&r->lock);
	e = find(r, j->job->id);
	if (e && e->census == census && same_ports(e, j)) {
		struct ibw_jobview_link *l =
			malloc((e->nlinks + 1) * sizeof(*l));

		if (l) {
			if (e->nlinks)
				memcpy(l, e->links, e->nlinks * sizeof(*l));
			free(j->links);
			j->links = l;
			j->nlinks = e->nlinks;
			j->pairs = e->pairs;
			j->pairs_routed = e->pairs_routed;
			j->partial = e->partial;
			e->used = gen;
			r->reused++;
			rc = 1;
		} else {
			rc = -1;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

void ibw_jobroutes_put(struct ibw_jobroutes *r, uint64_t gen,
		       struct ibw_census *census,
		       const struct ibw_jobview_job *j)
{
	struct jr_entry n = { .nports = j->nports,
			      .nlinks = j->nlinks,
			      .pairs = j->pairs,
			      .pairs_routed = j->pairs_routed,
			      .partial = j->partial,
			      .used = gen },
			*e;
	unsigned i;

	snprintf(n.id, sizeof(n.id), "%s", j->job->id);
	n.ports = malloc((j->nports + 1) * sizeof(*n.ports));
	n.links = malloc((j->nlinks + 1) * sizeof(*n.links));
	if (!n.ports || !n.links) {
		free(n.ports);
		free(n.links);
		return;
	}
	for (i = 0; i < j->nports; i++) {
		n.ports[i].guid = j->ports[i].n->guid;
		n.ports[i].port = j->ports[i].port;
		n.ports[i].lid = j->ports[i].lid;
	}
	if (j->nlinks)
		memcpy(n.links, j->links, j->nlinks * sizeof(*n.links));
	n.census = ibw_census_ref(census);
	pthread_mutex_lock(&r->lock);
	r->walked++;
	e = find(r, n.id);
	if (!e && r->n == r->cap) {
		unsigned c = r->cap ? 2 * r->cap : 16;
		struct jr_entry *v = realloc(r->v, c * sizeof(*v));

		if (v) {
			r->v = v;
			r->cap = c;
		}
	}
	if (e) {
		drop(e);
		*e = n;
	} else if (r->n < r->cap) {
		r->v[r->n++] = n;
	} else {
		drop(&n);
	}
	pthread_mutex_unlock(&r->lock);
}

void ibw_jobroutes_end(struct ibw_jobroutes *r, uint64_t gen,
		       const struct ibw_census *census)
{
	unsigned i, o = 0;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->n; i++) {
		if (r->v[i].used + 4 < gen || r->v[i].census != census)
			drop(&r->v[i]);
		else
			r->v[o++] = r->v[i];
	}
	r->n = o;
	r->hint = 0;
	pthread_mutex_unlock(&r->lock);
}

void ibw_jobroutes_stats(struct ibw_jobroutes *r, uint64_t *walked,
			 uint64_t *reused)
{
	pthread_mutex_lock(&r->lock);
	*walked = r->walked;
	*reused = r->reused;
	pthread_mutex_unlock(&r->lock);
}
