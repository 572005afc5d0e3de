// SPDX-License-Identifier: BSD-2-Clause
/* The on-demand probes of the HTTP API (probes.h). */
#include <errno.h>
#include <string.h>

#include "answer.h"
#include "hreq.h"
#include "json.h"
#include "probes.h"
#include "query.h"

#define MAX_PING_COUNT 100

/* On the loop: a probe was started for @r; its callback answers, then
 * lands it. The connection is suspended already (the server handed it
 * over). */
static void suspend(struct ibw_hreq *r)
{
	r->cb_pending = 1;
}

/* In a probe's callback: whether @r still wants the answer (its
 * connection is there and nothing answered it meanwhile). READY:
 * answered already (the agent is stopping). The loop alone sets READY
 * on a request it holds: no lock. */
static int probe_wanted(const struct ibw_hreq *r)
{
	return !r->detached && r->state != IBW_HREQ_READY;
}

static void on_trace(const struct ibw_trace *t, void *arg)
{
	struct ibw_hreq *r = arg;

	if (probe_wanted(r)) {
		if (t->fwd.status == IBW_TRACE_TIMEOUT)
			ibw_hreq_problem_ext(r, 504, "trace", ibw_json_trace(t),
					     "hop %u did not answer: %s",
					     t->fwd.fail_hop, t->fwd.reason);
		else
			ibw_hreq_set_json(r, 200, ibw_json_trace(t));
	}
	r->srv->probe_landed(r);
}

static void on_ping(const struct ibw_ping_summary *s, void *arg)
{
	struct ibw_hreq *r = arg;

	if (probe_wanted(r)) {
		if (!s->received)
			ibw_hreq_problem_ext(r, 504, "ping",
					     ibw_json_ping_summary(s),
					     "no answer to %u pings", s->sent);
		else
			ibw_hreq_set_json(r, 200, ibw_json_ping_summary(s));
	}
	r->srv->probe_landed(r);
}

void ibw_serve_trace(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	struct ibw_monitor *m = r->ctx->m;
	const char *t = ibw_hreq_arg(r, "target"),
		   *rev = ibw_hreq_arg(r, "reverse");
	const char *src = ibw_hreq_arg(r, "source");
	unsigned long tmo = 5000;
	unsigned flags = 0;
	uint16_t lid, slid = 0;
	int rc;

	if (!t || !*t) {
		ibw_hreq_problem(r, 400,
				 "give a target: a LID, a GUID or a name");
		return;
	}
	if (ibw_hreq_arg(r, "timeout_ms") &&
	    ibw_parse_num(ibw_hreq_arg(r, "timeout_ms"), 60000, &tmo) < 0) {
		ibw_hreq_problem(r, 400,
				 "timeout_ms must be a number up to 60000");
		return;
	}
	if (rev && strcmp(rev, "0") && strcmp(rev, "1")) {
		ibw_hreq_problem(r, 400, "reverse must be 0 or 1");
		return;
	}
	if (rev && !strcmp(rev, "1"))
		flags |= IBW_TRACE_REVERSE;
	lid = ibw_monitor_resolve(m, t);
	if (!lid) {
		ibw_hreq_problem(r, 404, "unknown target '%s'", t);
		return;
	}
	if (src && *src && !(slid = ibw_monitor_resolve(m, src))) {
		ibw_hreq_problem(r, 404, "unknown source '%s'", src);
		return;
	}
	if (!r->srv->allow_probe(r)) {
		ibw_hreq_problem(r, 429, "too many on-demand probes from here");
		return;
	}
	rc = ibw_trace_start_from(ibw_monitor_tracer(m), slid, lid, flags,
				  (unsigned)(tmo ? tmo : 5000), on_trace, r);
	if (rc == -ENOENT) {
		ibw_hreq_problem(r, 404, "the source '%s' is not in the fabric",
				 src ? src : "");
		return;
	}
	if (rc == -EBUSY) {
		ibw_hreq_problem(r, 429, "too many traces under way");
		return;
	}
	if (rc < 0) {
		ibw_hreq_problem(r, 400, "cannot trace to lid %u: %s", lid,
				 strerror(-rc));
		return;
	}
	suspend(r);
}

void ibw_serve_ping(struct ibw_hreq *r, struct ibw_snapshot *s)
{
	struct ibw_monitor *mon = r->ctx->m;
	struct ibw_pinger *p = ibw_monitor_pinger(mon);
	const char *t = ibw_hreq_arg(r, "target"),
		   *ms = ibw_hreq_arg(r, "method");
	unsigned long count = 5, tmo = 0;
	enum ibw_ping_method m = IBW_PING_AUTO;
	uint16_t lid;
	int rc;

	if (!t || !*t) {
		ibw_hreq_problem(r, 400,
				 "give a target: a LID, a GUID or a name");
		return;
	}
	if (ibw_hreq_arg(r, "count") &&
	    (ibw_parse_num(ibw_hreq_arg(r, "count"), MAX_PING_COUNT, &count) <
		     0 ||
	     !count)) {
		ibw_hreq_problem(r, 400, "count must be 1 to %d",
				 MAX_PING_COUNT);
		return;
	}
	if (ibw_hreq_arg(r, "timeout_ms") &&
	    ibw_parse_num(ibw_hreq_arg(r, "timeout_ms"), 10000, &tmo) < 0) {
		ibw_hreq_problem(r, 400,
				 "timeout_ms must be a number up to 10000");
		return;
	}
	if (ms && ibw_ping_method_parse(ms, &m) < 0) {
		ibw_hreq_problem(r, 400,
				 "method must be auto, echo, pma or smp");
		return;
	}
	if (!p) {
		ibw_hreq_problem(r, 503, "pings are turned off (--no-ping)");
		return;
	}
	lid = ibw_monitor_resolve(mon, t);
	if (!lid) {
		ibw_hreq_problem(r, 404, "unknown target '%s'", t);
		return;
	}
	if (!r->srv->allow_probe(r)) {
		ibw_hreq_problem(r, 429, "too many on-demand probes from here");
		return;
	}
	rc = ibw_ping_run(p, lid, m, IBW_ECHO_REQ, (unsigned)count,
			  (unsigned)tmo, on_ping, r);
	if (rc == -EBUSY) {
		ibw_hreq_problem(r, 429, "too many pings under way");
		return;
	}
	if (rc < 0) {
		ibw_hreq_problem(r, 400, "cannot ping lid %u: %s", lid,
				 strerror(-rc));
		return;
	}
	suspend(r);
}
