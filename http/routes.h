/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The HTTP API: the route table, the handlers behind it and the request
 * they answer. Internal to the http library, between the server
 * (server.c: connections, limits, TLS, the token) and the handlers
 * (routes.c). The server finds a request's route when its headers
 * arrive (a 405 and its Allow header come from the row), checks the
 * token the row asks for, and calls ibw_route_serve(); a handler builds
 * its answer in the request, reads only the query and headers of the
 * libmicrohttpd connection, and takes the snapshot's answers from the
 * response cache when the row says they are cached.
 */
#ifndef IBW_ROUTES_H
#define IBW_ROUTES_H

#include <stddef.h>

#include "cache.h"
#include "engine.h"
#include "monitor.h"
#include "prom.h"
#include "stream.h"

struct MHD_Connection;
struct ibw_http;
struct ibw_route;

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

/* What handlers reach; one per server, which owns it. */
struct ibw_routes_ctx {
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

/* The route of @url (path only), or NULL. */
const struct ibw_route *ibw_route_find(const char *url);
/* Whether @rt serves @method. */
int ibw_route_allows(const struct ibw_route *rt, const char *method);
/* Whether @rt wants the token whenever one is configured (on-demand
 * probes); the others want it only with --http-token-everywhere. */
int ibw_route_token_always(const struct ibw_route *rt);
/* Whether @rt never wants the token, --http-token-everywhere or not
 * (the sign-in: else no browser could sign in). */
int ibw_route_open(const struct ibw_route *rt);
/* Whether @rt's handler reads the request body (r->upload). */
int ibw_route_takes_body(const struct ibw_route *rt);
/* The methods @rt serves as an Allow header value: "GET, HEAD". */
void ibw_route_allow(const struct ibw_route *rt, char *buf, size_t len);
/* Whether @rt's handler needs the loop's thread (on-demand probes, the
 * event ring): the server hands such requests over to the loop. The
 * others run on the server's threads and read snapshots alone. */
int ibw_route_on_loop(const struct ibw_route *rt);
/* Answer @r (its route set) from the current snapshot, or, on the
 * loop, start a probe whose callback answers (ibw_http_suspend). */
void ibw_route_serve(struct ibw_hreq *r);

/* Answers. A problem is RFC 9457 problem+json with @fmt as its detail. */
void ibw_hreq_problem(struct ibw_hreq *r, unsigned code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* 405 for @r's method, naming what its route serves. */
void ibw_hreq_not_allowed(struct ibw_hreq *r);

/* From server.c, for the handlers. */
/* Per client address: whether @r may start an on-demand probe now. On
 * the loop only. */
int ibw_http_allow_probe(struct ibw_hreq *r);
/* On the loop: a probe was started for @r; its callback answers, then
 * calls ibw_http_probe_landed(). */
void ibw_http_suspend(struct ibw_hreq *r);
/* The engine's counts as of the loop's last wait: any thread. */
void ibw_http_engine_stats(struct ibw_hreq *r, struct ibw_engine_stats *st);
/* The page's sign-in and sign-out (POST /signin, POST /signout). */
void ibw_http_sign_in(struct ibw_hreq *r);
void ibw_http_sign_out(struct ibw_hreq *r);
/* In a probe's callback: whether @r still wants the answer (its
 * connection is there and nothing answered it meanwhile). */
int ibw_http_probe_wanted(const struct ibw_hreq *r);
/* The probe's callback is done with @r: resume its connection, or free
 * @r if the connection went. @r must not be used after. */
void ibw_http_probe_landed(struct ibw_hreq *r);

#endif
