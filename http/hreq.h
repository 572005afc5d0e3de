/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One HTTP request, from its headers to its answer, and what its handler
 * reaches (struct ibw_routes_ctx, struct ibw_server_ops): types alone,
 * with no code. The server (server.c) allocates the request; the
 * handlers (routes.c, probes.c) and what they call (answer.c, query.c,
 * signin.c) fill it, below the server and without calling up into it.
 */
#ifndef IBW_HREQ_H
#define IBW_HREQ_H

#include <stddef.h>

#include "cache.h"
#include "engine.h"
#include "monitor.h"
#include "prom.h"
#include "stream.h"

struct MHD_Connection;
struct ibw_http;
struct ibw_hreq;
struct ibw_signin;

/* Where a request is in its life (not a port state). */
enum ibw_hreq_state {
	IBW_HREQ_NEW, /* being answered, or answered at once */
	IBW_HREQ_WAITING, /* suspended until its probe's callback */
	IBW_HREQ_READY, /* answered after a wait: send it */
};

/* The methods a route serves, a bit each. */
enum ibw_http_method {
	IBW_HTTP_GET = 1u << 0,
	IBW_HTTP_HEAD = 1u << 1,
	IBW_HTTP_POST = 1u << 2,
};

/* What a handler asks of the server that holds its request. server.c
 * fills it: the handlers sit below the server and call nothing there. */
struct ibw_server_ops {
	/* Per client address: whether @r may start an on-demand probe
	 * now. On the loop only. */
	int (*allow_probe)(struct ibw_hreq *r);
	/* A probe's callback is done with @r: resume its connection, or
	 * free @r if the connection went. @r must not be used after. */
	void (*probe_landed)(struct ibw_hreq *r);
	/* The engine's counts as of the loop's last wait: any thread. */
	void (*engine_stats)(struct ibw_hreq *r, struct ibw_engine_stats *st);
};

/* What handlers reach; one per server, which owns it. */
struct ibw_routes_ctx {
	struct ibw_signin *si; /* the page's sign-in (signin.h) */
	struct ibw_monitor *m;
	struct ibw_engine *e;
	struct ibw_cache *json; /* whole answers, per snapshot and query */
	struct ibw_cache *metrics; /* the snapshot's part of /metrics */
	struct ibw_prom_opts prom; /* how it is rendered, om aside */
};

/* One request, from its headers to its answer; the server allocates it. */
struct ibw_hreq {
	struct ibw_http *h;
	const struct ibw_routes_ctx *ctx;
	/* The server's operations: static, so a probe's callback may land
	 * a request after its server is gone (detached) */
	const struct ibw_server_ops *srv;
	struct MHD_Connection *conn;
	const char *url; /* the path (libmicrohttpd's, valid until answered) */
	const char *method; /* libmicrohttpd's, as long as @url */
	const struct ibw_route *route; /* NULL: no such path */
	enum ibw_hreq_state state;
	/* Handed over to the loop (server.c): probing and orphan under the
	 * server's lock; cb_pending and detached the loop's alone. */
	int probing; /* the loop holds it: it resumes or frees it */
	int orphan; /* the connection went first: the loop frees */
	int cb_pending; /* a probe's callback is still to come */
	int detached; /* the server stopped: the callback frees */
	struct ibw_hreq *qnext; /* the server's queue for the loop */
	unsigned code; /* the answer's status; 0 until answered */
	char *body; /* the answer, unless shared */
	size_t len;
	struct ibw_share *shared; /* a shared body: /metrics, a cached answer */
	struct ibw_stream *stream; /* a body sent as it is written */
	const char *ctype;
	const char *location; /* a Location header, static */
	char *set_cookie; /* a Set-Cookie header, freed with the request */
	size_t uploaded; /* request body bytes seen */
	char *upload; /* ... and kept, for a route that reads them */
	struct ibw_hreq *next; /* the server's list of waiting requests */
};

#endif
