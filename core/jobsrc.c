// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jobsrc.h"
#include "log.h"

#define RESCAN_US 20000 /* after the last change seen */
#define RETRY_US 5000000 /* a missing directory */
#define SQUEUE_TIMEOUT_MS 20000
#define SQUEUE_MAX (16u << 20)

struct hmap {
	char *from, *to;
};

struct ibw_jobsrc {
	struct hmap *map; /* --jobs-host-map, by from */
	size_t nmap;
	struct ibw_loop *loop;
	char *dir, *squeue, *scontrol;
	char *env[3]; /* squeue's: PATH, and SLURM_CONF if we have one */
	uint64_t check_us;
	int ifd, wd;
	int efd; /* the check thread's word that its state changed */
	struct ibw_timer *rescan, *retry;
	struct ibw_jobset *set;
	void (*changed)(void *arg);
	void *arg;
	/* the squeue check's thread */
	pthread_t th;
	int have_th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop;
	pid_t child; /* squeue or scontrol running, or 0 */
	struct ibw_jobsrc_check st;
};

static void log_bad(const char *msg, void *arg)
{
	(void)arg;
	log_warn("jobs", "%s", msg);
}

static void watch_dir(struct ibw_jobsrc *js)
{
	if (js->ifd < 0 || js->wd >= 0)
		return;
	js->wd = inotify_add_watch(
		js->ifd, js->dir,
		IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_DELETE |
			IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
}

static int cmp_map(const void *a, const void *b)
{
	return strcmp(((const struct hmap *)a)->from,
		      ((const struct hmap *)b)->from);
}

/* The host map file: "SLURM_NAME FABRIC_NAME" per line, '#' comments.
 * 0, or -1 with @err (a line of one word, or unreadable). */
static int load_map(struct ibw_jobsrc *js, const char *path, char *err,
		    size_t errlen)
{
	FILE *f = fopen(path, "re");
	char line[1024];
	int n = 0;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char a[512], b[512], extra[2];
		int k;
		struct hmap *v;

		n++;
		k = sscanf(line, " %511s %511s %1s", a, b, extra);
		if (k <= 0 || a[0] == '#')
			continue;
		if (k != 2) {
			snprintf(err, errlen,
				 "%s:%d: want SLURM_NAME FABRIC_NAME", path, n);
			fclose(f);
			return -1;
		}
		v = realloc(js->map, (js->nmap + 1) * sizeof(*v));
		if (v) {
			js->map = v;
			v[js->nmap].from = strdup(a);
			v[js->nmap].to = strdup(b);
		}
		if (!v || !v[js->nmap].from || !v[js->nmap].to) {
			if (v) {
				free(v[js->nmap].from);
				free(v[js->nmap].to);
			}
			snprintf(err, errlen, "%s: out of memory", path);
			fclose(f);
			return -1;
		}
		js->nmap++;
	}
	fclose(f);
	if (js->nmap)
		qsort(js->map, js->nmap, sizeof(*js->map), cmp_map);
	return 0;
}

/* Each job's hosts as the map names them. */
static void apply_map(struct ibw_jobsrc *js, struct ibw_jobset *s)
{
	unsigned j, h;

	for (j = 0; js->nmap && j < s->n; j++) {
		struct ibw_job *job = &s->jobs[j];

		job->match = calloc(job->nhosts + 1, sizeof(*job->match));
		for (h = 0; job->match && h < job->nhosts; h++) {
			struct hmap key = { job->hosts[h], NULL };
			const struct hmap *m = bsearch(&key, js->map, js->nmap,
						       sizeof(*js->map),
						       cmp_map);

			if (m)
				job->match[h] = strdup(m->to);
		}
	}
}

static void scan(struct ibw_jobsrc *js)
{
	struct ibw_jobset *s;

	watch_dir(js);
	s = ibw_jobs_scan(js->dir, log_bad, js);
	if (s)
		apply_map(js, s);
	if (!s) {
		if (errno == ENOENT || errno == ENOTDIR)
			ibw_timer_arm(js->retry, RETRY_US);
		else
			log_err("jobs", "%s: %s", js->dir, strerror(errno));
		s = calloc(1, sizeof(*s));
		if (!s)
			return;
		s->refs = 1;
	}
	pthread_mutex_lock(&js->lock);
	s->check = !js->have_th ? 0 : 1 + js->st.keeping;
	pthread_mutex_unlock(&js->lock);
	ibw_jobset_unref(js->set);
	js->set = s;
	if (js->changed)
		js->changed(js->arg);
}

/* The check removes files, or stopped doing so: a set that says it. */
static void on_checked(struct ibw_loop *loop, int fd, unsigned events,
		       void *arg)
{
	uint64_t v;

	(void)loop;
	(void)events;
	if (read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		scan(arg);
}

static void on_rescan(struct ibw_timer *t, void *arg)
{
	(void)t;
	scan(arg);
}

static void on_inotify(struct ibw_loop *loop, int fd, unsigned events,
		       void *arg)
{
	struct ibw_jobsrc *js = arg;
	char buf[4096] __attribute__((aligned(8)));
	ssize_t n;
	int gone = 0;

	(void)loop;
	(void)events;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		char *p = buf;

		while (p < buf + n) {
			const struct inotify_event *e = (const void *)p;

			if (e->mask &
			    (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
				gone = 1;
			p += sizeof(*e) + e->len;
		}
	}
	if (gone && js->wd >= 0) {
		inotify_rm_watch(js->ifd, js->wd);
		js->wd = -1;
	}
	/* a burst of files (many jobs starting) is one read */
	ibw_timer_arm(js->rescan, RESCAN_US);
}

/* ---- the squeue check (its own thread) ---- */

/* Run @argv[0] with @argv in the environment made at start (no SQUEUE_*
 * or SLURM_* of the daemon's own: they change what squeue prints) and
 * return its output, NUL-terminated, or NULL (errno) when it could not
 * run, failed, or took longer than SQUEUE_TIMEOUT_MS. */
static char *run_cmd(struct ibw_jobsrc *js, char *const argv[])
{
	posix_spawn_file_actions_t fa;
	int pfd[2], st = 0, rc, failed = 0;
	pid_t pid, w;
	char *out = NULL;
	size_t len = 0, cap = 0;
	struct timespec t0, t1;

	if (pipe(pfd))
		return NULL;
	fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
	fcntl(pfd[1], F_SETFD, FD_CLOEXEC);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, js->env);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (rc) {
		close(pfd[0]);
		errno = rc;
		return NULL;
	}
	/* ibw_jobsrc_free kills it rather than wait up to 20 s */
	pthread_mutex_lock(&js->lock);
	js->child = pid;
	if (js->stop)
		kill(pid, SIGKILL);
	pthread_mutex_unlock(&js->lock);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { pfd[0], POLLIN, 0 };
		long left;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = SQUEUE_TIMEOUT_MS -
		       ((t1.tv_sec - t0.tv_sec) * 1000 +
			(t1.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
			kill(pid, SIGKILL);
			failed = 1;
			break;
		}
		if (len + 4096 + 1 > cap) {
			char *o;

			cap = cap ? 2 * cap : 65536;
			o = cap > SQUEUE_MAX ? NULL : realloc(out, cap);
			if (!o) {
				kill(pid, SIGKILL);
				failed = 1;
				break;
			}
			out = o;
		}
		n = read(pfd[0], out + len, 4096);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(pfd[0]);
	/* not reaped yet, so the pid cannot name another process when
	 * ibw_jobsrc_free kills it */
	pthread_mutex_lock(&js->lock);
	js->child = 0;
	pthread_mutex_unlock(&js->lock);
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	/* Killed, cut short, failed or not reaped: no answer at all. An
	 * empty list from a squeue that failed would remove every file. */
	if (failed || w < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		free(out);
		errno = EIO;
		return NULL;
	}
	if (!out)
		return calloc(1, 1);
	out[len] = '\0';
	return out;
}

/* "KEY = VALUE" of `scontrol show config` (@conf): VALUE, its length in
 * @len, or NULL. */
static const char *conf_value(const char *conf, const char *key, size_t *len)
{
	size_t klen = strlen(key);
	const char *p;

	for (p = conf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *v = p + klen;

		if (strncmp(p, key, klen) || (*v != ' ' && *v != '='))
			continue;
		v += strspn(v, " ");
		if (*v++ != '=')
			continue;
		v += strspn(v, " ");
		*len = strcspn(v, "\n");
		return v;
	}
	return NULL;
}

/*
 * Whether squeue shows us every running job. With PrivateData=jobs
 * slurmctld lists only our own jobs to a user who is neither root nor
 * SlurmUser (slurm.conf(5)), even with --all: the rest would look ended.
 * Operators and administrators of the accounting database see them all
 * too, but nothing here tells them apart, so they are kept from
 * removing files as well.
 */
static int keep_why(struct ibw_jobsrc *js)
{
	char *const argv[] = { js->scontrol, "show", "config", NULL };
	char *conf = run_cmd(js, argv), *end;
	const char *v;
	size_t len;
	int why = IBW_JOBS_KEEP_UNKNOWN;
	uid_t me = geteuid();

	if (!conf)
		return IBW_JOBS_KEEP_UNKNOWN;
	v = conf_value(conf, "PrivateData", &len);
	if (v) {
		char list[256], *w, *save = NULL;

		snprintf(list, sizeof(list), "%.*s", (int)len, v);
		why = IBW_JOBS_KEEP_NONE;
		for (w = strtok_r(list, ",", &save); w;
		     w = strtok_r(NULL, ",", &save))
			if (!strcmp(w, "jobs"))
				why = IBW_JOBS_KEEP_PRIVATE;
	}
	/* "SlurmUser = slurm(64030)" */
	v = conf_value(conf, "SlurmUser", &len);
	if (why == IBW_JOBS_KEEP_PRIVATE && me == 0)
		why = IBW_JOBS_KEEP_NONE;
	if (why == IBW_JOBS_KEEP_PRIVATE && v && (v = memchr(v, '(', len)) &&
	    strtoul(v + 1, &end, 10) == me && *end == ')')
		why = IBW_JOBS_KEEP_NONE;
	free(conf);
	return why;
}

/* The id (first field) of each line of squeue's output of @nf fields
 * split at '|': an array of pointers into @out, and all @nf fields of
 * each line in @fp unless it is NULL. -ENOMEM or the count. */
static long parse_squeue(char *out, int nf, char ***idsp, char ***fp)
{
	char *line, *save = NULL, **ids = NULL, **f = NULL;
	size_t n = 0, cap = 0;

	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *v[6], *p = line;
		int k;

		for (k = 0; k < nf && p; k++) {
			v[k] = p;
			p = strchr(p, '|');
			if (p)
				*p++ = '\0';
		}
		if (k < nf || !v[0][0])
			continue;
		if (n == cap) {
			char **a, **b;

			cap = cap ? 2 * cap : 256;
			a = realloc(ids, cap * sizeof(*a));
			if (a)
				ids = a;
			b = fp ? realloc(f, (size_t)nf * cap * sizeof(*b))
			       : NULL;
			if (b)
				f = b;
			if (!a || (fp && !b)) {
				free(ids);
				free(f);
				return -ENOMEM;
			}
		}
		ids[n] = v[0];
		if (fp)
			memcpy(&f[(size_t)nf * n], v, (size_t)nf * sizeof(*v));
		n++;
	}
	*idsp = ids;
	if (fp)
		*fp = f;
	return (long)n;
}

static int cmp_idp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int listed(char **ids, size_t n, const char *id)
{
	return n && bsearch(&id, ids, n, sizeof(*ids), cmp_idp);
}

/* A running job without a file (a missed prolog): write it. 1 when
 * written. */
static int add_job(struct ibw_jobsrc *js, char **f)
{
	char path[4096];
	struct ibw_job j;
	struct stat st;
	int rc;

	memset(&j, 0, sizeof(j));
	snprintf(j.id, sizeof(j.id), "%s", f[0]);
	/* %K is "N/A" outside arrays (an array's last task has the
	 * array's own id: %F = %A) */
	if (strcmp(f[2], "N/A")) {
		snprintf(j.array_id, sizeof(j.array_id), "%s", f[1]);
		snprintf(j.task, sizeof(j.task), "%s", f[2]);
	}
	snprintf(j.user, sizeof(j.user), "%s", f[3]);
	snprintf(j.partition, sizeof(j.partition), "%s", f[4]);
	j.nodes = f[5];
	snprintf(path, sizeof(path), "%s/%s", js->dir, j.id);
	if (!stat(path, &st) || errno != ENOENT)
		return 0;
	rc = ibw_job_write(js->dir, &j);
	if (rc < 0) {
		log_warn("jobs",
			 "job %s runs (squeue) without a file, and %s cannot "
			 "be written: %s",
			 j.id, path, strerror(-rc));
		return 0;
	}
	return 1;
}

/*
 * Files just written for jobs squeue listed (@wrote): a job that ended
 * between squeue's answer and the write had its epilog remove nothing,
 * so ask again and take back the files of those no longer running. A
 * job still running now ends later, and its epilog removes the file.
 */
static void confirm_added(struct ibw_jobsrc *js, char **wrote, size_t nw,
			  uint64_t *added)
{
	char *const argv[] = { js->squeue, "--all", "-h", "-t",
			       "R",	   "-o",    "%A", NULL };
	char *out = run_cmd(js, argv), **ids = NULL, path[4096];
	long n = out ? parse_squeue(out, 1, &ids, NULL) : -1;
	size_t i;

	if (n > 0)
		qsort(ids, (size_t)n, sizeof(*ids), cmp_idp);
	for (i = 0; i < nw; i++) {
		if (n >= 0 && listed(ids, (size_t)n, wrote[i])) {
			(*added)++;
			log_info("jobs",
				 "job %s runs (squeue) without a file: "
				 "written (a missed prolog?)",
				 wrote[i]);
			continue;
		}
		/* not running any more, or squeue did not say: the next
		 * check writes it again if it runs */
		snprintf(path, sizeof(path), "%s/%s", js->dir, wrote[i]);
		if (unlink(path) && errno != ENOENT)
			log_warn("jobs", "%s: cannot remove: %s", path,
				 strerror(errno));
	}
	free(ids);
	free(out);
}

static const char *const keep_text[] = {
	[IBW_JOBS_KEEP_PRIVATE] =
		"PrivateData=jobs hides other users' jobs from "
		"this user",
	[IBW_JOBS_KEEP_UNKNOWN] = "scontrol show config does not say whether "
				  "PrivateData hides jobs",
};

/* Log a change of why files are kept, once. */
static void note_keep(struct ibw_jobsrc *js, int why)
{
	int was;

	uint64_t one = 1;

	pthread_mutex_lock(&js->lock);
	was = js->st.keeping;
	js->st.keeping = why;
	pthread_mutex_unlock(&js->lock);
	if (why == was)
		return;
	/* the loop makes a set that says so (/api/v1/jobs) */
	if (write(js->efd, &one, sizeof(one)) < 0)
		log_debug("jobs", "eventfd: %s", strerror(errno));
	if (why)
		log_warn("jobs",
			 "%s: the squeue check removes no job file while "
			 "it does (run ibwatchd as SlurmUser, or let the "
			 "epilog alone remove files)",
			 keep_text[why]);
	else
		log_info("jobs", "the squeue check removes the files of "
				 "ended jobs again");
}

static int stopping(struct ibw_jobsrc *js)
{
	int stop;

	pthread_mutex_lock(&js->lock);
	stop = js->stop;
	pthread_mutex_unlock(&js->lock);
	return stop;
}

static void check_once(struct ibw_jobsrc *js)
{
	char *const argv[] = {
		js->squeue,	     "--all", "-h", "-t", "R", "-o",
		"%A|%F|%K|%u|%P|%N", NULL
	};
	/* files written after squeue was asked are newer than its list */
	time_t asked = time(NULL);
	int why = keep_why(js);
	char *out = run_cmd(js, argv), **ids = NULL, **f = NULL;
	char **wrote = NULL;
	size_t nw = 0, k;
	long n;
	uint64_t dropped = 0, added = 0;
	struct dirent *de;
	DIR *d = NULL;

	n = out ? parse_squeue(out, 6, &ids, &f) : -1;
	if (stopping(js)) {
		/* ibw_jobsrc_free killed squeue or scontrol: no verdict */
		free(ids);
		free(f);
		free(out);
		return;
	}
	if (n < 0) {
		pthread_mutex_lock(&js->lock);
		js->st.checks++;
		js->st.failures++;
		pthread_mutex_unlock(&js->lock);
		log_warn("jobs",
			 "%s: no answer from squeue; the spool "
			 "directory is taken as it is",
			 js->squeue);
		free(out);
		return;
	}
	note_keep(js, why);
	wrote = n ? calloc((size_t)n, sizeof(*wrote)) : NULL;
	for (k = 0; wrote && k < (size_t)n; k++)
		if (add_job(js, &f[6 * k]))
			wrote[nw++] = ids[k];
	if (nw)
		confirm_added(js, wrote, nw, &added);
	if (n)
		qsort(ids, (size_t)n, sizeof(*ids), cmp_idp);
	if (why == IBW_JOBS_KEEP_NONE && !(d = opendir(js->dir)))
		log_warn("jobs", "%s: %s", js->dir, strerror(errno));
	while (d && (de = readdir(d))) {
		const char *name = de->d_name;
		size_t len = strspn(name, "0123456789_");
		struct stat st;

		if (!len || name[len] || listed(ids, (size_t)n, name))
			continue;
		/* a prolog that ran while squeue answered: the next check
		 * judges it */
		if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) ||
		    st.st_mtime >= asked - 1)
			continue;
		if (unlinkat(dirfd(d), name, 0) == 0) {
			dropped++;
			log_info("jobs",
				 "job %s is not running (squeue): its file "
				 "removed (a missed epilog?)",
				 name);
		} else if (errno != ENOENT) {
			log_warn("jobs",
				 "job %s is not running (squeue), but "
				 "%s/%s cannot be removed: %s",
				 name, js->dir, name, strerror(errno));
		}
	}
	if (d)
		closedir(d);
	free(wrote);
	free(ids);
	free(f);
	free(out);
	pthread_mutex_lock(&js->lock);
	js->st.checks++;
	js->st.dropped += dropped;
	js->st.added += added;
	pthread_mutex_unlock(&js->lock);
}

static void *checker(void *arg)
{
	struct ibw_jobsrc *js = arg;
	struct timespec until;

	pthread_mutex_lock(&js->lock);
	while (!js->stop) {
		pthread_mutex_unlock(&js->lock);
		check_once(js);
		pthread_mutex_lock(&js->lock);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += (time_t)(js->check_us / 1000000);
		until.tv_nsec += (long)(js->check_us % 1000000) * 1000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		while (!js->stop && pthread_cond_timedwait(&js->cond, &js->lock,
							   &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&js->lock);
	return NULL;
}

/* @a, then @len bytes of @b, then @c: a new string, or NULL. */
static char *join(const char *a, const char *b, size_t len, const char *c)
{
	size_t la = strlen(a), lc = strlen(c);
	char *s = malloc(la + len + lc + 1);

	if (!s)
		return NULL;
	memcpy(s, a, la);
	memcpy(s + la, b, len);
	memcpy(s + la + len, c, lc + 1);
	return s;
}

struct ibw_jobsrc *ibw_jobsrc_new(struct ibw_loop *loop,
				  const struct ibw_jobsrc_opts *o,
				  void (*changed)(void *arg), void *arg,
				  char *err, size_t errlen)
{
	struct ibw_jobsrc *js;

	if (!o->dir || o->dir[0] != '/') {
		snprintf(err, errlen, "jobs-dir must be an absolute path");
		return NULL;
	}
	js = calloc(1, sizeof(*js));
	if (!js)
		goto nomem;
	js->loop = loop;
	js->ifd = js->wd = js->efd = -1;
	js->dir = strdup(o->dir);
	js->squeue = strdup(o->squeue ? o->squeue : "/usr/bin/squeue");
	js->check_us = o->check_interval_us;
	if (js->squeue) {
		const char *slash = strrchr(js->squeue, '/');

		/* scontrol from where squeue is: the same Slurm */
		js->scontrol = join("", js->squeue,
				    slash ? (size_t)(slash - js->squeue) : 0,
				    slash ? "/scontrol" : "scontrol");
	}
	/* Nothing of our environment but where slurm.conf is: SQUEUE_*
	 * variables choose users, partitions, states, even the format
	 * (SQUEUE_FORMAT2 wins over -o), SLURM_CLUSTERS the cluster. */
	js->env[0] = strdup("PATH=/usr/sbin:/usr/bin:/sbin:/bin");
	if (getenv("SLURM_CONF"))
		js->env[1] = join("SLURM_CONF=", getenv("SLURM_CONF"),
				  strlen(getenv("SLURM_CONF")), "");
	pthread_mutex_init(&js->lock, NULL);
	pthread_cond_init(&js->cond, NULL);
	js->rescan = ibw_timer_new(loop, on_rescan, js);
	js->retry = ibw_timer_new(loop, on_rescan, js);
	if (!js->dir || !js->squeue || !js->scontrol || !js->env[0] ||
	    (getenv("SLURM_CONF") && !js->env[1]) || !js->rescan || !js->retry)
		goto nomem;
	if (o->host_map && load_map(js, o->host_map, err, errlen)) {
		ibw_jobsrc_free(js);
		return NULL;
	}
	js->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (js->ifd < 0 ||
	    ibw_loop_watch(loop, js->ifd, IBW_EV_READ, on_inotify, js) < 0) {
		snprintf(err, errlen, "inotify: %s", strerror(errno));
		ibw_jobsrc_free(js);
		return NULL;
	}
	js->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (js->efd < 0 ||
	    ibw_loop_watch(loop, js->efd, IBW_EV_READ, on_checked, js) < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		ibw_jobsrc_free(js);
		return NULL;
	}
	if (js->check_us && access(js->squeue, X_OK)) {
		log_info(
			"jobs",
			"%s: %s; no squeue check, the spool directory is taken "
			"as it is",
			js->squeue, strerror(errno));
	} else if (js->check_us &&
		   pthread_create(&js->th, NULL, checker, js) == 0) {
		js->have_th = 1;
	}
	/* the first set before anyone asks (and whether a check runs),
	 * told nobody: changed is called from the next one on */
	scan(js);
	js->changed = changed;
	js->arg = arg;
	return js;
nomem:
	snprintf(err, errlen, "out of memory");
	ibw_jobsrc_free(js);
	return NULL;
}

void ibw_jobsrc_free(struct ibw_jobsrc *js)
{
	if (!js)
		return;
	if (js->have_th) {
		pthread_mutex_lock(&js->lock);
		js->stop = 1;
		/* a squeue that hangs would hold the loop up to 20 s */
		if (js->child > 0)
			kill(js->child, SIGKILL);
		pthread_cond_signal(&js->cond);
		pthread_mutex_unlock(&js->lock);
		pthread_join(js->th, NULL);
	}
	if (js->ifd >= 0) {
		ibw_loop_unwatch(js->loop, js->ifd);
		close(js->ifd);
	}
	if (js->efd >= 0) {
		ibw_loop_unwatch(js->loop, js->efd);
		close(js->efd);
	}
	ibw_timer_free(js->rescan);
	ibw_timer_free(js->retry);
	ibw_jobset_unref(js->set);
	pthread_mutex_destroy(&js->lock);
	pthread_cond_destroy(&js->cond);
	for (size_t i = 0; i < js->nmap; i++) {
		free(js->map[i].from);
		free(js->map[i].to);
	}
	free(js->map);
	free(js->dir);
	free(js->squeue);
	free(js->scontrol);
	free(js->env[0]);
	free(js->env[1]);
	free(js);
}

struct ibw_jobset *ibw_jobsrc_set(struct ibw_jobsrc *js)
{
	return js->set;
}

void ibw_jobsrc_checks(struct ibw_jobsrc *js, struct ibw_jobsrc_check *out)
{
	pthread_mutex_lock(&js->lock);
	*out = js->st;
	pthread_mutex_unlock(&js->lock);
}
