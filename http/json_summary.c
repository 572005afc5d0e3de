// SPDX-License-Identifier: BSD-2-Clause
#include "json_summary.h"
#include "json.h"
#include "json_links.h"
#include "json_routes.h"

/* A link's end, as much as names it. */
static json_t *end_json(const struct ibw_link_end *e)
{
	return json_pack("{s:s, s:o, s:i, s:i}", "name", e->name, "guid",
			 ibw_json_guid(e->guid), "port", e->port, "lid",
			 e->lid);
}

/* The links that are not ok, worst first (the view's order). */
static json_t *unhealthy_links(const struct ibw_snapshot *s)
{
	const struct ibw_link_view *v = s ? s->links : NULL;
	json_t *o = json_object(), *a = json_array();
	unsigned bad = 0, h;
	size_t i;

	if (v) {
		for (h = 0; h < IBW_HEALTH_MAX; h++)
			if (h != IBW_HEALTH_OK)
				bad += v->count[h];
		for (i = 0;
		     i < v->n && json_array_size(a) < IBW_SUMMARY_LIST_MAX;
		     i++) {
			const struct ibw_link *k = &v->links[i];
			json_t *l;

			if (k->health == IBW_HEALTH_OK)
				continue;
			l = json_pack("{s:s, s:o, s:[o, o]}", "health",
				      ibw_link_health_str(k->health), "reasons",
				      ibw_json_link_reasons(k->reasons), "ends",
				      end_json(&k->end[0]),
				      end_json(&k->end[1]));
			json_object_set_new(l, "ber",
					    k->ber >= 0 ? json_real(k->ber)
							: json_null());
			json_object_set_new(
				l, "xmit_wait_ratio",
				k->xmit_wait_ratio >= 0
					? json_real(k->xmit_wait_ratio)
					: json_null());
			json_array_append_new(a, l);
		}
	}
	json_object_set_new(o, "count", json_integer(bad));
	json_object_set_new(o, "list", a);
	return o;
}

/* The endports that are not up: down, degraded, not yet known. */
static json_t *endports_not_up(const struct ibw_snapshot *s)
{
	json_t *o = json_object(), *a = json_array();
	const struct ibw_snapshot_endport *v;
	unsigned n = 0;

	if (s) {
		ibw_snapshot_foreach_endport(s, v) {
			const struct ibw_endport *ep = v->ep;

			if (ep->state == IBW_EP_UP)
				continue;
			n++;
			if (json_array_size(a) >= IBW_SUMMARY_LIST_MAX)
				continue;
			json_array_append_new(
				a, json_pack("{s:s, s:s, s:o, s:i, s:s, s:f}",
					     "name", ep->name, "state",
					     ibw_endport_state_str(ep->state),
					     "port_guid",
					     ibw_json_guid(ep->port_guid),
					     "lid", ep->lid, "reason",
					     ep->reason, "window_loss_percent",
					     v->window_loss_pct));
		}
	}
	json_object_set_new(o, "count", json_integer(n));
	json_object_set_new(o, "list", a);
	return o;
}

json_t *ibw_json_once_summary(const struct ibw_snapshot *s,
			      const struct ibw_engine_stats *st,
			      json_t *local_port, uint64_t now_us)
{
	json_t *o = json_object();

	json_object_set_new(o, "local_port", local_port);
	json_object_set_new(o, "status", ibw_json_status(s, st, now_us));
	json_object_set_new(o, "unhealthy_links", unhealthy_links(s));
	json_object_set_new(o, "endports_not_up", endports_not_up(s));
	/* The census needs every switch's forwarding table, which --once
	 * does not read; a running daemon serves /api/v1/routes. */
	json_object_set_new(o, "broken_routes",
			    s && s->census ? ibw_json_routes_broken(
						     s, 0, IBW_SUMMARY_LIST_MAX)
					   : json_null());
	json_object_set_new(
		o, "more",
		json_string("ibwatchd --once --full prints every document: "
			    "nodes, ports, links, endports, events, traces"));
	return o;
}
