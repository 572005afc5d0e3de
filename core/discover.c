// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "discover.h"
#include "loop.h"

/* One outstanding query of a sweep. */
struct op {
	struct ibw_discover *d;
	uint64_t sweep; /* answers from an older sweep are dropped */
	uint64_t guid; /* node the query is about (0: not known yet) */
	struct ibw_dest dr;
	uint16_t attr;
	uint32_t mod;
	/* NodeInfo through a port: where we came from */
	uint64_t from_guid;
	uint8_t from_port;
	/* PortInfo asking whether a port is still active after the node
	 * behind it did not answer */
	uint8_t confirm;
};

struct ibw_discover {
	struct ibw_engine *e;
	struct ibw_discover_opts o;
	struct ibw_fabric *f; /* being built */
	uint64_t sweep;
	unsigned pending;
	uint64_t t0_mono;
	ibw_discover_cb cb;
	void *arg;
	struct ibw_fabric *prev; /* the last sweep's picture, or NULL */
	/* switches refusing us that this sweep looked past already */
	uint64_t *past;
	unsigned npast, cappast;
	/* guid -> node index (open addressing, linear probing) */
	uint64_t *hkeys;
	unsigned *hvals;
	unsigned hcap;
};

static unsigned hslot(uint64_t key, unsigned cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (unsigned)key & (cap - 1);
}

static int hgrow(struct ibw_discover *d)
{
	unsigned cap = d->hcap ? d->hcap * 2 : 1024, i;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	unsigned *vals = calloc(cap, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (i = 0; i < d->hcap; i++) {
		unsigned s;

		if (!d->hkeys[i])
			continue;
		for (s = hslot(d->hkeys[i], cap); keys[s];
		     s = (s + 1) & (cap - 1))
			;
		keys[s] = d->hkeys[i];
		vals[s] = d->hvals[i];
	}
	free(d->hkeys);
	free(d->hvals);
	d->hkeys = keys;
	d->hvals = vals;
	d->hcap = cap;
	return 0;
}

static struct ibw_fnode *node_of(struct ibw_discover *d, uint64_t guid)
{
	unsigned s;

	if (!d->hcap || !guid)
		return NULL;
	for (s = hslot(guid, d->hcap); d->hkeys[s]; s = (s + 1) & (d->hcap - 1))
		if (d->hkeys[s] == guid)
			return &d->f->nodes[d->hvals[s]];
	return NULL;
}

static struct ibw_fnode *node_add(struct ibw_discover *d, uint64_t guid,
				  unsigned nports)
{
	struct ibw_fnode *n;
	unsigned s;

	if ((d->f->nnodes + 1) * 2 > d->hcap && hgrow(d) < 0)
		return NULL;
	n = ibw_fabric_add_node(d->f, guid, nports);
	if (!n)
		return NULL;
	for (s = hslot(guid, d->hcap); d->hkeys[s]; s = (s + 1) & (d->hcap - 1))
		;
	d->hkeys[s] = guid;
	d->hvals[s] = d->f->nnodes - 1;
	return n;
}

static void on_answer(const struct ibw_mad_done *done, void *arg);

static struct op *query(struct ibw_discover *d, uint64_t guid,
			const struct ibw_dest *dr, uint16_t attr, uint32_t mod,
			uint64_t from_guid, uint8_t from_port)
{
	struct op *op = calloc(1, sizeof(*op));
	struct ibw_mad_req r;

	if (!op) {
		d->f->sweep.errors++;
		return NULL;
	}
	op->d = d;
	op->sweep = d->sweep;
	op->guid = guid;
	op->dr = *dr;
	op->attr = attr;
	op->mod = mod;
	op->from_guid = from_guid;
	op->from_port = from_port;
	memset(&r, 0, sizeof(r));
	r.dest = *dr;
	r.mgmt_class = IBW_CLASS_SMI_DR;
	r.method = IBW_METHOD_GET;
	r.attr_id = attr;
	r.attr_mod = mod;
	r.timeout_ms = d->o.timeout_ms;
	r.retries = d->o.retries;
	r.cb = on_answer;
	r.arg = op;
	if (ibw_engine_submit(d->e, &r) < 0) {
		d->f->sweep.errors++;
		free(op);
		return NULL;
	}
	d->pending++;
	d->f->sweep.mads++;
	return op;
}

static void finish(struct ibw_discover *d)
{
	struct ibw_fabric *f = d->f;
	unsigned i, p;

	/* A node's LID: port 0 of a switch, else its first port with one. */
	for (i = 0; i < f->nnodes; i++) {
		struct ibw_fnode *n = &f->nodes[i];

		for (p = 0; p < n->nports && !n->lid; p++) {
			if (n->ni.node_type == IBW_NODE_SWITCH && p)
				break;
			if (n->ports[p].have_pi)
				n->lid = n->ports[p].pi.lid;
		}
	}
	ibw_fabric_freeze(f);
	f->sweep.duration_us = ibw_now_us() - d->t0_mono;
	d->f = NULL;
	d->cb(f, d->arg);
}

static void link_ports(struct ibw_discover *d, uint64_t a, uint8_t ap,
		       uint64_t b, uint8_t bp)
{
	struct ibw_fnode *na = node_of(d, a), *nb = node_of(d, b);

	if (!na && nb && bp < nb->nports) {
		/* Reached through a switch that refuses us (silent_peer):
		 * only this end is in the picture; the fabric's diff keeps
		 * the other. */
		nb->ports[bp].remote_guid = a;
		nb->ports[bp].remote_port = ap;
		return;
	}
	if (!na || !nb || ap >= na->nports || bp >= nb->nports)
		return;
	na->ports[ap].remote_guid = b;
	na->ports[ap].remote_port = bp;
	nb->ports[bp].remote_guid = a;
	nb->ports[bp].remote_port = ap;
}

static void got_nodeinfo(struct ibw_discover *d, const struct op *op,
			 const struct ibw_mad_done *done)
{
	struct ibw_nodeinfo ni;
	struct ibw_fnode *n;
	unsigned p, first, last;

	if (ibw_nodeinfo_decode(done->mad, done->len, &ni) < 0 ||
	    !ni.node_guid || ni.num_ports > 254) {
		d->f->sweep.errors++;
		return;
	}
	n = node_of(d, ni.node_guid);
	if (n) {
		/* Known node, reached again: a link, and for a CA maybe the
		 * GUID of another of its ports. */
		if (ni.local_port < n->nports && !n->ports[ni.local_port].guid)
			n->ports[ni.local_port].guid = ni.port_guid;
		if (op->from_guid)
			link_ports(d, op->from_guid, op->from_port,
				   ni.node_guid, (uint8_t)ni.local_port);
		return;
	}
	n = node_add(d, ni.node_guid, ni.num_ports + 1);
	if (!n) {
		d->f->sweep.errors++;
		return;
	}
	n->ni = ni;
	n->dr = op->dr;
	if (ni.node_type == IBW_NODE_SWITCH) {
		for (p = 0; p < n->nports; p++)
			n->ports[p].guid = ni.port_guid;
	} else if (ni.local_port < n->nports) {
		n->ports[ni.local_port].guid = ni.port_guid;
	}
	if (!op->dr.hops)
		d->f->local_guid = ni.node_guid;
	if (op->from_guid)
		link_ports(d, op->from_guid, op->from_port, ni.node_guid,
			   (uint8_t)ni.local_port);
	query(d, ni.node_guid, &op->dr, IBW_ATTR_NODE_DESC, 0, 0, 0);
	if (ni.node_type == IBW_NODE_SWITCH) {
		query(d, ni.node_guid, &op->dr, IBW_ATTR_SWITCH_INFO, 0, 0, 0);
		first = 0;
	} else {
		first = 1;
	}
	last = ni.num_ports;
	for (p = first; p <= last; p++)
		query(d, ni.node_guid, &op->dr, IBW_ATTR_PORT_INFO, p, 0, 0);
}

/*
 * FDR10 reads as QDR in PortInfo; the Mellanox ExtendedPortInfo (vendor
 * SMP 0xff90) tells them apart. Asked as libibnetdisc does: only of a
 * device known to answer it, for a port LinkUp at QDR with no extended
 * speed active (ibw_mlnx_ext_portinfo_wanted()); on a switch that takes
 * port 0's capability mask, so its ports wait for port 0's PortInfo.
 */
static void ask_ext(struct ibw_discover *d, const struct ibw_fnode *n,
		    const struct ibw_dest *dr, unsigned p)
{
	const struct ibw_portinfo *cap = NULL;

	if (!p || p >= n->nports || !n->ports[p].have_pi)
		return;
	if (n->ni.node_type == IBW_NODE_SWITCH) {
		if (!n->ports[0].have_pi)
			return; /* asked when port 0's answer comes */
		cap = &n->ports[0].pi;
	}
	if (ibw_mlnx_ext_portinfo_wanted(&n->ni, &n->ports[p].pi, cap))
		query(d, n->guid, dr, IBW_ATTR_MLNX_EXT_PORT_INFO, p, 0, 0);
}

static void got_portinfo(struct ibw_discover *d, const struct op *op,
			 const struct ibw_mad_done *done)
{
	struct ibw_fnode *n = node_of(d, op->guid);
	struct ibw_fport *fp;
	struct ibw_dest next;
	unsigned p = op->mod;

	if (!n || p >= n->nports)
		return;
	fp = &n->ports[p];
	if (ibw_portinfo_decode(done->mad, done->len, &fp->pi) < 0) {
		d->f->sweep.errors++;
		return;
	}
	fp->have_pi = 1;
	if (p) {
		ask_ext(d, n, &op->dr, p);
	} else if (n->ni.node_type == IBW_NODE_SWITCH) {
		unsigned q;

		for (q = 1; q < n->nports; q++)
			ask_ext(d, n, &op->dr, q);
	}
	/* Walk on through ports that have a link (Init, Armed or Active):
	 * only switches forward directed-route SMPs, except that the sweep
	 * leaves the local CA through its own port. */
	if (p == 0 || fp->pi.state < IBW_PORT_INIT ||
	    op->dr.hops >= IBW_DR_MAX_HOPS)
		return;
	if (n->ni.node_type != IBW_NODE_SWITCH &&
	    (op->dr.hops > 0 || p != n->ni.local_port))
		return;
	/* Known from the other end already (the way we came in, or a
	 * neighbour that probed us first): one probe per link is enough. */
	if (fp->remote_guid)
		return;
	next = op->dr;
	next.path[++next.hops] = (uint8_t)p;
	query(d, 0, &next, IBW_ATTR_NODE_INFO, 0, n->guid, (uint8_t)p);
}

/*
 * No try of a NodeInfo through an active port was answered: a node is
 * there (the port is active only with a peer the SM brought up) and
 * drops our SMPs. An SMA whose port the SM protected with an M_Key does
 * exactly that with a Get that carries another key: no answer, only its
 * PortInfo:M_KeyViolations counter grows. A link that just went down
 * looks the same, so the port is asked again first (silent_peer); if it
 * is still active, it says so (peer_protected) and the sweep goes on
 * around the node. A switch there that the last sweep knew still
 * forwards directed-route SMPs (only their destination checks the
 * M_Key): the sweep goes on through the ports that had links then.
 */
static void refused(struct ibw_discover *d, struct ibw_fnode *n, unsigned port,
		    const struct ibw_dest *to_x)
{
	const struct ibw_fnode *pn, *x;
	const struct ibw_fport *pp;
	struct ibw_dest next;
	unsigned q;

	n->ports[port].peer_protected = 1;
	pn = ibw_fabric_find(d->prev, n->guid);
	if (!pn || port >= pn->nports)
		return;
	pp = &pn->ports[port];
	x = ibw_fabric_find(d->prev, pp->remote_guid);
	if (!x || x->gone || x->ni.node_type != IBW_NODE_SWITCH ||
	    node_of(d, x->guid) || to_x->hops >= IBW_DR_MAX_HOPS)
		return;
	/* Once per sweep, from the first neighbour that finds it silent. */
	for (q = 0; q < d->npast; q++)
		if (d->past[q] == x->guid)
			return;
	if (d->npast == d->cappast) {
		unsigned cap = d->cappast ? d->cappast * 2 : 16;
		uint64_t *np = realloc(d->past, cap * sizeof(*np));

		if (!np)
			return;
		d->past = np;
		d->cappast = cap;
	}
	d->past[d->npast++] = x->guid;
	/* Every link it had, also to nodes found another way: that end
	 * of each link is all the picture will have of it. */
	for (q = 1; q < x->nports; q++) {
		if (q == pp->remote_port || !x->ports[q].remote_guid)
			continue;
		next = *to_x;
		next.path[++next.hops] = (uint8_t)q;
		query(d, 0, &next, IBW_ATTR_NODE_INFO, 0, x->guid, (uint8_t)q);
	}
}

/* The NodeInfo @op through an active port went unanswered. */
static void silent_peer(struct ibw_discover *d, const struct op *op)
{
	struct ibw_fnode *n = node_of(d, op->from_guid);
	struct ibw_dest here;
	struct op *c;

	if (!n) {
		/* Through a switch we looked past: the diff sees to it. */
		if (ibw_fabric_add_refusal(d->f, op->from_guid, op->from_port) <
		    0)
			d->f->sweep.errors++;
		return;
	}
	if (op->from_port >= n->nports || !n->ports[op->from_port].have_pi ||
	    n->ports[op->from_port].pi.state != IBW_PORT_ACTIVE || !op->dr.hops)
		return;
	/* Is the port still active? */
	here = op->dr;
	here.hops--;
	c = query(d, n->guid, &here, IBW_ATTR_PORT_INFO, op->from_port, 0, 0);
	if (c)
		c->confirm = 1;
}

/* The answer to silent_peer's question. */
static void got_confirm(struct ibw_discover *d, const struct op *op,
			const struct ibw_mad_done *done)
{
	struct ibw_fnode *n = node_of(d, op->guid);
	struct ibw_portinfo pi;
	struct ibw_dest to_x;

	if (!n || op->mod >= n->nports ||
	    ibw_portinfo_decode(done->mad, done->len, &pi) < 0)
		return;
	n->ports[op->mod].pi = pi;
	if (pi.state != IBW_PORT_ACTIVE)
		return;
	to_x = op->dr;
	to_x.path[++to_x.hops] = (uint8_t)op->mod;
	refused(d, n, op->mod, &to_x);
}

static void on_answer(const struct ibw_mad_done *done, void *arg)
{
	struct op *op = arg;
	struct ibw_discover *d = op->d;

	if (!d || op->sweep != d->sweep || !d->f ||
	    done->result == IBW_MAD_CANCELLED) {
		/* An old sweep's answer, or the engine shutting down. */
		if (d && op->sweep == d->sweep && d->pending)
			d->pending--;
		free(op);
		return;
	}
	d->pending--;
	if (done->result == IBW_MAD_TIMEOUT) {
		d->f->sweep.timeouts++;
		if (op->attr == IBW_ATTR_NODE_INFO && op->from_guid)
			silent_peer(d, op);
	} else if (done->result != IBW_MAD_OK) {
		d->f->sweep.errors++;
	} else {
		struct ibw_fnode *n;

		switch (op->attr) {
		case IBW_ATTR_NODE_INFO:
			got_nodeinfo(d, op, done);
			break;
		case IBW_ATTR_PORT_INFO:
			if (op->confirm)
				got_confirm(d, op, done);
			else
				got_portinfo(d, op, done);
			break;
		case IBW_ATTR_MLNX_EXT_PORT_INFO:
			n = node_of(d, op->guid);
			if (n && op->mod < n->nports &&
			    n->ports[op->mod].have_pi &&
			    ibw_mlnx_ext_portinfo_decode(
				    done->mad, done->len,
				    &n->ports[op->mod].pi) < 0)
				d->f->sweep.errors++;
			break;
		case IBW_ATTR_NODE_DESC:
			n = node_of(d, op->guid);
			if (n)
				ibw_nodedesc_decode(done->mad, done->len,
						    n->desc, sizeof(n->desc));
			break;
		case IBW_ATTR_SWITCH_INFO:
			n = node_of(d, op->guid);
			if (n) {
				struct ibw_switchinfo si;

				if (ibw_switchinfo_decode(done->mad, done->len,
							  &si) == 0) {
					n->lft_cap = si.lft_cap;
					n->lft_top = si.lft_top;
				}
			}
			break;
		}
	}
	free(op);
	if (d->pending == 0)
		finish(d);
}

struct ibw_discover *ibw_discover_new(struct ibw_engine *e,
				      const struct ibw_discover_opts *o)
{
	struct ibw_discover *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->e = e;
	if (o) {
		d->o = *o;
	} else {
		d->o.retries = -1;
	}
	return d;
}

int ibw_discover_start(struct ibw_discover *d, ibw_discover_cb cb, void *arg)
{
	struct ibw_dest local;

	if (d->f)
		return -EBUSY;
	d->f = ibw_fabric_new();
	if (!d->f)
		return -ENOMEM;
	if (d->hkeys)
		memset(d->hkeys, 0, d->hcap * sizeof(*d->hkeys));
	d->sweep++;
	d->npast = 0;
	d->cb = cb;
	d->arg = arg;
	d->pending = 0;
	d->t0_mono = ibw_now_us();
	d->f->sweep.start_us = ibw_realtime_us();
	ibw_dest_dr_parse(&local, "0");
	query(d, 0, &local, IBW_ATTR_NODE_INFO, 0, 0, 0);
	if (!d->pending) {
		ibw_fabric_unref(d->f);
		d->f = NULL;
		return -EIO;
	}
	return 0;
}

void ibw_discover_set_prev(struct ibw_discover *d, struct ibw_fabric *f)
{
	ibw_fabric_unref(d->prev);
	d->prev = ibw_fabric_ref(f);
}

void ibw_discover_free(struct ibw_discover *d)
{
	if (!d)
		return;
	ibw_fabric_unref(d->prev);
	free(d->past);
	if (d->f) {
		/* Queries still in flight see a new sweep number and a NULL
		 * fabric; they only free themselves. The engine must be
		 * freed after this (it cancels them). */
		ibw_fabric_unref(d->f);
		d->f = NULL;
	}
	free(d->hkeys);
	free(d->hvals);
	free(d);
}
