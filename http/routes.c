// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "agentx_status.h"
#include "answer.h"
#include "codec.h"
#include "ibw_revision.h"
#include "ibw_version.h"
#include "json.h"
#include "json_events.h"
#include "json_hw.h"
#include "json_links.h"
#include "json_jobs.h"
#include "json_map.h"
#include "ui.h"
#include "json_routes.h"
#include "negotiate.h"
#include "probes.h"
#include "prom.h"
#include "query.h"
#include "routes.h"
#include "signin.h"

/* A streamed document's query, copied into its stream (stream.h): no
 * pointer, since the request's strings go with the request. */
union part_query {
	struct ibw_port_filter ports;
	struct {
		struct ibw_link_filter f; /* its name in @name */
		int has_name;
		char name[IBW_CACHE_KEY_MAX];
	} links;
};

/* Which of the route's pointers answers, and whether from the cache. */
enum route_cache {
	CACHE_NONE, /* serve() renders for each request */
	CACHE_ANSWER, /* the whole answer, once per snapshot and query:
		       * key() and render() on a miss */
	CACHE_PART, /* serve() takes the snapshot's part from the cache and
		     * adds what changes by the second (/metrics) */
};

struct ibw_route {
	const char *path;
	int prefix; /* @path and whatever follows it */
	unsigned methods; /* enum ibw_http_method bits */
	int token_always; /* else only with --http-token-everywhere */
	int open; /* never the token: the sign-in */
	int body; /* reads the request body (r->upload) */
	int loop; /* served on the loop's thread (ibw_route_on_loop) */
	enum route_cache cache;
	void (*serve)(struct ibw_hreq *r, struct ibw_snapshot *s);
	/* The cache key of @r's query, 0; or -1 with a problem set on @r.
	 * NULL: the path alone is the key. */
	int (*key)(struct ibw_hreq *r, char *key, size_t len);
	/* The answer of @r, written into @w (json.h's writer). NULL when
	 * @part writes it. */
	void (*render)(struct ibw_hreq *r, const struct ibw_snapshot *s,
		       struct ibw_jw *w);
	/* Or a part at a time: an answer too big for the cache is then
	 * streamed (serve_cached). @query, if any, reads @r's query (0,
	 * or -1 with a problem set on @r). */
	ibw_stream_part_fn part;
	int (*query)(struct ibw_hreq *r, union part_query *q);
	/* For the landing page: what it serves; a @prefix route's path
	 * as a pattern. NULL: not listed. */
	const char *about;
};

static const struct {
	const char *name;
	unsigned bit;
} methods[] = {
	{ MHD_HTTP_METHOD_GET, IBW_HTTP_GET },
	{ MHD_HTTP_METHOD_HEAD, IBW_HTTP_HEAD },
	{ MHD_HTTP_METHOD_POST, IBW_HTTP_POST },
};

/* The port filter of @r's query: 0, or -1 with a problem set on @r. */
static int ports_filter(struct ibw_hreq *r, struct ibw_port_filter *f)
{
	const char *type = ibw_hreq_arg(r, "type"),
		   *g = ibw_hreq_arg(r, "guid");
	const char *st = ibw_hreq_arg(r, "state"),
		   *e = ibw_hreq_arg(r, "errors");
	int i;

	f->type = 0;
	f->guid = 0;
	f->state = -1;
	f->errors = 0;
	/* json.h's own encoding of the node type, not NodeInfo's */
	if (type && !strcmp(type, "switch")) {
		f->type = 1;
	} else if (type && !strcmp(type, "ca")) {
		f->type = 2;
	} else if (type) {
		ibw_hreq_problem(r, 400, "type must be switch or ca");
		return -1;
	}
	if (g && ibw_parse_guid(g, &f->guid) < 0) {
		ibw_hreq_problem(r, 400,
				 "guid must be 0x followed by hex digits");
		return -1;
	}
	if (st) {
		for (i = IBW_PORT_DOWN; i <= IBW_PORT_ACTIVE; i++)
			if (!strcmp(st, ibw_port_state_str((unsigned)i)))
				f->state = i;
		if (f->state < 0) {
			ibw_hreq_problem(r, 400,
					 "state must be down, init, armed or "
					 "active");
			return -1;
		}
	}
	if (e && strcmp(e, "0") && strcmp(e, "1")) {
		ibw_hreq_problem(r, 400, "errors must be 0 or 1");
		return -1;
	}
	f->errors = e && !strcmp(e, "1");
	return 0;
}

static int ports_key(struct ibw_hreq *r, char *key, size_t len)
{
	struct ibw_port_filter f;

	if (ports_filter(r, &f) < 0)
		return -1;
	snprintf(key, len, "ports %d %" PRIx64 " %d %d", f.type, f.guid,
		 f.state, f.errors);
	return 0;
}

static int ports_query(struct ibw_hreq *r, union part_query *q)
{
	return ports_filter(r, &q->ports);
}

static int part_ports(struct ibw_jw *w, const struct ibw_snapshot *s,
		      const void *query, size_t *pos, size_t budget)
{
	const union part_query *q = query;

	return ibw_json_write_ports_part(w, s, &q->ports, pos, budget);
}

/* The link filter of @r's query: 0, or -1 with a problem set on @r.
 * The node is a GUID or a name; @f->name points into the query. */
static int links_filter(struct ibw_hreq *r, struct ibw_link_filter *f)
{
	const char *h = ibw_hreq_arg(r, "health"),
		   *rs = ibw_hreq_arg(r, "reason");
	const char *type = ibw_hreq_arg(r, "type"),
		   *node = ibw_hreq_arg(r, "node");

	memset(f, 0, sizeof(*f));
	f->health = h ? ibw_link_health_lookup(h) : -1;
	if (h && f->health < 0) {
		ibw_hreq_problem(r, 400,
				 "health must be ok, degraded, failing or "
				 "down");
		return -1;
	}
	f->reason = rs ? ibw_link_reason_lookup(rs) : -1;
	if (rs && f->reason < 0) {
		ibw_hreq_problem(r, 400, "no link health reason '%s'", rs);
		return -1;
	}
	if (type && !strcmp(type, "switch")) {
		f->type = 1;
	} else if (type && !strcmp(type, "ca")) {
		f->type = 2;
	} else if (type) {
		ibw_hreq_problem(r, 400, "type must be switch or ca");
		return -1;
	}
	if (node && !strncmp(node, "0x", 2)) {
		if (ibw_parse_guid(node, &f->guid) < 0) {
			ibw_hreq_problem(r, 400,
					 "node must be a GUID (0x...) or a "
					 "name");
			return -1;
		}
	} else if (node) {
		f->name = node;
	}
	if (ibw_hreq_arg(r, "limit")) {
		unsigned long lim;

		if (ibw_parse_num(ibw_hreq_arg(r, "limit"), 1000000, &lim) <
			    0 ||
		    !lim) {
			ibw_hreq_problem(r, 400, "limit must be 1 to 1000000");
			return -1;
		}
		f->limit = (unsigned)lim;
	}
	return 0;
}

static int links_key(struct ibw_hreq *r, char *key, size_t len)
{
	struct ibw_link_filter f;
	int n;

	if (links_filter(r, &f) < 0)
		return -1;
	n = snprintf(key, len, "links %d %d %d %" PRIx64 " %u %s", f.health,
		     f.reason, f.type, f.guid, f.limit, f.name ? f.name : "");
	if (n < 0 || (size_t)n >= len) {
		ibw_hreq_problem(r, 400, "node name too long");
		return -1;
	}
	return 0;
}

static int links_query(struct ibw_hreq *r, union part_query *q)
{
	struct ibw_link_filter *f = &q->links.f;

	if (links_filter(r, f) < 0)
		return -1;
	/* links_key() refused a name too long for a key */
	q->links.has_name = f->name != NULL;
	if (f->name)
		snprintf(q->links.name, sizeof(q->links.name), "%s", f->name);
	f->name = NULL;
	return 0;
}

/* The cables: as big as the port list, so streamed like it. */
static int part_links(struct ibw_jw *w, const struct ibw_snapshot *s,
		      const void *query, size_t *pos, size_t budget)
{
	const union part_query *q = query;
	struct ibw_link_filter f = q->links.f;

	f.name = q->links.has_name ? q->links.name : NULL;
	return ibw_json_write_links_part(w, s, &f, pos, budget);
}

/* The GUID and port of a path ROUTE/GUID/PORT: 0, or -1 with a 400
 * problem set on @r naming the route's form. */
static int link_path(struct ibw_hreq *r, uint64_t *guid, unsigned long *port)
{
	const char *rest = r->url + strlen(r->route->path);
	const char *slash = strchr(rest, '/');
	char g[40];

	if (slash && (size_t)(slash - rest) < sizeof(g)) {
		snprintf(g, sizeof(g), "%.*s", (int)(slash - rest), rest);
		if (ibw_parse_num(slash + 1, 255, port) == 0 &&
		    ibw_parse_guid(g, guid) == 0)
			return 0;
	}
	ibw_hreq_problem(r, 400,
			 "a link is named by a node GUID and port: %s0x.../N",
			 r->route->path);
	return -1;
}

/* /api/v1/links/GUID/PORT: the cable at that port, from either end. */
static void serve_link(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	uint64_t guid;
	unsigned long port;
	json_t *j;

	if (link_path(r, &guid, &port) < 0)
		return;
	if (!(j = ibw_json_link_at(s, guid, (unsigned)port)))
		ibw_hreq_problem(r, 404, "no link at 0x%016" PRIx64 " port %lu",
				 guid, port);
	else
		ibw_hreq_set_json(r, 200, j);
}

/* /api/v1/history/{guid}/{port}: the hour window of the cable at a port,
 * period by period, from the monitor's windows (the loop's). */
static void serve_history(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	struct ibw_link_hist h;
	struct ibw_link k;
	uint64_t guid;
	unsigned long port;

	(void)s;
	if (link_path(r, &guid, &port) < 0)
		return;
	if (ibw_monitor_link_history(r->ctx->m, guid, (unsigned)port, &k, &h) <
	    0)
		ibw_hreq_problem(r, 404, "no link at 0x%016" PRIx64 " port %lu",
				 guid, port);
	else
		ibw_hreq_set_json(r, 200, ibw_json_link_history(&k, &h));
}

#define ROUTES_LIMIT_DEFAULT 100
#define ROUTES_LIMIT_MAX 10000

/* The census answers, or a 503 says why not yet; 0 when it answers. */
static int need_census(struct ibw_hreq *r, const struct ibw_snapshot *s)
{
	if (s->census)
		return 0;
	ibw_hreq_problem(r, 503,
			 "no route census yet: the forwarding tables are "
			 "read after the first discovery (not with --once)");
	return -1;
}

/* /api/v1/routes: the census summary; ?broken=1 the broken pairs (paged
 * by ?limit= and ?offset=), ?link=GUID/PORT the routes leaving there. */
static void serve_routes(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	const char *b = ibw_hreq_arg(r, "broken"), *l = ibw_hreq_arg(r, "link");
	unsigned long limit = ROUTES_LIMIT_DEFAULT, offset = 0, port;
	const char *slash = l ? strchr(l, '/') : NULL;
	uint64_t guid;
	char g[40];
	json_t *j;

	if (b && strcmp(b, "0") && strcmp(b, "1")) {
		ibw_hreq_problem(r, 400, "broken must be 0 or 1");
		return;
	}
	if (ibw_hreq_arg(r, "limit") &&
	    ibw_parse_num(ibw_hreq_arg(r, "limit"), ROUTES_LIMIT_MAX, &limit) <
		    0) {
		ibw_hreq_problem(r, 400, "limit must be a number up to %d",
				 ROUTES_LIMIT_MAX);
		return;
	}
	if (ibw_hreq_arg(r, "offset") &&
	    ibw_parse_num(ibw_hreq_arg(r, "offset"), 0xffffffffUL, &offset) <
		    0) {
		ibw_hreq_problem(r, 400, "offset must be a number");
		return;
	}
	if (slash && (size_t)(slash - l) < sizeof(g))
		snprintf(g, sizeof(g), "%.*s", (int)(slash - l), l);
	else
		g[0] = '\0';
	if (l && (ibw_parse_guid(g, &guid) < 0 ||
		  ibw_parse_num(slash + 1, 255, &port) < 0)) {
		ibw_hreq_problem(r, 400,
				 "link is a node GUID and a port: "
				 "link=0x.../N");
		return;
	}
	if (need_census(r, s) < 0)
		return;
	if (l) {
		j = ibw_json_routes_link(s, guid, (unsigned)port);
		if (!j) {
			ibw_hreq_problem(r, 404,
					 "no link at 0x%016" PRIx64 " port %lu",
					 guid, port);
			return;
		}
	} else if (b && !strcmp(b, "1")) {
		j = ibw_json_routes_broken(s, offset, (unsigned)limit);
	} else {
		j = ibw_json_routes(s);
	}
	ibw_hreq_set_json(r, 200, j);
}

/* /api/v1/routes/SRC/DST: one pair's route from the census; each end a
 * LID, a GUID or a name, resolved as /api/v1/trace resolves them. */
static void serve_route(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	const char *rest = r->url + strlen(r->route->path);
	const char *slash = strchr(rest, '/');
	char src[256];
	uint16_t slid, dlid;
	json_t *j;

	if (!slash || slash == rest || !slash[1] ||
	    (size_t)(slash - rest) >= sizeof(src)) {
		ibw_hreq_problem(r, 400,
				 "a route is named by its two ends: "
				 "/api/v1/routes/SRC/DST (a LID, a GUID or a "
				 "name each)");
		return;
	}
	snprintf(src, sizeof(src), "%.*s", (int)(slash - rest), rest);
	if (!(slid = ibw_monitor_resolve(r->ctx->m, src))) {
		ibw_hreq_problem(r, 404, "unknown source '%s'", src);
		return;
	}
	if (!(dlid = ibw_monitor_resolve(r->ctx->m, slash + 1))) {
		ibw_hreq_problem(r, 404, "unknown destination '%s'", slash + 1);
		return;
	}
	if (need_census(r, s) < 0)
		return;
	j = ibw_json_route(s, slid, dlid);
	if (!j) {
		ibw_hreq_problem(r, 404,
				 "no port of the census's fabric has lid %u",
				 slid);
		return;
	}
	json_object_set_new(j, "source", json_string(src));
	json_object_set_new(j, "destination", json_string(slash + 1));
	ibw_hreq_set_json(r, 200, j);
}

static int part_nodes(struct ibw_jw *w, const struct ibw_snapshot *s,
		      const void *query, size_t *pos, size_t budget)
{
	return ibw_json_write_nodes_part(w, s, pos, budget);
}

static int part_endports(struct ibw_jw *w, const struct ibw_snapshot *s,
			 const void *query, size_t *pos, size_t budget)
{
	return ibw_json_write_endports_part(w, s, pos, budget);
}

static void render_map(struct ibw_hreq *r, const struct ibw_snapshot *s,
		       struct ibw_jw *w)
{
	struct ibw_fmap *m = ibw_fmap_build(s);

	(void)r;
	if (!m) {
		ibw_jw_value(w, json_null());
		return;
	}
	ibw_json_write_map(w, s, m);
	ibw_fmap_free(m);
}

static void render_traces(struct ibw_hreq *r, const struct ibw_snapshot *s,
			  struct ibw_jw *w)
{
	ibw_json_write_watched(w, s);
}

static void serve_events(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	struct ibw_events *ev = ibw_monitor_events(r->ctx->m);
	struct ibw_event *buf;
	unsigned long since = 0;
	struct ibw_jw w;
	unsigned n;

	if (ibw_hreq_arg(r, "since") &&
	    ibw_parse_num(ibw_hreq_arg(r, "since"), 0xffffffffUL, &since) < 0) {
		ibw_hreq_problem(r, 400, "since must be an event number");
		return;
	}
	/* Per request: a static buffer would be shared by every thread
	 * that ever served this. */
	buf = malloc(4096 * sizeof(*buf));
	if (!buf) {
		ibw_hreq_problem(r, 503, "out of memory");
		return;
	}
	n = ibw_events_since(ev, since, buf, 4096);
	ibw_jw_init(&w);
	ibw_json_write_events_doc(&w, ibw_events_last_seq(ev), buf, n);
	free(buf);
	ibw_hreq_set_written(r, &w);
}

/* /api/v1/jobs and /api/v1/jobs/{id} (docs/jobs.md). */
static void serve_jobs(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	const char *id = r->url + strlen("/api/v1/jobs");
	struct ibw_jw w;
	int rc;

	if (*id == '/')
		id++;
	if (*id && strspn(id, "0123456789_") != strlen(id)) {
		ibw_hreq_problem(r, 400, "a job is named by its id, 4711");
		return;
	}
	ibw_jw_init(&w);
	rc = *id ? ibw_json_write_job(&w, s, id) : ibw_json_write_jobs(&w, s);
	if (rc == -ENOENT) {
		ibw_jw_release(&w);
		ibw_hreq_problem(r, 404,
				 "no job source: start ibwatchd with "
				 "--jobs-dir");
	} else if (rc == -ESRCH) {
		ibw_jw_release(&w);
		ibw_hreq_problem(r, 404, "no running job %s", id);
	} else {
		ibw_hreq_set_written(r, &w);
	}
}

static void serve_healthz(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	uint64_t now = ibw_realtime_us();

	/* Before the first discovery the local port's state is not known
	 * yet (0): that is no state to report, only no sweep. */
	if (s->local_state && s->local_state != IBW_PORT_ACTIVE)
		ibw_hreq_problem(r, 503, "local port is %s",
				 ibw_port_state_str(s->local_state));
	else if (!s->discoveries || s->local_state != IBW_PORT_ACTIVE ||
		 ibw_snapshot_stale(s, now))
		ibw_hreq_problem(r, 503, "no fresh sweep");
	else
		ibw_hreq_set_json(r, 200, json_pack("{s:s}", "status", "ok"));
}

/* The AgentX subagent's state: what it does, since when, and when it
 * tries again (docs/api.md). */
static json_t *agentx_json(const struct ibw_agentx_status *ax)
{
	json_t *o = json_object();

	json_object_set_new(o, "state",
			    json_string(ibw_agentx_state_str(ax->state)));
	json_object_set_new(o, "since",
			    ax->since_us ? ibw_json_time(ax->since_us)
					 : json_null());
	json_object_set_new(o, "next_attempt",
			    ax->state == IBW_AGENTX_WAITING
				    ? ibw_json_time(ax->next_us)
				    : json_null());
	json_object_set_new(o, "attempts", ibw_json_u64(ax->attempts));
	json_object_set_new(o, "attempts_total",
			    ibw_json_u64(ax->attempts_total));
	json_object_set_new(o, "connects", ibw_json_u64(ax->connects));
	json_object_set_new(o, "reconnects", ibw_json_u64(ax->reconnects));
	json_object_set_new(o, "pings_failed", ibw_json_u64(ax->pings_failed));
	json_object_set_new(o, "last_error",
			    ax->last_error[0] ? json_string(ax->last_error)
					      : json_null());
	return o;
}

static void serve_status(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	struct ibw_engine_stats st;
	struct ibw_agentx_status ax;
	json_t *j;

	r->srv->engine_stats(r, &st);
	ibw_agentx_status_get(&ax);
	j = ibw_json_status(s, &st, ibw_realtime_us());
	json_object_set_new(j, "agentx", agentx_json(&ax));
	ibw_hreq_set_json(r, 200, j);
}

static void serve_node(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	uint64_t guid;
	json_t *j;

	if (ibw_parse_guid(r->url + strlen(r->route->path), &guid) < 0) {
		ibw_hreq_problem(r, 400, "a node is named by its GUID, 0x...");
	} else if (!(j = ibw_json_node(s, guid))) {
		ibw_hreq_problem(r, 404, "no node 0x%016" PRIx64, guid);
	} else {
		json_object_set_new(j, "hardware", ibw_json_hw_node(s, guid));
		ibw_hreq_set_json(r, 200, j);
	}
}

static void render_hardware(struct ibw_hreq *r, const struct ibw_snapshot *s,
			    struct ibw_jw *w)
{
	(void)r;
	ibw_jw_value(w, ibw_json_hardware(s));
}

/* The snapshot's part is rendered once per snapshot and shared by every
 * scrape of it (no copy); each scrape adds the few lines that change by
 * the second. */
static void serve_metrics(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	static const char *const key[2] = { "prometheus", "openmetrics" };
	const char *acc = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_ACCEPT);
	const char *enc = MHD_lookup_connection_value(
		r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	int om_named;
	int q_om =
		ibw_neg_media_q(acc, "application/openmetrics-text", &om_named);
	int q_text = ibw_neg_media_q(acc, "text/plain", NULL);
	/* OpenMetrics only when named (a bare * / * keeps the text format
	 * every scraper reads), and preferred at least as much as text. */
	int om = om_named && q_om > 0 && q_om >= q_text;
	struct ibw_cache *cache = r->ctx->metrics;
	struct ibw_prom_opts po = r->ctx->prom;
	struct ibw_engine_stats st;
	struct ibw_agentx_status ax;
	struct ibw_share *sh;
	struct ibw_body *b;
	unsigned char *gz;
	size_t llen, gzlen;
	char *live;

	if (!om && q_text == 0) {
		ibw_hreq_problem(r, 406,
				 "/metrics is text/plain or "
				 "application/openmetrics-text");
		return;
	}
	po.om = om;
	/* Unless all goes well, no body: the server answers 503. */
	r->ctype = om ? "application/openmetrics-text; "
			"version=1.0.0; charset=utf-8"
		      : "text/plain; version=0.0.4; charset=utf-8";
	r->code = 200;
	b = ibw_cache_get(cache, s->seq, key[om]);
	if (!b) {
		/* Gzipped as it is rendered, in pieces; the text is kept too
		 * unless it is over the JSON cache's budget (178 MB on the
		 * 57,024-port tree, against 7 MB of gzip): a plain scrape
		 * then inflates the gzip as it is sent. */
		b = ibw_body_start(s->seq, ibw_cache_max(r->ctx->json));
		if (!b)
			return;
		if (ibw_prom_render_snapshot_to(s, &po, 65536, ibw_body_append,
						b) < 0 ||
		    ibw_body_end(b) < 0) {
			ibw_body_unref(b);
			return;
		}
		ibw_cache_put(cache, key[om], b);
	}
	sh = ibw_share_new(b);
	ibw_body_unref(b);
	r->srv->engine_stats(r, &st);
	ibw_agentx_status_get(&ax);
	live = ibw_prom_render_live(s, &st, &ax, ibw_realtime_us(), &po, &llen);
	if (!sh || !live) {
		ibw_share_free(sh);
		free(live);
		return;
	}
	/* Finish a copy of the flushed stream with the live lines. */
	if (ibw_neg_coding_q(enc, "gzip") > 0 &&
	    ibw_neg_coding_q(enc, "gzip") >=
		    ibw_neg_coding_q(enc, "identity") &&
	    ibw_body_gzip_tail(sh->body, live, llen, &gz, &gzlen) == 0) {
		free(live);
		live = (char *)gz;
		llen = gzlen;
		sh->gz = 1;
	}
	sh->tail = live;
	sh->tail_len = llen;
	r->shared = sh;
}

/* A page for a person who points a browser at the agent: what is here. */
static void list_routes(FILE *f);

/* /api: every route listed in the table, so that it never misses one.
 * Paths are ASCII without markup characters. */
static void serve_index(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	static const char head[] =
		"<!DOCTYPE html>\n"
		"<html lang=\"en\"><head><meta charset=\"utf-8\">"
		"<title>ibwatchd</title></head><body>\n"
		"<h1>ibwatchd</h1>\n"
		"<p>InfiniBand fabric monitor, version " IBW_VERSION
		" (revision " IBW_REVISION ").</p>\n"
		"<ul>\n";
	static const char tail[] = "</ul>\n</body></html>\n";
	char *page = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&page, &len);

	(void)s;
	if (!f) {
		ibw_hreq_problem(r, 500, "out of memory");
		return;
	}
	fputs(head, f);
	list_routes(f);
	fputs(tail, f);
	if (fclose(f) || !page) {
		free(page);
		ibw_hreq_problem(r, 500, "out of memory");
		return;
	}
	r->body = page;
	r->len = len;
	r->code = 200;
	r->ctype = "text/html; charset=utf-8";
}

/* The map's page and files (http/ui.h), built in. */
static void serve_ui(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	const struct ibw_ui_asset *a = ibw_ui_asset(r->url);

	(void)s;
	if (!a) {
		ibw_hreq_problem(r, 404, "no such path");
		return;
	}
	r->body = malloc(a->len ? a->len : 1);
	if (!r->body) {
		ibw_hreq_problem(r, 503, "out of memory");
		return;
	}
	memcpy(r->body, a->data, a->len);
	r->len = a->len;
	r->code = 200;
	r->ctype = a->ctype;
}

/* The map page's session (server.c holds the token and the sessions). */
static void serve_signin(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	(void)s;
	ibw_signin_serve(r->ctx->si, r);
}

static void serve_signout(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	(void)s;
	ibw_signout_serve(r->ctx->si, r);
}

/*
 * The API. A cached answer (CACHE_ANSWER) depends on the snapshot and
 * its query alone: rendered once per snapshot and shared by every
 * response sending it, so a crowd of clients asking for the whole port
 * list costs one rendering and one copy in memory, not one each.
 */
#define GET_HEAD (IBW_HTTP_GET | IBW_HTTP_HEAD)

static const struct ibw_route routes[] = {
	{ .path = "/",
	  .methods = GET_HEAD,
	  .serve = serve_ui,
	  .about = "the fabric map (docs/map.md)" },
	{ .path = "/ui/", .prefix = 1, .methods = GET_HEAD, .serve = serve_ui },
	{ .path = "/signin",
	  .methods = GET_HEAD | IBW_HTTP_POST,
	  .open = 1,
	  .body = 1,
	  .serve = serve_signin,
	  .about = "the map's sign-in: POST the token as a form, get a "
		   "session cookie" },
	{ .path = "/signout",
	  .methods = IBW_HTTP_POST,
	  .open = 1,
	  .serve = serve_signout },
	{ .path = "/api",
	  .methods = GET_HEAD,
	  .serve = serve_index,
	  .about = "this list" },
	{ .path = "/healthz",
	  .methods = GET_HEAD,
	  .serve = serve_healthz,
	  .about = "200 while the local port is active and the sweeps fresh" },
	{ .path = "/metrics",
	  .methods = GET_HEAD,
	  .cache = CACHE_PART,
	  .serve = serve_metrics,
	  .about = "Prometheus and OpenMetrics" },
	{ .path = "/api/v1/status",
	  .methods = GET_HEAD,
	  .serve = serve_status,
	  .about = "the agent, the fabric and the sweeps in numbers" },
	{ .path = "/api/v1/nodes",
	  .methods = GET_HEAD,
	  .cache = CACHE_ANSWER,
	  .part = part_nodes,
	  .about = "every node with its ports" },
	{ .path = "/api/v1/nodes/",
	  .prefix = 1,
	  .methods = GET_HEAD,
	  .serve = serve_node,
	  .about = "/api/v1/nodes/{guid}: one node" },
	{ .path = "/api/v1/hardware",
	  .methods = GET_HEAD,
	  .cache = CACHE_ANSWER,
	  .render = render_hardware,
	  .about = "the switches' and HCAs' firmware, sensors, fans and "
		   "power supplies" },
	{ .path = "/api/v1/ports",
	  .methods = GET_HEAD,
	  .cache = CACHE_ANSWER,
	  .key = ports_key,
	  .part = part_ports,
	  .query = ports_query,
	  .about =
		  "every port with its counters (?type=, ?guid=, ?state=, ?errors=1)" },
	{ .path = "/api/v1/links",
	  .methods = GET_HEAD,
	  .cache = CACHE_ANSWER,
	  .key = links_key,
	  .part = part_links,
	  .query = links_query,
	  .about = "every cable, worst health first" },
	{ .path = "/api/v1/links/",
	  .prefix = 1,
	  .methods = GET_HEAD,
	  .serve = serve_link,
	  .about =
		  "/api/v1/links/{guid}/{port}: the cable at a port, from either end" },
	/* the windows' buckets are the monitor's: the loop's */
	{ .path = "/api/v1/history/",
	  .prefix = 1,
	  .methods = GET_HEAD,
	  .loop = 1,
	  .serve = serve_history,
	  .about = "/api/v1/history/{guid}/{port}: the cable's last hour, "
		   "5 minutes at a time" },
	{ .path = "/api/v1/map",
	  .methods = GET_HEAD,
	  .cache = CACHE_ANSWER,
	  .render = render_map,
	  .about =
		  "the fabric as a map: switches by level, bundles of cables" },
	{ .path = "/api/v1/jobs",
	  .methods = GET_HEAD,
	  .serve = serve_jobs,
	  .about = "the running jobs: their hosts, rates and links" },
	{ .path = "/api/v1/jobs/",
	  .prefix = 1,
	  .methods = GET_HEAD,
	  .serve = serve_jobs,
	  .about = "/api/v1/jobs/{id}: one job, its ports and links" },
	{ .path = "/api/v1/endports",
	  .methods = GET_HEAD,
	  .cache = CACHE_ANSWER,
	  .part = part_endports,
	  .about = "liveness of every endport" },
	{ .path = "/api/v1/traces",
	  .methods = GET_HEAD,
	  .cache = CACHE_ANSWER,
	  .render = render_traces,
	  .about = "the watched paths" },
	/* the event ring is the loop's */
	{ .path = "/api/v1/events",
	  .methods = GET_HEAD,
	  .loop = 1,
	  .serve = serve_events,
	  .about = "what changed (?since=)" },
	{ .path = "/api/v1/routes",
	  .methods = GET_HEAD,
	  .serve = serve_routes,
	  .about = "the route census" },
	/* names and GUIDs resolve on the monitor's live fabric: the loop's */
	{ .path = "/api/v1/routes/",
	  .prefix = 1,
	  .methods = GET_HEAD,
	  .loop = 1,
	  .serve = serve_route,
	  .about = "/api/v1/routes/{source}/{destination}: one routed path" },
	/* on-demand probes: they send MADs, so the token guards them */
	{ .path = "/api/v1/trace",
	  .methods = GET_HEAD,
	  .token_always = 1,
	  .loop = 1,
	  .serve = ibw_serve_trace,
	  .about = "on demand: ?target=T[&amp;source=S]" },
	{ .path = "/api/v1/ping",
	  .methods = GET_HEAD,
	  .token_always = 1,
	  .loop = 1,
	  .serve = ibw_serve_ping,
	  .about = "on demand: ?target=T[&amp;count=N]" },
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

static void list_routes(FILE *f)
{
	size_t i;

	for (i = 0; i < NROUTES; i++) {
		const struct ibw_route *rt = &routes[i];

		if (!rt->about)
			continue;
		if (rt->prefix)
			fprintf(f, "<li>%s</li>\n", rt->about);
		else
			fprintf(f, "<li><a href=\"%s\">%s</a>: %s</li>\n",
				rt->path, rt->path, rt->about);
	}
}

const struct ibw_route *ibw_route_find(const char *url)
{
	size_t i;

	for (i = 0; i < NROUTES; i++) {
		const struct ibw_route *rt = &routes[i];

		if (rt->prefix ? !strncmp(url, rt->path, strlen(rt->path))
			       : !strcmp(url, rt->path))
			return rt;
	}
	return NULL;
}

/* An IBW_HTTP_* bit for @method, 0 for a method no route serves. */
static unsigned method_bit(const char *method)
{
	size_t i;

	/* Case matters: "get" is no method of ours (RFC 9110). */
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!strcmp(method, methods[i].name))
			return methods[i].bit;
	return 0;
}

int ibw_route_allows(const struct ibw_route *rt, const char *method)
{
	return (rt->methods & method_bit(method)) != 0;
}

int ibw_route_token_always(const struct ibw_route *rt)
{
	return rt->token_always;
}

int ibw_route_open(const struct ibw_route *rt)
{
	return rt->open;
}

int ibw_route_takes_body(const struct ibw_route *rt)
{
	return rt->body;
}

int ibw_route_on_loop(const struct ibw_route *rt)
{
	return rt->loop;
}

/* The names of @rt's methods, @sep between them and @last before the
 * last one: "GET, HEAD", "GET and HEAD". */
static void method_list(const struct ibw_route *rt, const char *sep,
			const char *last, char *buf, size_t len)
{
	size_t i, n = 0, k = 0, off = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		n += (rt->methods & methods[i].bit) != 0;
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		const char *before = sep;
		int w;

		if (!(rt->methods & methods[i].bit))
			continue;
		if (!k)
			before = "";
		else if (k + 1 == n)
			before = last;
		k++;
		w = snprintf(buf + off, len - off, "%s%s", before,
			     methods[i].name);
		if (w < 0 || (size_t)w >= len - off)
			return;
		off += (size_t)w;
	}
}

void ibw_route_allow(const struct ibw_route *rt, char *buf, size_t len)
{
	method_list(rt, ", ", ", ", buf, len);
}

void ibw_hreq_not_allowed(struct ibw_hreq *r)
{
	char names[64];

	method_list(r->route, ", ", " and ", names, sizeof(names));
	ibw_hreq_problem(r, 405, "only %s are served", names);
}

/*
 * A streamable answer not in the cache. Unless its key's last answer
 * was too big for the cache, it is written here up to the cache's
 * limit: complete, it is a body (0, *@bp set) that the caller keeps;
 * else what was written goes out first and the rest is streamed, as is
 * all of an answer known to be too big (1, r->stream set). -1: a
 * problem is set on @r.
 */
static int render_or_stream(struct ibw_hreq *r, struct ibw_snapshot *s,
			    const char *key, struct ibw_body **bp)
{
	const struct ibw_route *rt = r->route;
	struct ibw_cache *cache = r->ctx->json;
	size_t max = ibw_cache_max(cache), len;
	union part_query q;
	struct ibw_stream *st;
	char *text;
	int rc = 0;

	memset(&q, 0, sizeof(q));
	if (rt->query && rt->query(r, &q) < 0)
		return -1;
	st = ibw_stream_new(s, rt->part, rt->query ? &q : NULL, sizeof(q));
	if (!st) {
		ibw_hreq_problem(r, 503, "out of memory");
		return -1;
	}
	if (ibw_cache_size_hint(cache, key) <= max)
		rc = ibw_stream_fill(st, max < SIZE_MAX ? max + 1 : max);
	if (rc < 0) {
		ibw_stream_free(st);
		ibw_hreq_problem(r, 503, "out of memory");
		return -1;
	}
	if (rc == 1) {
		/* Complete (maybe over the limit by its last element: then
		 * sent from here all the same, and not kept). */
		text = ibw_stream_text(st, &len);
		ibw_stream_free(st);
		if (!text || !(*bp = ibw_body_new(s->seq, text, len, 0))) {
			ibw_hreq_problem(r, 503, "out of memory");
			return -1;
		}
		return 0;
	}
	/* Too big to keep: the next asker streams from the start, until
	 * a stream's end notes a size that fits again. */
	ibw_cache_note_size(cache, key, max < SIZE_MAX ? max + 1 : max);
	ibw_stream_note_in(st, cache, key);
	r->stream = st;
	r->code = 200;
	r->ctype = "application/json";
	return 1;
}

/* A cached answer: from the cache, else rendered and kept for the next
 * asker of the same snapshot and query, or streamed when too big. */
static void serve_cached(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	const struct ibw_route *rt = r->route;
	struct ibw_cache *cache = r->ctx->json;
	char key[IBW_CACHE_KEY_MAX];
	struct ibw_body *b;
	struct ibw_jw w;
	size_t len;
	char *text;

	if (rt->key) {
		if (rt->key(r, key, sizeof(key)) < 0)
			return;
	} else {
		snprintf(key, sizeof(key), "%s", rt->path);
	}
	b = ibw_cache_get(cache, s->seq, key);
	if (!b && rt->part) {
		if (render_or_stream(r, s, key, &b))
			return;
		ibw_cache_put(cache, key, b);
	} else if (!b) {
		/* Element by element: a tree of the whole answer would
		 * cost ten times its bytes while it is dumped. */
		ibw_jw_init(&w);
		rt->render(r, s, &w);
		text = ibw_jw_finish(&w, &len);
		if (!text || !(b = ibw_body_new(s->seq, text, len, 0))) {
			ibw_hreq_problem(r, 503, "out of memory");
			return;
		}
		ibw_cache_put(cache, key, b);
	}
	r->shared = ibw_share_new(b);
	ibw_body_unref(b);
	if (!r->shared) {
		ibw_hreq_problem(r, 503, "out of memory");
		return;
	}
	r->code = 200;
	r->ctype = "application/json";
}

void ibw_route_serve(struct ibw_hreq *r)
{
	struct ibw_snapshot *s;
	const char *acc = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_ACCEPT);

	/* The API answers JSON (problems as problem+json): a client that
	 * refuses both is told so, rather than sent what it cannot read. */
	if (r->route->serve != serve_metrics &&
	    r->route->serve != serve_index && r->route->serve != serve_signin &&
	    r->route->serve != serve_signout &&
	    !ibw_neg_media_q(acc, "application/json", NULL) &&
	    !ibw_neg_media_q(acc, "application/problem+json", NULL)) {
		ibw_hreq_problem(r, 406, "this path answers application/json");
		return;
	}
	s = ibw_monitor_snapshot(r->ctx->m);
	if (r->route->cache == CACHE_ANSWER)
		serve_cached(r, s);
	else
		r->route->serve(r, s);
	ibw_snapshot_unref(s);
}
