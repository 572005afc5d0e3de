/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The link view (core/links.h) as JSON. Pure functions of a snapshot:
 * each returns a new reference the caller owns. docs/api.md has the
 * documents.
 */
#ifndef IBW_JSON_LINKS_H
#define IBW_JSON_LINKS_H

#include <jansson.h>
#include <stdint.h>

#include "events.h"
#include "jw.h"
#include "links.h"
#include "snapshot.h"

/* What /api/v1/links?health=&node=&type=&reason= keeps. */
struct ibw_link_filter {
	int health; /* -1 any, else enum ibw_link_health */
	int reason; /* -1 any, else enum ibw_link_reason the link has */
	int type; /* 0 any, 1 switch to switch, 2 with a CA at an end */
	uint64_t guid; /* 0 any, else a node at one end */
	const char *name; /* NULL any, else a node's name at one end */
	unsigned limit; /* 0 all, else the first that many that match */
};

int ibw_link_filter_match(const struct ibw_link *k,
			  const struct ibw_link_filter *f);

/* The names of the reasons in @mask, in enum order. */
json_t *ibw_json_link_reasons(uint32_t mask);
/* The same array written into @w. */
void ibw_jw_link_reasons(struct ibw_jw *w, uint32_t mask);
json_t *ibw_json_link(const struct ibw_link *k);
/* The cable @k's hour window period by period (/api/v1/history/...):
 * its two ends, then each 5-minute bucket, oldest first, with each end's
 * figures as the windows of ibw_json_link() count them, its transmit
 * rate and its FEC raw BER. */
json_t *ibw_json_link_history(const struct ibw_link *k,
			      const struct ibw_link_hist *h);
/* {"ok": n, "degraded": n, "failing": n, "down": n}; zeros for NULL. */
json_t *ibw_json_link_counts(const struct ibw_link_view *v);
/* {"taken", "counts", "links": [...]}: the links of @s matching @f
 * (NULL: all), worst first. */
json_t *ibw_json_links(const struct ibw_snapshot *s,
		       const struct ibw_link_filter *f);
/* The same document written into @w (json.h's writer), without the
 * tree: for the big fabrics' /api/v1/links and --once. */
void ibw_json_write_links(struct ibw_jw *w, const struct ibw_snapshot *s,
			  const struct ibw_link_filter *f);
/* The same a part at a time, as json.h's other part writers: from
 * *@pos on until @w holds @budget bytes; 1 done, 0 more to come, a
 * negative errno. */
int ibw_json_write_links_part(struct ibw_jw *w, const struct ibw_snapshot *s,
			      const struct ibw_link_filter *f, size_t *pos,
			      size_t budget);
/* The link with (@guid, @port) at either end, NULL if none. */
json_t *ibw_json_link_at(const struct ibw_snapshot *s, uint64_t guid,
			 unsigned port);
/* Add a link_health_changed event's own fields to its object @o. */
void ibw_json_link_event(json_t *o, const struct ibw_event *e);

/* "4711,4712" as ["4711", "4712"] ("" as []). */
json_t *ibw_json_id_list(const char *ids);

#endif
