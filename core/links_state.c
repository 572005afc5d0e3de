// SPDX-License-Identifier: BSD-2-Clause
/*
 * The link windows as the state file's lines (docs/links.md): saved and
 * read back so that a restarted agent keeps its hour and day.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "links_int.h"

/* ---- the state file's lines ---- */

/* 1 if an hour bucket of @s is of period @hmin or later (the day's
 * bucket of the same time is then too). */
static int changed(const struct lstate *s, uint64_t hmin)
{
	int k;

	for (k = 0; k < HOUR_SLOTS; k++)
		if (s->h[k].idx >= hmin)
			return 1;
	return 0;
}

/*
 * link GUID_A PORT_A GUID_B PORT_B SEEN_US UP
 *   e PREV_US HAVE_PREV ERR*8 WAIT XMIT        (end A, then end B)
 *   h IDX (ERR*8 MS WAIT_NS XMIT CAP BITS)*2   (each hour bucket in use)
 *   d IDX (ERR*8 MS)*2                         (each day bucket in use)
 *   f ... fb ...             (the FEC windows: ibw_lfec_print, link_fec.h)
 */
/* The lines of the links, each with its buckets of periods from those
 * of @since_us on (0: all), the FEC windows when @fec; a link neither
 * seen nor read since then (and with no such bucket) is left out. */
static int save_lines(const struct ibw_links *l, uint64_t since_us, int fec,
		      int (*emit)(const char *line, void *arg), void *arg)
{
	uint64_t hmin = since_us / HOUR_SLOT_US + 1;
	uint64_t dmin = since_us / DAY_SLOT_US + 1;
	char *buf = NULL;
	size_t len = 0, i;
	int j, e, k, rc = 0;
	FILE *f;

	if (!since_us)
		hmin = dmin = 1;
	for (i = 0; i < l->cap && !rc; i++) {
		const struct lstate *s = l->tab[i];

		if (!s || (since_us && s->seen_us < since_us &&
			   s->e[0].prev_us < since_us &&
			   s->e[1].prev_us < since_us && !changed(s, hmin)))
			continue;
		f = open_memstream(&buf, &len);
		if (!f)
			return -ENOMEM;
		fprintf(f,
			"link 0x%016" PRIx64 " %u 0x%016" PRIx64 " %u %" PRIu64
			" %u",
			s->e[0].guid, s->e[0].port, s->e[1].guid, s->e[1].port,
			s->seen_us, s->up);
		for (j = 0; j < 2; j++) {
			const struct end_state *x = &s->e[j];

			fprintf(f, " e %" PRIu64 " %u", x->prev_us,
				x->have_prev);
			for (e = 0; e < NERR; e++)
				fprintf(f, " %" PRIu64, x->prev_err[e]);
			fprintf(f, " %" PRIu64 " %" PRIu64, x->prev_wait,
				x->prev_xmit);
		}
		for (k = 0; k < HOUR_SLOTS; k++) {
			const struct hbucket *b = &s->h[k];

			if (!b->idx || b->idx < hmin)
				continue;
			fprintf(f, " h %u", b->idx);
			for (j = 0; j < 2; j++) {
				for (e = 0; e < NERR; e++)
					fprintf(f, " %u",
						s->errs ? s->errs->h[k][j][e]
							: 0);
				fprintf(f,
					" %u %" PRIu64 " %" PRIu64 " %" PRIu64
					" %" PRIu64,
					b->ms[j], b->wait_ns[j], b->xmit[j],
					b->cap[j], b->bits[j]);
			}
		}
		for (k = 0; k < DAY_SLOTS; k++) {
			const struct dbucket *b = &s->d[k];

			if (!b->idx || b->idx < dmin)
				continue;
			fprintf(f, " d %u", b->idx);
			for (j = 0; j < 2; j++) {
				for (e = 0; e < NERR; e++)
					fprintf(f, " %u",
						s->errs ? s->errs->d[k][j][e]
							: 0);
				fprintf(f, " %u", b->ms[j]);
			}
		}
		if (fec)
			ibw_lfec_print(s->fec, f);
		if (fclose(f) != 0) {
			free(buf);
			return -ENOMEM;
		}
		rc = emit(buf, arg);
		free(buf);
		buf = NULL;
	}
	return rc < 0 ? rc : 0;
}

int ibw_links_save(const struct ibw_links *l,
		   int (*emit)(const char *line, void *arg), void *arg)
{
	return save_lines(l, 0, !l->no_fec_save, emit, arg);
}

int ibw_links_save_since(const struct ibw_links *l, uint64_t since_us,
			 int (*emit)(const char *line, void *arg), void *arg)
{
	return save_lines(l, since_us ? since_us : 1, 0, emit, arg);
}

void ibw_links_save_fec(struct ibw_links *l, int on)
{
	l->no_fec_save = !on;
}

/* A cursor over one line's space-separated numbers. */
struct cur {
	const char *p;
	int bad;
};

/* The start of the next number (it starts with a digit), or NULL with
 * @c bad. errno is cleared for the conversion that follows. */
static const char *next(struct cur *c)
{
	if (c->bad)
		return NULL;
	while (*c->p == ' ')
		c->p++;
	if (*c->p < '0' || *c->p > '9') {
		c->bad = 1;
		return NULL;
	}
	errno = 0;
	return c->p;
}

/* Past the number that ends at @end if @ok and a space or the line's end
 * follows it; else @c bad. */
static void took(struct cur *c, const char *end, int ok)
{
	if (!ok || errno || (*end && *end != ' '))
		c->bad = 1;
	else
		c->p = end;
}

static uint64_t num(struct cur *c, uint64_t max)
{
	const char *p = next(c);
	unsigned long long v;
	char *end;

	if (!p)
		return 0;
	v = strtoull(p, &end, 0);
	took(c, end, v <= max);
	return c->bad ? 0 : v;
}

/* A float as ibw_lfec_print writes it: finite, not negative. */
static float real(struct cur *c)
{
	const char *p = next(c);
	char *end;
	double v;

	if (!p)
		return 0;
	v = strtod(p, &end);
	took(c, end, v <= 3.4e38);
	return c->bad ? 0 : (float)v;
}

/* A bucket end's error counts and the time they cover, as saved. */
static void load_errors(struct cur *c, uint32_t *err, uint32_t *ms)
{
	int e;

	for (e = 0; e < NERR; e++)
		err[e] = (uint32_t)num(c, UINT32_MAX);
	*ms = (uint32_t)num(c, UINT32_MAX);
}

/* The next token must be the word @w. */
static int word(struct cur *c, const char *w)
{
	size_t n = strlen(w);

	while (*c->p == ' ')
		c->p++;
	if (strncmp(c->p, w, n) || (c->p[n] && c->p[n] != ' '))
		return 0;
	c->p += n;
	return 1;
}

/* The FEC words (" f ..." and " fb ...") at @c into *@pf. 0 or -errno;
 * *@pf holds what was read either way (the caller frees it). */
static int load_fec(struct cur *c, struct ibw_lfec **pf)
{
	int rc = 0;
	unsigned k, n;

	while (!rc && !c->bad) {
		if (word(c, "f")) {
			struct ibw_lfec_base b;
			int end = (int)num(c, 1);

			memset(&b, 0, sizeof(b));
			b.layout = (unsigned)num(c, 255);
			b.lanes = (unsigned)num(c, IBW_FEC_LANES);
			b.us = num(c, UINT64_MAX);
			b.corr = num(c, UINT64_MAX);
			b.unc = num(c, UINT64_MAX);
			for (k = 0; k < IBW_FEC_LANES; k++)
				b.lane[k] = num(c, UINT64_MAX);
			if (!c->bad)
				rc = ibw_lfec_restore_base(pf, end, &b);
		} else if (word(c, "fb")) {
			struct ibw_lfec_bucket b;
			int end = (int)num(c, 1);

			memset(&b, 0, sizeof(b));
			b.slot = (unsigned)num(c, UINT32_MAX);
			b.idx = (uint32_t)num(c, UINT32_MAX);
			b.ms = (uint32_t)num(c, UINT32_MAX);
			b.bits = real(c);
			b.corr = real(c);
			b.unc = (uint32_t)num(c, UINT32_MAX);
			b.eff = (uint32_t)num(c, UINT32_MAX);
			n = ibw_lfec_lanes(*pf, end);
			if (!n)
				return -EINVAL; /* a bucket before its base */
			for (k = 0; k < n; k++)
				b.lane[k] = real(c);
			if (!c->bad)
				rc = ibw_lfec_restore_bucket(*pf, end, &b);
		} else {
			break;
		}
	}
	return c->bad ? -EINVAL : rc;
}

/* A line into its link: its windows replaced by the line's (@merge 0),
 * or only the buckets it gives (1). */
static int load_line(struct ibw_links *l, const char *line, int merge)
{
	struct lstate tmp, *s;
	struct lerrs terr;
	struct ibw_lfec *fec = NULL;
	struct cur c = { line, 0 };
	int j, e, k, rc, have_err = 0;
	uint32_t hgiven = 0, dgiven = 0;

	memset(&tmp, 0, sizeof(tmp));
	memset(&terr, 0, sizeof(terr));
	if (!word(&c, "link"))
		return -EINVAL;
	tmp.e[0].guid = num(&c, UINT64_MAX);
	tmp.e[0].port = (uint8_t)num(&c, 255);
	tmp.e[1].guid = num(&c, UINT64_MAX);
	tmp.e[1].port = (uint8_t)num(&c, 255);
	tmp.seen_us = num(&c, UINT64_MAX);
	tmp.up = (uint8_t)num(&c, 1);
	for (j = 0; j < 2; j++) {
		struct end_state *x = &tmp.e[j];

		if (!word(&c, "e"))
			return -EINVAL;
		x->prev_us = num(&c, UINT64_MAX);
		x->have_prev = (uint8_t)num(&c, 1);
		for (e = 0; e < NERR; e++)
			x->prev_err[e] = num(&c, UINT64_MAX);
		x->prev_wait = num(&c, UINT64_MAX);
		x->prev_xmit = num(&c, UINT64_MAX);
	}
	while (!c.bad && word(&c, "h")) {
		uint64_t idx = num(&c, UINT32_MAX);
		unsigned slot = (unsigned)(idx % HOUR_SLOTS);
		struct hbucket *b = &tmp.h[slot];

		if (!idx || b->idx)
			return -EINVAL;
		b->idx = (uint32_t)idx;
		hgiven |= 1u << slot;
		for (j = 0; j < 2; j++) {
			load_errors(&c, terr.h[slot][j], &b->ms[j]);
			b->wait_ns[j] = num(&c, UINT64_MAX);
			b->xmit[j] = num(&c, UINT64_MAX);
			b->cap[j] = num(&c, UINT64_MAX);
			b->bits[j] = num(&c, UINT64_MAX);
			have_err |= ibw_links_any_error(terr.h[slot][j]);
		}
	}
	while (!c.bad && word(&c, "d")) {
		uint64_t idx = num(&c, UINT32_MAX);
		unsigned slot = (unsigned)(idx % DAY_SLOTS);
		struct dbucket *b = &tmp.d[slot];

		if (!idx || b->idx)
			return -EINVAL;
		b->idx = (uint32_t)idx;
		dgiven |= 1u << slot;
		for (j = 0; j < 2; j++) {
			load_errors(&c, terr.d[slot][j], &b->ms[j]);
			have_err |= ibw_links_any_error(terr.d[slot][j]);
		}
	}
	if (c.bad)
		return -EINVAL;
	rc = load_fec(&c, &fec);
	while (*c.p == ' ')
		c.p++;
	if (!rc && (c.bad || *c.p))
		rc = -EINVAL;
	if (!rc &&
	    (tmp.e[1].guid < tmp.e[0].guid || (tmp.e[1].guid == tmp.e[0].guid &&
					       tmp.e[1].port <= tmp.e[0].port)))
		rc = -EINVAL;
	s = rc ? NULL
	       : ibw_links_get(l, tmp.e[0].guid, tmp.e[0].port, tmp.e[1].guid,
			       tmp.e[1].port);
	if (!rc && !s)
		rc = -ENOMEM;
	if (!rc && have_err && !s->errs) {
		s->errs = merge ? calloc(1, sizeof(*s->errs))
				: malloc(sizeof(*s->errs));
		if (!s->errs)
			rc = -ENOMEM;
	}
	if (rc) {
		ibw_lfec_free(fec);
		return rc;
	}
	if (fec) {
		l->nfec += !s->fec;
		ibw_lfec_free(s->fec);
		s->fec = fec;
	}
	if (s->errs && !merge)
		*s->errs = terr;
	/* Windows and bases only: what the port is comes with the next
	 * round. Keep what an earlier update already said of it. */
	s->seen_us = tmp.seen_us;
	s->up = tmp.up;
	for (j = 0; j < 2; j++) {
		struct end_state *x = &s->e[j];

		x->have_prev = tmp.e[j].have_prev;
		x->prev_us = tmp.e[j].prev_us;
		memcpy(x->prev_err, tmp.e[j].prev_err, sizeof(x->prev_err));
		x->prev_wait = tmp.e[j].prev_wait;
		x->prev_xmit = tmp.e[j].prev_xmit;
		x->prev_vl_mask = 0;
		x->have_last = 0;
	}
	for (k = 0; k < HOUR_SLOTS; k++) {
		if (merge && !(hgiven >> k & 1))
			continue;
		s->h[k] = tmp.h[k];
		if (merge && s->errs)
			memcpy(s->errs->h[k], terr.h[k], sizeof(terr.h[k]));
	}
	for (k = 0; k < DAY_SLOTS; k++) {
		if (merge && !(dgiven >> k & 1))
			continue;
		s->d[k] = tmp.d[k];
		if (merge && s->errs)
			memcpy(s->errs->d[k], terr.d[k], sizeof(terr.d[k]));
	}
	s->hp = s->dp = 0;
	return 0;
}

int ibw_links_load_line(struct ibw_links *l, const char *line)
{
	return load_line(l, line, 0);
}

int ibw_links_merge_line(struct ibw_links *l, const char *line)
{
	return load_line(l, line, 1);
}
