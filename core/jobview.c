// SPDX-License-Identifier: BSD-2-Clause
#include <stdlib.h>
#include <string.h>

#include "census.h"
#include "fabric.h"
#include "jobroutes.h"
#include "jobview.h"
#include "links.h"

/* Host name to CA node: the first word of the NodeDescription. */
struct hostkey {
	const char *name;
	size_t len;
	const struct ibw_fnode *n;
};

static int cmp_key(const void *x, const void *y)
{
	const struct hostkey *a = x, *b = y;
	size_t l = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->name, b->name, l);

	if (c)
		return c;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->n < b->n ? -1 : a->n > b->n;
}

static size_t first_word(const char *s)
{
	return strcspn(s, " \t");
}

struct hosts_index {
	struct hostkey *k;
	size_t n;
};

static int index_hosts(const struct ibw_fabric *f, struct hosts_index *x)
{
	unsigned i;

	x->n = 0;
	x->k = malloc((f ? f->nnodes : 0) * sizeof(*x->k) + 1);
	if (!x->k)
		return -1;
	for (i = 0; f && i < f->nnodes; i++) {
		const struct ibw_fnode *n = &f->nodes[i];

		if (n->ni.node_type == IBW_NODE_SWITCH || n->gone)
			continue;
		x->k[x->n].name = n->desc;
		x->k[x->n].len = first_word(n->desc);
		x->k[x->n].n = n;
		if (x->k[x->n].len)
			x->n++;
	}
	qsort(x->k, x->n, sizeof(*x->k), cmp_key);
	return 0;
}

/* The first index of @host's HCAs, or x->n. */
static size_t find_host(const struct hosts_index *x, const char *host)
{
	size_t lo = 0, hi = x->n, len = strlen(host);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct hostkey *k = &x->k[mid];
		size_t l = k->len < len ? k->len : len;
		int c = memcmp(k->name, host, l);

		if (!c)
			c = k->len < len ? -1 : k->len > len;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < x->n && x->k[lo].len == len &&
			       !memcmp(x->k[lo].name, host, len)
		       ? lo
		       : x->n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_link(const void *x, const void *y)
{
	const struct ibw_jobview_link *a = x, *b = y;

	if (a->guid != b->guid)
		return a->guid < b->guid ? -1 : 1;
	return (int)a->port - (int)b->port;
}

static int cmp_ref(const void *x, const void *y)
{
	const struct ibw_jobview_ref *a = x, *b = y;

	if (a->guid != b->guid)
		return a->guid < b->guid ? -1 : 1;
	if (a->port != b->port)
		return (int)a->port - (int)b->port;
	return a->job < b->job ? -1 : a->job > b->job;
}

/* Add a crossing of (@guid, @port) to @j's links (unsorted, merged
 * later). */
static int add_link(struct ibw_jobview_job *j, unsigned *cap, uint64_t guid,
		    uint8_t port)
{
	if (j->nlinks == *cap) {
		unsigned c = *cap ? 2 * *cap : 64;
		struct ibw_jobview_link *v = realloc(j->links, c * sizeof(*v));

		if (!v)
			return -1;
		j->links = v;
		*cap = c;
	}
	j->links[j->nlinks].guid = guid;
	j->links[j->nlinks].port = port;
	j->links[j->nlinks].pairs = 1;
	j->nlinks++;
	return 0;
}

static void merge_links(struct ibw_jobview_job *j)
{
	unsigned i, o = 0;

	if (j->nlinks < 2)
		return;
	qsort(j->links, j->nlinks, sizeof(*j->links), cmp_link);
	for (i = 0; i < j->nlinks; i++) {
		if (o && j->links[o - 1].guid == j->links[i].guid &&
		    j->links[o - 1].port == j->links[i].port)
			j->links[o - 1].pairs += j->links[i].pairs;
		else
			j->links[o++] = j->links[i];
	}
	j->nlinks = o;
}

/* Every ordered pair of the job's ports, routed by the census: the
 * directions their paths leave each node by. */
static int route_pairs(const struct ibw_snapshot *s, struct ibw_jobview_job *j,
		       struct ibw_census_route *r)
{
	unsigned a, b, h, cap = 0;

	if (!s->census)
		return 0;
	for (a = 0; a < j->nports; a++)
		for (b = 0; b < j->nports; b++) {
			if (a == b || j->ports[a].n == j->ports[b].n)
				continue;
			if (j->pairs == IBW_JOB_PAIRS_MAX) {
				j->partial = 1;
				return 0;
			}
			j->pairs++;
			if (ibw_census_lookup(s->census, j->ports[a].lid,
					      j->ports[b].lid, r) ||
			    r->status != IBW_ROUTE_OK)
				continue;
			j->pairs_routed++;
			for (h = 0; h + 1 < r->path.nhops; h++)
				if (add_link(j, &cap, r->path.hops[h].node_guid,
					     r->path.hops[h].out_port))
					return -1;
		}
	return 0;
}

/* The link health and the wait of one host port, from the link view. */
static void port_facts(const struct ibw_snapshot *s,
		       const struct ibw_jobview_port *p, double *wait)
{
	const struct ibw_link *k =
		s->links ? ibw_link_view_find(s->links, p->n->guid, p->port)
			 : NULL;
	int e;

	*wait = -1;
	if (!k)
		return;
	e = k->end[0].guid == p->n->guid && k->end[0].port == p->port ? 0 : 1;
	*wait = k->end[e].win[IBW_LWIN_SWEEP].xmit_wait_ratio;
}

static int build_job(const struct ibw_snapshot *s, const struct hosts_index *x,
		     struct ibw_jobview_job *j, char *const *shared,
		     size_t nshared, struct ibw_census_route *r,
		     struct ibw_jobroutes *jr, uint64_t gen)
{
	const struct ibw_job *job = j->job;
	unsigned h, cap = 0, i, nwait = 0;
	double wsum = 0;
	int rc;

	for (h = 0; h < job->nhosts; h++) {
		const char *name = job->match && job->match[h] ? job->match[h]
							       : job->hosts[h];
		const struct ibw_fnode *byguid = NULL;
		size_t k = find_host(x, name);
		int found = 0;

		if (bsearch(&job->hosts[h], shared, nshared, sizeof(*shared),
			    cmp_str))
			j->hosts_shared++;
		if (!strncmp(name, "0x", 2)) {
			/* a node GUID from the host map */
			byguid = ibw_fabric_find(s->fabric,
						 strtoull(name, NULL, 16));
			k = x->n;
		}
		for (; byguid || (k < x->n && x->k[k].len == strlen(name) &&
				  !memcmp(x->k[k].name, name, x->k[k].len));
		     k++) {
			const struct ibw_fnode *n = byguid ? byguid : x->k[k].n;
			unsigned p;

			for (p = 1; p < n->nports; p++) {
				if (!n->ports[p].have_pi || n->ports[p].gone)
					continue;
				if (j->nports == cap) {
					unsigned c = cap ? 2 * cap : 16;
					struct ibw_jobview_port *v = realloc(
						j->ports, c * sizeof(*v));

					if (!v)
						return -1;
					j->ports = v;
					cap = c;
				}
				j->ports[j->nports].n = n;
				j->ports[j->nports].port = (uint8_t)p;
				j->ports[j->nports].lid = n->ports[p].pi.lid;
				j->ports[j->nports].host = job->hosts[h];
				j->nports++;
				found = 1;
			}
			if (byguid)
				break;
		}
		j->hosts_found += found;
	}
	j->shared = j->hosts_shared > 0;
	j->xmit_wait_ratio = -1;
	for (i = 0; i < j->nports; i++) {
		const struct ibw_port_ctrs *c = ibw_snapshot_port(
			s, j->ports[i].n->guid, j->ports[i].port);
		double w;

		if (c && !c->stale) {
			j->xmit_bytes_per_s += c->xmit_bytes_per_s;
			j->rcv_bytes_per_s += c->rcv_bytes_per_s;
			j->xmit_pkts_per_s += c->xmit_pkts_per_s;
			j->rcv_pkts_per_s += c->rcv_pkts_per_s;
			j->error_increments += c->error_increments;
		}
		port_facts(s, &j->ports[i], &w);
		if (w >= 0) {
			wsum += w;
			nwait++;
		}
	}
	if (nwait)
		j->xmit_wait_ratio = wsum / nwait;
	/* the last walk of the same ports over this census, or a walk */
	j->have_census = s->census != NULL;
	rc = s->census && jr ? ibw_jobroutes_take(jr, gen, s->census, j) : 0;
	if (rc < 0)
		return -1;
	if (!rc) {
		if (route_pairs(s, j, r))
			return -1;
		merge_links(j);
		if (s->census && jr)
			ibw_jobroutes_put(jr, gen, s->census, j);
	}
	for (i = 0; i < j->nlinks; i++) {
		const struct ibw_link *k =
			s->links
				? ibw_link_view_find(s->links, j->links[i].guid,
						     j->links[i].port)
				: NULL;

		if (k && k->health > j->worst)
			j->worst = (uint8_t)k->health;
	}
	return 0;
}

struct ibw_jobview *ibw_jobview_build(const struct ibw_snapshot *s,
				      struct ibw_jobroutes *jr)
{
	struct ibw_jobview *v;
	struct hosts_index x = { NULL, 0 };
	struct ibw_census_route *r = NULL;
	char **all = NULL, **shared = NULL;
	size_t nall = 0, nshared = 0, i, k;
	unsigned j, l;
	uint64_t gen;

	if (!s->jobs)
		return NULL;
	gen = jr ? ibw_jobroutes_begin(jr) : 0;
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->users = 1;
	v->jobs = calloc(s->jobs->n + 1, sizeof(*v->jobs));
	r = malloc(sizeof(*r));
	if (!v->jobs || !r || index_hosts(s->fabric, &x))
		goto fail;
	/* hosts in more than one job: shared */
	for (j = 0; j < s->jobs->n; j++)
		nall += s->jobs->jobs[j].nhosts;
	all = malloc((nall + 1) * sizeof(*all));
	shared = malloc((nall + 1) * sizeof(*shared));
	if (!all || !shared)
		goto fail;
	nall = 0;
	for (j = 0; j < s->jobs->n; j++) {
		/* a job naming a host twice shares it with nobody */
		size_t from = nall;

		for (l = 0; l < s->jobs->jobs[j].nhosts; l++)
			all[nall++] = s->jobs->jobs[j].hosts[l];
		qsort(all + from, nall - from, sizeof(*all), cmp_str);
		for (i = from + 1, k = from + 1; i < nall; i++)
			if (strcmp(all[i], all[k - 1]))
				all[k++] = all[i];
		nall = nall > from ? k : from;
	}
	qsort(all, nall, sizeof(*all), cmp_str);
	for (i = 1; i < nall; i++)
		if (!strcmp(all[i], all[i - 1]) &&
		    (!nshared || strcmp(shared[nshared - 1], all[i])))
			shared[nshared++] = all[i];
	v->n = s->jobs->n;
	for (j = 0; j < v->n; j++) {
		v->jobs[j].job = &s->jobs->jobs[j];
		if (build_job(s, &x, &v->jobs[j], shared, nshared, r, jr, gen))
			goto fail;
		v->nrefs += v->jobs[j].nlinks;
	}
	v->refs = malloc((v->nrefs + 1) * sizeof(*v->refs));
	if (!v->refs)
		goto fail;
	v->nrefs = 0;
	for (j = 0; j < v->n; j++)
		for (l = 0; l < v->jobs[j].nlinks; l++) {
			v->refs[v->nrefs].guid = v->jobs[j].links[l].guid;
			v->refs[v->nrefs].port = v->jobs[j].links[l].port;
			v->refs[v->nrefs].job = j;
			v->nrefs++;
		}
	qsort(v->refs, v->nrefs, sizeof(*v->refs), cmp_ref);
	if (jr)
		ibw_jobroutes_end(jr, gen, s->census);
	free(x.k);
	free(r);
	free(all);
	free(shared);
	return v;
fail:
	free(x.k);
	free(r);
	free(all);
	free(shared);
	ibw_jobview_unref(v);
	return NULL;
}

struct ibw_jobview *ibw_jobview_ref(struct ibw_jobview *v)
{
	if (v)
		__atomic_add_fetch(&v->users, 1, __ATOMIC_RELAXED);
	return v;
}

void ibw_jobview_unref(struct ibw_jobview *v)
{
	unsigned j;

	if (!v || __atomic_sub_fetch(&v->users, 1, __ATOMIC_ACQ_REL))
		return;
	for (j = 0; v->jobs && j < v->n; j++) {
		free(v->jobs[j].ports);
		free(v->jobs[j].links);
	}
	free(v->jobs);
	free(v->refs);
	free(v);
}

/* Jobs crossing (@guid, @port) outward, appended to @out (sorted,
 * without repeats) up to @max; returns the count. */
static unsigned direction(const struct ibw_jobview *v, uint64_t guid,
			  uint8_t port, unsigned *out, unsigned n, unsigned max)
{
	size_t lo = 0, hi = v->nrefs;
	struct ibw_jobview_ref key = { guid, port, 0 };

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_ref(&v->refs[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < v->nrefs && v->refs[lo].guid == guid &&
	       v->refs[lo].port == port;
	     lo++) {
		unsigned i, jb = v->refs[lo].job, at;

		for (i = 0; i < n && i < max && out[i] < jb; i++)
			;
		if (i < n && i < max && out[i] == jb)
			continue;
		at = i;
		if (n < max) {
			memmove(out + at + 1, out + at,
				(n - at) * sizeof(*out));
			out[at] = jb;
		}
		n++;
	}
	return n;
}

unsigned ibw_jobview_cable_jobs(const struct ibw_jobview *v, uint64_t guid,
				uint8_t port, uint64_t pguid, uint8_t pport,
				unsigned *out, unsigned max)
{
	unsigned n;

	if (!v)
		return 0;
	n = direction(v, guid, port, out, 0, max);
	return direction(v, pguid, pport, out, n < max ? n : max, max) +
	       (n > max ? n - max : 0);
}

const struct ibw_jobview_job *ibw_jobview_find(const struct ibw_jobview *v,
					       const char *id)
{
	unsigned j;

	for (j = 0; v && j < v->n; j++)
		if (!strcmp(v->jobs[j].job->id, id))
			return &v->jobs[j];
	return NULL;
}
