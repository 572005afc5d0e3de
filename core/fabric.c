// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loop.h"
#include "fabric.h"

unsigned ibw_fabric_first_port(const struct ibw_fnode *n)
{
	return n->ni.node_type == IBW_NODE_SWITCH ? 0 : 1;
}

int ibw_fabric_endport(const struct ibw_fnode *n, unsigned p)
{
	return n->ni.node_type == IBW_NODE_SWITCH
		       ? p == 0
		       : p >= ibw_fabric_first_port(n);
}

uint16_t ibw_fabric_endport_lid(const struct ibw_fnode *n, unsigned p)
{
	const struct ibw_fport *fp = &n->ports[p];

	return p < n->nports && ibw_fabric_endport(n, p) && fp->have_pi
		       ? fp->pi.lid
		       : 0;
}

struct ibw_fabric *ibw_fabric_new(void)
{
	struct ibw_fabric *f = calloc(1, sizeof(*f));

	if (f)
		f->refs = 1;
	return f;
}

/* Atomic: a snapshot dropped by an HTTP thread drops its fabric. */
struct ibw_fabric *ibw_fabric_ref(struct ibw_fabric *f)
{
	if (f)
		__atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
	return f;
}

void ibw_fabric_unref(struct ibw_fabric *f)
{
	unsigned i;

	if (!f || __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (i = 0; i < f->nnodes; i++)
		free(f->nodes[i].ports);
	free(f->nodes);
	free(f->refusals);
	free(f);
}

int ibw_fabric_add_refusal(struct ibw_fabric *f, uint64_t guid, uint8_t port)
{
	struct ibw_refusal *r = f->refusals;

	/* Doubling: a fabric whose SM protects every switch refuses us
	 * behind each of its ports. */
	if (f->nrefusals == f->refusals_cap) {
		unsigned cap = f->refusals_cap ? f->refusals_cap * 2 : 16;

		r = realloc(f->refusals, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		f->refusals = r;
		f->refusals_cap = cap;
	}
	r[f->nrefusals].guid = guid;
	r[f->nrefusals++].port = port;
	return 0;
}

struct ibw_fnode *ibw_fabric_add_node(struct ibw_fabric *f, uint64_t guid,
				      unsigned nports)
{
	struct ibw_fnode *n;
	unsigned i;

	if (f->nnodes == f->cap) {
		unsigned cap = f->cap ? f->cap * 2 : 64;
		struct ibw_fnode *nn = realloc(f->nodes, cap * sizeof(*nn));

		if (!nn)
			return NULL;
		f->nodes = nn;
		f->cap = cap;
	}
	n = &f->nodes[f->nnodes];
	memset(n, 0, sizeof(*n));
	n->guid = guid;
	n->nports = nports;
	n->ports = calloc(nports ? nports : 1, sizeof(*n->ports));
	if (!n->ports)
		return NULL;
	for (i = 0; i < nports; i++)
		n->ports[i].num = (uint8_t)i;
	f->nnodes++;
	return n;
}

static int cmp_node(const void *a, const void *b)
{
	uint64_t x = ((const struct ibw_fnode *)a)->guid;
	uint64_t y = ((const struct ibw_fnode *)b)->guid;

	return (x > y) - (x < y);
}

void ibw_fabric_freeze(struct ibw_fabric *f)
{
	if (f->nnodes)
		qsort(f->nodes, f->nnodes, sizeof(*f->nodes), cmp_node);
}

static const struct ibw_fnode *find_in(const struct ibw_fnode *nodes,
				       unsigned n, uint64_t guid)
{
	struct ibw_fnode key;

	if (!n)
		return NULL;
	key.guid = guid;
	return bsearch(&key, nodes, n, sizeof(*nodes), cmp_node);
}

const struct ibw_fnode *ibw_fabric_find(const struct ibw_fabric *f,
					uint64_t guid)
{
	return f ? find_in(f->nodes, f->nnodes, guid) : NULL;
}

const struct ibw_fnode *ibw_fabric_find_lid(const struct ibw_fabric *f,
					    uint16_t lid,
					    const struct ibw_fport **port)
{
	unsigned i, p;

	if (!f || !lid)
		return NULL;
	for (i = 0; i < f->nnodes; i++) {
		const struct ibw_fnode *n = &f->nodes[i];

		if (n->gone)
			continue;
		for (p = 0; p < n->nports; p++) {
			const struct ibw_fport *fp = &n->ports[p];
			unsigned span = 1u << fp->pi.lmc;
			uint16_t base = ibw_fabric_endport_lid(n, p);

			if (base && lid >= base && lid < base + span) {
				if (port)
					*port = fp;
				return n;
			}
		}
	}
	return NULL;
}

static void emit(struct ibw_events *ev, enum ibw_event_kind k, uint64_t guid,
		 uint8_t port, uint64_t old_v, uint64_t new_v, uint64_t peer,
		 uint8_t peer_port)
{
	struct ibw_event e;

	memset(&e, 0, sizeof(e));
	e.kind = k;
	e.node_guid = guid;
	e.port = port;
	e.old_value = old_v;
	e.new_value = new_v;
	e.peer_guid = peer;
	e.peer_port = peer_port;
	ibw_events_add(ev, &e);
}

static unsigned diff_port(const struct ibw_fnode *on,
			  const struct ibw_fport *op,
			  const struct ibw_fnode *cn,
			  const struct ibw_fport *cp, struct ibw_events *ev)
{
	unsigned n = 0;
	uint64_t g = cn->guid;
	uint8_t p = cp->num;
	int sw0 = cn->ni.node_type == IBW_NODE_SWITCH;

	if (!op->have_pi && cp->have_pi) {
		emit(ev, IBW_EVT_PORT_ADDED, g, p, 0, 0, 0, 0);
		return 1;
	}
	if (op->have_pi && !cp->have_pi) {
		emit(ev, IBW_EVT_PORT_GONE, g, p, 0, 0, 0, 0);
		return 1;
	}
	if (!cp->have_pi)
		return 0;
	/* A switch's LID lives on port 0; its other ports repeat it. */
	if ((!sw0 || p == 0) && op->pi.lid != cp->pi.lid) {
		emit(ev, IBW_EVT_LID_CHANGED, g, p, op->pi.lid, cp->pi.lid, 0,
		     0);
		n++;
	}
	if (op->pi.state != cp->pi.state) {
		emit(ev, IBW_EVT_PORT_STATE_CHANGED, g, p, op->pi.state,
		     cp->pi.state, 0, 0);
		n++;
	}
	if (cp->pi.state >= IBW_PORT_INIT && op->pi.state >= IBW_PORT_INIT) {
		if (op->pi.width_active != cp->pi.width_active) {
			emit(ev, IBW_EVT_LINK_WIDTH_CHANGED, g, p,
			     op->pi.width_active, cp->pi.width_active, 0, 0);
			n++;
		}
		if (op->pi.speed_active != cp->pi.speed_active ||
		    op->pi.speed_ext_active != cp->pi.speed_ext_active) {
			emit(ev, IBW_EVT_LINK_SPEED_CHANGED, g, p,
			     op->pi.speed_active | op->pi.speed_ext_active << 8,
			     cp->pi.speed_active | cp->pi.speed_ext_active << 8,
			     0, 0);
			n++;
		}
	}
	/* Each link is reported once, from its lower (guid, port) end. */
	if (op->remote_guid != cp->remote_guid ||
	    op->remote_port != cp->remote_port) {
		if (op->remote_guid &&
		    (g < op->remote_guid ||
		     (g == op->remote_guid && p < op->remote_port))) {
			emit(ev, IBW_EVT_LINK_DOWN, g, p, 0, 0, op->remote_guid,
			     op->remote_port);
			n++;
		}
		if (cp->remote_guid &&
		    (g < cp->remote_guid ||
		     (g == cp->remote_guid && p < cp->remote_port))) {
			emit(ev, IBW_EVT_LINK_UP, g, p, 0, 0, cp->remote_guid,
			     cp->remote_port);
			n++;
		}
	}
	(void)on;
	return n;
}

static struct ibw_fnode *carry_gone(struct ibw_fabric *cur,
				    const struct ibw_fnode *on, uint64_t now)
{
	struct ibw_fnode *n = ibw_fabric_add_node(cur, on->guid, on->nports);
	struct ibw_fport *ports;
	unsigned p;

	if (!n)
		return NULL;
	ports = n->ports;
	*n = *on;
	n->ports = ports;
	memcpy(n->ports, on->ports, on->nports * sizeof(*ports));
	if (!on->gone) {
		n->gone = 1;
		n->gone_since_us = now;
	}
	n->is_protected = 0;
	n->protected_since_us = 0;
	/* Its links went with it. */
	for (p = 0; p < n->nports; p++) {
		n->ports[p].remote_guid = 0;
		n->ports[p].remote_port = 0;
	}
	return n;
}

static int listed(const uint64_t *guids, unsigned n, uint64_t guid)
{
	unsigned k;

	for (k = 0; k < n; k++)
		if (guids[k] == guid)
			return 1;
	return 0;
}

/* @on, missing from @cur but refusing our SMPs behind a link that is
 * still there: kept as it was, protected. Its links stay where the other
 * end still leads to it, or is protected too (@prot, @nprot). */
static struct ibw_fnode *carry_protected(struct ibw_fabric *cur, unsigned ncur,
					 const struct ibw_fnode *on,
					 const uint64_t *prot, unsigned nprot,
					 uint64_t now)
{
	struct ibw_fnode *n = carry_gone(cur, on, now);
	unsigned p;

	if (!n)
		return NULL;
	n->gone = 0;
	n->gone_since_us = 0;
	n->is_protected = 1;
	n->protected_since_us = on->is_protected ? on->protected_since_us : now;
	for (p = 0; p < n->nports; p++) {
		const struct ibw_fport *op = &on->ports[p];
		const struct ibw_fnode *rn;

		if (!op->remote_guid)
			continue;
		rn = find_in(cur->nodes, ncur, op->remote_guid);
		if ((rn && op->remote_port < rn->nports &&
		     rn->ports[op->remote_port].remote_guid == on->guid &&
		     rn->ports[op->remote_port].remote_port == p) ||
		    (!rn && listed(prot, nprot, op->remote_guid))) {
			n->ports[p].remote_guid = op->remote_guid;
			n->ports[p].remote_port = op->remote_port;
		}
	}
	return n;
}

/* Add @guid to @guids (at most @max) unless there; 1 if added. */
static int add_listed(uint64_t *guids, unsigned *n, unsigned max, uint64_t guid)
{
	if (listed(guids, *n, guid) || *n >= max)
		return 0;
	guids[(*n)++] = guid;
	return 1;
}

/*
 * The nodes of @old that @cur lacks because they refuse our SMPs: behind
 * a port of @cur whose peer refused us (peer_protected), or behind a
 * refusing port of such a node that the sweep looked past (a refusal).
 * The link from @cur's side is restored. Returns how many are in
 * @guids (at most @max).
 */
static unsigned protected_nodes(const struct ibw_fabric *old,
				struct ibw_fabric *cur, uint64_t *guids,
				unsigned max)
{
	unsigned i, p, n = 0, more = 1;

	for (i = 0; i < cur->nnodes; i++) {
		struct ibw_fnode *cn = &cur->nodes[i];
		const struct ibw_fnode *on = ibw_fabric_find(old, cn->guid);

		for (p = 0; on && p < cn->nports && p < on->nports; p++) {
			struct ibw_fport *cp = &cn->ports[p];
			const struct ibw_fport *op = &on->ports[p];

			if (!cp->peer_protected || cp->remote_guid ||
			    !op->remote_guid ||
			    find_in(cur->nodes, cur->nnodes, op->remote_guid))
				continue;
			cp->remote_guid = op->remote_guid;
			cp->remote_port = op->remote_port;
			add_listed(guids, &n, max, op->remote_guid);
		}
	}
	/* Behind those, as far as refusals go. */
	while (more) {
		more = 0;
		for (i = 0; i < cur->nrefusals; i++) {
			const struct ibw_refusal *r = &cur->refusals[i];
			const struct ibw_fnode *on;
			uint64_t g;

			if (!listed(guids, n, r->guid))
				continue;
			on = ibw_fabric_find(old, r->guid);
			if (!on || r->port >= on->nports)
				continue;
			g = on->ports[r->port].remote_guid;
			if (g && !find_in(cur->nodes, cur->nnodes, g))
				more |= add_listed(guids, &n, max, g);
		}
	}
	return n;
}

unsigned ibw_fabric_diff(const struct ibw_fabric *old, struct ibw_fabric *cur,
			 struct ibw_events *ev)
{
	unsigned i, p, n = 0, ncur = cur->nnodes, added_gone = 0, nprot = 0;
	uint64_t now = ibw_realtime_us();
	uint64_t *prot = NULL;

	/* The first sweep is the baseline, not a list of changes. */
	if (!old)
		return 0;

	/* First the nodes that refuse us: their links are not down. */
	prot = calloc(old->nnodes + 1, sizeof(*prot));
	if (prot)
		nprot = protected_nodes(old, cur, prot, old->nnodes);

	for (i = 0; i < ncur; i++) {
		struct ibw_fnode *cn = &cur->nodes[i];
		const struct ibw_fnode *on = ibw_fabric_find(old, cn->guid);

		/* A NodeDescription lost this sweep (its NodeInfo answered):
		 * keep the name we had rather than blank it. */
		if (on && !cn->desc[0] && on->desc[0])
			memcpy(cn->desc, on->desc, sizeof(cn->desc));

		if (!on || on->gone) {
			emit(ev, IBW_EVT_NODE_ADDED, cn->guid, 0, 0, 0, 0, 0);
			n++;
			for (p = 0; p < cn->nports; p++) {
				const struct ibw_fport *cp = &cn->ports[p];

				if (cp->remote_guid &&
				    (cn->guid < cp->remote_guid ||
				     (cn->guid == cp->remote_guid &&
				      p < cp->remote_port))) {
					emit(ev, IBW_EVT_LINK_UP, cn->guid, p,
					     0, 0, cp->remote_guid,
					     cp->remote_port);
					n++;
				}
			}
			continue;
		}
		for (p = 0; p < cn->nports && p < on->nports; p++)
			n += diff_port(on, &on->ports[p], cn, &cn->ports[p],
				       ev);
	}
	for (i = 0; i < old->nnodes; i++) {
		const struct ibw_fnode *on = &old->nodes[i];

		/* Only the sorted part: gone nodes are appended below. */
		if (find_in(cur->nodes, ncur, on->guid))
			continue;
		if (listed(prot, nprot, on->guid)) {
			if (carry_protected(cur, ncur, on, prot, nprot, now))
				added_gone++;
			continue;
		}
		if (!on->gone) {
			emit(ev, IBW_EVT_NODE_GONE, on->guid, 0, 0, 0, 0, 0);
			n++;
			for (p = 0; p < on->nports; p++) {
				const struct ibw_fport *op = &on->ports[p];

				if (op->remote_guid &&
				    (on->guid < op->remote_guid ||
				     (on->guid == op->remote_guid &&
				      p < op->remote_port))) {
					emit(ev, IBW_EVT_LINK_DOWN, on->guid, p,
					     0, 0, op->remote_guid,
					     op->remote_port);
					n++;
				}
			}
		}
		if (carry_gone(cur, on, now))
			added_gone++;
	}
	free(prot);
	if (added_gone)
		ibw_fabric_freeze(cur);
	return n;
}
