// SPDX-License-Identifier: BSD-2-Clause
/*
 * /api/v1/map (core/fmap.h) as JSON, keys in strcmp() order as the other
 * documents: switches by level with their hosts as counts, and the
 * bundles of cables between switches. docs/api.md documents each field.
 */
#include <math.h>

#include "json_links.h"
#include "json_map.h"

static void health_counts(struct ibw_jw *w, const unsigned *count)
{
	/* "degraded" < "down" < "failing" < "ok" */
	static const enum ibw_link_health order[IBW_HEALTH_MAX] = {
		IBW_HEALTH_DEGRADED, IBW_HEALTH_DOWN, IBW_HEALTH_FAILING,
		IBW_HEALTH_OK
	};
	int i;

	ibw_jw_object(w);
	for (i = 0; i < IBW_HEALTH_MAX; i++) {
		ibw_jw_key(w, ibw_link_health_str(order[i]));
		ibw_jw_int(w, count[order[i]]);
	}
	ibw_jw_end(w);
}

static void switch_write(struct ibw_jw *w, const struct ibw_snapshot *s,
			 const struct ibw_fmap_switch *x)
{
	ibw_jw_object(w);
	ibw_jw_key(w, "guid");
	ibw_jw_guid(w, x->n->guid);
	ibw_jw_key(w, "health");
	ibw_jw_string(w, ibw_link_health_str(x->health));
	ibw_jw_key(w, "host_links");
	health_counts(w, x->host_links);
	ibw_jw_key(w, "hosts");
	ibw_jw_int(w, x->hosts);
	ibw_jw_key(w, "hosts_down");
	ibw_jw_int(w, x->hosts_down);
	ibw_jw_key(w, "level");
	ibw_jw_int(w, x->level);
	ibw_jw_key(w, "lid");
	ibw_jw_int(w, x->n->lid);
	ibw_jw_key(w, "name");
	ibw_jw_string(w, ibw_snapshot_node_name(s, x->n));
	ibw_jw_key(w, "ports");
	ibw_jw_int(w, x->n->nports ? x->n->nports - 1 : 0);
	ibw_jw_end(w);
}

void ibw_json_write_map(struct ibw_jw *w, const struct ibw_snapshot *s,
			const struct ibw_fmap *m)
{
	unsigned i;

	ibw_jw_object(w);
	ibw_jw_key(w, "bundles");
	ibw_jw_array(w);
	for (i = 0; i < m->nb; i++) {
		const struct ibw_fmap_bundle *b = &m->b[i];

		ibw_jw_object(w);
		ibw_jw_key(w, "a");
		ibw_jw_guid(w, m->sw[b->a].n->guid);
		ibw_jw_key(w, "b");
		ibw_jw_guid(w, m->sw[b->b].n->guid);
		ibw_jw_key(w, "cables");
		ibw_jw_int(w, b->cables);
		ibw_jw_key(w, "counts");
		health_counts(w, b->count);
		ibw_jw_key(w, "health");
		ibw_jw_string(w, ibw_link_health_str(b->health));
		ibw_jw_key(w, "reasons");
		ibw_jw_link_reasons(w, b->reasons);
		ibw_jw_key(w, "routes");
		if (b->routes >= 0)
			ibw_jw_u64(w, (uint64_t)b->routes);
		else
			ibw_jw_null(w);
		ibw_jw_key(w, "utilisation");
		ibw_jw_real_or_null(w, b->utilisation);
		ibw_jw_end(w);
	}
	ibw_jw_end(w);
	ibw_jw_key(w, "counts");
	ibw_jw_object(w);
	ibw_jw_key(w, "bundles");
	ibw_jw_int(w, m->nb);
	ibw_jw_key(w, "host_cables");
	ibw_jw_int(w, m->host_cables);
	ibw_jw_key(w, "hosts");
	ibw_jw_int(w, m->hosts);
	ibw_jw_key(w, "levels");
	ibw_jw_int(w, m->levels);
	ibw_jw_key(w, "switch_cables");
	ibw_jw_int(w, m->switch_cables);
	ibw_jw_key(w, "switches");
	ibw_jw_int(w, m->nsw);
	ibw_jw_end(w);
	ibw_jw_key(w, "switches");
	ibw_jw_array(w);
	for (i = 0; i < m->nsw; i++)
		switch_write(w, s, &m->sw[i]);
	ibw_jw_end(w);
	ibw_jw_key(w, "taken");
	ibw_jw_time(w, s->taken_us);
	ibw_jw_end(w);
}
