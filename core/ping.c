// SPDX-License-Identifier: BSD-2-Clause
/*
 * Endport liveness: the endports of the fabric, their periodic probes
 * (echo, PMA or SMP), each answer accounted into loss, latency and the
 * state machine, and a loss confirmed through the SA and a directed
 * route before an endport is called down. On-demand pings are
 * ping_demand.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec.h"
#include "loop.h"
#include "ping_int.h"
#include "sa.h"

double ibw_ping_loss_pct(uint64_t lost, uint64_t sent)
{
	return sent ? 100.0 * (double)lost / (double)sent : 0.0;
}

#define ECHO_PROBE_EVERY 10 /* auto: look for a responder this often */
/* auto: looks in flight at most, until the fabric shows that its hosts
 * answer them (with an echo or "not supported") and again after one
 * went unanswered */
#define ECHO_LOOKS_UNSURE 16

static const char *const method_names[] = { "auto", "echo", "pma", "smp" };
static const char *const state_names[] = { "unknown", "up", "degraded",
					   "down" };

const char *ibw_ping_method_str(enum ibw_ping_method m)
{
	return (unsigned)m < 4 ? method_names[m] : "unknown";
}

int ibw_ping_method_parse(const char *s, enum ibw_ping_method *m)
{
	unsigned i;

	for (i = 0; i < 4; i++) {
		if (!strcmp(s, method_names[i])) {
			*m = (enum ibw_ping_method)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *ibw_endport_state_str(enum ibw_endport_state s)
{
	return (unsigned)s < 4 ? state_names[s] : "unknown";
}

static void pattern(uint8_t *buf, uint16_t seq)
{
	unsigned i;

	for (i = 0; i < ECHO_PATTERN_LEN; i++)
		buf[i] = (uint8_t)(seq * 31u + i * 7u + 1u);
}

/* The request for one probe. */
void ibw_ping_build(struct ibw_mad_req *r, uint16_t lid, enum ibw_ping_method m,
		    enum ibw_echo_type type, uint16_t id, uint16_t seq,
		    uint8_t *payload, unsigned timeout_ms, int retries)
{
	uint8_t pat[ECHO_PATTERN_LEN];

	memset(r, 0, sizeof(*r));
	ibw_dest_lid(&r->dest, lid);
	r->method = IBW_METHOD_GET;
	r->timeout_ms = timeout_ms;
	r->retries = retries;
	switch (m) {
	case IBW_PING_SMP:
		r->mgmt_class = IBW_CLASS_SMI;
		r->attr_id = IBW_ATTR_NODE_INFO;
		break;
	case IBW_PING_PMA:
		r->mgmt_class = IBW_CLASS_PERF;
		r->attr_id = IBW_ATTR_CLASS_PORT_INFO;
		break;
	default:
		r->mgmt_class = IBW_CLASS_VENDOR_ECHO;
		r->attr_id = 0;
		pattern(pat, seq);
		ibw_echo_request(payload, type, id, seq, pat, sizeof(pat));
		r->data = payload;
		r->data_len = IBW_ECHO_PAYLOAD;
		break;
	}
}

/* Did an echo answer echo what we sent? Fills @host for ibping-style
 * answers. Returns 1 good, 0 bad. */
int ibw_ping_check_echo(const struct ibw_mad_done *d, enum ibw_echo_type type,
			uint16_t id, uint16_t seq, struct ibw_echo_reply *rep)
{
	uint8_t pat[ECHO_PATTERN_LEN];

	if (ibw_echo_parse_reply(d->mad, d->len, rep) < 0)
		return 0;
	if (rep->type == IBW_ECHO_IBPING)
		return 1; /* ibping -S: its host name is the answer */
	if (rep->id != id || rep->seq != seq)
		return 0;
	switch (type) {
	case IBW_ECHO_REQ:
		pattern(pat, seq);
		return rep->type == IBW_ECHO_RESP &&
		       !memcmp(rep->data, pat, sizeof(pat));
	case IBW_TS_REQ:
		return rep->type == IBW_TS_RESP;
	case IBW_INFO_REQ:
		return rep->type == IBW_INFO_RESP;
	default:
		return 1;
	}
}

/*
 * An answer that says nobody serves the request at that port: a Linux
 * host's MAD layer answers a Get of a class no process registered with
 * "method/attribute not supported" (0x000C; 0x0004 and 0x0008 for a bad
 * version or method) at once, and a PMA may answer with a redirect. The
 * port is alive; there is no responder there. Not a loss, in any mode.
 */
int ibw_ping_no_responder(const struct ibw_mad_done *d)
{
	unsigned code;

	if (d->result != IBW_MAD_STATUS)
		return 0;
	if (d->status & IB_MAD_STS_REDIRECT)
		return 1;
	code = ((unsigned)d->status >> 2) & 7;
	return code >= 1 && code <= 3;
}

static void emit_state(struct ibw_events *ev, const struct ibw_endport *ep,
		       enum ibw_endport_state from)
{
	struct ibw_event e;

	if (!ev)
		return;
	memset(&e, 0, sizeof(e));
	e.kind = IBW_EVT_ENDPORT_STATE;
	e.node_guid = ep->node_guid;
	snprintf(e.name, sizeof(e.name), "%s", ep->name);
	e.port = ep->port;
	e.peer_guid = ep->port_guid;
	e.old_value = from;
	e.new_value = ep->state;
	snprintf(e.what, sizeof(e.what), "%.47s", ep->reason);
	ibw_events_add(ev, &e);
}

int ibw_endport_account(struct ibw_endport *ep, const struct ibw_ping_opts *o,
			int ok, uint64_t rtt_us, struct ibw_events *ev)
{
	unsigned win = o->window ? o->window : IBW_PING_DEFAULT_WINDOW;
	unsigned down_after = o->down_after ? o->down_after
					    : IBW_PING_DEFAULT_DOWN_AFTER;
	unsigned up_after = o->up_after ? o->up_after
					: IBW_PING_DEFAULT_UP_AFTER;
	unsigned deg = o->degraded_loss_pct ? o->degraded_loss_pct
					    : IBW_PING_DEFAULT_DEGRADED_PCT;
	unsigned rec = o->recover_loss_pct ? o->recover_loss_pct
					   : IBW_PING_DEFAULT_RECOVER_PCT;
	enum ibw_endport_state old = ep->state, nw = ep->state;
	unsigned i, lost = 0;
	double loss;

	if (win > IBW_PING_WINDOW_MAX)
		win = IBW_PING_WINDOW_MAX;
	ep->sent++;
	if (ok)
		ep->win_lost[ep->win_pos / 64] &= ~(1ull << (ep->win_pos % 64));
	else
		ep->win_lost[ep->win_pos / 64] |= 1ull << (ep->win_pos % 64);
	ep->win_pos = (ep->win_pos + 1) % win;
	if (ep->window_n < win)
		ep->window_n++;
	for (i = 0; i < win; i++)
		lost += (ep->win_lost[i / 64] >> (i % 64)) & 1;
	ep->window_lost = lost;
	loss = ibw_ping_loss_pct(lost, ep->window_n);
	if (ok) {
		double mean;

		ep->received++;
		ep->consec_ok++;
		ep->consec_fail = 0;
		ep->rtt_last_us = rtt_us;
		if (!ep->rtt_n || rtt_us < ep->rtt_min_us)
			ep->rtt_min_us = rtt_us;
		if (rtt_us > ep->rtt_max_us)
			ep->rtt_max_us = rtt_us;
		ep->rtt_n++;
		ep->rtt_sum += (double)rtt_us;
		ep->rtt_sum2 += (double)rtt_us * (double)rtt_us;
		mean = ep->rtt_sum / (double)ep->rtt_n;
		ep->rtt_avg_us = mean;
		/* mdev as ping(8) prints it: the standard deviation */
		ep->rtt_mdev_us = sqrt(fmax(
			0.0, ep->rtt_sum2 / (double)ep->rtt_n - mean * mean));
		ep->last_reply_us = ibw_realtime_us();
	} else {
		ep->consec_fail++;
		ep->consec_ok = 0;
	}
	if (ok)
		ep->still_active = 0;
	if (ep->consec_fail >= down_after) {
		nw = IBW_EP_DOWN;
		snprintf(ep->reason, sizeof(ep->reason),
			 "%u probes in a row unanswered%s", ep->consec_fail,
			 ep->still_active ? "; port active" : "");
	} else if (old == IBW_EP_UNKNOWN || old == IBW_EP_DOWN) {
		if (ep->consec_ok >= up_after) {
			nw = loss >= deg && ep->window_n >= 10 ? IBW_EP_DEGRADED
							       : IBW_EP_UP;
			snprintf(ep->reason, sizeof(ep->reason),
				 "%u probes in a row answered", ep->consec_ok);
		}
	} else if (ep->window_n >= (win < 10 ? win : 10)) {
		if (old == IBW_EP_UP && loss >= deg) {
			nw = IBW_EP_DEGRADED;
			snprintf(ep->reason, sizeof(ep->reason),
				 "loss %.0f%% over %u probes", loss,
				 ep->window_n);
		} else if (old == IBW_EP_DEGRADED && loss <= rec) {
			nw = IBW_EP_UP;
			snprintf(ep->reason, sizeof(ep->reason),
				 "loss %.0f%% over %u probes", loss,
				 ep->window_n);
		}
	}
	if (nw == old)
		return 0;
	ep->state = nw;
	ep->state_since_us = ibw_realtime_us();
	/* Coming up at start is not news; everything else is. */
	if (!(old == IBW_EP_UNKNOWN && nw == IBW_EP_UP))
		emit_state(ev, ep, old);
	return 1;
}

/* ---- periodic probes ---- */

struct probe {
	struct ibw_pinger *p;
	uint64_t port_guid; /* find the endport again by GUID */
	enum ibw_ping_method method;
	int auto_echo; /* an auto probe trying echo first */
	int look; /* ... at an endport with no responder known */
	uint16_t seq;
	uint8_t payload[IBW_ECHO_PAYLOAD];
	int in_round;
	uint16_t lid; /* where it went */
	/* confirming its loss: the step, the LID being tried */
	int stage;
	uint16_t cand;
};

static unsigned gidx_home(uint64_t guid, unsigned cap)
{
	/* GUIDs of one vendor differ in their low bits: multiply them
	 * apart (Fibonacci hashing) and take the high bits. */
	return (unsigned)((guid * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static void gidx_put(struct ibw_pinger *p, unsigned i)
{
	unsigned h = gidx_home(p->eps[i].port_guid, p->gidx_cap);

	while (p->gidx[h])
		h = (h + 1) & (p->gidx_cap - 1);
	p->gidx[h] = i + 1;
}

/* Index every endport with a GUID again (after growth, or after a
 * configured target's GUID changed); on failure lookups scan. */
static void gidx_rebuild(struct ibw_pinger *p)
{
	unsigned cap = 64, i;

	while (cap < 2 * p->neps)
		cap *= 2;
	free(p->gidx);
	p->gidx = calloc(cap, sizeof(*p->gidx));
	p->gidx_cap = p->gidx ? cap : 0;
	for (i = 0; p->gidx && i < p->neps; i++)
		if (p->eps[i].port_guid)
			gidx_put(p, i);
}

static struct ibw_endport *ep_find(struct ibw_pinger *p, uint64_t guid)
{
	unsigned i, h, v;

	if (!guid || !p->gidx) {
		for (i = 0; i < p->neps; i++)
			if (p->eps[i].port_guid == guid)
				return &p->eps[i];
		return NULL;
	}
	/* An entry may be stale (a target's GUID changed since): each is
	 * checked against its endport. */
	for (h = gidx_home(guid, p->gidx_cap); (v = p->gidx[h]);
	     h = (h + 1) & (p->gidx_cap - 1))
		if (v <= p->neps && p->eps[v - 1].port_guid == guid)
			return &p->eps[v - 1];
	return NULL;
}

static void send_probe(struct ibw_pinger *p, struct ibw_endport *ep,
		       int in_round);

/* One probe of a round is settled. */
static void round_step(struct ibw_pinger *p, int in_round)
{
	if (in_round && p->round_left && --p->round_left == 0 && p->round_cb)
		p->round_cb(p, p->round_arg);
}

/* ---- confirming a loss ---- */

/*
 * Before an endport goes down, make sure it is not merely elsewhere: the
 * SM gives ports new LIDs (a restart, another LMC) and our pings go to
 * the old one until the next discovery. So the loss that would take it
 * down is held while the SA says which LID its port GUID has now; if
 * that is another LID, it is pinged. If the SA cannot say (it is being
 * restarted itself), names the same LID, or its LID does not answer, a
 * directed route to where the last discovery found the node asks the
 * port itself. An answer at a new LID moves the endport there (an
 * endport_moved event) and counts as the probe's answer. A port that
 * names a new LID of its own but does not answer there yet (the SM
 * gives LIDs before it routes them) moves too: its losses were at an
 * address it no longer has, so the run of them starts again. Otherwise
 * the loss counts as it would have.
 */
enum { CF_SA = 1, CF_PING_SA, CF_DR_NODE, CF_DR_PORT, CF_PING_DR };

static void on_confirm_ping(const struct ibw_mad_done *d, void *arg);
static void on_confirm_dr(const struct ibw_mad_done *d, void *arg);

static unsigned down_after(const struct ibw_ping_opts *o)
{
	return o->down_after ? o->down_after : IBW_PING_DEFAULT_DOWN_AFTER;
}

/* Is this loss the one that takes @ep down, and can we look for it? */
static int confirm_wanted(const struct ibw_pinger *p,
			  const struct ibw_endport *ep)
{
	return ep->state != IBW_EP_DOWN && ep->port_guid &&
	       ep->consec_fail + 1 >= down_after(&p->o) &&
	       (p->sm_lid || ep->dr.directed);
}

/* The confirmation is over: account the probe as answered or lost. */
static void confirm_end(struct ibw_pinger *p, struct probe *pr,
			struct ibw_endport *ep, int ok, uint64_t rtt_us)
{
	ep->busy = 0;
	ibw_endport_account(ep, &p->o, ok, rtt_us, p->ev);
	if (!ok && p->loss_cb)
		p->loss_cb(p->loss_arg);
	round_step(p, pr->in_round);
	free(pr);
}

/* The endport a confirmation step is about, or NULL when the step has
 * nothing more to do (the engine is going, the target went, our own port
 * is lost): then @pr is freed. */
static struct ibw_endport *confirm_ep(struct probe *pr, int cancelled)
{
	struct ibw_pinger *p = pr->p;
	struct ibw_endport *ep;

	if (cancelled) {
		free(pr);
		return NULL;
	}
	ep = ep_find(p, pr->port_guid);
	if (!ep || p->paused) {
		if (ep)
			ep->busy = 0;
		round_step(p, pr->in_round);
		free(pr);
		return NULL;
	}
	return ep;
}

static int confirm_ping(struct ibw_pinger *p, struct probe *pr,
			struct ibw_endport *ep, uint16_t lid, int stage)
{
	struct ibw_mad_req r;

	pr->stage = stage;
	pr->cand = lid;
	pr->seq = ++ep->seq;
	ibw_ping_build(&r, lid, pr->method, IBW_ECHO_REQ, p->id, pr->seq,
		       pr->payload, p->o.timeout_ms, p->o.retries);
	r.cb = on_confirm_ping;
	r.arg = pr;
	return ibw_engine_submit(p->e, &r);
}

static int confirm_dr(struct ibw_pinger *p, struct probe *pr,
		      struct ibw_endport *ep, int stage)
{
	struct ibw_mad_req r;

	if (!ep->dr.directed)
		return -ENOENT;
	pr->stage = stage;
	memset(&r, 0, sizeof(r));
	r.dest = ep->dr;
	r.mgmt_class = IBW_CLASS_SMI_DR;
	r.method = IBW_METHOD_GET;
	if (stage == CF_DR_NODE) {
		r.attr_id = IBW_ATTR_NODE_INFO;
	} else {
		r.attr_id = IBW_ATTR_PORT_INFO;
		r.attr_mod = ep->port;
	}
	r.timeout_ms = p->o.timeout_ms;
	r.retries = p->o.retries;
	r.cb = on_confirm_dr;
	r.arg = pr;
	return ibw_engine_submit(p->e, &r);
}

static void moved(struct ibw_pinger *p, struct ibw_endport *ep, uint16_t from,
		  uint16_t to, const char *how)
{
	struct ibw_event e;

	ep->lid = to;
	if (!p->ev)
		return;
	memset(&e, 0, sizeof(e));
	e.kind = IBW_EVT_ENDPORT_MOVED;
	e.node_guid = ep->node_guid;
	snprintf(e.name, sizeof(e.name), "%s", ep->name);
	e.port = ep->port;
	e.peer_guid = ep->port_guid;
	e.old_value = from;
	e.new_value = to;
	snprintf(e.what, sizeof(e.what), "found by %s", how);
	ibw_events_add(p->ev, &e);
}

/* The port says it has @lid now, but nothing answered there yet. */
static void moved_silent(struct ibw_pinger *p, struct probe *pr,
			 struct ibw_endport *ep, uint16_t lid)
{
	moved(p, ep, pr->lid, lid, "its port, silent there yet");
	ep->consec_fail = 0;
	confirm_end(p, pr, ep, 0, 0);
}

static void on_confirm_ping(const struct ibw_mad_done *d, void *arg)
{
	struct probe *pr = arg;
	struct ibw_pinger *p = pr->p;
	struct ibw_endport *ep;
	struct ibw_echo_reply rep;
	int ok = d->result == IBW_MAD_OK;

	ep = confirm_ep(pr, d->result == IBW_MAD_CANCELLED);
	if (!ep)
		return;
	if (ok && pr->method == IBW_PING_ECHO)
		ok = ibw_ping_check_echo(d, IBW_ECHO_REQ, p->id, pr->seq, &rep);
	if (ibw_ping_no_responder(d))
		ok = 1; /* the port answered at that LID */
	if (ok) {
		moved(p, ep, pr->lid, pr->cand,
		      pr->stage == CF_PING_SA ? "the SA" : "a directed route");
		confirm_end(p, pr, ep, 1, d->rtt_us);
		return;
	}
	/* The SA's LID is silent: the port itself may know better. */
	if (pr->stage == CF_PING_SA && confirm_dr(p, pr, ep, CF_DR_NODE) == 0)
		return;
	if (pr->stage == CF_PING_DR) {
		moved_silent(p, pr, ep, pr->cand);
		return;
	}
	confirm_end(p, pr, ep, 0, 0);
}

static void on_confirm_dr(const struct ibw_mad_done *d, void *arg)
{
	struct probe *pr = arg;
	struct ibw_pinger *p = pr->p;
	struct ibw_endport *ep;
	struct ibw_nodeinfo ni;
	struct ibw_portinfo pi;

	ep = confirm_ep(pr, d->result == IBW_MAD_CANCELLED);
	if (!ep)
		return;
	if (d->result == IBW_MAD_OK && pr->stage == CF_DR_NODE) {
		/* The path may lead elsewhere since that discovery. */
		if (ibw_nodeinfo_decode(d->mad, d->len, &ni) == 0 &&
		    ni.node_guid == ep->node_guid &&
		    confirm_dr(p, pr, ep, CF_DR_PORT) == 0)
			return;
	} else if (d->result == IBW_MAD_OK && pr->stage == CF_DR_PORT &&
		   ibw_portinfo_decode(d->mad, d->len, &pi) == 0) {
		if (pi.lid && pi.lid != pr->lid) {
			/* The port has another LID than the one we pinged. */
			if (pi.lid != pr->cand &&
			    confirm_ping(p, pr, ep, pi.lid, CF_PING_DR) == 0)
				return;
			moved_silent(p, pr, ep, pi.lid);
			return;
		}
		/* Active at the LID that went silent: a loss all the same
		 * (the path to that LID or the agent behind it is broken,
		 * say a link of the route down before the SM routes around
		 * it), but the reason says the port itself is up (until
		 * a discovery finds it not active or not at all). */
		ep->still_active = pi.lid && pi.state == IBW_PORT_ACTIVE;
	}
	confirm_end(p, pr, ep, 0, 0);
}

static void on_confirm_sa(const struct ibw_sa_lid *r, void *arg)
{
	struct probe *pr = arg;
	struct ibw_pinger *p = pr->p;
	struct ibw_endport *ep;

	ep = confirm_ep(pr, r->result == IBW_MAD_CANCELLED);
	if (!ep)
		return;
	if (r->result == IBW_MAD_OK && r->lid && r->lid != pr->lid &&
	    confirm_ping(p, pr, ep, r->lid, CF_PING_SA) == 0)
		return;
	/* No SA, or it names the LID that just went silent (its records
	 * may lag behind the ports): ask the port. */
	if (confirm_dr(p, pr, ep, CF_DR_NODE) == 0)
		return;
	confirm_end(p, pr, ep, 0, 0);
}

/* Hold @pr's loss while we look for its endport elsewhere. */
static void confirm_start(struct ibw_pinger *p, struct ibw_endport *ep,
			  struct probe *pr)
{
	ep->busy = 1;
	ep->still_active = 0;
	pr->cand = 0;
	if (p->sm_lid) {
		pr->stage = CF_SA;
		if (ibw_sa_lid_by_guid(p->e, p->sm_lid, ep->port_guid,
				       on_confirm_sa, pr) == 0)
			return;
	}
	if (confirm_dr(p, pr, ep, CF_DR_NODE) == 0)
		return;
	confirm_end(p, pr, ep, 0, 0);
}

static void probe_done(const struct ibw_mad_done *d, void *arg)
{
	struct probe *pr = arg;
	struct ibw_pinger *p = pr->p;
	struct ibw_endport *ep;
	struct ibw_echo_reply rep;
	int ok = d->result == IBW_MAD_OK;

	if (d->result == IBW_MAD_CANCELLED) {
		free(pr);
		return;
	}
	if (pr->look) {
		p->looks_inflight--;
		p->looks_answered = d->result != IBW_MAD_TIMEOUT;
	}
	ep = ep_find(p, pr->port_guid);
	if (ep && p->paused) {
		/* Our own port went away: what was in flight says nothing
		 * about the endport. */
		ep->busy = 0;
		free(pr);
		return;
	}
	if (!ep) {
		free(pr);
		return;
	}
	if (ok && (pr->method == IBW_PING_ECHO || pr->auto_echo)) {
		ok = ibw_ping_check_echo(d, IBW_ECHO_REQ, p->id, pr->seq, &rep);
		if (ok && rep.type == IBW_ECHO_IBPING)
			snprintf(ep->responder_host, sizeof(ep->responder_host),
				 "%s", rep.host);
		if (ok)
			ep->echo_answered = 1;
	}
	if (ibw_ping_no_responder(d)) {
		/* Alive, with nobody to echo. auto asks the PMA in the same
		 * probe, as when its echo gets no answer, and goes on with
		 * PMA pings until its next look for a responder. */
		if (!pr->auto_echo)
			ok = 1;
		if (pr->method == IBW_PING_ECHO || pr->auto_echo) {
			ep->echo_answered = 0;
			ep->responder_host[0] = '\0';
		}
	}
	if (!ok && pr->auto_echo) {
		/* No responder there (or it went): this probe is a PMA
		 * one after all. */
		ep->echo_answered = 0;
		ep->busy = 0;
		ep->last_method = IBW_PING_PMA;
		{
			struct probe *np = calloc(1, sizeof(*np));
			struct ibw_mad_req r;

			if (np) {
				*np = *pr;
				np->auto_echo = 0;
				np->look = 0;
				np->method = IBW_PING_PMA;
				np->lid = ep->lid;
				ibw_ping_build(&r, ep->lid, IBW_PING_PMA, 0, 0,
					       0, NULL, p->o.timeout_ms,
					       p->o.retries);
				r.cb = probe_done;
				r.arg = np;
				if (ibw_engine_submit(p->e, &r) == 0) {
					ep->busy = 1;
					free(pr);
					return;
				}
				free(np);
			}
		}
	}
	ep->busy = 0;
	if (!ok && confirm_wanted(p, ep)) {
		confirm_start(p, ep, pr);
		return;
	}
	ibw_endport_account(ep, &p->o, ok, ok ? d->rtt_us : 0, p->ev);
	if (!ok && p->loss_cb)
		p->loss_cb(p->loss_arg);
	round_step(p, pr->in_round);
	free(pr);
}

static void send_probe(struct ibw_pinger *p, struct ibw_endport *ep,
		       int in_round)
{
	struct probe *pr;
	struct ibw_mad_req r;
	enum ibw_ping_method m = p->o.method;

	if (!ep->lid) {
		/* Nowhere to send it: a lost probe all the same. */
		ibw_endport_account(ep, &p->o, 0, 0, p->ev);
		round_step(p, in_round);
		return;
	}
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return;
	pr->p = p;
	pr->port_guid = ep->port_guid;
	pr->seq = ++ep->seq;
	pr->in_round = in_round;
	if (m == IBW_PING_AUTO) {
		/*
		 * A look for a responder that nobody answers waits out its
		 * timeout; where the hosts drop the echo class (ibsim's do;
		 * a Linux host answers "not supported" at once), a round of
		 * looks would fill the engine's window with tries that only
		 * time out. So until looks are seen answered, a few look at
		 * a time, the rest ping by PMA and look at a later ping.
		 */
		int look = !ep->echo_answered &&
			   ep->sent % ECHO_PROBE_EVERY == 0;

		if (look && !p->looks_answered &&
		    p->looks_inflight >= ECHO_LOOKS_UNSURE)
			look = 0;
		if (ep->echo_answered || look) {
			m = IBW_PING_ECHO;
			pr->auto_echo = 1;
			pr->look = look;
			p->looks_inflight += look;
		} else {
			m = IBW_PING_PMA;
		}
	}
	pr->method = m;
	pr->lid = ep->lid;
	ep->last_method = m;
	ibw_ping_build(&r, ep->lid, m, IBW_ECHO_REQ, p->id, pr->seq,
		       pr->payload, p->o.timeout_ms, p->o.retries);
	r.cb = probe_done;
	r.arg = pr;
	if (ibw_engine_submit(p->e, &r) < 0) {
		p->looks_inflight -= pr->look;
		free(pr);
		ibw_endport_account(ep, &p->o, 0, 0, p->ev);
		return;
	}
	ep->busy = 1;
}

static void arm(struct ibw_pinger *p)
{
	uint64_t next = 0;
	unsigned i;

	if (p->paused)
		return;

	for (i = 0; i < p->neps; i++)
		if (!next || p->eps[i].next_due < next)
			next = p->eps[i].next_due;
	if (next)
		ibw_timer_arm_at(p->timer, next);
}

static void on_tick(struct ibw_timer *t, void *arg)
{
	struct ibw_pinger *p = arg;
	uint64_t now = ibw_now_us();
	unsigned i;

	for (i = 0; i < p->neps; i++) {
		struct ibw_endport *ep = &p->eps[i];

		if (ep->next_due > now)
			continue;
		ep->next_due += p->o.interval_us;
		if (ep->next_due <= now)
			ep->next_due = now + p->o.interval_us;
		if (ep->busy)
			continue; /* still waiting: that one is slow */
		send_probe(p, ep, 0);
	}
	if (p->periodic && !p->paused)
		arm(p);
}

void ibw_pinger_on_loss(struct ibw_pinger *p, void (*cb)(void *arg), void *arg)
{
	p->loss_cb = cb;
	p->loss_arg = arg;
}

void ibw_pinger_pause(struct ibw_pinger *p, int paused)
{
	if (p->paused == !!paused)
		return;
	p->paused = !!paused;
	if (paused) {
		ibw_timer_disarm(p->timer);
	} else if (p->periodic) {
		uint64_t now = ibw_now_us();
		unsigned i;

		/* Due again from now, spread as at the start. */
		for (i = 0; i < p->neps; i++)
			if (p->eps[i].next_due < now)
				p->eps[i].next_due = now;
		arm(p);
	}
}

struct ibw_pinger *ibw_pinger_new(struct ibw_engine *e, struct ibw_events *ev,
				  const struct ibw_ping_opts *o)
{
	struct ibw_pinger *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->e = e;
	p->ev = ev;
	if (o)
		p->o = *o;
	else
		p->o.retries = -1;
	if (!p->o.interval_us)
		p->o.interval_us =
			(uint64_t)IBW_PING_DEFAULT_INTERVAL_MS * 1000u;
	if (!p->o.timeout_ms)
		p->o.timeout_ms = IBW_PING_DEFAULT_TIMEOUT_MS;
	if (p->o.retries < 0)
		p->o.retries = IBW_PING_DEFAULT_RETRIES;
	p->id = (uint16_t)(ibw_now_us() ^ (uintptr_t)p);
	p->timer = ibw_timer_new(ibw_engine_loop(e), on_tick, p);
	if (!p->timer) {
		free(p);
		return NULL;
	}
	return p;
}

void ibw_pinger_free(struct ibw_pinger *p)
{
	if (!p)
		return;
	ibw_timer_free(p->timer);
	free(p->gidx);
	free(p->eps);
	free(p);
}

static struct ibw_endport *ep_add(struct ibw_pinger *p, uint64_t guid)
{
	struct ibw_endport *ep;

	if (p->neps == p->cap) {
		unsigned cap = p->cap ? p->cap * 2 : 64;
		struct ibw_endport *n = realloc(p->eps, cap * sizeof(*n));

		if (!n)
			return NULL;
		p->eps = n;
		p->cap = cap;
	}
	ep = &p->eps[p->neps++];
	memset(ep, 0, sizeof(*ep));
	ep->port_guid = guid;
	if (2 * p->neps > p->gidx_cap)
		gidx_rebuild(p);
	else if (guid)
		gidx_put(p, p->neps - 1);
	ep->state_since_us = ibw_realtime_us();
	/* Spread first probes over the interval. */
	ep->next_due = ibw_now_us() +
		       (guid * 2654435761u) %
			       (p->o.interval_us ? p->o.interval_us : 1);
	return ep;
}

static void fill(struct ibw_endport *ep, const struct ibw_fnode *n,
		 const struct ibw_fport *fp, const char *name)
{
	ep->node_guid = n->guid;
	ep->port = fp->num;
	ep->lid = fp->pi.lid;
	ep->dr = n->dr;
	ep->found = 1;
	ep->seen = 1;
	/* A port the discovery finds not active is not "still active". */
	if (fp->pi.state != IBW_PORT_ACTIVE)
		ep->still_active = 0;
	snprintf(ep->name, sizeof(ep->name), "%s", name ? name : n->desc);
}

/* After a discovery: an endport it did not find is not "still active"
 * either. */
static void unseen_not_active(struct ibw_pinger *p)
{
	unsigned i;

	for (i = 0; i < p->neps; i++)
		if (!p->eps[i].seen)
			p->eps[i].still_active = 0;
}

/* The first endport of @n with a LID (its port or node GUID @guid, or
 * any with @guid 0): 0 with @nout and @pout set, else -ENOENT. */
static int endport_of(const struct ibw_fnode *n, uint64_t guid,
		      const struct ibw_fnode **nout,
		      const struct ibw_fport **pout)
{
	unsigned p;

	for (p = 0; p < n->nports; p++) {
		if (guid && n->ports[p].guid != guid && n->guid != guid)
			continue;
		if (ibw_fabric_endport_lid(n, p)) {
			*nout = n;
			*pout = &n->ports[p];
			return 0;
		}
	}
	return -ENOENT;
}

/* Resolve one configured target in @f: a LID, a GUID (port or node) or a
 * node name. */
static int resolve(const struct ibw_fabric *f, const char *t,
		   const char *(*name_of)(const struct ibw_fnode *, void *),
		   void *arg, const struct ibw_fnode **nout,
		   const struct ibw_fport **pout)
{
	char *end;
	unsigned long long v;
	unsigned i;

	v = strtoull(t, &end, 0);
	if (*t && !*end) {
		if (strncmp(t, "0x", 2) && v && v < 0xc000) {
			*nout = ibw_fabric_find_lid(f, (uint16_t)v, pout);
			return *nout ? 0 : -ENOENT;
		}
		for (i = 0; i < f->nnodes; i++)
			if (endport_of(&f->nodes[i], v, nout, pout) == 0)
				return 0;
		return -ENOENT;
	}
	for (i = 0; i < f->nnodes; i++) {
		const struct ibw_fnode *n = &f->nodes[i];
		const char *nm = name_of ? name_of(n, arg) : n->desc;

		if (strcmp(nm, t) && strcmp(n->desc, t))
			continue;
		if (endport_of(n, 0, nout, pout) == 0)
			return 0;
	}
	return -ENOENT;
}

/* Give back the room the doubling left once a fabric is in (an endport
 * is 1,064 bytes: 6.6 MB of 17 at 10,368 endports); ep_add() moves the
 * array anyway, so no one holds a pointer into it across updates. */
static void eps_fit(struct ibw_pinger *p)
{
	struct ibw_endport *n;

	if (p->cap - p->neps <= 64 || !p->neps)
		return;
	n = realloc(p->eps, p->neps * sizeof(*n));
	if (!n)
		return;
	p->eps = n;
	p->cap = p->neps;
}

void ibw_pinger_update(struct ibw_pinger *p, const struct ibw_fabric *f,
		       const char *(*name_of)(const struct ibw_fnode *n,
					      void *arg),
		       void *arg)
{
	const struct ibw_fnode *ln = ibw_fabric_find(f, f->local_guid);
	unsigned i, k;
	struct ibw_endport *ep;

	/* The SA confirms losses: the SM our own port names. */
	if (ln && ln->ni.local_port < ln->nports &&
	    ln->ports[ln->ni.local_port].have_pi)
		p->sm_lid = ln->ports[ln->ni.local_port].pi.sm_lid;
	for (i = 0; i < p->neps; i++)
		p->eps[i].seen = 0;
	if (p->o.ntargets) {
		for (k = 0; k < p->o.ntargets; k++) {
			const struct ibw_fnode *n = NULL;
			const struct ibw_fport *fp = NULL;
			const char *t = p->o.targets[k];

			for (i = 0; i < p->neps; i++)
				if (!strcmp(p->eps[i].target, t))
					break;
			ep = i < p->neps ? &p->eps[i] : NULL;
			if (resolve(f, t, name_of, arg, &n, &fp) == 0) {
				if (!ep)
					ep = ep_add(p, fp->guid);
				if (!ep)
					continue;
				ep->port_guid = fp->guid;
				fill(ep, n, fp,
				     name_of ? name_of(n, arg) : NULL);
			} else if (!ep) {
				/* Not in the fabric (yet): kept, unknown. */
				ep = ep_add(p, 0);
				if (!ep)
					continue;
				ep->seen = 1;
				snprintf(ep->name, sizeof(ep->name), "%s", t);
				snprintf(ep->reason, sizeof(ep->reason),
					 "not found in the fabric");
			} else {
				ep->seen = 1;
			}
			snprintf(ep->target, sizeof(ep->target), "%s", t);
		}
		/* A target may name another port now. */
		gidx_rebuild(p);
		unseen_not_active(p);
		eps_fit(p);
		return;
	}
	for (i = 0; i < f->nnodes; i++) {
		const struct ibw_fnode *n = &f->nodes[i];
		unsigned pn;

		if (n->gone)
			continue;
		for (pn = 0; pn < n->nports; pn++) {
			const struct ibw_fport *fp = &n->ports[pn];

			if (!fp->have_pi || !fp->pi.lid || !fp->guid)
				continue;
			if (p->o.capmask_bits) {
				if ((fp->pi.capmask & p->o.capmask_bits) !=
					    p->o.capmask_bits ||
				    !ibw_fabric_endport(n, pn))
					continue;
			} else if (n->ni.node_type == IBW_NODE_SWITCH ||
				   !ibw_fabric_endport(n, pn)) {
				continue;
			}
			ep = ep_find(p, fp->guid);
			if (!ep)
				ep = ep_add(p, fp->guid);
			if (ep)
				fill(ep, n, fp,
				     name_of ? name_of(n, arg) : NULL);
		}
	}
	/* Endports no longer discovered stay, at their last LID: their
	 * pings tell whether they are really gone. */
	unseen_not_active(p);
	eps_fit(p);
}

void ibw_pinger_start(struct ibw_pinger *p)
{
	p->periodic = 1;
	arm(p);
}

int ibw_pinger_round(struct ibw_pinger *p,
		     void (*cb)(struct ibw_pinger *p, void *arg), void *arg)
{
	unsigned i, n = 0;

	if (p->round_left)
		return -EBUSY;
	for (i = 0; i < p->neps; i++)
		n += !p->eps[i].busy;
	if (!n)
		return -ENOENT;
	p->round_cb = cb;
	p->round_arg = arg;
	p->round_left = n;
	for (i = 0; i < p->neps; i++)
		if (!p->eps[i].busy)
			send_probe(p, &p->eps[i], 1);
	return 0;
}

const struct ibw_endport *ibw_pinger_endports(const struct ibw_pinger *p,
					      unsigned *n)
{
	*n = p->neps;
	return p->eps;
}
