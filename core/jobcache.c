// SPDX-License-Identifier: BSD-2-Clause
#include <pthread.h>
#include <stdlib.h>

#include "jobcache.h"
#include "jobroutes.h"

struct ibw_jobcache {
	pthread_mutex_t lock;
	struct ibw_jobroutes *routes;
	/* The newest snapshot's view and the one before it (a reader that
	 * took its snapshot before a publish, a /links stream across one),
	 * one reference each, or NULL; seq: their snapshots'. */
	uint64_t seq, prev_seq;
	struct ibw_jobview *view, *prev;
};

struct ibw_jobcache *ibw_jobcache_new(void)
{
	struct ibw_jobcache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->routes = ibw_jobroutes_new();
	if (!c->routes) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

void ibw_jobcache_free(struct ibw_jobcache *c)
{
	if (!c)
		return;
	ibw_jobview_unref(c->view);
	ibw_jobview_unref(c->prev);
	ibw_jobroutes_unref(c->routes);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

struct ibw_jobview *ibw_jobcache_view(const struct ibw_snapshot *s)
{
	struct ibw_jobcache *c = s ? s->jobcache : NULL;
	struct ibw_jobview *v;

	if (!c || !s->jobs)
		return NULL;
	/* Made under the lock: readers of one snapshot wait for one build
	 * rather than each making their own. */
	pthread_mutex_lock(&c->lock);
	if (c->view && c->seq == s->seq) {
		v = ibw_jobview_ref(c->view);
	} else if (c->prev && c->prev_seq == s->seq) {
		v = ibw_jobview_ref(c->prev);
	} else if (!c->view || s->seq > c->seq) {
		/* the newest: the kept walks taken and kept */
		v = ibw_jobview_build(s, c->routes);
		if (v) { /* ENOMEM: the next reader tries again */
			ibw_jobview_unref(c->prev);
			c->prev = c->view;
			c->prev_seq = c->seq;
			c->view = ibw_jobview_ref(v);
			c->seq = s->seq;
		}
	} else {
		/* older than both: walked afresh, the newest's walks left
		 * as they are, kept in place of the one before */
		v = ibw_jobview_build(s, NULL);
		if (v) {
			ibw_jobview_unref(c->prev);
			c->prev = ibw_jobview_ref(v);
			c->prev_seq = s->seq;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return v;
}

void ibw_jobcache_stats(struct ibw_jobcache *c, uint64_t *walked,
			uint64_t *reused)
{
	ibw_jobroutes_stats(c->routes, walked, reused);
}
