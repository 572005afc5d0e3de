// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "links_int.h"

/*
 * The links of a fabric (links.h): one record per cable, fed in rounds,
 * its windows kept in hour and day buckets, and views of them ranked
 * worst first; what a link's health is: link_judge.c.
 */

/* ---- the table of links ---- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static size_t hash_key(uint64_t ga, uint8_t pa, uint64_t gb, uint8_t pb)
{
	return (size_t)mix(ga ^ mix(gb ^ ((uint64_t)pa << 8 | pb)));
}

static int same_key(const struct lstate *s, uint64_t ga, uint8_t pa,
		    uint64_t gb, uint8_t pb)
{
	return s->e[0].guid == ga && s->e[0].port == pa && s->e[1].guid == gb &&
	       s->e[1].port == pb;
}

static struct lstate **find_slot(const struct ibw_links *l, uint64_t ga,
				 uint8_t pa, uint64_t gb, uint8_t pb)
{
	size_t i = hash_key(ga, pa, gb, pb) & (l->cap - 1);

	while (l->tab[i] && !same_key(l->tab[i], ga, pa, gb, pb))
		i = (i + 1) & (l->cap - 1);
	return &l->tab[i];
}

static int grow(struct ibw_links *l)
{
	size_t ncap = l->cap ? l->cap * 2 : 64, i, j;
	struct lstate **nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (i = 0; i < l->cap; i++) {
		struct lstate *s = l->tab[i];

		if (!s)
			continue;
		j = hash_key(s->e[0].guid, s->e[0].port, s->e[1].guid,
			     s->e[1].port) &
		    (ncap - 1);
		while (nt[j])
			j = (j + 1) & (ncap - 1);
		nt[j] = s;
	}
	free(l->tab);
	l->tab = nt;
	l->cap = ncap;
	return 0;
}

static void lstate_free(struct lstate *s)
{
	if (!s)
		return;
	free(s->errs);
	ibw_lfec_free(s->fec);
	free(s->e[0].name);
	free(s->e[1].name);
	free(s);
}

/* The link between (ga, pa) and (gb, pb), ordered, made if need be. */
struct lstate *ibw_links_get(struct ibw_links *l, uint64_t ga, uint8_t pa,
			     uint64_t gb, uint8_t pb)
{
	struct lstate **slot, *s;

	if ((l->n + 1) * 2 > l->cap && grow(l) < 0)
		return NULL;
	slot = find_slot(l, ga, pa, gb, pb);
	if (*slot)
		return *slot;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->e[0].guid = ga;
	s->e[0].port = pa;
	s->e[1].guid = gb;
	s->e[1].port = pb;
	s->e[0].tick = s->e[1].tick = -1;
	*slot = s;
	l->n++;
	return s;
}

struct ibw_links *ibw_links_new(const struct ibw_link_thresholds *t)
{
	struct ibw_links *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	if (t)
		l->t = *t;
	else
		ibw_link_thresholds_default(&l->t);
	return l;
}

void ibw_links_free(struct ibw_links *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->cap; i++)
		lstate_free(l->tab[i]);
	free(l->tab);
	free(l);
}

void ibw_links_set_thresholds(struct ibw_links *l,
			      const struct ibw_link_thresholds *t)
{
	l->t = *t;
}

size_t ibw_links_count(const struct ibw_links *l)
{
	return l->n;
}

/* ---- readings ---- */

static void add32(uint32_t *a, uint64_t v)
{
	uint64_t s = (uint64_t)*a + v;

	*a = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

/* Add the error counts @xerr and the time @xms they cover to @out. */
static void acc_errors(struct hb_end *out, const uint32_t *xerr, uint32_t xms)
{
	int e;

	for (e = 0; e < NERR; e++)
		add32(&out->err[e], xerr[e]);
	add32(&out->ms, xms);
}

/* Add @x to @out; errors and time only when @errors_only. */
static void acc(struct hb_end *out, const struct hb_end *x, int errors_only)
{
	acc_errors(out, x->err, x->ms);
	if (errors_only)
		return;
	out->wait_ns += x->wait_ns;
	out->xmit += x->xmit;
	out->cap += x->cap;
	out->bits += x->bits;
}

/* Whether bucket @idx is in the window of period @cur. */
static int in_window(uint64_t idx, uint64_t cur, uint64_t slots)
{
	return idx && idx <= cur && idx + slots > cur;
}

int ibw_links_any_error(const uint32_t *err)
{
	int e;

	for (e = 0; e < NERR; e++)
		if (err[e])
			return 1;
	return 0;
}

static void add_hour(struct lstate *s, int i, uint64_t us,
		     const struct hb_end *v)
{
	uint64_t idx = us / HOUR_SLOT_US + 1;
	unsigned slot = (unsigned)(idx % HOUR_SLOTS);
	struct hbucket *b = &s->h[slot];
	int e;

	if (b->idx > idx || idx > UINT32_MAX)
		return; /* older than the ring holds */
	if (b->idx != idx) {
		/* A reused slot held a period a window older. A sum that
		 * still has it (a reading ahead of the rounds' clock) no
		 * longer matches the buckets: recompute it when needed. */
		if (in_window(b->idx, s->hp, HOUR_SLOTS))
			s->hp = 0;
		memset(b, 0, sizeof(*b));
		if (s->errs)
			memset(s->errs->h[slot], 0, sizeof(s->errs->h[slot]));
		b->idx = (uint32_t)idx;
	}
	add32(&b->ms[i], v->ms);
	b->wait_ns[i] += v->wait_ns;
	b->xmit[i] += v->xmit;
	b->cap[i] += v->cap;
	b->bits[i] += v->bits;
	if (s->errs)
		for (e = 0; e < NERR; e++)
			add32(&s->errs->h[slot][i][e], v->err[e]);
	if (in_window(idx, s->hp, HOUR_SLOTS))
		acc(&s->hsum[i], v, 0);
}

static void add_day(struct lstate *s, int i, uint64_t us,
		    const struct hb_end *v)
{
	uint64_t idx = us / DAY_SLOT_US + 1;
	unsigned slot = (unsigned)(idx % DAY_SLOTS);
	struct dbucket *b = &s->d[slot];
	int e;

	if (b->idx > idx || idx > UINT32_MAX)
		return;
	if (b->idx != idx) {
		if (in_window(b->idx, s->dp, DAY_SLOTS))
			s->dp = 0;
		memset(b, 0, sizeof(*b));
		if (s->errs)
			memset(s->errs->d[slot], 0, sizeof(s->errs->d[slot]));
		b->idx = (uint32_t)idx;
	}
	if (s->errs)
		for (e = 0; e < NERR; e++)
			add32(&s->errs->d[slot][i][e], v->err[e]);
	add32(&b->ms[i], v->ms);
	if (in_window(idx, s->dp, DAY_SLOTS))
		acc(&s->dsum[i], v, 1);
}

static void sum_hour(const struct lstate *s, int i, uint64_t cur,
		     struct hb_end *out)
{
	static const uint32_t none[NERR];
	int j;

	memset(out, 0, sizeof(*out));
	for (j = 0; j < HOUR_SLOTS; j++) {
		const struct hbucket *b = &s->h[j];

		if (!in_window(b->idx, cur, HOUR_SLOTS))
			continue;
		acc_errors(out, s->errs ? s->errs->h[j][i] : none, b->ms[i]);
		out->wait_ns += b->wait_ns[i];
		out->xmit += b->xmit[i];
		out->cap += b->cap[i];
		out->bits += b->bits[i];
	}
}

static void sum_day(const struct lstate *s, int i, uint64_t cur,
		    struct hb_end *out)
{
	static const uint32_t none[NERR];
	int j;

	memset(out, 0, sizeof(*out));
	for (j = 0; j < DAY_SLOTS; j++)
		if (in_window(s->d[j].idx, cur, DAY_SLOTS))
			acc_errors(out, s->errs ? s->errs->d[j][i] : none,
				   s->d[j].ms[i]);
}

/* Bring the cached sums to the periods of @now_us. */
static void refresh(struct lstate *s, uint64_t now_us)
{
	uint64_t hp = now_us / HOUR_SLOT_US + 1, dp = now_us / DAY_SLOT_US + 1;

	if (s->hp != hp) {
		sum_hour(s, 0, hp, &s->hsum[0]);
		sum_hour(s, 1, hp, &s->hsum[1]);
		s->hp = hp;
	}
	if (s->dp != dp) {
		sum_day(s, 0, dp, &s->dsum[0]);
		sum_day(s, 1, dp, &s->dsum[1]);
		s->dp = dp;
	}
}

void ibw_links_begin(struct ibw_links *l, uint64_t now_us)
{
	size_t i, drop = 0;
	struct lstate **old;

	l->round_us = now_us;
	for (i = 0; i < l->cap; i++) {
		if (!l->tab[i])
			continue;
		if (l->tab[i]->seen_us + FORGET_US < now_us)
			drop++;
		else
			refresh(l->tab[i], now_us);
	}
	if (!drop)
		return;
	/* Forget the long-missing ones: rebuild the table without them
	 * (open addressing cannot simply empty a slot). */
	old = l->tab;
	l->tab = calloc(l->cap, sizeof(*l->tab));
	if (!l->tab) {
		l->tab = old; /* keep them rather than lose the rest */
		return;
	}
	l->n = l->nfec = 0;
	for (i = 0; i < l->cap; i++) {
		struct lstate *s = old[i];

		if (!s)
			continue;
		if (s->seen_us + FORGET_US < now_us) {
			lstate_free(s);
			continue;
		}
		*find_slot(l, s->e[0].guid, s->e[0].port, s->e[1].guid,
			   s->e[1].port) = s;
		l->n++;
		l->nfec += s->fec != NULL;
	}
	free(old);
}

/* Seconds one PortXmitWait tick stands for at this end's rate: (Tick+1)
 * symbol times, a symbol time being one byte on one lane (IBA PerfMgt,
 * PortSamplesControl:Tick), or bytes at the port's rate where the device
 * counts that way. 0 when the rate is unknown. */
static double tick_seconds(const struct ibw_link_end_in *x,
			   const struct ibw_port_speeds *sp)
{
	const struct ibw_speed_info *si = ibw_speed_info(sp->speed_active);
	unsigned lanes = ibw_width_lanes(sp->width_active);
	double byte_s;

	if (!si || !lanes)
		return 0;
	byte_s = 8.0 / (si->lane_data_gbps * 1e9);
	if (x->tick_per_port)
		byte_s /= lanes;
	return (x->tick < 0 || x->tick > 255 ? 1 : x->tick + 1) * byte_s;
}

static void rebase(struct end_state *e, const struct ibw_link_end_in *x)
{
	e->have_prev = 1;
	e->prev_us = x->ctr_us;
	memcpy(e->prev_err, x->err, sizeof(e->prev_err));
	e->prev_wait = x->xmit_wait;
	e->prev_xmit = x->xmit_bytes;
	e->prev_vl_mask = x->vl_mask;
	memcpy(e->prev_vl, x->vl_xmit_wait, sizeof(e->prev_vl));
}

/* 0, or -ENOMEM with nothing taken (the next reading counts it). */
static int take_reading(struct lstate *s, int i,
			const struct ibw_link_end_in *x, int was_up, int up)
{
	struct end_state *e = &s->e[i];
	struct sample smp;
	double dt, tick, sig, dat;
	int k, back = 0;

	if (!x->have_ctrs || (e->have_prev && x->ctr_us == e->prev_us))
		return 0;
	if (e->have_prev) {
		back = x->ctr_us < e->prev_us || x->xmit_wait < e->prev_wait ||
		       x->xmit_bytes < e->prev_xmit;
		for (k = 0; k < NERR; k++)
			back |= x->err[k] < e->prev_err[k];
	}
	if (!e->have_prev || back) {
		/* A first reading, the clock or the totals went back: a new
		 * base, and no increments from it. */
		e->have_last = 0;
		rebase(e, x);
		return ibw_lfec_take(&s->fec, i, x->fec, x->ctr_us, 0,
				     ibw_width_lanes(e->sp.width_active), 0);
	}
	/* The buckets this reading lands in, apart from the rest of the
	 * state: start fetching them before the arithmetic. */
	if (s->errs) {
		uint64_t hs = (x->ctr_us / HOUR_SLOT_US + 1) % HOUR_SLOTS;
		uint64_t ds = (x->ctr_us / DAY_SLOT_US + 1) % DAY_SLOTS;

		__builtin_prefetch(s->errs->h[hs][i], 1);
		__builtin_prefetch(s->errs->d[ds][i], 1);
	}
	memset(&smp, 0, sizeof(smp));
	smp.us = x->ctr_us;
	dt = (double)(x->ctr_us - e->prev_us) / 1e6;
	smp.v.ms = (uint32_t)fmin(dt * 1000.0 + 0.5, UINT32_MAX);
	for (k = 0; k < NERR; k++)
		add32(&smp.v.err[k], x->err[k] - e->prev_err[k]);
	tick = tick_seconds(x, &e->sp);
	smp.v.wait_ns = (uint64_t)llround(
		(double)(x->xmit_wait - e->prev_wait) * tick * 1e9);
	smp.v.xmit = x->xmit_bytes - e->prev_xmit;
	if (was_up && up) {
		/* Taken as up the whole time: a flap in between shows in
		 * LinkDowned, not here. */
		sig = ibw_rate_signal_bps(e->sp.width_active,
					  (enum ibw_speed)e->sp.speed_active);
		dat = ibw_rate_data_bps(e->sp.width_active,
					(enum ibw_speed)e->sp.speed_active);
		smp.v.bits = (uint64_t)llround(dt * sig);
		smp.v.cap = (uint64_t)llround(dt * dat / 8);
	} else {
		sig = 0;
	}
	if (ibw_lfec_take(&s->fec, i, x->fec, x->ctr_us, sig,
			  ibw_width_lanes(e->sp.width_active),
			  x->err[IBW_LERR_SYMBOL] -
				  e->prev_err[IBW_LERR_SYMBOL]) < 0)
		return -ENOMEM;
	for (k = 0; k < 16; k++) {
		if (!(x->vl_mask & e->prev_vl_mask & (1u << k)) ||
		    x->vl_xmit_wait[k] < e->prev_vl[k] || dt <= 0)
			continue;
		smp.vl_mask |= (uint16_t)(1u << k);
		smp.vl_ratio[k] = (float)fmin(
			1.0, (double)(x->vl_xmit_wait[k] - e->prev_vl[k]) *
				     tick / dt);
	}
	if (!s->errs && ibw_links_any_error(smp.v.err)) {
		s->errs = calloc(1, sizeof(*s->errs));
		if (!s->errs)
			return -ENOMEM;
	}
	add_hour(s, i, smp.us, &smp.v);
	add_day(s, i, smp.us, &smp.v);
	e->last = smp;
	e->have_last = 1;
	rebase(e, x);
	return 0;
}

static int port_up(const struct ibw_portinfo *pi)
{
	return pi->phys_state == IBW_PHYS_LINKUP &&
	       pi->state == IBW_PORT_ACTIVE;
}

static void set_identity(struct end_state *e, const struct ibw_link_end_in *x)
{
	size_t n;

	e->node_type = x->node_type;
	e->lid = x->lid;
	/* Bounded; a new copy only when the name changed (out of memory:
	 * the old one stays). */
	n = x->name ? strnlen(x->name, IBW_NAME_SIZE - 1) : 0;
	if (!e->name || strncmp(e->name, x->name ? x->name : "", n) ||
	    e->name[n]) {
		char *d = malloc(n + 1);

		if (d) {
			memcpy(d, x->name ? x->name : "", n);
			d[n] = '\0';
			free(e->name);
			e->name = d;
		}
	}
	e->state = x->pi->state;
	e->phys = x->pi->phys_state;
	e->module = x->module;
	ibw_port_speeds(x->pi, x->cap, &e->sp);
	if (x->have_ctrs) {
		e->saturated = x->saturated;
		e->tick =
			(int16_t)(x->tick < 0 || x->tick > 255 ? -1 : x->tick);
	}
	/* the mode of the last FEC reading: a sweep without one keeps it */
	if (x->fec) {
		e->fec_mode = x->fec->mode;
		e->fec_mode_src = x->fec->mode_src;
	}
}

int ibw_links_update(struct ibw_links *l, const struct ibw_link_end_in *a,
		     const struct ibw_link_end_in *b)
{
	const struct ibw_link_end_in *tmp;
	struct lstate *s;
	int up, rc, had_fec;

	if (!a || !b || !a->pi || !b->pi ||
	    (a->guid == b->guid && a->port == b->port))
		return -EINVAL;
	if (b->guid < a->guid || (b->guid == a->guid && b->port < a->port)) {
		tmp = a;
		a = b;
		b = tmp;
	}
	s = ibw_links_get(l, a->guid, a->port, b->guid, b->port);
	if (!s)
		return -ENOMEM;
	set_identity(&s->e[0], a);
	set_identity(&s->e[1], b);
	up = port_up(a->pi) && port_up(b->pi);
	had_fec = s->fec != NULL;
	rc = take_reading(s, 0, a, s->up, up);
	if (take_reading(s, 1, b, s->up, up) < 0)
		rc = -ENOMEM;
	l->nfec += !had_fec && s->fec;
	s->up = (uint8_t)up;
	s->seen_us = l->round_us;
	return rc;
}

/* ---- the view ---- */

static void win_from(struct ibw_link_win *w, const struct hb_end *v,
		     int errors_only)
{
	int k;

	memset(w, 0, sizeof(*w));
	w->seconds = v->ms / 1000.0;
	for (k = 0; k < NERR; k++)
		w->errors[k] = v->err[k];
	w->ber = w->xmit_wait_ratio = w->utilisation = -1;
	if (errors_only)
		return;
	w->xmit_bytes = v->xmit;
	w->bits = v->bits;
	if (v->bits)
		w->ber = (double)v->err[IBW_LERR_SYMBOL] / (double)v->bits;
	if (v->cap) {
		w->utilisation = fmin(1.0, (double)v->xmit / (double)v->cap);
		w->xmit_wait_ratio =
			fmin(1.0, (double)v->wait_ns / 1e9 / w->seconds);
	}
}

_Static_assert(IBW_LINK_HIST_N == HOUR_SLOTS &&
		       IBW_LINK_HIST_SLOT_S * 1000000ull == HOUR_SLOT_US,
	       "the history is the hour window's buckets");

int ibw_links_history(const struct ibw_links *l, uint64_t ga, uint8_t pa,
		      uint64_t gb, uint8_t pb, uint64_t now_us,
		      struct ibw_link_hist *h)
{
	static const uint32_t none[NERR];
	const struct lstate *s = l->cap ? *find_slot(l, ga, pa, gb, pb) : NULL;
	uint64_t cur = now_us / HOUR_SLOT_US + 1;
	unsigned k;
	int i;

	memset(h, 0, sizeof(*h));
	if (!s)
		return -ENOENT;
	/* (no period before 1970: the first ones are then empty) */
	h->start_us = cur >= IBW_LINK_HIST_N
			      ? (cur - IBW_LINK_HIST_N) * HOUR_SLOT_US
			      : 0;
	for (k = 0; k < IBW_LINK_HIST_N; k++) {
		uint64_t idx = cur + 1 + k - IBW_LINK_HIST_N;
		unsigned slot = (unsigned)(idx % HOUR_SLOTS);
		const struct hbucket *b = &s->h[slot];

		for (i = 0; i < 2; i++) {
			struct hb_end v;

			memset(&v, 0, sizeof(v));
			if (b->idx == idx) {
				acc_errors(&v,
					   s->errs ? s->errs->h[slot][i] : none,
					   b->ms[i]);
				v.wait_ns = b->wait_ns[i];
				v.xmit = b->xmit[i];
				v.cap = b->cap[i];
				v.bits = b->bits[i];
			}
			win_from(&h->b[k][i], &v, 0);
		}
	}
	for (i = 0; i < 2; i++) {
		double rb[IBW_LINK_HIST_N];

		ibw_lfec_raw_ber_5m(s->fec, i, now_us, IBW_LINK_HIST_N, rb);
		for (k = 0; k < IBW_LINK_HIST_N; k++)
			h->raw_ber[k][i] = rb[k];
	}
	return 0;
}

static const char *end_name(const struct end_state *e)
{
	return e->name ? e->name : "";
}

/* @name copied to *@names (room made by names_size()), which moves past
 * it. */
static const char *name_put(char **names, const char *name)
{
	size_t n = strlen(name) + 1;
	char *at = *names;

	memcpy(at, name, n);
	*names += n;
	return at;
}

/* The bytes the names of @l's ends take, their ends' terminators too. */
static size_t names_size(const struct ibw_links *l)
{
	size_t i, n = 0;

	for (i = 0; i < l->cap; i++)
		if (l->tab[i])
			n += strlen(end_name(&l->tab[i]->e[0])) +
			     strlen(end_name(&l->tab[i]->e[1])) + 2;
	return n;
}

/* @fxs: room for both ends' FEC windows, used when the link has them;
 * *@names: room for both ends' names, past them on return. Returns how
 * many FEC entries it used (0 or 2). */
static size_t fill(struct ibw_link *k, const struct lstate *s, uint64_t now_us,
		   const struct ibw_link_thresholds *t, uint64_t round_us,
		   struct ibw_link_fec *fxs, char **names)
{
	struct ibw_link_fec *fx[2] = { NULL, NULL };
	uint64_t hp = now_us / HOUR_SLOT_US + 1, dp = now_us / DAY_SLOT_US + 1;
	struct hb_end sum;
	int i, v;

	memset(k, 0, sizeof(*k));
	for (i = 0; i < 2; i++) {
		const struct end_state *e = &s->e[i];
		struct ibw_link_end *x = &k->end[i];

		x->guid = e->guid;
		x->port = e->port;
		x->node_type = e->node_type;
		x->lid = e->lid;
		x->name = name_put(names, end_name(e));
		x->state = e->state;
		x->phys_state = e->phys;
		x->sp = e->sp;
		x->saturated = e->saturated;
		x->tick = e->tick;
		x->fec_mode = e->fec_mode;
		x->fec_mode_src = e->fec_mode_src;
		x->module = e->module;
		if (e->have_last) {
			x->sample_us = e->last.us;
			win_from(&x->win[IBW_LWIN_SWEEP], &e->last.v, 0);
			x->vl_mask = e->last.vl_mask;
			for (v = 0; v < 16; v++)
				x->vl_xmit_wait_ratio[v] = e->last.vl_ratio[v];
		} else {
			memset(&sum, 0, sizeof(sum));
			win_from(&x->win[IBW_LWIN_SWEEP], &sum, 0);
		}
		if (s->hp == hp) {
			win_from(&x->win[IBW_LWIN_HOUR], &s->hsum[i], 0);
		} else {
			sum_hour(s, i, hp, &sum);
			win_from(&x->win[IBW_LWIN_HOUR], &sum, 0);
		}
		if (s->dp == dp) {
			win_from(&x->win[IBW_LWIN_DAY], &s->dsum[i], 1);
		} else {
			sum_day(s, i, dp, &sum);
			win_from(&x->win[IBW_LWIN_DAY], &sum, 1);
		}
		/* A SymbolErrorCounter stuck at its maximum (nobody clears
		 * it: reset-counters never) counts nothing more: the BER of
		 * the windows that reach to now is unknown, not 0. */
		if (x->saturated & (1u << IBW_LERR_SYMBOL))
			x->win[IBW_LWIN_SWEEP].ber = x->win[IBW_LWIN_HOUR].ber =
				-1;
		if (x->saturated & IBW_LINK_SAT_XMIT_WAIT)
			x->win[IBW_LWIN_SWEEP].xmit_wait_ratio =
				x->win[IBW_LWIN_HOUR].xmit_wait_ratio = -1;
	}
	k->seen_us = s->seen_us;
	for (i = 0; s->fec && fxs && i < 2; i++)
		if (ibw_lfec_view(s->fec, i, now_us, &fxs[i])) {
			fx[i] = &fxs[i];
			k->end[i].fec = fx[i];
		}
	ibw_link_judge(k, t, s->seen_us != round_us, fx);
	return s->fec && fxs ? 2 : 0;
}

static uint64_t day_errors(const struct ibw_link *k)
{
	uint64_t n = 0;
	int i, e;

	for (i = 0; i < 2; i++)
		for (e = 0; e < NERR; e++)
			n += k->end[i].win[IBW_LWIN_DAY].errors[e];
	return n;
}

/* What the ranking looks at, apart from the link, so that sorting moves
 * little. */
struct rank_key {
	enum ibw_link_health health;
	double ber, wait;
	uint64_t errors, g0, g1;
	uint8_t p0, p1;
	size_t idx;
};

/* Worst first: health, BER, errors in the day, xmit wait, then by ends
 * so that the order is total and stable. */
static int cmp_rank(const void *pa, const void *pb)
{
	const struct rank_key *a = pa, *b = pb;

	if (a->health != b->health)
		return a->health > b->health ? -1 : 1;
	if (a->ber != b->ber)
		return a->ber > b->ber ? -1 : 1;
	if (a->errors != b->errors)
		return a->errors > b->errors ? -1 : 1;
	if (a->wait != b->wait)
		return a->wait > b->wait ? -1 : 1;
	if (a->g0 != b->g0)
		return a->g0 < b->g0 ? -1 : 1;
	if (a->p0 != b->p0)
		return a->p0 < b->p0 ? -1 : 1;
	if (a->g1 != b->g1)
		return a->g1 < b->g1 ? -1 : 1;
	return (int)a->p1 - (int)b->p1;
}

/* Merge sort by cmp_rank(), with the comparison inlined (qsort()'s
 * indirect calls were most of the ranking's time); @t holds n / 2 + 1. A
 * half already in order after the other costs one comparison. */
static void sort_rank(struct rank_key *a, struct rank_key *t, size_t n)
{
	struct rank_key x;
	size_t h, i, j, k;

	if (n <= 12) {
		for (i = 1; i < n; i++) {
			x = a[i];
			for (j = i; j > 0 && cmp_rank(&x, &a[j - 1]) < 0; j--)
				a[j] = a[j - 1];
			a[j] = x;
		}
		return;
	}
	h = n / 2;
	sort_rank(a, t, h);
	sort_rank(a + h, t, n - h);
	if (cmp_rank(&a[h - 1], &a[h]) <= 0)
		return;
	memcpy(t, a, h * sizeof(*a));
	for (i = 0, j = h, k = 0; i < h; k++) {
		if (j < n && cmp_rank(&a[j], &t[i]) < 0)
			a[k] = a[j++];
		else
			a[k] = t[i++];
	}
}

/*
 * The view's index of ends (by_end): open addressing over a power of two
 * at least 4n slots, each 0 or 1 + (link index * 2 + end). Built in one
 * pass, where sorting the 2n ends cost as much as ranking the links.
 */
static size_t end_slots(size_t n)
{
	size_t cap = 16;

	while (cap < 4 * n)
		cap *= 2;
	return cap;
}

static size_t end_hash(uint64_t guid, uint8_t port)
{
	return (size_t)mix(guid ^ ((uint64_t)port << 56 | port));
}

static const struct ibw_link_end *end_of(const struct ibw_link_view *v,
					 size_t ref)
{
	return &v->links[ref / 2].end[ref % 2];
}

static void index_ends(struct ibw_link_view *v)
{
	size_t mask = end_slots(v->n) - 1, i, h;

	for (i = 0; i < 2 * v->n; i++) {
		const struct ibw_link_end *e = end_of(v, i);

		for (h = end_hash(e->guid, e->port) & mask; v->by_end[h];
		     h = (h + 1) & mask)
			;
		v->by_end[h] = i + 1;
	}
}

/* Put the links in the order of @rk, in place (a view is big: no copy),
 * following each cycle of the permutation once. */
static void permute(struct ibw_link *links, struct rank_key *rk, size_t n)
{
	struct ibw_link t;
	size_t i, j, k;

	for (i = 0; i < n; i++) {
		if (rk[i].idx == i)
			continue;
		t = links[i];
		j = i;
		for (;;) {
			k = rk[j].idx;
			rk[j].idx = j;
			if (k == i) {
				links[j] = t;
				break;
			}
			links[j] = links[k];
			j = k;
		}
	}
}

static void prefetch_state(const struct lstate *s)
{
	const char *p = (const char *)s;
	size_t off;

	for (off = 0; off < VIEW_BYTES; off += 64)
		__builtin_prefetch(p + off);
}

struct ibw_link_view *ibw_links_view(const struct ibw_links *l, uint64_t now_us)
{
	struct ibw_link_view *v = calloc(1, sizeof(*v));
	struct rank_key *rk = NULL;
	size_t i, n = 0, next, nf = 0;
	char *names;

	if (!v)
		return NULL;
	v->refs = 1;
	v->taken_us = now_us;
	v->by_end = calloc(end_slots(l->n), sizeof(*v->by_end));
	if (!v->by_end) {
		ibw_link_view_free(v);
		return NULL;
	}
	if (l->nfec) {
		v->fec = malloc(2 * l->nfec * sizeof(*v->fec));
		if (!v->fec) {
			ibw_link_view_free(v);
			return NULL;
		}
	}
	if (l->n) {
		v->links = malloc(l->n * sizeof(*v->links));
		v->names = malloc(names_size(l));
		rk = malloc((l->n + l->n / 2 + 1) * sizeof(*rk));
		if (!v->links || !v->names || !rk) {
			free(rk);
			ibw_link_view_free(v);
			return NULL;
		}
	}
	names = v->names;
	next = 0;
	for (i = 0; i < l->cap; i++) {
		const struct ibw_link *k = &v->links[n];

		if (!l->tab[i])
			continue;
		/* The states are scattered allocations, read once each:
		 * fetch the next one's while this one is filled. */
		if (next <= i)
			for (next = i + 1; next < l->cap && !l->tab[next];
			     next++)
				;
		if (next < l->cap)
			prefetch_state(l->tab[next]);
		nf += fill(&v->links[n], l->tab[i], now_us, &l->t, l->round_us,
			   nf < 2 * l->nfec ? v->fec + nf : NULL, &names);
		rk[n].health = k->health;
		rk[n].ber = k->ber;
		rk[n].wait = k->xmit_wait_ratio;
		rk[n].errors = day_errors(k);
		rk[n].g0 = k->end[0].guid;
		rk[n].p0 = k->end[0].port;
		rk[n].g1 = k->end[1].guid;
		rk[n].p1 = k->end[1].port;
		rk[n].idx = n;
		v->count[k->health]++;
		n++;
	}
	v->n = n;
	if (n) {
		sort_rank(rk, rk + n, n);
		permute(v->links, rk, n);
	}
	free(rk);
	index_ends(v);
	return v;
}

struct ibw_link_view *ibw_link_view_ref(struct ibw_link_view *v)
{
	/* Atomic: snapshots holding it are let go on HTTP threads too. */
	if (v)
		__atomic_add_fetch(&v->refs, 1, __ATOMIC_RELAXED);
	return v;
}

void ibw_link_view_unref(struct ibw_link_view *v)
{
	if (!v || __atomic_sub_fetch(&v->refs, 1, __ATOMIC_ACQ_REL))
		return;
	free(v->links);
	free(v->by_end);
	free(v->fec);
	free(v->names);
	free(v);
}

void ibw_link_view_free(struct ibw_link_view *v)
{
	ibw_link_view_unref(v);
}

/* The first link in rank order with @guid/@port at either end and, when
 * @other is given, (@og, @op) at the other end. */
static const struct ibw_link *find_end(const struct ibw_link_view *v,
				       uint64_t guid, uint8_t port, int other,
				       uint64_t og, uint8_t op)
{
	size_t mask, h;

	if (!v || !v->by_end)
		return NULL;
	mask = end_slots(v->n) - 1;
	for (h = end_hash(guid, port) & mask; v->by_end[h];
	     h = (h + 1) & mask) {
		size_t ref = v->by_end[h] - 1;
		const struct ibw_link_end *e = end_of(v, ref);
		const struct ibw_link_end *o = end_of(v, ref ^ 1);

		if (e->guid == guid && e->port == port &&
		    (!other || (o->guid == og && o->port == op)))
			return &v->links[ref / 2];
	}
	return NULL;
}

const struct ibw_link *ibw_link_view_find(const struct ibw_link_view *v,
					  uint64_t guid, uint8_t port)
{
	return find_end(v, guid, port, 0, 0, 0);
}

unsigned ibw_link_view_changes(
	const struct ibw_link_view *old, const struct ibw_link_view *cur,
	void (*cb)(const struct ibw_link_change *c, void *arg), void *arg)
{
	struct ibw_link_change c;
	unsigned n = 0;
	size_t i;

	for (i = 0; i < cur->n; i++) {
		const struct ibw_link *k = &cur->links[i];
		/* The same cable, not another one at either port (a port
		 * cabled elsewhere since) */
		const struct ibw_link *o =
			find_end(old, k->end[0].guid, k->end[0].port, 1,
				 k->end[1].guid, k->end[1].port);

		c.link = k;
		c.from = o ? o->health : IBW_HEALTH_OK;
		c.from_reasons = o ? o->reasons : 0;
		if (c.from == k->health)
			continue;
		n++;
		if (cb)
			cb(&c, arg);
	}
	return n;
}
