// SPDX-License-Identifier: BSD-2-Clause
/*
 * IBWATCH-MIB handlers. Each table is a sorted array of rows rebuilt from
 * a new snapshot; GET and GETNEXT find rows by binary search on the index
 * sub-identifiers, so a walk costs O(log n) per object, not a rescan.
 *
 * Nodes and ports are indexed by the row indexes of agent/mib_rows.h;
 * ibwPortLookupTable by a GUID string of fixed size, which SMIv2 encodes
 * as its 18 characters with no length (net-snmp's index codecs always
 * add one unless the string is IMPLIED), so the handlers take the
 * request OIDs apart themselves.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* mib_int.h brings mib.h, and so net-snmp's headers (the agent's too)
 * and core's, in the order they need each other. */
#include "mib_int.h"
#include "mib_hw.h"

#include "log.h"
#include "mib_rows.h"

static const oid objects_oid[] = { OBJECTS };
#define OBJECTS_LEN OID_LENGTH(objects_oid)

/* Snapshots */

static int cmp_irow(const void *a, const void *b)
{
	const struct irow *x = a, *y = b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_lrow(const void *a, const void *b)
{
	const struct lrow *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

static void drop_rows(struct ibw_mib *m)
{
	free(m->nodes);
	free(m->ports);
	free(m->eps);
	free(m->links);
	free(m->lookups);
	free(m->hops);
	m->nodes = m->ports = m->eps = m->links = NULL;
	m->lookups = NULL;
	m->hops = NULL;
	m->nnodes = m->nports = m->neps = m->nlinks = 0;
	m->nlookups = m->nhops = 0;
	mib_hw_drop(m);
}

/* The row index of every node and port, given in (GUID, port) order to
 * those seen for the first time; the tables sorted by it. */
static int index_rows(struct ibw_mib *m)
{
	const struct ibw_snapshot *s = m->snap;
	const struct ibw_snapshot_node *nv;
	const struct ibw_snapshot_port *pv;
	const struct ibw_snapshot_endport *v;
	unsigned i, n;

	m->nodes = calloc(s->nnode_views + 1, sizeof(*m->nodes));
	m->ports = calloc(s->nport_views + 1, sizeof(*m->ports));
	m->lookups =
		calloc(2 * (size_t)s->nport_views + 1, sizeof(*m->lookups));
	m->eps = calloc(s->nendports + 1, sizeof(*m->eps));
	m->links = calloc(s->links ? s->links->n + 1 : 1, sizeof(*m->links));
	if (!m->nodes || !m->ports || !m->lookups || !m->eps || !m->links)
		return -ENOMEM;
	ibw_snapshot_foreach_node(s, nv) {
		struct irow *r = &m->nodes[m->nnodes];

		r->idx = mib_rows_node(m->rows, nv->n->guid);
		r->p = nv;
		if (!r->idx)
			return -ENOMEM;
		m->nnodes++;
	}
	ibw_snapshot_foreach_port(s, pv) {
		struct irow *r = &m->ports[m->nports];
		uint64_t g = pv->node->n->guid;
		struct lrow *l = &m->lookups[m->nlookups];

		r->idx = mib_rows_port(m->rows, g, pv->p->num);
		r->p = pv;
		if (!r->idx)
			return -ENOMEM;
		m->nports++;
		l->guid = g;
		l->port = pv->p->num;
		l->idx = r->idx;
		m->nlookups++;
		/* a CA's port GUID is not its node's: found by either */
		if (pv->p->guid && pv->p->guid != g) {
			l[1] = l[0];
			l[1].guid = pv->p->guid;
			m->nlookups++;
		}
	}
	ibw_snapshot_foreach_endport(s, v) {
		struct irow *r = &m->eps[m->neps];

		/* Unresolved configured targets have no row. */
		if (!v->ep->found || !v->ep->node_guid)
			continue;
		r->idx = mib_rows_port(m->rows, v->ep->node_guid, v->ep->port);
		r->p = v;
		if (!r->idx)
			return -ENOMEM;
		m->neps++;
	}
	/* The view is ranked worst first. */
	for (i = 0; s->links && i < s->links->n; i++) {
		const struct ibw_link *k = &s->links->links[i];
		struct irow *r = &m->links[m->nlinks];

		r->idx = mib_rows_port(m->rows, k->end[0].guid, k->end[0].port);
		r->peer =
			mib_rows_port(m->rows, k->end[1].guid, k->end[1].port);
		r->p = k;
		if (!r->idx || !r->peer)
			return -ENOMEM;
		m->nlinks++;
	}
	qsort(m->nodes, m->nnodes, sizeof(*m->nodes), cmp_irow);
	qsort(m->ports, m->nports, sizeof(*m->ports), cmp_irow);
	qsort(m->eps, m->neps, sizeof(*m->eps), cmp_irow);
	/* two configured targets may be one port: one row */
	for (i = 0, n = 0; i < m->neps; i++)
		if (!n || m->eps[n - 1].idx != m->eps[i].idx)
			m->eps[n++] = m->eps[i];
	m->neps = n;
	qsort(m->links, m->nlinks, sizeof(*m->links), cmp_irow);
	qsort(m->lookups, m->nlookups, sizeof(*m->lookups), cmp_lrow);
	/* one row per key, should a port GUID be another's too */
	for (i = 0, n = 0; i < m->nlookups; i++)
		if (!n || cmp_lrow(&m->lookups[n - 1], &m->lookups[i]))
			m->lookups[n++] = m->lookups[i];
	m->nlookups = n;
	mib_rows_save(m->rows);
	return 0;
}

/* The hop table's rows: every hop of every watched path's last trace. */
static int index_hops(struct ibw_mib *m)
{
	const struct ibw_snapshot *s = m->snap;
	unsigned i, n = 0;

	for (i = 0; i < s->nwatched; i++)
		n += s->watched[i].last.fwd.nhops +
		     s->watched[i].last.rev.nhops;
	m->hops = calloc(n + 1, sizeof(*m->hops));
	if (!m->hops)
		return -ENOMEM;
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

static int index_snapshot(struct ibw_mib *m)
{
	int rc = index_rows(m);

	if (rc >= 0)
		rc = index_hops(m);
	return rc < 0 ? rc : mib_hw_index(m);
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
	oid ri[MAX_OID_LEN];

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
	    vb->name[plen] < t->first_col || vb->name[plen] > t->max_col ||
	    vb->name[plen] == t->hidden_col)
		return SNMP_NOSUCHOBJECT;
	col = (unsigned)vb->name[plen];
	/* A lookup's GUID with a length in front is one sub-id too long. */
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

/* The group @reg was registered for: its arc under ibwatchObjects. */
/* The readable groups in OID order: mib_tables.c's, then the hardware
 * tables (mib_hw.c). */
static size_t ntables(void)
{
	return mib_ntables + mib_hw_ntables;
}

static const struct table *table_at(size_t i)
{
	return i < mib_ntables ? &mib_tables[i]
			       : &mib_hw_tables[i - mib_ntables];
}

static const struct table *table_of(const netsnmp_handler_registration *reg)
{
	size_t i;

	if (reg->rootoid_len != OBJECTS_LEN + 1)
		return NULL;
	for (i = 0; i < ntables(); i++)
		if (table_at(i)->arc == reg->rootoid[OBJECTS_LEN])
			return table_at(i);
	return NULL;
}

static int handler(netsnmp_mib_handler *h, netsnmp_handler_registration *reg,
		   netsnmp_agent_request_info *reqinfo,
		   netsnmp_request_info *requests)
{
	struct ibw_mib *m = h->myvoid;
	const struct table *t = table_of(reg);
	netsnmp_request_info *r;

	if (!t)
		return SNMP_ERR_GENERR; /* not one of ours */
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
			    const struct ibw_mib_stats *stats,
			    const char *rows_path)
{
	struct ibw_mib *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->rows = mib_rows_new(rows_path);
	if (!m->rows) {
		free(m);
		return NULL;
	}
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
	mib_hw_free(m);
	if (m->snap)
		ibw_snapshot_unref(m->snap);
	mib_rows_free(m->rows);
	free(m);
}

int ibw_mib_query(struct ibw_mib *m, netsnmp_variable_list *vb, int next)
{
	size_t i;

	if (refresh(m) < 0)
		return -ENOENT;
	for (i = 0; i < ntables(); i++) {
		const struct table *t = table_at(i);
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

	for (i = 0; i < ntables(); i++) {
		const struct table *t = table_at(i);
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

/* The row's node GUID and port number, columns @gcol and @gcol + 1 of
 * table @arc at row @idx: which port, as TD and ibstat write it. */
static void add_where(netsnmp_variable_list **vars, oid arc, unsigned gcol,
		      const oid *idx, uint64_t guid, unsigned port)
{
	struct val v;

	memset(&v, 0, sizeof(v));
	mib_v_guid(&v, guid);
	add_col(vars, arc, gcol, idx, 1, &v);
	mib_v_unsigned(&v, port);
	add_col(vars, arc, gcol + 1, idx, 1, &v);
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

static const struct ibw_endport *find_ep(struct ibw_mib *m, uint32_t idx)
{
	unsigned lo = 0, hi = m->neps;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (m->eps[mid].idx == idx)
			return ((const struct ibw_snapshot_endport *)m->eps[mid]
					.p)
				->ep;
		if (m->eps[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

netsnmp_variable_list *ibw_mib_notification(struct ibw_mib *m,
					    const struct ibw_event *e)
{
	static const oid trap_oid[] = { 1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0 };
	static const oid notifs[] = { NOTIFS };
	netsnmp_variable_list *vars = NULL;
	oid which[MAX_OID_LEN], nidx[1], pidx[1];
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
	case IBW_EVT_HW_HEALTH:
		which[wlen++] = 11;
		break;
	case IBW_EVT_FABRIC_CHANGED:
		which[wlen++] = 12;
		break;
	default:
		return NULL;
	}
	memset(&v, 0, sizeof(v));
	snmp_varlist_add_variable(&vars, trap_oid, OID_LENGTH(trap_oid),
				  ASN_OBJECT_ID, which, wlen * sizeof(oid));
	/* the rows a port's event is about (given now if they have none
	 * yet); the others name no port */
	nidx[0] = pidx[0] = 0;
	if (e->kind == IBW_EVT_ENDPORT_STATE ||
	    e->kind == IBW_EVT_PORT_STATE_CHANGED ||
	    e->kind == IBW_EVT_THRESHOLD_CROSSED ||
	    e->kind == IBW_EVT_LINK_HEALTH_CHANGED ||
	    e->kind == IBW_EVT_ENDPORT_MOVED || e->kind == IBW_EVT_HW_HEALTH) {
		nidx[0] = mib_rows_node(m->rows, e->node_guid);
		/* a hardware event's port is a sensor, fan or supply */
		pidx[0] =
			e->kind == IBW_EVT_HW_HEALTH
				? 1
				: mib_rows_port(m->rows, e->node_guid, e->port);
		mib_rows_save(m->rows);
		if (!nidx[0] || !pidx[0]) { /* out of memory */
			snmp_free_varbind(vars);
			return NULL;
		}
	}

	switch (e->kind) {
	case IBW_EVT_ENDPORT_STATE: {
		const struct ibw_endport *ep = find_ep(m, (uint32_t)pidx[0]);

		mib_v_guid(&v, e->peer_guid);
		add_col(&vars, 4, EP_COL_PORT_GUID, pidx, 1, &v);
		mib_v_unsigned(&v, ep ? ep->lid
				      : ibw_snapshot_lid(m->snap, e->node_guid,
							 e->port));
		add_col(&vars, 4, EP_COL_LID, pidx, 1, &v);
		mib_v_str(&v, ep ? ep->name : mib_name_of(m, e->node_guid));
		add_col(&vars, 4, EP_COL_NAME, pidx, 1, &v);
		mib_v_int(&v, mib_liveness(e->new_value));
		add_col(&vars, 4, EP_COL_STATE, pidx, 1, &v);
		mib_v_int(&v, mib_liveness(e->old_value));
		add_notify_obj(&vars, 5, &v);
		mib_v_str(&v, e->what);
		add_col(&vars, 4, EP_COL_REASON, pidx, 1, &v);
		add_where(&vars, 4, EP_COL_NODE_GUID, pidx, e->node_guid,
			  e->port);
		break;
	}
	case IBW_EVT_PORT_STATE_CHANGED:
		mib_v_str(&v, mib_name_of(m, e->node_guid));
		add_col(&vars, 2, NODE_COL_NAME, nidx, 1, &v);
		mib_v_unsigned(&v, ibw_snapshot_lid(m->snap, e->node_guid,
						    e->port));
		add_col(&vars, 3, PORT_COL_LID, pidx, 1, &v);
		mib_v_int(&v, mib_link_state((unsigned)e->new_value));
		add_col(&vars, 3, PORT_COL_STATE, pidx, 1, &v);
		mib_v_int(&v, mib_link_state((unsigned)e->old_value));
		add_notify_obj(&vars, 4, &v);
		add_where(&vars, 3, PORT_COL_NODE_GUID, pidx, e->node_guid,
			  e->port);
		break;
	case IBW_EVT_THRESHOLD_CROSSED:
		mib_v_str(&v, mib_name_of(m, e->node_guid));
		add_col(&vars, 2, NODE_COL_NAME, nidx, 1, &v);
		mib_v_unsigned(&v, ibw_snapshot_lid(m->snap, e->node_guid,
						    e->port));
		add_col(&vars, 3, PORT_COL_LID, pidx, 1, &v);
		mib_v_str(&v, e->what);
		add_notify_obj(&vars, 1, &v);
		mib_v_unsigned(&v, e->new_value);
		add_notify_obj(&vars, 3, &v);
		mib_v_unsigned(&v, e->old_value);
		add_notify_obj(&vars, 2, &v);
		add_where(&vars, 3, PORT_COL_NODE_GUID, pidx, e->node_guid,
			  e->port);
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
		add_col(&vars, 8, LINK_COL_NAME, pidx, 1, &v);
		mib_v_guid(&v, e->peer_guid);
		add_col(&vars, 8, LINK_COL_REMOTE_GUID, pidx, 1, &v);
		mib_v_unsigned(&v, e->peer_port);
		add_col(&vars, 8, LINK_COL_REMOTE_PORT, pidx, 1, &v);
		mib_v_str(&v, mib_name_of(m, e->peer_guid));
		add_col(&vars, 8, LINK_COL_REMOTE_NAME, pidx, 1, &v);
		mib_v_int(&v, mib_health_enum((unsigned)e->new_value));
		add_col(&vars, 8, LINK_COL_HEALTH, pidx, 1, &v);
		mib_v_int(&v, mib_health_enum((unsigned)e->old_value));
		add_notify_obj(&vars, 7, &v);
		ibw_link_reasons_fmt(e->reasons, reasons, sizeof(reasons));
		mib_v_strcpy(&v, reasons);
		add_col(&vars, 8, LINK_COL_REASONS, pidx, 1, &v);
		/* core/monitor.c puts the bad lanes after "; " */
		lanes = strstr(e->detail, "; ");
		mib_v_strcpy(&v, lanes ? lanes + 2 : "");
		add_col(&vars, 8, LINK_COL_BAD_LANE, pidx, 1, &v);
		add_where(&vars, 8, LINK_COL_NODE_GUID, pidx, e->node_guid,
			  e->port);
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
		const struct ibw_endport *ep = find_ep(m, (uint32_t)pidx[0]);

		mib_v_guid(&v, e->peer_guid);
		add_col(&vars, 4, EP_COL_PORT_GUID, pidx, 1, &v);
		/* the new LID: the snapshot may not have it yet */
		mib_v_unsigned(&v, e->new_value);
		add_col(&vars, 4, EP_COL_LID, pidx, 1, &v);
		mib_v_str(&v, ep ? ep->name : mib_name_of(m, e->node_guid));
		add_col(&vars, 4, EP_COL_NAME, pidx, 1, &v);
		mib_v_unsigned(&v, e->old_value);
		add_notify_obj(&vars, 11, &v);
		mib_v_str(&v, e->what);
		add_notify_obj(&vars, 12, &v);
		add_where(&vars, 4, EP_COL_NODE_GUID, pidx, e->node_guid,
			  e->port);
		break;
	}
	case IBW_EVT_HW_HEALTH:
		mib_v_guid(&v, e->node_guid);
		add_col(&vars, 10, HW_COL_NODE_GUID, nidx, 1, &v);
		mib_v_str(&v, mib_name_of(m, e->node_guid));
		add_col(&vars, 10, HW_COL_NODE_NAME, nidx, 1, &v);
		mib_v_int(&v, !strcmp(e->what, "temperature") ? 1
			      : !strcmp(e->what, "fan")	      ? 2
							      : 3);
		add_notify_obj(&vars, 13, &v);
		mib_v_unsigned(&v, e->port + 1u);
		add_notify_obj(&vars, 14, &v);
		mib_v_bool(&v, e->new_value != 0);
		add_notify_obj(&vars, 15, &v);
		mib_v_str(&v, e->detail);
		add_notify_obj(&vars, 16, &v);
		break;
	case IBW_EVT_FABRIC_CHANGED: {
		/* the event's identities, not the snapshot's (a later change
		 * may be there already): its detail, "fabric OLD -> NEW
		 * (master SM LID a -> b)" */
		char prev[IBW_FABRIC_ID_LEN] = "", cur[IBW_FABRIC_ID_LEN] = "";
		char *slash;
		unsigned lid_old = 0, lid_new = 0;

		if (sscanf(e->detail,
			   "fabric %39s -> %39s (master SM LID %u -> %u)", prev,
			   cur, &lid_old, &lid_new) != 4)
			prev[0] = cur[0] = '\0';
		mib_v_strcpy(&v, cur);
		add_agent_scalar(&vars, 43, &v);
		slash = strchr(cur, '/');
		if (slash)
			*slash = '\0';
		mib_v_strcpy(&v, cur);
		add_agent_scalar(&vars, 44, &v);
		mib_v_guid(&v, e->new_value);
		add_agent_scalar(&vars, 45, &v);
		mib_v_unsigned(&v, lid_new);
		add_agent_scalar(&vars, 46, &v);
		mib_v_strcpy(&v, prev);
		add_notify_obj(&vars, 17, &v);
		break;
	}
	default:
		break;
	}
	return vars;
}
