// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "echo.h"
#include "trace.h"

#define MAX_TRACES 8
#define LFT_CACHE_MAX 65536

static const char *const status_names[] = {
	[IBW_TRACE_OK] = "ok",
	[IBW_TRACE_NO_ROUTE] = "no route",
	[IBW_TRACE_PORT_DOWN] = "port down",
	[IBW_TRACE_LOOP] = "loop",
	[IBW_TRACE_DEAD_END] = "dead end",
	[IBW_TRACE_TIMEOUT] = "timeout",
	[IBW_TRACE_ERROR] = "error",
};

const char *ibw_trace_status_str(enum ibw_trace_status s)
{
	return (unsigned)s <= IBW_TRACE_ERROR ? status_names[s] : "unknown";
}

const char *ibw_confirm_str(enum ibw_confirm c)
{
	static const char *const n[] = { "not tried", "confirmed", "mismatch",
					 "no responder" };

	return (unsigned)c < 4 ? n[c] : "unknown";
}

struct lft_entry {
	uint64_t guid;
	uint32_t block;
	uint8_t used;
	uint8_t ports[64];
};

struct ibw_tracer {
	struct ibw_engine *e;
	unsigned local_port;
	uint16_t local_lid;
	struct ibw_fabric *f;
	struct lft_entry *lft;
	unsigned lft_cap, lft_n;
	unsigned running;
};

/* What we know of the node we are at. */
struct cur {
	struct ibw_dest dr;
	int have_node, have_desc, have_lid, have_out, have_entry;
	struct ibw_nodeinfo ni;
	const struct ibw_fnode *fn; /* from the fabric, if known there */
	uint8_t in_port;
	uint8_t in_known; /* in_port is set: do not take LocalPortNum */
	uint8_t out_port;
	struct ibw_portinfo out_pi;
};

enum op {
	OP_NODEINFO,
	OP_NODEDESC,
	OP_PORTINFO_LID,
	OP_PORTINFO_OUT,
	OP_LFT,
	OP_CONFIRM,
};

struct tctx {
	struct ibw_tracer *tr;
	struct ibw_trace t;
	unsigned flags;
	ibw_trace_cb cb;
	void *arg;
	uint64_t t0, deadline;
	int reverse; /* walking back */
	struct ibw_path *path;
	uint16_t target;
	struct cur c;
	uint64_t visited[IBW_TRACE_MAX_HOPS + 2];
	struct ibw_dest fwd_dr[IBW_TRACE_MAX_HOPS + 2]; /* of each hop */
	unsigned nvisited;
	enum op op;
	uint32_t lft_block;
	uint8_t src_port; /* the port the trace leaves the source by */
	int remote_src; /* the source is not the local node */
	int done;
	/* The fabric this trace takes node facts from, held for its whole
	 * run: a discovery ending mid-trace replaces the tracer's. */
	struct ibw_fabric *f;
};

static void advance(struct tctx *x);

static struct lft_entry *lft_slot(struct ibw_tracer *tr, uint64_t guid,
				  uint32_t block, int create)
{
	unsigned h, i;

	if (!tr->lft) {
		if (!create)
			return NULL;
		tr->lft_cap = 4096;
		tr->lft = calloc(tr->lft_cap, sizeof(*tr->lft));
		if (!tr->lft)
			return NULL;
	}
	h = (unsigned)((guid * 0x9e3779b97f4a7c15ull) >> 40 ^ block);
	for (i = 0; i < tr->lft_cap; i++) {
		struct lft_entry *e = &tr->lft[(h + i) & (tr->lft_cap - 1)];

		if (e->used && e->guid == guid && e->block == block)
			return e;
		if (!e->used) {
			if (!create)
				return NULL;
			if (tr->lft_n * 2 >= tr->lft_cap) {
				/* Full enough: start over rather than grow
				 * without bound. */
				memset(tr->lft, 0, tr->lft_cap * sizeof(*e));
				tr->lft_n = 0;
				return lft_slot(tr, guid, block, create);
			}
			e->used = 1;
			e->guid = guid;
			e->block = block;
			tr->lft_n++;
			return e;
		}
	}
	return NULL;
}

static void finish(struct tctx *x)
{
	const struct ibw_path *a = &x->t.fwd, *b = &x->t.rev;
	unsigned i;

	x->t.duration_us = ibw_now_us() - x->t0;
	if (x->t.have_reverse && a->status == IBW_TRACE_OK &&
	    b->status == IBW_TRACE_OK) {
		/* Same links both ways: reverse hop i is forward hop
		 * n-1-i with the ports swapped. */
		x->t.differs = a->nhops != b->nhops;
		for (i = 0; !x->t.differs && i < a->nhops; i++) {
			const struct ibw_hop *f = &a->hops[i];
			const struct ibw_hop *r = &b->hops[a->nhops - 1 - i];

			if (f->node_guid != r->node_guid ||
			    f->in_port != r->out_port ||
			    f->out_port != r->in_port)
				x->t.differs = 1;
		}
	}
	x->tr->running--;
	ibw_fabric_unref(x->f);
	x->cb(&x->t, x->arg);
	free(x);
}

static void fail(struct tctx *x, enum ibw_trace_status s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct tctx *x, enum ibw_trace_status s, const char *fmt, ...)
{
	va_list ap;

	x->path->status = s;
	x->path->fail_hop = x->path->nhops ? x->path->nhops - 1 : 0;
	va_start(ap, fmt);
	vsnprintf(x->path->reason, sizeof(x->path->reason), fmt, ap);
	va_end(ap);
	finish(x);
}

static void on_answer(const struct ibw_mad_done *d, void *arg);

static void query(struct tctx *x, enum op op, uint16_t attr, uint32_t mod)
{
	struct ibw_mad_req r;
	uint8_t payload[IBW_ECHO_PAYLOAD];

	memset(&r, 0, sizeof(r));
	x->op = op;
	if (op == OP_CONFIRM) {
		ibw_echo_request(payload, IBW_INFO_REQ, 1, 1, NULL, 0);
		ibw_dest_lid(&r.dest, x->t.dlid);
		r.mgmt_class = IBW_CLASS_VENDOR_ECHO;
		r.data = payload;
		r.data_len = sizeof(payload);
		r.timeout_ms = 200;
		r.retries = 0;
	} else {
		r.dest = x->c.dr;
		r.mgmt_class = IBW_CLASS_SMI_DR;
		r.attr_id = attr;
		r.attr_mod = mod;
		r.retries = -1;
	}
	r.method = IBW_METHOD_GET;
	r.cb = on_answer;
	r.arg = x;
	x->t.mads++;
	if (ibw_engine_submit(x->tr->e, &r) < 0)
		fail(x, IBW_TRACE_ERROR, "cannot send a MAD");
}

static struct ibw_hop *hop(struct tctx *x)
{
	return &x->path->hops[x->path->nhops - 1];
}

static void start_hop(struct tctx *x, const struct ibw_dest *dr,
		      const struct ibw_fnode *fn, uint8_t in_port)
{
	memset(&x->c, 0, sizeof(x->c));
	x->c.dr = *dr;
	x->c.in_port = in_port;
	x->c.in_known = in_port != 0;
	if (fn) {
		x->c.fn = fn;
		x->c.ni = fn->ni;
		x->c.have_node = 1;
	}
	memset(&x->path->hops[x->path->nhops], 0, sizeof(struct ibw_hop));
	if (!x->reverse)
		x->fwd_dr[x->path->nhops] = *dr;
	x->path->nhops++;
}

/* The neighbour across @out of the current node, by the fabric's links. */
static const struct ibw_fnode *fabric_next(struct tctx *x, uint8_t out,
					   uint8_t *in_port)
{
	const struct ibw_fnode *n = x->c.fn;

	if (!n || out >= n->nports || !n->ports[out].remote_guid)
		return NULL;
	*in_port = n->ports[out].remote_port;
	n = ibw_fabric_find(x->f, n->ports[out].remote_guid);
	return n && !n->gone ? n : NULL;
}

static int lid_in(uint16_t target, uint16_t lid, uint8_t lmc)
{
	return lid && target >= lid && target < lid + (1u << lmc);
}

static void start_reverse(struct tctx *x)
{
	x->reverse = 1;
	x->t.have_reverse = 1;
	if (x->t.fwd.nhops < 2) {
		/* Traced to ourselves: there is no way back to walk. */
		x->t.rev = x->t.fwd;
		finish(x);
		return;
	}
	x->path = &x->t.rev;
	x->target = x->t.slid;
	x->nvisited = 0;
	if (!x->target) {
		fail(x, IBW_TRACE_ERROR, "the local LID is not known");
		return;
	}
	/* Start at the destination, by the directed route that reached
	 * it; leave by the port we came in by. */
	{
		struct cur keep = x->c;

		start_hop(x, &keep.dr, keep.fn, 0);
		x->c.ni = keep.ni;
		x->c.have_node = keep.have_node;
	}
	advance(x);
}

/* The destination is reached: confirm, reverse, or finish. */
static void reached(struct tctx *x)
{
	hop(x)->out_port = 0;
	x->path->status = IBW_TRACE_OK;
	if (!x->reverse && (x->flags & IBW_TRACE_CONFIRM) &&
	    x->t.confirm == IBW_CONFIRM_NOT_TRIED) {
		query(x, OP_CONFIRM, 0, 0);
		return;
	}
	if (!x->reverse && (x->flags & IBW_TRACE_REVERSE)) {
		x->t.rev.nhops = 0;
		start_reverse(x);
		return;
	}
	finish(x);
}

static void advance(struct tctx *x)
{
	struct ibw_hop *h;
	const struct ibw_fnode *fn;
	unsigned n;

	for (n = 0; n < 4 * (IBW_TRACE_MAX_HOPS + 2); n++) {
		h = hop(x);
		if (ibw_now_us() > x->deadline) {
			x->t.deadline_hit = 1;
			fail(x, IBW_TRACE_TIMEOUT,
			     "no result within the deadline");
			return;
		}
		if (!x->c.have_node) {
			query(x, OP_NODEINFO, IBW_ATTR_NODE_INFO, 0);
			return;
		}
		if (!h->node_guid) {
			unsigned i;

			h->node_guid = x->c.ni.node_guid;
			h->type = x->c.ni.node_type;
			h->in_port = x->c.in_port;
			if (!x->c.fn)
				x->c.fn = ibw_fabric_find(x->f, h->node_guid);
			if (x->c.fn && x->c.fn->gone)
				x->c.fn = NULL;
			for (i = 0; i < x->nvisited; i++)
				if (x->visited[i] == h->node_guid) {
					fail(x, IBW_TRACE_LOOP,
					     "node 0x%016" PRIx64 " seen twice",
					     h->node_guid);
					return;
				}
			x->visited[x->nvisited++] = h->node_guid;
		}
		fn = x->c.fn;
		if (!x->c.have_desc) {
			if (fn) {
				snprintf(h->name, sizeof(h->name), "%s",
					 fn->desc);
				x->c.have_desc = 1;
			} else {
				query(x, OP_NODEDESC, IBW_ATTR_NODE_DESC, 0);
				return;
			}
		}
		if (!x->c.have_lid) {
			/* A switch's LID is on port 0; a CA's on the port we
			 * are at (the source: the port it leaves by). */
			unsigned lp = h->type == IBW_NODE_SWITCH ? 0
				      : x->c.in_port		 ? x->c.in_port
				      : x->path->nhops == 1 && !x->reverse
					      ? x->src_port
					      : x->c.ni.local_port;

			if (fn && lp < fn->nports && fn->ports[lp].have_pi) {
				h->lid = fn->ports[lp].pi.lid;
				h->lmc = fn->ports[lp].pi.lmc;
				h->port_guid = fn->ports[lp].guid
						       ? fn->ports[lp].guid
						       : x->c.ni.port_guid;
				x->c.have_lid = 1;
			} else {
				query(x, OP_PORTINFO_LID, IBW_ATTR_PORT_INFO,
				      lp);
				return;
			}
		}
		/* Arrived? */
		if (x->path->nhops > 1 || x->reverse) {
			if (lid_in(x->target, h->lid, h->lmc) &&
			    !(x->reverse && x->path->nhops == 1)) {
				reached(x);
				return;
			}
			if (h->type != IBW_NODE_SWITCH &&
			    !(x->reverse && x->path->nhops == 1)) {
				fail(x, IBW_TRACE_DEAD_END,
				     "reached CA %s (lid %u), not lid %u",
				     h->name, h->lid, x->target);
				return;
			}
		} else if (lid_in(x->target, h->lid, h->lmc)) {
			reached(x); /* tracing to ourselves */
			return;
		}
		/* Which way out? */
		if (!x->c.have_entry) {
			if (h->type != IBW_NODE_SWITCH) {
				/* A CA leaves by its port: the local port at
				 * the source, the arrival port going back. */
				x->c.out_port =
					x->reverse
						? x->t.fwd.hops[x->t.fwd.nhops -
								1]
							  .in_port
						: x->src_port;
				if (!x->c.out_port)
					x->c.out_port =
						(uint8_t)x->c.ni.local_port;
			} else {
				uint32_t block = x->target / 64u;
				struct lft_entry *e =
					(x->flags & IBW_TRACE_NOCACHE)
						? NULL
						: lft_slot(x->tr, h->node_guid,
							   block, 0);

				if (!e) {
					x->lft_block = block;
					query(x, OP_LFT, IBW_ATTR_LINEAR_FWD,
					      block);
					return;
				}
				x->c.out_port = e->ports[x->target % 64u];
				if (x->c.out_port == 0xff || !x->c.out_port ||
				    x->c.out_port > x->c.ni.num_ports) {
					h->out_port = x->c.out_port;
					fail(x, IBW_TRACE_NO_ROUTE,
					     "%s has no route to lid %u",
					     h->name, x->target);
					return;
				}
			}
			h->out_port = x->c.out_port;
			x->c.have_entry = 1;
		}
		if (!x->c.have_out) {
			uint8_t o = x->c.out_port;

			if (fn && o < fn->nports && fn->ports[o].have_pi &&
			    !(x->flags & IBW_TRACE_NOCACHE)) {
				x->c.out_pi = fn->ports[o].pi;
				x->c.have_out = 1;
			} else {
				query(x, OP_PORTINFO_OUT, IBW_ATTR_PORT_INFO,
				      o);
				return;
			}
		}
		h->state = x->c.out_pi.state;
		h->width = x->c.out_pi.width_active;
		h->speed = x->c.out_pi.speed_active;
		h->speed_ext = x->c.out_pi.speed_ext_active;
		if (x->c.out_pi.state != IBW_PORT_ACTIVE) {
			fail(x, IBW_TRACE_PORT_DOWN, "%s port %u is %s",
			     h->name, x->c.out_port,
			     ibw_port_state_str(x->c.out_pi.state));
			return;
		}
		if (x->path->nhops > IBW_TRACE_MAX_HOPS ||
		    x->c.dr.hops >= IBW_DR_MAX_HOPS) {
			fail(x, IBW_TRACE_LOOP, "more than %d hops",
			     IBW_TRACE_MAX_HOPS);
			return;
		}
		/* On to the neighbour. */
		if (x->reverse && x->path->nhops == 1 &&
		    h->type != IBW_NODE_SWITCH) {
			/* Leaving the destination CA: a directed route
			 * cannot pass through a CA, but its neighbour is the
			 * switch the forward trace came from. */
			unsigned k = x->t.fwd.nhops - 2;
			const struct ibw_fnode *nf = ibw_fabric_find(
				x->f, x->t.fwd.hops[k].node_guid);

			if (nf && nf->gone)
				nf = NULL;
			start_hop(x, &x->fwd_dr[k], nf,
				  x->t.fwd.hops[k].out_port);
			continue;
		}
		if (!x->reverse && x->remote_src && x->path->nhops == 1 &&
		    h->type != IBW_NODE_SWITCH) {
			/* Leaving a source CA that is not ours: on to its
			 * neighbour by the neighbour's own directed route. */
			uint8_t in = 0;
			const struct ibw_fnode *nf =
				fabric_next(x, x->c.out_port, &in);

			if (!nf) {
				fail(x, IBW_TRACE_ERROR,
				     "the source's neighbour is not known");
				return;
			}
			start_hop(x, &nf->dr, nf, in);
			continue;
		}
		{
			struct ibw_dest next = x->c.dr;
			uint8_t in = 0;
			const struct ibw_fnode *nf =
				(x->flags & IBW_TRACE_NOCACHE)
					? NULL
					: fabric_next(x, x->c.out_port, &in);

			next.path[++next.hops] = x->c.out_port;
			start_hop(x, &next, nf, in);
		}
	}
	fail(x, IBW_TRACE_ERROR, "trace did not settle");
}

static void on_answer(const struct ibw_mad_done *d, void *arg)
{
	struct tctx *x = arg;
	struct ibw_hop *h = hop(x);
	struct ibw_echo_reply rep;
	struct ibw_portinfo pi;

	if (d->result == IBW_MAD_CANCELLED) {
		/* The engine is going away: the callback still runs once. */
		x->t.cancelled = 1;
		fail(x, IBW_TRACE_ERROR, "cancelled");
		return;
	}
	if (x->op == OP_CONFIRM) {
		if (d->result == IBW_MAD_OK &&
		    ibw_echo_parse_reply(d->mad, d->len, &rep) == 0 &&
		    rep.type == IBW_INFO_RESP) {
			uint64_t want = h->type == IBW_NODE_SWITCH
						? h->node_guid
						: h->port_guid;

			x->t.confirm_guid = rep.port_guid;
			x->t.confirm = rep.port_guid == want
					       ? IBW_CONFIRM_OK
					       : IBW_CONFIRM_MISMATCH;
		} else {
			x->t.confirm = IBW_CONFIRM_NO_RESPONDER;
		}
		reached(x);
		return;
	}
	if (d->result != IBW_MAD_OK) {
		const char *what = x->op == OP_LFT ? "LinearForwardingTable"
				   : x->op == OP_NODEINFO ? "NodeInfo"
				   : x->op == OP_NODEDESC ? "NodeDescription"
							  : "PortInfo";
		char dr[300];

		ibw_dest_str(&x->c.dr, dr, sizeof(dr));
		fail(x,
		     d->result == IBW_MAD_TIMEOUT ||
				     d->result == IBW_MAD_TRANSPORT
			     ? IBW_TRACE_TIMEOUT
			     : IBW_TRACE_ERROR,
		     "%s at %s: %s", what, dr, ibw_mad_result_str(d->result));
		return;
	}
	switch (x->op) {
	case OP_NODEINFO:
		if (ibw_nodeinfo_decode(d->mad, d->len, &x->c.ni) < 0)
			goto bad;
		x->c.have_node = 1;
		/* Came in by LocalPortNum (the source has no in port). */
		if (x->path->nhops > 1 && !x->c.in_known)
			x->c.in_port = (uint8_t)x->c.ni.local_port;
		break;
	case OP_NODEDESC:
		ibw_nodedesc_decode(d->mad, d->len, h->name, sizeof(h->name));
		x->c.have_desc = 1;
		break;
	case OP_PORTINFO_LID:
		if (ibw_portinfo_decode(d->mad, d->len, &pi) < 0)
			goto bad;
		h->lid = pi.lid;
		h->lmc = pi.lmc;
		h->port_guid = x->c.ni.port_guid;
		x->c.have_lid = 1;
		break;
	case OP_PORTINFO_OUT:
		if (ibw_portinfo_decode(d->mad, d->len, &x->c.out_pi) < 0)
			goto bad;
		x->c.have_out = 1;
		break;
	case OP_LFT: {
		struct lft_entry *e;
		uint8_t p[IBW_LFT_BLOCK], port;

		if (ibw_lft_block_decode(d->mad, d->len, p) < 0)
			goto bad;
		e = lft_slot(x->tr, h->node_guid, x->lft_block, 1);
		port = p[x->target % IBW_LFT_BLOCK];
		if (e)
			memcpy(e->ports, p, sizeof(p));
		x->c.out_port = port;
		if (port == 0xff || !port || port > x->c.ni.num_ports) {
			h->out_port = port;
			fail(x, IBW_TRACE_NO_ROUTE, "%s has no route to lid %u",
			     h->name, x->target);
			return;
		}
		h->out_port = port;
		x->c.have_entry = 1;
		break;
	}
	default:
		break;
	}
	advance(x);
	return;
bad:
	fail(x, IBW_TRACE_ERROR, "malformed answer");
}

struct ibw_tracer *ibw_tracer_new(struct ibw_engine *e, unsigned local_port)
{
	struct ibw_tracer *tr = calloc(1, sizeof(*tr));

	if (!tr)
		return NULL;
	tr->e = e;
	tr->local_port = local_port;
	return tr;
}

void ibw_tracer_free(struct ibw_tracer *tr)
{
	if (!tr)
		return;
	ibw_fabric_unref(tr->f);
	free(tr->lft);
	free(tr);
}

void ibw_tracer_set_fabric(struct ibw_tracer *tr, struct ibw_fabric *f)
{
	ibw_fabric_unref(tr->f);
	tr->f = ibw_fabric_ref(f);
	if (tr->lft)
		memset(tr->lft, 0, tr->lft_cap * sizeof(*tr->lft));
	tr->lft_n = 0;
}

void ibw_tracer_set_local_lid(struct ibw_tracer *tr, uint16_t lid)
{
	tr->local_lid = lid;
}

int ibw_trace_start(struct ibw_tracer *tr, uint16_t dlid, unsigned flags,
		    unsigned timeout_ms, ibw_trace_cb cb, void *arg)
{
	return ibw_trace_start_from(tr, 0, dlid, flags, timeout_ms, cb, arg);
}

int ibw_trace_start_from(struct ibw_tracer *tr, uint16_t src_lid, uint16_t dlid,
			 unsigned flags, unsigned timeout_ms, ibw_trace_cb cb,
			 void *arg)
{
	const struct ibw_fnode *src = NULL;
	const struct ibw_fport *sp = NULL;
	struct tctx *x;
	struct ibw_dest local;

	if (!dlid || dlid >= 0xc000 || !cb || src_lid >= 0xc000)
		return -EINVAL;
	if (src_lid && src_lid != tr->local_lid) {
		src = ibw_fabric_find_lid(tr->f, src_lid, &sp);
		if (!src)
			return -ENOENT;
	}
	if (tr->running >= MAX_TRACES)
		return -EBUSY;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->tr = tr;
	x->f = ibw_fabric_ref(tr->f);
	x->flags = flags;
	x->cb = cb;
	x->arg = arg;
	x->t0 = ibw_now_us();
	x->deadline =
		x->t0 + (uint64_t)(timeout_ms ? timeout_ms : 5000) * 1000u;
	x->t.dlid = dlid;
	x->t.slid = src ? src_lid : tr->local_lid;
	x->path = &x->t.fwd;
	x->target = dlid;
	x->src_port = src ? sp->num : (uint8_t)tr->local_port;
	x->remote_src = src != NULL;
	tr->running++;
	ibw_dest_dr_parse(&local, "0");
	/* A remote source is reached by its discovered directed route; its
	 * NodeInfo is asked afresh, which also checks it is still there. */
	start_hop(x, src ? &src->dr : &local, NULL, 0);
	/* The first step is a MAD (the local NodeInfo), so the callback
	 * never runs inside this call. */
	query(x, OP_NODEINFO, IBW_ATTR_NODE_INFO, 0);
	return 0;
}

void ibw_path_str(const struct ibw_path *p, char *buf, size_t len)
{
	size_t off = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < p->nhops && off + 1 < len; i++) {
		const struct ibw_hop *h = &p->hops[i];
		int n = snprintf(buf + off, len - off, "%s0x%" PRIx64 "[%u>%u]",
				 i ? " " : "", h->node_guid, h->in_port,
				 h->out_port);

		if (n < 0)
			break;
		off += (size_t)n;
	}
}

int ibw_path_equal(const struct ibw_path *a, const struct ibw_path *b)
{
	unsigned i;

	if (a->status != b->status || a->nhops != b->nhops)
		return 0;
	for (i = 0; i < a->nhops; i++)
		if (a->hops[i].node_guid != b->hops[i].node_guid ||
		    a->hops[i].in_port != b->hops[i].in_port ||
		    a->hops[i].out_port != b->hops[i].out_port)
			return 0;
	return 1;
}
