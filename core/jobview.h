/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The running jobs against the fabric (docs/jobs.md): each job's hosts
 * found as CA ports (a host is the first word of its HCAs'
 * NodeDescription, as hosts set it; every port of every such HCA), their
 * rates, errors and transmit wait summed; the links the census routes
 * the job's host pairs over, with how many pairs use each; the worst
 * health among them; and, per link, the jobs that cross it. Built from
 * one snapshot, for its first reader, and kept for the next ones by the
 * monitor's cache (core/jobcache.h). Reference-counted: any thread may
 * drop one.
 */
#ifndef IBW_JOBVIEW_H
#define IBW_JOBVIEW_H

#include <stdint.h>

#include "jobs.h"
#include "jobview_job.h"
#include "snapshot.h"

/* The most host pairs walked for one job: beyond it the job's links are
 * those of the first pairs only (partial). */
#define IBW_JOB_PAIRS_MAX 65536

struct ibw_jobview {
	unsigned users; /* references: atomic */
	struct ibw_jobview_job *jobs; /* in the job set's order */
	unsigned n;
	/* (guid, port, job index) for every job's every link direction,
	 * sorted: which jobs cross a link */
	struct ibw_jobview_ref {
		uint64_t guid;
		uint8_t port;
		unsigned job;
	} * refs;
	size_t nrefs;
};

struct ibw_jobroutes;

/* The view of @s's jobs, one reference for the caller, the census walks
 * taken from and kept in @r (NULL: every job walked afresh); NULL when
 * @s has none or on ENOMEM. */
struct ibw_jobview *ibw_jobview_build(const struct ibw_snapshot *s,
				      struct ibw_jobroutes *r);
struct ibw_jobview *ibw_jobview_ref(struct ibw_jobview *v);
/* Drop a reference; the last frees the view. NULL: nothing. */
void ibw_jobview_unref(struct ibw_jobview *v);

/*
 * The jobs whose routes cross the cable at (@guid, @port) - (@pguid,
 * @pport), either way: their indices into v->jobs, ascending, at most
 * @max into @out. Returns how many there are.
 */
unsigned ibw_jobview_cable_jobs(const struct ibw_jobview *v, uint64_t guid,
				uint8_t port, uint64_t pguid, uint8_t pport,
				unsigned *out, unsigned max);

/* The job with @id, or NULL. */
const struct ibw_jobview_job *ibw_jobview_find(const struct ibw_jobview *v,
					       const char *id);

#endif
