// SPDX-License-Identifier: BSD-2-Clause
/*
 * The link view (core/links.h) as JSON: /api/v1/links, one link, the
 * health counts of /api/v1/status and link health events. docs/api.md
 * documents every field.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_links.h"
#include "jobcache.h"

json_t *ibw_json_link_reasons(uint32_t mask)
{
	json_t *a = json_array();
	int r;

	for (r = 0; r < IBW_LR_MAX; r++)
		if (mask & IBW_LR_BIT(r))
			json_array_append_new(a,
					      json_string(ibw_link_reason_str((
						      enum ibw_link_reason)r)));
	return a;
}

/* A ratio or rate core gives as -1 when unknown: null then. */
/* a module's value to 0.01 of its unit, as it is shown */
static double round2(double v)
{
	return round(v * 100.0) / 100.0;
}

static json_t *maybe(double v)
{
	return v < 0 || !isfinite(v) ? json_null() : json_real(v);
}

/* PortInfo width bits as names, narrowest first. */
static json_t *widths(unsigned mask)
{
	static const unsigned order[] = { 1, 16, 2, 4, 8 };
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (mask & order[i])
			json_array_append_new(
				a, json_string(ibw_width_str(order[i])));
	return a;
}

static json_t *width(unsigned w)
{
	return w ? json_string(ibw_width_str(w)) : json_null();
}

static json_t *speed(unsigned s)
{
	return s != IBW_SPEED_UNKNOWN ? json_string(ibw_speed_name(s))
				      : json_null();
}

static json_t *speeds(unsigned set)
{
	json_t *a = json_array();
	int s;

	for (s = IBW_SPEED_SDR; s < IBW_SPEED_MAX; s++)
		if (set & IBW_SPEED_BIT(s))
			json_array_append_new(a, json_string(ibw_speed_name(
							 (enum ibw_speed)s)));
	return a;
}

static json_t *window(const struct ibw_link_win *w)
{
	json_t *o = json_object(), *e = json_object(), *ph = json_object();
	int k;

	for (k = 0; k < IBW_LERR_MAX; k++) {
		json_object_set_new(e, ibw_link_err_key(k),
				    ibw_json_u64(w->errors[k]));
		json_object_set_new(ph, ibw_link_err_key(k),
				    json_real(ibw_link_win_per_hour(w, k)));
	}
	json_object_set_new(o, "seconds", json_real(w->seconds));
	json_object_set_new(o, "errors", e);
	json_object_set_new(o, "errors_per_hour", ph);
	json_object_set_new(o, "ber", maybe(w->ber));
	json_object_set_new(o, "xmit_wait_ratio", maybe(w->xmit_wait_ratio));
	json_object_set_new(o, "utilisation", maybe(w->utilisation));
	json_object_set_new(o, "xmit_bytes", ibw_json_u64(w->xmit_bytes));
	json_object_set_new(o, "bits", ibw_json_u64(w->bits));
	return o;
}

static void fec_window_write(struct ibw_jw *w, const struct ibw_link_fec_win *x,
			     unsigned lanes)
{
	unsigned k;

	ibw_jw_object(w);
	ibw_jw_key(w, "bits");
	ibw_jw_u64(w, (uint64_t)llround(x->bits));
	ibw_jw_key(w, "corrected");
	ibw_jw_u64(w, (uint64_t)llround(x->corrected));
	ibw_jw_key(w, "effective");
	ibw_jw_u64(w, x->effective);
	ibw_jw_key(w, "effective_ber");
	ibw_jw_real_or_null(w, x->effective_ber);
	ibw_jw_key(w, "lane_corrected");
	ibw_jw_array(w);
	for (k = 0; k < lanes; k++)
		ibw_jw_u64(w, (uint64_t)llround(x->lane[k]));
	ibw_jw_end(w);
	ibw_jw_key(w, "lane_raw_ber");
	ibw_jw_array(w);
	for (k = 0; k < lanes; k++)
		ibw_jw_real_or_null(w, ibw_link_fec_lane_ber(x, lanes, k));
	ibw_jw_end(w);
	ibw_jw_key(w, "raw_ber");
	ibw_jw_real_or_null(w, x->raw_ber);
	ibw_jw_key(w, "seconds");
	ibw_jw_real(w, x->seconds);
	ibw_jw_key(w, "uncorrectable");
	ibw_jw_u64(w, x->uncorrectable);
	ibw_jw_end(w);
}

/* An end's "fec": null without FEC counters. Keys in strcmp() order, as
 * jansson sorts them. */
static void fec_write(struct ibw_jw *w, const struct ibw_link_fec *f)
{
	/* "125m" < "12m" < "24h" < "sweep" */
	static const enum ibw_fwin order[IBW_FWIN_MAX] = {
		IBW_FWIN_125M, IBW_FWIN_12M, IBW_FWIN_DAY, IBW_FWIN_SWEEP
	};
	int k;

	if (!f) {
		ibw_jw_null(w);
		return;
	}
	ibw_jw_object(w);
	ibw_jw_key(w, "bad_lane");
	if (f->bad_lane >= 0)
		ibw_jw_int(w, f->bad_lane);
	else
		ibw_jw_null(w);
	ibw_jw_key(w, "effective_state");
	ibw_jw_string(w, ibw_link_health_str(f->effective_state));
	ibw_jw_key(w, "lanes");
	ibw_jw_int(w, f->lanes);
	ibw_jw_key(w, "layout");
	ibw_jw_string(w, ibw_fec_layout_name(f->layout));
	ibw_jw_key(w, "raw_state");
	ibw_jw_string(w, ibw_link_health_str(f->raw_state));
	ibw_jw_key(w, "windows");
	ibw_jw_object(w);
	for (k = 0; k < IBW_FWIN_MAX; k++) {
		ibw_jw_key(w, ibw_fwin_name(order[k]));
		fec_window_write(w, &f->win[order[k]], f->lanes);
	}
	ibw_jw_end(w);
	ibw_jw_end(w);
}

/* The same as a jansson value (single links and events): written, then
 * read back, so the two forms cannot drift apart. */
static json_t *fec_json(const struct ibw_link_fec *f)
{
	struct ibw_jw w;
	json_t *v;
	char *txt;
	size_t len;

	if (!f)
		return json_null();
	ibw_jw_init(&w);
	fec_write(&w, f);
	txt = ibw_jw_finish(&w, &len);
	v = txt ? json_loadb(txt, len, 0, NULL) : NULL;
	free(txt);
	return v ? v : json_null();
}

/* Which BER judges the link: the FEC counters' where an end is judged
 * by them (FEC runs there and is read). */
static const char *ber_basis(const struct ibw_link *k)
{
	return k->end[0].by_fec || k->end[1].by_fec ? "fec" : "symbol_errors";
}

/* An end's FECModeActive by name, NULL when unknown. */
static const char *fec_mode(const struct ibw_link_end *x)
{
	if (!ibw_fec_mode_known(x->fec_mode_src))
		return NULL;
	return ibw_fec_mode_name(x->fec_mode);
}

static json_t *fec_active_json(const struct ibw_link_end *x)
{
	return x->fec_active < 0 ? json_null() : json_boolean(x->fec_active);
}

/* What the end's cable module says of itself (core/hw.h), null when it
 * says nothing (or none was read). */
static json_t *module_json(const struct ibw_link_module *m)
{
	char text[200];
	json_t *o;

	if (!m->level)
		return json_null();
	ibw_link_module_fmt(m, text, sizeof(text));
	o = json_object();
	json_object_set_new(o, "alarm_threshold",
			    isnan(m->threshold)
				    ? json_null()
				    : json_real(round2(m->threshold)));
	json_object_set_new(o, "high", json_boolean(m->high));
	json_object_set_new(o, "lane",
			    m->lane >= 0 ? json_integer(m->lane) : json_null());
	json_object_set_new(o, "level",
			    json_string(m->level == 2 ? "alarm" : "warning"));
	json_object_set_new(o, "text", json_string(text));
	json_object_set_new(o, "value", json_real(round2(m->value)));
	json_object_set_new(o, "what",
			    json_string(ibw_module_what_str(
				    (enum ibw_module_what)m->what)));
	return o;
}

static json_t *link_end(const struct ibw_link_end *x)
{
	static const char *const wname[IBW_LWIN_MAX] = { "sweep", "hour",
							 "day" };
	json_t *o = json_object(), *w = json_object(), *sat = json_array();
	int k;

	json_object_set_new(o, "guid", ibw_json_guid(x->guid));
	json_object_set_new(o, "name", json_string(x->name));
	json_object_set_new(
		o, "type",
		json_string(x->node_type == IBW_NODE_SWITCH ? "switch" : "ca"));
	json_object_set_new(o, "port", json_integer(x->port));
	json_object_set_new(o, "lid", json_integer(x->lid));
	json_object_set_new(o, "module", module_json(&x->module));
	json_object_set_new(o, "state",
			    json_string(ibw_port_state_str(x->state)));
	json_object_set_new(o, "phys_state",
			    json_string(ibw_phys_state_str(x->phys_state)));
	json_object_set_new(o, "width_active", width(x->sp.width_active));
	json_object_set_new(o, "width_enabled", widths(x->sp.width_enabled));
	json_object_set_new(o, "width_supported",
			    widths(x->sp.width_supported));
	json_object_set_new(o, "speed_active", speed(x->sp.speed_active));
	json_object_set_new(o, "speed_enabled", speeds(x->sp.speeds_enabled));
	json_object_set_new(o, "speed_supported",
			    speeds(x->sp.speeds_supported));
	json_object_set_new(o, "fec", fec_json(x->fec));
	json_object_set_new(o, "fec_active", fec_active_json(x));
	json_object_set_new(o, "fec_mode",
			    fec_mode(x) ? json_string(fec_mode(x))
					: json_null());
	json_object_set_new(o, "fec_mode_source",
			    json_string(ibw_fec_mode_src_name(
				    (enum ibw_fec_mode_src)x->fec_mode_src)));
	json_object_set_new(o, "judged_by",
			    json_string(x->by_fec ? "fec" : "symbol_errors"));
	json_object_set_new(o, "judged_why",
			    json_string(ibw_link_judge_why_str(
				    (enum ibw_link_judge_why)x->why)));
	json_object_set_new(o, "reasons", ibw_json_link_reasons(x->reasons));
	for (k = 0; k < IBW_LERR_MAX; k++)
		if (x->saturated & (1u << k))
			json_array_append_new(sat,
					      json_string(ibw_link_err_key(k)));
	if (x->saturated & IBW_LINK_SAT_XMIT_WAIT)
		json_array_append_new(sat, json_string("transmit_wait"));
	json_object_set_new(o, "saturated", sat);
	json_object_set_new(o, "tick_source",
			    json_string(x->tick >= 0 ? "read" : "assumed"));
	json_object_set_new(o, "tick",
			    x->tick >= 0 ? json_integer(x->tick) : json_null());
	json_object_set_new(o, "sample",
			    x->sample_us ? ibw_json_time(x->sample_us)
					 : json_null());
	for (k = 0; k < IBW_LWIN_MAX; k++)
		json_object_set_new(w, wname[k], window(&x->win[k]));
	json_object_set_new(o, "windows", w);
	if (x->vl_mask) {
		json_t *vl = json_object();
		char key[4];

		for (k = 0; k < 16; k++) {
			if (!(x->vl_mask & (1u << k)))
				continue;
			snprintf(key, sizeof(key), "%d", k);
			json_object_set_new(
				vl, key, json_real(x->vl_xmit_wait_ratio[k]));
		}
		json_object_set_new(o, "vl_xmit_wait_ratio", vl);
	}
	return o;
}

json_t *ibw_json_link(const struct ibw_link *k)
{
	json_t *o = json_object();

	json_object_set_new(o, "health",
			    json_string(ibw_link_health_str(k->health)));
	json_object_set_new(o, "reasons", ibw_json_link_reasons(k->reasons));
	json_object_set_new(o, "ends",
			    json_pack("[o, o]", link_end(&k->end[0]),
				      link_end(&k->end[1])));
	json_object_set_new(o, "width_active", width(k->width_active));
	json_object_set_new(o, "width_best", width(k->width_best));
	json_object_set_new(o, "speed_active", speed(k->speed_active));
	json_object_set_new(o, "speed_best", speed(k->speed_best));
	json_object_set_new(o, "signal_bps", json_real(k->signal_bps));
	json_object_set_new(o, "data_bps", json_real(k->data_bps));
	json_object_set_new(o, "ber", maybe(k->ber));
	json_object_set_new(o, "ber_basis", json_string(ber_basis(k)));
	json_object_set_new(o, "raw_ber", maybe(k->raw_ber));
	json_object_set_new(o, "effective_ber", maybe(k->effective_ber));
	json_object_set_new(o, "xmit_wait_ratio", maybe(k->xmit_wait_ratio));
	json_object_set_new(o, "seen",
			    k->seen_us ? ibw_json_time(k->seen_us)
				       : json_null());
	return o;
}

json_t *ibw_json_link_history(const struct ibw_link *k,
			      const struct ibw_link_hist *h)
{
	json_t *o = json_object(), *ends = json_array(), *bs = json_array();
	unsigned n;
	int i;

	for (i = 0; i < 2; i++) {
		json_t *e = json_object();

		json_object_set_new(e, "guid", ibw_json_guid(k->end[i].guid));
		json_object_set_new(e, "port", json_integer(k->end[i].port));
		json_object_set_new(e, "name", json_string(k->end[i].name));
		json_array_append_new(ends, e);
	}
	for (n = 0; n < IBW_LINK_HIST_N; n++) {
		json_t *b = json_object(), *be = json_array();

		json_object_set_new(b, "start",
				    ibw_json_time(h->start_us +
						  (uint64_t)n *
							  IBW_LINK_HIST_SLOT_S *
							  1000000u));
		for (i = 0; i < 2; i++) {
			const struct ibw_link_win *w = &h->b[n][i];
			json_t *x = window(w);

			json_object_set_new(
				x, "xmit_bytes_per_second",
				w->seconds > 0
					? json_real((double)w->xmit_bytes /
						    w->seconds)
					: json_null());
			json_object_set_new(x, "raw_ber",
					    maybe(h->raw_ber[n][i]));
			json_array_append_new(be, x);
		}
		json_object_set_new(b, "ends", be);
		json_array_append_new(bs, b);
	}
	json_object_set_new(o, "ends", ends);
	json_object_set_new(o, "bucket_seconds",
			    json_integer(IBW_LINK_HIST_SLOT_S));
	json_object_set_new(o, "buckets", bs);
	return o;
}

json_t *ibw_json_link_counts(const struct ibw_link_view *v)
{
	json_t *o = json_object();
	int h;

	for (h = 0; h < IBW_HEALTH_MAX; h++)
		json_object_set_new(o, ibw_link_health_str(h),
				    json_integer(v ? v->count[h] : 0));
	return o;
}

static int end_matches(const struct ibw_link_end *x,
		       const struct ibw_link_filter *f)
{
	if (f->guid && x->guid != f->guid)
		return 0;
	if (f->name && strcmp(x->name, f->name))
		return 0;
	return 1;
}

int ibw_link_filter_match(const struct ibw_link *k,
			  const struct ibw_link_filter *f)
{
	int sw0 = k->end[0].node_type == IBW_NODE_SWITCH;
	int sw1 = k->end[1].node_type == IBW_NODE_SWITCH;

	if (f->health >= 0 && k->health != (enum ibw_link_health)f->health)
		return 0;
	if (f->reason >= 0 && !(k->reasons & IBW_LR_BIT(f->reason)))
		return 0;
	if (f->type == 1 && !(sw0 && sw1))
		return 0;
	if (f->type == 2 && sw0 && sw1)
		return 0;
	if ((f->guid || f->name) && !end_matches(&k->end[0], f) &&
	    !end_matches(&k->end[1], f))
		return 0;
	return 1;
}

/* The running jobs whose routes cross @k (core/jobview.h), their ids
 * into @ids (room for v->n); the count. */
static unsigned link_jobs(const struct ibw_jobview *v, const struct ibw_link *k,
			  unsigned *ids)
{
	return v ? ibw_jobview_cable_jobs(v, k->end[0].guid, k->end[0].port,
					  k->end[1].guid, k->end[1].port, ids,
					  v->n)
		 : 0;
}

static json_t *jobs_json(const struct ibw_jobview *v, const struct ibw_link *k)
{
	json_t *a = json_array();
	unsigned *ids = v && v->n ? malloc(v->n * sizeof(*ids)) : NULL;
	unsigned n = ids ? link_jobs(v, k, ids) : 0, i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(v->jobs[ids[i]].job->id));
	free(ids);
	return a;
}

/* With a job source, the view of the snapshot's jobs (one reference,
 * from the monitor's cache); NULL without one. */
static struct ibw_jobview *jobs_of(const struct ibw_snapshot *s,
				   int *configured)
{
	*configured = s->jobs != NULL;
	return *configured ? ibw_jobcache_view(s) : NULL;
}

/* @o (a link) with "jobs" when @s has a job source. */
static json_t *with_jobs(json_t *o, const struct ibw_snapshot *s,
			 const struct ibw_link *k)
{
	int configured;
	struct ibw_jobview *jv = jobs_of(s, &configured);

	if (configured)
		json_object_set_new(o, "jobs", jobs_json(jv, k));
	ibw_jobview_unref(jv);
	return o;
}

json_t *ibw_json_links(const struct ibw_snapshot *s,
		       const struct ibw_link_filter *f)
{
	const struct ibw_link_view *v = s->links;
	json_t *o = json_object(), *a = json_array();
	size_t i, n = 0;

	for (i = 0; v && i < v->n; i++) {
		if (f && !ibw_link_filter_match(&v->links[i], f))
			continue;
		if (f && f->limit && n++ >= f->limit)
			break;
		json_array_append_new(a, with_jobs(ibw_json_link(&v->links[i]),
						   s, &v->links[i]));
	}
	json_object_set_new(o, "taken",
			    v ? ibw_json_time(v->taken_us) : json_null());
	json_object_set_new(o, "counts", ibw_json_link_counts(v));
	json_object_set_new(o, "links", a);
	return o;
}

/*
 * The writer's form of the above for /api/v1/links and --once, which
 * grow with the cables: the same bytes with no tree (json.h), members in
 * the order JSON_SORT_KEYS gives.
 */

/* ibw_link_err_key()s in strcmp() order, sorted once. */
static int err_order[IBW_LERR_MAX];
static pthread_once_t err_order_once = PTHREAD_ONCE_INIT;

static void err_order_init(void)
{
	int i, j, t;

	for (i = 0; i < IBW_LERR_MAX; i++)
		err_order[i] = i;
	for (i = 1; i < IBW_LERR_MAX; i++)
		for (j = i;
		     j > 0 && strcmp(ibw_link_err_key(err_order[j]),
				     ibw_link_err_key(err_order[j - 1])) < 0;
		     j--) {
			t = err_order[j];
			err_order[j] = err_order[j - 1];
			err_order[j - 1] = t;
		}
}

void ibw_jw_link_reasons(struct ibw_jw *w, uint32_t mask)
{
	int r;

	ibw_jw_array(w);
	for (r = 0; r < IBW_LR_MAX; r++)
		if (mask & IBW_LR_BIT(r))
			ibw_jw_string(w, ibw_link_reason_str(
						 (enum ibw_link_reason)r));
	ibw_jw_end(w);
}

static void widths_write(struct ibw_jw *w, unsigned mask)
{
	static const unsigned order[] = { 1, 16, 2, 4, 8 };
	size_t i;

	ibw_jw_array(w);
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (mask & order[i])
			ibw_jw_string(w, ibw_width_str(order[i]));
	ibw_jw_end(w);
}

static void width_write(struct ibw_jw *w, unsigned v)
{
	if (v)
		ibw_jw_string(w, ibw_width_str(v));
	else
		ibw_jw_null(w);
}

static void speed_write(struct ibw_jw *w, unsigned v)
{
	if (v != IBW_SPEED_UNKNOWN)
		ibw_jw_string(w, ibw_speed_name(v));
	else
		ibw_jw_null(w);
}

static void speeds_write(struct ibw_jw *w, unsigned set)
{
	int v;

	ibw_jw_array(w);
	for (v = IBW_SPEED_SDR; v < IBW_SPEED_MAX; v++)
		if (set & IBW_SPEED_BIT(v))
			ibw_jw_string(w, ibw_speed_name((enum ibw_speed)v));
	ibw_jw_end(w);
}

static void window_write(struct ibw_jw *w, const struct ibw_link_win *x)
{
	int k;

	ibw_jw_object(w);
	ibw_jw_key(w, "ber");
	ibw_jw_real_or_null(w, x->ber);
	ibw_jw_key(w, "bits");
	ibw_jw_u64(w, x->bits);
	ibw_jw_key(w, "errors");
	ibw_jw_object(w);
	for (k = 0; k < IBW_LERR_MAX; k++) {
		ibw_jw_key(w, ibw_link_err_key(err_order[k]));
		ibw_jw_u64(w, x->errors[err_order[k]]);
	}
	ibw_jw_end(w);
	ibw_jw_key(w, "errors_per_hour");
	ibw_jw_object(w);
	for (k = 0; k < IBW_LERR_MAX; k++) {
		ibw_jw_key(w, ibw_link_err_key(err_order[k]));
		ibw_jw_real(w, ibw_link_win_per_hour(x, err_order[k]));
	}
	ibw_jw_end(w);
	ibw_jw_key(w, "seconds");
	ibw_jw_real(w, x->seconds);
	ibw_jw_key(w, "utilisation");
	ibw_jw_real_or_null(w, x->utilisation);
	ibw_jw_key(w, "xmit_bytes");
	ibw_jw_u64(w, x->xmit_bytes);
	ibw_jw_key(w, "xmit_wait_ratio");
	ibw_jw_real_or_null(w, x->xmit_wait_ratio);
	ibw_jw_end(w);
}

static void module_write(struct ibw_jw *w, const struct ibw_link_module *m)
{
	char text[200];

	if (!m->level) {
		ibw_jw_null(w);
		return;
	}
	ibw_link_module_fmt(m, text, sizeof(text));
	ibw_jw_object(w);
	ibw_jw_key(w, "alarm_threshold");
	if (isnan(m->threshold))
		ibw_jw_null(w);
	else
		ibw_jw_real(w, round2(m->threshold));
	ibw_jw_key(w, "high");
	ibw_jw_bool(w, m->high);
	ibw_jw_key(w, "lane");
	if (m->lane >= 0)
		ibw_jw_int(w, m->lane);
	else
		ibw_jw_null(w);
	ibw_jw_key(w, "level");
	ibw_jw_string(w, m->level == 2 ? "alarm" : "warning");
	ibw_jw_key(w, "text");
	ibw_jw_string(w, text);
	ibw_jw_key(w, "value");
	ibw_jw_real(w, round2(m->value));
	ibw_jw_key(w, "what");
	ibw_jw_string(w, ibw_module_what_str((enum ibw_module_what)m->what));
	ibw_jw_end(w);
}

static void link_end_write(struct ibw_jw *w, const struct ibw_link_end *x)
{
	/* the VLs' keys "0".."15" in strcmp() order */
	static const int vl_order[16] = { 0, 1, 10, 11, 12, 13, 14, 15,
					  2, 3, 4,  5,	6,  7,	8,  9 };
	static const char *const vl_key[16] = { "0",  "1",  "2",  "3",
						"4",  "5",  "6",  "7",
						"8",  "9",  "10", "11",
						"12", "13", "14", "15" };
	int k;

	ibw_jw_object(w);
	ibw_jw_key(w, "fec");
	fec_write(w, x->fec);
	ibw_jw_key(w, "fec_active");
	if (x->fec_active < 0)
		ibw_jw_null(w);
	else
		ibw_jw_bool(w, x->fec_active);
	ibw_jw_key(w, "fec_mode");
	if (fec_mode(x))
		ibw_jw_string(w, fec_mode(x));
	else
		ibw_jw_null(w);
	ibw_jw_key(w, "fec_mode_source");
	ibw_jw_string(w, ibw_fec_mode_src_name(
				 (enum ibw_fec_mode_src)x->fec_mode_src));
	ibw_jw_key(w, "guid");
	ibw_jw_guid(w, x->guid);
	ibw_jw_key(w, "judged_by");
	ibw_jw_string(w, x->by_fec ? "fec" : "symbol_errors");
	ibw_jw_key(w, "judged_why");
	ibw_jw_string(w,
		      ibw_link_judge_why_str((enum ibw_link_judge_why)x->why));
	ibw_jw_key(w, "lid");
	ibw_jw_int(w, x->lid);
	ibw_jw_key(w, "module");
	module_write(w, &x->module);
	ibw_jw_key(w, "name");
	ibw_jw_string(w, x->name);
	ibw_jw_key(w, "phys_state");
	ibw_jw_string(w, ibw_phys_state_str(x->phys_state));
	ibw_jw_key(w, "port");
	ibw_jw_int(w, x->port);
	ibw_jw_key(w, "reasons");
	ibw_jw_link_reasons(w, x->reasons);
	ibw_jw_key(w, "sample");
	ibw_jw_time(w, x->sample_us);
	ibw_jw_key(w, "saturated");
	ibw_jw_array(w);
	for (k = 0; k < IBW_LERR_MAX; k++)
		if (x->saturated & (1u << k))
			ibw_jw_string(w, ibw_link_err_key(k));
	if (x->saturated & IBW_LINK_SAT_XMIT_WAIT)
		ibw_jw_string(w, "transmit_wait");
	ibw_jw_end(w);
	ibw_jw_key(w, "speed_active");
	speed_write(w, x->sp.speed_active);
	ibw_jw_key(w, "speed_enabled");
	speeds_write(w, x->sp.speeds_enabled);
	ibw_jw_key(w, "speed_supported");
	speeds_write(w, x->sp.speeds_supported);
	ibw_jw_key(w, "state");
	ibw_jw_string(w, ibw_port_state_str(x->state));
	ibw_jw_key(w, "tick");
	if (x->tick >= 0)
		ibw_jw_int(w, x->tick);
	else
		ibw_jw_null(w);
	ibw_jw_key(w, "tick_source");
	ibw_jw_string(w, x->tick >= 0 ? "read" : "assumed");
	ibw_jw_key(w, "type");
	ibw_jw_string(w, x->node_type == IBW_NODE_SWITCH ? "switch" : "ca");
	if (x->vl_mask) {
		ibw_jw_key(w, "vl_xmit_wait_ratio");
		ibw_jw_object(w);
		for (k = 0; k < 16; k++) {
			int vl = vl_order[k];

			if (!(x->vl_mask & (1u << vl)))
				continue;
			ibw_jw_key(w, vl_key[vl]);
			ibw_jw_real(w, x->vl_xmit_wait_ratio[vl]);
		}
		ibw_jw_end(w);
	}
	ibw_jw_key(w, "width_active");
	width_write(w, x->sp.width_active);
	ibw_jw_key(w, "width_enabled");
	widths_write(w, x->sp.width_enabled);
	ibw_jw_key(w, "width_supported");
	widths_write(w, x->sp.width_supported);
	ibw_jw_key(w, "windows");
	ibw_jw_object(w);
	ibw_jw_key(w, "day");
	window_write(w, &x->win[IBW_LWIN_DAY]);
	ibw_jw_key(w, "hour");
	window_write(w, &x->win[IBW_LWIN_HOUR]);
	ibw_jw_key(w, "sweep");
	window_write(w, &x->win[IBW_LWIN_SWEEP]);
	ibw_jw_end(w);
	ibw_jw_end(w);
}

/* ibw_json_link(@k), written; "jobs" when @configured. */
static void link_write(struct ibw_jw *w, const struct ibw_link *k,
		       int configured, const struct ibw_jobview *jv,
		       unsigned *ids)
{
	ibw_jw_object(w);
	ibw_jw_key(w, "ber");
	ibw_jw_real_or_null(w, k->ber);
	ibw_jw_key(w, "ber_basis");
	ibw_jw_string(w, ber_basis(k));
	ibw_jw_key(w, "data_bps");
	ibw_jw_real(w, k->data_bps);
	ibw_jw_key(w, "effective_ber");
	ibw_jw_real_or_null(w, k->effective_ber);
	ibw_jw_key(w, "ends");
	ibw_jw_array(w);
	link_end_write(w, &k->end[0]);
	link_end_write(w, &k->end[1]);
	ibw_jw_end(w);
	ibw_jw_key(w, "health");
	ibw_jw_string(w, ibw_link_health_str(k->health));
	if (configured) {
		unsigned i, n = ids ? link_jobs(jv, k, ids) : 0;

		ibw_jw_key(w, "jobs");
		ibw_jw_array(w);
		for (i = 0; i < n; i++)
			ibw_jw_string(w, jv->jobs[ids[i]].job->id);
		ibw_jw_end(w);
	}
	ibw_jw_key(w, "raw_ber");
	ibw_jw_real_or_null(w, k->raw_ber);
	ibw_jw_key(w, "reasons");
	ibw_jw_link_reasons(w, k->reasons);
	ibw_jw_key(w, "seen");
	ibw_jw_time(w, k->seen_us);
	ibw_jw_key(w, "signal_bps");
	ibw_jw_real(w, k->signal_bps);
	ibw_jw_key(w, "speed_active");
	speed_write(w, k->speed_active);
	ibw_jw_key(w, "speed_best");
	speed_write(w, k->speed_best);
	ibw_jw_key(w, "width_active");
	width_write(w, k->width_active);
	ibw_jw_key(w, "width_best");
	width_write(w, k->width_best);
	ibw_jw_key(w, "xmit_wait_ratio");
	ibw_jw_real_or_null(w, k->xmit_wait_ratio);
	ibw_jw_end(w);
}

void ibw_json_write_links(struct ibw_jw *w, const struct ibw_snapshot *s,
			  const struct ibw_link_filter *f)
{
	size_t pos = 0;

	ibw_json_write_links_part(w, s, f, &pos, SIZE_MAX);
}

/* A part writer's *pos once the closing is written (json.h). */
#define LINKS_DONE SIZE_MAX

int ibw_json_write_links_part(struct ibw_jw *w, const struct ibw_snapshot *s,
			      const struct ibw_link_filter *f, size_t *pos,
			      size_t budget)
{
	const struct ibw_link_view *v = s->links;
	size_t i, n = v ? v->n : 0, written = 0;
	int configured;
	struct ibw_jobview *jv;
	unsigned *ids;

	if (*pos == LINKS_DONE)
		return 1;
	pthread_once(&err_order_once, err_order_init);
	if (!*pos) {
		ibw_jw_object(w);
		ibw_jw_key(w, "counts");
		ibw_jw_value(w, ibw_json_link_counts(v));
		ibw_jw_key(w, "links");
		ibw_jw_array(w);
		*pos = 1;
	}
	if (w->err)
		return w->err;
	/* with a limit, the ones written before this part */
	for (i = 0; f && f->limit && i + 1 < *pos; i++)
		written += ibw_link_filter_match(&v->links[i], f);
	jv = jobs_of(s, &configured);
	ids = jv && jv->n ? malloc(jv->n * sizeof(*ids)) : NULL;
	for (i = *pos - 1; i < n; i++) {
		if (f && !ibw_link_filter_match(&v->links[i], f))
			continue;
		if (f && f->limit && written++ >= f->limit)
			break;
		if (w->err || w->len >= budget) {
			*pos = i + 1;
			free(ids);
			ibw_jobview_unref(jv);
			return w->err;
		}
		link_write(w, &v->links[i], configured, jv, ids);
	}
	free(ids);
	ibw_jobview_unref(jv);
	ibw_jw_end(w);
	ibw_jw_key(w, "taken");
	if (v)
		ibw_jw_time(w, v->taken_us);
	else
		ibw_jw_null(w);
	ibw_jw_end(w);
	*pos = LINKS_DONE;
	return w->err ? w->err : 1;
}

json_t *ibw_json_link_at(const struct ibw_snapshot *s, uint64_t guid,
			 unsigned port)
{
	const struct ibw_link *k;

	if (!s->links || port > 255)
		return NULL;
	k = ibw_link_view_find(s->links, guid, (uint8_t)port);
	return k ? with_jobs(ibw_json_link(k), s, k) : NULL;
}

void ibw_json_link_event(json_t *o, const struct ibw_event *e)
{
	const char *lanes;

	json_object_set_new(o, "peer_guid", ibw_json_guid(e->peer_guid));
	json_object_set_new(o, "peer_port", json_integer(e->peer_port));
	json_object_set_new(o, "old",
			    json_string(ibw_link_health_str(
				    (enum ibw_link_health)e->old_value)));
	json_object_set_new(o, "new",
			    json_string(ibw_link_health_str(
				    (enum ibw_link_health)e->new_value)));
	json_object_set_new(o, "old_reasons",
			    ibw_json_link_reasons(e->old_reasons));
	json_object_set_new(o, "reasons", ibw_json_link_reasons(e->reasons));
	/* core/monitor.c writes the bad lanes after "; " */
	lanes = strstr(e->detail, "; ");
	json_object_set_new(o, "bad_lanes",
			    lanes ? json_string(lanes + 2) : json_null());
	json_object_set_new(o, "affects", ibw_json_id_list(e->affects));
}

json_t *ibw_json_id_list(const char *ids)
{
	json_t *a = json_array();
	const char *p = ids;

	while (p && *p) {
		size_t n = strcspn(p, ",");

		json_array_append_new(a, json_stringn(p, n));
		p += n;
		if (*p == ',')
			p++;
	}
	return a;
}
