/* SPDX-License-Identifier: BSD-2-Clause */
/* The running jobs' Prometheus series (internal to http/). */
#ifndef IBW_PROM_JOBS_H
#define IBW_PROM_JOBS_H

#include "prom_buf.h"
#include "snapshot.h"

/* ibwatch_job_* for every running job; nothing without a job source. */
void ibw_prom_jobs(struct ibw_pb *b, const struct ibw_snapshot *s);

#endif
