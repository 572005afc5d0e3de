/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The HTTP endpoint: libmicrohttpd serving from threads of its own (a
 * pool of IBW_HTTP_THREADS per listener), so that neither a crowd of
 * clients nor a big rendering holds up the probe loop. Handlers on those
 * threads read the monitor's immutable snapshots. What needs the loop
 * (on-demand traces and pings, the event ring) is handed over: the
 * connection is suspended, the request queued and the loop woken (an
 * eventfd); the loop serves it, and resumes the connection when the
 * answer is there. A scrape never sends a MAD. The endpoints are the
 * route table of routes.c; answers that depend on a snapshot alone are
 * kept in the response cache of cache.c. ibw_http_new() and
 * ibw_http_free() are called on the loop's thread.
 */
#ifndef IBW_SERVER_H
#define IBW_SERVER_H

#include "loop.h"
#include "monitor.h"
#include "prom.h"

#define IBW_HTTP_MAX_LISTEN 4
#define IBW_HTTP_DEFAULT_LISTEN "127.0.0.1:9776"
/* Threads serving each listener: two, so that one big rendering does
 * not hold up a scrape. libmicrohttpd splits the connection limit
 * between them. */
#define IBW_HTTP_THREADS 2
/* Connection limits: enough for a few scrapers and dashboards, few
 * enough that one address cannot take every slot. */
#define IBW_HTTP_DEFAULT_MAX_CONNECTIONS 64
#define IBW_HTTP_DEFAULT_MAX_PER_ADDRESS 16
/* Seconds from a connection's accept to its first request's headers. */
#define IBW_HTTP_DEFAULT_HEADER_TIMEOUT 10
/* Seconds a connection may sit with nothing sent or received. */
#define IBW_HTTP_DEFAULT_IDLE_TIMEOUT 30
/* The serving threads' nice value: the loop's. 19 puts probing first
 * under a scrape storm, but starves scrapes on a host whose cores other
 * processes keep busy (docs/reliability.md, Load). */
#define IBW_HTTP_DEFAULT_NICE 0
/*
 * Megabytes of whole JSON answers kept per snapshot (--http-cache-mb).
 * An answer that fits is rendered once and shared by every client of
 * that snapshot; a bigger one (the port and node lists of a fabric of
 * some 12,000 ports and more) is streamed to each client, written as it
 * is sent. /metrics keeps its text too only within it (its gzip
 * always). 32: the port list of 8,192 ports (20 MB) is kept; on the
 * 57,024-port tree what stays kept is the endport list and the /metrics
 * gzip, 14 MB.
 */
#define IBW_HTTP_DEFAULT_CACHE_MB 32

struct ibw_http_opts {
	/* "127.0.0.1:9776", "[::1]:9776"; up to IBW_HTTP_MAX_LISTEN */
	const char *listen[IBW_HTTP_MAX_LISTEN];
	unsigned nlisten; /* 0: 127.0.0.1:9776 */
	const char *tls_cert; /* PEM files: both, or neither */
	const char *tls_key;
	const char *token_file; /* bearer token required on trace and ping */
	int token_everywhere; /* ... and on every endpoint */
	unsigned max_connections; /* in all; 0: the default above */
	unsigned max_per_address; /* from one client address; 0: default */
	unsigned header_timeout_s; /* 0: the default above */
	unsigned idle_timeout_s; /* 0: the default above */
	unsigned max_request_bytes; /* 0: 16384 */
	unsigned ondemand_per_minute; /* per client address; 0: 60 */
	/* JSON answers kept, bytes in all; 0: none kept (every list
	 * answer is streamed, the others rendered per request, and
	 * /metrics keeps its gzip only) */
	size_t cache_bytes;
	/* Nice value of the threads that serve, 0 to 19 (0: the loop's);
	 * the higher, the more the probe loop goes first under load. */
	unsigned nice;
	/* How /metrics is rendered (om is chosen per request) */
	struct ibw_prom_opts prom;
};

struct ibw_http;

/* Returns NULL with a sentence in @err. */
struct ibw_http *ibw_http_new(struct ibw_loop *loop, struct ibw_monitor *m,
			      struct ibw_engine *e,
			      const struct ibw_http_opts *o, char *err,
			      size_t errlen);
void ibw_http_free(struct ibw_http *h);
/* Check @o without binding or serving: addresses, TLS and token files
 * readable. 0, or -EINVAL with a sentence in @err. */
int ibw_http_check_opts(const struct ibw_http_opts *o, char *err,
			size_t errlen);

#endif
