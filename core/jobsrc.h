/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where the running jobs come from (docs/jobs.md): a spool directory,
 * one file per running job (core/jobs.h), watched with inotify and read
 * again when it changes; and a check against squeue every so often, on a
 * thread of its own, that removes the files of jobs no longer running (a
 * missed epilog) and writes those of running jobs without one (a missed
 * prolog). The directory is the only thing the two share. squeue runs
 * with --all and an environment of PATH and SLURM_CONF only; while
 * PrivateData=jobs hides jobs from us (scontrol show config, scontrol
 * beside squeue) the check removes nothing.
 */
#ifndef IBW_JOBSRC_H
#define IBW_JOBSRC_H

#include <stdint.h>

#include "jobs.h"
#include "loop.h"

struct ibw_jobsrc_opts {
	const char *dir;
	uint64_t check_interval_us; /* 0: no squeue check */
	const char *squeue; /* the squeue binary; NULL: /usr/bin/squeue */
	/* "SLURM_NAME FABRIC_NAME" lines (FABRIC_NAME: the first word of
	 * the HCAs' NodeDescription, or a node GUID 0x...); NULL: none */
	const char *host_map;
};

struct ibw_jobsrc;

/* Why the squeue check removes no file. */
enum {
	IBW_JOBS_KEEP_NONE, /* it does remove them */
	IBW_JOBS_KEEP_PRIVATE, /* PrivateData=jobs hides jobs from us */
	IBW_JOBS_KEEP_UNKNOWN, /* scontrol show config did not say */
};

/* @changed is called (on the loop) after the set changed. NULL with a
 * message in @err when @dir is not a usable path. A directory that does
 * not exist yet is looked for again every 5 s. */
struct ibw_jobsrc *ibw_jobsrc_new(struct ibw_loop *loop,
				  const struct ibw_jobsrc_opts *o,
				  void (*changed)(void *arg), void *arg,
				  char *err, size_t errlen);
void ibw_jobsrc_free(struct ibw_jobsrc *js);
/* The current set, borrowed (ibw_jobset_ref() to keep it); never NULL. */
struct ibw_jobset *ibw_jobsrc_set(struct ibw_jobsrc *js);

/* What one squeue check did, for the logs and tests. */
struct ibw_jobsrc_check {
	uint64_t checks, failures;
	uint64_t dropped, added; /* files removed, files written */
	int keeping; /* why no file is removed: IBW_JOBS_KEEP_* */
};
void ibw_jobsrc_checks(struct ibw_jobsrc *js, struct ibw_jobsrc_check *out);

#endif
