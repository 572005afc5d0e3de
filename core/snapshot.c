// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "snapshot.h"

struct ibw_snapshot *ibw_snapshot_new(void)
{
	struct ibw_snapshot *s = calloc(1, sizeof(*s));

	if (s)
		s->refs = 1;
	return s;
}

/* Atomic: HTTP threads take and drop references while the loop
 * publishes; the last one out, on any thread, frees. */
struct ibw_snapshot *ibw_snapshot_ref(struct ibw_snapshot *s)
{
	if (s)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	return s;
}

static void drop_views(struct ibw_snapshot *s)
{
	free(s->node_views);
	free(s->port_views);
	free(s->endport_views);
	s->node_views = NULL;
	s->port_views = NULL;
	s->endport_views = NULL;
	s->nnode_views = s->nport_views = 0;
	memset(&s->sum, 0, sizeof(s->sum));
}

void ibw_snapshot_unref(struct ibw_snapshot *s)
{
	unsigned i;

	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL))
		return;
	drop_views(s);
	if (s->names) {
		for (i = 0; s->fabric && i < s->fabric->nnodes; i++)
			free(s->names[i]);
		free(s->names);
	}
	ibw_fabric_unref(s->fabric);
	ibw_link_view_unref(s->links);
	ibw_census_unref(s->census);
	ibw_hw_view_unref(s->hw);
	ibw_jobset_unref(s->jobs);
	if (s->ports_table) {
		ibw_ctr_table_unref(s->ports_table);
	} else if (s->ports) {
		/* records of its own (a test's): their FEC records too */
		for (i = 0; i < s->nports; i++) {
			ibw_ctr_port_release(&s->ports[i]);
		}
		free(s->ports);
	}
	free(s->endports);
	free(s->watched);
	free(s->pma_redirects);
	free(s);
}

const char *ibw_snapshot_node_name(const struct ibw_snapshot *s,
				   const struct ibw_fnode *n)
{
	size_t i;

	if (s->names && s->fabric) {
		i = (size_t)(n - s->fabric->nodes);
		if (i < s->fabric->nnodes && s->names[i])
			return s->names[i];
	}
	return n->desc;
}

int ibw_snapshot_stale(const struct ibw_snapshot *s, uint64_t now_us)
{
	return now_us > s->fresh_until_us;
}

const struct ibw_port_ctrs *ibw_snapshot_port(const struct ibw_snapshot *s,
					      uint64_t guid, uint8_t port)
{
	struct ibw_port_ctrs key;

	if (!s->nports)
		return NULL;
	if (s->ports_table)
		return ibw_ctr_table_find(s->ports_table, guid, port);
	key.guid = guid;
	key.port = port;
	return bsearch(&key, s->ports, s->nports, sizeof(key),
		       ibw_counters_port_cmp);
}

const struct ibw_snapshot_node *
ibw_snapshot_find_node(const struct ibw_snapshot *s, uint64_t guid)
{
	const struct ibw_fnode *n;
	size_t i;

	if (!s->fabric || !(n = ibw_fabric_find(s->fabric, guid)))
		return NULL;
	i = (size_t)(n - s->fabric->nodes);
	return i < s->nnode_views ? &s->node_views[i] : NULL;
}

const struct ibw_snapshot_port *
ibw_snapshot_find_port(const struct ibw_snapshot *s, uint64_t guid,
		       unsigned port)
{
	const struct ibw_snapshot_node *nv = ibw_snapshot_find_node(s, guid);
	unsigned first;

	if (!nv)
		return NULL;
	first = nv->has_port0 ? 0 : 1;
	if (port < first || port - first >= nv->nports)
		return NULL;
	return &nv->ports[port - first];
}

uint16_t ibw_snapshot_lid(const struct ibw_snapshot *s, uint64_t guid,
			  unsigned port)
{
	const struct ibw_snapshot_node *nv = ibw_snapshot_find_node(s, guid);
	const struct ibw_fnode *n;

	if (!nv)
		return 0;
	n = nv->n;
	/* Switch ports have no LID of their own: port 0's is the node's. */
	if (!nv->is_switch && port < n->nports && n->ports[port].have_pi)
		return n->ports[port].pi.lid;
	return n->lid;
}

const char *ibw_snapshot_sweep_reason_str(enum ibw_sweep_reason r)
{
	switch (r) {
	case IBW_SWEEP_START:
		return "start";
	case IBW_SWEEP_PORT_BACK:
		return "local_port_back";
	case IBW_SWEEP_INTERVAL:
		return "interval";
	}
	return "unknown";
}

static const char *remote_name(const struct ibw_snapshot *s,
			       const struct ibw_fport *p)
{
	const struct ibw_fnode *r;

	if (!p->remote_guid || !s->fabric)
		return "";
	r = ibw_fabric_find(s->fabric, p->remote_guid);
	return r ? ibw_snapshot_node_name(s, r) : "";
}

static void view_node(struct ibw_snapshot *s, const struct ibw_fnode *n,
		      unsigned *links)
{
	struct ibw_snapshot_node *nv = &s->node_views[s->nnode_views++];
	struct ibw_snapshot_summary *sum = &s->sum;
	unsigned p;

	nv->n = n;
	nv->name = ibw_snapshot_node_name(s, n);
	nv->is_switch = n->ni.node_type == IBW_NODE_SWITCH;
	nv->has_port0 = ibw_fabric_first_port(n) == 0;
	nv->ports = &s->port_views[s->nport_views];
	for (p = ibw_fabric_first_port(n); p < n->nports; p++) {
		struct ibw_snapshot_port *pv = &s->port_views[s->nport_views++];
		const struct ibw_fport *fp = &n->ports[p];

		pv->node = nv;
		pv->p = fp;
		pv->ctrs = ibw_snapshot_port(s, n->guid, fp->num);
		pv->remote_name = remote_name(s, fp);
		pv->external = p != 0;
		pv->link_up = fp->have_pi && fp->pi.state >= IBW_PORT_INIT;
		pv->gone = fp->gone || n->gone;
		nv->nports++;
		if (pv->external && !n->gone) {
			sum->ports++;
			*links += fp->remote_guid != 0;
		}
	}
	if (n->gone)
		sum->gone_nodes++;
	else if (nv->is_switch)
		sum->switches++;
	else
		sum->cas++;
}

static void view_endport(struct ibw_snapshot *s, unsigned i)
{
	struct ibw_snapshot_endport *v = &s->endport_views[i];
	const struct ibw_endport *ep = &s->endports[i];

	v->ep = ep;
	v->loss_pct = ibw_ping_loss_pct(ep->sent - ep->received, ep->sent);
	v->window_loss_pct = ibw_ping_loss_pct(ep->window_lost, ep->window_n);
	v->window_loss_ratio =
		ep->window_n ? (double)ep->window_lost / ep->window_n : 0.0;
	v->window_loss_centipct =
		ep->window_n ? (unsigned)((uint64_t)ep->window_lost * 10000u /
					  ep->window_n)
			     : 0;
	s->sum.endports[(unsigned)ep->state < IBW_EP_NSTATES ? ep->state
							     : IBW_EP_UNKNOWN]++;
}

int ibw_snapshot_seal(struct ibw_snapshot *s)
{
	const struct ibw_fabric *f = s->fabric;
	unsigned nnodes = f ? f->nnodes : 0, nports = 0, links = 0, i;

	drop_views(s);
	for (i = 0; i < nnodes; i++)
		if (f->nodes[i].nports > ibw_fabric_first_port(&f->nodes[i]))
			nports += f->nodes[i].nports -
				  ibw_fabric_first_port(&f->nodes[i]);
	s->node_views = calloc(nnodes + 1, sizeof(*s->node_views));
	s->port_views = calloc(nports + 1, sizeof(*s->port_views));
	s->endport_views = calloc(s->nendports + 1, sizeof(*s->endport_views));
	if (!s->node_views || !s->port_views || !s->endport_views) {
		drop_views(s);
		return -ENOMEM;
	}
	for (i = 0; i < nnodes; i++)
		view_node(s, &f->nodes[i], &links);
	s->sum.nodes = s->sum.switches + s->sum.cas;
	/* Each link was seen from both of its ends. */
	s->sum.links = links / 2;
	for (i = 0; i < s->nendports; i++)
		view_endport(s, i);
	return 0;
}
