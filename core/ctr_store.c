// SPDX-License-Identifier: BSD-2-Clause
/*
 * The counters' port records (counters_int.h): kept in chunks of
 * IBW_CTR_CHUNK shared with the tables snapshots hold and copied on
 * write a chunk at a time, found by (guid, port) through an open-
 * addressing index, ordered for readers, and read from and written to
 * the state file and its journal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "counters_int.h"
#include "ctr_journal.h"
#include "ctr_state.h"
#include "hash.h"

int ibw_counters_port_cmp(const void *a, const void *b)
{
	const struct ibw_port_ctrs *x = a, *y = b;

	if (x->guid != y->guid)
		return (x->guid > y->guid) - (x->guid < y->guid);
	return (int)x->port - (int)y->port;
}

static unsigned port_hash(uint64_t guid, uint8_t port)
{
	uint64_t h = ibw_fnv1a64(IBW_FNV1A64_INIT, &guid, sizeof(guid));

	return (unsigned)ibw_fnv1a64(h, &port, 1);
}

/* Record @i of @c's (not to be written before own_record()). */
static struct ibw_port_ctrs *rec(const struct ibw_counters *c, unsigned i)
{
	return &c->chunks[i / IBW_CTR_CHUNK]->r[i % IBW_CTR_CHUNK];
}

static void index_put(struct ibw_counters *c, unsigned i)
{
	const struct ibw_port_ctrs *p = rec(c, i);
	unsigned h = port_hash(p->guid, p->port);

	while (c->index[h & c->index_mask])
		h++;
	c->index[h & c->index_mask] = i + 1;
}

/* Index every record again: there is room for more. The table has at
 * least twice as many slots as the chunks have records. */
static void index_rebuild(struct ibw_counters *c)
{
	unsigned size = 512, i;

	while (size < 2 * c->cap)
		size *= 2;
	free(c->index);
	c->index = calloc(size, sizeof(*c->index));
	c->index_mask = size - 1;
	for (i = 0; c->index && i < c->nports; i++)
		index_put(c, i);
}

/* A record's place in the order: its key and index. */
struct order_key {
	uint64_t guid;
	unsigned port, i;
};

static int order_cmp(const void *a, const void *b)
{
	const struct order_key *x = a, *y = b;

	if (x->guid != y->guid)
		return (x->guid > y->guid) - (x->guid < y->guid);
	return (int)x->port - (int)y->port;
}

/* The order of the records again, if ports were added: -ENOMEM keeps
 * them unsorted. */
int ibw_ctr_sort_ports(struct ibw_counters *c)
{
	unsigned n = c->nports ? c->nports : 1, *o, i;
	struct order_key *k;

	if (!c->unsorted)
		return 0;
	k = malloc(n * sizeof(*k));
	o = realloc(c->order, n * sizeof(*o));
	if (!k || !o) {
		free(k);
		if (o)
			c->order = o;
		return -ENOMEM;
	}
	c->order = o;
	for (i = 0; i < c->nports; i++) {
		k[i].guid = rec(c, i)->guid;
		k[i].port = rec(c, i)->port;
		k[i].i = i;
	}
	qsort(k, c->nports, sizeof(*k), order_cmp);
	for (i = 0; i < c->nports; i++)
		o[i] = k[i].i;
	free(k);
	c->unsorted = 0;
	return 0;
}

/* Index of the record of (@guid, @port), -1 if none. */
static int find_index(const struct ibw_counters *c, uint64_t guid, uint8_t port)
{
	const struct ibw_port_ctrs *p;
	unsigned h, k, i;

	if (!c->index) {
		for (i = 0; i < c->nports; i++) {
			p = rec(c, i);
			if (p->guid == guid && p->port == port)
				return (int)i;
		}
		return -1;
	}
	for (h = port_hash(guid, port); (k = c->index[h & c->index_mask]);
	     h++) {
		p = rec(c, k - 1);
		if (p->guid == guid && p->port == port)
			return (int)(k - 1);
	}
	return -1;
}

const struct ibw_port_ctrs *ibw_counters_find(const struct ibw_counters *c,
					      uint64_t guid, uint8_t port)
{
	int i = find_index(c, guid, port);

	return i < 0 ? NULL : rec(c, (unsigned)i);
}

/* Drop a reference to a chunk; the last one frees it with its
 * references to FEC and congestion records. */
static void chunk_unref(struct ibw_ctr_chunk *k)
{
	unsigned i;

	if (!k || __atomic_sub_fetch(&k->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (i = 0; i < IBW_CTR_CHUNK; i++) {
		ibw_ctr_port_release(&k->r[i]);
	}
	free(k);
}

/* Free @c's records: its references to their chunks. */
void ibw_ctr_chunks_free(struct ibw_counters *c)
{
	unsigned k;

	for (k = 0; k < c->cap / IBW_CTR_CHUNK; k++)
		chunk_unref(c->chunks[k]);
	free(c->chunks);
	c->chunks = NULL;
	c->nports = c->cap = 0;
}

void ibw_ctr_table_unref(struct ibw_ctr_table *t)
{
	unsigned k;

	if (!t || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (k = 0; k < (t->n + IBW_CTR_CHUNK - 1) / IBW_CTR_CHUNK; k++)
		chunk_unref(t->chunks[k]);
	free(t->chunks);
	free(t->order);
	free(t);
}

unsigned ibw_ctr_table_n(const struct ibw_ctr_table *t)
{
	return t->n;
}

const struct ibw_port_ctrs *ibw_ctr_table_at(const struct ibw_ctr_table *t,
					     unsigned i)
{
	unsigned k = t->order[i];

	return &t->chunks[k / IBW_CTR_CHUNK]->r[k % IBW_CTR_CHUNK];
}

const struct ibw_port_ctrs *ibw_ctr_table_find(const struct ibw_ctr_table *t,
					       uint64_t guid, uint8_t port)
{
	unsigned lo = 0, hi = t->n;
	struct ibw_port_ctrs key;

	key.guid = guid;
	key.port = port;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		const struct ibw_port_ctrs *p = ibw_ctr_table_at(t, mid);
		int d = ibw_counters_port_cmp(p, &key);

		if (!d)
			return p;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * Make record @i ours to write before any write: the table last handed
 * out is let go (the next snapshot gets a new one), and while a table
 * still holds the record's chunk, we get a copy of that chunk (at the
 * same places, so the index stays right); when we are its last holder,
 * it is simply ours. -ENOMEM: the chunk is still shared and must not be
 * written.
 */
static int own_record(struct ibw_counters *c, unsigned i)
{
	struct ibw_ctr_chunk *k, *nk;
	unsigned j;

	if (c->shared) {
		ibw_ctr_table_unref(c->shared);
		c->shared = NULL;
	}
	k = c->chunks[i / IBW_CTR_CHUNK];
	/* Only we hand out references, so a count of 1 stays 1; acquire
	 * orders the last reader's reads before our writes. */
	if (__atomic_load_n(&k->refs, __ATOMIC_ACQUIRE) == 1)
		return 0;
	nk = malloc(sizeof(*nk));
	if (!nk)
		return -ENOMEM;
	/* the records alone: the count is the readers', who change it */
	memcpy(nk->r, k->r, sizeof(nk->r));
	nk->refs = 1;
	/* the FEC records are shared by reference too */
	for (j = 0; j < IBW_CTR_CHUNK; j++) {
		ibw_ctr_port_share(&nk->r[j]);
	}
	c->chunks[i / IBW_CTR_CHUNK] = nk;
	chunk_unref(k);
	return 0;
}

/* The record of (@guid, @port) to write to, or NULL if there is none. */
struct ibw_port_ctrs *ibw_ctr_port_find_w(struct ibw_counters *c, uint64_t guid,
					  uint8_t port)
{
	int i = find_index(c, guid, port);

	if (i < 0 || own_record(c, (unsigned)i) < 0)
		return NULL;
	return rec(c, (unsigned)i);
}

/* Room for one more record: a new chunk when the last is full. */
static int grow_chunks(struct ibw_counters *c)
{
	unsigned nk = c->cap / IBW_CTR_CHUNK;
	struct ibw_ctr_chunk **a, *k;

	if (c->nports < c->cap)
		return 0;
	a = realloc(c->chunks, (nk + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	c->chunks = a;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->refs = 1;
	a[nk] = k;
	c->cap += IBW_CTR_CHUNK;
	if (!c->index || 2 * c->cap > c->index_mask + 1)
		index_rebuild(c);
	return 0;
}

/* The record of (@guid, @port) to write to, added if new; NULL if out of
 * memory. */
struct ibw_port_ctrs *ibw_ctr_port_get(struct ibw_counters *c, uint64_t guid,
				       uint8_t port)
{
	struct ibw_port_ctrs *p;
	int i = find_index(c, guid, port);

	if (i >= 0)
		return own_record(c, (unsigned)i) < 0 ? NULL
						      : rec(c, (unsigned)i);
	if (grow_chunks(c) < 0 || own_record(c, c->nports) < 0)
		return NULL;
	p = rec(c, c->nports++);
	memset(p, 0, sizeof(*p));
	p->guid = guid;
	p->port = port;
	c->unsorted = 1;
	if (c->index)
		index_put(c, c->nports - 1);
	return p;
}

unsigned ibw_counters_nports(struct ibw_counters *c)
{
	return c->nports;
}

const struct ibw_port_ctrs *ibw_counters_port_at(struct ibw_counters *c,
						 unsigned i)
{
	if (ibw_ctr_sort_ports(c) < 0)
		return rec(c, i);
	return rec(c, c->order[i]);
}

struct ibw_ctr_table *ibw_counters_table(struct ibw_counters *c)
{
	struct ibw_ctr_table *t = c->shared;
	unsigned k, nk = (c->nports + IBW_CTR_CHUNK - 1) / IBW_CTR_CHUNK;

	if (ibw_ctr_sort_ports(c) < 0)
		return NULL;
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		t->chunks = malloc((nk ? nk : 1) * sizeof(*t->chunks));
		t->order =
			malloc((c->nports ? c->nports : 1) * sizeof(*t->order));
		if (!t->chunks || !t->order) {
			free(t->chunks);
			free(t->order);
			free(t);
			return NULL;
		}
		for (k = 0; k < nk; k++) {
			t->chunks[k] = c->chunks[k];
			__atomic_add_fetch(&c->chunks[k]->refs, 1,
					   __ATOMIC_RELAXED);
		}
		if (c->nports)
			memcpy(t->order, c->order,
			       c->nports * sizeof(*t->order));
		t->n = c->nports;
		t->refs = 1; /* ours, until a record is written */
		c->shared = t;
	}
	__atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
	return t;
}

/* The records by (guid, port), as a table has them: a new array of
 * pointers (NULL without memory). */
static const struct ibw_port_ctrs **records(struct ibw_counters *c)
{
	const struct ibw_port_ctrs **v;
	unsigned i;

	v = malloc((c->nports ? c->nports : 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < c->nports; i++)
		v[i] = ibw_counters_port_at(c, i);
	return v;
}

int ibw_counters_save(struct ibw_counters *c, const char *path,
		      const struct ibw_links *links)
{
	const struct ibw_port_ctrs **v = records(c);
	int rc;

	if (!v)
		return -ENOMEM;
	rc = ibw_ctr_state_save(path, v, c->nports, links);
	free(v);
	return rc;
}

int ibw_counters_journal_save(struct ibw_counters *c, struct ibw_ctr_journal *j,
			      const struct ibw_links *links, uint64_t now_us,
			      int snapshot)
{
	const struct ibw_port_ctrs **v = records(c);
	int rc;

	if (!v)
		return -ENOMEM;
	if (snapshot)
		rc = ibw_ctr_journal_compact(j, v, c->nports, links, now_us);
	else
		rc = ibw_ctr_journal_save(j, v, c->nports, links, now_us);
	free(v);
	return rc;
}

/* Records read from a state file replace ours. */
static int adopt(struct ibw_counters *c, struct ibw_port_ctrs *ports,
		 unsigned n)
{
	unsigned i;
	int rc = 0;

	ibw_ctr_table_unref(c->shared);
	c->shared = NULL;
	ibw_ctr_chunks_free(c);
	c->unsorted = 1;
	/* The records move into chunks with their FEC references. */
	for (i = 0; i < n; i++) {
		if (grow_chunks(c) < 0) {
			rc = -ENOMEM;
			break;
		}
		*rec(c, c->nports++) = ports[i];
		memset(&ports[i], 0, sizeof(ports[i]));
	}
	for (; i < n; i++) {
		ibw_ctr_port_release(&ports[i]);
	}
	free(ports);
	index_rebuild(c);
	ibw_ctr_sort_ports(c);
	return rc;
}

int ibw_counters_load(struct ibw_counters *c, const char *path,
		      struct ibw_links *links, unsigned *bad_links)
{
	struct ibw_port_ctrs *ports;
	unsigned n, cap;
	int rc = ibw_ctr_state_load(path, &ports, &n, &cap, links, bad_links);

	if (rc < 0)
		return rc;
	return adopt(c, ports, n);
}

int ibw_counters_journal_load(struct ibw_counters *c, struct ibw_ctr_journal *j,
			      struct ibw_links *links, unsigned *bad_links)
{
	struct ibw_port_ctrs *ports;
	unsigned n, cap;
	int rc = ibw_ctr_journal_load(j, &ports, &n, &cap, links, bad_links);

	if (rc < 0)
		return rc;
	return adopt(c, ports, n);
}
