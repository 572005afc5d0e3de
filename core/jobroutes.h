/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Each job's census walk kept from one job view to the next (the walk is
 * almost all of a view's cost, docs/benchmarks.md "The job view"): a job
 * whose ports (GUID, port and LID each, in order) and census are those of
 * its last walk takes that walk's links and pair counts. Shared by the
 * snapshots, one reference each; any thread, under its own lock.
 */
#ifndef IBW_JOBROUTES_H
#define IBW_JOBROUTES_H

#include <stdint.h>

#include "census.h"
#include "jobview_job.h"

struct ibw_jobroutes *ibw_jobroutes_new(void);
struct ibw_jobroutes *ibw_jobroutes_ref(struct ibw_jobroutes *r);
void ibw_jobroutes_unref(struct ibw_jobroutes *r);

/* A job view's build begins: its generation. */
uint64_t ibw_jobroutes_begin(struct ibw_jobroutes *r);
/*
 * @j (its job and ports set) given the links, pairs, pairs_routed and
 * partial of the last walk of its job over @census with the same ports:
 * 1; 0 when there is none (walk it, then ibw_jobroutes_put); -1 out of
 * memory.
 */
int ibw_jobroutes_take(struct ibw_jobroutes *r, uint64_t gen,
		       const struct ibw_census *census,
		       struct ibw_jobview_job *j);
/* Keep @j's walk over @census (a reference is held). Out of memory:
 * nothing kept. */
void ibw_jobroutes_put(struct ibw_jobroutes *r, uint64_t gen,
		       struct ibw_census *census,
		       const struct ibw_jobview_job *j);
/* The build of @gen over @census is done: forget the walks over other
 * censuses and those the last four builds did not use (jobs that
 * ended), so that no older census is held. */
void ibw_jobroutes_end(struct ibw_jobroutes *r, uint64_t gen,
		       const struct ibw_census *census);

/* Jobs walked, and jobs that took an earlier walk, since the start. */
void ibw_jobroutes_stats(struct ibw_jobroutes *r, uint64_t *walked,
			 uint64_t *reused);

#endif
