// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "link_fec.h"

/*
 * Each window but the sweep is a ring of buckets, as core/links' hour and
 * day: 12 of a minute for the 12 minutes, 25 of 5 minutes for the 125, 24
 * of an hour for the day. A reading goes whole into the bucket of the
 * time it was read; a window is its ring's buckets of the last N periods
 * up to the view's time, and its rates divide by the bits its readings
 * cover. Counts are floats in the buckets (no saturation; 24 bits of
 * precision is plenty for a rate) but for the uncorrectable and effective
 * counts, which are small and shown exactly.
 */
static const struct {
	const char *name;
	unsigned slots, first;
	uint64_t slot_us;
} rings[IBW_FWIN_MAX] = {
	[IBW_FWIN_SWEEP] = { "sweep", 0, 0, 0 },
	[IBW_FWIN_12M] = { "12m", 12, 0, 60ull * 1000000 },
	[IBW_FWIN_125M] = { "125m", 25, 12, 300ull * 1000000 },
	[IBW_FWIN_DAY] = { "24h", 24, 37, 3600ull * 1000000 },
};

#define NSLOTS 61

struct fbk {
	uint32_t idx; /* period number + 1; 0: empty */
	uint32_t ms;
	float bits, corr;
	uint32_t unc, eff;
};

struct fend {
	uint8_t have_base, have_last, layout, nl;
	uint8_t sat; /* the last reading had a field stuck at its maximum */
	uint64_t base_us, base_corr, base_unc;
	uint64_t base_lane[IBW_FEC_LANES];
	struct fbk last;
	float last_lane[IBW_FEC_LANES];
	struct fbk ring[NSLOTS];
	float *lane; /* NSLOTS x nl */
};

struct ibw_lfec {
	struct fend e[2];
};

const char *ibw_fwin_name(enum ibw_fwin w)
{
	return (unsigned)w < IBW_FWIN_MAX ? rings[w].name : "unknown";
}

void ibw_fec_thresholds_default(struct ibw_fec_thresholds *t)
{
	t->raw_ber_degraded = 1e-6;
	t->raw_ber_failing = 1e-4;
	t->effective_ber_12m = 1e-14;
	t->effective_ber_125m = 1e-15;
	t->bad_lane_factor = 10;
}

double ibw_link_fec_lane_ber(const struct ibw_link_fec_win *w, unsigned lanes,
			     unsigned lane)
{
	if (!lanes || lane >= lanes || lane >= IBW_FEC_LANES || w->bits <= 0)
		return -1;
	return w->lane[lane] / (w->bits / lanes);
}

/* The port-wide corrected count, the uncorrectable blocks and the lanes'
 * corrected counts, as totals, in either layout. */
static void totals(const struct ibw_fec *f, uint64_t *corr, uint64_t *unc,
		   uint64_t *lane)
{
	int rs = f->layout == IBW_FEC_RS, i;

	*corr = *unc = 0;
	for (i = 0; i < IBW_FEC_LANES; i++) {
		lane[i] =
			f->total[(rs ? IBW_FEC_CORR_SYM0 : IBW_FEC_CORR_BLK0) +
				 i];
		if (!rs) {
			*corr += lane[i];
			*unc += f->total[IBW_FEC_UNCORR_BLK0 + i];
		}
	}
	if (rs) {
		*unc = f->total[IBW_FEC_PORT_UNCORR_BLK];
		if (f->have & (1ull << IBW_FEC_PORT_CORR_SYM))
			*corr = f->total[IBW_FEC_PORT_CORR_SYM];
		else
			for (i = 0; i < IBW_FEC_LANES; i++)
				*corr += lane[i];
	}
}

static void rebase(struct fend *e, const struct ibw_fec *f, uint64_t us)
{
	totals(f, &e->base_corr, &e->base_unc, e->base_lane);
	e->base_us = us;
	e->layout = f->layout;
	e->have_base = 1;
}

static void add_u32(uint32_t *a, uint64_t v)
{
	uint64_t s = (uint64_t)*a + v;

	*a = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

static void add_sample(struct fend *e, uint64_t us, const struct fbk *v,
		       const float *lane)
{
	int w;
	unsigned k;

	for (w = IBW_FWIN_12M; w < IBW_FWIN_MAX; w++) {
		uint64_t idx = us / rings[w].slot_us + 1;
		unsigned slot;
		struct fbk *b;
		float *bl;

		if (idx > UINT32_MAX)
			continue;
		slot = rings[w].first + (unsigned)(idx % rings[w].slots);
		b = &e->ring[slot];
		bl = e->lane + (size_t)slot * e->nl;
		if (b->idx > idx)
			continue; /* older than the ring holds */
		if (b->idx != idx) {
			memset(b, 0, sizeof(*b));
			memset(bl, 0, e->nl * sizeof(*bl));
			b->idx = (uint32_t)idx;
		}
		add_u32(&b->ms, v->ms);
		b->bits += v->bits;
		b->corr += v->corr;
		add_u32(&b->unc, v->unc);
		add_u32(&b->eff, v->eff);
		for (k = 0; k < e->nl; k++)
			bl[k] += lane[k];
	}
}

int ibw_lfec_take(struct ibw_lfec **pf, int end, const struct ibw_fec *fec,
		  uint64_t us, double sig_bps, unsigned lanes,
		  uint64_t sym_delta)
{
	struct ibw_lfec *f = *pf;
	struct fend *e;
	uint64_t corr, unc, lane[IBW_FEC_LANES];
	struct fbk v;
	float dl[IBW_FEC_LANES];
	unsigned k, nl;
	int back = 0;

	if (!fec || fec->layout == IBW_FEC_NONE || end < 0 || end > 1)
		return 0;
	nl = lanes < 1 ? 1 : lanes > IBW_FEC_LANES ? IBW_FEC_LANES : lanes;
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f)
			return -ENOMEM;
		*pf = f;
	}
	e = &f->e[end];
	if (e->nl != nl) {
		/* The lanes changed (or this is the first reading): the
		 * per-lane windows start again. */
		float *l = calloc((size_t)NSLOTS * nl, sizeof(*l));

		if (!l)
			return -ENOMEM;
		free(e->lane);
		e->lane = l;
		e->nl = (uint8_t)nl;
		memset(e->ring, 0, sizeof(e->ring));
		e->have_base = e->have_last = 0;
	}
	totals(fec, &corr, &unc, lane);
	e->sat = fec->saturated != 0;
	if (e->have_base) {
		back = us <= e->base_us || fec->layout != e->layout ||
		       corr < e->base_corr || unc < e->base_unc;
		for (k = 0; k < IBW_FEC_LANES; k++)
			back |= lane[k] < e->base_lane[k];
	}
	if (!e->have_base || back) {
		/* A first reading, another layout, a clock or totals that
		 * went back: a new base, no sample. */
		e->have_last = 0;
		rebase(e, fec, us);
		return 0;
	}
	memset(&v, 0, sizeof(v));
	v.ms = (uint32_t)fmin((double)(us - e->base_us) / 1000.0 + 0.5,
			      UINT32_MAX);
	v.bits = (float)(sig_bps * (double)(us - e->base_us) / 1e6);
	v.corr = (float)(corr - e->base_corr);
	v.unc = (uint32_t)fmin((double)(unc - e->base_unc), UINT32_MAX);
	v.eff = (uint32_t)fmin((double)(unc - e->base_unc > sym_delta
						? unc - e->base_unc
						: sym_delta),
			       UINT32_MAX);
	for (k = 0; k < nl; k++)
		dl[k] = (float)(lane[k] - e->base_lane[k]);
	add_sample(e, us, &v, dl);
	e->last = v;
	memcpy(e->last_lane, dl, nl * sizeof(*dl));
	e->have_last = 1;
	rebase(e, fec, us);
	return 0;
}

static void win_of(struct ibw_link_fec_win *w, const struct fbk *b,
		   const float *lane, unsigned nl)
{
	unsigned k;

	w->seconds += b->ms / 1000.0;
	w->bits += b->bits;
	w->corrected += b->corr;
	w->uncorrectable += b->unc;
	w->effective += b->eff;
	for (k = 0; k < nl; k++)
		w->lane[k] += lane[k];
}

static void rates(struct ibw_link_fec_win *w)
{
	w->raw_ber = w->effective_ber = -1;
	if (w->bits > 0) {
		w->raw_ber = w->corrected / w->bits;
		w->effective_ber = (double)w->effective / w->bits;
	}
}

void ibw_lfec_raw_ber_5m(const struct ibw_lfec *f, int end, uint64_t now_us,
			 unsigned n, double *out)
{
	const unsigned w = IBW_FWIN_125M;
	uint64_t cur = now_us / rings[w].slot_us + 1;
	unsigned k;

	for (k = 0; k < n; k++) {
		uint64_t idx = cur + 1 + k - n; /* oldest first */
		const struct fbk *b;

		out[k] = -1;
		if (!f || end < 0 || end > 1 || !f->e[end].have_base ||
		    f->e[end].sat || n > rings[w].slots || idx > cur)
			continue;
		b = &f->e[end].ring[rings[w].first + idx % rings[w].slots];
		if (b->idx == idx && b->bits > 0)
			out[k] = b->corr / b->bits;
	}
}

int ibw_lfec_view(const struct ibw_lfec *f, int end, uint64_t now_us,
		  struct ibw_link_fec *out)
{
	const struct fend *e;
	int w;
	unsigned s;

	memset(out, 0, sizeof(*out));
	out->bad_lane = -1;
	if (!f || end < 0 || end > 1 || !f->e[end].have_base)
		return 0;
	e = &f->e[end];
	out->layout = e->layout;
	out->lanes = e->nl;
	if (e->have_last)
		win_of(&out->win[IBW_FWIN_SWEEP], &e->last, e->last_lane,
		       e->nl);
	rates(&out->win[IBW_FWIN_SWEEP]);
	for (w = IBW_FWIN_12M; w < IBW_FWIN_MAX; w++) {
		uint64_t cur = now_us / rings[w].slot_us + 1;

		for (s = 0; s < rings[w].slots; s++) {
			unsigned slot = rings[w].first + s;
			const struct fbk *b = &e->ring[slot];

			if (!b->idx || b->idx > cur ||
			    b->idx + rings[w].slots <= cur)
				continue;
			win_of(&out->win[w], b, e->lane + (size_t)slot * e->nl,
			       e->nl);
		}
		rates(&out->win[w]);
	}
	/* A counter stuck at its maximum (reset-counters never) counts
	 * no more errors: every window reaching to now is unknown, never
	 * an error rate of 0. */
	out->saturated = e->sat;
	for (w = 0; e->sat && w < IBW_FWIN_MAX; w++)
		out->win[w].raw_ber = out->win[w].effective_ber = -1;
	return 1;
}

void ibw_lfec_free(struct ibw_lfec *f)
{
	if (!f)
		return;
	free(f->e[0].lane);
	free(f->e[1].lane);
	free(f);
}

void ibw_lfec_print(const struct ibw_lfec *f, FILE *out)
{
	unsigned j, s, k;

	for (j = 0; f && j < 2; j++) {
		const struct fend *e = &f->e[j];

		if (!e->have_base)
			continue;
		fprintf(out, " f %u %u %u %" PRIu64 " %" PRIu64 " %" PRIu64, j,
			e->layout, e->nl, e->base_us, e->base_corr,
			e->base_unc);
		for (k = 0; k < IBW_FEC_LANES; k++)
			fprintf(out, " %" PRIu64, e->base_lane[k]);
		for (s = 0; s < NSLOTS; s++) {
			const struct fbk *b = &e->ring[s];

			if (!b->idx)
				continue;
			fprintf(out, " fb %u %u %u %u %.9g %.9g %u %u", j, s,
				b->idx, b->ms, (double)b->bits, (double)b->corr,
				b->unc, b->eff);
			for (k = 0; k < e->nl; k++)
				fprintf(out, " %.9g",
					(double)e->lane[(size_t)s * e->nl + k]);
		}
	}
}

int ibw_lfec_restore_base(struct ibw_lfec **pf, int end,
			  const struct ibw_lfec_base *b)
{
	struct ibw_lfec *f = *pf;
	struct fend *e;
	float *l;

	if (end < 0 || end > 1 ||
	    (b->layout != IBW_FEC_FC && b->layout != IBW_FEC_RS) ||
	    b->lanes < 1 || b->lanes > IBW_FEC_LANES)
		return -EINVAL;
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f)
			return -ENOMEM;
		*pf = f;
	}
	e = &f->e[end];
	l = calloc((size_t)NSLOTS * b->lanes, sizeof(*l));
	if (!l)
		return -ENOMEM;
	free(e->lane);
	memset(e, 0, sizeof(*e));
	e->lane = l;
	e->nl = (uint8_t)b->lanes;
	e->layout = (uint8_t)b->layout;
	e->base_us = b->us;
	e->base_corr = b->corr;
	e->base_unc = b->unc;
	memcpy(e->base_lane, b->lane, sizeof(e->base_lane));
	e->have_base = 1;
	return 0;
}

int ibw_lfec_restore_bucket(struct ibw_lfec *f, int end,
			    const struct ibw_lfec_bucket *b)
{
	struct fend *e;
	unsigned w;

	if (!f || end < 0 || end > 1 || !f->e[end].have_base ||
	    b->slot >= NSLOTS || !b->idx)
		return -EINVAL;
	e = &f->e[end];
	for (w = IBW_FWIN_12M; w < IBW_FWIN_MAX; w++)
		if (b->slot >= rings[w].first &&
		    b->slot < rings[w].first + rings[w].slots)
			break;
	if (w == IBW_FWIN_MAX ||
	    rings[w].first + b->idx % rings[w].slots != b->slot)
		return -EINVAL;
	e->ring[b->slot] = (struct fbk){ .idx = b->idx,
					 .ms = b->ms,
					 .bits = b->bits,
					 .corr = b->corr,
					 .unc = b->unc,
					 .eff = b->eff };
	memcpy(e->lane + (size_t)b->slot * e->nl, b->lane,
	       e->nl * sizeof(*e->lane));
	return 0;
}

unsigned ibw_lfec_lanes(const struct ibw_lfec *f, int end)
{
	return f && end >= 0 && end <= 1 && f->e[end].have_base ? f->e[end].nl
								: 0;
}

size_t ibw_lfec_bytes(const struct ibw_lfec *f)
{
	if (!f)
		return 0;
	return sizeof(*f) +
	       (size_t)NSLOTS * (f->e[0].nl + f->e[1].nl) * sizeof(float);
}

/* A BER threshold is applied once the window holds the bits to resolve
 * it, as core/links does for the estimate. */
static int over(const struct ibw_link_fec_win *w, double thr)
{
	return thr > 0 && w->raw_ber >= 0 && w->bits >= 1.0 / thr &&
	       w->raw_ber > thr;
}

void ibw_link_fec_judge(struct ibw_link_fec *x, double data_bps,
			const struct ibw_fec_thresholds *t)
{
	const struct ibw_link_fec_win *w12 = &x->win[IBW_FWIN_12M];
	const struct ibw_link_fec_win *w125 = &x->win[IBW_FWIN_125M];
	unsigned k, worst = 0;
	double second = 0;

	x->raw_state = x->effective_state = IBW_HEALTH_OK;
	x->bad_lane = -1;
	if (!x->layout || data_bps <= 0)
		return;
	if (over(w12, t->raw_ber_failing))
		x->raw_state = IBW_HEALTH_FAILING;
	else if (over(w12, t->raw_ber_degraded))
		x->raw_state = IBW_HEALTH_DEGRADED;
	/* UFM's PDR plugin: more errors in the window than the threshold
	 * BER allows in the window's nominal length at the link's rate. */
	if ((t->effective_ber_12m > 0 &&
	     (double)w12->effective > t->effective_ber_12m * data_bps * 720) ||
	    (t->effective_ber_125m > 0 &&
	     (double)w125->effective > t->effective_ber_125m * data_bps * 7500))
		x->effective_state = IBW_HEALTH_DEGRADED;
	if (x->raw_state == IBW_HEALTH_OK || x->lanes < 2 ||
	    t->bad_lane_factor <= 0)
		return;
	for (k = 1; k < x->lanes; k++)
		if (w12->lane[k] > w12->lane[worst])
			worst = k;
	for (k = 0; k < x->lanes; k++)
		if (k != worst && w12->lane[k] > second)
			second = w12->lane[k];
	if (w12->lane[worst] > 0 &&
	    w12->lane[worst] >= t->bad_lane_factor * second)
		x->bad_lane = (int8_t)worst;
}
