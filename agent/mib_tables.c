// SPDX-License-Identifier: BSD-2-Clause
/*
 * IBWATCH-MIB's values: the SMI types and enumerations, and each table's
 * rows and columns read from the indexed snapshot (mib.c indexes it and
 * answers the requests).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mib_int.h"

#include "ibw_version.h"

/* Values */

void ibw_mib_guid_str(uint64_t guid, char *buf)
{
	snprintf(buf, GUID_STR_LEN + 1, "0x%016" PRIx64, guid);
}

size_t ibw_mib_guid_index(uint64_t guid, oid *out)
{
	char s[GUID_STR_LEN + 1];
	int i;

	ibw_mib_guid_str(guid, s);
	for (i = 0; i < GUID_STR_LEN; i++)
		out[i] = (u_char)s[i];
	return GUID_STR_LEN;
}

void mib_v_int(struct val *v, long l)
{
	v->type = ASN_INTEGER;
	v->l = l;
}

void mib_v_gauge(struct val *v, uint64_t u)
{
	v->type = ASN_GAUGE;
	v->l = (long)(u > 0xffffffffu ? 0xffffffffu : u);
}

void mib_v_unsigned(struct val *v, uint64_t u)
{
	mib_v_gauge(v, u);
	v->type = ASN_UNSIGNED;
}

void mib_v_counter32(struct val *v, uint32_t u)
{
	v->type = ASN_COUNTER;
	v->l = (long)u;
}

void mib_v_c64(struct val *v, uint64_t u)
{
	v->type = ASN_COUNTER64;
	v->c64.high = (u_long)(u >> 32);
	v->c64.low = (u_long)(u & 0xffffffffu);
}

void mib_v_str(struct val *v, const char *s)
{
	v->type = ASN_OCTET_STR;
	v->str = s;
	v->len = strlen(s);
}

/* A string that lives no longer than the caller's buffer: copied. */
void mib_v_strcpy(struct val *v, const char *s)
{
	snprintf(v->text, sizeof(v->text), "%s", s);
	mib_v_str(v, v->text);
}

void mib_v_guid(struct val *v, uint64_t g)
{
	ibw_mib_guid_str(g, v->text);
	mib_v_str(v, v->text);
}

void mib_v_bool(struct val *v, int b)
{
	mib_v_int(v, b ? 1 : 2); /* TruthValue */
}

/* DateAndTime in UTC, 11 octets; 0 is 1970-01-01. */
void mib_v_time(struct val *v, uint64_t us)
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
long mib_link_state(unsigned s)
{
	return s >= IBW_PORT_DOWN && s <= IBW_PORT_ACTIVE ? (long)s : 5;
}

/* IbwPhysState: PortPhysicalState's values, 8 for anything else. */
long mib_phys_state(unsigned s)
{
	return s >= IBW_PHYS_SLEEP && s <= IBW_PHYS_TEST ? (long)s : 8;
}

long mib_width_enum(unsigned w)
{
	return w == 1 || w == 2 || w == 4 || w == 8 || w == 16 ? (long)w : 255;
}

long mib_speed_enum(unsigned speed, unsigned ext)
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

long mib_liveness(enum ibw_endport_state s)
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

const char *mib_name_of(struct ibw_mib *m, uint64_t guid)
{
	const struct ibw_snapshot_node *nv =
		ibw_snapshot_find_node(m->snap, guid);

	return nv ? nv->name : "";
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
void mib_route_scalar(const struct ibw_snapshot *s, unsigned col, struct val *v)
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
	mib_v_gauge(v, u);
}

/* Devices of @v with a hot sensor (@failed 0), or with a fan or power
 * supply failed (1). */
static unsigned hw_count(const struct ibw_hw_view *v, int failed)
{
	unsigned i, k, n = 0;

	for (i = 0; v && i < v->nnodes; i++) {
		const struct ibw_hw_node *d = &v->nodes[i];
		int hot = 0;

		for (k = 0; k < d->nsensors; k++)
			hot |= d->sensors[k].hot;
		if (failed)
			n += ibw_hw_node_fans_failed(d) ||
			     ibw_hw_node_psus_failed(d);
		else
			n += hot;
	}
	return n;
}

int mib_agent_get(struct ibw_mib *m, unsigned row, unsigned col, struct val *v)
{
	const struct ibw_snapshot *s = m->snap;
	const struct ibw_localport_query *q = m->lq;

	switch (col) {
	case 1:
		mib_v_str(v, IBW_VERSION);
		break;
	case 2:
		mib_v_str(v, m->lp->ca_name);
		break;
	case 3:
		mib_v_unsigned(v, (unsigned)m->lp->portnum);
		break;
	case 4:
		mib_v_guid(v, m->lp->port_guid);
		break;
	case 5:
		mib_v_unsigned(v, q->have_portinfo ? q->pi.lid : m->lp->lid);
		break;
	case 6:
		mib_v_int(v, mib_link_state(q->have_portinfo ? q->pi.state
							     : m->lp->state));
		break;
	case 7:
		mib_v_time(v, s->started_us);
		break;
	case 8:
		mib_v_time(v, s->taken_us);
		break;
	case 9:
		mib_v_c64(v, s->seq);
		break;
	case 10:
		mib_v_bool(v, ibw_snapshot_stale(s, ibw_realtime_us()));
		break;
	case 11:
		mib_v_time(v, s->discovery.start_us);
		break;
	case 12:
		mib_v_gauge(v, s->discovery.duration_us / 1000u);
		break;
	case 13:
		mib_v_c64(v, s->discoveries);
		break;
	case 14:
		mib_v_time(v, s->counters.start_us);
		break;
	case 15:
		mib_v_gauge(v, s->counters.duration_us / 1000u);
		break;
	case 16:
		mib_v_c64(v, s->counter_sweeps);
		break;
	case 17:
		mib_v_gauge(v, s->unreachable_ports);
		break;
	case 18:
		mib_v_gauge(v, s->sum.nodes);
		break;
	case 19:
		mib_v_gauge(v, s->sum.switches);
		break;
	case 20:
		mib_v_gauge(v, s->sum.cas);
		break;
	case 21:
		mib_v_gauge(v, s->sum.ports);
		break;
	case 22:
		mib_v_gauge(v, s->sum.links);
		break;
	case 23:
		mib_v_gauge(v, s->sum.endports[IBW_EP_UP]);
		break;
	case 24:
		mib_v_gauge(v, s->sum.endports[IBW_EP_DEGRADED]);
		break;
	case 25:
		mib_v_gauge(v, s->sum.endports[IBW_EP_DOWN]);
		break;
	case 26:
		mib_v_gauge(v, s->sum.endports[IBW_EP_UNKNOWN]);
		break;
	case 27:
		mib_v_c64(v, m->stats->notifications_sent);
		break;
	case 29:
	case 30:
	case 31:
	case 32:
		/* ibwLinksOk .. ibwLinksDown: the view's counts */
		mib_v_gauge(v, s->links ? s->links->count[col - 29] : 0);
		break;
	case 28:
		mib_v_c64(v, m->stats->notifications_suppressed);
		break;
	case 33:
		mib_v_time(v, s->census ? ibw_lft_set_stats(
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
		mib_route_scalar(s, col, v);
		break;
	case 41:
	case 42:
		/* ibwHwWarnings, ibwHwFailures: devices hot, or with a fan
		 * or supply failed */
		mib_v_gauge(v, hw_count(s->hw, col == 42));
		break;
	case 43:
	case 44: {
		/* ibwFabricId, ibwFabricSubnetPrefix ("" until known) */
		char buf[IBW_FABRIC_ID_LEN] = "";

		if (s->fabric_id.known && col == 43)
			ibw_fabric_id_str(&s->fabric_id, buf, sizeof(buf));
		else if (s->fabric_id.known)
			snprintf(buf, sizeof(buf), "0x%016" PRIx64,
				 s->fabric_id.subnet_prefix);
		mib_v_strcpy(v, buf);
		break;
	}
	case 45:
		mib_v_guid(v, s->fabric_id.sm_guid);
		break;
	case 46:
		mib_v_unsigned(v, s->fabric_id.sm_lid);
		break;
	case 47:
		mib_v_time(v, s->fabric_id.since_us);
		break;
	default:
		return -1;
	}
	return 0;
}

/* The node table */

static unsigned node_rows(struct ibw_mib *m)
{
	return m->nnodes;
}

static void node_index(struct ibw_mib *m, unsigned row, oid *out)
{
	out[0] = m->nodes[row].idx;
}

static int node_get(struct ibw_mib *m, unsigned row, unsigned col,
		    struct val *v)
{
	const struct ibw_snapshot_node *nv = m->nodes[row].p;
	const struct ibw_fnode *n = nv->n;

	switch (col) {
	case NODE_COL_GUID:
		mib_v_guid(v, n->guid);
		break;
	case NODE_COL_TYPE:
		mib_v_int(v, n->ni.node_type);
		break;
	case NODE_COL_NAME:
		mib_v_str(v, nv->name);
		break;
	case NODE_COL_DESC:
		mib_v_str(v, n->desc);
		break;
	case NODE_COL_LID:
		mib_v_unsigned(v, n->lid);
		break;
	case NODE_COL_NPORTS:
		mib_v_unsigned(v, n->ni.num_ports);
		break;
	case NODE_COL_SYSGUID:
		mib_v_guid(v, n->ni.system_guid);
		break;
	case NODE_COL_VENDOR:
		mib_v_unsigned(v, n->ni.vendor_id);
		break;
	case NODE_COL_DEVICE:
		mib_v_unsigned(v, n->ni.device_id);
		break;
	case NODE_COL_REVISION:
		mib_v_unsigned(v, n->ni.revision);
		break;
	case NODE_COL_GONE:
		mib_v_bool(v, n->gone);
		break;
	default:
		return -1;
	}
	return 0;
}

/* The port table */

static unsigned port_rows(struct ibw_mib *m)
{
	return m->nports;
}

static void port_index(struct ibw_mib *m, unsigned row, oid *out)
{
	out[0] = m->ports[row].idx;
}

static int port_get(struct ibw_mib *m, unsigned row, unsigned col,
		    struct val *v)
{
	const struct ibw_snapshot_port *r = m->ports[row].p;
	const struct ibw_fport *p = r->p;
	const struct ibw_port_ctrs *pc = r->ctrs;
	int up = r->link_up;

	if (col == PORT_COL_NODE_NAME) {
		mib_v_str(v, r->node->name);
		return 0;
	}
	if (col >= PORT_COL_CTR0) {
		int i = ibw_ctr_by_mib_col(col); /* core/ctr_desc.c's table */

		if (i < 0 || !pc || !ibw_ctr_val(pc, (enum ibw_ctr)i)->have_raw)
			return -1;
		mib_v_c64(v, ibw_ctr_val(pc, (enum ibw_ctr)i)->total);
		return 0;
	}
	switch (col) {
	case PORT_COL_NODE_GUID:
		mib_v_guid(v, r->node->n->guid);
		break;
	case PORT_COL_NUM:
		mib_v_unsigned(v, p->num);
		break;
	case PORT_COL_GUID:
		if (!p->guid)
			return -1;
		mib_v_guid(v, p->guid);
		break;
	case PORT_COL_LID:
	case PORT_COL_LMC:
	case PORT_COL_STATE:
	case PORT_COL_PHYS:
		if (!p->have_pi)
			return -1;
		if (col == PORT_COL_LID)
			mib_v_unsigned(v, p->pi.lid);
		else if (col == PORT_COL_LMC)
			mib_v_unsigned(v, p->pi.lmc);
		else if (col == PORT_COL_STATE)
			mib_v_int(v, mib_link_state(p->pi.state));
		else
			mib_v_int(v, mib_phys_state(p->pi.phys_state));
		break;
	case PORT_COL_WIDTH:
		if (!up)
			return -1;
		mib_v_int(v, mib_width_enum(p->pi.width_active));
		break;
	case PORT_COL_SPEED:
		if (!up)
			return -1;
		mib_v_int(v, mib_speed_enum(p->pi.speed_active,
					    p->pi.speed_ext_active));
		break;
	case PORT_COL_RATE:
		if (!up)
			return -1;
		mib_v_gauge(v,
			    (uint64_t)(ibw_link_gbps(&p->pi) * 1000.0 + 0.5));
		break;
	case PORT_COL_RGUID:
		if (!p->remote_guid)
			return -1;
		mib_v_guid(v, p->remote_guid);
		break;
	case PORT_COL_RPORT:
		if (!p->remote_guid)
			return -1;
		mib_v_unsigned(v, p->remote_port);
		break;
	case PORT_COL_RNAME:
		if (!p->remote_guid)
			return -1;
		mib_v_str(v, r->remote_name);
		break;
	case PORT_COL_GONE:
		mib_v_bool(v, r->gone);
		break;
	case PORT_COL_STALE:
	case PORT_COL_UPDATED:
	case PORT_COL_DISCONT:
	case PORT_COL_RESETS:
	case PORT_COL_EXT:
		if (!pc)
			return -1;
		if (col == PORT_COL_STALE)
			mib_v_bool(v, pc->stale);
		else if (col == PORT_COL_UPDATED)
			mib_v_time(v, pc->updated_us);
		else if (col == PORT_COL_DISCONT)
			mib_v_time(v, pc->discontinuity_us);
		else if (col == PORT_COL_RESETS)
			mib_v_counter32(v, pc->resets);
		else
			mib_v_bool(v, pc->have_ext);
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
	out[0] = m->eps[row].idx;
}

static uint64_t rtt_us(double us)
{
	return us > 0 ? (uint64_t)(us + 0.5) : 0;
}

static int ep_get(struct ibw_mib *m, unsigned row, unsigned col, struct val *v)
{
	const struct ibw_snapshot_endport *ev = m->eps[row].p;
	const struct ibw_endport *ep = ev->ep;

	switch (col) {
	case EP_COL_NODE_GUID:
		mib_v_guid(v, ep->node_guid);
		break;
	case EP_COL_PORT_NUM:
		mib_v_unsigned(v, ep->port);
		break;
	case EP_COL_PORT_GUID:
		mib_v_guid(v, ep->port_guid);
		break;
	case EP_COL_LID:
		mib_v_unsigned(v, ep->lid);
		break;
	case EP_COL_NAME:
		mib_v_str(v, ep->name);
		break;
	case EP_COL_TARGET:
		mib_v_str(v, ep->target);
		break;
	case EP_COL_STATE:
		mib_v_int(v, mib_liveness(ep->state));
		break;
	case EP_COL_STATE_SINCE:
		mib_v_time(v, ep->state_since_us);
		break;
	case EP_COL_REASON:
		mib_v_str(v, ep->reason);
		break;
	case EP_COL_METHOD:
		mib_v_int(v, (long)ep->last_method + 1);
		break;
	case EP_COL_SENT:
		mib_v_c64(v, ep->sent);
		break;
	case EP_COL_RECEIVED:
		mib_v_c64(v, ep->received);
		break;
	case EP_COL_WINDOW_PROBES:
		mib_v_gauge(v, ep->window_n);
		break;
	case EP_COL_WINDOW_LOSS:
		mib_v_gauge(v, ev->window_loss_centipct);
		break;
	case EP_COL_RTT_LAST:
		mib_v_gauge(v, ep->received ? ep->rtt_last_us : 0);
		break;
	case EP_COL_RTT_MIN:
		mib_v_gauge(v, ep->received ? ep->rtt_min_us : 0);
		break;
	case EP_COL_RTT_AVG:
		mib_v_gauge(v, ep->received ? rtt_us(ep->rtt_avg_us) : 0);
		break;
	case EP_COL_RTT_MAX:
		mib_v_gauge(v, ep->received ? ep->rtt_max_us : 0);
		break;
	case EP_COL_RTT_MDEV:
		mib_v_gauge(v, ep->received ? rtt_us(ep->rtt_mdev_us) : 0);
		break;
	case EP_COL_LAST_REPLY:
		mib_v_time(v, ep->last_reply_us);
		break;
	case EP_COL_RESPONDER_HOST:
		mib_v_str(v, ep->responder_host);
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
		mib_v_str(v, w->target);
		break;
	case 3:
		mib_v_unsigned(v, w->lid);
		break;
	case 4:
		mib_v_int(v, w->have ? (long)f->status + 1 : 8);
		break;
	case 5:
		mib_v_gauge(v, w->have ? f->nhops : 0);
		break;
	case 6:
		mib_v_bool(v, w->have && w->last.differs);
		break;
	case 7:
		mib_v_c64(v, w->traces);
		break;
	case 8:
		mib_v_c64(v, w->changes);
		break;
	case 9:
		mib_v_time(v, w->last_us);
		break;
	case 10:
		mib_v_str(v, w->have && f->status != IBW_TRACE_OK ? f->reason
								  : "");
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
		mib_v_guid(v, h->node_guid);
		break;
	case 4:
		mib_v_int(v, h->type);
		break;
	case 5:
		mib_v_str(v, h->name);
		break;
	case 6:
		mib_v_unsigned(v, h->lid);
		break;
	case 7:
		mib_v_unsigned(v, h->in_port);
		break;
	case 8:
		mib_v_unsigned(v, h->out_port);
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
	out[0] = m->links[row].idx;
}

/* IbwHealthState: ok(1) .. down(4) */
long mib_health_enum(unsigned h)
{
	return (long)h + 1;
}

static int link_get(struct ibw_mib *m, unsigned row, unsigned col,
		    struct val *v)
{
	const struct ibw_link *k = m->links[row].p;
	char buf[256];

	switch (col) {
	case LINK_COL_NODE_GUID:
		mib_v_guid(v, k->end[0].guid);
		break;
	case LINK_COL_PORT:
		mib_v_unsigned(v, k->end[0].port);
		break;
	case LINK_COL_REMOTE_INDEX:
		mib_v_unsigned(v, m->links[row].peer);
		break;
	case LINK_COL_NAME:
		mib_v_str(v, k->end[0].name);
		break;
	case LINK_COL_LID:
		mib_v_unsigned(v, k->end[0].lid);
		break;
	case LINK_COL_REMOTE_GUID:
		mib_v_guid(v, k->end[1].guid);
		break;
	case LINK_COL_REMOTE_PORT:
		mib_v_unsigned(v, k->end[1].port);
		break;
	case LINK_COL_REMOTE_NAME:
		mib_v_str(v, k->end[1].name);
		break;
	case LINK_COL_REMOTE_LID:
		mib_v_unsigned(v, k->end[1].lid);
		break;
	case LINK_COL_HEALTH:
		mib_v_int(v, mib_health_enum(k->health));
		break;
	case LINK_COL_REASONS:
		/* made here: copied into the value */
		ibw_link_reasons_fmt(k->reasons, buf, sizeof(buf));
		mib_v_strcpy(v, buf);
		break;
	case LINK_COL_WIDTH_ACTIVE:
		mib_v_gauge(v, ibw_width_lanes(k->width_active));
		break;
	case LINK_COL_WIDTH_BEST:
		mib_v_gauge(v, ibw_width_lanes(k->width_best));
		break;
	case LINK_COL_SPEED_ACTIVE:
		mib_v_str(v, k->speed_active ? ibw_speed_name(k->speed_active)
					     : "");
		break;
	case LINK_COL_SPEED_BEST:
		mib_v_str(v,
			  k->speed_best ? ibw_speed_name(k->speed_best) : "");
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
		mib_v_strcpy(v, buf);
		break;
	}
	case LINK_COL_BAD_LANE:
		ibw_link_bad_lanes_fmt(k, buf, sizeof(buf));
		mib_v_strcpy(v, buf);
		break;
	case LINK_COL_XMIT_WAIT:
		mib_v_gauge(v,
			    k->xmit_wait_ratio >= 0
				    ? (uint64_t)(k->xmit_wait_ratio * 1e6 + 0.5)
				    : 0);
		break;
	default:
		return -1;
	}
	return 0;
}

/* ibwPortLookupTable: a GUID and port number to the port's row */

static unsigned lookup_rows(struct ibw_mib *m)
{
	return m->nlookups;
}

static void lookup_index(struct ibw_mib *m, unsigned row, oid *out)
{
	ibw_mib_guid_index(m->lookups[row].guid, out);
	out[GUID_STR_LEN] = m->lookups[row].port;
}

static int lookup_get(struct ibw_mib *m, unsigned row, unsigned col,
		      struct val *v)
{
	if (col != LOOKUP_COL_INDEX)
		return -1;
	mib_v_unsigned(v, m->lookups[row].idx);
	return 0;
}

const struct table mib_tables[] = {
	{ "ibwAgent", 1, 1, 1, 47, 1, one_row, zero_index, mib_agent_get, 0 },
	{ "ibwNodeTable", 2, 0, NODE_COL_GUID, NODE_COL_GONE, 1, node_rows,
	  node_index, node_get, 0 },
	{ "ibwPortTable", 3, 0, PORT_COL_NODE_GUID, PORT_COL_NODE_NAME, 1,
	  port_rows, port_index, port_get, PORT_COL_INDEX },
	{ "ibwEndportTable", 4, 0, EP_COL_NODE_GUID, EP_COL_RESPONDER_HOST, 1,
	  ep_rows, ep_index, ep_get, 0 },
	{ "ibwPathTable", 5, 0, 2, 10, 1, path_rows, path_index, path_get, 0 },
	{ "ibwHopTable", 6, 0, 3, 8, 3, hop_rows, hop_index, hop_get, 0 },
	/* (arc 7 is ibwNotifyObjects: nothing to read) */
	{ "ibwLinkTable", 8, 0, LINK_COL_NODE_GUID, LINK_COL_REMOTE_INDEX, 1,
	  link_rows, link_index, link_get, 0 },
	{ "ibwPortLookupTable", 9, 0, LOOKUP_COL_INDEX, LOOKUP_COL_INDEX,
	  GUID_STR_LEN + 1, lookup_rows, lookup_index, lookup_get, 0 },
};
const unsigned mib_ntables = sizeof(mib_tables) / sizeof(mib_tables[0]);
