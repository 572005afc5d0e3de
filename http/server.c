// SPDX-License-Identifier: BSD-2-Clause
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "answer.h"
#include "cache.h"
#include "log.h"
#include "ratelimit.h"
#include "routes.h"
#include "session.h"
#include "signin.h"
#include "ui.h"
#include "server.h"

#define ONDEMAND_CLIENTS 64
#define JSON_CACHE_SLOTS 16
/* The sign-in form's body: a token (at most 4096 bytes) percent-encoded
 * fits, whatever --http-max-request-bytes allows other requests. */
#define SIGNIN_MAX_BODY 16384

struct bucket {
	char addr[INET6_ADDRSTRLEN];
	struct ibw_ratelimit rl;
};

struct listener {
	struct MHD_Daemon *d;
	unsigned port;
};

/* One connection, from accept to close (MHD_OPTION_NOTIFY_CONNECTION). */
struct hconn {
	int fd; /* open until the connection is off the list */
	uint64_t deadline_us; /* for its first request's headers; 0: met */
	struct hconn *prev, *next;
};

/* A /metrics request came: from whom (a hash), when (ibw_now_us()). */
struct scrape {
	uint64_t key, t_us;
};

/* Scrapes between two turns of the loop: more are not told (they are
 * not scrapers on a schedule). */
#define SCRAPES_QUEUED 32

/*
 * Threads. libmicrohttpd serves from threads of its own (a pool per
 * listener); the probe loop never waits for a client. What those
 * threads read is immutable (snapshots, cached bodies, the options) or
 * under @lock. What needs the loop (a route with .loop set: on-demand
 * probes, the event ring) is handed over: the request's connection is
 * suspended, the request put on @queue and @efd written; the loop
 * serves it and resumes the connection, whose thread then sends the
 * answer. Only the loop touches the rate-limit buckets. The times of
 * /metrics scrapes are handed over the same way, on @scrapes, for the
 * monitor to align its counter sweeps with (core/scrapers.h).
 */
struct ibw_http {
	struct ibw_loop *loop;
	struct ibw_engine *e;
	struct ibw_http_opts o;
	struct listener l[IBW_HTTP_MAX_LISTEN];
	unsigned nl;
	char *token;
	/* the token, the page's sessions (locked inside), TLS or not:
	 * set before the first listener starts */
	struct ibw_signin si;
	char *cert, *key;
	struct ibw_timer *timer; /* the next header deadline */
	int efd; /* eventfd: work for the loop, or a new deadline */
	int hooked; /* stats_hook is on the loop */
	struct bucket buckets[ONDEMAND_CLIENTS]; /* the loop's */
	pthread_mutex_t lock;
	/* under @lock: */
	struct ibw_hreq *queue, **qtail; /* handed over, not yet served */
	struct ibw_hreq *waiting; /* handed over, not yet answered */
	struct hconn *conns; /* open connections */
	struct ibw_engine_stats stats; /* the engine's, as of the last wait */
	int stopping; /* hand nothing over any more */
	struct scrape scrapes[SCRAPES_QUEUED]; /* not yet handed to the loop */
	unsigned nscrapes;
	struct ibw_routes_ctx ctx;
	/* Atomics, from MHD's threads: connections refused over a limit
	 * since the last warning, and when that was (mhd_log). */
	unsigned refused_quiet;
	uint64_t refused_warned_us;
};

/* A share kept only as gzip, asked for as text: inflated as it is sent. */
static ssize_t read_text(void *cls, uint64_t pos, char *buf, size_t max)
{
	long n = ibw_share_read_text(cls, buf, max);

	if (n < 0)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	return n ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

static enum MHD_Result send_answer(struct MHD_Connection *c, struct ibw_hreq *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (r->shared && !r->shared->gz && !r->shared->body->text) {
		struct ibw_share *sh = r->shared;

		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN,
							 IBW_STREAM_PART,
							 read_text, sh,
							 ibw_share_free);
		if (!resp)
			return MHD_NO;
		r->shared = NULL; /* the response owns it now */
		MHD_add_response_header(resp, "Vary", "Accept-Encoding");
	} else if (r->shared) {
		struct ibw_share *sh = r->shared;
		struct MHD_IoVec iov[2] = {
			{ sh->gz ? (const void *)sh->body->gz : sh->body->text,
			  sh->gz ? sh->body->gzlen : sh->body->len },
			{ sh->tail, sh->tail_len },
		};

		resp = MHD_create_response_from_iovec(iov, sh->tail_len ? 2 : 1,
						      ibw_share_free, sh);
		if (!resp)
			return MHD_NO;
		r->shared = NULL; /* the response owns it now */
		if (sh->gz)
			MHD_add_response_header(resp, "Content-Encoding",
						"gzip");
		if (sh->body->have_gz)
			MHD_add_response_header(resp, "Vary",
						"Accept-Encoding");
	} else if (r->stream) {
		/* No length: HTTP/1.1 sends it chunked, 1.0 to the close. */
		resp = MHD_create_response_from_callback(
			MHD_SIZE_UNKNOWN, IBW_STREAM_PART, ibw_stream_read,
			r->stream, ibw_stream_free);
		if (!resp)
			return MHD_NO;
		r->stream = NULL; /* the response owns it now */
	} else {
		if (!r->body)
			ibw_hreq_problem(r, 503, "out of memory");
		resp = MHD_create_response_from_buffer(r->len, r->body,
						       MHD_RESPMEM_MUST_FREE);
		if (!resp)
			return MHD_NO;
		r->body = NULL; /* the response owns it now */
	}
	MHD_add_response_header(resp, "Content-Type", r->ctype);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (!strncmp(r->ctype, "text/html", 9))
		MHD_add_response_header(resp, "Content-Security-Policy",
					IBW_UI_CSP);
	if (r->location)
		MHD_add_response_header(resp, "Location", r->location);
	if (r->set_cookie)
		MHD_add_response_header(resp, "Set-Cookie", r->set_cookie);
	if (r->code == 405 && r->route) {
		char allow[64];

		ibw_route_allow(r->route, allow, sizeof(allow));
		MHD_add_response_header(resp, "Allow", allow);
	}
	if (r->code == 401)
		MHD_add_response_header(resp, "WWW-Authenticate",
					"Bearer realm=\"ibwatch\"");
	ret = MHD_queue_response(c, r->code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void wake_loop(struct ibw_http *h)
{
	uint64_t one = 1;

	/* Fails only when the counter is full: the loop is woken then. */
	if (write(h->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("http", "cannot wake the loop: %s", strerror(errno));
}

static void hreq_free(struct ibw_hreq *r)
{
	free(r->body);
	/* the sign-in form's body and the cookie carry secrets */
	if (r->upload)
		explicit_bzero(r->upload, r->uploaded);
	free(r->upload);
	if (r->set_cookie)
		explicit_bzero(r->set_cookie, strlen(r->set_cookie));
	free(r->set_cookie);
	ibw_share_free(r->shared);
	ibw_stream_free(r->stream);
	free(r);
}

/* Under h->lock. */
static void unlink_waiting(struct ibw_http *h, struct ibw_hreq *r)
{
	struct ibw_hreq **pp;

	for (pp = &h->waiting; *pp; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			return;
		}
	}
}

/*
 * On an HTTP thread: give @r to the loop. The connection is suspended
 * first, so that the loop's resume can never come before it.
 */
static int hand_over(struct ibw_hreq *r)
{
	struct ibw_http *h = r->h;
	int stopping;

	MHD_suspend_connection(r->conn);
	pthread_mutex_lock(&h->lock);
	stopping = h->stopping;
	if (!stopping) {
		r->state = IBW_HREQ_WAITING;
		r->probing = 1;
		r->next = h->waiting;
		h->waiting = r;
		r->qnext = NULL;
		*h->qtail = r;
		h->qtail = &r->qnext;
	}
	pthread_mutex_unlock(&h->lock);
	if (stopping) {
		ibw_hreq_problem(r, 503, "the agent is stopping");
		MHD_resume_connection(r->conn);
	} else {
		wake_loop(h);
	}
	/* Either way the connection is suspended until resumed. */
	return 1;
}

/* On the loop: @r is answered: resume its connection, whose thread
 * sends the answer (or free @r, if the server is gone). */
static void probe_landed(struct ibw_hreq *r)
{
	struct ibw_http *h = r->h;
	int resume = 0, orphan;

	r->cb_pending = 0;
	if (r->detached) {
		/* ibw_http_free() answered it and stopped the server:
		 * the connection is gone and @r is ours. */
		hreq_free(r);
		return;
	}
	pthread_mutex_lock(&h->lock);
	r->probing = 0;
	orphan = r->orphan;
	if (!orphan && r->state != IBW_HREQ_READY) {
		unlink_waiting(h, r);
		r->state = IBW_HREQ_READY;
		resume = 1;
	}
	pthread_mutex_unlock(&h->lock);
	if (orphan)
		hreq_free(r);
	else if (resume)
		MHD_resume_connection(r->conn);
}

static void engine_stats(struct ibw_hreq *r, struct ibw_engine_stats *st)
{
	pthread_mutex_lock(&r->h->lock);
	*st = r->h->stats;
	pthread_mutex_unlock(&r->h->lock);
}

/* Before each wait of the loop: the engine's counts, for the HTTP
 * threads (the engine itself is the loop's). */
static void stats_hook(struct ibw_loop *loop, void *arg)
{
	struct ibw_http *h = arg;
	struct ibw_engine_stats st;

	ibw_engine_get_stats(h->e, &st);
	pthread_mutex_lock(&h->lock);
	h->stats = st;
	pthread_mutex_unlock(&h->lock);
}

/* Per client address: a token bucket for on-demand probes. On the loop
 * (the routes that call it are handed over): the buckets are its own.
 * The client address of a suspended connection stays put. */
static int allow_probe(struct ibw_hreq *r)
{
	struct ibw_http *h = r->h;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char addr[INET6_ADDRSTRLEN] = "?";
	uint64_t now = ibw_now_us();
	struct bucket *b = NULL, *oldest = &h->buckets[0];
	unsigned i;

	if (ci && ci->client_addr) {
		const struct sockaddr *sa = ci->client_addr;

		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET,
				  &((const struct sockaddr_in *)sa)->sin_addr,
				  addr, sizeof(addr));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6,
				  &((const struct sockaddr_in6 *)sa)->sin6_addr,
				  addr, sizeof(addr));
	}
	for (i = 0; i < ONDEMAND_CLIENTS; i++) {
		if (!strcmp(h->buckets[i].addr, addr)) {
			b = &h->buckets[i];
			break;
		}
		if (h->buckets[i].rl.last_us < oldest->rl.last_us)
			oldest = &h->buckets[i];
	}
	if (!b) {
		/* The address heard from least recently gives up its slot. */
		b = oldest;
		snprintf(b->addr, sizeof(b->addr), "%s", addr);
		ibw_ratelimit_init(&b->rl, h->o.ondemand_per_minute, 60000000,
				   h->o.ondemand_per_minute, now);
	}
	return ibw_ratelimit_take(&b->rl, now);
}

/* What the handlers ask of the server (routes.h). */
static const struct ibw_server_ops server_ops = {
	.allow_probe = allow_probe,
	.probe_landed = probe_landed,
	.engine_stats = engine_stats,
};

/* The token (when the route, or --http-token-everywhere, wants it),
 * then the route's handler, here or on the loop. 1: handed over (the
 * loop answers, and @r is the loop's until it resumes the connection);
 * 0: answered. */
static int dispatch(struct ibw_hreq *r)
{
	struct ibw_http *h = r->h;
	int open = r->route && ibw_route_open(r->route);
	int guarded = !open && (h->o.token_everywhere ||
				(r->route && ibw_route_token_always(r->route)));

	if (h->token && !strcmp(r->url, "/") &&
	    MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND,
					"token")) {
		/* The old sign-in, /?token=: the address is kept in the
		 * browser's history and proxies' logs. No more. */
		ibw_signin_page(r, 400,
				"The token is not taken in the address (it "
				"would stay in the browser's history and in "
				"logs): type it here.");
	} else if (h->token && guarded &&
		   !ibw_signin_authorized(&h->si, r->conn)) {
		/* A person at the map's address gets the form. */
		if (!strcmp(r->url, "/"))
			ibw_signin_page(r, 401, NULL);
		else
			ibw_hreq_problem(r, 401,
					 "a bearer token is required here");
	} else if (!r->route)
		ibw_hreq_problem(r, 404, "no such path");
	else if (ibw_route_on_loop(r->route))
		return hand_over(r);
	else
		ibw_route_serve(r);
	return 0;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

/*
 * On an HTTP thread: a /metrics request's headers came; tell the loop
 * when, and from whom. A scraper is its address, its User-Agent and
 * Prometheus' X-Prometheus-Scrape-Timeout-Seconds (two Prometheus
 * servers on one host, at different intervals, most often differ
 * there); not its port, which changes with each new connection.
 */
static void note_scrape(struct ibw_http *h, struct MHD_Connection *c)
{
	static const char *const hdr[] = {
		"User-Agent", "X-Prometheus-Scrape-Timeout-Seconds"
	};
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	uint64_t t = ibw_now_us(), key = 0xcbf29ce484222325ull;
	const char *v;
	unsigned i;
	int wake = 0;

	if (ci && ci->client_addr) {
		const struct sockaddr *sa = ci->client_addr;

		if (sa->sa_family == AF_INET)
			key = fnv1a(key,
				    &((const struct sockaddr_in *)sa)->sin_addr,
				    sizeof(struct in_addr));
		else if (sa->sa_family == AF_INET6)
			key = fnv1a(
				key,
				&((const struct sockaddr_in6 *)sa)->sin6_addr,
				sizeof(struct in6_addr));
	}
	for (i = 0; i < sizeof(hdr) / sizeof(hdr[0]); i++) {
		v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, hdr[i]);
		key = fnv1a(key, v ? v : "", v ? strlen(v) + 1 : 1);
	}
	pthread_mutex_lock(&h->lock);
	if (!h->stopping && h->nscrapes < SCRAPES_QUEUED) {
		h->scrapes[h->nscrapes].key = key;
		h->scrapes[h->nscrapes].t_us = t;
		wake = h->nscrapes++ == 0;
	}
	pthread_mutex_unlock(&h->lock);
	if (wake)
		wake_loop(h);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c,
			       const char *url, const char *method,
			       const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	struct ibw_http *h = cls;
	struct ibw_hreq *r = *con_cls;
	enum ibw_hreq_state state;

	if (!r) {
		/* First call: headers only. Refuse what is too big, or a
		 * method the path does not serve, before any body is read. */
		const char *cl = MHD_lookup_connection_value(
			c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
			c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

		/* The headers came: the header deadline is met. */
		if (ci && ci->socket_context) {
			pthread_mutex_lock(&h->lock);
			((struct hconn *)ci->socket_context)->deadline_us = 0;
			pthread_mutex_unlock(&h->lock);
		}

		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		r->h = h;
		r->ctx = &h->ctx;
		r->srv = &server_ops;
		r->conn = c;
		r->url = url;
		r->method = method;
		r->route = ibw_route_find(url);
		*con_cls = r;
		if (!strcmp(url, "/metrics") && !strcmp(method, "GET"))
			note_scrape(h, c);
		if (cl && strtoull(cl, NULL, 10) > h->o.max_request_bytes) {
			ibw_hreq_problem(r, 413, "request body too large");
			return send_answer(c, r);
		}
		if (r->route && !ibw_route_allows(r->route, method)) {
			ibw_hreq_not_allowed(r);
			return send_answer(c, r);
		}
		return MHD_YES;
	}
	if (*upload_data_size) {
		/* Only the sign-in reads a body: keep it there, count it
		 * elsewhere; once it is more than a request may be, answer
		 * 413 at once. */
		size_t n = *upload_data_size;
		int keep = r->route && ibw_route_takes_body(r->route);
		size_t max = keep ? SIGNIN_MAX_BODY : h->o.max_request_bytes;

		*upload_data_size = 0;
		if (r->code)
			return MHD_YES;
		if (n > max || r->uploaded > max - n) {
			ibw_hreq_problem(r, 413, "request body too large");
			return send_answer(c, r);
		}
		if (keep) {
			if (!r->upload)
				r->upload = malloc(SIGNIN_MAX_BODY + 1);
			if (!r->upload) {
				ibw_hreq_problem(r, 503, "out of memory");
				return send_answer(c, r);
			}
			memcpy(r->upload + r->uploaded, upload_data, n);
			r->upload[r->uploaded + n] = '\0';
		}
		r->uploaded += n;
		return MHD_YES;
	}
	/* The loop sets READY on a request handed over to it. */
	pthread_mutex_lock(&h->lock);
	state = r->state;
	pthread_mutex_unlock(&h->lock);
	if (state == IBW_HREQ_WAITING)
		return MHD_YES; /* resumed by mistake: still waiting */
	if (state == IBW_HREQ_READY || r->code)
		return send_answer(c, r);
	r->url = url;
	if (dispatch(r))
		return MHD_YES; /* suspended: the answer comes on resume */
	return send_answer(c, r);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct ibw_http *h = cls;
	struct ibw_hreq *r = *con_cls;
	int probing;

	if (!r)
		return;
	*con_cls = NULL;
	pthread_mutex_lock(&h->lock);
	probing = r->probing;
	if (probing) {
		/* The loop still holds it: its callback frees it. */
		r->orphan = 1;
		unlink_waiting(h, r);
	}
	pthread_mutex_unlock(&h->lock);
	if (!probing)
		hreq_free(r);
}

static void on_conn(void *cls, struct MHD_Connection *c, void **socket_ctx,
		    enum MHD_ConnectionNotificationCode code)
{
	struct ibw_http *h = cls;
	struct hconn *hc = *socket_ctx;
	static __thread int niced;

	/* The first connection a serving thread takes: lower its priority
	 * once (Linux keeps a nice value per thread). */
	if (!niced && h->o.nice) {
		niced = 1;
		if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid),
				(int)h->o.nice) < 0)
			log_warn("http",
				 "cannot lower a serving thread's "
				 "priority: %s",
				 strerror(errno));
	}
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
			c, MHD_CONNECTION_INFO_CONNECTION_FD);

		if (!ci || ci->connect_fd < 0)
			return;
		hc = calloc(1, sizeof(*hc));
		if (!hc)
			return; /* no header deadline for this one */
		hc->fd = ci->connect_fd;
		hc->deadline_us = ibw_now_us() +
				  (uint64_t)h->o.header_timeout_s * 1000000u;
		pthread_mutex_lock(&h->lock);
		hc->next = h->conns;
		if (h->conns)
			h->conns->prev = hc;
		h->conns = hc;
		pthread_mutex_unlock(&h->lock);
		*socket_ctx = hc;
		/* The loop keeps the deadlines: it arms its timer. */
		wake_loop(h);
		return;
	}
	if (!hc)
		return;
	/* libmicrohttpd closes the socket after this: off the list, the
	 * fd is no longer shut down by the loop. */
	pthread_mutex_lock(&h->lock);
	if (hc->prev)
		hc->prev->next = hc->next;
	else
		h->conns = hc->next;
	if (hc->next)
		hc->next->prev = hc->prev;
	pthread_mutex_unlock(&h->lock);
	free(hc);
	*socket_ctx = NULL;
}

/*
 * libmicrohttpd 0.9.75's timeout is for inactivity: a client that sends
 * its request line a byte every few seconds would hold its slot for
 * good. A connection whose first request's headers are not in by its
 * deadline is shut down; libmicrohttpd then reads the end of the stream
 * and closes it itself (it has no call to close one from outside). The
 * next deadline to look at, in microseconds from @now; UINT64_MAX: none.
 */
static uint64_t enforce_header_deadline(struct ibw_http *h, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	struct hconn *hc;

	pthread_mutex_lock(&h->lock);
	for (hc = h->conns; hc; hc = hc->next) {
		if (!hc->deadline_us)
			continue;
		if (hc->deadline_us > now) {
			if (hc->deadline_us - now < next)
				next = hc->deadline_us - now;
			continue;
		}
		hc->deadline_us = 0;
		/* Its thread sees the end of the stream at once. */
		shutdown(hc->fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&h->lock);
	return next;
}

/*
 * MHD logs "Server reached connection limit" for every connection it
 * refuses, over the total and over the per-address limit alike: one
 * client opening connections in a loop would flood the log. The first
 * is a warning, then at most one a minute with the count refused in
 * between; the others go to debug.
 */
static void log_refused(struct ibw_http *h, const char *msg)
{
	uint64_t now = ibw_now_us();
	uint64_t last =
		__atomic_load_n(&h->refused_warned_us, __ATOMIC_RELAXED);
	unsigned quiet;

	if ((last && now - last < 60000000) ||
	    !__atomic_compare_exchange_n(&h->refused_warned_us, &last, now, 0,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
		__atomic_add_fetch(&h->refused_quiet, 1, __ATOMIC_RELAXED);
		log_debug("http", "%s", msg);
		return;
	}
	quiet = __atomic_exchange_n(&h->refused_quiet, 0, __ATOMIC_RELAXED);
	log_warn("http",
		 "%s (%u more refused since the last such warning; at most "
		 "one a minute is logged)",
		 msg, quiet);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	if (strstr(msg, "reached connection limit")) {
		log_refused(cls, msg);
		return;
	}
	/* A client that hangs up before its answer is sent, or before its
	 * request is complete, is the client's business (wrk at the end of
	 * a run, a scraper's timeout): debug. */
	if (strstr(msg, "no longer available for sending") ||
	    strstr(msg, "Connection reset") || strstr(msg, "Broken pipe") ||
	    strstr(msg, "detected connection closure") ||
	    strstr(msg, "disconnected when reading request") ||
	    /* ... and so is a malformed or oversized request, which MHD
	     * answers itself (4xx) and logs: a hostile client must not be
	     * able to flood the log. */
	    strstr(msg, "Error processing request") ||
	    strstr(msg, "with incomplete request") ||
	    strstr(msg, "allocate header record") ||
	    strstr(msg, "'Content-Length' header") ||
	    strstr(msg, "`Content-Length' header"))
		log_debug("http", "%s", msg);
	else
		log_warn("http", "%s", msg);
}

static void deadlines(struct ibw_http *h)
{
	uint64_t next = enforce_header_deadline(h, ibw_now_us());

	if (next != UINT64_MAX)
		ibw_timer_arm(h->timer, next);
	else
		ibw_timer_disarm(h->timer);
}

/* On the loop: serve what the HTTP threads handed over. */
static void on_wake(struct ibw_loop *loop, int fd, unsigned ev, void *arg)
{
	struct ibw_http *h = arg;
	struct ibw_hreq *q, *r;
	struct scrape sc[SCRAPES_QUEUED];
	unsigned nsc, i;
	uint64_t n;

	if (read(h->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_warn("http", "eventfd: %s", strerror(errno));
	pthread_mutex_lock(&h->lock);
	q = h->queue;
	h->queue = NULL;
	h->qtail = &h->queue;
	nsc = h->nscrapes;
	memcpy(sc, h->scrapes, nsc * sizeof(sc[0]));
	h->nscrapes = 0;
	pthread_mutex_unlock(&h->lock);
	for (i = 0; i < nsc && h->ctx.m; i++)
		ibw_monitor_scrape_seen(h->ctx.m, sc[i].key, sc[i].t_us);
	while ((r = q)) {
		q = r->qnext;
		r->qnext = NULL;
		ibw_route_serve(r);
		/* Answered at once (a bad query, a 429): no callback. */
		if (!r->cb_pending)
			probe_landed(r);
	}
	deadlines(h);
}

static void on_timer(struct ibw_timer *t, void *arg)
{
	deadlines(arg);
}

static int parse_listen(const char *s, struct sockaddr_storage *ss,
			socklen_t *len, int *v6)
{
	char host[128];
	const char *colon, *port;
	struct addrinfo hints, *ai;

	if (*s == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':' ||
		    (size_t)(end - s - 1) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(end - s - 1), s + 1);
		port = end + 2;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
		port = colon + 1;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &ai) != 0)
		return -EINVAL;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	*v6 = ai->ai_family == AF_INET6;
	freeaddrinfo(ai);
	return 0;
}

/* A whole small file (a token, a PEM), NUL-terminated; NULL on error. */
static char *slurp(const char *path, size_t max, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	buf = calloc(1, max + 1);
	n = buf ? fread(buf, 1, max + 1, f) : 0;
	fclose(f);
	if (!buf || n > max) {
		snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
		free(buf);
		return NULL;
	}
	return buf;
}

int ibw_http_check_opts(const struct ibw_http_opts *o, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const char *files[3];
	unsigned i;
	char *buf;
	int v6;

	for (i = 0; i < o->nlisten; i++) {
		if (parse_listen(o->listen[i], &ss, &len, &v6) < 0) {
			snprintf(err, errlen,
				 "http: '%s' is not ADDR:PORT (numeric, IPv6 "
				 "in brackets)",
				 o->listen[i]);
			return -EINVAL;
		}
	}
	if (o->prom.fabric_name &&
	    (!*o->prom.fabric_name || strlen(o->prom.fabric_name) > 48 ||
	     strspn(o->prom.fabric_name,
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789._:/-") != strlen(o->prom.fabric_name))) {
		snprintf(err, errlen,
			 "fabric-name: 1 to 48 of A-Z a-z 0-9 . _ : / -, "
			 "not '%.60s'",
			 o->prom.fabric_name);
		return -EINVAL;
	}
	if (!o->tls_cert != !o->tls_key) {
		snprintf(err, errlen,
			 "http: --http-cert and --http-key go "
			 "together");
		return -EINVAL;
	}
	files[0] = o->tls_cert;
	files[1] = o->tls_key;
	files[2] = o->token_file;
	for (i = 0; i < 3; i++) {
		if (!files[i])
			continue;
		buf = slurp(files[i], 1u << 20, err, errlen);
		if (!buf)
			return -EINVAL;
		free(buf);
	}
	return 0;
}

static int listen_on(struct ibw_http *h, const char *addr, char *err,
		     size_t errlen)
{
	struct listener *l = &h->l[h->nl];
	struct sockaddr_storage ss;
	socklen_t sslen;
	const union MHD_DaemonInfo *di;
	/*
	 * Threads of its own: a pool, each thread polling its share of
	 * the connections; ITC so that a resume from the loop wakes the
	 * thread. poll(), not epoll: libmicrohttpd 0.9.75 with epoll can
	 * refuse a request (431: its query arguments do not fit the
	 * connection's memory) and then neither send the answer nor close
	 * until its thread wakes for something else (edge-triggered, no
	 * new edge), holding the slot for the 30 s idle timeout. poll()
	 * asks again on every pass; the connection limit keeps the sets
	 * small.
	 */
	unsigned flags = MHD_USE_POLL_INTERNAL_THREAD |
			 MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC |
			 MHD_USE_ERROR_LOG;
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, h->cert },
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, h->key },
		{ MHD_OPTION_END, 0, NULL },
	};
	int v6 = 0;

	if (parse_listen(addr, &ss, &sslen, &v6) < 0) {
		snprintf(err, errlen,
			 "--http %s: not ADDRESS:PORT (an IPv6 address in [])",
			 addr);
		return -1;
	}
	if (v6)
		flags |= MHD_USE_IPv6;
	if (h->cert)
		flags |= MHD_USE_TLS;
	errno = 0;
	/* The logger first: MHD logs to stderr about the options before
	 * it. TLS adds its certificate and key (none without). */
	l->d = MHD_start_daemon(
		flags, 0, NULL, NULL, handler, h, MHD_OPTION_EXTERNAL_LOGGER,
		mhd_log, h, MHD_OPTION_SOCK_ADDR, &ss,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)h->o.max_connections,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned)h->o.max_per_address,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		(size_t)h->o.max_request_bytes * 2,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)h->o.idle_timeout_s,
		MHD_OPTION_NOTIFY_COMPLETED, completed, h,
		MHD_OPTION_NOTIFY_CONNECTION, on_conn, h,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)IBW_HTTP_THREADS,
		MHD_OPTION_ARRAY, h->cert ? tls : tls + 2, MHD_OPTION_END);
	if (!l->d) {
		snprintf(err, errlen, "cannot listen on %s: %s", addr,
			 strerror(errno ? errno : EADDRINUSE));
		return -1;
	}
	h->nl++;
	di = MHD_get_daemon_info(l->d, MHD_DAEMON_INFO_BIND_PORT);
	l->port = di ? di->port : 0;
	log_info("http", "listening on %s%s", addr, h->cert ? " (TLS)" : "");
	return 0;
}

struct ibw_http *ibw_http_new(struct ibw_loop *loop, struct ibw_monitor *m,
			      struct ibw_engine *e,
			      const struct ibw_http_opts *o, char *err,
			      size_t errlen)
{
	struct ibw_http *h = calloc(1, sizeof(*h));
	unsigned i;

	if (!h)
		return NULL;
	h->loop = loop;
	h->e = e;
	h->efd = -1;
	pthread_mutex_init(&h->lock, NULL);
	h->qtail = &h->queue;
	h->o = *o;
	h->ctx.si = &h->si;
	h->ctx.m = m;
	h->ctx.e = e;
	h->ctx.json = ibw_cache_new(JSON_CACHE_SLOTS, o->cache_bytes);
	/* One per format: Prometheus text and OpenMetrics. Not under the
	 * budget: every scrape of a snapshot shares it. */
	h->ctx.metrics = ibw_cache_new(2, SIZE_MAX);
	h->ctx.prom = o->prom;
	h->ctx.prom.process = 1;
	if (!h->o.nlisten) {
		h->o.listen[0] = "127.0.0.1:9776";
		h->o.nlisten = 1;
	}
	if (!h->o.max_connections)
		h->o.max_connections = IBW_HTTP_DEFAULT_MAX_CONNECTIONS;
	if (!h->o.max_per_address)
		h->o.max_per_address = IBW_HTTP_DEFAULT_MAX_PER_ADDRESS;
	if (!h->o.header_timeout_s)
		h->o.header_timeout_s = IBW_HTTP_DEFAULT_HEADER_TIMEOUT;
	if (!h->o.idle_timeout_s)
		h->o.idle_timeout_s = IBW_HTTP_DEFAULT_IDLE_TIMEOUT;
	if (!h->o.max_request_bytes)
		h->o.max_request_bytes = 16384;
	if (!h->o.ondemand_per_minute)
		h->o.ondemand_per_minute = 60;
	h->timer = ibw_timer_new(loop, on_timer, h);
	if (!h->timer || !h->ctx.json || !h->ctx.metrics) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	h->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (h->efd < 0 ||
	    ibw_loop_watch(loop, h->efd, IBW_EV_READ, on_wake, h) < 0 ||
	    ibw_loop_add_hook(loop, stats_hook, h) < 0) {
		snprintf(err, errlen, "cannot plug the HTTP server in: %s",
			 strerror(errno));
		goto fail;
	}
	h->hooked = 1;
	stats_hook(loop, h);
	if (!!h->o.tls_cert != !!h->o.tls_key) {
		snprintf(err, errlen, "TLS needs both a certificate and a key");
		goto fail;
	}
	if (h->o.tls_cert &&
	    (!(h->cert = slurp(h->o.tls_cert, 1 << 20, err, errlen)) ||
	     !(h->key = slurp(h->o.tls_key, 1 << 20, err, errlen))))
		goto fail;
	if (h->o.token_file) {
		size_t n;

		h->token = slurp(h->o.token_file, 4096, err, errlen);
		if (!h->token)
			goto fail;
		n = strlen(h->token);
		while (n && (h->token[n - 1] == '\n' ||
			     h->token[n - 1] == '\r' || h->token[n - 1] == ' '))
			h->token[--n] = '\0';
		if (!n) {
			snprintf(err, errlen, "%s: the token is empty",
				 h->o.token_file);
			goto fail;
		}
		h->si.token = h->token;
		h->si.sessions = ibw_sessions_new(
			IBW_SESSION_MAX, IBW_SESSION_TTL_S * 1000000ull);
		if (!h->si.sessions) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	h->si.tls = h->cert != NULL;
	for (i = 0; i < h->o.nlisten && i < IBW_HTTP_MAX_LISTEN; i++)
		if (listen_on(h, h->o.listen[i], err, errlen) < 0)
			goto fail;
	return h;
fail:
	ibw_http_free(h);
	return NULL;
}

void ibw_http_free(struct ibw_http *h)
{
	struct ibw_hreq *list, *r, *detached = NULL;
	unsigned i;

	if (!h)
		return;
	/* MHD must not stop with connections suspended: answer what was
	 * handed over, and hand nothing over from now on. */
	pthread_mutex_lock(&h->lock);
	h->stopping = 1;
	list = h->waiting;
	h->waiting = NULL;
	h->queue = NULL;
	h->qtail = &h->queue;
	pthread_mutex_unlock(&h->lock);
	while ((r = list)) {
		list = r->next;
		ibw_hreq_problem(r, 503, "the agent is stopping");
		pthread_mutex_lock(&h->lock);
		r->state = IBW_HREQ_READY;
		/* A probe's callback still to come keeps it (orphan). */
		r->probing = r->cb_pending;
		pthread_mutex_unlock(&h->lock);
		if (r->cb_pending) {
			r->next = detached;
			detached = r;
		}
		MHD_resume_connection(r->conn);
	}
	/* Joins the server's threads: what they wrote is ours now. */
	for (i = 0; i < h->nl; i++)
		MHD_stop_daemon(h->l[i].d);
	for (r = detached; r; r = r->next)
		r->detached = 1;
	if (h->efd >= 0) {
		ibw_loop_unwatch(h->loop, h->efd);
		close(h->efd);
	}
	if (h->hooked)
		ibw_loop_del_hook(h->loop, stats_hook, h);
	ibw_timer_free(h->timer);
	ibw_cache_free(h->ctx.json);
	ibw_cache_free(h->ctx.metrics);
	if (h->token)
		explicit_bzero(h->token, strlen(h->token));
	free(h->token);
	ibw_sessions_free(h->si.sessions);
	free(h->cert);
	free(h->key);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
