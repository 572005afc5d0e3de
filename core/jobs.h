/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Running jobs (docs/jobs.md): the job map as the spool directory says
 * it, one file per running job written by the shipped Slurm prolog
 * (deploy/slurm/) and removed by its epilog:
 *
 *   job_id=4711
 *   array_job_id=4700      (array jobs; else absent or empty)
 *   array_task_id=3
 *   user=alice
 *   partition=gpu
 *   nodes=node[0001-0004]  (a Slurm hostlist expression)
 *
 * A set is immutable once made and reference counted: snapshots share it.
 */
#ifndef IBW_JOBS_H
#define IBW_JOBS_H

#include <stddef.h>
#include <stdint.h>

struct ibw_job {
	char id[32];
	char array_id[32]; /* "" unless an array job's task */
	char task[16];
	char user[64];
	char partition[64];
	char *nodes; /* the expression, as written */
	char **hosts; /* expanded, in its order */
	unsigned nhosts;
	/* per host, the name to find its HCAs by (--jobs-host-map: the
	 * first word of their NodeDescription, or a node GUID "0x...");
	 * NULL, or an entry NULL: the host's own name */
	char **match;
	uint64_t since_us; /* the file's mtime, CLOCK_REALTIME */
};

struct ibw_jobset {
	unsigned refs; /* atomic */
	struct ibw_job *jobs; /* by id (numbers in numeric order) */
	unsigned n;
	unsigned bad; /* files that could not be read */
	/* the squeue check (core/jobsrc.h): 0 none runs; else it runs,
	 * and check - 1 is IBW_JOBS_KEEP_NONE when it removes the files
	 * of ended jobs, or why it removes none */
	int check;
};

/* The most job files read from a spool directory. */
#define IBW_JOBS_MAX 65536

/*
 * One job file's text into @j (its strings owned by @j afterwards:
 * ibw_job_clear()). 0, or -EINVAL with a reason in @err (a line without
 * '=', no job_id, a bad id, a malformed node list), -ENOMEM.
 */
int ibw_job_parse(const char *text, size_t len, struct ibw_job *j, char *err,
		  size_t errlen);
void ibw_job_clear(struct ibw_job *j);

/*
 * Every job file of directory @dir (files named by a job id; others, and
 * names starting with '.', are skipped). A file that cannot be read is
 * logged through @log (may be NULL) and counted in bad. NULL with errno
 * when the directory cannot be read.
 */
struct ibw_jobset *ibw_jobs_scan(const char *dir,
				 void (*log)(const char *msg, void *arg),
				 void *arg);
struct ibw_jobset *ibw_jobset_ref(struct ibw_jobset *s);
void ibw_jobset_unref(struct ibw_jobset *s);
/* The job with @id, or NULL. */
const struct ibw_job *ibw_jobset_find(const struct ibw_jobset *s,
				      const char *id);

/*
 * Write job @j's file into @dir atomically (a temporary file, then
 * rename), as the prolog does; the squeue check uses it. 0 or -errno.
 */
int ibw_job_write(const char *dir, const struct ibw_job *j);

#endif
