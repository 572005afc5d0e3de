// SPDX-License-Identifier: BSD-2-Clause
/*
 * IBWATCH-MIB handlers. Each table is a sorted array of rows rebuilt from
 * a new snapshot; GET and GETNEXT find rows by binary search on the index
 * sub-identifiers, so a walk costs O(log n) per object, not a rescan.
 *
 * The table helpers of net-snmp cannot express our index: a GUID is a
 * fixed-size OCTET STRING (SIZE (8)), which SMIv2 encodes as eight
 * sub-identifiers with no length, and net-snmp's index codecs always add
 * the length unless the string is IMPLIED (allowed only last). So the
 * handlers here take the request OIDs apart themselves.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* mib_int.h brings mib.h, and so net-snmp's headers (the agent's too)
 * and core's, in the order they need each other. */
#include "mib_int.h"

#include "log.h"

static const oid objects_oid[] = { OBJECTS };
#define OBJECTS_LEN OID_LENGTH(objects_oid)

size_t ibw_mib_guid_index(uint64_t guid, oid *out)
{
	int i;

	for (i = 0; i < 8; i++)
		out[i] = (guid >> (56 - 8 * i)) & 0xff;
	return 8;
}

/* Snapshots */

static int cmp_ep(const void *a, const void *b)
{
	const struct ibw_endport *x =
		(*(const struct ibw_snapshot_endport *const *)a)->ep;
	const struct ibw_endport *y =
		(*(const struct ibw_snapshot_endport *const *)b)->ep;

	if (x->node_guid != y->node_guid)
		return x->node_guid < y->node_guid ? -1 : 1;
	return (int)x->port - (int)y->port;
}

static int cmp_link(const void *a, const void *b)
{
	const struct ibw_link_end *x =
		&(*(const struct ibw_link *const *)a)->end[0];
	const struct ibw_link_end *y =
		&(*(const struct ibw_link *const *)b)->end[0];

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return (int)x->port - (int)y->port;
}

static void drop_rows(struct ibw_mib *m)
{
	free(m->eps);
	free(m->hops);
	free(m->links);
	m->eps = NULL;
	m->hops = NULL;
	m->links = NULL;
	m->neps = m->nhops = m->nlinks = 0;
}

/* The port table reads the snapshot's port views as they are (they are in
 * index order); endports and hops need rows of their own. */
static int index_snapshot(struct ibw_mib *m)
{
	const struct ibw_snapshot *s = m->snap;
	const struct ibw_snapshot_endport *v;
	unsigned i, n = 0;

	m->eps = calloc(s->nendports + 1, sizeof(*m->eps));
	for (i = 0; i < s->nwatched; i++)
		n += s->watched[i].last.fwd.nhops +
		     s->watched[i].last.rev.nhops;
	m->hops = calloc(n + 1, sizeof(*m->hops));
	m->links = calloc(s->links ? s->links->n + 1 : 1, sizeof(*m->links));
	if (!m->eps || !m->hops || !m->links)
		return -ENOMEM;
	/* The view is ranked worst first; the table wants index order. */
	for (i = 0; s->links && i < s->links->n; i++)
		m->links[m->nlinks++] = &s->links->links[i];
	qsort(m->links, m->nlinks, sizeof(*m->links), cmp_link);

	ibw_snapshot_foreach_endport(s, v) {
		/* Unresolved configured targets have no index. */
		if (v->ep->found && v->ep->node_guid)
			m->eps[m->neps++] = v;
	}
	qsort(m->eps, m->neps, sizeof(*m->eps), cmp_ep);

	for (i = 0; i < s->nwatched; i++) {
		const struct ibw_watched *w = &s->watched[i];
		unsigned d, h;

		if (!w->have)
			continue;
		for (d = 1; d <= 2; d++) {
			const struct ibw_path *path = d == 1 ? &w->last.fwd
							     : &w->last.rev;

			if (d == 2 && !w->last.have_reverse)
				continue;
			for (h = 0; h < path->nhops; h++) {
				struct hrow *r = &m->hops[m->nhops++];

				r->path = i + 1;
				r->dir = d;
				r->hop = h + 1;
				r->h = &path->hops[h];
			}
		}
	}
	return 0;
}

/* Serve the newest snapshot; index it when it is new. */
static int refresh(struct ibw_mib *m)
{
	struct ibw_snapshot *s = m->snapshot(m->snapshot_arg);

	if (!s)
		return -ENOENT;
	if (m->snap && m->snap->seq == s->seq) {
		ibw_snapshot_unref(s);
		return 0;
	}
	drop_rows(m);
	if (m->snap)
		ibw_snapshot_unref(m->snap);
	m->snap = s;
	if (index_snapshot(m) < 0) {
		log_err("snmp", "out of memory indexing snapshot %llu",
			(unsigned long long)s->seq);
		drop_rows(m);
		return -ENOMEM;
	}
	return 0;
}

/* Request handling */

/* The OID of an object's column prefix: objects.arc[.1] */
static size_t prefix_of(const struct table *t, oid *out)
{
	size_t n = OBJECTS_LEN;

	memcpy(out, objects_oid, sizeof(objects_oid));
	out[n++] = t->arc;
	if (!t->scalars)
		out[n++] = 1;
	return n;
}

/* First row whose index is greater than @idx (@exact: equal to it). */
static unsigned find_row(struct ibw_mib *m, const struct table *t,
			 const oid *idx, size_t len, int exact, int *found)
{
	unsigned lo = 0, hi = t->nrows(m);
	oid ri[16];

	*found = 0;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		int c;

		t->index(m, mid, ri);
		c = snmp_oid_compare(ri, t->nidx, idx, len);
		if (c == 0 && exact) {
			*found = 1;
			return mid;
		}
		if (c > 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static int set_value(netsnmp_variable_list *vb, const struct val *v)
{
	switch (v->type) {
	case ASN_COUNTER64:
		return snmp_set_var_typed_value(vb, v->type, &v->c64,
						sizeof(v->c64));
	case ASN_OCTET_STR:
		return snmp_set_var_typed_value(vb, v->type, v->str, v->len);
	case ASN_INTEGER: {
		long l = v->l;

		return snmp_set_var_typed_value(vb, v->type, &l, sizeof(l));
	}
	default: {
		u_long u = (u_long)v->l;

		return snmp_set_var_typed_value(vb, v->type, &u, sizeof(u));
	}
	}
}

/* 0, or the exception: SNMP_NOSUCHOBJECT or SNMP_NOSUCHINSTANCE. */
static int do_get(struct ibw_mib *m, const struct table *t,
		  netsnmp_variable_list *vb)
{
	oid pfx[MAX_OID_LEN];
	size_t plen = prefix_of(t, pfx);
	struct val v;
	unsigned col, row;
	int found;

	memset(&v, 0, sizeof(v));
	if (vb->name_length <= plen ||
	    snmp_oid_compare(vb->name, plen, pfx, plen) != 0 ||
	    vb->name[plen] < t->first_col || vb->name[plen] > t->max_col)
		return SNMP_NOSUCHOBJECT;
	col = (unsigned)vb->name[plen];
	/* A GUID index with a length in front is one sub-id too long. */
	if (vb->name_length - plen - 1 != t->nidx)
		return SNMP_NOSUCHINSTANCE;
	row = find_row(m, t, vb->name + plen + 1, t->nidx, 1, &found);
	if (!found || t->get(m, row, col, &v) < 0)
		return SNMP_NOSUCHINSTANCE;
	set_value(vb, &v);
	return 0;
}

/* 1 when @vb now holds the next object of @t, 0 when @t has none. */
static int do_getnext(struct ibw_mib *m, const struct table *t,
		      netsnmp_variable_list *vb)
{
	oid pfx[MAX_OID_LEN], name[MAX_OID_LEN];
	size_t plen = prefix_of(t, pfx), len = vb->name_length;
	unsigned col = t->first_col, row = 0, nrows = t->nrows(m);
	struct val v;
	int c, found;

	c = snmp_oid_compare(vb->name, len < plen ? len : plen, pfx,
			     len < plen ? len : plen);
	if (c > 0)
		return 0; /* past this table */
	if (c == 0 && len > plen) {
		if (vb->name[plen] > t->max_col)
			return 0;
		if (vb->name[plen] >= t->first_col) {
			col = (unsigned)vb->name[plen];
			row = find_row(m, t, vb->name + plen + 1,
				       len - plen - 1, 0, &found);
		}
	}
	memset(&v, 0, sizeof(v));
	for (; col <= t->max_col; col++, row = 0) {
		for (; row < nrows; row++) {
			if (t->get(m, row, col, &v) < 0)
				continue;
			memcpy(name, pfx, plen * sizeof(oid));
			name[plen] = col;
			t->index(m, row, name + plen + 1);
			snmp_set_var_objid(vb, name, plen + 1 + t->nidx);
			set_value(vb, &v);
			return 1;
		}
	}
	/* Nothing left here: the agent goes on to the next subtree. */
	return 0;
}

static int handler(netsnmp_mib_handler *h, netsnmp_handler_registration *reg,
		   netsnmp_agent_request_info *reqinfo,
		   netsnmp_request_info *requests)
{
	struct ibw_mib *m = h->myvoid;
	const struct table *t = reg->my_reg_void;
	netsnmp_request_info *r;

	if (refresh(m) < 0) {
		for (r = requests; r; r = r->next)
			if (reqinfo->mode == MODE_GET)
				netsnmp_set_request_error(reqinfo, r,
							  SNMP_NOSUCHINSTANCE);
		return SNMP_ERR_NOERROR;
	}
	for (r = requests; r; r = r->next) {
		if (r->processed)
			continue;
		switch (reqinfo->mode) {
		case MODE_GET: {
			int err = do_get(m, t, r->requestvb);

			if (err)
				netsnmp_set_request_error(reqinfo, r, err);
		} break;
		case MODE_GETNEXT:
			do_getnext(m, t, r->requestvb);
			break;
		default:
			netsnmp_set_request_error(reqinfo, r,
						  SNMP_ERR_NOTWRITABLE);
		}
	}
	return SNMP_ERR_NOERROR;
}

struct ibw_mib *ibw_mib_new(ibw_mib_snapshot_fn snapshot, void *arg,
			    const struct ibw_local_port *lp,
			    const struct ibw_localport_query *lq,
			    const struct ibw_mib_stats *stats)
{
	struct ibw_mib *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->snapshot = snapshot;
	m->snapshot_arg = arg;
	m->lp = lp;
	m->lq = lq;
	m->stats = stats;
	return m;
}

void ibw_mib_free(struct ibw_mib *m)
{
	if (!m)
		return;
	drop_rows(m);
	if (m->snap)
		ibw_snapshot_unref(m->snap);
	free(m);
}

int ibw_mib_query(struct ibw_mib *m, netsnmp_variable_list *vb, int next)
{
	size_t i;

	if (refresh(m) < 0)
		return -ENOENT;
	for (i = 0; i < mib_ntables; i++) {
		const struct table *t = &mib_tables[i];
		oid pfx[MAX_OID_LEN];
		size_t plen = prefix_of(t, pfx);
		size_t tlen = t->scalars ? plen : plen - 1; /* the table */

		if (next) {
			if (do_getnext(m, t, vb))
				return 0;
			continue;
		}
		if (vb->name_length >= tlen &&
		    !snmp_oid_compare(vb->name, tlen, pfx, tlen))
			return do_get(m, t, vb);
	}
	return next ? SNMP_ENDOFMIBVIEW : SNMP_NOSUCHOBJECT;
}

int ibw_mib_register(struct ibw_mib *m, const char *context)
{
	size_t i;

	for (i = 0; i < mib_ntables; i++) {
		const struct table *t = &mib_tables[i];
		netsnmp_handler_registration *reg;
		oid o[MAX_OID_LEN];
		size_t n = OBJECTS_LEN;

		memcpy(o, objects_oid, sizeof(objects_oid));
		o[n++] = t->arc;
		reg = netsnmp_create_handler_registration(t->name, handler, o,
							  n, HANDLER_CAN_RONLY);
		if (!reg)
			return -ENOMEM;
		reg->handler->myvoid = m;
		reg->my_reg_void = (void *)t;
		if (context && *context) {
			reg->contextName = strdup(context);
			if (!reg->contextName) {
				netsnmp_handler_registration_free(reg);
				return -ENOMEM;
			}
		}
		if (netsnmp_register_handler(reg) != MIB_REGISTERED_OK) {
			log_err("snmp", "cannot register %s", t->name);
			return -EIO;
		}
	}
	return 0;
}

/* Notifications */

static void add_var(netsnmp_variable_list **vars, const oid *name, size_t len,
		    const struct val *v)
{
	netsnmp_variable_list *vb =
		snmp_varlist_add_variable(vars, name, len, ASN_NULL, NULL, 0);

	if (vb)
		set_value(vb, v);
}

/* objects.arc.1.col.<index> (tables) */
static void add_col(netsnmp_variable_list **vars, oid arc, unsigned col,
		    const oid *idx, size_t nidx, const struct val *v)
{
	oid name[MAX_OID_LEN];
	size_t n = OBJECTS_LEN;

	memcpy(name, objects_oid, sizeof(objects_oid));
	name[n++] = arc;
	name[n++] = 1;
	name[n++] = col;
	memcpy(name + n, idx, nidx * sizeof(oid));
	add_var(vars, name, n + nidx, v);
}

/* ibwAgent.col.0 (the scalars have no entry arc) */
static void add_agent_scalar(netsnmp_variable_list **vars, unsigned col,
			     const struct val *v)
{
	oid name[MAX_OID_LEN];
	size_t n = OBJECTS_LEN;

	memcpy(name, objects_oid, sizeof(objects_oid));
	name[n++] = 1;
	name[n++] = col;
	name[n++] = 0;
	add_var(vars, name, n, v);
}

/* ibwNotifyObjects.n.0 */
static void add_notify_obj(netsnmp_variable_list **vars, unsigned n,
			   const struct val *v)
{
	oid name[MAX_OID_LEN];
	size_t k = OBJECTS_LEN;

	memcpy(name, objects_oid, sizeof(objects_oid));
	name[k++] = 7;
	name[k++] = n;
	name[k++] = 0;
	add_var(vars, name, k, v);
}

static const struct ibw_endport *find_ep(struct ibw_mib *m, uint64_t node,
					 uint8_t port)
{
	unsigned i;

	for (i = 0; i < m->neps; i++)
		if (m->eps[i]->ep->node_guid == node &&
		    m->eps[i]->ep->port == port)
			return m->eps[i]->ep;
	return NULL;
}

netsnmp_variable_list *ibw_mib_notification(struct ibw_mib *m,
					    const struct ibw_event *e)
{
	static const oid trap_oid[] = { 1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0 };
	static const oid notifs[] = { NOTIFS };
	netsnmp_variable_list *vars = NULL;
	oid which[MAX_OID_LEN], nidx[8], pidx[9];
	size_t wlen = OID_LENGTH(notifs);
	struct val v;
	unsigned i;

	if (refresh(m) < 0)
		return NULL;
	memcpy(which, notifs, sizeof(notifs));
	switch (e->kind) {
	case IBW_EVT_ENDPORT_STATE:
		if (e->new_value == IBW_EP_DOWN)
			which[wlen++] = 1;
		else if (e->new_value == IBW_EP_UP &&
			 (e->old_value == IBW_EP_DOWN ||
			  e->old_value == IBW_EP_DEGRADED))
			which[wlen++] = 2;
		else
			return NULL;
		break;
	case IBW_EVT_PORT_STATE_CHANGED:
		which[wlen++] = 3;
		break;
	case IBW_EVT_THRESHOLD_CROSSED:
		which[wlen++] = 4;
		break;
	case IBW_EVT_PATH_CHANGED:
		which[wlen++] = 5;
		break;
	case IBW_EVT_LINK_HEALTH_CHANGED:
		which[wlen++] = 6;
		break;
	case IBW_EVT_ROUTES_LOST:
	case IBW_EVT_ROUTE_LOOPS:
		which[wlen++] = 7;
		break;
	case IBW_EVT_LOCAL_PORT_LOST:
		which[wlen++] = 8;
		break;
	case IBW_EVT_LOCAL_PORT_BACK:
		which[wlen++] = 9;
		break;
	case IBW_EVT_ENDPORT_MOVED:
		which[wlen++] = 10;
		break;
	default:
		return NULL;
	}
	memset(&v, 0, sizeof(v));
	snmp_varlist_add_variable(&vars, trap_oid, OID_LENGTH(trap_oid),
				  ASN_OBJECT_ID, which, wlen * sizeof(oid));
	ibw_mib_guid_index(e->node_guid, nidx);
	memcpy(pidx, nidx, sizeof(nidx));
	pidx[8] = e->port;

	switch (e->kind) {
	case IBW_EVT_ENDPORT_STATE: {
		const struct ibw_endport *ep =
			find_ep(m, e->node_guid, e->port);

		mib_v_guid(&v, e->peer_guid);
		add_col(&vars, 4, EP_COL_PORT_GUID, pidx, 9, &v);
		mib_v_unsigned(&v, ep ? ep->lid
				      : ibw_snapshot_lid(m->snap, e->node_guid,
							 e->port));
		add_col(&vars, 4, EP_COL_LID, pidx, 9, &v);
		mib_v_str(&v, ep ? ep->name : mib_name_of(m, e->node_guid));
		add_col(&vars, 4, EP_COL_NAME, pidx, 9, &v);
		mib_v_int(&v, mib_liveness(e->new_value));
		add_col(&vars, 4, EP_COL_STATE, pidx, 9, &v);
		mib_v_int(&v, mib_liveness(e->old_value));
		add_notify_obj(&vars, 5, &v);
		mib_v_str(&v, e->what);
		add_col(&vars, 4, EP_COL_REASON, pidx, 9, &v);
		break;
	}
	case IBW_EVT_PORT_STATE_CHANGED:
		mib_v_str(&v, mib_name_of(m, e->node_guid));
		add_col(&vars, 2, 3, nidx, 8, &v);
		mib_v_unsigned(&v, ibw_snapshot_lid(m->snap, e->node_guid,
						    e->port));
		add_col(&vars, 3, PORT_COL_LID, pidx, 9, &v);
		mib_v_int(&v, mib_link_state((unsigned)e->new_value));
		add_col(&vars, 3, PORT_COL_STATE, pidx, 9, &v);
		mib_v_int(&v, mib_link_state((unsigned)e->old_value));
		add_notify_obj(&vars, 4, &v);
		break;
	case IBW_EVT_THRESHOLD_CROSSED:
		mib_v_str(&v, mib_name_of(m, e->node_guid));
		add_col(&vars, 2, 3, nidx, 8, &v);
		mib_v_unsigned(&v, ibw_snapshot_lid(m->snap, e->node_guid,
						    e->port));
		add_col(&vars, 3, PORT_COL_LID, pidx, 9, &v);
		mib_v_str(&v, e->what);
		add_notify_obj(&vars, 1, &v);
		mib_v_unsigned(&v, e->new_value);
		add_notify_obj(&vars, 3, &v);
		mib_v_unsigned(&v, e->old_value);
		add_notify_obj(&vars, 2, &v);
		break;
	case IBW_EVT_PATH_CHANGED: {
		oid idx[1] = { 0 };

		for (i = 0; i < m->snap->nwatched; i++)
			if (!strcmp(m->snap->watched[i].target, e->what))
				idx[0] = i + 1;
		mib_v_str(&v, e->what);
		add_col(&vars, 5, 2, idx, 1, &v);
		mib_v_unsigned(&v,
			       idx[0] ? m->snap->watched[idx[0] - 1].lid : 0);
		add_col(&vars, 5, 3, idx, 1, &v);
		mib_v_c64(&v,
			  idx[0] ? m->snap->watched[idx[0] - 1].changes : 0);
		add_col(&vars, 5, 8, idx, 1, &v);
		mib_v_str(&v, e->detail);
		add_notify_obj(&vars, 6, &v);
		break;
	}
	case IBW_EVT_LINK_HEALTH_CHANGED: {
		/* the event's own values: the snapshot may be newer */
		char reasons[256];
		const char *lanes;

		mib_v_str(&v, mib_name_of(m, e->node_guid));
		add_col(&vars, 8, LINK_COL_NAME, pidx, 9, &v);
		mib_v_guid(&v, e->peer_guid);
		add_col(&vars, 8, LINK_COL_REMOTE_GUID, pidx, 9, &v);
		mib_v_unsigned(&v, e->peer_port);
		add_col(&vars, 8, LINK_COL_REMOTE_PORT, pidx, 9, &v);
		mib_v_str(&v, mib_name_of(m, e->peer_guid));
		add_col(&vars, 8, LINK_COL_REMOTE_NAME, pidx, 9, &v);
		mib_v_int(&v, mib_health_enum((unsigned)e->new_value));
		add_col(&vars, 8, LINK_COL_HEALTH, pidx, 9, &v);
		mib_v_int(&v, mib_health_enum((unsigned)e->old_value));
		add_notify_obj(&vars, 7, &v);
		ibw_link_reasons_fmt(e->reasons, reasons, sizeof(reasons));
		mib_v_strcpy(&v, reasons);
		add_col(&vars, 8, LINK_COL_REASONS, pidx, 9, &v);
		/* core/monitor.c puts the bad lanes after "; " */
		lanes = strstr(e->detail, "; ");
		mib_v_strcpy(&v, lanes ? lanes + 2 : "");
		add_col(&vars, 8, LINK_COL_BAD_LANE, pidx, 9, &v);
		break;
	}
	case IBW_EVT_ROUTES_LOST:
	case IBW_EVT_ROUTE_LOOPS:
		/* the totals of the snapshot's census: the one the event
		 * came from or a newer one */
		mib_route_scalar(m->snap, 36, &v);
		add_agent_scalar(&vars, 36, &v);
		mib_route_scalar(m->snap, 37, &v);
		add_agent_scalar(&vars, 37, &v);
		mib_v_gauge(&v, e->new_value);
		add_notify_obj(&vars, 8, &v);
		mib_v_str(&v, e->detail);
		add_notify_obj(&vars, 9, &v);
		break;
	case IBW_EVT_LOCAL_PORT_LOST:
	case IBW_EVT_LOCAL_PORT_BACK:
		/* CA, port, port GUID and LID as the scalars have them; the
		 * state the event's (a later query may have read another) */
		for (i = 2; i <= 5; i++) {
			mib_agent_get(m, 0, i, &v);
			add_agent_scalar(&vars, i, &v);
		}
		mib_v_int(&v, mib_link_state((unsigned)e->old_value));
		add_agent_scalar(&vars, 6, &v);
		if (e->kind == IBW_EVT_LOCAL_PORT_LOST) {
			/* stale from the moment it is lost */
			mib_v_bool(&v, 1);
			add_agent_scalar(&vars, 10, &v);
		} else {
			mib_v_unsigned(&v, e->new_value);
			add_notify_obj(&vars, 10, &v);
		}
		break;
	case IBW_EVT_ENDPORT_MOVED: {
		const struct ibw_endport *ep =
			find_ep(m, e->node_guid, e->port);

		mib_v_guid(&v, e->peer_guid);
		add_col(&vars, 4, EP_COL_PORT_GUID, pidx, 9, &v);
		/* the new LID: the snapshot may not have it yet */
		mib_v_unsigned(&v, e->new_value);
		add_col(&vars, 4, EP_COL_LID, pidx, 9, &v);
		mib_v_str(&v, ep ? ep->name : mib_name_of(m, e->node_guid));
		add_col(&vars, 4, EP_COL_NAME, pidx, 9, &v);
		mib_v_unsigned(&v, e->old_value);
		add_notify_obj(&vars, 11, &v);
		mib_v_str(&v, e->what);
		add_notify_obj(&vars, 12, &v);
		break;
	}
	default:
		break;
	}
	return vars;
}
