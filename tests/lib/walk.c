// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "discover.h"
#include "walk.h"

struct probe {
	struct walk *w;
	struct ibw_engine *e;
	struct ibw_dest dr;
	int node; /* for PortInfo: index of the node */
};

static int find_guid(const struct walk *w, uint64_t guid)
{
	unsigned i;

	/* Tests walk a few thousand nodes at most; linear is fine. */
	for (i = 0; i < w->nnodes; i++)
		if (w->nodes[i].ni.node_guid == guid)
			return (int)i;
	return -1;
}

static void on_portinfo(const struct ibw_mad_done *d, void *arg)
{
	struct probe *p = arg;
	struct walk_node *n = &p->w->nodes[p->node];

	if (d->result == IBW_MAD_OK &&
	    ibw_portinfo_decode(d->mad, d->len, &n->pi) == 0)
		n->have_pi = 1;
	else
		p->w->errors++;
	free(p);
}

static void submit(struct walk *w, struct ibw_engine *e,
		   const struct ibw_dest *dr, uint16_t attr, uint32_t mod,
		   int node, ibw_mad_cb cb)
{
	struct probe *p = calloc(1, sizeof(*p));
	struct ibw_mad_req r;

	if (!p) {
		w->errors++;
		return;
	}
	p->w = w;
	p->e = e;
	p->dr = *dr;
	p->node = node;
	memset(&r, 0, sizeof(r));
	r.dest = *dr;
	r.mgmt_class = IBW_CLASS_SMI_DR;
	r.method = IBW_METHOD_GET;
	r.attr_id = attr;
	r.attr_mod = mod;
	r.retries = 1;
	r.cb = cb;
	r.arg = p;
	if (ibw_engine_submit(e, &r) < 0) {
		w->errors++;
		free(p);
	}
}

static void on_nodeinfo(const struct ibw_mad_done *d, void *arg)
{
	struct probe *p = arg;
	struct walk *w = p->w;
	struct ibw_nodeinfo ni;
	struct walk_node *n;
	unsigned port;
	int idx;

	if (d->result != IBW_MAD_OK) {
		/* Nobody is behind an unlinked port: the MAD is dropped and
		 * the try times out (ibsim hands it back with status 110,
		 * which the engine takes as the timeout it is on a real
		 * host); anything else is a real failure. */
		if (d->result != IBW_MAD_TRANSPORT &&
		    d->result != IBW_MAD_TIMEOUT)
			w->errors++;
		goto out;
	}
	if (ibw_nodeinfo_decode(d->mad, d->len, &ni) < 0) {
		w->errors++;
		goto out;
	}
	if (find_guid(w, ni.node_guid) >= 0)
		goto out;
	if (w->nnodes == w->cap) {
		unsigned cap = w->cap ? w->cap * 2 : 256;
		struct walk_node *nn = realloc(w->nodes, cap * sizeof(*nn));

		if (!nn) {
			w->errors++;
			goto out;
		}
		w->nodes = nn;
		w->cap = cap;
	}
	idx = (int)w->nnodes++;
	n = &w->nodes[idx];
	memset(n, 0, sizeof(*n));
	n->dr = p->dr;
	n->ni = ni;
	submit(w, p->e, &p->dr, IBW_ATTR_PORT_INFO,
	       ni.node_type == IBW_NODE_SWITCH ? 0 : ni.local_port, idx,
	       on_portinfo);
	if (p->dr.hops == IBW_DR_MAX_HOPS)
		goto out;
	/* Only switches forward directed-route SMPs, except that the walk
	 * starts by leaving the local CA through its port. */
	if (ni.node_type != IBW_NODE_SWITCH && p->dr.hops > 0)
		goto out;
	for (port = 1; port <= ni.num_ports; port++) {
		struct ibw_dest next = p->dr;

		if (ni.node_type != IBW_NODE_SWITCH && port != ni.local_port)
			continue;
		if (ni.node_type == IBW_NODE_SWITCH && port == ni.local_port &&
		    p->dr.hops > 0)
			continue;
		next.path[++next.hops] = (uint8_t)port;
		submit(w, p->e, &next, IBW_ATTR_NODE_INFO, 0, -1, on_nodeinfo);
	}
out:
	free(p);
}

int walk_run_until_idle(struct ibw_loop *loop, struct ibw_engine *e,
			unsigned timeout_ms)
{
	uint64_t end = ibw_now_us() + (uint64_t)timeout_ms * 1000u;

	while (ibw_engine_busy(e)) {
		uint64_t now = ibw_now_us();

		if (now >= end)
			return -ETIMEDOUT;
		if (ibw_loop_run_once(loop, (int64_t)(end - now)) < 0)
			return -EIO;
	}
	return 0;
}

int walk_fabric(struct ibw_loop *loop, struct ibw_engine *e, struct walk *w,
		unsigned timeout_ms)
{
	struct ibw_dest local;

	memset(w, 0, sizeof(*w));
	ibw_dest_dr_parse(&local, "0");
	submit(w, e, &local, IBW_ATTR_NODE_INFO, 0, -1, on_nodeinfo);
	return walk_run_until_idle(loop, e, timeout_ms);
}

void walk_free(struct walk *w)
{
	free(w->nodes);
	memset(w, 0, sizeof(*w));
}

static void got_fabric(struct ibw_fabric *f, void *arg)
{
	*(struct ibw_fabric **)arg = f;
}

struct ibw_fabric *walk_discover(struct ibw_loop *loop, struct ibw_engine *e,
				 unsigned timeout_ms)
{
	struct ibw_discover *d = ibw_discover_new(e, NULL);
	struct ibw_fabric *f = NULL;

	if (!d)
		return NULL;
	if (ibw_discover_start(d, got_fabric, &f) < 0 ||
	    walk_run_until_idle(loop, e, timeout_ms) < 0) {
		ibw_fabric_unref(f);
		f = NULL;
	}
	ibw_discover_free(d);
	return f;
}
