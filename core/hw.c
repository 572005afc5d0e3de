// SPDX-License-Identifier: BSD-2-Clause
/* Hardware health in-band: the sweep (hw.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw.h"
#include "log.h"

struct ibw_hw {
	struct ibw_engine *e;
	struct ibw_loop *loop;
	struct ibw_events *ev;
	struct ibw_hw_opts o;
	void (*done)(struct ibw_hw_view *v, void *arg);
	void *arg;
	struct ibw_timer *timer;
	struct ibw_fabric *fabric; /* the newest discovery's */
	int fabric_new; /* not applied to @nodes yet */
	struct ibw_hw_node *nodes; /* by GUID */
	unsigned nnodes;
	struct ibw_hw_view *last; /* the last view made */
	unsigned outstanding; /* requests of the sweep under way */
	/* asked, not submitted yet: a sweep submits at most
	 * IBW_HW_MAX_SUBMITTED at a time (57,000 module ports' requests at
	 * once would hold hundreds of megabytes in the engine's queue) */
	struct pend {
		uint32_t node;
		uint8_t what, idx;
	} * pend;
	size_t npend, pend_head, pend_cap;
	int running;
	int dying; /* freed: the last request's answer frees it */
	uint64_t t0_us, sweeps, mads, timeouts, sweep_mads, sweep_timeouts;
};

/* What a request asks, for its answer. */
enum ask {
	A_PROBE,
	A_MGIR,
	A_MSGI,
	A_MTCAP,
	A_MTMP,
	A_MFCR,
	A_MFSM,
	A_MFSL,
	A_MSPS,
	A_PDDR_INFO,
	A_PDDR_FLAGS,
};

struct q {
	struct ibw_hw *h;
	unsigned node;
	enum ask what;
	unsigned idx; /* sensor or tacho */
};

static const struct {
	uint16_t id;
	unsigned bit;
} regs[] = {
	[A_MGIR] = { IBW_REG_MGIR, IBW_HWR_MGIR },
	[A_MSGI] = { IBW_REG_MSGI, IBW_HWR_MSGI },
	[A_MTCAP] = { IBW_REG_MTCAP, IBW_HWR_MTCAP },
	[A_MTMP] = { IBW_REG_MTMP, IBW_HWR_MTMP },
	[A_MFCR] = { IBW_REG_MFCR, IBW_HWR_MFCR },
	[A_MFSM] = { IBW_REG_MFSM, IBW_HWR_MFSM },
	[A_MFSL] = { IBW_REG_MFSL, IBW_HWR_MFSL },
	[A_MSPS] = { IBW_REG_MSPS, IBW_HWR_MSPS },
	[A_PDDR_INFO] = { IBW_REG_PDDR, IBW_HWR_PDDR },
	[A_PDDR_FLAGS] = { IBW_REG_PDDR, IBW_HWR_PDDR },
};

const char *ibw_hw_state_str(enum ibw_hw_state s)
{
	static const char *const n[] = { "new", "ok", "refused", "silent",
					 "other_vendor" };

	return (unsigned)s < sizeof(n) / sizeof(n[0]) ? n[s] : "unknown";
}

/* ---- views ---- */

static void node_free(struct ibw_hw_node *n)
{
	free(n->sensors);
	free(n->fans);
	free(n->modules);
	n->sensors = NULL;
	n->fans = NULL;
	n->modules = NULL;
	n->nsensors = n->nfans = n->nmodules = 0;
}

static void *dup_array(const void *p, size_t n, size_t size)
{
	void *d;

	if (!n)
		return NULL;
	if ((d = malloc(n * size)))
		memcpy(d, p, n * size);
	return d;
}

static int node_copy(struct ibw_hw_node *dst, const struct ibw_hw_node *src)
{
	*dst = *src;
	dst->sensors =
		dup_array(src->sensors, src->nsensors, sizeof(*src->sensors));
	dst->fans = dup_array(src->fans, src->nfans, sizeof(*src->fans));
	dst->modules =
		dup_array(src->modules, src->nmodules, sizeof(*src->modules));
	if ((src->nsensors && !dst->sensors) || (src->nfans && !dst->fans) ||
	    (src->nmodules && !dst->modules)) {
		node_free(dst);
		return -ENOMEM;
	}
	return 0;
}

struct ibw_hw_view *ibw_hw_view_ref(struct ibw_hw_view *v)
{
	if (v)
		__atomic_add_fetch(&v->refs, 1, __ATOMIC_RELAXED);
	return v;
}

void ibw_hw_view_unref(struct ibw_hw_view *v)
{
	unsigned i;

	if (!v || __atomic_sub_fetch(&v->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (i = 0; i < v->nnodes; i++)
		node_free(&v->nodes[i]);
	free(v->nodes);
	free(v);
}

static int by_guid(const void *a, const void *b)
{
	uint64_t x = ((const struct ibw_hw_node *)a)->guid;
	uint64_t y = ((const struct ibw_hw_node *)b)->guid;

	return x < y ? -1 : x > y;
}

const struct ibw_hw_node *ibw_hw_view_find(const struct ibw_hw_view *v,
					   uint64_t guid)
{
	struct ibw_hw_node key = { .guid = guid };

	if (!v || !v->nnodes)
		return NULL;
	return bsearch(&key, v->nodes, v->nnodes, sizeof(key), by_guid);
}

unsigned ibw_hw_node_fans_failed(const struct ibw_hw_node *n)
{
	unsigned i, k = 0;

	for (i = 0; i < n->nfans; i++)
		k += n->fans[i].failed != 0;
	return k;
}

unsigned ibw_hw_node_psus_failed(const struct ibw_hw_node *n)
{
	unsigned i, k = 0;

	for (i = 0; n->have_psus && i < IBW_HW_PSUS; i++)
		k += n->psu_failed[i] != 0;
	return k;
}

const struct ibw_hw_module *ibw_hw_node_module(const struct ibw_hw_node *n,
					       unsigned port)
{
	unsigned i;

	for (i = 0; n && i < n->nmodules; i++)
		if (n->modules[i].port == port)
			return &n->modules[i];
	return NULL;
}

int ibw_hw_module_present(const struct ibw_hw_module *m)
{
	return m->have_info && m->info.type != 4 && m->info.type != 3 &&
	       m->info.type != 0;
}

double ibw_hw_dbm(unsigned uw)
{
	return uw ? 10.0 * log10(uw / 1000.0) : -40.0;
}

/* One finding: kept when worse than what @j has (an alarm beats a
 * warning; the first of a level stays). */
static void find(struct ibw_link_module *j, int level,
		 enum ibw_module_what what, int high, int lane, double value,
		 double thr)
{
	if (level <= j->level)
		return;
	j->level = (uint8_t)level;
	j->what = (uint8_t)what;
	j->high = (uint8_t)high;
	j->lane = (int8_t)lane;
	j->value = (float)value;
	j->threshold = (float)thr;
}

/* A lane mask's findings of one kind: alarm and warning, low and high. */
static void lanes(struct ibw_link_module *j, enum ibw_module_what w,
		  uint8_t lo_al, uint8_t hi_al, uint8_t lo_war, uint8_t hi_war,
		  const double *val, double lo_thr, double hi_thr)
{
	int l;

	for (l = 0; l < IBW_MODULE_LANES; l++) {
		if (lo_al >> l & 1)
			find(j, 2, w, 0, l, val[l], lo_thr);
		if (hi_al >> l & 1)
			find(j, 2, w, 1, l, val[l], hi_thr);
	}
	for (l = 0; l < IBW_MODULE_LANES; l++) {
		if (lo_war >> l & 1)
			find(j, 1, w, 0, l, val[l], lo_thr);
		if (hi_war >> l & 1)
			find(j, 1, w, 1, l, val[l], hi_thr);
	}
}

/* What the module says of itself: its latched alarm and warning flags
 * (which it sets against its own thresholds, the warning ones
 * included), and its values against the alarm thresholds PDDR gives,
 * which catch an alarm the flags have not latched yet. An alarm beats a
 * warning; of one level the first found stays: a transmitter fault or a
 * lost signal, then rx power (a dying receiver is what shows days
 * ahead), tx power, bias, temperature, voltage. */
static void judge_module(struct ibw_hw_module *m)
{
	struct ibw_link_module *j = &m->judged;
	const struct ibw_hw_modinfo *i = &m->info;
	const struct ibw_hw_modflags *f = &m->flags;
	double rx[IBW_MODULE_LANES], tx[IBW_MODULE_LANES];
	double rx_lo = ibw_hw_dbm(i->rx_lo_uw), rx_hi = ibw_hw_dbm(i->rx_hi_uw);
	double tx_lo = ibw_hw_dbm(i->tx_lo_uw), tx_hi = ibw_hw_dbm(i->tx_hi_uw);
	int l;

	memset(j, 0, sizeof(*j));
	j->threshold = NAN;
	if (!ibw_hw_module_present(m))
		return;
	for (l = 0; l < IBW_MODULE_LANES; l++) {
		rx[l] = ibw_hw_dbm(i->rx_uw[l]);
		tx[l] = ibw_hw_dbm(i->tx_uw[l]);
	}
	if (m->have_flags) {
		for (l = 0; l < IBW_MODULE_LANES; l++)
			if (f->tx_fault >> l & 1)
				find(j, 2, IBW_MOD_TX_FAULT, 0, l, 0, NAN);
		for (l = 0; l < IBW_MODULE_LANES; l++)
			if (f->rx_los >> l & 1)
				find(j, 2, IBW_MOD_RX_LOS, 0, l, 0, NAN);
		lanes(j, IBW_MOD_RX_POWER, f->rx_lo_al, f->rx_hi_al,
		      f->rx_lo_war, f->rx_hi_war, rx, rx_lo, rx_hi);
		lanes(j, IBW_MOD_TX_POWER, f->tx_lo_al, f->tx_hi_al,
		      f->tx_lo_war, f->tx_hi_war, tx, tx_lo, tx_hi);
		lanes(j, IBW_MOD_TX_BIAS, f->bias_lo_al, f->bias_hi_al,
		      f->bias_lo_war, f->bias_hi_war, i->bias_ma, i->bias_lo_ma,
		      i->bias_hi_ma);
		if (f->temp & 3)
			find(j, 2, IBW_MOD_TEMPERATURE, f->temp & 1, -1,
			     i->temp_c,
			     f->temp & 1 ? i->temp_hi_c : i->temp_lo_c);
		if (f->vcc & 3)
			find(j, 2, IBW_MOD_VOLTAGE, f->vcc & 1, -1, i->volt_v,
			     f->vcc & 1 ? i->volt_hi_v : i->volt_lo_v);
		if (f->temp & 12)
			find(j, 1, IBW_MOD_TEMPERATURE, f->temp >> 2 & 1, -1,
			     i->temp_c,
			     f->temp & 4 ? i->temp_hi_c : i->temp_lo_c);
		if (f->vcc & 12)
			find(j, 1, IBW_MOD_VOLTAGE, f->vcc >> 2 & 1, -1,
			     i->volt_v,
			     f->vcc & 4 ? i->volt_hi_v : i->volt_lo_v);
	}
	/* the values against the alarm thresholds (0: none given) */
	for (l = 0; l < IBW_MODULE_LANES; l++) {
		if (i->rx_lo_uw && i->rx_uw[l] && i->rx_uw[l] < i->rx_lo_uw)
			find(j, 2, IBW_MOD_RX_POWER, 0, l, rx[l], rx_lo);
		if (i->rx_hi_uw && i->rx_uw[l] > i->rx_hi_uw)
			find(j, 2, IBW_MOD_RX_POWER, 1, l, rx[l], rx_hi);
	}
	if (i->temp_hi_c > 0 && i->temp_c >= i->temp_hi_c)
		find(j, 2, IBW_MOD_TEMPERATURE, 1, -1, i->temp_c, i->temp_hi_c);
}

/* The sweep's nodes become the view's (no copy: between sweeps there is
 * one set, the last view's; a sweep works on a copy of it). */
static struct ibw_hw_view *make_view(struct ibw_hw *h)
{
	struct ibw_hw_view *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->refs = 1;
	v->taken_us = ibw_realtime_us();
	v->sweeps = h->sweeps;
	v->interval_us = h->o.interval_us;
	v->duration_us = h->sweeps ? ibw_now_us() - h->t0_us : 0;
	v->mads = h->mads;
	v->timeouts = h->timeouts;
	v->sweep_mads = h->sweep_mads;
	v->sweep_timeouts = h->sweep_timeouts;
	v->nodes = h->nodes;
	v->nnodes = h->nnodes;
	h->nodes = NULL;
	h->nnodes = 0;
	return v;
}

/* A sweep's working copy of the last view's nodes. */
static int take_nodes(struct ibw_hw *h)
{
	const struct ibw_hw_view *v = h->last;
	unsigned i;

	if (h->nodes || !v || !v->nnodes)
		return 0;
	if (!(h->nodes = calloc(v->nnodes, sizeof(*h->nodes))))
		return -ENOMEM;
	for (i = 0; i < v->nnodes; i++) {
		if (node_copy(&h->nodes[i], &v->nodes[i]) < 0) {
			while (i--)
				node_free(&h->nodes[i]);
			free(h->nodes);
			h->nodes = NULL;
			return -ENOMEM;
		}
	}
	h->nnodes = v->nnodes;
	return 0;
}

/* ---- events ---- */

static void event(struct ibw_hw *h, const struct ibw_hw_node *n,
		  const char *what, unsigned idx, int bad, const char *detail)
{
	struct ibw_event e;

	if (!h->ev)
		return;
	memset(&e, 0, sizeof(e));
	e.kind = IBW_EVT_HW_HEALTH;
	e.node_guid = n->guid;
	e.old_value = !bad;
	e.new_value = bad;
	e.port = (uint8_t)idx;
	snprintf(e.what, sizeof(e.what), "%s", what);
	snprintf(e.detail, sizeof(e.detail), "%s", detail);
	ibw_events_add(h->ev, &e);
}

/* After a sweep: what changed against the view before, as events. */
static void judge(struct ibw_hw *h, struct ibw_hw_node *n)
{
	const struct ibw_hw_node *o = ibw_hw_view_find(h->last, n->guid);
	char d[160];
	unsigned i, j;

	for (i = 0; i < n->nsensors; i++) {
		struct ibw_hw_sensor *s = &n->sensors[i];
		int was = 0;

		for (j = 0; o && j < o->nsensors; j++)
			if (o->sensors[j].index == s->index)
				was = o->sensors[j].hot;
		/* not read this sweep: as it was, no change */
		s->hot = s->have ? s->hi_c > 0 && s->temp_c >= s->hi_c : was;
		if (s->hot == was)
			continue;
		snprintf(d, sizeof(d),
			 "sensor %u (%s): %.3f C, threshold %.3f C", s->index,
			 s->name, s->temp_c, s->hi_c);
		event(h, n, "temperature", s->index, s->hot, d);
	}
	for (i = 0; i < n->nfans; i++) {
		struct ibw_hw_fanv *f = &n->fans[i];
		int was = 0;

		for (j = 0; o && j < o->nfans; j++)
			if (o->fans[j].tacho == f->tacho)
				was = o->fans[j].failed;
		f->failed = !f->have ? was
				     : f->rpm == 0 ||
					       (f->have_limits && f->min_rpm &&
						f->rpm < f->min_rpm);
		if (f->failed == was)
			continue;
		snprintf(d, sizeof(d), "fan %u: %u rpm, low limit %u", f->tacho,
			 f->rpm, f->min_rpm);
		event(h, n, "fan", f->tacho, f->failed, d);
	}
	for (i = 0; n->have_psus && i < IBW_HW_PSUS; i++) {
		const struct ibw_hw_psu *p = &n->psus[i];
		int was = o && o->have_psus ? o->psu_failed[i] : 0;

		n->psu_failed[i] = !p->present || !p->dc_ok ||
				   (p->fan != 2 && p->fan != 3);
		if (n->psu_failed[i] == was)
			continue;
		snprintf(d, sizeof(d), "power supply %u: %s, DC %s, fan %s", i,
			 p->present ? "present" : "absent",
			 p->dc_ok ? "ok" : "failed",
			 p->fan == 2   ? "ok"
			 : p->fan == 3 ? "none"
				       : "failed");
		event(h, n, "power_supply", i, n->psu_failed[i], d);
	}
}

/* ---- the sweep ---- */

static void sweep_end(struct ibw_hw *h)
{
	struct ibw_hw_view *v;
	unsigned i;

	for (i = 0; i < h->nnodes; i++) {
		struct ibw_hw_node *n = &h->nodes[i];
		unsigned k;

		if (n->state != IBW_HW_OK)
			continue;
		judge(h, n);
		for (k = 0; k < n->nmodules; k++)
			judge_module(&n->modules[k]);
	}
	h->running = 0;
	v = make_view(h);
	if (!v) {
		log_err("hardware", "out of memory: sweep not published");
		return;
	}
	log_debug("hardware",
		  "sweep %" PRIu64 ": %u nodes, %" PRIu64 " MADs, %" PRIu64
		  " timeouts, %.3f s",
		  h->sweeps, v->nnodes, h->sweep_mads, h->sweep_timeouts,
		  (double)v->duration_us / 1e6);
	ibw_hw_view_unref(h->last);
	h->last = v;
	if (h->done)
		h->done(v, h->arg);
}

static void ask(struct ibw_hw *h, unsigned node, enum ask what, unsigned idx);

static void on_answer(const struct ibw_mad_done *d, void *arg);
static void destroy(struct ibw_hw *h);

static void submit(struct ibw_hw *h, struct q *q, uint16_t attr, uint32_t mod,
		   const uint8_t *data, size_t len, int retries)
{
	struct ibw_hw_node *n = &h->nodes[q->node];
	struct ibw_mad_req r;

	memset(&r, 0, sizeof(r));
	ibw_dest_lid(&r.dest, n->lid);
	r.mgmt_class = IBW_CLASS_VS_A;
	r.method = IBW_METHOD_GET;
	r.attr_id = attr;
	r.attr_mod = mod;
	r.data = data;
	r.data_len = len;
	r.retries = retries;
	r.cb = on_answer;
	r.arg = q;
	if (ibw_engine_submit(h->e, &r) < 0) {
		free(q);
		n->sweep_errors++;
		return;
	}
	h->outstanding++;
}

static void send_one(struct ibw_hw *h, unsigned node, enum ask what,
		     unsigned idx);

/* Ask now, or when fewer are out (the order kept). */
static void ask(struct ibw_hw *h, unsigned node, enum ask what, unsigned idx)
{
	struct pend *p;

	if (what != A_PROBE && (h->nodes[node].missing & regs[what].bit))
		return;
	if (h->outstanding < IBW_HW_MAX_SUBMITTED && !h->npend) {
		send_one(h, node, what, idx);
		return;
	}
	if (h->pend_head + h->npend == h->pend_cap) {
		size_t cap = h->pend_cap ? 2 * h->pend_cap : 1024;

		if (h->pend_head) { /* the taken ones' room first */
			memmove(h->pend, h->pend + h->pend_head,
				h->npend * sizeof(*h->pend));
			h->pend_head = 0;
		} else if ((p = realloc(h->pend, cap * sizeof(*p)))) {
			h->pend = p;
			h->pend_cap = cap;
		} else {
			h->nodes[node].sweep_errors++;
			return;
		}
	}
	p = &h->pend[h->pend_head + h->npend++];
	p->node = node;
	p->what = (uint8_t)what;
	p->idx = (uint8_t)idx;
}

/* Submit what waits while there is room. */
static void refill(struct ibw_hw *h)
{
	while (h->npend && h->outstanding < IBW_HW_MAX_SUBMITTED) {
		struct pend p = h->pend[h->pend_head++];

		h->npend--;
		send_one(h, p.node, (enum ask)p.what, p.idx);
	}
	if (!h->npend)
		h->pend_head = 0;
}

static void send_one(struct ibw_hw *h, unsigned node, enum ask what,
		     unsigned idx)
{
	struct ibw_hw_node *n = &h->nodes[node];
	uint8_t data[IBW_GMP_REG_OFF + IBW_GMP_BLOCK];
	struct q *q;

	if (!(q = calloc(1, sizeof(*q)))) {
		n->sweep_errors++;
		return;
	}
	q->h = h;
	q->node = node;
	q->what = what;
	q->idx = idx;
	memset(data, 0, sizeof(data));
	/* data[0..7]: the VS_Key, 0 (docs/hardware.md) */
	if (what == A_PROBE) {
		submit(h, q, IBW_VS_ATTR_GENERAL_INFO, 0, data,
		       IBW_GMP_REG_OFF + IBW_GMP_BLOCK, 0);
		return;
	}
	/* block 0: the dword after the key stays 0 */
	if (what == A_MTMP)
		ibw_hwreg_ask_mtmp(data + IBW_GMP_REG_OFF, IBW_GMP_BLOCK, idx);
	else if (what == A_MFSM || what == A_MFSL)
		ibw_hwreg_ask_tacho(data + IBW_GMP_REG_OFF, IBW_GMP_BLOCK, idx);
	else if (what == A_PDDR_INFO || what == A_PDDR_FLAGS)
		ibw_hwreg_ask_pddr(data + IBW_GMP_REG_OFF, IBW_GMP_BLOCK,
				   n->modules[idx].port,
				   what == A_PDDR_INFO ? IBW_PDDR_MODULE_INFO
						       : IBW_PDDR_MODULE_FLAGS);
	submit(h, q, IBW_VS_ATTR_REG_GMP, regs[what].id, data,
	       IBW_GMP_REG_OFF + IBW_GMP_BLOCK, -1);
}

/* The registers of a device that serves them, this sweep: the inventory
 * until it is read, the rest every time. */
static void ask_regs(struct ibw_hw *h, unsigned i)
{
	struct ibw_hw_node *n = &h->nodes[i];
	unsigned k;

	ask(h, i, A_MGIR, 0);
	if (!(n->inv & IBW_HWR_MSGI))
		ask(h, i, A_MSGI, 0);
	if (!(n->inv & IBW_HWR_MTCAP))
		ask(h, i, A_MTCAP, 0); /* its answer asks the sensors */
	else
		for (k = 0; k < n->nsensors; k++)
			ask(h, i, A_MTMP, n->sensors[k].index);
	if (n->is_switch && !(n->inv & IBW_HWR_MFCR)) {
		ask(h, i, A_MFCR, 0); /* its answer asks the fans */
	} else {
		for (k = 0; k < n->nfans; k++) {
			if (!n->fans[k].have_limits)
				ask(h, i, A_MFSL, n->fans[k].tacho);
			ask(h, i, A_MFSM, n->fans[k].tacho);
		}
	}
	if (n->is_switch)
		ask(h, i, A_MSPS, 0);
	for (k = 0; k < n->nmodules; k++) {
		ask(h, i, A_PDDR_INFO, k);
		ask(h, i, A_PDDR_FLAGS, k);
	}
}

/* Before a sweep: nothing read yet (a read that fails then shows
 * nothing, not the last sweep's values). */
static void unread(struct ibw_hw_node *n)
{
	unsigned k;

	n->have_mgir = n->have_psus = 0;
	for (k = 0; k < n->nsensors; k++)
		n->sensors[k].have = 0;
	for (k = 0; k < n->nfans; k++)
		n->fans[k].have = 0;
	for (k = 0; k < n->nmodules; k++)
		n->modules[k].have_info = n->modules[k].have_flags = 0;
}

static struct ibw_hw_sensor *sensor_of(struct ibw_hw_node *n, unsigned index)
{
	unsigned i;

	for (i = 0; i < n->nsensors; i++)
		if (n->sensors[i].index == index)
			return &n->sensors[i];
	return NULL;
}

static struct ibw_hw_fanv *fan_of(struct ibw_hw_node *n, unsigned tacho)
{
	unsigned i;

	for (i = 0; i < n->nfans; i++)
		if (n->fans[i].tacho == tacho)
			return &n->fans[i];
	return NULL;
}

static void got_mtcap(struct ibw_hw *h, unsigned i, const uint8_t *r)
{
	struct ibw_hw_node *n = &h->nodes[i];
	struct ibw_hw_mtcap c;
	unsigned k, cnt = 0;

	if (ibw_hwreg_mtcap(r, IBW_GMP_BLOCK, &c) < 0)
		return;
	n->sensor_map = c.sensor_map;
	for (k = 0; k < IBW_HW_SENSOR_MAP; k++)
		cnt += (unsigned)(c.sensor_map >> k & 1);
	free(n->sensors);
	n->nsensors = 0;
	n->sensors = cnt ? calloc(cnt, sizeof(*n->sensors)) : NULL;
	if (!n->sensors)
		return;
	for (k = 0; k < IBW_HW_SENSOR_MAP; k++)
		if (c.sensor_map >> k & 1) {
			n->sensors[n->nsensors++].index = k;
			ask(h, i, A_MTMP, k);
		}
}

static void got_mfcr(struct ibw_hw *h, unsigned i, const uint8_t *r)
{
	struct ibw_hw_node *n = &h->nodes[i];
	unsigned k, cnt = 0;
	uint32_t t;

	if (ibw_hwreg_mfcr(r, IBW_GMP_BLOCK, &t) < 0)
		return;
	n->tachos = t;
	for (k = 0; k < IBW_HW_TACHOS; k++)
		cnt += t >> k & 1;
	free(n->fans);
	n->nfans = 0;
	n->fans = cnt ? calloc(cnt, sizeof(*n->fans)) : NULL;
	if (!n->fans)
		return;
	for (k = 0; k < IBW_HW_TACHOS; k++)
		if (t >> k & 1) {
			n->fans[n->nfans++].tacho = k;
			ask(h, i, A_MFSL, k);
			ask(h, i, A_MFSM, k);
		}
}

static void got(struct ibw_hw *h, struct q *q, const uint8_t *r)
{
	struct ibw_hw_node *n = &h->nodes[q->node];
	struct ibw_hw_sensor *s;
	struct ibw_hw_fanv *f;
	struct ibw_hw_mtmp t;

	switch (q->what) {
	case A_PROBE:
		break;
	case A_MGIR:
		if (ibw_hwreg_mgir(r, IBW_GMP_BLOCK, &n->mgir) == 0) {
			n->have_mgir = 1;
			n->mgir_us = ibw_realtime_us();
		}
		break;
	case A_MSGI:
		n->have_msgi = ibw_hwreg_msgi(r, IBW_GMP_BLOCK, &n->msgi) == 0;
		n->inv |= IBW_HWR_MSGI;
		break;
	case A_MTCAP:
		got_mtcap(h, q->node, r);
		n->inv |= IBW_HWR_MTCAP;
		break;
	case A_MTMP:
		if (ibw_hwreg_mtmp(r, IBW_GMP_BLOCK, &t) < 0 ||
		    !(s = sensor_of(n, q->idx)))
			break;
		memcpy(s->name, t.name, sizeof(s->name));
		s->have = 1;
		s->temp_c = t.temp / 8.0;
		s->max_c = t.max_temp / 8.0;
		s->hi_c = t.thr_hi / 8.0;
		s->lo_c = t.thr_lo / 8.0;
		break;
	case A_MFCR:
		got_mfcr(h, q->node, r);
		n->inv |= IBW_HWR_MFCR;
		break;
	case A_MFSM:
		if ((f = fan_of(n, q->idx)) &&
		    ibw_hwreg_mfsm(r, IBW_GMP_BLOCK, &f->rpm) == 0)
			f->have = 1;
		break;
	case A_MFSL:
		if ((f = fan_of(n, q->idx)) &&
		    ibw_hwreg_mfsl(r, IBW_GMP_BLOCK, &f->min_rpm,
				   &f->max_rpm) == 0)
			f->have_limits = 1;
		break;
	case A_MSPS:
		n->have_psus = ibw_hwreg_msps(r, IBW_GMP_BLOCK, n->psus) == 0;
		break;
	case A_PDDR_INFO:
		n->modules[q->idx].have_info =
			ibw_hwreg_pddr_info(r, IBW_GMP_BLOCK,
					    &n->modules[q->idx].info) == 0;
		break;
	case A_PDDR_FLAGS:
		n->modules[q->idx].have_flags =
			ibw_hwreg_pddr_flags(r, IBW_GMP_BLOCK,
					     &n->modules[q->idx].flags) == 0;
		break;
	}
}

static void on_answer(const struct ibw_mad_done *d, void *arg)
{
	struct q *q = arg;
	struct ibw_hw *h = q->h;
	struct ibw_hw_node *n = &h->nodes[q->node];
	const uint8_t *data = d->mad && d->len >= 256 ? d->mad + 24 : NULL;

	if (h->dying) {
		free(q);
		if (--h->outstanding == 0)
			destroy(h);
		return;
	}

	n->sweep_mads += d->tries;
	h->sweep_mads += d->tries;
	n->mads += d->tries;
	h->mads += d->tries;
	if (d->result == IBW_MAD_TIMEOUT) {
		n->sweep_timeouts++;
		n->timeouts++;
		h->sweep_timeouts++;
		h->timeouts++;
	}
	if (q->what == A_PROBE) {
		if (d->result == IBW_MAD_OK && data &&
		    ((uint32_t)data[IBW_GI_CAPMASK_OFF] << 24 |
		     (uint32_t)data[IBW_GI_CAPMASK_OFF + 1] << 16 |
		     (uint32_t)data[IBW_GI_CAPMASK_OFF + 2] << 8 |
		     data[IBW_GI_CAPMASK_OFF + 3]) &
			    IBW_GI_CAP_ACCESS_REG) {
			n->state = IBW_HW_OK;
			ask_regs(h, q->node);
		} else if (d->result == IBW_MAD_OK ||
			   d->result == IBW_MAD_STATUS) {
			n->state = IBW_HW_REFUSED;
		} else if (d->result == IBW_MAD_TIMEOUT) {
			n->state = IBW_HW_SILENT;
		}
	} else if (d->result == IBW_MAD_OK && data) {
		got(h, q, data + IBW_GMP_REG_OFF);
	} else if (d->result == IBW_MAD_STATUS &&
		   d->status == IBW_GMP_ST_BAD_PARAM &&
		   (q->what == A_MTMP || q->what == A_MFSM ||
		    q->what == A_MFSL || q->what == A_PDDR_INFO ||
		    q->what == A_PDDR_FLAGS)) {
		/* that sensor, fan or port has none: the item's, not the
		 * register's (a port without a module) */
		if (q->what == A_PDDR_INFO)
			n->modules[q->idx].have_info = 0;
		else if (q->what == A_PDDR_FLAGS)
			n->modules[q->idx].have_flags = 0;
	} else if (d->result == IBW_MAD_STATUS &&
		   (d->status == IBW_GMP_ST_REG_NOT_SUPP ||
		    d->status == IBW_GMP_ST_BAD_PARAM)) {
		n->missing |= regs[q->what].bit;
		n->inv |= regs[q->what].bit; /* nothing more to learn */
	} else if (d->result != IBW_MAD_TIMEOUT) {
		n->sweep_errors++;
	}
	n->sweep_us = ibw_now_us() - h->t0_us;
	free(q);
	h->outstanding--;
	refill(h);
	if (!h->outstanding && h->running)
		sweep_end(h);
}

/* The ports of @fn with their link up, each with its module as read
 * before (a port new to it: nothing yet). */
static int set_ports(struct ibw_hw_node *n, const struct ibw_fnode *fn)
{
	struct ibw_hw_module *m;
	unsigned p, k = 0;

	m = fn->nports ? calloc(fn->nports, sizeof(*m)) : NULL;
	if (fn->nports && !m)
		return -ENOMEM;
	for (p = 1; p < fn->nports; p++) {
		const struct ibw_fport *fp = &fn->ports[p];
		const struct ibw_hw_module *old;

		if (!fp->have_pi || fp->gone ||
		    fp->pi.phys_state != IBW_PHYS_LINKUP)
			continue;
		if ((old = ibw_hw_node_module(n, p)))
			m[k] = *old;
		else
			m[k].port = (uint8_t)p;
		k++;
	}
	free(n->modules);
	n->modules = m;
	n->nmodules = k;
	return 0;
}

/* The newest discovery's nodes, with what is known of those seen before;
 * refused and silent devices are asked again once. */
static int apply_fabric(struct ibw_hw *h)
{
	const struct ibw_fabric *f = h->fabric;
	struct ibw_hw_node *v, key;
	unsigned i, k = 0;

	v = f->nnodes ? calloc(f->nnodes, sizeof(*v)) : NULL;
	if (f->nnodes && !v)
		return -ENOMEM;
	for (i = 0; i < f->nnodes; i++) {
		const struct ibw_fnode *fn = &f->nodes[i];
		struct ibw_hw_node *old;

		if (fn->gone || !fn->lid)
			continue;
		key.guid = fn->guid;
		old = h->nnodes ? bsearch(&key, h->nodes, h->nnodes,
					  sizeof(key), by_guid)
				: NULL;
		if (old) {
			v[k] = *old;
			old->sensors = NULL;
			old->fans = NULL;
			old->modules = NULL;
			old->nsensors = old->nfans = old->nmodules = 0;
			if (v[k].state == IBW_HW_REFUSED ||
			    v[k].state == IBW_HW_SILENT)
				v[k].state = IBW_HW_NEW;
		} else {
			memset(&v[k], 0, sizeof(v[k]));
			v[k].guid = fn->guid;
		}
		if (set_ports(&v[k], fn) < 0) {
			node_free(&v[k]);
			for (i = 0; i < k; i++)
				node_free(&v[i]);
			free(v);
			return -ENOMEM;
		}
		v[k].lid = fn->lid;
		v[k].vendor_id = fn->ni.vendor_id;
		v[k].is_switch = fn->ni.node_type == IBW_NODE_SWITCH;
		if (v[k].vendor_id != IBW_HW_VENDOR_NVIDIA)
			v[k].state = IBW_HW_VENDOR;
		else if (v[k].state == IBW_HW_VENDOR)
			v[k].state = IBW_HW_NEW;
		k++;
	}
	for (i = 0; i < h->nnodes; i++)
		node_free(&h->nodes[i]);
	free(h->nodes);
	h->nodes = v;
	h->nnodes = k;
	qsort(h->nodes, h->nnodes, sizeof(*h->nodes), by_guid);
	h->fabric_new = 0;
	return 0;
}

int ibw_hw_sweep(struct ibw_hw *h)
{
	unsigned i;

	if (h->running)
		return -EBUSY;
	if (take_nodes(h) < 0 || (h->fabric_new && apply_fabric(h) < 0))
		return -ENOMEM;
	h->running = 1;
	h->sweeps++;
	h->t0_us = ibw_now_us();
	h->sweep_mads = h->sweep_timeouts = 0;
	h->outstanding = 1; /* until every node is asked */
	for (i = 0; i < h->nnodes; i++) {
		struct ibw_hw_node *n = &h->nodes[i];

		n->sweep_mads = n->sweep_timeouts = n->sweep_errors = 0;
		unread(n);
		if (n->state == IBW_HW_NEW)
			ask(h, i, A_PROBE, 0);
		else if (n->state == IBW_HW_OK)
			ask_regs(h, i);
	}
	h->outstanding--;
	refill(h);
	if (!h->outstanding)
		sweep_end(h);
	return 0;
}

static void on_timer(struct ibw_timer *t, void *arg)
{
	struct ibw_hw *h = arg;
	int rc = ibw_hw_sweep(h);

	if (rc < 0 && rc != -EBUSY)
		log_warn("hardware", "sweep not started: %s", strerror(-rc));
	ibw_timer_arm(t, h->o.interval_us);
}

void ibw_hw_set_fabric(struct ibw_hw *h, struct ibw_fabric *f)
{
	int first = !h->fabric;

	ibw_fabric_unref(h->fabric);
	h->fabric = ibw_fabric_ref(f);
	h->fabric_new = 1;
	if (first)
		ibw_timer_arm(h->timer, 0);
}

struct ibw_hw *ibw_hw_new(struct ibw_engine *e, struct ibw_loop *loop,
			  const struct ibw_hw_opts *o, struct ibw_events *ev,
			  void (*done)(struct ibw_hw_view *v, void *arg),
			  void *arg)
{
	struct ibw_hw *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->e = e;
	h->loop = loop;
	h->ev = ev;
	h->o = *o;
	if (!h->o.interval_us)
		h->o.interval_us = IBW_HW_INTERVAL_US;
	h->done = done;
	h->arg = arg;
	h->timer = ibw_timer_new(loop, on_timer, h);
	if (!h->timer) {
		free(h);
		return NULL;
	}
	return h;
}

static void destroy(struct ibw_hw *h)
{
	unsigned i;

	for (i = 0; i < h->nnodes; i++)
		node_free(&h->nodes[i]);
	free(h->nodes);
	ibw_hw_view_unref(h->last);
	ibw_fabric_unref(h->fabric);
	free(h->pend);
	free(h);
}

void ibw_hw_free(struct ibw_hw *h)
{
	if (!h)
		return;
	ibw_timer_free(h->timer);
	h->timer = NULL;
	if (h->outstanding) {
		/* its requests still come back, answered or cancelled */
		h->dying = 1;
		return;
	}
	destroy(h);
}
