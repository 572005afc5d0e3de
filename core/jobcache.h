/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The job view of a snapshot (core/jobview.h), made for its first reader
 * and kept for the next ones of the same snapshot, keyed by the
 * snapshot's sequence as http/cache.c keys answers: snapshots stay
 * read-only to their readers. The monitor owns the cache (with the
 * census walks its views share, core/jobroutes.h), names it in every
 * snapshot it publishes and frees it after every reader has gone; any
 * thread may ask, under the cache's lock.
 */
#ifndef IBW_JOBCACHE_H
#define IBW_JOBCACHE_H

#include <stdint.h>

#include "jobview.h"
#include "snapshot.h"

struct ibw_jobcache;

/* NULL on ENOMEM. */
struct ibw_jobcache *ibw_jobcache_new(void);
void ibw_jobcache_free(struct ibw_jobcache *c);

/*
 * The view of @s's jobs, one reference for the caller
 * (ibw_jobview_unref): the one kept for @s, else made now and kept. The
 * cache keeps the newest snapshot's view and the one before it, so that
 * a reader that took its snapshot before a publish (a streamed answer
 * across one) does not make its view again, nor push out the newest. NULL
 * when @s has no job source or no cache, or out of memory. A view points
 * into @s: use it while @s is held.
 */
struct ibw_jobview *ibw_jobcache_view(const struct ibw_snapshot *s);

/* Jobs walked, and jobs that took an earlier walk, since the start. */
void ibw_jobcache_stats(struct ibw_jobcache *c, uint64_t *walked,
			uint64_t *reused);

#endif
