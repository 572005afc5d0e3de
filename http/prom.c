// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "ibw_revision.h"
#include "ibw_version.h"
#include "ibrate.h"
#include "links.h"
#include "procinfo.h"
#include "prom.h"
#include "prom_buf.h"
#include "prom_exporter.h"
#include "prom_cong.h"
#include "prom_hw.h"
#include "prom_fec.h"
#include "prom_jobs.h"

static const char *build_version = IBW_VERSION;
static const char *build_revision = IBW_REVISION;

void ibw_prom_set_build_info(const char *version, const char *revision)
{
	build_version = version;
	build_revision = revision;
}

/* ibwatch's own: the PortInfo state of every physical port. */
static void state_family(struct ibw_pb *b, const struct ibw_snapshot *s,
			 int is_switch)
{
	const struct ibw_snapshot_port *pv;
	unsigned n = 0;
	char name[64];

	snprintf(name, sizeof(name), "ibwatch_%s_port_state",
		 ibw_pb_kind(is_switch));
	ibw_snapshot_foreach_port(s, pv) {
		const struct ibw_fport *fp = pv->p;

		if (pv->node->is_switch != is_switch || pv->node->n->gone ||
		    !pv->external || !fp->have_pi)
			continue;
		if (!n++)
			ibw_pb_family(
				b, name, "gauge",
				"Port state as of the last discovery sweep: "
				"1 down, 2 init, 3 armed, 4 active.");
		ibw_pb_put(b, "%s{guid=\"0x%016" PRIx64 "\",port=\"%u\"} %u\n",
			   name, pv->node->n->guid, (unsigned)fp->num,
			   fp->pi.state);
	}
}

/* The nodes the last discovery no longer reached (kept, marked gone,
 * until forgotten): when each was last seen. A switch gone is what
 * pages for its cables (deploy/prometheus: IBWatchSwitchDown). */
static void gone_family(struct ibw_pb *b, const struct ibw_snapshot *s)
{
	const struct ibw_snapshot_node *nv;
	unsigned n = 0;

	ibw_snapshot_foreach_node(s, nv) {
		if (!nv->n->gone)
			continue;
		if (!n++)
			ibw_pb_family(
				b, "ibwatch_node_gone_since_seconds", "gauge",
				"Nodes the last discovery no longer reached: "
				"when each was gone first (Unix time).");
		ibw_pb_put(
			b,
			"ibwatch_node_gone_since_seconds{guid=\"0x%016" PRIx64
			"\",type=\"%s\",name=\"",
			nv->n->guid, nv->is_switch ? "switch" : "hca");
		ibw_pb_label(b, nv->name ? nv->name : "");
		ibw_pb_put(b, "\"} %.3f\n", (double)nv->n->gone_since_us / 1e6);
	}
}

/* What a port runs at, may run at and can run at: lanes of the widest
 * width and the fastest speed (enum ibw_speed) of each set. */
static void speed_families(struct ibw_pb *b, const struct ibw_snapshot *s,
			   int is_switch)
{
	static const char *const what[6] = {
		"width_active_lanes",	 "width_enabled_lanes",
		"width_supported_lanes", "speed_active",
		"speed_enabled",	 "speed_supported",
	};
	static const char *const help[6] = {
		"Lanes the link runs on (LinkWidthActive).",
		"Lanes of the widest width enabled (LinkWidthEnabled).",
		"Lanes of the widest width the port supports "
		"(LinkWidthSupported).",
		"Speed the link runs at: 1 SDR, 2 DDR, 3 QDR, 4 FDR10, 5 FDR, "
		"6 EDR, 7 HDR, 8 NDR, 9 XDR.",
		"Fastest speed enabled, numbered as speed_active.",
		"Fastest speed the port supports, numbered as speed_active.",
	};
	const struct ibw_snapshot_port *pv;
	struct ibw_port_speeds sp;
	unsigned w, n, v;
	char name[96];

	for (w = 0; w < 6; w++) {
		snprintf(name, sizeof(name), "ibwatch_%s_port_%s",
			 ibw_pb_kind(is_switch), what[w]);
		n = 0;
		ibw_snapshot_foreach_port(s, pv) {
			const struct ibw_fnode *nd = pv->node->n;
			const struct ibw_fport *fp = pv->p;

			if (pv->node->is_switch != is_switch || nd->gone ||
			    !pv->external || !fp->have_pi || !pv->link_up)
				continue;
			/* a switch's capability masks are port 0's */
			ibw_port_speeds(&fp->pi,
					is_switch && nd->nports &&
							nd->ports[0].have_pi
						? &nd->ports[0].pi
						: NULL,
					&sp);
			switch (w) {
			case 0:
				v = ibw_width_lanes(sp.width_active);
				break;
			case 1:
				v = ibw_width_lanes(
					ibw_width_widest(sp.width_enabled));
				break;
			case 2:
				v = ibw_width_lanes(
					ibw_width_widest(sp.width_supported));
				break;
			case 3:
				v = sp.speed_active;
				break;
			case 4:
				v = ibw_speed_fastest(sp.speeds_enabled);
				break;
			default:
				v = ibw_speed_fastest(sp.speeds_supported);
				break;
			}
			if (!n++)
				ibw_pb_family(b, name, "gauge", help[w]);
			ibw_pb_put(b,
				   "%s{guid=\"0x%016" PRIx64
				   "\",port=\"%u\"} %u\n",
				   name, nd->guid, (unsigned)fp->num, v);
		}
	}
}

static int cmp_link_end(const void *a, const void *b)
{
	const struct ibw_link *x = *(const struct ibw_link *const *)a;
	const struct ibw_link *y = *(const struct ibw_link *const *)b;

	if (x->end[0].guid != y->end[0].guid)
		return x->end[0].guid < y->end[0].guid ? -1 : 1;
	return (int)x->end[0].port - (int)y->end[0].port;
}

/* Per cable, in the order of its lower end (GUID, port): the view ranks
 * worst first, an order that moves with the health; series are written
 * in one that does not. */
static void link_families(struct ibw_pb *b, const struct ibw_snapshot *s)
{
	const struct ibw_link_view *v = s->links;
	const struct ibw_link **by;
	size_t i;
	int r, any;

	if (!v || !v->n)
		return;
	by = malloc(v->n * sizeof(*by));
	if (!by)
		return;
	for (i = 0; i < v->n; i++)
		by[i] = &v->links[i];
	qsort(by, v->n, sizeof(*by), cmp_link_end);
	ibw_pb_family(b, "ibwatch_link_health", "gauge",
		      "Health of a cable: 0 ok, 1 degraded, 2 failing, 3 down "
		      "(docs/links.md).");
	for (i = 0; i < v->n; i++) {
		ibw_prom_link_labels(b, "ibwatch_link_health", by[i]);
		ibw_pb_put(b, "} %d\n", (int)by[i]->health);
	}
	ibw_prom_link_trouble(b, s, by, v->n);
	any = 0;
	for (i = 0; i < v->n; i++) {
		const struct ibw_link *k = by[i];

		for (r = 0; r < IBW_LR_MAX; r++) {
			if (!(k->reasons & IBW_LR_BIT(r)))
				continue;
			if (!any++)
				ibw_pb_family(
					b, "ibwatch_link_reason", "gauge",
					"1 for each reason a cable is not ok "
					"(only those present).");
			ibw_prom_link_labels(b, "ibwatch_link_reason", k);
			ibw_pb_put(
				b, ",reason=\"%s\"} 1\n",
				ibw_link_reason_str((enum ibw_link_reason)r));
		}
	}
	any = 0;
	for (i = 0; i < v->n; i++) {
		if (by[i]->ber < 0)
			continue;
		if (!any++)
			ibw_pb_family(
				b, "ibwatch_link_ber", "gauge",
				"Estimated bit error rate over the last hour, "
				"the worse direction (docs/links.md).");
		ibw_prom_link_labels(b, "ibwatch_link_ber", by[i]);
		ibw_pb_put(b, "} %.6g\n", by[i]->ber);
	}
	any = 0;
	for (i = 0; i < v->n; i++) {
		if (by[i]->xmit_wait_ratio < 0)
			continue;
		if (!any++)
			ibw_pb_family(
				b, "ibwatch_link_xmit_wait_ratio", "gauge",
				"Share of the last sweep spent waiting to "
				"transmit, the worse direction.");
		ibw_prom_link_labels(b, "ibwatch_link_xmit_wait_ratio", by[i]);
		ibw_pb_put(b, "} %.6g\n", by[i]->xmit_wait_ratio);
	}
	ibw_prom_link_fec(b, by, v->n);
	free(by);
}

/* The route census (docs/routes.md): counts, and the routes per link
 * direction, so the series grow with the links, not the pairs. */
static void route_families(struct ibw_pb *b, const struct ibw_snapshot *s)
{
	const struct ibw_census *c = s->census;
	const struct ibw_census_summary *cs;
	const struct ibw_lft_stats *ts;
	const struct ibw_link_load *l;
	const struct ibw_tier_balance *t;
	unsigned n, i;

	if (!c)
		return;
	cs = ibw_census_summary(c);
	ts = ibw_lft_set_stats(ibw_census_tables(c));
	ibw_pb_family(
		b, "ibwatch_routes_pairs", "gauge",
		"Pairs (source CA port, destination LID) of the last route "
		"census by status: ok is routed.");
	for (i = 0; i < IBW_ROUTE_STATUS_MAX; i++) {
		ibw_pb_put(b,
			   "ibwatch_routes_pairs{status=\"%s\"} %" PRIu64 "\n",
			   ibw_route_status_key((enum ibw_route_status)i),
			   cs->by_status[i]);
	}
	ibw_pb_family(b, "ibwatch_routes_non_minimal", "gauge",
		      "Routed pairs longer than the topology's shortest path.");
	ibw_pb_put(b, "ibwatch_routes_non_minimal %" PRIu64 "\n",
		   cs->non_minimal);
	ibw_pb_family(b, "ibwatch_routes_tables", "gauge",
		      "Switch forwarding tables of the last read: fresh, stale "
		      "(kept from an earlier read) or missing.");
	ibw_pb_put(b, "ibwatch_routes_tables{state=\"fresh\"} %u\n", ts->fresh);
	ibw_pb_put(b, "ibwatch_routes_tables{state=\"stale\"} %u\n", ts->stale);
	ibw_pb_put(b, "ibwatch_routes_tables{state=\"missing\"} %u\n",
		   ts->missing);
	ibw_pb_family(b, "ibwatch_routes_tables_mads", "gauge",
		      "MADs the last read of the forwarding tables sent.");
	ibw_pb_put(b, "ibwatch_routes_tables_mads %" PRIu64 "\n", ts->mads);
	t = ibw_census_tiers(c, &n);
	if (n) {
		ibw_pb_family(
			b, "ibwatch_routes_tier_max_mean", "gauge",
			"Routes on a tier's most loaded uplink over the mean "
			"of its uplinks (1 is even; docs/routes.md).");
		for (i = 0; i < n; i++)
			ibw_pb_put(b,
				   "ibwatch_routes_tier_max_mean{tier=\"%u\"} "
				   "%.6g\n",
				   t[i].tier, t[i].max_mean);
		ibw_pb_family(
			b, "ibwatch_routes_tier_cv", "gauge",
			"Coefficient of variation of the routes over a tier's "
			"uplinks (0 is even).");
		for (i = 0; i < n; i++)
			ibw_pb_put(b,
				   "ibwatch_routes_tier_cv{tier=\"%u\"} %.6g\n",
				   t[i].tier, t[i].cv);
	}
	l = ibw_census_loads(c, &n);
	if (!n)
		return;
	ibw_pb_family(b, "ibwatch_route_load", "gauge",
		      "Routed pairs whose path leaves by this port across its "
		      "link (one series per link direction).");
	for (i = 0; i < n; i++)
		ibw_pb_put(b,
			   "ibwatch_route_load{guid=\"0x%016" PRIx64
			   "\",port=\"%u\",remote_guid=\"0x%016" PRIx64
			   "\",remote_port=\"%u\"} %u\n",
			   l[i].guid, (unsigned)l[i].port, l[i].peer_guid,
			   (unsigned)l[i].peer_port, l[i].routes);
}

static void endport_families(struct ibw_pb *b, const struct ibw_snapshot *s)
{
	const struct ibw_snapshot_endport *v;

	if (!s->nendports)
		return;
	ibw_pb_family(
		b, "ibwatch_endport_up", "gauge",
		"1 when the endport answers pings (state up or degraded).");
	ibw_snapshot_foreach_endport(s, v) {
		const struct ibw_endport *e = v->ep;

		ibw_pb_put(b,
			   "ibwatch_endport_up{guid=\"0x%016" PRIx64
			   "\",node_guid=\"0x%016" PRIx64 "\",name=\"",
			   e->port_guid, e->node_guid);
		ibw_pb_label(b, e->name);
		ibw_pb_put(b, "\",lid=\"%u\"} %d\n", e->lid,
			   e->state == IBW_EP_UP ||
				   e->state == IBW_EP_DEGRADED);
	}
	ibw_pb_family(b, "ibwatch_endport_state", "gauge",
		      "0 unknown, 1 up, 2 degraded, 3 down.");
	ibw_snapshot_foreach_endport(s, v)
		ibw_pb_put(b,
			   "ibwatch_endport_state{guid=\"0x%016" PRIx64
			   "\"} %d\n",
			   v->ep->port_guid, (int)v->ep->state);
	ibw_pb_family(b, "ibwatch_endport_rtt_seconds", "gauge",
		      "Round-trip time of the last answered ping.");
	ibw_snapshot_foreach_endport(s, v) {
		const struct ibw_endport *e = v->ep;

		if (e->received)
			ibw_pb_put(
				b,
				"ibwatch_endport_rtt_seconds{guid=\"0x%016" PRIx64
				"\"} %.6f\n",
				e->port_guid, (double)e->rtt_last_us / 1e6);
	}
	ibw_pb_family(b, "ibwatch_endport_loss_ratio", "gauge",
		      "Share of pings lost over the sliding window.");
	ibw_snapshot_foreach_endport(s, v)
		ibw_pb_put(b,
			   "ibwatch_endport_loss_ratio{guid=\"0x%016" PRIx64
			   "\"} "
			   "%.4f\n",
			   v->ep->port_guid, v->window_loss_ratio);
}

/* The label every series of @b carries (o->fabric_label), once the
 * fabric is known. */
static void fabric_label(struct ibw_pb *b, const struct ibw_snapshot *s,
			 const struct ibw_prom_opts *o)
{
	char id[IBW_FABRIC_ID_LEN];

	if (o->fabric_label == IBW_PROM_FABRIC_NONE)
		return;
	if (o->fabric_name && *o->fabric_name)
		ibw_pb_fabric_label(b, o->fabric_name,
				    o->fabric_label == IBW_PROM_FABRIC_ALL);
	if (!s->fabric_id.known || (o->fabric_name && *o->fabric_name))
		return;
	ibw_fabric_id_str(&s->fabric_id, id, sizeof(id));
	ibw_pb_fabric_label(b, id, o->fabric_label == IBW_PROM_FABRIC_ALL);
}

/* Which fabric this is (core/fabric_id.h): its fabric label is the
 * buffer's, or written here when series carry none; with fabric-name,
 * the identity is here only. */
static void fabric_family(struct ibw_pb *b, const struct ibw_snapshot *s,
			  const struct ibw_prom_opts *o)
{
	const struct ibw_fabric_id *id = &s->fabric_id;
	char buf[IBW_FABRIC_ID_LEN];

	if (!id->known)
		return;
	ibw_fabric_id_str(id, buf, sizeof(buf));
	ibw_pb_family(b, "ibwatch_fabric_info", "gauge",
		      "The fabric ibwatchd watches: the subnet prefix and the "
		      "master SM's port GUID and LID, as of the last "
		      "discovery.");
	ibw_pb_put(b, "ibwatch_fabric_info{");
	if (o->fabric_label == IBW_PROM_FABRIC_NONE)
		ibw_pb_put(b, "fabric=\"%s\",",
			   o->fabric_name && *o->fabric_name ? o->fabric_name
							     : buf);
	ibw_pb_put(b,
		   "subnet_prefix=\"0x%016" PRIx64 "\",sm_guid=\"0x%016" PRIx64
		   "\",sm_lid=\"%u\"} 1\n",
		   id->subnet_prefix, id->sm_guid, (unsigned)id->sm_lid);
}

static void render_snapshot(struct ibw_pb *bp, const struct ibw_snapshot *s,
			    const struct ibw_prom_opts *o)
{
	static const char *const probes[2] = { "discovery", "counters" };
	const struct ibw_sweep_stats *sw[2] = { &s->discovery, &s->counters };
	struct ibw_pb b = *bp;
	int k;

	fabric_label(&b, s, o);
	ibw_prom_exporter(&b, s, o);
	fabric_family(&b, s, o);
	for (k = 1; k >= 0; k--) {
		state_family(&b, s, k);
		speed_families(&b, s, k);
	}
	gone_family(&b, s);
	link_families(&b, s);
	route_families(&b, s);
	endport_families(&b, s);
	ibw_prom_fec(&b, s);
	ibw_prom_cong(&b, s);
	ibw_prom_hw(&b, s, o);
	ibw_prom_jobs(&b, s);
	ibw_pb_family(&b, "ibwatch_sweep_duration_seconds", "gauge",
		      "Duration of the last sweep of each probe.");
	for (k = 0; k < 2; k++)
		ibw_pb_put(
			&b,
			"ibwatch_sweep_duration_seconds{probe=\"%s\"} %.6f\n",
			probes[k], (double)sw[k]->duration_us / 1e6);
	ibw_pb_family(&b, "ibwatch_sweep_mads", "gauge",
		      "MADs the last sweep of each probe sent.");
	for (k = 0; k < 2; k++)
		ibw_pb_put(&b, "ibwatch_sweep_mads{probe=\"%s\"} %" PRIu64 "\n",
			   probes[k], sw[k]->mads);
	ibw_pb_family(
		&b, "ibwatch_sweep_timeouts", "gauge",
		"MADs of the last sweep of each probe that were not answered.");
	for (k = 0; k < 2; k++)
		ibw_pb_put(&b,
			   "ibwatch_sweep_timeouts{probe=\"%s\"} %" PRIu64 "\n",
			   probes[k], sw[k]->timeouts);
	ibw_pb_family(&b, "ibwatch_unreachable_ports", "gauge",
		      "Ports whose counters did not answer in the last sweep.");
	ibw_pb_put(&b, "ibwatch_unreachable_ports %u\n", s->unreachable_ports);
	ibw_pb_family(&b, "ibwatch_pma_clears_total", "counter",
		      "Clears of narrow counters before they saturate "
		      "(reset-counters) that PMAs acknowledged, by attribute.");
	ibw_pb_put(&b,
		   "ibwatch_pma_clears_total{attribute=\"PortCounters\"} "
		   "%" PRIu64 "\n",
		   s->counter_clears.port_counters);
	ibw_pb_put(&b,
		   "ibwatch_pma_clears_total{attribute="
		   "\"PortExtendedSpeedsCounters\"} %" PRIu64 "\n",
		   s->counter_clears.ext_speeds);
	ibw_pb_put(&b,
		   "ibwatch_pma_clears_total{attribute=\"congestion\"} "
		   "%" PRIu64 "\n",
		   s->counter_clears.congestion);
	ibw_pb_family(&b, "ibwatch_lids_in_flux", "gauge",
		      "1 while there is a sign that the SM moves LIDs, until a "
		      "discovery finds them settled.");
	ibw_pb_put(&b, "ibwatch_lids_in_flux %d\n",
		   s->counter_verify.lids_in_flux ? 1 : 0);
	ibw_pb_family(
		&b, "ibwatch_lid_checks_total", "counter",
		"NodeInfo SMPs sent to check which node a LID read counters "
		"from.");
	ibw_pb_put(&b, "ibwatch_lid_checks_total %" PRIu64 "\n",
		   s->counter_verify.nodeinfos);
	ibw_pb_family(&b, "ibwatch_pma_readings_checked_total", "counter",
		      "Port counter readings checked with a NodeInfo.");
	ibw_pb_put(&b, "ibwatch_pma_readings_checked_total %" PRIu64 "\n",
		   s->counter_verify.verified);
	ibw_pb_family(
		&b, "ibwatch_pma_readings_lid_moved_total", "counter",
		"Port counter readings dropped: another node answered at the "
		"LID.");
	ibw_pb_put(&b, "ibwatch_pma_readings_lid_moved_total %" PRIu64 "\n",
		   s->counter_verify.lid_moved);
	if (s->npma_redirects)
		ibw_pb_family(
			&b, "ibwatch_pma_redirect_info", "gauge",
			"Nodes whose PMA redirects its counters elsewhere "
			"(followed=\"0\": unread, refused says why: "
			"partition, q_key or gid).");
	for (k = 0; k < (int)s->npma_redirects; k++) {
		const struct ibw_pma_redirect *r = &s->pma_redirects[k];

		ibw_pb_put(
			&b,
			"ibwatch_pma_redirect_info{guid=\"0x%016" PRIx64
			"\",lid=\"%u\",redirect_lid=\"%u\",redirect_qp=\"%u\","
			"followed=\"%d\"%s%s%s} 1\n",
			r->guid, r->lid, r->redirect_lid, r->redirect_qp,
			r->followed, r->followed ? "" : ",refused=\"",
			r->followed ? "" : ibw_redirect_refusal_str(r->refusal),
			r->followed ? "" : "\"");
	}
	*bp = b;
}

static const struct ibw_prom_opts default_opts;

char *ibw_prom_render_snapshot(const struct ibw_snapshot *s,
			       const struct ibw_prom_opts *o, size_t *len)
{
	struct ibw_pb b = { 0 };

	if (!o)
		o = &default_opts;
	b.om = o->om;
	render_snapshot(&b, s, o);
	return ibw_pb_finish(&b, len);
}

int ibw_prom_render_snapshot_to(const struct ibw_snapshot *s,
				const struct ibw_prom_opts *o, size_t hold,
				int (*sink)(void *arg, const char *p, size_t n),
				void *arg)
{
	struct ibw_pb b = { 0 };
	int rc = 0;

	if (!o)
		o = &default_opts;
	b.om = o->om;
	b.sink = sink;
	b.sink_arg = arg;
	b.hold = hold;
	render_snapshot(&b, s, o);
	if (ibw_pb_flush(&b) < 0)
		rc = -ENOMEM;
	free(b.p);
	free(b.x);
	return rc;
}

/* The engine's requests by kind: a timeout explained by what was asked. */
static void prom_kinds(struct ibw_pb *b, const struct ibw_mad_kinds *t)
{
	static const char *const fam[4][2] = {
		{ "ibwatch_mad_requests_total",
		  "Requests ended, by management class, method and "
		  "attribute." },
		{ "ibwatch_mad_request_timeouts_total",
		  "Requests that ran out of tries, by kind." },
		{ "ibwatch_mad_request_errors_total",
		  "Requests answered with an error status, by kind." },
		{ "ibwatch_mad_requests_skipped_total",
		  "Requests of a kind no node has answered, ended unsent as "
		  "timeouts while one of it is out." },
	};
	unsigned f, i, n = t->n < IBW_MAD_KINDS ? t->n : IBW_MAD_KINDS;

	if (!n)
		return;
	for (f = 0; f < 4; f++) {
		ibw_pb_family(b, fam[f][0], "counter", fam[f][1]);
		for (i = 0; i < n; i++) {
			const struct ibw_mad_kind *k = &t->k[i];
			char cls[16], method[16], attr[32];
			uint64_t v = f == 0   ? k->requests
				     : f == 1 ? k->timeouts
				     : f == 2 ? k->errors
					      : k->skipped;

			ibw_mad_kind_names(k, cls, method, attr);
			ibw_pb_put(b,
				   "%s{class=\"%s\",method=\"%s\","
				   "attribute=\"%s\"} %" PRIu64 "\n",
				   fam[f][0], cls, method, attr, v);
		}
	}
}

/* process_* as the Go client (the exporter's) writes them. */
static void process_families(struct ibw_pb *b)
{
	struct ibw_procinfo pi;

	if (ibw_procinfo_read(&pi) == 0) {
		ibw_pb_family(
			b, "process_cpu_seconds_total", "counter",
			"Total user and system CPU time spent in seconds.");
		ibw_pb_put(b, "process_cpu_seconds_total %.6g\n",
			   pi.cpu_seconds);
		ibw_pb_family(b, "process_open_fds", "gauge",
			      "Number of open file descriptors.");
		ibw_pb_put(b, "process_open_fds %" PRIu64 "\n", pi.open_fds);
		ibw_pb_family(b, "process_resident_memory_bytes", "gauge",
			      "Resident memory size in bytes.");
		ibw_pb_put(b, "process_resident_memory_bytes %" PRIu64 "\n",
			   pi.resident_bytes);
		ibw_pb_family(b, "process_start_time_seconds", "gauge",
			      "Start time of the process since unix epoch in "
			      "seconds.");
		ibw_pb_put(b, "process_start_time_seconds %.2f\n",
			   pi.start_time);
		ibw_pb_family(b, "process_virtual_memory_bytes", "gauge",
			      "Virtual memory size in bytes.");
		ibw_pb_put(b, "process_virtual_memory_bytes %" PRIu64 "\n",
			   pi.virtual_bytes);
	}
	ibw_pb_family(b, "process_max_fds", "gauge",
		      "Maximum number of open file descriptors.");
	ibw_pb_put(b, "process_max_fds %" PRIu64 "\n", pi.max_fds);
	ibw_pb_family(b, "process_virtual_memory_max_bytes", "gauge",
		      "Maximum amount of virtual memory available in bytes.");
	ibw_pb_put(b, "process_virtual_memory_max_bytes %.17g\n",
		   pi.virtual_max_bytes);
}

char *ibw_prom_render_live(const struct ibw_snapshot *s,
			   const struct ibw_engine_stats *st,
			   const struct ibw_agentx_status *ax, uint64_t now_us,
			   const struct ibw_prom_opts *o, size_t *len)
{
	struct ibw_pb b = { 0 };

	if (!o)
		o = &default_opts;
	b.om = o->om;
	fabric_label(&b, s, o);
	if (o->process)
		process_families(&b);
	ibw_pb_family(&b, "ibwatch_build_info", "gauge",
		      "The ibwatchd that serves these metrics: version and git "
		      "revision.");
	ibw_pb_put(&b, "ibwatch_build_info{version=\"");
	ibw_pb_label(&b, build_version);
	ibw_pb_put(&b, "\",revision=\"");
	ibw_pb_label(&b, build_revision);
	ibw_pb_put(&b, "\"} 1\n");
	ibw_pb_family(&b, "ibwatch_snapshot_age_seconds", "gauge",
		      "Age of the data served.");
	ibw_pb_put(&b, "ibwatch_snapshot_age_seconds %.3f\n",
		   now_us > s->taken_us ? (double)(now_us - s->taken_us) / 1e6
					: 0.0);
	ibw_pb_family(
		&b, "ibwatch_stale", "gauge",
		"1 when the data is stale: no good sweep for three intervals, "
		"or the local port is not active.");
	ibw_pb_put(&b, "ibwatch_stale %d\n", ibw_snapshot_stale(s, now_us));
	ibw_pb_family(&b, "ibwatch_local_port_active", "gauge",
		      "1 when the port ibwatchd sweeps from is active.");
	ibw_pb_put(&b, "ibwatch_local_port_active %d\n",
		   s->local_state == IBW_PORT_ACTIVE);
	if (st) {
		ibw_pb_family(&b, "ibwatch_mads_sent_total", "counter",
			      "MADs put on the wire, retries included.");
		ibw_pb_put(&b, "ibwatch_mads_sent_total %" PRIu64 "\n",
			   st->sent);
		ibw_pb_family(&b, "ibwatch_mads_received_total", "counter",
			      "MADs read from the port.");
		ibw_pb_put(&b, "ibwatch_mads_received_total %" PRIu64 "\n",
			   st->received);
		ibw_pb_family(&b, "ibwatch_mad_timeouts_total", "counter",
			      "Tries that met their deadline.");
		ibw_pb_put(&b, "ibwatch_mad_timeouts_total %" PRIu64 "\n",
			   st->try_timeouts);
		ibw_pb_family(&b, "ibwatch_mad_retries_total", "counter",
			      "Tries sent again.");
		ibw_pb_put(&b, "ibwatch_mad_retries_total %" PRIu64 "\n",
			   st->retries);
		prom_kinds(&b, &st->kinds);
	}
	if (ax) {
		ibw_pb_family(
			&b, "ibwatch_agentx_connected", "gauge",
			"1 while the AgentX session with the master agent is "
			"open.");
		ibw_pb_put(&b, "ibwatch_agentx_connected %d\n",
			   ax->state == IBW_AGENTX_CONNECTED);
		ibw_pb_family(&b, "ibwatch_agentx_connect_attempts_total",
			      "counter", "Attempts to open an AgentX session.");
		ibw_pb_put(&b,
			   "ibwatch_agentx_connect_attempts_total %" PRIu64
			   "\n",
			   ax->attempts_total);
		ibw_pb_family(
			&b, "ibwatch_agentx_reconnects_total", "counter",
			"AgentX sessions opened again after one was lost.");
		ibw_pb_put(&b, "ibwatch_agentx_reconnects_total %" PRIu64 "\n",
			   ax->reconnects);
	}
	if (o->om)
		ibw_pb_put(&b, "# EOF\n");
	return ibw_pb_finish(&b, len);
}

char *ibw_prom_render(const struct ibw_snapshot *s,
		      const struct ibw_engine_stats *st, uint64_t now_us,
		      const struct ibw_prom_opts *o, size_t *len)
{
	size_t a, b;
	char *x = ibw_prom_render_snapshot(s, o, &a);
	char *y = ibw_prom_render_live(s, st, NULL, now_us, o, &b);
	char *all = x && y ? realloc(x, a + b + 1) : NULL;

	if (!all) {
		free(x);
		free(y);
		return NULL;
	}
	memcpy(all + a, y, b + 1);
	free(y);
	*len = a + b;
	return all;
}
