// SPDX-License-Identifier: BSD-2-Clause
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fabric_id.h"

void ibw_fabric_id_of(const struct ibw_fabric *f, unsigned local_port,
		      struct ibw_fabric_id *id)
{
	const struct ibw_fnode *ln, *sm;
	const struct ibw_fport *lp, *smp = NULL;

	memset(id, 0, sizeof(*id));
	ln = f ? ibw_fabric_find(f, f->local_guid) : NULL;
	if (!ln || local_port >= ln->nports || !ln->ports[local_port].have_pi)
		return;
	lp = &ln->ports[local_port];
	id->subnet_prefix = lp->pi.gid_prefix;
	id->sm_lid = lp->pi.sm_lid;
	sm = ibw_fabric_find_lid(f, id->sm_lid, &smp);
	if (sm && smp) {
		id->sm_node_guid = sm->guid;
		id->sm_port = smp->num;
		/* a switch's port 0 has the node's GUID where none was read */
		id->sm_guid = smp->guid ? smp->guid : sm->ni.port_guid;
	}
	/* No port at the MasterSMLID: the SM's host died and no standby
	 * has taken over yet (PortInfo names the old LID until one does),
	 * or this sweep did not reach it. Not another fabric: nothing. */
	id->known = id->sm_guid != 0;
}

void ibw_fabric_id_str(const struct ibw_fabric_id *id, char *buf, size_t n)
{
	snprintf(buf, n, "0x%016" PRIx64 "/0x%016" PRIx64, id->subnet_prefix,
		 id->sm_guid);
}

int ibw_fabric_id_differs(const struct ibw_fabric_id *a,
			  const struct ibw_fabric_id *b)
{
	return a->known != b->known || a->subnet_prefix != b->subnet_prefix ||
	       a->sm_guid != b->sm_guid;
}

int ibw_fabric_id_update(struct ibw_fabric_id *cur,
			 const struct ibw_fabric_id *nw, uint64_t now_us,
			 struct ibw_events *ev)
{
	struct ibw_fabric_id old = *cur;
	char a[IBW_FABRIC_ID_LEN], b[IBW_FABRIC_ID_LEN];
	struct ibw_event e;

	if (!nw->known)
		return 0;
	if (old.known && !ibw_fabric_id_differs(&old, nw)) {
		/* the same fabric; its SM may have a new LID */
		cur->sm_lid = nw->sm_lid;
		cur->sm_port = nw->sm_port;
		cur->sm_node_guid = nw->sm_node_guid;
		return 0;
	}
	*cur = *nw;
	cur->since_us = now_us;
	cur->changes = old.changes + (old.known ? 1 : 0);
	if (!old.known || !ev)
		return old.known;
	ibw_fabric_id_str(&old, a, sizeof(a));
	ibw_fabric_id_str(nw, b, sizeof(b));
	memset(&e, 0, sizeof(e));
	e.kind = IBW_EVT_FABRIC_CHANGED;
	e.node_guid = nw->sm_node_guid;
	e.port = nw->sm_port;
	e.peer_guid = old.sm_node_guid;
	e.peer_port = old.sm_port;
	e.old_value = old.sm_guid;
	e.new_value = nw->sm_guid;
	snprintf(e.what, sizeof(e.what), "%s",
		 old.subnet_prefix != nw->subnet_prefix ? "subnet_prefix"
							: "master_sm");
	snprintf(e.detail, sizeof(e.detail),
		 "fabric %s -> %s (master SM LID %u -> %u)", a, b,
		 (unsigned)old.sm_lid, (unsigned)nw->sm_lid);
	ibw_events_add(ev, &e);
	return 1;
}
