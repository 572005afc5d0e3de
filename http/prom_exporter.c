// SPDX-License-Identifier: BSD-2-Clause
/*
 * infiniband_exporter's series (treydock/infiniband_exporter), with the
 * rows and labels it gives on a running fabric, so that its dashboards,
 * recording rules and alerts work on ibwatchd unchanged (docs/api.md,
 * "Differences from infiniband_exporter", says where they cannot).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "ibrate.h"
#include "prom_buf.h"
#include "prom_exporter.h"
#include "prom_hw.h"

/*
 * infiniband_exporter's rows, as it gives them on a running fabric: it
 * lists the ports ibnetdiscover shows connected, names a switch by its
 * GUID and an HCA port by its port GUID (each HCA port is a device of
 * its own), and drops the counters of a device whose read failed.
 */

/* @pv has a cable to a node the last discovery found. */
static int port_connected(const struct ibw_snapshot *s,
			  const struct ibw_snapshot_port *pv)
{
	const struct ibw_snapshot_node *rv;

	if (pv->node->n->gone || pv->gone || !pv->external ||
	    !pv->p->remote_guid)
		return 0;
	rv = ibw_snapshot_find_node(s, pv->p->remote_guid);
	return rv && !rv->n->gone;
}

/* The guid label of @pv's series: a switch's GUID, an HCA port's own
 * (0 when never learnt: the port was never reached through). */
static uint64_t guid_label(const struct ibw_snapshot_port *pv)
{
	return pv->node->is_switch ? pv->node->n->guid : pv->p->guid;
}

uint64_t ibw_prom_port_guid(const struct ibw_snapshot_port *pv)
{
	return guid_label(pv) ? guid_label(pv) : pv->node->n->guid;
}

/* @pv is a port the exporter lists: a connected switch port, or a
 * connected HCA port whose port GUID we know. */
static int port_listed(const struct ibw_snapshot *s,
		       const struct ibw_snapshot_port *pv)
{
	return port_connected(s, pv) && guid_label(pv);
}

/* A port record this run of ibwatchd tried to read (one loaded from the
 * state file and not read since holds no reading of ours yet). */
static int tried(const struct ibw_snapshot *s, const struct ibw_port_ctrs *pc)
{
	return pc && (pc->stale || pc->updated_us >= s->started_us);
}

/* Each port view's place among the rows: listed, with counters shown.
 * Computed once per rendering. */
enum { ROW_LISTED = 1, ROW_COUNTED = 2 };

static uint8_t *port_rows(const struct ibw_snapshot *s,
			  const struct ibw_prom_opts *o)
{
	const struct ibw_snapshot_port *pv;
	uint8_t *rows = calloc(s->nport_views ? s->nport_views : 1, 1);

	if (!rows)
		return NULL;
	ibw_snapshot_foreach_port(s, pv) {
		uint8_t *r = &rows[pv - s->port_views];
		/* Only what the last sweep read: a port it could not read
		 * has no samples (absent, not frozen). */
		int read = tried(s, pv->ctrs) && !pv->ctrs->stale;

		if (port_listed(s, pv))
			*r |= ROW_LISTED;
		if (read && (*r & ROW_LISTED))
			*r |= ROW_COUNTED;
		else if (read && o->all_ports && pv->node->is_switch &&
			 !pv->node->n->gone && !pv->gone && pv->external)
			*r |= ROW_COUNTED;
	}
	return rows;
}

/* " <timestamp>" of a reading at @us (CLOCK_REALTIME): milliseconds in
 * the text format, seconds in OpenMetrics. */
static size_t fmt_ts(char *out, size_t n, uint64_t us, int om)
{
	int w = om ? snprintf(out, n, " %" PRIu64 ".%03u", us / 1000000,
			      (unsigned)(us / 1000 % 1000))
		   : snprintf(out, n, " %" PRIu64, us / 1000);

	return w > 0 && (size_t)w < n ? (size_t)w : 0;
}

struct ctr_row {
	const struct ibw_port_ctrs *pc;
	char labels[48];
	char ts[24];
	uint8_t llen, tslen;
};

static void counter_families(struct ibw_pb *b, const struct ibw_snapshot *s,
			     const struct ibw_prom_opts *o, const uint8_t *rows,
			     int is_switch)
{
	const struct ibw_snapshot_port *pv;
	unsigned i, c, n = 0;
	char name[128], help[192];
	size_t nlen;
	/* Each port's labels and time, formatted once, not per counter. */
	struct ctr_row *r =
		calloc(s->nport_views ? s->nport_views : 1, sizeof(*r));

	if (!r) {
		b->oom = 1;
		return;
	}
	ibw_snapshot_foreach_port(s, pv) {
		if (pv->node->is_switch != is_switch ||
		    !(rows[pv - s->port_views] & ROW_COUNTED))
			continue;
		r[n].pc = pv->ctrs;
		r[n].llen = (uint8_t)snprintf(r[n].labels, sizeof(r[n].labels),
					      "{guid=\"0x%016" PRIx64
					      "\",port=\"%u\"} ",
					      ibw_prom_port_guid(pv),
					      (unsigned)pv->p->num);
		if (o->timestamps && !o->runonce)
			r[n].tslen = (uint8_t)fmt_ts(r[n].ts, sizeof(r[n].ts),
						     pv->ctrs->updated_us,
						     o->om);
		n++;
	}
	for (c = 0; c < IBW_CTR_MAX; c++) {
		int any = 0;

		const struct ibw_ctr_desc *d = ibw_ctr_desc(c);

		nlen = (size_t)snprintf(
			name, sizeof(name), "%s_%s_port_%s_total",
			d->ibwatch_metric ? "ibwatch" : "infiniband",
			ibw_pb_kind(is_switch), d->metric);
		for (i = 0; i < n; i++) {
			const struct ibw_port_ctrs *p = r[i].pc;

			if (!ibw_ctr_val(p, (enum ibw_ctr)c)->have_raw)
				continue;
			if (!any) {
				snprintf(help, sizeof(help),
					 "%s as a monotonic 64-bit total%s, "
					 "as of the last counter sweep%s.",
					 ibw_ctr_desc(c)->name,
					 ibw_ctr_desc(c)->scale == 4
						 ? ", in bytes (the counter "
						   "counts 4-octet words)"
						 : "",
					 r[i].tslen ? ", at the time of its "
						      "reading"
						    : "");
				ibw_pb_family(b, name, "counter", help);
				any = 1;
			}
			ibw_pb_mem(b, name, nlen);
			ibw_pb_mem(b, r[i].labels, r[i].llen);
			ibw_pb_u64(b, ibw_ctr_val(p, (enum ibw_ctr)c)->total);
			ibw_pb_mem(b, r[i].ts, r[i].tslen);
			ibw_pb_mem(b, "\n", 1);
		}
	}
	free(r);
}

/* The node type as ibnetdiscover's port list writes it (uplink_type). */
static const char *type_of(const struct ibw_fnode *n)
{
	switch (n->ni.node_type) {
	case IBW_NODE_SWITCH:
		return "SW";
	case IBW_NODE_ROUTER:
		return "RT";
	default:
		return "CA";
	}
}

/*
 * infiniband_{switch,hca}_info{guid,switch|hca,lid}: the exporter labels
 * the name with the kind, so its users' group_left(switch) and
 * group_left(hca) find it here too. A switch has one, an HCA one for
 * each listed port (its port GUID and LID).
 */
static void info_family(struct ibw_pb *b, const struct ibw_snapshot *s,
			const uint8_t *rows, int is_switch)
{
	static const char *const help[2] = {
		"An HCA port with a link (by its port GUID), its node's name "
		"and its LID, as of the last discovery sweep.",
		"A switch, its name and LID, as of the last discovery sweep.",
	};
	const struct ibw_snapshot_node *nv;
	const struct ibw_snapshot_port *pv;
	unsigned n = 0;
	char name[64];
	const char *kind = ibw_pb_kind(is_switch);

	snprintf(name, sizeof(name), "infiniband_%s_info", kind);
	if (is_switch) {
		ibw_snapshot_foreach_node(s, nv) {
			if (!nv->is_switch || nv->n->gone)
				continue;
			if (!n++)
				ibw_pb_family(b, name, "gauge", help[1]);
			ibw_pb_put(b, "%s{guid=\"0x%016" PRIx64 "\",switch=\"",
				   name, nv->n->guid);
			ibw_pb_label(b, nv->name);
			ibw_pb_put(b, "\",lid=\"%u\"} 1\n", nv->n->lid);
		}
		return;
	}
	ibw_snapshot_foreach_port(s, pv) {
		if (pv->node->is_switch ||
		    !(rows[pv - s->port_views] & ROW_LISTED))
			continue;
		if (!n++)
			ibw_pb_family(b, name, "gauge", help[0]);
		ibw_pb_put(b, "%s{guid=\"0x%016" PRIx64 "\",hca=\"", name,
			   guid_label(pv));
		ibw_pb_label(b, pv->node->name);
		ibw_pb_put(b, "\",lid=\"%u\"} 1\n",
			   ibw_snapshot_lid(s, pv->node->n->guid, pv->p->num));
	}
}

/* Data (after line encoding and FEC) and signalling rate of @pv's link,
 * in bytes per second; 0 when unknown. */
static void port_rates(const struct ibw_snapshot_port *pv, double *data,
		       double *raw)
{
	const struct ibw_fnode *n = pv->node->n;
	const struct ibw_portinfo *cap = NULL;
	struct ibw_port_speeds sp;
	enum ibw_speed speed;

	/* A switch's external ports read 0 in their capability masks:
	 * port 0's apply (core/ibrate.h). */
	if (pv->node->is_switch && n->nports && n->ports[0].have_pi)
		cap = &n->ports[0].pi;
	ibw_port_speeds(&pv->p->pi, cap, &sp);
	speed = (enum ibw_speed)sp.speed_active;
	*data = ibw_rate_data_bps(sp.width_active, speed) / 8;
	*raw = ibw_rate_signal_bps(sp.width_active, speed) / 8;
}

static const char rate_help[] =
	"Effective data rate of the link (after line encoding and FEC) in "
	"bytes per second, as of the last discovery sweep.";
static const char raw_rate_help[] =
	"Signalling rate of the link in bytes per second, as of the last "
	"discovery sweep.";

/*
 * The exporter's shapes: a switch's rates per port
 * (infiniband_switch_port_[raw_]rate_bytes_per_second{guid,port}), an
 * HCA's per port, named by its port GUID
 * (infiniband_hca_[raw_]rate_bytes_per_second{guid}).
 */
static void rate_families(struct ibw_pb *b, const struct ibw_snapshot *s,
			  const uint8_t *rows, int is_switch)
{
	const struct ibw_snapshot_port *pv;
	unsigned w, n;
	char name[96];

	for (w = 0; w < 2; w++) {
		snprintf(name, sizeof(name), "infiniband_%s%s_bytes_per_second",
			 is_switch ? "switch_port_" : "hca_",
			 w ? "raw_rate" : "rate");
		n = 0;
		ibw_snapshot_foreach_port(s, pv) {
			double data, raw;

			if (pv->node->is_switch != is_switch ||
			    !(rows[pv - s->port_views] & ROW_LISTED) ||
			    !pv->p->have_pi || !pv->link_up)
				continue;
			port_rates(pv, &data, &raw);
			if (data <= 0)
				continue;
			if (!n++)
				ibw_pb_family(b, name, "gauge",
					      w ? raw_rate_help : rate_help);
			ibw_pb_put(b, "%s{guid=\"0x%016" PRIx64 "\"", name,
				   guid_label(pv));
			if (is_switch)
				ibw_pb_put(b, ",port=\"%u\"",
					   (unsigned)pv->p->num);
			ibw_pb_put(b, "} %.15g\n", w ? raw : data);
		}
	}
}

/*
 * infiniband_{switch,hca}_uplink_info: one a connected port, naming the
 * node at its other end, the join key of the exporter's recording rules
 * (* on(guid,port) group_left(switch, uplink, uplink_port)). The far end
 * is named as its own rows name it: an HCA by the port's GUID and LID.
 */
static void uplink_family(struct ibw_pb *b, const struct ibw_snapshot *s,
			  const uint8_t *rows, int is_switch)
{
	const struct ibw_snapshot_port *pv;
	unsigned n = 0;
	char name[64];
	const char *kind = ibw_pb_kind(is_switch);

	snprintf(name, sizeof(name), "infiniband_%s_uplink_info", kind);
	ibw_snapshot_foreach_port(s, pv) {
		const struct ibw_fport *fp = pv->p;
		const struct ibw_snapshot_port *rp;
		uint64_t rguid;

		if (pv->node->is_switch != is_switch ||
		    !(rows[pv - s->port_views] & ROW_LISTED))
			continue;
		rp = ibw_snapshot_find_port(s, fp->remote_guid,
					    fp->remote_port);
		if (!rp)
			continue;
		rguid = guid_label(rp) ? guid_label(rp) : fp->remote_guid;
		if (!n++)
			ibw_pb_family(
				b, name, "gauge",
				"A connected port and the node at its other "
				"end, as of the last discovery sweep.");
		/* Labels in the order the exporter's output has them. */
		ibw_pb_put(b, "%s{guid=\"0x%016" PRIx64 "\",", name,
			   guid_label(pv));
		if (is_switch)
			ibw_pb_put(b, "port=\"%u\",switch=\"",
				   (unsigned)fp->num);
		else
			ibw_pb_put(b, "hca=\"");
		ibw_pb_label(b, pv->node->name);
		if (!is_switch)
			ibw_pb_put(b, "\",port=\"%u", (unsigned)fp->num);
		ibw_pb_put(b, "\",uplink=\"");
		ibw_pb_label(b, rp->node->name);
		ibw_pb_put(
			b,
			"\",uplink_guid=\"0x%016" PRIx64 "\",uplink_lid=\"%u\","
			"uplink_port=\"%u\",uplink_type=\"%s\"} 1\n",
			rguid,
			ibw_snapshot_lid(s, fp->remote_guid, fp->remote_port),
			(unsigned)fp->remote_port, type_of(rp->node->n));
	}
}

/*
 * A device as the exporter reads it (a switch, or one HCA port), and how
 * its last read went: timeout when a read of it went unanswered, error
 * when one was answered with an error (or by another node) and none went
 * unanswered; the same for its detail counters ("rcv-err").
 */
struct device {
	uint64_t guid;
	int tried;
	int fail[2]; /* [0] the counters, [1] the details: IBW_CTR_FAIL_* */
	uint32_t dur_us;
};

static void device_add(struct device *d, const struct ibw_port_ctrs *pc)
{
	int why[2], k;

	d->tried = 1;
	why[0] = !pc->stale ? IBW_CTR_FAIL_NONE
		 : pc->fail ? pc->fail
			    : IBW_CTR_FAIL_ERROR;
	/* details unread when the counters were */
	why[1] = pc->stale ? why[0] : pc->detail_fail;
	for (k = 0; k < 2; k++)
		if (why[k] == IBW_CTR_FAIL_TIMEOUT || !d->fail[k])
			d->fail[k] = why[k];
	if (pc->read_dur_us > d->dur_us)
		d->dur_us = pc->read_dur_us;
}

/* The devices of a kind: each switch, each listed HCA port, that the
 * counter sweeps have tried. *@n of them, in a new array (NULL: none, or
 * out of memory). */
static struct device *devices(const struct ibw_snapshot *s, const uint8_t *rows,
			      int is_switch, unsigned *n)
{
	const struct ibw_snapshot_node *nv;
	const struct ibw_snapshot_port *pv;
	struct device *d =
		calloc(s->nport_views ? s->nport_views : 1, sizeof(*d));

	*n = 0;
	if (!d)
		return NULL;
	if (is_switch) {
		ibw_snapshot_foreach_node(s, nv) {
			if (!nv->is_switch || nv->n->gone)
				continue;
			d[*n].guid = nv->n->guid;
			ibw_snapshot_foreach_node_port(nv, pv)
				if (tried(s, pv->ctrs) && !pv->gone)
					device_add(&d[*n], pv->ctrs);
			if (d[*n].tried)
				++*n;
			else
				memset(&d[*n], 0, sizeof(d[*n]));
		}
		return d;
	}
	ibw_snapshot_foreach_port(s, pv) {
		if (pv->node->is_switch || !tried(s, pv->ctrs) ||
		    !(rows[pv - s->port_views] & ROW_LISTED))
			continue;
		d[*n].guid = guid_label(pv);
		device_add(&d[*n], pv->ctrs);
		++*n;
	}
	return d;
}

/* A collector's label: "switch", "hca-runonce", "switch-rcv-err"... */
static void collector_name(char *out, size_t n, const char *what,
			   const struct ibw_prom_opts *o, int rcv_err)
{
	snprintf(out, n, "%s%s%s", what, o->runonce ? "-runonce" : "",
		 rcv_err ? "-rcv-err" : "");
}

/*
 * The exporter's collection health, per device and collector:
 * infiniband_{switch,hca}_collect_{error,timeout,duration_seconds}
 * {collector,guid}, and the rcv-err collector's with --detail-counters.
 * Counts the devices that failed into @nerr and @ntmo; 0 when the sweeps
 * never tried one of this kind (not in --scope), else 1.
 */
static int health_families(struct ibw_pb *b, const struct ibw_snapshot *s,
			   const struct ibw_prom_opts *o, const uint8_t *rows,
			   int is_switch, unsigned *nerr, unsigned *ntmo)
{
	static const char *const what[3] = { "error", "timeout",
					     "duration_seconds" };
	static const char *const help[3] = {
		"1 when a read of the device was answered with an error (or "
		"by another node at its LID) in the last counter sweep, and "
		"none went unanswered.",
		"1 when a read of the device went unanswered in the last "
		"counter sweep.",
		"How long the last counter sweep's reads of the device took.",
	};
	const char *kind = ibw_pb_kind(is_switch);
	struct device *d;
	unsigned n, i, w, k;
	char name[64], coll[48];

	*nerr = *ntmo = 0;
	d = devices(s, rows, is_switch, &n);
	if (!d) {
		b->oom = 1;
		return 0;
	}
	if (!n && !(is_switch && ibw_prom_hw_switches(s))) {
		free(d);
		return 0;
	}
	/* Failed reads, as the exporter counts them: the details of a
	 * device whose counters failed were never asked for. */
	for (i = 0; i < n; i++)
		for (k = 0; k < (o->rcv_err ? 2u : 1u); k++)
			if (!k || !d[i].fail[0]) {
				*ntmo += d[i].fail[k] == IBW_CTR_FAIL_TIMEOUT;
				*nerr += d[i].fail[k] &&
					 d[i].fail[k] != IBW_CTR_FAIL_TIMEOUT;
			}
	for (w = 0; w < 3; w++) {
		snprintf(name, sizeof(name), "infiniband_%s_collect_%s", kind,
			 what[w]);
		ibw_pb_family(b, name, "gauge", help[w]);
		for (k = 0; k < (o->rcv_err ? 2u : 1u); k++) {
			collector_name(coll, sizeof(coll), kind, o, (int)k);
			for (i = 0; i < n; i++) {
				int f = d[i].fail[k];

				ibw_pb_put(
					b,
					"%s{collector=\"%s\",guid=\"0x%016" PRIx64
					"\"} ",
					name, coll, d[i].guid);
				if (w == 2)
					ibw_pb_put(b, "%.6f\n",
						   (double)d[i].dur_us / 1e6);
				else
					ibw_pb_put(
						b, "%d\n",
						w ? f == IBW_CTR_FAIL_TIMEOUT
						  : f && f != IBW_CTR_FAIL_TIMEOUT);
			}
		}
		/* the ibswinfo collector's rows share the family */
		if (is_switch)
			ibw_prom_hw_collect(b, s, w, name);
	}
	free(d);
	return n != 0;
}

/*
 * The exporter's own rows, per collector: ibnetdiscover (our discovery),
 * switch and hca (the counter sweep's reads of each kind, @have[k] when
 * it has any). collector_duration_seconds is the time the collector's
 * work took, as the exporter's is, not the spread sweep's (that is
 * ibwatch_sweep_duration_seconds); with --textfile, last_execution.
 */
static void collector_families(struct ibw_pb *b, const struct ibw_snapshot *s,
			       const struct ibw_prom_opts *o, const int have[2],
			       const unsigned nerr[2], const unsigned ntmo[2])
{
	static const char *const names[4] = {
		"infiniband_exporter_collect_errors",
		"infiniband_exporter_collect_timeouts",
		"infiniband_exporter_collector_duration_seconds",
		"infiniband_exporter_last_execution",
	};
	static const char *const help[4] = {
		"Devices whose read failed with an error in the collector's "
		"last run (ibnetdiscover: 1 when the local port was not "
		"active).",
		"Devices whose read went unanswered in the collector's last "
		"run (ibnetdiscover: ibwatch's discovery has no deadline of "
		"its own).",
		"How long the collector's last run took (switch, hca: the "
		"counter sweep's reads of that kind, its pauses left out).",
		"When the collector last ran (Unix time).",
	};
	const uint64_t disc_end =
		s->discovery.start_us
			? s->discovery.start_us + s->discovery.duration_us
			: 0;
	unsigned w;
	int k;
	char coll[48];

	for (w = 0; w < (o->runonce ? 4u : 3u); w++) {
		ibw_pb_family(b, names[w], "gauge", help[w]);
		/* the exporter's order: hca, ibnetdiscover, switch */
		for (k = -1; k < 2; k++) {
			int kind = k < 0 ? 0 : k == 0 ? -1 : 1;
			double v;

			if (kind >= 0 && !have[kind])
				continue;
			collector_name(coll, sizeof(coll),
				       kind < 0 ? "ibnetdiscover"
						: ibw_pb_kind(kind),
				       o, 0);
			switch (w) {
			case 0:
				v = kind < 0 ? (s->local_lost ? 1 : 0)
					     : nerr[kind];
				break;
			case 1:
				v = kind < 0 ? 0 : ntmo[kind];
				break;
			case 2:
				v = (double)(kind < 0
						     ? s->discovery.duration_us
						     : s->counters_busy_us[kind]) /
				    1e6;
				break;
			default:
				v = (double)((kind < 0 ? disc_end
						       : s->counter_sweep
								 .end_us) /
					     1000000);
				break;
			}
			ibw_pb_put(b, "%s{collector=\"%s\"} %.10g\n", names[w],
				   coll, v);
		}
	}
}

void ibw_prom_exporter(struct ibw_pb *b, const struct ibw_snapshot *s,
		       const struct ibw_prom_opts *o)
{
	uint8_t *rows = port_rows(s, o);
	unsigned nerr[2], ntmo[2];
	int have[2], k;

	if (!rows) {
		b->oom = 1;
		return;
	}
	for (k = 1; k >= 0; k--) {
		counter_families(b, s, o, rows, k);
		info_family(b, s, rows, k);
		rate_families(b, s, rows, k);
		uplink_family(b, s, rows, k);
		have[k] = health_families(b, s, o, rows, k, &nerr[k], &ntmo[k]);
	}
	free(rows);
	collector_families(b, s, o, have, nerr, ntmo);
}
