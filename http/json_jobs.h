/* SPDX-License-Identifier: BSD-2-Clause */
/* /api/v1/jobs (core/jobview.h) as JSON (internal to http/). */
#ifndef IBW_JSON_JOBS_H
#define IBW_JSON_JOBS_H

#include "json.h"
#include "snapshot.h"

/* -ENOENT: no job source (nothing written). */
int ibw_json_write_jobs(struct ibw_jw *w, const struct ibw_snapshot *s);
/* -ENOENT: no job source; -ESRCH: no such running job. */
int ibw_json_write_job(struct ibw_jw *w, const struct ibw_snapshot *s,
		       const char *id);

#endif
