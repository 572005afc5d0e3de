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
#include <time.h>

/* mib.h brings net-snmp's headers (the agent's too) and core's, in the
 * order they need each other. */
#include "mib.h"

#include "ibw_version.h"
#include "log.h"

#define OBJECTS IBW_MIB_ROOT, 1
#define NOTIFS IBW_MIB_ROOT, 0

/* Port table: the columns before the counters; counter i is column
 * PORT_COL_CTR0 + i, in enum ibw_ctr order, as in the MIB. */
enum {
	PORT_COL_GUID = 3,
	PORT_COL_LID,
	PORT_COL_LMC,
	PORT_COL_STATE,
	PORT_COL_PHYS,
	PORT_COL_WIDTH,
	PORT_COL_SPEED,
	PORT_COL_RATE,
	PORT_COL_RGUID,
	PORT_COL_RPORT,
	PORT_COL_RNAME,
	PORT_COL_GONE,
	PORT_COL_STALE,
	PORT_COL_UPDATED,
	PORT_COL_DISCONT,
	PORT_COL_RESETS,
	PORT_COL_EXT,
	PORT_COL_CTR0,
};
_Static_assert(IBW_CTR_MAX == 32, "a new counter needs a column in the MIB");

/* Endport table: the columns after the index (node GUID, port). */
enum {
	EP_COL_PORT_GUID = 3,
	EP_COL_LID,
	EP_COL_NAME,
	EP_COL_TARGET,
	EP_COL_STATE,
	EP_COL_STATE_SINCE,
	EP_COL_REASON,
	EP_COL_METHOD,
	EP_COL_SENT,
	EP_COL_RECEIVED,
	EP_COL_WINDOW_PROBES,
	EP_COL_WINDOW_LOSS,
	EP_COL_RTT_LAST,
	EP_COL_RTT_MIN,
	EP_COL_RTT_AVG,
	EP_COL_RTT_MAX,
	EP_COL_RTT_MDEV,
	EP_COL_LAST_REPLY,
	EP_COL_RESPONDER_HOST,
};

struct val {
	u_char type;
	long l;
	struct counter64 c64;
	const void *str;
	size_t len;
	u_char buf[16];
	char text[256]; /* a string made for this value (v_strcpy) */
};

struct hrow {
	unsigned path; /* from 1 */
	unsigned dir; /* 1 forward, 2 reverse */
	unsigned hop; /* from 1 */
	const struct ibw_hop *h;
};

/* ibwLinkTable's columns */
enum {
	LINK_COL_NAME = 3,
	LINK_COL_LID,
	LINK_COL_REMOTE_GUID,
	LINK_COL_REMOTE_PORT,
	LINK_COL_REMOTE_NAME,
	LINK_COL_REMOTE_LID,
	LINK_COL_HEALTH,
	LINK_COL_REASONS,
	LINK_COL_WIDTH_ACTIVE,
	LINK_COL_WIDTH_BEST,
	LINK_COL_SPEED_ACTIVE,
	LINK_COL_SPEED_BEST,
	LINK_COL_BER,
	LINK_COL_XMIT_WAIT,
	LINK_COL_RAW_BER,
	LINK_COL_EFFECTIVE_BER,
	LINK_COL_BAD_LANE,
};

struct ibw_mib;

struct table {
	const char *name;
	oid arc; /* under ibwatchObjects */
	int scalars; /* the agent group: instance .0, no entry arc */
	unsigned first_col, max_col;
	unsigned nidx; /* index sub-identifiers, fixed per table */
	unsigned (*nrows)(struct ibw_mib *m);
	void (*index)(struct ibw_mib *m, unsigned row, oid *out);
	/* 0: the object exists, @v set; -1: no such instance */
	int (*get)(struct ibw_mib *m, unsigned row, unsigned col,
		   struct val *v);
};

struct ibw_mib {
	ibw_mib_snapshot_fn snapshot;
	void *snapshot_arg;
	const struct ibw_local_port *lp;
	const struct ibw_localport_query *lq;
	const struct ibw_mib_stats *stats;
	struct ibw_snapshot *snap;
	/* endports with an index (resolved), in index order */
	const struct ibw_snapshot_endport **eps;
	unsigned neps;
	struct hrow *hops;
	unsigned nhops;
	/* the link view's cables by their lower end, in index order */
	const struct ibw_link **links;
	unsigned nlinks;
};

static const oid objects_oid[] = { OBJECTS };
#define OBJECTS_LEN OID_LENGTH(objects_oid)

size_t ibw_mib_guid_index(uint64_t guid, oid *out)
{
	int i;

	for (i = 0; i < 8; i++)
		out[i] = (guid >> (56 - 8 * i)) & 0xff;
	return 8;
}

/* Values */

static void v_int(struct val *v, long l)
{
	v->type = ASN_INTEGER;
	v->l = l;
}

static void v_gauge(struct val *v, uint64_t u)
{
	v->type = ASN_GAUGE;
	v->l = (long)(u > 0xffffffffu ? 0xffffffffu : u);
}

static void v_unsigned(struct val *v, uint64_t u)
{
	v_gauge(v, u);
	v->type = ASN_UNSIGNED;
}

static void v_counter32(struct val *v, uint32_t u)
{
	v->type = ASN_COUNTER;
	v->l = (long)u;
}

static void v_c64(struct val *v, uint64_t u)
{
	v->type = ASN_COUNTER64;
	v->c64.high = (u_long)(u >> 32);
	v->c64.low = (u_long)(u & 0xffffffffu);
}

static void v_str(struct val *v, const char *s)
{
	v->type = ASN_OCTET_STR;
	v->str = s;
	v->len = strlen(s);
}

/* A string that lives no longer than the caller's buffer: copied. */
static void v_strcpy(struct val *v, const char *s)
{
	snprintf(v->text, sizeof(v->text), "%s", s);
	v_str(v, v->text);
}

static void v_guid(struct val *v, uint64_t g)
{
	int i;

	for (i = 0; i < 8; i++)
		v->buf[i] = (u_char)(g >> (56 - 8 * i));
	v->type = ASN_OCTET_STR;
	v->str = v->buf;
	v->len = 8;
}

static void v_bool(struct val *v, int b)
{
	v_int(v, b ? 1 : 2); /* TruthValue */
}

/* DateAndTime in UTC, 11 octets; 0 is 1970-01-01. */
static void v_time(struct val *v, uint64_t us)
{
	time_t t = (time_t)(us / 1000000u);
	struct tm tm;

	gmtime_r(&t, &tm);
	v->buf[0] = (u_char)((tm.tm_year + 1900) >> 8);
	v->buf[1] = (u_char)(tm.tm_year + 1900);
	v->buf[2] = (u_char)(tm.tm_mon + 1);
	v->buf[3] = (u_char)tm.tm_mday;
	v->buf[4] = (u_char)tm.tm_hour;
	v->buf[5] = (u_char)tm.tm_min;
	v->buf[6] = (u_char)tm.tm_sec;
	v->buf[7] = (u_char)(us % 1000000u / 100000u);
	v->buf[8] = '+';
	v->buf[9] = 0;
	v->buf[10] = 0;
	v->type = ASN_OCTET_STR;
	v->str = v->buf;
	v->len = 11;
}

/* IbwPortState: PortState's values, 5 for anything else. */
static long link_state(unsigned s)
{
	return s >= IBW_PORT_DOWN && s <= IBW_PORT_ACTIVE ? (long)s : 5;
}

/* IbwPhysState: PortPhysicalState's values, 8 for anything else. */
static long phys_state(unsigned s)
{
	return s >= IBW_PHYS_SLEEP && s <= IBW_PHYS_TEST ? (long)s : 8;
}

static long width_enum(unsigned w)
{
	return w == 1 || w == 2 || w == 4 || w == 8 || w == 16 ? (long)w : 255;
}

static long speed_enum(unsigned speed, unsigned ext)
{
	switch (ext) {
	case 1:
		return 4;
	case 2:
		return 5;
	case 4:
		return 6;
	case 8:
		return 7;
	}
	switch (speed) {
	case 1:
		return 1;
	case 2:
		return 2;
	case 4:
		return 3;
	}
	return 255;
}

static long liveness(enum ibw_endport_state s)
{
	switch (s) {
	case IBW_EP_UP:
		return 1;
	case IBW_EP_DEGRADED:
		return 2;
	case IBW_EP_DOWN:
		return 3;
	default:
		return 4;
	}
}

static const char *name_of(struct ibw_mib *m, uint64_t guid)
{
	const struct ibw_snapshot_node *nv =
		ibw_snapshot_find_node(m->snap, guid);

	return nv ? nv->name : "";
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

/* The agent scalars */

static unsigned one_row(struct ibw_mib *m)
{
	return 1;
}

static void zero_index(struct ibw_mib *m, unsigned row, oid *out)
{
	out[0] = 0;
}

/* ibwRoutesPairs .. ibwRoutesTablesStale: the snapshot's census, 0
 * before the first. */
static void route_scalar(const struct ibw_snapshot *s, unsigned col,
			 struct val *v)
{
	const struct ibw_census_summary *cs =
		s->census ? ibw_census_summary(s->census) : NULL;
	uint64_t u = 0;

	if (cs && col == 34)
		u = cs->pairs;
	else if (cs && col == 35)
		u = cs->routed;
	else if (cs && col == 36)
		u = cs->unreachable;
	else if (cs && col == 37)
		u = cs->looping;
	else if (cs && col == 38)
		u = cs->non_minimal;
	else if (cs && col == 39)
		u = cs->tables_missing;
	else if (cs && col == 40)
		u = cs->tables_stale;
	v_gauge(v, u);
}

static int agent_get(struct ibw_mib *m, unsigned row, unsigned col,
		     struct val *v)
{
	const struct ibw_snapshot *s = m->snap;
	const struct ibw_localport_query *q = m->lq;

	switch (col) {
	case 1:
		v_str(v, IBW_VERSION);
		break;
	case 2:
		v_str(v, m->lp->ca_name);
		break;
	case 3:
		v_unsigned(v, (unsigned)m->lp->portnum);
		break;
	case 4:
		v_guid(v, m->lp->port_guid);
		break;
	case 5:
		v_unsigned(v, q->have_portinfo ? q->pi.lid : m->lp->lid);
		break;
	case 6:
		v_int(v, link_state(q->have_portinfo ? q->pi.state
						     : m->lp->state));
		break;
	case 7:
		v_time(v, s->started_us);
		break;
	case 8:
		v_time(v, s->taken_us);
		break;
	case 9:
		v_c64(v, s->seq);
		break;
	case 10:
		v_bool(v, ibw_snapshot_stale(s, ibw_realtime_us()));
		break;
	case 11:
		v_time(v, s->discovery.start_us);
		break;
	case 12:
		v_gauge(v, s->discovery.duration_us / 1000u);
		break;
	case 13:
		v_c64(v, s->discoveries);
		break;
	case 14:
		v_time(v, s->counters.start_us);
		break;
	case 15:
		v_gauge(v, s->counters.duration_us / 1000u);
		break;
	case 16:
		v_c64(v, s->counter_sweeps);
		break;
	case 17:
		v_gauge(v, s->unreachable_ports);
		break;
	case 18:
		v_gauge(v, s->sum.nodes);
		break;
	case 19:
		v_gauge(v, s->sum.switches);
		break;
	case 20:
		v_gauge(v, s->sum.cas);
		break;
	case 21:
		v_gauge(v, s->sum.ports);
		break;
	case 22:
		v_gauge(v, s->sum.links);
		break;
	case 23:
		v_gauge(v, s->sum.endports[IBW_EP_UP]);
		break;
	case 24:
		v_gauge(v, s->sum.endports[IBW_EP_DEGRADED]);
		break;
	case 25:
		v_gauge(v, s->sum.endports[IBW_EP_DOWN]);
		break;
	case 26:
		v_gauge(v, s->sum.endports[IBW_EP_UNKNOWN]);
		break;
	case 27:
		v_c64(v, m->stats->notifications_sent);
		break;
	case 29:
	case 30:
	case 31:
	case 32:
		/* ibwLinksOk .. ibwLinksDown: the view's counts */
		v_gauge(v, s->links ? s->links->count[col - 29] : 0);
		break;
	case 28:
		v_c64(v, m->stats->notifications_suppressed);
		break;
	case 33:
		v_time(v, s->census ? ibw_lft_set_stats(
					      ibw_census_tables(s->census))
					      ->start_us
				    : 0);
		break;
	case 34:
	case 35:
	case 36:
	case 37:
	case 38:
	case 39:
	case 40:
		route_scalar(s, col, v);
		break;
	default:
		return -1;
	}
	return 0;
}

/* The node table */

static unsigned node_rows(struct ibw_mib *m)
{
	return m->snap->nnode_views;
}

static void node_index(struct ibw_mib *m, unsigned row, oid *out)
{
	ibw_mib_guid_index(m->snap->node_views[row].n->guid, out);
}

static int node_get(struct ibw_mib *m, unsigned row, unsigned col,
		    struct val *v)
{
	const struct ibw_snapshot_node *nv = &m->snap->node_views[row];
	const struct ibw_fnode *n = nv->n;

	switch (col) {
	case 2:
		v_int(v, n->ni.node_type);
		break;
	case 3:
		v_str(v, nv->name);
		break;
	case 4:
		v_str(v, n->desc);
		break;
	case 5:
		v_unsigned(v, n->lid);
		break;
	case 6:
		v_unsigned(v, n->ni.num_ports);
		break;
	case 7:
		v_guid(v, n->ni.system_guid);
		break;
	case 8:
		v_unsigned(v, n->ni.vendor_id);
		break;
	case 9:
		v_unsigned(v, n->ni.device_id);
		break;
	case 10:
		v_unsigned(v, n->ni.revision);
		break;
	case 11:
		v_bool(v, n->gone);
		break;
	default:
		return -1;
	}
	return 0;
}

/* The port table */

static unsigned port_rows(struct ibw_mib *m)
{
	return m->snap->nport_views;
}

static void port_index(struct ibw_mib *m, unsigned row, oid *out)
{
	const struct ibw_snapshot_port *r = &m->snap->port_views[row];

	ibw_mib_guid_index(r->node->n->guid, out);
	out[8] = r->p->num;
}

static int port_get(struct ibw_mib *m, unsigned row, unsigned col,
		    struct val *v)
{
	const struct ibw_snapshot_port *r = &m->snap->port_views[row];
	const struct ibw_fport *p = r->p;
	const struct ibw_port_ctrs *pc = r->ctrs;
	int up = r->link_up;

	if (col >= PORT_COL_CTR0) {
		unsigned i = col - PORT_COL_CTR0;

		if (i >= IBW_CTR_MAX || !pc || !pc->v[i].have_raw)
			return -1;
		v_c64(v, pc->v[i].total);
		return 0;
	}
	switch (col) {
	case PORT_COL_GUID:
		if (!p->guid)
			return -1;
		v_guid(v, p->guid);
		break;
	case PORT_COL_LID:
	case PORT_COL_LMC:
	case PORT_COL_STATE:
	case PORT_COL_PHYS:
		if (!p->have_pi)
			return -1;
		if (col == PORT_COL_LID)
			v_unsigned(v, p->pi.lid);
		else if (col == PORT_COL_LMC)
			v_unsigned(v, p->pi.lmc);
		else if (col == PORT_COL_STATE)
			v_int(v, link_state(p->pi.state));
		else
			v_int(v, phys_state(p->pi.phys_state));
		break;
	case PORT_COL_WIDTH:
		if (!up)
			return -1;
		v_int(v, width_enum(p->pi.width_active));
		break;
	case PORT_COL_SPEED:
		if (!up)
			return -1;
		v_int(v,
		      speed_enum(p->pi.speed_active, p->pi.speed_ext_active));
		break;
	case PORT_COL_RATE:
		if (!up)
			return -1;
		v_gauge(v, (uint64_t)(ibw_link_gbps(&p->pi) * 1000.0 + 0.5));
		break;
	case PORT_COL_RGUID:
		if (!p->remote_guid)
			return -1;
		v_guid(v, p->remote_guid);
		break;
	case PORT_COL_RPORT:
		if (!p->remote_guid)
			return -1;
		v_unsigned(v, p->remote_port);
		break;
	case PORT_COL_RNAME:
		if (!p->remote_guid)
			return -1;
		v_str(v, r->remote_name);
		break;
	case PORT_COL_GONE:
		v_bool(v, r->gone);
		break;
	case PORT_COL_STALE:
	case PORT_COL_UPDATED:
	case PORT_COL_DISCONT:
	case PORT_COL_RESETS:
	case PORT_COL_EXT:
		if (!pc)
			return -1;
		if (col == PORT_COL_STALE)
			v_bool(v, pc->stale);
		else if (col == PORT_COL_UPDATED)
			v_time(v, pc->updated_us);
		else if (col == PORT_COL_DISCONT)
			v_time(v, pc->discontinuity_us);
		else if (col == PORT_COL_RESETS)
			v_counter32(v, pc->resets);
		else
			v_bool(v, pc->have_ext);
		break;
	default:
		return -1;
	}
	return 0;
}

/* The endport table */

static unsigned ep_rows(struct ibw_mib *m)
{
	return m->neps;
}

static void ep_index(struct ibw_mib *m, unsigned row, oid *out)
{
	ibw_mib_guid_index(m->eps[row]->ep->node_guid, out);
	out[8] = m->eps[row]->ep->port;
}

static uint64_t rtt_us(double us)
{
	return us > 0 ? (uint64_t)(us + 0.5) : 0;
}

static int ep_get(struct ibw_mib *m, unsigned row, unsigned col, struct val *v)
{
	const struct ibw_snapshot_endport *ev = m->eps[row];
	const struct ibw_endport *ep = ev->ep;

	switch (col) {
	case EP_COL_PORT_GUID:
		v_guid(v, ep->port_guid);
		break;
	case EP_COL_LID:
		v_unsigned(v, ep->lid);
		break;
	case EP_COL_NAME:
		v_str(v, ep->name);
		break;
	case EP_COL_TARGET:
		v_str(v, ep->target);
		break;
	case EP_COL_STATE:
		v_int(v, liveness(ep->state));
		break;
	case EP_COL_STATE_SINCE:
		v_time(v, ep->state_since_us);
		break;
	case EP_COL_REASON:
		v_str(v, ep->reason);
		break;
	case EP_COL_METHOD:
		v_int(v, (long)ep->last_method + 1);
		break;
	case EP_COL_SENT:
		v_c64(v, ep->sent);
		break;
	case EP_COL_RECEIVED:
		v_c64(v, ep->received);
		break;
	case EP_COL_WINDOW_PROBES:
		v_gauge(v, ep->window_n);
		break;
	case EP_COL_WINDOW_LOSS:
		v_gauge(v, ev->window_loss_centipct);
		break;
	case EP_COL_RTT_LAST:
		v_gauge(v, ep->received ? ep->rtt_last_us : 0);
		break;
	case EP_COL_RTT_MIN:
		v_gauge(v, ep->received ? ep->rtt_min_us : 0);
		break;
	case EP_COL_RTT_AVG:
		v_gauge(v, ep->received ? rtt_us(ep->rtt_avg_us) : 0);
		break;
	case EP_COL_RTT_MAX:
		v_gauge(v, ep->received ? ep->rtt_max_us : 0);
		break;
	case EP_COL_RTT_MDEV:
		v_gauge(v, ep->received ? rtt_us(ep->rtt_mdev_us) : 0);
		break;
	case EP_COL_LAST_REPLY:
		v_time(v, ep->last_reply_us);
		break;
	case EP_COL_RESPONDER_HOST:
		v_str(v, ep->responder_host);
		break;
	default:
		return -1;
	}
	return 0;
}

/* The path and hop tables */

static unsigned path_rows(struct ibw_mib *m)
{
	return m->snap->nwatched;
}

static void path_index(struct ibw_mib *m, unsigned row, oid *out)
{
	out[0] = row + 1;
}

static int path_get(struct ibw_mib *m, unsigned row, unsigned col,
		    struct val *v)
{
	const struct ibw_watched *w = &m->snap->watched[row];
	const struct ibw_path *f = &w->last.fwd;

	switch (col) {
	case 2:
		v_str(v, w->target);
		break;
	case 3:
		v_unsigned(v, w->lid);
		break;
	case 4:
		v_int(v, w->have ? (long)f->status + 1 : 8);
		break;
	case 5:
		v_gauge(v, w->have ? f->nhops : 0);
		break;
	case 6:
		v_bool(v, w->have && w->last.differs);
		break;
	case 7:
		v_c64(v, w->traces);
		break;
	case 8:
		v_c64(v, w->changes);
		break;
	case 9:
		v_time(v, w->last_us);
		break;
	case 10:
		v_str(v, w->have && f->status != IBW_TRACE_OK ? f->reason : "");
		break;
	default:
		return -1;
	}
	return 0;
}

static unsigned hop_rows(struct ibw_mib *m)
{
	return m->nhops;
}

static void hop_index(struct ibw_mib *m, unsigned row, oid *out)
{
	out[0] = m->hops[row].path;
	out[1] = m->hops[row].dir;
	out[2] = m->hops[row].hop;
}

static int hop_get(struct ibw_mib *m, unsigned row, unsigned col, struct val *v)
{
	const struct ibw_hop *h = m->hops[row].h;

	switch (col) {
	case 3:
		v_guid(v, h->node_guid);
		break;
	case 4:
		v_int(v, h->type);
		break;
	case 5:
		v_str(v, h->name);
		break;
	case 6:
		v_unsigned(v, h->lid);
		break;
	case 7:
		v_unsigned(v, h->in_port);
		break;
	case 8:
		v_unsigned(v, h->out_port);
		break;
	default:
		return -1;
	}
	return 0;
}

/* The link table: a cable by its end with the lower (GUID, port) */

static unsigned link_rows(struct ibw_mib *m)
{
	return m->nlinks;
}

static void link_index(struct ibw_mib *m, unsigned row, oid *out)
{
	ibw_mib_guid_index(m->links[row]->end[0].guid, out);
	out[8] = m->links[row]->end[0].port;
}

/* IbwHealthState: ok(1) .. down(4) */
static long health_enum(unsigned h)
{
	return (long)h + 1;
}

static int link_get(struct ibw_mib *m, unsigned row, unsigned col,
		    struct val *v)
{
	const struct ibw_link *k = m->links[row];
	char buf[256];

	switch (col) {
	case LINK_COL_NAME:
		v_str(v, k->end[0].name);
		break;
	case LINK_COL_LID:
		v_unsigned(v, k->end[0].lid);
		break;
	case LINK_COL_REMOTE_GUID:
		v_guid(v, k->end[1].guid);
		break;
	case LINK_COL_REMOTE_PORT:
		v_unsigned(v, k->end[1].port);
		break;
	case LINK_COL_REMOTE_NAME:
		v_str(v, k->end[1].name);
		break;
	case LINK_COL_REMOTE_LID:
		v_unsigned(v, k->end[1].lid);
		break;
	case LINK_COL_HEALTH:
		v_int(v, health_enum(k->health));
		break;
	case LINK_COL_REASONS:
		/* made here: copied into the value */
		ibw_link_reasons_fmt(k->reasons, buf, sizeof(buf));
		v_strcpy(v, buf);
		break;
	case LINK_COL_WIDTH_ACTIVE:
		v_gauge(v, ibw_width_lanes(k->width_active));
		break;
	case LINK_COL_WIDTH_BEST:
		v_gauge(v, ibw_width_lanes(k->width_best));
		break;
	case LINK_COL_SPEED_ACTIVE:
		v_str(v,
		      k->speed_active ? ibw_speed_name(k->speed_active) : "");
		break;
	case LINK_COL_SPEED_BEST:
		v_str(v, k->speed_best ? ibw_speed_name(k->speed_best) : "");
		break;
	case LINK_COL_BER:
	case LINK_COL_RAW_BER:
	case LINK_COL_EFFECTIVE_BER: {
		double r = col == LINK_COL_BER	     ? k->ber
			   : col == LINK_COL_RAW_BER ? k->raw_ber
						     : k->effective_ber;

		if (r >= 0)
			snprintf(buf, sizeof(buf), "%.3g", r);
		else
			buf[0] = '\0';
		v_strcpy(v, buf);
		break;
	}
	case LINK_COL_BAD_LANE:
		ibw_link_bad_lanes_fmt(k, buf, sizeof(buf));
		v_strcpy(v, buf);
		break;
	case LINK_COL_XMIT_WAIT:
		v_gauge(v, k->xmit_wait_ratio >= 0
				   ? (uint64_t)(k->xmit_wait_ratio * 1e6 + 0.5)
				   : 0);
		break;
	default:
		return -1;
	}
	return 0;
}

static const struct table tables[] = {
	{ "ibwAgent", 1, 1, 1, 40, 1, one_row, zero_index, agent_get },
	{ "ibwNodeTable", 2, 0, 2, 11, 8, node_rows, node_index, node_get },
	{ "ibwPortTable", 3, 0, PORT_COL_GUID, PORT_COL_CTR0 + IBW_CTR_MAX - 1,
	  9, port_rows, port_index, port_get },
	{ "ibwEndportTable", 4, 0, EP_COL_PORT_GUID, EP_COL_RESPONDER_HOST, 9,
	  ep_rows, ep_index, ep_get },
	{ "ibwPathTable", 5, 0, 2, 10, 1, path_rows, path_index, path_get },
	{ "ibwHopTable", 6, 0, 3, 8, 3, hop_rows, hop_index, hop_get },
	/* (arc 7 is ibwNotifyObjects: nothing to read) */
	{ "ibwLinkTable", 8, 0, LINK_COL_NAME, LINK_COL_BAD_LANE, 9, link_rows,
	  link_index, link_get },
};

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
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		const struct table *t = &tables[i];
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

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		const struct table *t = &tables[i];
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

		v_guid(&v, e->peer_guid);
		add_col(&vars, 4, EP_COL_PORT_GUID, pidx, 9, &v);
		v_unsigned(&v, ep ? ep->lid
				  : ibw_snapshot_lid(m->snap, e->node_guid,
						     e->port));
		add_col(&vars, 4, EP_COL_LID, pidx, 9, &v);
		v_str(&v, ep ? ep->name : name_of(m, e->node_guid));
		add_col(&vars, 4, EP_COL_NAME, pidx, 9, &v);
		v_int(&v, liveness(e->new_value));
		add_col(&vars, 4, EP_COL_STATE, pidx, 9, &v);
		v_int(&v, liveness(e->old_value));
		add_notify_obj(&vars, 5, &v);
		v_str(&v, e->what);
		add_col(&vars, 4, EP_COL_REASON, pidx, 9, &v);
		break;
	}
	case IBW_EVT_PORT_STATE_CHANGED:
		v_str(&v, name_of(m, e->node_guid));
		add_col(&vars, 2, 3, nidx, 8, &v);
		v_unsigned(&v,
			   ibw_snapshot_lid(m->snap, e->node_guid, e->port));
		add_col(&vars, 3, PORT_COL_LID, pidx, 9, &v);
		v_int(&v, link_state((unsigned)e->new_value));
		add_col(&vars, 3, PORT_COL_STATE, pidx, 9, &v);
		v_int(&v, link_state((unsigned)e->old_value));
		add_notify_obj(&vars, 4, &v);
		break;
	case IBW_EVT_THRESHOLD_CROSSED:
		v_str(&v, name_of(m, e->node_guid));
		add_col(&vars, 2, 3, nidx, 8, &v);
		v_unsigned(&v,
			   ibw_snapshot_lid(m->snap, e->node_guid, e->port));
		add_col(&vars, 3, PORT_COL_LID, pidx, 9, &v);
		v_str(&v, e->what);
		add_notify_obj(&vars, 1, &v);
		v_unsigned(&v, e->new_value);
		add_notify_obj(&vars, 3, &v);
		v_unsigned(&v, e->old_value);
		add_notify_obj(&vars, 2, &v);
		break;
	case IBW_EVT_PATH_CHANGED: {
		oid idx[1] = { 0 };

		for (i = 0; i < m->snap->nwatched; i++)
			if (!strcmp(m->snap->watched[i].target, e->what))
				idx[0] = i + 1;
		v_str(&v, e->what);
		add_col(&vars, 5, 2, idx, 1, &v);
		v_unsigned(&v, idx[0] ? m->snap->watched[idx[0] - 1].lid : 0);
		add_col(&vars, 5, 3, idx, 1, &v);
		v_c64(&v, idx[0] ? m->snap->watched[idx[0] - 1].changes : 0);
		add_col(&vars, 5, 8, idx, 1, &v);
		v_str(&v, e->detail);
		add_notify_obj(&vars, 6, &v);
		break;
	}
	case IBW_EVT_LINK_HEALTH_CHANGED: {
		/* the event's own values: the snapshot may be newer */
		char reasons[256];
		const char *lanes;

		v_str(&v, name_of(m, e->node_guid));
		add_col(&vars, 8, LINK_COL_NAME, pidx, 9, &v);
		v_guid(&v, e->peer_guid);
		add_col(&vars, 8, LINK_COL_REMOTE_GUID, pidx, 9, &v);
		v_unsigned(&v, e->peer_port);
		add_col(&vars, 8, LINK_COL_REMOTE_PORT, pidx, 9, &v);
		v_str(&v, name_of(m, e->peer_guid));
		add_col(&vars, 8, LINK_COL_REMOTE_NAME, pidx, 9, &v);
		v_int(&v, health_enum((unsigned)e->new_value));
		add_col(&vars, 8, LINK_COL_HEALTH, pidx, 9, &v);
		v_int(&v, health_enum((unsigned)e->old_value));
		add_notify_obj(&vars, 7, &v);
		ibw_link_reasons_fmt(e->reasons, reasons, sizeof(reasons));
		v_strcpy(&v, reasons);
		add_col(&vars, 8, LINK_COL_REASONS, pidx, 9, &v);
		/* core/monitor.c puts the bad lanes after "; " */
		lanes = strstr(e->detail, "; ");
		v_strcpy(&v, lanes ? lanes + 2 : "");
		add_col(&vars, 8, LINK_COL_BAD_LANE, pidx, 9, &v);
		break;
	}
	case IBW_EVT_ROUTES_LOST:
	case IBW_EVT_ROUTE_LOOPS:
		/* the totals of the snapshot's census: the one the event
		 * came from or a newer one */
		route_scalar(m->snap, 36, &v);
		add_agent_scalar(&vars, 36, &v);
		route_scalar(m->snap, 37, &v);
		add_agent_scalar(&vars, 37, &v);
		v_gauge(&v, e->new_value);
		add_notify_obj(&vars, 8, &v);
		v_str(&v, e->detail);
		add_notify_obj(&vars, 9, &v);
		break;
	case IBW_EVT_LOCAL_PORT_LOST:
	case IBW_EVT_LOCAL_PORT_BACK:
		/* CA, port, port GUID and LID as the scalars have them; the
		 * state the event's (a later query may have read another) */
		for (i = 2; i <= 5; i++) {
			agent_get(m, 0, i, &v);
			add_agent_scalar(&vars, i, &v);
		}
		v_int(&v, link_state((unsigned)e->old_value));
		add_agent_scalar(&vars, 6, &v);
		if (e->kind == IBW_EVT_LOCAL_PORT_LOST) {
			/* stale from the moment it is lost */
			v_bool(&v, 1);
			add_agent_scalar(&vars, 10, &v);
		} else {
			v_unsigned(&v, e->new_value);
			add_notify_obj(&vars, 10, &v);
		}
		break;
	case IBW_EVT_ENDPORT_MOVED: {
		const struct ibw_endport *ep =
			find_ep(m, e->node_guid, e->port);

		v_guid(&v, e->peer_guid);
		add_col(&vars, 4, EP_COL_PORT_GUID, pidx, 9, &v);
		/* the new LID: the snapshot may not have it yet */
		v_unsigned(&v, e->new_value);
		add_col(&vars, 4, EP_COL_LID, pidx, 9, &v);
		v_str(&v, ep ? ep->name : name_of(m, e->node_guid));
		add_col(&vars, 4, EP_COL_NAME, pidx, 9, &v);
		v_unsigned(&v, e->old_value);
		add_notify_obj(&vars, 11, &v);
		v_str(&v, e->what);
		add_notify_obj(&vars, 12, &v);
		break;
	}
	default:
		break;
	}
	return vars;
}
