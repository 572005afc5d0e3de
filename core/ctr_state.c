// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"
#include "ctr_state.h"
#include "hash.h"
#include "links.h"

/* Version 2 added the link lines and their count on the end line,
 * version 3 a port's FEC counters on an "f" line after its "p" line and
 * its congestion counters on a "g" line after that, version 4 the
 * snapshot's generation on the first line (its journal's batches carry
 * it: core/ctr_journal.h); version 1 to 3 files still load (with no
 * links, no FEC totals; generation 0). */
#define STATE_MAGIC "ibwatch-counters 4 "
#define STATE_MAGIC_V3 "ibwatch-counters 3"
#define STATE_MAGIC_V2 "ibwatch-counters 2"
#define STATE_MAGIC_V1 "ibwatch-counters 1"

struct save_ctx {
	FILE *f;
	uint64_t h;
	unsigned n;
};

static int save_link(const char *line, void *arg)
{
	struct save_ctx *c = arg;

	c->h = ibw_fnv1a64(c->h, "l ", 2);
	c->h = ibw_fnv1a64(c->h, line, strlen(line));
	c->h = ibw_fnv1a64(c->h, "\n", 1);
	if (fputs("l ", c->f) == EOF || fputs(line, c->f) == EOF ||
	    fputc('\n', c->f) == EOF)
		return -EIO;
	c->n++;
	return 0;
}

/* "f LAYOUT RESETS HAVE FIELD:RAW:TOTAL..." for the fields read. */
static size_t fec_line(char *line, size_t cap, const struct ibw_fec *fec)
{
	size_t len;
	unsigned k;

	len = (size_t)snprintf(line, cap, "f %u %u %" PRIx64, fec->layout,
			       fec->resets, fec->have);
	for (k = 0; k < IBW_FEC_NFIELDS && len < cap; k++)
		if (fec->have >> k & 1)
			len += (size_t)snprintf(line + len, cap - len,
						" %u:%u:%" PRIu64, k,
						fec->raw[k], fec->total[k]);
	if (len < cap)
		len += (size_t)snprintf(line + len, cap - len, "\n");
	return len < cap ? len : cap - 1;
}

/* "g HAVE RESETS FIELD:RAW:TOTAL..." for the congestion counters read
 * (HAVE: a bit per enum ibw_cong_attr). */
static size_t cong_line(char *line, size_t cap, const struct ibw_cong *g)
{
	size_t len;
	unsigned k;

	len = (size_t)snprintf(line, cap, "g %u %u", g->have, g->resets);
	for (k = 0; k < IBW_CONG_NFIELDS && len < cap; k++)
		if (g->have >> ibw_cong_attr_of(k) & 1)
			len += (size_t)snprintf(line + len, cap - len,
						" %u:%u:%" PRIu64, k, g->raw[k],
						g->total[k]);
	if (len < cap)
		len += (size_t)snprintf(line + len, cap - len, "\n");
	return len < cap ? len : cap - 1;
}

struct ibw_cong *ibw_ctr_state_parse_cong(const char *line)
{
	struct ibw_cong *g = calloc(1, sizeof(*g));
	const char *s = line + 2;
	char *end;
	unsigned long have;
	unsigned n = 0, want = 0, a;

	if (!g)
		return NULL;
	g->refs = 1;
	have = strtoul(s, &end, 10);
	if (end == s || have >> IBW_CONG_NATTR)
		goto bad;
	g->have = (uint8_t)have;
	s = end;
	g->resets = (uint32_t)strtoul(s, &end, 10);
	if (end == s)
		goto bad;
	s = end;
	for (a = 0; a < IBW_CONG_NATTR; a++)
		if (have >> a & 1)
			want += ibw_cong_count((enum ibw_cong_attr)a);
	while (*s == ' ') {
		unsigned long k = strtoul(s, &end, 10);

		if (end == s || *end != ':' || k >= IBW_CONG_NFIELDS ||
		    !(have >> ibw_cong_attr_of((unsigned)k) & 1))
			goto bad;
		g->raw[k] = (uint32_t)strtoul(end + 1, &end, 10);
		if (*end != ':')
			goto bad;
		s = end + 1;
		g->total[k] = strtoull(s, &end, 10);
		if (end == s)
			goto bad;
		s = end;
		n++;
	}
	if ((*s != '\n' && *s) || n != want)
		goto bad;
	return g;
bad:
	free(g);
	return NULL;
}

struct ibw_fec *ibw_ctr_state_parse_fec(const char *line)
{
	struct ibw_fec *fec = calloc(1, sizeof(*fec));
	const char *s = line + 2;
	char *end;
	unsigned long long have;

	if (!fec)
		return NULL;
	fec->refs = 1;
	fec->layout = (uint8_t)strtoul(s, &end, 10);
	if (end == s ||
	    (fec->layout != IBW_FEC_FC && fec->layout != IBW_FEC_RS))
		goto bad;
	s = end;
	fec->resets = (uint32_t)strtoul(s, &end, 10);
	if (end == s)
		goto bad;
	s = end;
	have = strtoull(s, &end, 16);
	if (end == s || have >> IBW_FEC_NFIELDS)
		goto bad;
	s = end;
	while (*s == ' ') {
		unsigned long k = strtoul(s, &end, 10);

		if (end == s || *end != ':' || k >= IBW_FEC_NFIELDS ||
		    !(have >> k & 1))
			goto bad;
		fec->raw[k] = (uint32_t)strtoul(end + 1, &end, 10);
		if (*end != ':')
			goto bad;
		s = end + 1;
		fec->total[k] = strtoull(s, &end, 10);
		if (end == s)
			goto bad;
		fec->have |= 1ull << k;
		s = end;
	}
	if ((*s != '\n' && *s) || fec->have != have)
		goto bad;
	return fec;
bad:
	free(fec);
	return NULL;
}

size_t ibw_ctr_state_port_text(char *buf, size_t cap,
			       const struct ibw_port_ctrs *p)
{
	size_t len;
	int j;

	len = (size_t)snprintf(buf, cap,
			       "p 0x%016" PRIx64 " %u %u %u %" PRIu64
			       " %" PRIu64,
			       p->guid, p->port, p->is_switch, p->resets,
			       p->discontinuity_us, p->updated_us);
	for (j = 0; j < IBW_CTR_MAX && len < cap; j++) {
		const struct ibw_ctr_val *v = ibw_ctr_val(p, (enum ibw_ctr)j);
		unsigned flags = v->have_raw | v->from_ext << 1 |
				 v->saturated << 2 | v->over_threshold << 3 |
				 v->reset_by_us << 4;

		len += (size_t)snprintf(buf + len, cap - len,
					" %" PRIu64 ":%" PRIu64 ":%u:%u",
					v->total, v->raw, flags, v->resets);
	}
	if (len < cap)
		len += (size_t)snprintf(buf + len, cap - len, "\n");
	if (p->fec && len < cap)
		len += fec_line(buf + len, cap - len, p->fec);
	if (p->cong && len < cap)
		len += cong_line(buf + len, cap - len, p->cong);
	return len < cap ? len : 0;
}

int ibw_ctr_state_save(const char *path,
		       const struct ibw_port_ctrs *const *ports, unsigned n,
		       const struct ibw_links *links)
{
	return ibw_ctr_state_write(path, ports, n, links, 0, NULL);
}

int ibw_ctr_state_write(const char *path,
			const struct ibw_port_ctrs *const *ports, unsigned n,
			const struct ibw_links *links, uint64_t gen,
			uint64_t *bytes)
{
	struct save_ctx lc;
	char tmp[4096], line[IBW_CTR_STATE_LINES_MAX];
	uint64_t h = IBW_FNV1A64_INIT;
	unsigned i;
	int fd, rc = 0;
	FILE *f;
	size_t len;
	off_t end;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	len = (size_t)snprintf(line, sizeof(line), "%s%016" PRIx64 "\n",
			       STATE_MAGIC, gen);
	h = ibw_fnv1a64(h, line, len);
	fputs(line, f);
	for (i = 0; i < n && !rc; i++) {
		len = ibw_ctr_state_port_text(line, sizeof(line), ports[i]);
		if (!len)
			rc = -EOVERFLOW;
		h = ibw_fnv1a64(h, line, len);
		fputs(line, f);
	}
	lc.f = f;
	lc.h = h;
	lc.n = 0;
	if (links && !rc)
		rc = ibw_links_save(links, save_link, &lc);
	fprintf(f, "end %u %u %016" PRIx64 "\n", n, lc.n, lc.h);
	if (!rc && (fflush(f) != 0 || fsync(fd) != 0))
		rc = -errno;
	end = rc ? 0 : lseek(fd, 0, SEEK_CUR);
	if (fclose(f) != 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	else if (bytes)
		*bytes = end > 0 ? (uint64_t)end : 0;
	return rc;
}

/* A counter's "total:raw:flags:resets" at @s into @v; the text past it
 * or NULL. */
static const char *parse_val(const char *s, struct ibw_ctr_val *v)
{
	char *end;
	unsigned flags;

	v->total = strtoull(s, &end, 10);
	if (end == s || *end != ':')
		return NULL;
	v->raw = strtoull(end + 1, &end, 10);
	if (*end != ':')
		return NULL;
	flags = (unsigned)strtoul(end + 1, &end, 10);
	if (*end != ':')
		return NULL;
	v->resets = (uint32_t)strtoul(end + 1, &end, 10);
	v->have_raw = flags & 1;
	v->from_ext = (flags >> 1) & 1;
	v->saturated = (flags >> 2) & 1;
	v->over_threshold = (flags >> 3) & 1;
	/* cleared by us after that reading: the next one after the
	 * restart is counted whole (older files: 0) */
	v->reset_by_us = (flags >> 4) & 1;
	return end;
}

int ibw_ctr_state_parse_port(const char *line, struct ibw_port_ctrs *p)
{
	const char *s = line + 2;
	char *end;
	unsigned long long g;
	int j;

	memset(p, 0, sizeof(*p));
	g = strtoull(s, &end, 16);
	if (end == s)
		return -1;
	p->guid = g;
	s = end;
	p->port = (uint8_t)strtoul(s, &end, 10);
	p->is_switch = (uint8_t)strtoul(end, &end, 10);
	p->resets = (uint32_t)strtoul(end, &end, 10);
	p->discontinuity_us = strtoull(end, &end, 10);
	p->updated_us = strtoull(end, &end, 10);
	s = end;
	for (j = 0; j < IBW_CTR_MAX; j++) {
		struct ibw_ctr_val v = { 0 }, *w;

		s = parse_val(s, &v);
		if (!s)
			break;
		/* detail counters never read are held by no block */
		if (j >= IBW_CTR_NBASE && !v.have_raw && !v.total && !v.resets)
			continue;
		w = ibw_ctr_val_w(p, (enum ibw_ctr)j);
		if (!w)
			break;
		*w = v;
	}
	if (j == IBW_CTR_MAX)
		return 0;
	ibw_ctr_port_release(p);
	return -1;
}

/* The link lines of a file, kept until its end line has vouched for
 * them. */
struct link_lines {
	char **v;
	unsigned n, cap;
};

static int keep_link_line(struct link_lines *ll, const char *line)
{
	char *d;

	if (ll->n == ll->cap) {
		unsigned nc = ll->cap ? ll->cap * 2 : 64;
		char **nv = realloc(ll->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		ll->v = nv;
		ll->cap = nc;
	}
	d = strdup(line);
	if (!d)
		return -ENOMEM;
	d[strcspn(d, "\n")] = 0;
	ll->v[ll->n++] = d;
	return 0;
}

static void drop_link_lines(struct link_lines *ll)
{
	unsigned i;

	for (i = 0; i < ll->n; i++)
		free(ll->v[i]);
	free(ll->v);
}

/* 1 when @line is a right end line for @nports ports and @nlinks links
 * after content hashing to @h, in a file of @version. */
static int end_ok(const char *line, int version, unsigned nports,
		  unsigned nlinks, uint64_t h)
{
	unsigned wp, wl;
	unsigned long long sum;

	if (version == 1)
		return sscanf(line, "end %u %llx", &wp, &sum) == 2 &&
		       wp == nports && !nlinks && sum == h;
	return sscanf(line, "end %u %u %llx", &wp, &wl, &sum) == 3 &&
	       wp == nports && wl == nlinks && sum == h;
}

int ibw_ctr_state_load(const char *path, struct ibw_port_ctrs **out,
		       unsigned *nout, unsigned *capout,
		       struct ibw_links *links, unsigned *bad_links)
{
	return ibw_ctr_state_read(path, out, nout, capout, links, bad_links,
				  NULL);
}

int ibw_ctr_state_read(const char *path, struct ibw_port_ctrs **out,
		       unsigned *nout, unsigned *capout,
		       struct ibw_links *links, unsigned *bad_links,
		       uint64_t *genout)
{
	unsigned long long gen = 0;
	char *gend;
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t h = IBW_FNV1A64_INIT;
	struct ibw_port_ctrs *ports = NULL;
	struct link_lines ll = { NULL, 0, 0 };
	unsigned nports = 0, pcap = 0, i, bad = 0;
	int ok = 0, first = 1, version = 0;

	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (first) {
			first = 0;
			if (!strncmp(line, STATE_MAGIC, strlen(STATE_MAGIC))) {
				gen = strtoull(line + strlen(STATE_MAGIC),
					       &gend, 16);
				if (*gend != '\n')
					break;
				version = 4;
			} else if (!strcmp(line, STATE_MAGIC_V3 "\n")) {
				version = 3;
			} else if (!strcmp(line, STATE_MAGIC_V2 "\n")) {
				version = 2;
			} else if (!strcmp(line, STATE_MAGIC_V1 "\n")) {
				version = 1;
			} else {
				break;
			}
			h = ibw_fnv1a64(h, line, (size_t)n);
			continue;
		}
		if (!strncmp(line, "end ", 4)) {
			ok = end_ok(line, version, nports, ll.n, h);
			break;
		}
		if (version >= 3 && !strncmp(line, "f ", 2)) {
			/* the FEC counters of the port just read */
			if (!nports || ports[nports - 1].fec)
				break;
			h = ibw_fnv1a64(h, line, (size_t)n);
			ports[nports - 1].fec = ibw_ctr_state_parse_fec(line);
			if (!ports[nports - 1].fec)
				break;
			continue;
		}
		if (version >= 3 && !strncmp(line, "g ", 2)) {
			/* the congestion counters of the port just read */
			if (!nports || ports[nports - 1].cong)
				break;
			h = ibw_fnv1a64(h, line, (size_t)n);
			ports[nports - 1].cong = ibw_ctr_state_parse_cong(line);
			if (!ports[nports - 1].cong)
				break;
			continue;
		}
		if (version >= 2 && !strncmp(line, "l ", 2)) {
			h = ibw_fnv1a64(h, line, (size_t)n);
			if (keep_link_line(&ll, line + 2) < 0)
				break;
			continue;
		}
		if (strncmp(line, "p ", 2))
			break;
		h = ibw_fnv1a64(h, line, (size_t)n);
		if (nports == pcap) {
			unsigned nc = pcap ? pcap * 2 : 256;
			struct ibw_port_ctrs *np =
				realloc(ports, nc * sizeof(*np));

			if (!np)
				break;
			ports = np;
			pcap = nc;
		}
		if (ibw_ctr_state_parse_port(line, &ports[nports]) < 0)
			break;
		nports++;
	}
	free(line);
	fclose(f);
	if (!ok) {
		for (i = 0; i < nports; i++) {
			ibw_ctr_port_release(&ports[i]);
		}
		free(ports);
		drop_link_lines(&ll);
		return -EBADMSG;
	}
	/* A link line this version cannot read costs that link's windows
	 * only, not the counters' totals. */
	for (i = 0; i < ll.n; i++)
		if (links && ibw_links_load_line(links, ll.v[i]) < 0)
			bad++;
	drop_link_lines(&ll);
	if (bad_links)
		*bad_links = bad;
	*out = ports;
	*nout = nports;
	*capout = pcap;
	if (genout)
		*genout = gen;
	return 0;
}
