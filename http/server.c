#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>
#include <zlib.h>

#include "json.h"
#include "log.h"
#include "prom.h"
#include "ratelimit.h"
#include "server.h"

#define ONDEMAND_CLIENTS 64
#define MAX_PING_COUNT 100
#define TLS_POLL_US 10000
#define CONN_POLL_US 500000

struct bucket {
	char addr[INET6_ADDRSTRLEN];
	struct ibw_ratelimit rl;
};

struct req;

/*
 * The snapshot's part of /metrics, shared by the responses sending it;
 * also gzipped (Prometheus asks for gzip), once: the deflate stream is
 * flushed at the end of the shared part and kept, and each scrape
 * finishes a copy of it with its own few live lines. A cached JSON
 * answer is one of these too, text only.
 */
struct mcache {
	unsigned refs;
	uint64_t seq;
	char *text;
	size_t len;
	int have_gz;
	z_stream zs; /* flushed after text, not finished */
	unsigned char *gz;
	size_t gzlen;
};

static void mcache_unref(struct mcache *m)
{
	if (m && !--m->refs) {
		if (m->have_gz)
			deflateEnd(&m->zs);
		free(m->gz);
		free(m->text);
		free(m);
	}
}

/* Deflate @len bytes of @in into a growing buffer with @flush. */
static int deflate_into(z_stream *zs, const char *in, size_t len, int flush,
			unsigned char **out, size_t *outlen)
{
	size_t cap = *outlen + deflateBound(zs, len) + 64;
	unsigned char *o = realloc(*out, cap);
	int rc;

	if (!o)
		return -1;
	*out = o;
	zs->next_in = (unsigned char *)(uintptr_t)in;
	zs->avail_in = (uInt)len;
	zs->next_out = o + *outlen;
	zs->avail_out = (uInt)(cap - *outlen);
	rc = deflate(zs, flush);
	*outlen = cap - zs->avail_out;
	return (rc == Z_OK || rc == Z_STREAM_END) && !zs->avail_in ? 0 : -1;
}

static void mcache_gzip(struct mcache *m)
{
	memset(&m->zs, 0, sizeof(m->zs));
	/* level 1: the body is repetitive; 15 + 16 asks for a gzip wrapper */
	if (deflateInit2(&m->zs, 1, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return;
	m->have_gz = 1;
	if (deflate_into(&m->zs, m->text, m->len, Z_SYNC_FLUSH, &m->gz,
			 &m->gzlen) < 0) {
		deflateEnd(&m->zs);
		m->have_gz = 0;
		free(m->gz);
		m->gz = NULL;
		m->gzlen = 0;
	}
}

/* What a shared-body response owns until MHD is done with it. */
struct mbody {
	struct mcache *mc;
	char *live;
	size_t live_len;
	int gz; /* live holds the gzip tail, not text */
};

static void mbody_free(void *cls)
{
	struct mbody *b = cls;

	mcache_unref(b->mc);
	free(b->live);
	free(b);
}

/*
 * Answers that depend on the snapshot alone (/api/v1/nodes, /ports with
 * its filter, /endports, /traces) are rendered once per snapshot and
 * query and shared by every response sending them: a
 * crowd of clients asking for the whole port list costs one rendering
 * and one copy in memory, not one each.
 */
#define JCACHE_SLOTS 16

struct jslot {
	char key[96];
	struct mcache *mc; /* text only; seq says which snapshot */
	uint64_t used;
};

struct listener {
	struct MHD_Daemon *d;
	int epfd;
	unsigned port;
};

struct ibw_http {
	struct ibw_loop *loop;
	struct ibw_monitor *m;
	struct ibw_engine *e;
	struct ibw_http_opts o;
	struct listener l[IBW_HTTP_MAX_LISTEN];
	unsigned nl;
	char *token;
	char *cert, *key;
	struct ibw_timer *timer;
	struct bucket buckets[ONDEMAND_CLIENTS];
	struct req *waiting; /* suspended, a probe under way */
	struct mcache *cache[2]; /* /metrics per kind (text, OpenMetrics) */
	struct jslot jcache[JCACHE_SLOTS];
	uint64_t jtick;
};

struct req {
	struct ibw_http *h;
	struct MHD_Connection *conn;
	int state; /* 0 new, 1 waiting for a probe, 2 answer ready */
	int probing; /* a probe's callback is still to come */
	int orphan; /* the connection went first: the callback frees */
	unsigned code;
	char *body;
	size_t len;
	size_t uploaded; /* request body bytes seen (and dropped) */
	struct mbody *shared; /* a shared body: /metrics or a cached answer */
	const char *ctype;
	struct req *next;
};

static const char *title(unsigned code)
{
	switch (code) {
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 413:
		return "Content Too Large";
	case 429:
		return "Too Many Requests";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	}
	return "Error";
}

static void set_json(struct req *r, unsigned code, json_t *j)
{
	free(r->body);
	r->body = ibw_json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(j);
	r->len = r->body ? strlen(r->body) : 0;
	r->code = code;
	r->ctype = "application/json";
}

/*
 * Replace each byte of @s that is not part of valid UTF-8 with '?': a
 * detail quotes what the client sent, and JSON strings must be UTF-8.
 */
static void utf8_clean(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		unsigned n, lo = 0x80, hi = 0xbf, i;

		if (*p < 0x80) {
			p++;
			continue;
		}
		if (*p >= 0xc2 && *p <= 0xdf) {
			n = 1;
		} else if (*p >= 0xe0 && *p <= 0xef) {
			n = 2;
			if (*p == 0xe0)
				lo = 0xa0; /* no overlong forms */
			if (*p == 0xed)
				hi = 0x9f; /* no surrogates */
		} else if (*p >= 0xf0 && *p <= 0xf4) {
			n = 3;
			if (*p == 0xf0)
				lo = 0x90;
			if (*p == 0xf4)
				hi = 0x8f; /* nothing above U+10FFFF */
		} else {
			*p++ = '?';
			continue;
		}
		for (i = 1; i <= n; i++) {
			unsigned a = i == 1 ? lo : 0x80, b = i == 1 ? hi : 0xbf;

			if (p[i] < a || p[i] > b)
				break;
		}
		if (i <= n) {
			*p++ = '?';
			continue;
		}
		p += n + 1;
	}
}

static void problem(struct req *r, unsigned code, const char *key, json_t *ext,
		    const char *fmt, va_list ap)
{
	char detail[512];
	json_t *j;

	vsnprintf(detail, sizeof(detail), fmt, ap);
	utf8_clean(detail);
	j = json_pack("{s:s, s:s, s:i, s:s}", "type", "about:blank", "title",
		      title(code), "status", code, "detail", detail);
	if (key && ext)
		json_object_set_new(j, key, ext);
	set_json(r, code, j);
	r->ctype = "application/problem+json";
}

static void set_problem(struct req *r, unsigned code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* RFC 9457 problem details. */
static void set_problem(struct req *r, unsigned code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	problem(r, code, NULL, NULL, fmt, ap);
	va_end(ap);
}

static void set_problem_ext(struct req *r, unsigned code, const char *key,
			    json_t *ext, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* ... with an extension member: what the probe found before it gave up. */
static void set_problem_ext(struct req *r, unsigned code, const char *key,
			    json_t *ext, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	problem(r, code, key, ext, fmt, ap);
	va_end(ap);
}

static enum MHD_Result send_answer(struct MHD_Connection *c, struct req *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (r->shared) {
		struct mbody *b = r->shared;
		struct MHD_IoVec iov[2] = {
			{ b->gz ? (const void *)b->mc->gz : b->mc->text,
			  b->gz ? b->mc->gzlen : b->mc->len },
			{ b->live, b->live_len },
		};

		resp = MHD_create_response_from_iovec(iov, b->live_len ? 2 : 1,
						      mbody_free, b);
		if (!resp)
			return MHD_NO;
		r->shared = NULL; /* the response owns it now */
		if (b->gz)
			MHD_add_response_header(resp, "Content-Encoding",
						"gzip");
		if (b->mc->have_gz)
			MHD_add_response_header(resp, "Vary",
						"Accept-Encoding");
	} else {
		if (!r->body)
			set_problem(r, 503, "out of memory");
		resp = MHD_create_response_from_buffer(r->len, r->body,
						       MHD_RESPMEM_MUST_FREE);
		if (!resp)
			return MHD_NO;
		r->body = NULL; /* the response owns it now */
	}
	MHD_add_response_header(resp, "Content-Type", r->ctype);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (r->code == 405)
		MHD_add_response_header(resp, "Allow", "GET, HEAD");
	if (r->code == 401)
		MHD_add_response_header(resp, "WWW-Authenticate",
					"Bearer realm=\"ibwatch\"");
	ret = MHD_queue_response(c, r->code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void kick(struct ibw_http *h)
{
	/* Resumed connections are served by the next MHD_run. */
	ibw_timer_arm(h->timer, 0);
}

static void unlink_waiting(struct ibw_http *h, struct req *r)
{
	struct req **pp;

	for (pp = &h->waiting; *pp; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			return;
		}
	}
}

/* A probe's answer: resume the connection (or drop it, if it went). */
static int probe_landed(struct req *r)
{
	r->probing = 0;
	if (r->orphan) {
		free(r->body);
		free(r);
		return 0;
	}
	if (r->state == 2)
		return 0; /* answered already (the agent is stopping) */
	unlink_waiting(r->h, r);
	r->state = 2;
	MHD_resume_connection(r->conn);
	kick(r->h);
	return 1;
}

static void on_trace(const struct ibw_trace *t, void *arg)
{
	struct req *r = arg;

	if (r->orphan || r->state == 2) {
		probe_landed(r);
		return;
	}
	if (t->fwd.status == IBW_TRACE_TIMEOUT)
		set_problem_ext(r, 504, "trace", ibw_json_trace(t),
				"hop %u did not answer: %s", t->fwd.fail_hop,
				t->fwd.reason);
	else
		set_json(r, 200, ibw_json_trace(t));
	probe_landed(r);
}

static void on_ping(const struct ibw_ping_summary *s, void *arg)
{
	struct req *r = arg;

	if (r->orphan || r->state == 2) {
		probe_landed(r);
		return;
	}
	if (!s->received)
		set_problem_ext(r, 504, "ping", ibw_json_ping_summary(s),
				"no answer to %u pings", s->sent);
	else
		set_json(r, 200, ibw_json_ping_summary(s));
	probe_landed(r);
}

static const char *arg(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

static int parse_num(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_guid(const char *s, uint64_t *g)
{
	char *end;

	if (!s || strncmp(s, "0x", 2) || strlen(s) > 18 || strlen(s) < 3)
		return -1;
	errno = 0;
	*g = strtoull(s, &end, 16);
	return errno || *end ? -1 : 0;
}

/* Per client address: a token bucket for on-demand probes. */
static int allow_probe(struct ibw_http *h, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
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

static void suspend(struct req *r)
{
	r->state = 1;
	r->probing = 1;
	r->next = r->h->waiting;
	r->h->waiting = r;
	MHD_suspend_connection(r->conn);
}

static void do_trace(struct req *r, struct ibw_snapshot *s)
{
	struct ibw_http *h = r->h;
	const char *t = arg(r->conn, "target"), *rev = arg(r->conn, "reverse");
	const char *src = arg(r->conn, "source");
	unsigned long tmo = 5000;
	unsigned flags = 0;
	uint16_t lid, slid = 0;
	int rc;

	(void)s;
	if (!t || !*t) {
		set_problem(r, 400, "give a target: a LID, a GUID or a name");
		return;
	}
	if (arg(r->conn, "timeout_ms") &&
	    parse_num(arg(r->conn, "timeout_ms"), 60000, &tmo) < 0) {
		set_problem(r, 400, "timeout_ms must be a number up to 60000");
		return;
	}
	if (rev && strcmp(rev, "0") && strcmp(rev, "1")) {
		set_problem(r, 400, "reverse must be 0 or 1");
		return;
	}
	if (rev && !strcmp(rev, "1"))
		flags |= IBW_TRACE_REVERSE;
	lid = ibw_monitor_resolve(h->m, t);
	if (!lid) {
		set_problem(r, 404, "unknown target '%s'", t);
		return;
	}
	if (src && *src && !(slid = ibw_monitor_resolve(h->m, src))) {
		set_problem(r, 404, "unknown source '%s'", src);
		return;
	}
	if (!allow_probe(h, r->conn)) {
		set_problem(r, 429, "too many on-demand probes from here");
		return;
	}
	rc = ibw_trace_start_from(ibw_monitor_tracer(h->m), slid, lid, flags,
				  (unsigned)(tmo ? tmo : 5000), on_trace, r);
	if (rc == -ENOENT) {
		set_problem(r, 404, "the source '%s' is not in the fabric",
			    src ? src : "");
		return;
	}
	if (rc == -EBUSY) {
		set_problem(r, 429, "too many traces under way");
		return;
	}
	if (rc < 0) {
		set_problem(r, 400, "cannot trace to lid %u: %s", lid,
			    strerror(-rc));
		return;
	}
	suspend(r);
}

static void do_ping(struct req *r)
{
	struct ibw_http *h = r->h;
	struct ibw_pinger *p = ibw_monitor_pinger(h->m);
	const char *t = arg(r->conn, "target"), *ms = arg(r->conn, "method");
	unsigned long count = 5, tmo = 0;
	enum ibw_ping_method m = IBW_PING_AUTO;
	uint16_t lid;
	int rc;

	if (!t || !*t) {
		set_problem(r, 400, "give a target: a LID, a GUID or a name");
		return;
	}
	if (arg(r->conn, "count") &&
	    (parse_num(arg(r->conn, "count"), MAX_PING_COUNT, &count) < 0 ||
	     !count)) {
		set_problem(r, 400, "count must be 1 to %d", MAX_PING_COUNT);
		return;
	}
	if (arg(r->conn, "timeout_ms") &&
	    parse_num(arg(r->conn, "timeout_ms"), 10000, &tmo) < 0) {
		set_problem(r, 400, "timeout_ms must be a number up to 10000");
		return;
	}
	if (ms && ibw_ping_method_parse(ms, &m) < 0) {
		set_problem(r, 400, "method must be auto, echo, pma or smp");
		return;
	}
	if (!p) {
		set_problem(r, 503, "pings are turned off (--no-ping)");
		return;
	}
	lid = ibw_monitor_resolve(h->m, t);
	if (!lid) {
		set_problem(r, 404, "unknown target '%s'", t);
		return;
	}
	if (!allow_probe(h, r->conn)) {
		set_problem(r, 429, "too many on-demand probes from here");
		return;
	}
	rc = ibw_ping_run(p, lid, m, IBW_ECHO_REQ, (unsigned)count,
			  (unsigned)tmo, on_ping, r);
	if (rc == -EBUSY) {
		set_problem(r, 429, "too many pings under way");
		return;
	}
	if (rc < 0) {
		set_problem(r, 400, "cannot ping lid %u: %s", lid,
			    strerror(-rc));
		return;
	}
	suspend(r);
}

/*
 * Rendering a big answer builds and frees many small objects: give
 * their pages back to the system rather than keep the peak resident.
 */
static void trim_after(size_t rendered)
{
#ifdef __GLIBC__
	if (rendered > (1u << 20))
		malloc_trim(0);
#else
	(void)rendered;
#endif
}

/* Attach a shared body to @r as its 200 JSON answer. */
static int attach_shared(struct req *r, struct mcache *mc)
{
	struct mbody *b = calloc(1, sizeof(*b));

	if (!b)
		return -1;
	b->mc = mc;
	mc->refs++;
	r->shared = b;
	r->code = 200;
	r->ctype = "application/json";
	return 0;
}

/* The cached answer for @key on snapshot @seq, attached to @r: 1. */
static int json_hit(struct req *r, uint64_t seq, const char *key)
{
	struct ibw_http *h = r->h;
	unsigned i;

	for (i = 0; i < JCACHE_SLOTS; i++) {
		struct jslot *j = &h->jcache[i];

		if (j->mc && j->mc->seq != seq) {
			/* An older snapshot's: nobody asks for it again (the
			 * responses still sending it hold their own refs). */
			mcache_unref(j->mc);
			j->mc = NULL;
		}
	}
	for (i = 0; i < JCACHE_SLOTS; i++) {
		struct jslot *j = &h->jcache[i];

		if (j->mc && !strcmp(j->key, key)) {
			j->used = ++h->jtick;
			return attach_shared(r, j->mc) == 0;
		}
	}
	return 0;
}

/* Answer @r with @j (taken) and keep the text for the next asker. */
static void json_store(struct req *r, uint64_t seq, const char *key, json_t *j)
{
	struct ibw_http *h = r->h;
	struct jslot *slot = &h->jcache[0];
	struct mcache *mc;
	unsigned i;

	if (!j || !(mc = calloc(1, sizeof(*mc)))) {
		set_json(r, 200, j);
		return;
	}
	mc->refs = 1;
	mc->seq = seq;
	mc->text = ibw_json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(j);
	if (!mc->text) {
		mcache_unref(mc);
		set_problem(r, 503, "out of memory");
		return;
	}
	mc->len = strlen(mc->text);
	trim_after(mc->len);
	/* The least recently used slot (an empty one first). */
	for (i = 0; i < JCACHE_SLOTS; i++) {
		if (!h->jcache[i].mc) {
			slot = &h->jcache[i];
			break;
		}
		if (h->jcache[i].used < slot->used)
			slot = &h->jcache[i];
	}
	mcache_unref(slot->mc);
	snprintf(slot->key, sizeof(slot->key), "%s", key);
	slot->mc = mc;
	slot->used = ++h->jtick;
	if (attach_shared(r, mc) < 0)
		set_problem(r, 503, "out of memory");
}

static void do_ports(struct req *r, struct ibw_snapshot *s)
{
	struct ibw_port_filter f = { 0, 0, -1, 0 };
	const char *type = arg(r->conn, "type"), *g = arg(r->conn, "guid");
	const char *st = arg(r->conn, "state"), *e = arg(r->conn, "errors");
	static const char *const states[] = { "", "down", "init", "armed",
					      "active" };
	char key[96];
	int i;

	if (type && !strcmp(type, "switch")) {
		f.type = 1;
	} else if (type && !strcmp(type, "ca")) {
		f.type = 2;
	} else if (type) {
		set_problem(r, 400, "type must be switch or ca");
		return;
	}
	if (g && parse_guid(g, &f.guid) < 0) {
		set_problem(r, 400, "guid must be 0x followed by hex digits");
		return;
	}
	if (st) {
		for (i = 1; i < 5; i++)
			if (!strcmp(st, states[i]))
				f.state = i;
		if (f.state < 0) {
			set_problem(r, 400,
				    "state must be down, init, armed or "
				    "active");
			return;
		}
	}
	if (e && strcmp(e, "0") && strcmp(e, "1")) {
		set_problem(r, 400, "errors must be 0 or 1");
		return;
	}
	f.errors = e && !strcmp(e, "1");
	snprintf(key, sizeof(key), "ports %d %" PRIx64 " %d %d", f.type, f.guid,
		 f.state, f.errors);
	if (!json_hit(r, s->seq, key))
		json_store(r, s->seq, key, ibw_json_ports(s, &f));
}

static void do_events(struct req *r)
{
	struct ibw_events *ev = ibw_monitor_events(r->h->m);
	static struct ibw_event buf[4096];
	unsigned long since = 0;
	unsigned n;

	if (arg(r->conn, "since") &&
	    parse_num(arg(r->conn, "since"), 0xffffffffUL, &since) < 0) {
		set_problem(r, 400, "since must be an event number");
		return;
	}
	n = ibw_events_since(ev, since, buf, 4096);
	set_json(r, 200,
		 json_pack("{s:o, s:o}", "last_seq",
			   ibw_json_u64(ibw_events_last_seq(ev)), "events",
			   ibw_json_events(buf, n)));
}

/* Constant time: the token is a secret. */
static int token_ok(const struct ibw_http *h, struct MHD_Connection *c)
{
	const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    "Authorization");
	size_t n, i;
	unsigned diff = 0;

	if (!a || strncmp(a, "Bearer ", 7))
		return 0;
	a += 7;
	n = strlen(h->token);
	if (strlen(a) != n)
		return 0;
	for (i = 0; i < n; i++)
		diff |= (unsigned)(a[i] ^ h->token[i]);
	return diff == 0;
}

/* The snapshot's part is rendered once per snapshot and shared by every
 * scrape of it (no copy); each scrape adds the few lines that change by
 * the second. */
static void metrics(struct req *r, struct ibw_snapshot *s,
		    const struct ibw_engine_stats *st, uint64_t now, int om,
		    int gz)
{
	struct ibw_http *h = r->h;
	struct mcache *mc = h->cache[om];
	struct mbody *b;
	char *live;
	size_t llen;

	if (!mc || mc->seq != s->seq) {
		mcache_unref(mc);
		mc = calloc(1, sizeof(*mc));
		h->cache[om] = mc;
		if (!mc)
			return;
		mc->refs = 1;
		mc->seq = s->seq;
		mc->text = ibw_prom_render_snapshot(s, om, &mc->len);
		if (!mc->text) {
			mcache_unref(mc);
			h->cache[om] = NULL;
			return;
		}
		mcache_gzip(mc);
		trim_after(mc->len);
	}
	b = calloc(1, sizeof(*b));
	live = ibw_prom_render_live(s, st, now, om, &llen);
	if (!b || !live) {
		free(b);
		free(live);
		return;
	}
	if (gz && mc->have_gz) {
		/* Finish a copy of the flushed stream with the live lines. */
		z_stream zs;
		unsigned char *tail = NULL;
		size_t tlen = 0;

		if (deflateCopy(&zs, &mc->zs) == Z_OK) {
			if (deflate_into(&zs, live, llen, Z_FINISH, &tail,
					 &tlen) == 0) {
				free(live);
				live = (char *)tail;
				llen = tlen;
				b->gz = 1;
			} else {
				free(tail);
			}
			deflateEnd(&zs);
		}
	}
	b->live = live;
	b->live_len = llen;
	b->mc = mc;
	mc->refs++;
	r->shared = b;
}

static void route(struct req *r, const char *url)
{
	struct ibw_http *h = r->h;
	struct ibw_snapshot *s;
	struct ibw_engine_stats st;
	uint64_t now = ibw_realtime_us();
	int ondemand = !strcmp(url, "/api/v1/trace") || !strcmp(url, "/api/v1/"
								     "ping");

	if (h->token && (ondemand || h->o.token_everywhere) &&
	    !token_ok(h, r->conn)) {
		set_problem(r, 401, "a bearer token is required here");
		return;
	}
	s = ibw_monitor_snapshot(h->m);
	ibw_engine_get_stats(h->e, &st);
	if (!strcmp(url, "/healthz")) {
		/* Before the first discovery the local port's state is not
		 * known yet (0): that is no state to report, only no sweep. */
		if (s->local_state && s->local_state != 4)
			set_problem(r, 503, "local port is %s",
				    ibw_port_state_str(s->local_state));
		else if (!s->discoveries || s->local_state != 4 ||
			 ibw_snapshot_stale(s, now))
			set_problem(r, 503, "no fresh sweep");
		else
			set_json(r, 200, json_pack("{s:s}", "status", "ok"));
	} else if (!strcmp(url, "/metrics")) {
		const char *acc = MHD_lookup_connection_value(
			r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

		const char *enc = MHD_lookup_connection_value(
			r->conn, MHD_HEADER_KIND,
			MHD_HTTP_HEADER_ACCEPT_ENCODING);
		int om = acc && strstr(acc, "application/openmetrics-text");

		metrics(r, s, &st, now, om, enc && strstr(enc, "gzip"));
		r->ctype = om ? "application/openmetrics-text; "
				"version=1.0.0; charset=utf-8"
			      : "text/plain; version=0.0.4; charset=utf-8";
		r->code = 200;
	} else if (!strcmp(url, "/api/v1/status")) {
		set_json(r, 200, ibw_json_status(s, &st, now));
	} else if (!strcmp(url, "/api/v1/nodes")) {
		if (!json_hit(r, s->seq, url))
			json_store(r, s->seq, url, ibw_json_nodes(s));
	} else if (!strncmp(url, "/api/v1/nodes/", 14)) {
		uint64_t g;
		json_t *j;

		if (parse_guid(url + 14, &g) < 0) {
			set_problem(r, 400,
				    "a node is named by its GUID, 0x...");
		} else if (!(j = ibw_json_node(s, g))) {
			set_problem(r, 404, "no node 0x%016" PRIx64, g);
		} else {
			set_json(r, 200, j);
		}
	} else if (!strcmp(url, "/api/v1/ports")) {
		do_ports(r, s);
	} else if (!strcmp(url, "/api/v1/endports")) {
		if (!json_hit(r, s->seq, url))
			json_store(r, s->seq, url, ibw_json_endports(s));
	} else if (!strcmp(url, "/api/v1/traces")) {
		if (!json_hit(r, s->seq, url))
			json_store(r, s->seq, url, ibw_json_watched(s));
	} else if (!strcmp(url, "/api/v1/events")) {
		do_events(r);
	} else if (!strcmp(url, "/api/v1/trace")) {
		do_trace(r, s);
	} else if (!strcmp(url, "/api/v1/ping")) {
		do_ping(r);
	} else {
		set_problem(r, 404, "no such path");
	}
	ibw_snapshot_unref(s);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c,
			       const char *url, const char *method,
			       const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	struct ibw_http *h = cls;
	struct req *r = *con_cls;

	if (!r) {
		/* First call: headers only. Refuse what is too big or not a
		 * GET before any body is read. */
		const char *cl = MHD_lookup_connection_value(
			c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		r->h = h;
		r->conn = c;
		*con_cls = r;
		if (cl && strtoull(cl, NULL, 10) > h->o.max_request_bytes) {
			set_problem(r, 413, "request body too large");
			return send_answer(c, r);
		}
		if (strcmp(method, MHD_HTTP_METHOD_GET) &&
		    strcmp(method, MHD_HTTP_METHOD_HEAD)) {
			set_problem(r, 405, "only GET and HEAD are served");
			return send_answer(c, r);
		}
		return MHD_YES;
	}
	if (*upload_data_size) {
		/* No endpoint takes a body: count it, and once it is more
		 * than a request may be, answer 413 at once. */
		r->uploaded += *upload_data_size;
		*upload_data_size = 0;
		if (r->uploaded > h->o.max_request_bytes && !r->code) {
			set_problem(r, 413, "request body too large");
			return send_answer(c, r);
		}
		return MHD_YES;
	}
	if (r->state == 2 || r->code)
		return send_answer(c, r);
	if (r->state == 1)
		return MHD_YES; /* resumed by mistake: still waiting */
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		set_problem(r, 405, "only GET and HEAD are served");
		return send_answer(c, r);
	}
	route(r, url);
	if (r->state == 1)
		return MHD_YES;
	return send_answer(c, r);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct req *r = *con_cls;

	if (!r)
		return;
	*con_cls = NULL;
	if (r->probing) {
		/* A probe is still under way: its callback frees this. */
		r->orphan = 1;
		unlink_waiting(r->h, r);
		return;
	}
	free(r->body);
	if (r->shared)
		mbody_free(r->shared);
	free(r);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	/* A client that hangs up before its answer is sent is the client's
	 * business (wrk at the end of a run, a scraper's timeout): debug. */
	if (strstr(msg, "no longer available for sending") ||
	    strstr(msg, "Connection reset") || strstr(msg, "Broken pipe") ||
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

static void run(struct ibw_http *h)
{
	MHD_UNSIGNED_LONG_LONG ms;
	uint64_t next = UINT64_MAX;
	unsigned i;

	for (i = 0; i < h->nl; i++) {
		const union MHD_DaemonInfo *di;

		MHD_run(h->l[i].d);
		if (MHD_get_timeout(h->l[i].d, &ms) == MHD_YES &&
		    ms * 1000u < next)
			next = ms * 1000u;
		/* libmicrohttpd 0.9.75 can refuse a request (431: its query
		 * arguments do not fit the connection's memory) and then
		 * neither send the answer nor close until the next MHD_run,
		 * while reporting no fd event and the 30 s idle timeout: each
		 * such request would hold a connection slot for 30 s. Run it
		 * again soon whenever connections are open. */
		di = MHD_get_daemon_info(h->l[i].d,
					 MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
		if (di && di->num_connections && next > CONN_POLL_US)
			next = CONN_POLL_US;
	}
	/* With TLS, GnuTLS can hold data that no fd reports (a record
	 * half written when the socket filled): look again soon. */
	if (h->cert && next > TLS_POLL_US)
		next = TLS_POLL_US;
	if (next != UINT64_MAX)
		ibw_timer_arm(h->timer, next);
}

static void on_fd(struct ibw_loop *loop, int fd, unsigned ev, void *arg)
{
	run(arg);
}

static void on_timer(struct ibw_timer *t, void *arg)
{
	run(arg);
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
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
			 MHD_USE_ERROR_LOG;
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
	if (h->cert)
		l->d = MHD_start_daemon(
			flags, 0, NULL, NULL, handler, h,
			MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
			MHD_OPTION_SOCK_ADDR, &ss, MHD_OPTION_CONNECTION_LIMIT,
			(unsigned)h->o.max_connections,
			MHD_OPTION_CONNECTION_MEMORY_LIMIT,
			(size_t)h->o.max_request_bytes * 2,
			MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
			MHD_OPTION_NOTIFY_COMPLETED, completed, h,
			MHD_OPTION_HTTPS_MEM_CERT, h->cert,
			MHD_OPTION_HTTPS_MEM_KEY, h->key, MHD_OPTION_END);
	else
		/* The logger first: MHD logs to stderr about the options
		 * before it (the TLS branch above does the same). */
		l->d = MHD_start_daemon(flags, 0, NULL, NULL, handler, h,
					MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
					MHD_OPTION_SOCK_ADDR, &ss,
					MHD_OPTION_CONNECTION_LIMIT,
					(unsigned)h->o.max_connections,
					MHD_OPTION_CONNECTION_MEMORY_LIMIT,
					(size_t)h->o.max_request_bytes * 2,
					MHD_OPTION_CONNECTION_TIMEOUT,
					(unsigned)30,
					MHD_OPTION_NOTIFY_COMPLETED, completed,
					h, MHD_OPTION_END);
	if (!l->d) {
		snprintf(err, errlen, "cannot listen on %s: %s", addr,
			 strerror(errno ? errno : EADDRINUSE));
		return -1;
	}
	h->nl++;
	di = MHD_get_daemon_info(l->d, MHD_DAEMON_INFO_EPOLL_FD);
	l->epfd = di ? di->epoll_fd : -1;
	di = MHD_get_daemon_info(l->d, MHD_DAEMON_INFO_BIND_PORT);
	l->port = di ? di->port : 0;
	if (l->epfd < 0 ||
	    ibw_loop_watch(h->loop, l->epfd, IBW_EV_READ, on_fd, h) < 0) {
		snprintf(err, errlen, "cannot plug the HTTP server in");
		return -1;
	}
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
	h->m = m;
	h->e = e;
	h->o = *o;
	if (!h->o.nlisten) {
		h->o.listen[0] = "127.0.0.1:9776";
		h->o.nlisten = 1;
	}
	if (!h->o.max_connections)
		h->o.max_connections = 64;
	if (!h->o.max_request_bytes)
		h->o.max_request_bytes = 16384;
	if (!h->o.ondemand_per_minute)
		h->o.ondemand_per_minute = 60;
	h->timer = ibw_timer_new(loop, on_timer, h);
	if (!h->timer)
		goto fail;
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
	}
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
	struct req *r;
	unsigned i;

	if (!h)
		return;
	/* MHD must not stop with connections suspended. */
	while ((r = h->waiting)) {
		h->waiting = r->next;
		r->state = 2;
		set_problem(r, 503, "the agent is stopping");
		MHD_resume_connection(r->conn);
	}
	for (i = 0; i < h->nl; i++) {
		MHD_run(h->l[i].d);
		if (h->l[i].epfd >= 0)
			ibw_loop_unwatch(h->loop, h->l[i].epfd);
		MHD_stop_daemon(h->l[i].d);
	}
	ibw_timer_free(h->timer);
	mcache_unref(h->cache[0]);
	mcache_unref(h->cache[1]);
	for (i = 0; i < JCACHE_SLOTS; i++)
		mcache_unref(h->jcache[i].mc);
	if (h->token)
		memset(h->token, 0, strlen(h->token));
	free(h->token);
	free(h->cert);
	free(h->key);
	free(h);
}
