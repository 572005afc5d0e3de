/* SPDX-License-Identifier: BSD-2-Clause */
/* The running jobs' Prometheus series (internal to http/). */
#ifndef IBW_PROM_JOBS_H
#define IBW_PROM_JOBS_H

#include "prom_buf.h"
#include "snapshot.h"

/* ibwatch_job_* for every running job; nothing without a job source. */
void ibw_prom_jobs(struct ibw_pb *b, const struct ibw_snapshot *s);

/* ibwatch_link_trouble_info for each cable of @by (@n, the view's in
 * label order) that is not ok: its ends' names, its reasons and the
 * running jobs whose routes cross it, what an alert about it names. */
void ibw_prom_link_trouble(struct ibw_pb *b, const struct ibw_snapshot *s,
			   const struct ibw_link *const *by, size_t n);

#endif
