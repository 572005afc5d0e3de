/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The HTTP API: the route table and the handlers behind it (the request
 * they answer is hreq.h's). Internal to the http library, between the server
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

#include "hreq.h"

struct ibw_route;

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
 * loop, start a probe whose callback answers (probes.h). */
void ibw_route_serve(struct ibw_hreq *r);

/* 405 for @r's method, naming what its route serves. */
void ibw_hreq_not_allowed(struct ibw_hreq *r);

#endif
