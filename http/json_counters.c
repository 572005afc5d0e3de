// SPDX-License-Identifier: BSD-2-Clause
/*
 * A port's counters in JSON (the "counters" member of /api/v1/ports):
 * totals, raw readings, flags, rates, and the FEC and congestion
 * counters where read;
 * as a jansson tree and written element by element, the same bytes.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "json_counters.h"

/*
 * A block of counters read from one attribute family, by libibmad's
 * (perfquery's) field names: the FEC counters ("fec") and the
 * congestion counters ("congestion"). Both are written the same way:
 * the layout where there is one, each field's total and last reading,
 * the readings in which a field went backwards, and why the last sweep
 * could not read them (null: it did).
 */
_Static_assert(IBW_CONG_NFIELDS >= IBW_FEC_NFIELDS, "a block's fields");

struct block {
	const char *layout; /* NULL: none */
	unsigned n;
	const int *order; /* the fields in strcmp() order of their names */
	const char *(*name)(unsigned i);
	uint8_t have[IBW_CONG_NFIELDS]; /* field i read (n entries) */
	const uint32_t *raw;
	const uint64_t *total;
	uint32_t resets;
	unsigned fail;
	uint32_t clears; /* our clears of them */
	int is_fec; /* has saturated (the FEC block) */
	uint64_t saturated; /* field i at its largest value */
};

/* @n names' order as JSON_SORT_KEYS puts them: insertion sort, once. */
static void name_order(int *order, unsigned n, const char *(*name)(unsigned))
{
	unsigned i, j;
	int t;

	for (i = 0; i < n; i++)
		order[i] = (int)i;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(name((unsigned)order[j]),
					    name((unsigned)order[j - 1])) < 0;
		     j--) {
			t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
}

static const char *fec_name(unsigned i)
{
	return ibw_fec_field_name((enum ibw_fec_field)i);
}

static int fec_order[IBW_FEC_NFIELDS], cong_order[IBW_CONG_NFIELDS];
static pthread_once_t order_once = PTHREAD_ONCE_INIT;

static void orders_init(void)
{
	name_order(fec_order, IBW_FEC_NFIELDS, fec_name);
	name_order(cong_order, IBW_CONG_NFIELDS, ibw_cong_field_name);
}

static void fec_block(struct block *b, const struct ibw_port_ctrs *pc)
{
	const struct ibw_fec *f = pc->fec;
	unsigned i;

	pthread_once(&order_once, orders_init);
	b->layout = ibw_fec_layout_name((enum ibw_fec_layout)f->layout);
	b->n = IBW_FEC_NFIELDS;
	b->order = fec_order;
	b->name = fec_name;
	for (i = 0; i < b->n; i++)
		b->have[i] = (uint8_t)(f->have >> i & 1);
	b->raw = f->raw;
	b->total = f->total;
	b->resets = f->resets;
	b->fail = pc->fec_fail;
	b->is_fec = 1;
	b->clears = pc->fec_clears;
	b->saturated = f->saturated;
}

static void cong_block(struct block *b, const struct ibw_port_ctrs *pc)
{
	const struct ibw_cong *g = pc->cong;
	unsigned i;

	pthread_once(&order_once, orders_init);
	b->layout = NULL;
	b->n = IBW_CONG_NFIELDS;
	b->order = cong_order;
	b->name = ibw_cong_field_name;
	for (i = 0; i < b->n; i++)
		b->have[i] = (uint8_t)(g->have >> ibw_cong_attr_of(i) & 1);
	b->raw = g->raw;
	b->total = g->total;
	b->resets = g->resets;
	b->fail = pc->cong_fail;
	b->clears = pc->cong_clears;
	b->is_fec = 0;
}

static const char *fail_name(unsigned fail)
{
	return fail == IBW_CTR_FAIL_NONE      ? NULL
	       : fail == IBW_CTR_FAIL_TIMEOUT ? "timeout"
					      : "error";
}

static json_t *block_json(const struct block *b)
{
	json_t *o = json_object(), *tot = json_object(), *raw = json_object();
	const char *why = fail_name(b->fail);
	unsigned i;

	for (i = 0; i < b->n; i++) {
		if (!b->have[i])
			continue;
		json_object_set_new(tot, b->name(i), ibw_json_u64(b->total[i]));
		json_object_set_new(raw, b->name(i), ibw_json_u64(b->raw[i]));
	}
	if (b->layout)
		json_object_set_new(o, "layout", json_string(b->layout));
	json_object_set_new(o, "totals", tot);
	json_object_set_new(o, "raw", raw);
	json_object_set_new(o, "resets", json_integer(b->resets));
	json_object_set_new(o, "error", why ? json_string(why) : json_null());
	json_object_set_new(o, "clears", json_integer(b->clears));
	if (b->is_fec) {
		json_t *sat = json_array();

		for (i = 0; i < b->n; i++)
			if (b->have[i] && (b->saturated >> i & 1))
				json_array_append_new(sat,
						      json_string(b->name(i)));
		json_object_set_new(o, "saturated", sat);
	}
	return o;
}

/* One of a block's objects of fields, @total or raw readings. */
static void block_fields_write(struct ibw_jw *w, const struct block *b,
			       int total)
{
	unsigned k;

	ibw_jw_object(w);
	for (k = 0; k < b->n; k++) {
		unsigned i = (unsigned)b->order[k];

		if (!b->have[i])
			continue;
		ibw_jw_key(w, b->name(i));
		ibw_jw_u64(w, total ? b->total[i] : b->raw[i]);
	}
	ibw_jw_end(w);
}

static void block_write(struct ibw_jw *w, const struct block *b)
{
	const char *why = fail_name(b->fail);

	ibw_jw_object(w);
	ibw_jw_key(w, "clears");
	ibw_jw_int(w, b->clears);
	ibw_jw_key(w, "error");
	if (why)
		ibw_jw_string(w, why);
	else
		ibw_jw_null(w);
	if (b->layout) {
		ibw_jw_key(w, "layout");
		ibw_jw_string(w, b->layout);
	}
	ibw_jw_key(w, "raw");
	block_fields_write(w, b, 0);
	ibw_jw_key(w, "resets");
	ibw_jw_int(w, b->resets);
	if (b->is_fec) {
		unsigned k;

		ibw_jw_key(w, "saturated");
		ibw_jw_array(w);
		for (k = 0; k < b->n; k++) {
			unsigned i = (unsigned)b->order[k];

			if (b->have[i] && (b->saturated >> i & 1))
				ibw_jw_string(w, b->name(i));
		}
		ibw_jw_end(w);
	}
	ibw_jw_key(w, "totals");
	block_fields_write(w, b, 1);
	ibw_jw_end(w);
}

json_t *ibw_json_counters(const struct ibw_port_ctrs *pc)
{
	json_t *o = json_object(), *tot = json_object(), *raw = json_object();
	json_t *sat = json_array(), *over = json_array(), *rates;
	int i;

	for (i = 0; i < IBW_CTR_MAX; i++) {
		const struct ibw_ctr_desc *d = ibw_ctr_desc(i);
		const struct ibw_ctr_val *v = ibw_ctr_val(pc, (enum ibw_ctr)i);

		if (!v->have_raw)
			continue;
		json_object_set_new(tot, d->key, ibw_json_u64(v->total));
		json_object_set_new(raw, d->name, ibw_json_u64(v->raw));
		if (v->saturated)
			json_array_append_new(sat, json_string(d->key));
		if (v->over_threshold)
			json_array_append_new(over, json_string(d->key));
	}
	if (pc->have_vl) {
		json_t *vl = json_array();

		for (i = 0; i < 16; i++) {
			char name[32];

			snprintf(name, sizeof(name), "PortVLXmitWait%d", i);
			json_object_set_new(raw, name,
					    json_integer(pc->vl_raw[i]));
			json_array_append_new(
				vl, ibw_json_u64(pc->vl_xmit_wait[i]));
		}
		json_object_set_new(o, "vl_xmit_wait", vl);
	}
	rates = json_pack("{s:f, s:f, s:f, s:f}", "transmit_bytes_per_second",
			  pc->xmit_bytes_per_s, "receive_bytes_per_second",
			  pc->rcv_bytes_per_s, "transmit_packets_per_second",
			  pc->xmit_pkts_per_s, "receive_packets_per_second",
			  pc->rcv_pkts_per_s);
	json_object_set_new(o, "totals", tot);
	json_object_set_new(o, "raw", raw);
	json_object_set_new(o, "extended", json_boolean(pc->have_ext));
	if (pc->fec) {
		struct block b;

		fec_block(&b, pc);
		json_object_set_new(o, "fec", block_json(&b));
	}
	if (pc->cong) {
		struct block b;

		cong_block(&b, pc);
		json_object_set_new(o, "congestion", block_json(&b));
	}
	json_object_set_new(o, "saturated", sat);
	json_object_set_new(o, "over_threshold", over);
	json_object_set_new(o, "rates", rates);
	json_object_set_new(o, "error_increments",
			    ibw_json_u64(pc->error_increments));
	json_object_set_new(o, "resets", json_integer(pc->resets));
	json_object_set_new(o, "clears", json_integer(pc->clears));
	json_object_set_new(o, "discontinuity_time",
			    ibw_json_time(pc->discontinuity_us));
	json_object_set_new(o, "updated", ibw_json_time(pc->updated_us));
	json_object_set_new(o, "stale", json_boolean(pc->stale));
	json_object_set_new(o, "unreachable_sweeps",
			    json_integer(pc->unreachable));
	return o;
}

/*
 * The keys of "totals" and "raw" in strcmp() order, as JSON_SORT_KEYS
 * puts them: the counters' keys, and their names merged with
 * PortVLXmitWait0..15. Sorted once; the tables never change.
 */
struct ctr_order {
	int totals[IBW_CTR_MAX]; /* counter */
	int raw[IBW_CTR_MAX + 16]; /* counter, or -1 - VL */
	char vl_name[16][20];
};

static struct ctr_order ctr_order;
static pthread_once_t ctr_order_once = PTHREAD_ONCE_INIT;

static const char *raw_name(int r)
{
	return r >= 0 ? ibw_ctr_desc(r)->name : ctr_order.vl_name[-1 - r];
}

static void ctr_order_init(void)
{
	struct ctr_order *o = &ctr_order;
	int i, j, t;

	for (i = 0; i < 16; i++)
		snprintf(o->vl_name[i], sizeof(o->vl_name[i]),
			 "PortVLXmitWait%d", i);
	for (i = 0; i < IBW_CTR_MAX; i++)
		o->totals[i] = o->raw[i] = i;
	for (i = 0; i < 16; i++)
		o->raw[IBW_CTR_MAX + i] = -1 - i;
	/* insertion sorts of a few dozen names, once */
	for (i = 1; i < IBW_CTR_MAX; i++)
		for (j = i;
		     j > 0 && strcmp(ibw_ctr_desc(o->totals[j])->key,
				     ibw_ctr_desc(o->totals[j - 1])->key) < 0;
		     j--) {
			t = o->totals[j];
			o->totals[j] = o->totals[j - 1];
			o->totals[j - 1] = t;
		}
	for (i = 1; i < IBW_CTR_MAX + 16; i++)
		for (j = i; j > 0 && strcmp(raw_name(o->raw[j]),
					    raw_name(o->raw[j - 1])) < 0;
		     j--) {
			t = o->raw[j];
			o->raw[j] = o->raw[j - 1];
			o->raw[j - 1] = t;
		}
}

/* The keys of @pc's counters saturated (@over 0) or over their
 * threshold (@over 1), in counter order. */
static void ctr_flags_write(struct ibw_jw *w, const struct ibw_port_ctrs *pc,
			    int over)
{
	int i;

	ibw_jw_array(w);
	for (i = 0; i < IBW_CTR_MAX; i++) {
		const struct ibw_ctr_val *v = ibw_ctr_val(pc, (enum ibw_ctr)i);

		if (v->have_raw && (over ? v->over_threshold : v->saturated))
			ibw_jw_string(w, ibw_ctr_desc(i)->key);
	}
	ibw_jw_end(w);
}

/* ibw_json_counters(@pc), written. */
void ibw_json_write_counters(struct ibw_jw *w, const struct ibw_port_ctrs *pc)
{
	const struct ctr_order *o = &ctr_order;
	int i;

	pthread_once(&ctr_order_once, ctr_order_init);
	ibw_jw_object(w);
	ibw_jw_key(w, "clears");
	ibw_jw_int(w, pc->clears);
	if (pc->cong) {
		struct block b;

		cong_block(&b, pc);
		ibw_jw_key(w, "congestion");
		block_write(w, &b);
	}
	ibw_jw_key(w, "discontinuity_time");
	ibw_jw_time(w, pc->discontinuity_us);
	ibw_jw_key(w, "error_increments");
	ibw_jw_u64(w, pc->error_increments);
	ibw_jw_key(w, "extended");
	ibw_jw_bool(w, pc->have_ext);
	if (pc->fec) {
		struct block b;

		fec_block(&b, pc);
		ibw_jw_key(w, "fec");
		block_write(w, &b);
	}
	ibw_jw_key(w, "over_threshold");
	ctr_flags_write(w, pc, 1);
	/* json_pack() fails on a real that is not finite: no "rates". */
	if (isfinite(pc->rcv_bytes_per_s) && isfinite(pc->rcv_pkts_per_s) &&
	    isfinite(pc->xmit_bytes_per_s) && isfinite(pc->xmit_pkts_per_s)) {
		ibw_jw_key(w, "rates");
		ibw_jw_object(w);
		ibw_jw_key(w, "receive_bytes_per_second");
		ibw_jw_real(w, pc->rcv_bytes_per_s);
		ibw_jw_key(w, "receive_packets_per_second");
		ibw_jw_real(w, pc->rcv_pkts_per_s);
		ibw_jw_key(w, "transmit_bytes_per_second");
		ibw_jw_real(w, pc->xmit_bytes_per_s);
		ibw_jw_key(w, "transmit_packets_per_second");
		ibw_jw_real(w, pc->xmit_pkts_per_s);
		ibw_jw_end(w);
	}
	ibw_jw_key(w, "raw");
	ibw_jw_object(w);
	for (i = 0; i < IBW_CTR_MAX + 16; i++) {
		int r = o->raw[i];

		if (r >= 0 && ibw_ctr_val(pc, (enum ibw_ctr)r)->have_raw) {
			ibw_jw_key(w, ibw_ctr_desc(r)->name);
			ibw_jw_u64(w, ibw_ctr_val(pc, (enum ibw_ctr)r)->raw);
		} else if (r < 0 && pc->have_vl) {
			ibw_jw_key(w, o->vl_name[-1 - r]);
			ibw_jw_int(w, pc->vl_raw[-1 - r]);
		}
	}
	ibw_jw_end(w);
	ibw_jw_key(w, "resets");
	ibw_jw_int(w, pc->resets);
	ibw_jw_key(w, "saturated");
	ctr_flags_write(w, pc, 0);
	ibw_jw_key(w, "stale");
	ibw_jw_bool(w, pc->stale);
	ibw_jw_key(w, "totals");
	ibw_jw_object(w);
	for (i = 0; i < IBW_CTR_MAX; i++) {
		const struct ibw_ctr_val *v =
			ibw_ctr_val(pc, (enum ibw_ctr)o->totals[i]);

		if (!v->have_raw)
			continue;
		ibw_jw_key(w, ibw_ctr_desc(o->totals[i])->key);
		ibw_jw_u64(w, v->total);
	}
	ibw_jw_end(w);
	ibw_jw_key(w, "unreachable_sweeps");
	ibw_jw_int(w, pc->unreachable);
	ibw_jw_key(w, "updated");
	ibw_jw_time(w, pc->updated_us);
	if (pc->have_vl) {
		ibw_jw_key(w, "vl_xmit_wait");
		ibw_jw_array(w);
		for (i = 0; i < 16; i++)
			ibw_jw_u64(w, pc->vl_xmit_wait[i]);
		ibw_jw_end(w);
	}
	ibw_jw_end(w);
}
