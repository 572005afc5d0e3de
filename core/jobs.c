// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostlist.h"
#include "jobs.h"
#include "safename.h"

#define FILE_MAX 65536

static int valid_id(const char *s)
{
	size_t i, n = strlen(s);

	if (!n || n >= 32)
		return 0;
	for (i = 0; i < n; i++)
		if ((s[i] < '0' || s[i] > '9') && s[i] != '_')
			return 0;
	return 1;
}

static void copy(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* @s (a @cap-byte buffer) made safe in place, as names from the fabric
 * are (core/safename.h): cut between characters to fit. */
static void safe_in_place(char *s, size_t cap)
{
	char tmp[IBW_NAME_SIZE];

	ibw_name_sanitize(tmp, cap < sizeof(tmp) ? cap : sizeof(tmp), s,
			  strlen(s));
	memcpy(s, tmp, strlen(tmp) + 1);
}

struct hosts {
	char **v;
	unsigned n, cap;
};

static int add_host(const char *name, void *arg)
{
	struct hosts *h = arg;

	if (h->n == h->cap) {
		unsigned cap = h->cap ? 2 * h->cap : 16;
		char **v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	h->v[h->n] = strdup(name);
	if (!h->v[h->n])
		return -ENOMEM;
	h->n++;
	return 0;
}

void ibw_job_clear(struct ibw_job *j)
{
	unsigned i;

	free(j->nodes);
	for (i = 0; i < j->nhosts; i++) {
		free(j->hosts[i]);
		if (j->match)
			free(j->match[i]);
	}
	free(j->hosts);
	free(j->match);
	memset(j, 0, sizeof(*j));
}

int ibw_job_parse(const char *text, size_t len, struct ibw_job *j, char *err,
		  size_t errlen)
{
	const char *p = text, *end = text + len;
	struct hosts h = { NULL, 0, 0 };
	long rc;
	int line = 0;

	memset(j, 0, sizeof(*j));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end, *eq;
		size_t kl;

		line++;
		if (e > p && e[-1] == '\r')
			e--;
		if (e == p || *p == '#') {
			p = nl ? nl + 1 : end;
			continue;
		}
		eq = memchr(p, '=', (size_t)(e - p));
		if (!eq) {
			snprintf(err, errlen, "line %d: no '='", line);
			goto bad;
		}
		kl = (size_t)(eq - p);
#define KEY(k) (kl == sizeof(k) - 1 && !memcmp(p, k, kl))
		if (KEY("job_id"))
			copy(j->id, sizeof(j->id), eq + 1,
			     (size_t)(e - eq - 1));
		else if (KEY("array_job_id"))
			copy(j->array_id, sizeof(j->array_id), eq + 1,
			     (size_t)(e - eq - 1));
		else if (KEY("array_task_id"))
			copy(j->task, sizeof(j->task), eq + 1,
			     (size_t)(e - eq - 1));
		else if (KEY("user"))
			copy(j->user, sizeof(j->user), eq + 1,
			     (size_t)(e - eq - 1));
		else if (KEY("partition"))
			copy(j->partition, sizeof(j->partition), eq + 1,
			     (size_t)(e - eq - 1));
		else if (KEY("nodes")) {
			free(j->nodes);
			j->nodes = strndup(eq + 1, (size_t)(e - eq - 1));
			if (!j->nodes)
				goto nomem;
		}
#undef KEY
		/* other keys: a newer prolog's, ignored */
		p = nl ? nl + 1 : end;
	}
	/* The prolog writes what Slurm gave it, and anyone who can write
	 * the spool can write anything: the texts are made safe where
	 * they enter, as NodeDescriptions are. */
	safe_in_place(j->user, sizeof(j->user));
	safe_in_place(j->partition, sizeof(j->partition));
	if (j->nodes) {
		size_t n = strlen(j->nodes);
		char *safe = malloc(3 * n + 1);

		if (!safe)
			goto nomem;
		ibw_name_sanitize(safe, 3 * n + 1, j->nodes, n);
		free(j->nodes);
		j->nodes = safe;
	}
	if (!valid_id(j->id)) {
		snprintf(err, errlen, "no valid job_id");
		goto bad;
	}
	if (j->array_id[0] && !valid_id(j->array_id)) {
		snprintf(err, errlen, "bad array_job_id");
		goto bad;
	}
	rc = ibw_hostlist_expand(j->nodes ? j->nodes : "", add_host, &h);
	if (rc == -ENOMEM)
		goto nomem;
	if (rc < 0) {
		snprintf(err, errlen, "nodes: not a hostlist (%s)",
			 rc == -E2BIG ? "too many or too long" : "malformed");
		for (unsigned i = 0; i < h.n; i++)
			free(h.v[i]);
		free(h.v);
		goto bad;
	}
	j->hosts = h.v;
	j->nhosts = h.n;
	return 0;
nomem:
	for (unsigned i = 0; i < h.n; i++)
		free(h.v[i]);
	free(h.v);
	ibw_job_clear(j);
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
bad:
	ibw_job_clear(j);
	return -EINVAL;
}

/* Job ids in numeric order ("4711" < "10000"), array tasks' "4711_3"
 * after their number. */
static int cmp_id(const char *a, const char *b)
{
	size_t la = strspn(a, "0123456789"), lb = strspn(b, "0123456789");

	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a, b);
}

static int cmp_job(const void *x, const void *y)
{
	return cmp_id(((const struct ibw_job *)x)->id,
		      ((const struct ibw_job *)y)->id);
}

static char *slurp(int dfd, const char *name, size_t *len)
{
	int fd = openat(dfd, name,
			O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	char *buf;
	ssize_t n;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	/* a regular file (not a FIFO swapped in), of a sane size */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size >= FILE_MAX) {
		close(fd);
		return NULL;
	}
	buf = malloc(FILE_MAX);
	while (buf && got < FILE_MAX &&
	       (n = read(fd, buf + got, FILE_MAX - got)) > 0)
		got += (size_t)n;
	close(fd);
	if (buf && got == FILE_MAX) {
		free(buf);
		return NULL;
	}
	*len = got;
	return buf;
}

struct ibw_jobset *ibw_jobs_scan(const char *dir,
				 void (*log)(const char *msg, void *arg),
				 void *arg)
{
	struct ibw_jobset *s;
	struct dirent *de;
	unsigned cap = 0;
	DIR *d = opendir(dir);
	char err[160], msg[400];

	if (!d)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		closedir(d);
		return NULL;
	}
	s->refs = 1;
	while ((de = readdir(d)) && s->n < IBW_JOBS_MAX) {
		struct ibw_job j;
		struct stat st;
		size_t len;
		char *text;
		int rc;

		if (de->d_name[0] == '.' || !valid_id(de->d_name))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		text = slurp(dirfd(d), de->d_name, &len);
		if (!text) {
			s->bad++;
			continue;
		}
		rc = ibw_job_parse(text, len, &j, err, sizeof(err));
		free(text);
		if (rc == 0 && strcmp(j.id, de->d_name)) {
			snprintf(err, sizeof(err),
				 "job_id %.31s in file %.100s", j.id,
				 de->d_name);
			ibw_job_clear(&j);
			rc = -EINVAL;
		}
		if (rc) {
			s->bad++;
			if (log) {
				snprintf(msg, sizeof(msg),
					 "%.200s/%.40s: %.150s", dir,
					 de->d_name, err);
				log(msg, arg);
			}
			continue;
		}
		j.since_us = (uint64_t)st.st_mtim.tv_sec * 1000000 +
			     (uint64_t)st.st_mtim.tv_nsec / 1000;
		if (s->n == cap) {
			struct ibw_job *v;

			cap = cap ? 2 * cap : 64;
			v = realloc(s->jobs, cap * sizeof(*v));
			if (!v) {
				ibw_job_clear(&j);
				break;
			}
			s->jobs = v;
		}
		s->jobs[s->n++] = j;
	}
	closedir(d);
	if (s->n)
		qsort(s->jobs, s->n, sizeof(*s->jobs), cmp_job);
	return s;
}

struct ibw_jobset *ibw_jobset_ref(struct ibw_jobset *s)
{
	if (s)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	return s;
}

void ibw_jobset_unref(struct ibw_jobset *s)
{
	unsigned i;

	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (i = 0; i < s->n; i++)
		ibw_job_clear(&s->jobs[i]);
	free(s->jobs);
	free(s);
}

const struct ibw_job *ibw_jobset_find(const struct ibw_jobset *s,
				      const char *id)
{
	unsigned lo = 0, hi = s ? s->n : 0;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		int c = cmp_id(s->jobs[mid].id, id);

		if (!c)
			return &s->jobs[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int ibw_job_write(const char *dir, const struct ibw_job *j)
{
	char tmp[4096], path[4096];
	FILE *f;
	int rc = 0;

	if (!valid_id(j->id))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s", dir, j->id);
	snprintf(tmp, sizeof(tmp), "%s/.%s.ibwatchd", dir, j->id);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "job_id=%s\n", j->id);
	if (j->array_id[0])
		fprintf(f, "array_job_id=%s\narray_task_id=%s\n", j->array_id,
			j->task);
	fprintf(f, "user=%s\npartition=%s\nnodes=%s\n", j->user, j->partition,
		j->nodes ? j->nodes : "");
	if (fclose(f))
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}
