// SPDX-License-Identifier: BSD-2-Clause
/*
 * The row index registry: an open-addressed table of (GUID, port) to
 * index, nodes under the port number NODE_KEY. The file is text,
 *
 *	ibwatch-snmp-rows 1
 *	n GUID INDEX		a node
 *	p GUID PORT INDEX	a port
 *
 * GUIDs as 0x and 16 hex digits. A line that does not parse, or claims
 * an index already taken, is dropped (its node or port gets a new index
 * when it is next seen) and counted in the one warning the load logs.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "mib_rows.h"

#define ROWS_MAGIC "ibwatch-snmp-rows 1"
#define NODE_KEY 0xffffu
/* IbwRowIndex is Unsigned32 (1..2147483647) */
#define INDEX_MAX 2147483647u

struct slot {
	uint64_t guid;
	uint32_t port; /* NODE_KEY: the node */
	uint32_t idx; /* 0: empty */
};

struct mib_rows {
	char *path;
	struct slot *slots;
	size_t cap, n; /* cap a power of two */
	uint32_t next_node, next_port;
	int dirty;
	int err; /* the last write's, logged once */
};

static size_t slot_of(const struct mib_rows *r, uint64_t guid, uint32_t port)
{
	uint64_t h = (guid ^ ((uint64_t)port << 48)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (r->cap - 1);
}

static struct slot *lookup(const struct mib_rows *r, uint64_t guid,
			   uint32_t port)
{
	size_t i;

	if (!r->cap)
		return NULL;
	for (i = slot_of(r, guid, port);; i = (i + 1) & (r->cap - 1)) {
		struct slot *s = &r->slots[i];

		if (!s->idx || (s->guid == guid && s->port == port))
			return s;
	}
}

static int grow(struct mib_rows *r)
{
	struct slot *old = r->slots;
	size_t i, ocap = r->cap;

	r->cap = ocap ? ocap * 2 : 1024;
	r->slots = calloc(r->cap, sizeof(*r->slots));
	if (!r->slots) {
		r->slots = old;
		r->cap = ocap;
		return -ENOMEM;
	}
	for (i = 0; i < ocap; i++)
		if (old[i].idx)
			*lookup(r, old[i].guid, old[i].port) = old[i];
	free(old);
	return 0;
}

/* Enter (@guid, @port) at @idx; -EEXIST when it has one already. */
static int put(struct mib_rows *r, uint64_t guid, uint32_t port, uint32_t idx)
{
	struct slot *s;

	if ((r->n + 1) * 2 > r->cap && grow(r) < 0)
		return -ENOMEM;
	s = lookup(r, guid, port);
	if (s->idx)
		return -EEXIST;
	s->guid = guid;
	s->port = port;
	s->idx = idx;
	r->n++;
	return 0;
}

static uint32_t give(struct mib_rows *r, uint64_t guid, uint32_t port,
		     uint32_t *next)
{
	struct slot *s = lookup(r, guid, port);

	if (s && s->idx)
		return s->idx;
	if (*next > INDEX_MAX || put(r, guid, port, *next) < 0)
		return 0;
	r->dirty = 1;
	return (*next)++;
}

uint32_t mib_rows_node(struct mib_rows *r, uint64_t guid)
{
	return give(r, guid, NODE_KEY, &r->next_node);
}

uint32_t mib_rows_port(struct mib_rows *r, uint64_t guid, unsigned port)
{
	return give(r, guid, port & 0xff, &r->next_port);
}

uint32_t mib_rows_find_port(const struct mib_rows *r, uint64_t guid,
			    unsigned port)
{
	const struct slot *s = lookup(r, guid, port & 0xff);

	return s ? s->idx : 0;
}

/* Every index in use, nodes' and ports' apart, to refuse a second claim
 * on one: a sorted check after the load. */
struct claim {
	uint32_t idx;
	uint32_t line;
	uint64_t guid;
	uint32_t port;
};

static int cmp_claim(const void *a, const void *b)
{
	const struct claim *x = a, *y = b;

	if (x->port == NODE_KEY) {
		if (y->port != NODE_KEY)
			return -1;
	} else if (y->port == NODE_KEY) {
		return 1;
	}
	if (x->idx != y->idx)
		return x->idx < y->idx ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static void load(struct mib_rows *r)
{
	FILE *f = fopen(r->path, "r");
	struct claim *c = NULL;
	size_t n = 0, cap = 0, i;
	unsigned bad = 0, line = 0;
	char buf[128];

	if (!f) {
		if (errno != ENOENT)
			log_warn("snmp", "%s: %s: row indexes given afresh",
				 r->path, strerror(errno));
		return;
	}
	if (!fgets(buf, sizeof(buf), f) ||
	    strncmp(buf, ROWS_MAGIC "\n", sizeof(ROWS_MAGIC))) {
		log_warn("snmp",
			 "%s: not an ibwatch row index file: row "
			 "indexes given afresh",
			 r->path);
		fclose(f);
		return;
	}
	while (fgets(buf, sizeof(buf), f)) {
		struct claim k = { 0 };
		unsigned long long g, idx;
		unsigned port;
		char tail;

		line++;
		if (sscanf(buf, "n %llx %llu%c", &g, &idx, &tail) == 3 &&
		    tail == '\n') {
			k.port = NODE_KEY;
		} else if (sscanf(buf, "p %llx %u %llu%c", &g, &port, &idx,
				  &tail) == 4 &&
			   tail == '\n' && port <= 0xff) {
			k.port = port;
		} else {
			bad++;
			continue;
		}
		if (!idx || idx > INDEX_MAX) {
			bad++;
			continue;
		}
		k.guid = g;
		k.idx = (uint32_t)idx;
		k.line = line;
		if (n == cap) {
			struct claim *nc;

			cap = cap ? cap * 2 : 4096;
			nc = realloc(c, cap * sizeof(*c));
			if (!nc) {
				log_err("snmp", "%s: out of memory", r->path);
				break;
			}
			c = nc;
		}
		c[n++] = k;
	}
	fclose(f);
	qsort(c, n, sizeof(*c), cmp_claim);
	for (i = 0; i < n; i++) {
		uint32_t *next = c[i].port == NODE_KEY ? &r->next_node
						       : &r->next_port;

		/* a dropped line's index is not given again either */
		if (c[i].idx >= *next)
			*next = c[i].idx + 1;
		if ((i && c[i].idx == c[i - 1].idx &&
		     (c[i].port == NODE_KEY) == (c[i - 1].port == NODE_KEY)) ||
		    put(r, c[i].guid, c[i].port, c[i].idx) < 0)
			bad++;
	}
	free(c);
	if (bad) {
		log_warn("snmp",
			 "%s: %u line(s) dropped: those nodes and "
			 "ports get new row indexes",
			 r->path, bad);
		r->dirty = 1;
	}
}

struct mib_rows *mib_rows_new(const char *path)
{
	struct mib_rows *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->next_node = r->next_port = 1;
	if (path) {
		r->path = strdup(path);
		if (!r->path) {
			free(r);
			return NULL;
		}
		load(r);
	}
	return r;
}

void mib_rows_free(struct mib_rows *r)
{
	if (!r)
		return;
	free(r->slots);
	free(r->path);
	free(r);
}

/* The rename in @path's directory made durable; a failure costs only
 * that (the file is whole either way). */
static void sync_dir(const char *path)
{
	char dir[4096];
	char *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

static int write_rows(const struct mib_rows *r, const char *tmp)
{
	FILE *f;
	size_t i;
	int fd, rc = 0;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	fputs(ROWS_MAGIC "\n", f);
	for (i = 0; i < r->cap; i++) {
		const struct slot *s = &r->slots[i];

		if (!s->idx)
			continue;
		if (s->port == NODE_KEY)
			fprintf(f, "n 0x%016" PRIx64 " %" PRIu32 "\n", s->guid,
				s->idx);
		else
			fprintf(f,
				"p 0x%016" PRIx64 " %" PRIu32 " %" PRIu32 "\n",
				s->guid, s->port, s->idx);
	}
	/* a failed write inside fprintf() may show only in ferror() */
	if (fflush(f) != 0 || ferror(f) || fsync(fd) != 0)
		rc = errno ? -errno : -EIO;
	if (fclose(f) != 0 && !rc)
		rc = -errno;
	return rc;
}

int mib_rows_save(struct mib_rows *r)
{
	char tmp[4096];
	int rc;

	if (!r->dirty || !r->path)
		return 0;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", r->path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	errno = 0;
	rc = write_rows(r, tmp);
	if (!rc && rename(tmp, r->path) != 0)
		rc = -errno;
	if (!rc)
		sync_dir(r->path);
	if (rc) {
		unlink(tmp);
		if (rc != r->err)
			log_err("snmp",
				"%s: %s: row indexes not kept (tried "
				"again as new ones are given)",
				r->path, strerror(-rc));
		r->err = rc;
		return rc;
	}
	if (r->err)
		log_info("snmp", "%s: row indexes kept again", r->path);
	r->dirty = 0;
	r->err = 0;
	return 0;
}
