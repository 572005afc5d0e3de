// SPDX-License-Identifier: BSD-2-Clause
/*
 * A port's counters in JSON (the "counters" member of /api/v1/ports):
 * totals, raw readings, flags, rates, and the FEC counters where read;
 * as a jansson tree and written element by element, the same bytes.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

/* The FEC counters' names (libibmad's, perfquery -T's) in strcmp()
 * order, as JSON_SORT_KEYS puts them; sorted once. */
static int fec_order[IBW_FEC_NFIELDS];
static pthread_once_t fec_order_once = PTHREAD_ONCE_INIT;

static void fec_order_init(void)
{
	int i, j, t;

	for (i = 0; i < IBW_FEC_NFIELDS; i++)
		fec_order[i] = i;
	for (i = 1; i < IBW_FEC_NFIELDS; i++)
		for (j = i;
		     j > 0 && strcmp(ibw_fec_field_name(fec_order[j]),
				     ibw_fec_field_name(fec_order[j - 1])) < 0;
		     j--) {
			t = fec_order[j];
			fec_order[j] = fec_order[j - 1];
			fec_order[j - 1] = t;
		}
}

static const char *fec_fail_name(unsigned fail)
{
	return fail == IBW_CTR_FAIL_NONE      ? NULL
	       : fail == IBW_CTR_FAIL_TIMEOUT ? "timeout"
					      : "error";
}

/* "fec": the layout last read, each field's total and last reading by
 * its libibmad name, the resets seen, and why the last sweep could not
 * read them (null: it did). */
static json_t *fec_json(const struct ibw_port_ctrs *pc)
{
	const struct ibw_fec *f = pc->fec;
	json_t *o = json_object(), *tot = json_object(), *raw = json_object();
	const char *why = fec_fail_name(pc->fec_fail);
	int i;

	for (i = 0; i < IBW_FEC_NFIELDS; i++) {
		if (!(f->have >> i & 1))
			continue;
		json_object_set_new(tot, ibw_fec_field_name(i),
				    ibw_json_u64(f->total[i]));
		json_object_set_new(raw, ibw_fec_field_name(i),
				    ibw_json_u64(f->raw[i]));
	}
	json_object_set_new(o, "layout",
			    json_string(ibw_fec_layout_name(
				    (enum ibw_fec_layout)f->layout)));
	json_object_set_new(o, "totals", tot);
	json_object_set_new(o, "raw", raw);
	json_object_set_new(o, "resets", json_integer(f->resets));
	json_object_set_new(o, "error", why ? json_string(why) : json_null());
	return o;
}

static void fec_write(struct ibw_jw *w, const struct ibw_port_ctrs *pc)
{
	const struct ibw_fec *f = pc->fec;
	const char *why = fec_fail_name(pc->fec_fail);
	int i, k;

	pthread_once(&fec_order_once, fec_order_init);
	ibw_jw_object(w);
	ibw_jw_key(w, "error");
	if (why)
		ibw_jw_string(w, why);
	else
		ibw_jw_null(w);
	ibw_jw_key(w, "layout");
	ibw_jw_string(w, ibw_fec_layout_name((enum ibw_fec_layout)f->layout));
	ibw_jw_key(w, "raw");
	ibw_jw_object(w);
	for (k = 0; k < IBW_FEC_NFIELDS; k++) {
		i = fec_order[k];
		if (f->have >> i & 1) {
			ibw_jw_key(w, ibw_fec_field_name(i));
			ibw_jw_u64(w, f->raw[i]);
		}
	}
	ibw_jw_end(w);
	ibw_jw_key(w, "resets");
	ibw_jw_int(w, f->resets);
	ibw_jw_key(w, "totals");
	ibw_jw_object(w);
	for (k = 0; k < IBW_FEC_NFIELDS; k++) {
		i = fec_order[k];
		if (f->have >> i & 1) {
			ibw_jw_key(w, ibw_fec_field_name(i));
			ibw_jw_u64(w, f->total[i]);
		}
	}
	ibw_jw_end(w);
	ibw_jw_end(w);
}

json_t *ibw_json_counters(const struct ibw_port_ctrs *pc)
{
	json_t *o = json_object(), *tot = json_object(), *raw = json_object();
	json_t *sat = json_array(), *over = json_array(), *rates;
	int i;

	for (i = 0; i < IBW_CTR_MAX; i++) {
		const struct ibw_ctr_desc *d = ibw_ctr_desc(i);
		const struct ibw_ctr_val *v = &pc->v[i];

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
	if (pc->fec)
		json_object_set_new(o, "fec", fec_json(pc));
	json_object_set_new(o, "saturated", sat);
	json_object_set_new(o, "over_threshold", over);
	json_object_set_new(o, "rates", rates);
	json_object_set_new(o, "error_increments",
			    ibw_json_u64(pc->error_increments));
	json_object_set_new(o, "resets", json_integer(pc->resets));
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
		const struct ibw_ctr_val *v = &pc->v[i];

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
	ibw_jw_key(w, "discontinuity_time");
	ibw_jw_time(w, pc->discontinuity_us);
	ibw_jw_key(w, "error_increments");
	ibw_jw_u64(w, pc->error_increments);
	ibw_jw_key(w, "extended");
	ibw_jw_bool(w, pc->have_ext);
	if (pc->fec) {
		ibw_jw_key(w, "fec");
		fec_write(w, pc);
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

		if (r >= 0 && pc->v[r].have_raw) {
			ibw_jw_key(w, ibw_ctr_desc(r)->name);
			ibw_jw_u64(w, pc->v[r].raw);
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
		int c = o->totals[i];

		if (!pc->v[c].have_raw)
			continue;
		ibw_jw_key(w, ibw_ctr_desc(c)->key);
		ibw_jw_u64(w, pc->v[c].total);
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
