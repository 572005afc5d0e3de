// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"
#include "ctr_journal.h"
#include "ctr_state.h"
#include "hash.h"
#include "links.h"

/* A port as last written: its key, the hash of its base, and at a load
 * its index in the records read. */
struct jport {
	uint64_t guid;
	uint64_t base; /* base_hash(); 0 with port 0: an empty slot */
	uint32_t idx;
	uint8_t port, used;
};

struct ibw_ctr_journal {
	char *path, *jpath;
	int fd; /* the journal, appended to; -1: not open */
	uint64_t gen; /* the snapshot's, which the batches carry */
	uint64_t interval_us;
	uint64_t win_us; /* the last window batch's time (or snapshot's) */
	uint64_t snap_bytes;
	int need_snapshot;
	struct jport *tab; /* open addressing, linear probing */
	size_t cap, n;
	struct ibw_ctr_journal_stats st;
	/* the batch being written */
	char *buf;
	size_t len, bcap;
	uint64_t h;
	unsigned np, nl;
	int err;
};

/* Batches are flushed in pieces of about this much; the end line,
 * written last, vouches for them all. */
#define FLUSH_BYTES (1u << 20)

static uint64_t mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	return h ^ h >> 29;
}

/*
 * What a port's lines say that the hardware does not remember: every
 * field the file keeps but the readings, and of each counter the total
 * less its reading (in our units), which a reading that only grew leaves
 * as it was. Two records of the same hash restore the same totals.
 */
static uint64_t base_hash(const struct ibw_port_ctrs *p)
{
	uint64_t h = mix(IBW_FNV1A64_INIT, p->is_switch);
	unsigned k;
	int i;

	h = mix(h, p->resets);
	h = mix(h, p->discontinuity_us);
	for (i = 0; i < IBW_CTR_MAX; i++) {
		const struct ibw_ctr_val *v = ibw_ctr_val(p, (enum ibw_ctr)i);
		unsigned flags = v->have_raw | v->from_ext << 1 |
				 v->saturated << 2 | v->over_threshold << 3 |
				 v->reset_by_us << 4;

		h = mix(h, (uint64_t)flags << 32 | v->resets);
		h = mix(h, v->total - v->raw * ibw_ctr_desc(i)->scale);
	}
	if (p->fec) {
		h = mix(h, 1ull << 40 | (uint64_t)p->fec->layout << 32 |
				   p->fec->resets);
		h = mix(h, p->fec->have);
		for (k = 0; k < IBW_FEC_NFIELDS; k++)
			h = mix(h, p->fec->total[k] - p->fec->raw[k]);
	}
	if (p->cong) {
		h = mix(h, 2ull << 40 | (uint64_t)p->cong->have << 32 |
				   p->cong->resets);
		for (k = 0; k < IBW_CONG_NFIELDS; k++)
			h = mix(h, p->cong->total[k] - p->cong->raw[k]);
	}
	return h;
}

/* ---- the ports as written ---- */

static size_t slot_of(const struct ibw_ctr_journal *j, uint64_t guid,
		      uint8_t port)
{
	return (size_t)mix(guid, port) & (j->cap - 1);
}

static struct jport *find(struct ibw_ctr_journal *j, uint64_t guid,
			  uint8_t port)
{
	size_t i;

	if (!j->cap)
		return NULL;
	for (i = slot_of(j, guid, port); j->tab[i].used;
	     i = (i + 1) & (j->cap - 1))
		if (j->tab[i].guid == guid && j->tab[i].port == port)
			return &j->tab[i];
	return NULL;
}

/* The slot of (@guid, @port), made if new; NULL on ENOMEM. */
static struct jport *get(struct ibw_ctr_journal *j, uint64_t guid, uint8_t port)
{
	struct jport *t = find(j, guid, port);
	size_t i;

	if (t)
		return t;
	if (2 * (j->n + 1) > j->cap) {
		size_t nc = j->cap ? 2 * j->cap : 1024, k;
		struct jport *old = j->tab, *nt = calloc(nc, sizeof(*nt));

		if (!nt)
			return NULL;
		j->tab = nt;
		k = j->cap;
		j->cap = nc;
		while (k--) {
			if (!old[k].used)
				continue;
			for (i = slot_of(j, old[k].guid, old[k].port);
			     nt[i].used; i = (i + 1) & (nc - 1))
				;
			nt[i] = old[k];
		}
		free(old);
	}
	for (i = slot_of(j, guid, port); j->tab[i].used;
	     i = (i + 1) & (j->cap - 1))
		;
	t = &j->tab[i];
	t->guid = guid;
	t->port = port;
	t->used = 1;
	j->n++;
	return t;
}

static void forget_all(struct ibw_ctr_journal *j)
{
	free(j->tab);
	j->tab = NULL;
	j->cap = j->n = 0;
}

struct ibw_ctr_journal *ibw_ctr_journal_new(const char *path,
					    uint64_t interval_us)
{
	struct ibw_ctr_journal *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->fd = -1;
	j->interval_us = interval_us;
	j->need_snapshot = 1;
	j->path = strdup(path);
	j->jpath = malloc(strlen(path) + sizeof(".journal"));
	if (j->jpath)
		sprintf(j->jpath, "%s.journal", path);
	if (!j->path || !j->jpath) {
		ibw_ctr_journal_free(j);
		return NULL;
	}
	return j;
}

void ibw_ctr_journal_free(struct ibw_ctr_journal *j)
{
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);
	forget_all(j);
	free(j->buf);
	free(j->path);
	free(j->jpath);
	free(j);
}

struct ibw_ctr_journal_stats
ibw_ctr_journal_stats(const struct ibw_ctr_journal *j)
{
	struct ibw_ctr_journal_stats st = j->st;

	st.bytes = st.snapshot_bytes + st.batch_bytes;
	return st;
}

/* ---- writing ---- */

static int write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void flush(struct ibw_ctr_journal *j)
{
	int rc;

	if (j->err || !j->len)
		return;
	rc = write_all(j->fd, j->buf, j->len);
	if (rc < 0)
		j->err = rc;
	else
		j->st.batch_bytes += j->len;
	j->len = 0;
}

/* @n bytes at @p into the batch, hashed. */
static void put(struct ibw_ctr_journal *j, const char *p, size_t n)
{
	if (j->err)
		return;
	if (j->len + n > j->bcap) {
		size_t nc = j->bcap ? j->bcap : 4096;
		char *nb;

		while (nc < j->len + n)
			nc *= 2;
		nb = realloc(j->buf, nc);
		if (!nb) {
			j->err = -ENOMEM;
			return;
		}
		j->buf = nb;
		j->bcap = nc;
	}
	memcpy(j->buf + j->len, p, n);
	j->len += n;
	j->h = ibw_fnv1a64(j->h, p, n);
	if (j->len >= FLUSH_BYTES)
		flush(j);
}

static int put_link(const char *line, void *arg)
{
	struct ibw_ctr_journal *j = arg;

	put(j, "l ", 2);
	put(j, line, strlen(line));
	put(j, "\n", 1);
	j->nl++;
	return j->err;
}

static int open_journal(struct ibw_ctr_journal *j)
{
	if (j->fd >= 0)
		return 0;
	j->fd = open(j->jpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	return j->fd < 0 ? -errno : 0;
}

/* fsync() the directory that holds @path, so that a rename in it is
 * on disk; best effort (some file systems refuse it). */
static void sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	int fd;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	(void)fsync(fd);
	close(fd);
}

int ibw_ctr_journal_compact(struct ibw_ctr_journal *j,
			    const struct ibw_port_ctrs *const *ports,
			    unsigned n, const struct ibw_links *links,
			    uint64_t now_us)
{
	/* A generation no earlier journal can hold: the time, or one more
	 * than the last when the clock went back. */
	uint64_t gen = now_us > j->gen ? now_us : j->gen + 1, bytes = 0;
	unsigned i;
	int rc;

	rc = ibw_ctr_state_write(j->path, ports, n, links, gen, &bytes);
	if (rc < 0) {
		j->need_snapshot = 1;
		return rc;
	}
	j->gen = gen;
	j->snap_bytes = bytes;
	j->st.snapshots++;
	j->st.snapshot_bytes += bytes;
	j->win_us = now_us;
	j->need_snapshot = 0;
	/* The rename made durable before the old batches go: a power cut
	 * must not leave the old snapshot without them. A crash before the
	 * truncation leaves batches of the old generation, which the new
	 * snapshot does not take. Opened again rather than truncated, in
	 * case the file was replaced or removed under us. */
	sync_dir(j->path);
	if (j->fd >= 0)
		close(j->fd);
	j->fd = open(j->jpath,
		     O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0640);
	rc = j->fd < 0 ? -errno : 0;
	j->st.journal_bytes = 0;
	forget_all(j);
	for (i = 0; i < n && !rc; i++) {
		struct jport *t = get(j, ports[i]->guid, ports[i]->port);

		if (!t)
			rc = -ENOMEM;
		else
			t->base = base_hash(ports[i]);
	}
	if (rc)
		j->need_snapshot = 1;
	return rc;
}

int ibw_ctr_journal_save(struct ibw_ctr_journal *j,
			 const struct ibw_port_ctrs *const *ports, unsigned n,
			 const struct ibw_links *links, uint64_t now_us)
{
	uint64_t bound = IBW_CTR_JOURNAL_FACTOR * j->snap_bytes, *base = NULL;
	char line[IBW_CTR_STATE_LINES_MAX];
	int windows, rc;
	unsigned i, nb = 0;
	size_t len;

	if (bound < IBW_CTR_JOURNAL_MIN_BOUND)
		bound = IBW_CTR_JOURNAL_MIN_BOUND;
	if (j->need_snapshot || j->st.journal_bytes > bound)
		return ibw_ctr_journal_compact(j, ports, n, links, now_us);
	windows = links &&
		  (now_us < j->win_us || now_us - j->win_us >= j->interval_us);
	rc = open_journal(j);
	if (rc < 0)
		return rc;
	j->len = 0;
	j->np = j->nl = 0;
	j->err = 0;
	j->h = IBW_FNV1A64_INIT;
	len = (size_t)snprintf(line, sizeof(line), "batch %016" PRIx64 "\n",
			       j->gen);
	put(j, line, len);
	/* the hashes of the ports written, kept until the batch is */
	base = malloc((n ? n : 1) * sizeof(*base));
	if (!base)
		return -ENOMEM;
	for (i = 0; i < n && !j->err; i++) {
		const struct jport *t = find(j, ports[i]->guid, ports[i]->port);

		base[i] = base_hash(ports[i]);
		if (t && t->base == base[i])
			continue;
		len = ibw_ctr_state_port_text(line, sizeof(line), ports[i]);
		if (!len) {
			j->err = -EOVERFLOW;
			break;
		}
		put(j, line, len);
		j->np++;
		nb++;
	}
	if (windows && !j->err) {
		rc = ibw_links_save_since(links, j->win_us, put_link, j);
		if (rc < 0 && !j->err)
			j->err = rc;
	}
	if (!j->err && !j->np && !j->nl) {
		/* nothing changed */
		free(base);
		j->len = 0;
		if (windows)
			j->win_us = now_us;
		return 0;
	}
	len = (size_t)snprintf(line, sizeof(line), "end %u %u %016" PRIx64 "\n",
			       j->np, j->nl, j->h);
	put(j, line, len);
	flush(j);
	if (!j->err && fdatasync(j->fd) != 0)
		j->err = -errno;
	rc = j->err;
	j->st.journal_bytes = (uint64_t)lseek(j->fd, 0, SEEK_END);
	if (rc < 0) {
		/* what reached the file ends torn: the next save writes a
		 * snapshot, which drops it */
		j->need_snapshot = 1;
		free(base);
		return rc;
	}
	j->st.batches++;
	for (i = 0; i < n && nb; i++) {
		struct jport *t = get(j, ports[i]->guid, ports[i]->port);

		if (!t) {
			j->need_snapshot = 1;
			break;
		}
		t->base = base[i];
	}
	free(base);
	if (windows)
		j->win_us = now_us;
	return 0;
}

/* ---- reading ---- */

/* A batch read but not yet vouched for by its end line. */
struct pending {
	struct ibw_port_ctrs *p;
	unsigned np, pcap;
	char **l;
	unsigned nl, lcap;
};

static void pending_clear(struct pending *b)
{
	unsigned i;

	for (i = 0; i < b->np; i++) {
		ibw_ctr_port_release(&b->p[i]);
	}
	for (i = 0; i < b->nl; i++)
		free(b->l[i]);
	b->np = b->nl = 0;
}

static void pending_free(struct pending *b)
{
	pending_clear(b);
	free(b->p);
	free(b->l);
}

/* One more line of @b: 0, or -1 if it does not belong. */
static int pending_add(struct pending *b, const char *line)
{
	struct ibw_port_ctrs *last = b->np ? &b->p[b->np - 1] : NULL;

	if (!strncmp(line, "p ", 2)) {
		if (b->np == b->pcap) {
			unsigned nc = b->pcap ? 2 * b->pcap : 64;
			void *np = realloc(b->p, nc * sizeof(*b->p));

			if (!np)
				return -1;
			b->p = np;
			b->pcap = nc;
		}
		if (ibw_ctr_state_parse_port(line, &b->p[b->np]) < 0)
			return -1;
		b->np++;
		return 0;
	}
	if (!strncmp(line, "f ", 2)) {
		if (!last || last->fec)
			return -1;
		last->fec = ibw_ctr_state_parse_fec(line);
		return last->fec ? 0 : -1;
	}
	if (!strncmp(line, "g ", 2)) {
		if (!last || last->cong)
			return -1;
		last->cong = ibw_ctr_state_parse_cong(line);
		return last->cong ? 0 : -1;
	}
	if (strncmp(line, "l ", 2))
		return -1;
	if (b->nl == b->lcap) {
		unsigned nc = b->lcap ? 2 * b->lcap : 64;
		void *nl = realloc(b->l, nc * sizeof(*b->l));

		if (!nl)
			return -1;
		b->l = nl;
		b->lcap = nc;
	}
	b->l[b->nl] = strdup(line + 2);
	if (!b->l[b->nl])
		return -1;
	b->l[b->nl][strcspn(b->l[b->nl], "\n")] = 0;
	b->nl++;
	return 0;
}

/* The records of a whole batch into @ports (a port's replaces its
 * record, a new one is added), its link lines merged into @links. */
static int pending_apply(struct ibw_ctr_journal *j, struct pending *b,
			 struct ibw_port_ctrs **ports, unsigned *n,
			 unsigned *cap, struct ibw_links *links, unsigned *bad)
{
	struct ibw_port_ctrs *p;
	struct jport *t;
	unsigned i;

	for (i = 0; i < b->np; i++) {
		t = get(j, b->p[i].guid, b->p[i].port);
		if (!t)
			break;
		if (t->base) {
			/* known: t->idx is its record */
			p = &(*ports)[t->idx];
			ibw_ctr_port_release(p);
		} else {
			if (*n == *cap) {
				unsigned nc = *cap ? 2 * *cap : 256;
				void *np =
					realloc(*ports, nc * sizeof(**ports));

				if (!np)
					break;
				*ports = np;
				*cap = nc;
			}
			t->idx = (*n)++;
			t->base = 1;
			p = &(*ports)[t->idx];
		}
		*p = b->p[i];
		/* the record owns its fec, cong and det now */
		b->p[i].fec = NULL;
		b->p[i].cong = NULL;
		b->p[i].det = NULL;
	}
	if (i < b->np)
		return -ENOMEM;
	for (i = 0; i < b->nl; i++)
		if (links && ibw_links_merge_line(links, b->l[i]) < 0)
			(*bad)++;
	pending_clear(b);
	return 0;
}

/* The batches of @f of generation @gen, applied in order. */
static void read_batches(struct ibw_ctr_journal *j, FILE *f, uint64_t gen,
			 struct ibw_port_ctrs **ports, unsigned *n,
			 unsigned *cap, struct ibw_links *links, unsigned *bad)
{
	struct pending b;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	uint64_t h = 0;
	unsigned long long g, sum;
	unsigned wp, wl;
	int in = 0;

	memset(&b, 0, sizeof(b));
	while ((len = getline(&line, &lcap, f)) > 0) {
		if (!in) {
			if (sscanf(line, "batch %llx", &g) != 1 || g != gen)
				break;
			h = ibw_fnv1a64(IBW_FNV1A64_INIT, line, (size_t)len);
			in = 1;
			continue;
		}
		if (!strncmp(line, "end ", 4)) {
			if (sscanf(line, "end %u %u %llx", &wp, &wl, &sum) !=
				    3 ||
			    wp != b.np || wl != b.nl || sum != h ||
			    pending_apply(j, &b, ports, n, cap, links, bad) < 0)
				break;
			j->st.loaded_batches++;
			in = 0;
			continue;
		}
		h = ibw_fnv1a64(h, line, (size_t)len);
		if (line[len - 1] != '\n' || pending_add(&b, line) < 0)
			break;
	}
	free(line);
	pending_free(&b);
}

int ibw_ctr_journal_load(struct ibw_ctr_journal *j,
			 struct ibw_port_ctrs **ports, unsigned *n,
			 unsigned *cap, struct ibw_links *links,
			 unsigned *bad_links)
{
	struct ibw_port_ctrs *p;
	unsigned np, pcap, i, bad = 0;
	uint64_t gen = 0;
	FILE *f;
	int rc;

	rc = ibw_ctr_state_read(j->path, &p, &np, &pcap, links, &bad, &gen);
	if (rc < 0)
		return rc;
	j->gen = gen;
	j->need_snapshot = 1;
	/* no journal goes with a file of before version 4 */
	f = gen ? fopen(j->jpath, "r") : NULL;
	if (f) {
		/* the ports' index in the records, for the batches */
		forget_all(j);
		for (i = 0; i < np; i++) {
			struct jport *t = get(j, p[i].guid, p[i].port);

			if (!t)
				break;
			t->idx = i;
			t->base = 1;
		}
		if (i == np)
			read_batches(j, f, gen, &p, &np, &pcap, links, &bad);
		fclose(f);
		forget_all(j);
	}
	if (bad_links)
		*bad_links = bad;
	*ports = p;
	*n = np;
	*cap = pcap;
	return 0;
}
