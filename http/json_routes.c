// SPDX-License-Identifier: BSD-2-Clause
/*
 * The route census (core/census.h) as JSON: the summary of
 * /api/v1/routes, its broken pairs and one link's load, one pair's route,
 * and the census events' detail. docs/api.md documents every field.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "json_routes.h"

/* A status as a JSON key or value: snake_case ("no entry": "no_entry"). */
static json_t *status_json(enum ibw_route_status st)
{
	return json_string(ibw_route_status_key(st));
}

/* The display name of node @guid in @s, "" when the snapshot's fabric
 * does not have it (the census's fabric can be older). */
static const char *name(const struct ibw_snapshot *s, uint64_t guid)
{
	const struct ibw_fnode *n = s->fabric ? ibw_fabric_find(s->fabric, guid)
					      : NULL;

	return n ? ibw_snapshot_node_name(s, n) : "";
}

static json_t *real(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *tables(const struct ibw_census *c)
{
	const struct ibw_lft_stats *t = ibw_lft_set_stats(ibw_census_tables(c));

	return json_pack(
		"{s:o, s:i, s:i, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:f, s:o}",
		"read", ibw_json_time(t->start_us), "switches", t->switches,
		"fresh", t->fresh, "stale", t->stale, "missing", t->missing,
		"blocks", ibw_json_u64(t->blocks), "mads",
		ibw_json_u64(t->mads), "lid_fallbacks",
		ibw_json_u64(t->lid_fallbacks), "failed_blocks",
		ibw_json_u64(t->failed_blocks), "timeouts",
		ibw_json_u64(t->timeouts), "duration_ms",
		(double)t->duration_us / 1e3, "memory_bytes",
		ibw_json_u64(t->memory_bytes));
}

static json_t *summary(const struct ibw_census *c)
{
	const struct ibw_census_summary *cs = ibw_census_summary(c);
	json_t *by = json_object(), *hops = json_array(), *o;
	unsigned i;

	for (i = 0; i < IBW_ROUTE_STATUS_MAX; i++) {
		json_t *k = status_json((enum ibw_route_status)i);

		json_object_set_new(by, json_string_value(k),
				    ibw_json_u64(cs->by_status[i]));
		json_decref(k);
	}
	/* [hops, pairs] for each hop count that has routed pairs; the
	 * last bin also counts longer paths */
	for (i = 0; i < IBW_CENSUS_HOPS_HIST; i++)
		if (cs->hops_hist[i])
			json_array_append_new(
				hops,
				json_pack("[i, o]", i,
					  ibw_json_u64(cs->hops_hist[i])));
	o = json_pack("{s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:o, s:o, s:o}",
		      "sources", cs->sources, "dlids", cs->dlids, "switches",
		      cs->switches, "tables_missing", cs->tables_missing,
		      "tables_stale", cs->tables_stale, "pairs",
		      ibw_json_u64(cs->pairs), "routed",
		      ibw_json_u64(cs->routed), "unreachable",
		      ibw_json_u64(cs->unreachable), "looping",
		      ibw_json_u64(cs->looping), "non_minimal",
		      ibw_json_u64(cs->non_minimal));
	json_object_set_new(o, "by_status", by);
	json_object_set_new(o, "hops", hops);
	json_object_set_new(o, "max_hops", json_integer(cs->max_hops));
	json_object_set_new(o, "mean_hops", real(cs->mean_hops));
	json_object_set_new(o, "compute_ms",
			    json_real((double)cs->compute_us / 1e3));
	json_object_set_new(o, "memory_bytes", ibw_json_u64(cs->memory_bytes));
	return o;
}

static json_t *link_load(const struct ibw_snapshot *s,
			 const struct ibw_link_load *l)
{
	return json_pack("{s:o, s:s, s:i, s:o, s:s, s:i, s:i}", "node_guid",
			 ibw_json_guid(l->guid), "node_name", name(s, l->guid),
			 "port", l->port, "peer_guid",
			 ibw_json_guid(l->peer_guid), "peer_name",
			 name(s, l->peer_guid), "peer_port", l->peer_port,
			 "routes", l->routes);
}

static json_t *tier(const struct ibw_snapshot *s,
		    const struct ibw_tier_balance *t)
{
	json_t *o = json_pack("{s:i, s:i, s:i, s:i}", "tier", t->tier,
			      "switches", t->switches, "with_uplinks",
			      t->with_uplinks, "uplinks", t->uplinks);

	json_object_set_new(o, "max_mean", real(t->max_mean));
	json_object_set_new(o, "cv", real(t->cv));
	json_object_set_new(o, "mean_max_mean", real(t->mean_max_mean));
	json_object_set_new(o, "mean_cv", real(t->mean_cv));
	json_object_set_new(o, "worst_max_mean", real(t->worst_max_mean));
	if (t->worst_guid) {
		json_object_set_new(o, "worst_guid",
				    ibw_json_guid(t->worst_guid));
		json_object_set_new(o, "worst_name",
				    json_string(name(s, t->worst_guid)));
	} else {
		json_object_set_new(o, "worst_guid", json_null());
		json_object_set_new(o, "worst_name", json_null());
	}
	return o;
}

json_t *ibw_json_routes(const struct ibw_snapshot *s)
{
	const struct ibw_census *c = s->census;
	const struct ibw_link_load *top;
	const struct ibw_tier_balance *tiers;
	json_t *o = json_object(), *a;
	unsigned n, i;

	json_object_set_new(o, "tables", tables(c));
	json_object_set_new(o, "summary", summary(c));
	top = ibw_census_top_links(c, &n);
	a = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(a, link_load(s, &top[i]));
	json_object_set_new(o, "top_links", a);
	tiers = ibw_census_tiers(c, &n);
	a = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(a, tier(s, &tiers[i]));
	json_object_set_new(o, "tiers", a);
	return o;
}

static json_t *pair(const struct ibw_snapshot *s,
		    const struct ibw_route_pair *p)
{
	json_t *o = json_pack(
		"{s:o, s:s, s:i, s:i, s:o, s:s, s:i, s:i, s:o, s:i, s:i}",
		"src_guid", ibw_json_guid(p->src_guid), "src_name",
		name(s, p->src_guid), "src_port", p->src_port, "slid", p->slid,
		"dst_guid", ibw_json_guid(p->dst_guid), "dst_name",
		name(s, p->dst_guid), "dst_port", p->dst_port, "dlid", p->dlid,
		"status", status_json(p->status), "hops", p->hops, "min_hops",
		p->min_hops);

	if (p->status != IBW_ROUTE_OK && p->break_guid)
		json_object_set_new(o, "break",
				    json_pack("{s:o, s:s, s:i}", "node_guid",
					      ibw_json_guid(p->break_guid),
					      "node_name",
					      name(s, p->break_guid), "port",
					      p->break_port));
	else
		json_object_set_new(o, "break", json_null());
	return o;
}

json_t *ibw_json_routes_broken(const struct ibw_snapshot *s, uint64_t offset,
			       unsigned limit)
{
	struct ibw_route_pair *rows = NULL;
	uint64_t total = 0;
	unsigned n, i;
	json_t *a = json_array();

	if (limit && !(rows = calloc(limit, sizeof(*rows)))) {
		json_decref(a);
		return NULL; /* no answer rather than "none broken" */
	}
	n = ibw_census_pairs(s->census, IBW_CENSUS_SEL_BROKEN, offset, rows,
			     rows ? limit : 0, &total);
	for (i = 0; i < n; i++)
		json_array_append_new(a, pair(s, &rows[i]));
	free(rows);
	return json_pack("{s:o, s:o, s:i, s:o}", "total", ibw_json_u64(total),
			 "offset", ibw_json_u64(offset), "limit", limit,
			 "pairs", a);
}

json_t *ibw_json_routes_link(const struct ibw_snapshot *s, uint64_t guid,
			     unsigned port)
{
	struct ibw_link_load l;

	if (port > 255 ||
	    ibw_census_link_load(s->census, guid, (uint8_t)port, &l) < 0)
		return NULL;
	return json_pack("{s:o}", "link", link_load(s, &l));
}

json_t *ibw_json_route(const struct ibw_snapshot *s, uint16_t slid,
		       uint16_t dlid)
{
	struct ibw_census_route r;
	json_t *o;

	if (ibw_census_lookup(s->census, slid, dlid, &r) < 0)
		return NULL;
	o = json_pack("{s:i, s:i, s:o, s:i, s:i, s:b}", "slid", slid, "dlid",
		      dlid, "status", status_json(r.status), "hops", r.hops,
		      "min_hops", r.min_hops, "minimal", r.minimal);
	if (r.status != IBW_ROUTE_OK && r.break_guid)
		json_object_set_new(
			o, "break",
			json_pack("{s:o, s:s, s:i}", "node_guid",
				  ibw_json_guid(r.break_guid), "node_name",
				  name(s, r.break_guid), "port", r.break_port));
	else
		json_object_set_new(o, "break", json_null());
	json_object_set_new(o, "path", ibw_json_path(&r.path));
	json_object_set_new(
		o, "census_time",
		ibw_json_time(ibw_lft_set_stats(ibw_census_tables(s->census))
				      ->start_us));
	return o;
}

void ibw_json_route_event(json_t *o, const struct ibw_event *e)
{
	json_object_set_new(o, "old", ibw_json_u64(e->old_value));
	json_object_set_new(o, "new", ibw_json_u64(e->new_value));
	json_object_set_new(o, "detail", json_string(e->detail));
}
