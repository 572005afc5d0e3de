// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "lft.h"
#include "loop.h"

struct ibw_lft_set {
	unsigned refs;
	unsigned n, cap;
	struct ibw_lft_table *t; /* sorted by guid once frozen */
	struct ibw_lft_stats stats;
};

struct ibw_lft_set *ibw_lft_set_new(void)
{
	struct ibw_lft_set *s = calloc(1, sizeof(*s));

	if (s)
		s->refs = 1;
	return s;
}

struct ibw_lft_table *ibw_lft_set_add(struct ibw_lft_set *s, uint64_t guid,
				      uint16_t lid, uint16_t top,
				      const uint8_t *ports, unsigned n)
{
	struct ibw_lft_table *t;

	if (s->n == s->cap) {
		unsigned cap = s->cap ? s->cap * 2 : 64;
		struct ibw_lft_table *nt = realloc(s->t, cap * sizeof(*nt));

		if (!nt)
			return NULL;
		s->t = nt;
		s->cap = cap;
	}
	t = &s->t[s->n];
	memset(t, 0, sizeof(*t));
	t->guid = guid;
	t->lid = lid;
	t->top = top;
	if (ports && n) {
		t->ports = malloc(n);
		if (!t->ports)
			return NULL;
		memcpy(t->ports, ports, n);
		t->n = n;
		s->stats.memory_bytes += n;
	}
	s->n++;
	return t;
}

static int cmp_table(const void *a, const void *b)
{
	uint64_t x = ((const struct ibw_lft_table *)a)->guid;
	uint64_t y = ((const struct ibw_lft_table *)b)->guid;

	return (x > y) - (x < y);
}

void ibw_lft_set_freeze(struct ibw_lft_set *s)
{
	if (s->n)
		qsort(s->t, s->n, sizeof(*s->t), cmp_table);
	s->stats.switches = s->n;
	s->stats.memory_bytes += sizeof(*s) + s->cap * sizeof(*s->t);
}

struct ibw_lft_set *ibw_lft_set_ref(struct ibw_lft_set *s)
{
	/* Atomic: a census holding it is let go on HTTP threads too. */
	if (s)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	return s;
}

void ibw_lft_set_unref(struct ibw_lft_set *s)
{
	unsigned i;

	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (i = 0; i < s->n; i++)
		free(s->t[i].ports);
	free(s->t);
	free(s);
}

const struct ibw_lft_table *ibw_lft_find(const struct ibw_lft_set *s,
					 uint64_t guid)
{
	struct ibw_lft_table key;

	if (!s || !s->n)
		return NULL;
	key.guid = guid;
	return bsearch(&key, s->t, s->n, sizeof(*s->t), cmp_table);
}

unsigned ibw_lft_count(const struct ibw_lft_set *s)
{
	return s ? s->n : 0;
}

const struct ibw_lft_table *ibw_lft_at(const struct ibw_lft_set *s, unsigned i)
{
	return s && i < s->n ? &s->t[i] : NULL;
}

uint8_t ibw_lft_port(const struct ibw_lft_table *t, uint16_t lid)
{
	return t && lid < t->n ? t->ports[lid] : 0xff;
}

const struct ibw_lft_stats *ibw_lft_set_stats(const struct ibw_lft_set *s)
{
	return &s->stats;
}

/* The reader. */

#define DEFAULT_WINDOW 32

/* One switch of a running refresh. */
struct rsw {
	const struct ibw_fnode *n;
	uint8_t *ports; /* top + 1 entries, 0xff until read */
	unsigned nblocks;
	unsigned failed;
};

struct run {
	struct ibw_lft *l; /* NULL once the reader is gone */
	struct ibw_fabric *f;
	struct rsw *sw;
	unsigned nsw;
	/* the next block to ask for: block number, then switch */
	unsigned next_block, next_sw, max_blocks;
	unsigned inflight;
	int cancelled; /* the engine is going away */
	uint64_t t0;
	struct ibw_lft_stats st;
	int settle; /* read once more settle_us after this */
	int starting; /* inside ibw_lft_refresh(): never finish there */
};

struct req {
	struct run *run;
	unsigned sw;
	uint32_t block;
	int directed;
};

struct ibw_lft {
	struct ibw_engine *e;
	struct ibw_lft_opts o;
	ibw_lft_cb cb;
	void *arg;
	struct ibw_timer *timer;
	struct ibw_lft_set *cur;
	struct ibw_fabric *f; /* the last fabric given */
	struct run *run;
	int again; /* a refresh was asked for while one ran */
	int again_settle;
	int timer_settle; /* the armed timer is a settle read */
	uint64_t refreshes, mads;
};

static void pump(struct run *r);
static int start(struct ibw_lft *l, int settle);

static void run_free(struct run *r)
{
	unsigned i;

	for (i = 0; i < r->nsw; i++)
		free(r->sw[i].ports);
	free(r->sw);
	ibw_fabric_unref(r->f);
	free(r);
}

/* The set from a finished run: fresh tables, else the previous ones
 * marked stale, else none. */
static struct ibw_lft_set *build(struct ibw_lft *l, struct run *r)
{
	struct ibw_lft_set *s = ibw_lft_set_new();
	unsigned i;

	if (!s)
		return NULL;
	for (i = 0; i < r->nsw; i++) {
		const struct rsw *w = &r->sw[i];
		const struct ibw_lft_table *old;
		struct ibw_lft_table *t;

		if (!w->failed) {
			t = ibw_lft_set_add(s, w->n->guid, w->n->lid,
					    w->n->lft_top, w->ports,
					    w->n->lft_top + 1u);
			if (!t)
				goto fail;
			t->read_us = r->st.start_us;
			r->st.fresh++;
			continue;
		}
		old = ibw_lft_find(l->cur, w->n->guid);
		t = ibw_lft_set_add(s, w->n->guid, old ? old->lid : w->n->lid,
				    old ? old->top : w->n->lft_top,
				    old ? old->ports : NULL, old ? old->n : 0);
		if (!t)
			goto fail;
		t->blocks_failed = w->failed;
		if (t->ports) {
			t->read_us = old->read_us;
			t->stale = 1;
			r->st.stale++;
		} else {
			r->st.missing++;
		}
	}
	ibw_lft_set_freeze(s);
	r->st.switches = s->stats.switches;
	r->st.memory_bytes = s->stats.memory_bytes;
	s->stats = r->st;
	return s;
fail:
	ibw_lft_set_unref(s);
	return NULL;
}

static void arm(struct ibw_lft *l, int settle)
{
	if (!l->timer)
		return;
	if (settle && l->o.settle_us) {
		l->timer_settle = 1;
		ibw_timer_arm(l->timer, l->o.settle_us);
	} else if (l->o.interval_us) {
		l->timer_settle = 0;
		ibw_timer_arm(l->timer, l->o.interval_us);
	}
}

static void finish(struct run *r)
{
	struct ibw_lft *l = r->l;
	struct ibw_lft_set *s;
	int settle = r->settle;

	if (!l || r->cancelled) {
		if (l)
			l->run = NULL;
		run_free(r);
		return;
	}
	l->run = NULL;
	r->st.duration_us = ibw_now_us() - r->t0;
	s = build(l, r);
	run_free(r);
	if (s) {
		ibw_lft_set_unref(l->cur);
		l->cur = s;
		l->refreshes++;
		/* With a newer fabric waiting (l->again), these tables were
		 * read against the old one: a census of the new topology
		 * from them would report its changes as broken routes. The
		 * read that follows calls back instead. */
		if (l->cb && !l->again)
			l->cb(s, l->arg);
	}
	if (l->again) {
		int again_settle = l->again_settle;

		l->again = l->again_settle = 0;
		if (start(l, again_settle) == 0)
			return;
		/* the follow-up could not start: the tables read will do */
		if (l->cb && l->cur)
			l->cb(l->cur, l->arg);
	}
	arm(l, settle);
}

static void on_answer(const struct ibw_mad_done *d, void *arg);

static int submit(struct run *r, unsigned sw, uint32_t block, int directed)
{
	const struct ibw_fnode *n = r->sw[sw].n;
	struct req *q = calloc(1, sizeof(*q));
	struct ibw_mad_req m;

	if (!q)
		return -ENOMEM;
	q->run = r;
	q->sw = sw;
	q->block = block;
	q->directed = directed;
	memset(&m, 0, sizeof(m));
	if (directed) {
		m.dest = n->dr;
		m.mgmt_class = IBW_CLASS_SMI_DR;
	} else {
		ibw_dest_lid(&m.dest, n->lid);
		m.mgmt_class = IBW_CLASS_SMI;
	}
	m.method = IBW_METHOD_GET;
	m.attr_id = IBW_ATTR_LINEAR_FWD;
	m.attr_mod = block;
	m.timeout_ms = r->l->o.timeout_ms;
	m.retries = r->l->o.retries;
	m.cb = on_answer;
	m.arg = q;
	if (ibw_engine_submit(r->l->e, &m) < 0) {
		free(q);
		return -EIO;
	}
	r->inflight++;
	r->st.mads++;
	r->l->mads++;
	return 0;
}

/* Keep the window full: block 0 of every switch, then block 1..., so
 * that consecutive requests go to different switches. */
static void pump(struct run *r)
{
	unsigned window = r->l->o.window ? r->l->o.window : DEFAULT_WINDOW;

	while (!r->cancelled && r->inflight < window &&
	       r->next_block < r->max_blocks) {
		unsigned sw = r->next_sw, b = r->next_block;

		if (++r->next_sw == r->nsw) {
			r->next_sw = 0;
			r->next_block++;
		}
		if (b >= r->sw[sw].nblocks)
			continue;
		r->st.blocks++;
		if (submit(r, sw, b, !r->sw[sw].n->lid) < 0)
			r->sw[sw].failed++;
	}
	if (!r->inflight && !r->starting)
		finish(r);
}

static void on_answer(const struct ibw_mad_done *d, void *arg)
{
	struct req *q = arg;
	struct run *r = q->run;
	struct rsw *w = &r->sw[q->sw];
	uint8_t block[IBW_LFT_BLOCK];

	r->inflight--;
	if (d->result == IBW_MAD_CANCELLED || !r->l) {
		r->cancelled = 1;
	} else if (d->result == IBW_MAD_OK &&
		   ibw_lft_block_decode(d->mad, d->len, block) == 0) {
		unsigned first = q->block * IBW_LFT_BLOCK;
		unsigned n = w->n->lft_top + 1u - first;

		/* Entries beyond LinearFDBTop are not forwarded to: the
		 * table ends at top. */
		memcpy(w->ports + first, block,
		       n < IBW_LFT_BLOCK ? n : IBW_LFT_BLOCK);
	} else {
		if (d->result == IBW_MAD_TIMEOUT)
			r->st.timeouts++;
		/* A LID route can be broken exactly while we look (the SM
		 * rerouting): try the block once more by directed route. */
		if (!q->directed && submit(r, q->sw, q->block, 1) == 0) {
			r->st.lid_fallbacks++;
		} else {
			r->st.failed_blocks++;
			w->failed++;
		}
	}
	free(q);
	if (r->cancelled) {
		if (!r->inflight)
			finish(r);
		return;
	}
	pump(r);
}

static int start(struct ibw_lft *l, int settle)
{
	struct ibw_fabric *f = l->f;
	struct run *r;
	unsigned i;

	if (!f)
		return -ENOENT;
	if (ibw_engine_lost(l->e))
		return -ENODEV;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->sw = calloc(f->nnodes ? f->nnodes : 1, sizeof(*r->sw));
	if (!r->sw) {
		free(r);
		return -ENOMEM;
	}
	r->l = l;
	r->f = ibw_fabric_ref(f);
	r->settle = settle;
	r->t0 = ibw_now_us();
	r->st.start_us = ibw_realtime_us();
	for (i = 0; i < f->nnodes; i++) {
		const struct ibw_fnode *n = &f->nodes[i];
		struct rsw *w;

		/* lft_cap 0: SwitchInfo was not read, top unknown. */
		if (n->gone || n->ni.node_type != IBW_NODE_SWITCH ||
		    !n->lft_cap)
			continue;
		w = &r->sw[r->nsw];
		w->n = n;
		w->ports = malloc(n->lft_top + 1u);
		if (!w->ports) {
			run_free(r);
			return -ENOMEM;
		}
		memset(w->ports, 0xff, n->lft_top + 1u);
		w->nblocks = n->lft_top / IBW_LFT_BLOCK + 1u;
		if (w->nblocks > r->max_blocks)
			r->max_blocks = w->nblocks;
		r->nsw++;
	}
	l->run = r;
	if (ibw_timer_armed(l->timer))
		ibw_timer_disarm(l->timer);
	r->starting = 1;
	pump(r);
	r->starting = 0;
	if (!r->inflight) {
		/* Nothing to read (or nothing could be sent): the set comes
		 * from the loop, never from inside this call. */
		l->timer_settle = -1;
		ibw_timer_arm(l->timer, 0);
	}
	return 0;
}

static void on_timer(struct ibw_timer *t, void *arg)
{
	struct ibw_lft *l = arg;

	(void)t;
	if (l->timer_settle < 0) {
		/* an empty refresh finishing */
		l->timer_settle = 0;
		if (l->run)
			finish(l->run);
		return;
	}
	if (l->run)
		return;
	if (start(l, 0) < 0)
		arm(l, 0);
}

struct ibw_lft *ibw_lft_new(struct ibw_engine *e, const struct ibw_lft_opts *o,
			    ibw_lft_cb cb, void *arg)
{
	struct ibw_lft *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->e = e;
	if (o) {
		l->o = *o;
	} else {
		l->o.retries = -1;
	}
	l->cb = cb;
	l->arg = arg;
	l->timer = ibw_timer_new(ibw_engine_loop(e), on_timer, l);
	if (!l->timer) {
		free(l);
		return NULL;
	}
	return l;
}

void ibw_lft_free(struct ibw_lft *l)
{
	if (!l)
		return;
	if (l->run) {
		/* Its requests still come back (answered or cancelled) and
		 * free it with the last one. */
		l->run->l = NULL;
		if (!l->run->inflight)
			run_free(l->run);
	}
	ibw_timer_free(l->timer);
	ibw_lft_set_unref(l->cur);
	ibw_fabric_unref(l->f);
	free(l);
}

void ibw_lft_set_fabric(struct ibw_lft *l, struct ibw_fabric *f)
{
	ibw_fabric_ref(f);
	ibw_fabric_unref(l->f);
	l->f = f;
}

int ibw_lft_refresh(struct ibw_lft *l, struct ibw_fabric *f)
{
	if (!f)
		return -EINVAL;
	ibw_lft_set_fabric(l, f);
	if (l->run) {
		l->again = 1;
		l->again_settle = 1;
		return 0;
	}
	return start(l, 1);
}

struct ibw_lft_set *ibw_lft_get(struct ibw_lft *l)
{
	return ibw_lft_set_ref(l->cur);
}

int ibw_lft_busy(const struct ibw_lft *l)
{
	return l->run != NULL;
}

uint64_t ibw_lft_refreshes(const struct ibw_lft *l)
{
	return l->refreshes;
}

uint64_t ibw_lft_mads(const struct ibw_lft *l)
{
	return l->mads;
}
