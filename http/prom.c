// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "ibw_revision.h"
#include "ibw_version.h"
#include "ibrate.h"
#include "links.h"
#include "prom.h"

static const char *build_version = IBW_VERSION;
static const char *build_revision = IBW_REVISION;

void ibw_prom_set_build_info(const char *version, const char *revision)
{
	build_version = version;
	build_revision = revision;
}

struct buf {
	char *p;
	size_t len, cap;
	int oom;
	int om; /* OpenMetrics */
	/* Given what was written whenever @hold bytes would be passed. */
	int (*sink)(void *arg, const char *p, size_t n);
	void *sink_arg;
	size_t hold;
};

/* Room for @n more bytes and a NUL; 0, or -1 (and b->oom) if none. */
static int grow(struct buf *b, size_t n)
{
	size_t cap;
	char *np;

	if (b->oom)
		return -1;
	if (b->len + n + 1 <= b->cap)
		return 0;
	if (b->sink && b->len && b->len + n + 1 > b->hold) {
		if (b->sink(b->sink_arg, b->p, b->len) < 0) {
			b->oom = 1;
			return -1;
		}
		b->len = 0;
		if (n + 1 <= b->cap)
			return 0;
	}
	cap = (b->cap + n + 1) * 2;
	np = realloc(b->p, cap);
	if (!np) {
		b->oom = 1;
		return -1;
	}
	b->p = np;
	b->cap = cap;
	return 0;
}

static void put(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		if (grow(b, (size_t)n) < 0)
			return;
	}
}

/* Append @n bytes as they are: the hot path of a large scrape. */
static void put_mem(struct buf *b, const char *s, size_t n)
{
	if (grow(b, n) < 0)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void put_u64(struct buf *b, uint64_t v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put_mem(b, tmp + i, sizeof(tmp) - (size_t)i);
}

/* A label value: backslash, double quote and newline escaped. */
static void put_label(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			put(b, "\\\\");
		else if (*s == '"')
			put(b, "\\\"");
		else if (*s == '\n')
			put(b, "\\n");
		else
			put(b, "%c", *s);
	}
}

static void family(struct buf *b, const char *name, const char *type,
		   const char *help)
{
	size_t n = strlen(name);

	/* OpenMetrics names a counter family without its _total. */
	if (b->om && !strcmp(type, "counter") && n > 6 &&
	    !strcmp(name + n - 6, "_total"))
		n -= 6;
	put(b, "# HELP %.*s %s\n# TYPE %.*s %s\n", (int)n, name, help, (int)n,
	    name, type);
}

/* Exporter names of our counters (after infiniband_<kind>_port_); those
 * of PortXmitDiscardDetails, which the exporter does not read, are
 * ibwatch's own (ibwatch_<kind>_port_). */
static const char *const ctr_names[IBW_CTR_MAX] = {
	[IBW_CTR_SYMBOL_ERRORS] = "symbol_error",
	[IBW_CTR_LINK_ERROR_RECOVERY] = "link_error_recovery",
	[IBW_CTR_LINK_DOWNED] = "link_downed",
	[IBW_CTR_RCV_ERRORS] = "receive_errors",
	[IBW_CTR_RCV_REMOTE_PHYS_ERRORS] = "receive_remote_physical_errors",
	[IBW_CTR_RCV_SWITCH_RELAY_ERRORS] = "receive_switch_relay_errors",
	[IBW_CTR_XMIT_DISCARDS] = "transmit_discards",
	[IBW_CTR_XMIT_CONSTRAINT_ERRORS] = "transmit_constraint_errors",
	[IBW_CTR_RCV_CONSTRAINT_ERRORS] = "receive_constraint_errors",
	[IBW_CTR_LOCAL_LINK_INTEGRITY_ERRORS] = "local_link_integrity_errors",
	[IBW_CTR_EXCESSIVE_BUFFER_OVERRUN_ERRORS] = "excessive_buffer_overrun_"
						    "errors",
	[IBW_CTR_VL15_DROPPED] = "vl15_dropped",
	[IBW_CTR_XMIT_WAIT] = "transmit_wait",
	[IBW_CTR_QP1_DROPPED] = "qp1_dropped",
	[IBW_CTR_XMIT_DATA] = "transmit_data_bytes",
	[IBW_CTR_RCV_DATA] = "receive_data_bytes",
	[IBW_CTR_XMIT_PKTS] = "transmit_packets",
	[IBW_CTR_RCV_PKTS] = "receive_packets",
	[IBW_CTR_UNICAST_XMIT_PKTS] = "unicast_transmit_packets",
	[IBW_CTR_UNICAST_RCV_PKTS] = "unicast_receive_packets",
	[IBW_CTR_MULTICAST_XMIT_PKTS] = "multicast_transmit_packets",
	[IBW_CTR_MULTICAST_RCV_PKTS] = "multicast_receive_packets",
	[IBW_CTR_LOCAL_PHYSICAL_ERRORS] = "local_physical_errors",
	[IBW_CTR_MALFORMED_PACKET_ERRORS] = "malformed_packet_errors",
	[IBW_CTR_BUFFER_OVERRUN_ERRORS] = "buffer_overrun_errors",
	/* The exporter spells PortDLIDMappingErrors so; its users' rules
	 * ask for this name. */
	[IBW_CTR_DLID_MAPPING_ERRORS] = "dli_mapping_errors",
	[IBW_CTR_VL_MAPPING_ERRORS] = "vl_mapping_errors",
	[IBW_CTR_LOOPING_ERRORS] = "looping_errors",
	[IBW_CTR_INACTIVE_DISCARDS] = "inactive_discards",
	[IBW_CTR_NEIGHBOR_MTU_DISCARDS] = "neighbor_mtu_discards",
	[IBW_CTR_SW_LIFETIME_LIMIT_DISCARDS] = "sw_lifetime_limit_discards",
	[IBW_CTR_SW_HOQ_LIFETIME_LIMIT_DISCARDS] = "sw_hoq_lifetime_limit_"
						   "discards",
};

static const char *kind_of(int is_switch)
{
	return is_switch ? "switch" : "hca";
}

static const char *prefix_of(unsigned c)
{
	switch (c) {
	case IBW_CTR_INACTIVE_DISCARDS:
	case IBW_CTR_NEIGHBOR_MTU_DISCARDS:
	case IBW_CTR_SW_LIFETIME_LIMIT_DISCARDS:
	case IBW_CTR_SW_HOQ_LIFETIME_LIMIT_DISCARDS:
		return "ibwatch";
	default:
		return "infiniband";
	}
}

static void counter_families(struct buf *b, const struct ibw_snapshot *s,
			     int is_switch)
{
	unsigned i, c;
	char name[128], help[160];
	size_t nlen;
	/* Each port's labels, formatted once rather than once a counter. */
	char(*labels)[64] = calloc(s->nports ? s->nports : 1, sizeof(*labels));
	size_t *llen = calloc(s->nports ? s->nports : 1, sizeof(*llen));

	if (!labels || !llen) {
		b->oom = 1;
		free(labels);
		free(llen);
		return;
	}
	for (i = 0; i < s->nports; i++)
		llen[i] = (size_t)snprintf(labels[i], sizeof(labels[i]),
					   "{guid=\"0x%016" PRIx64 "\",port=\"%"
					   "u\"} ",
					   s->ports[i].guid, s->ports[i].port);
	for (c = 0; c < IBW_CTR_MAX; c++) {
		int any = 0;

		nlen = (size_t)snprintf(name, sizeof(name),
					"%s_%s_port_%s_total", prefix_of(c),
					kind_of(is_switch), ctr_names[c]);
		for (i = 0; i < s->nports; i++) {
			const struct ibw_port_ctrs *p = &s->ports[i];

			if (p->is_switch != is_switch || !p->v[c].have_raw)
				continue;
			if (!any) {
				snprintf(help, sizeof(help),
					 "%s as a monotonic 64-bit total%s, "
					 "as of the last counter sweep.",
					 ibw_ctr_desc(c)->name,
					 ibw_ctr_desc(c)->scale == 4
						 ? ", in bytes (the counter "
						   "counts 4-octet words)"
						 : "");
				family(b, name, "counter", help);
				any = 1;
			}
			put_mem(b, name, nlen);
			put_mem(b, labels[i], llen[i]);
			put_u64(b, p->v[c].total);
			put_mem(b, "\n", 1);
		}
	}
	free(labels);
	free(llen);
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
 * group_left(hca) find it here too.
 */
static void info_family(struct buf *b, const struct ibw_snapshot *s,
			int is_switch)
{
	const struct ibw_snapshot_node *nv;
	unsigned n = 0;
	char name[64];
	const char *kind = kind_of(is_switch);

	snprintf(name, sizeof(name), "infiniband_%s_info", kind);
	ibw_snapshot_foreach_node(s, nv) {
		if (nv->is_switch != is_switch || nv->n->gone)
			continue;
		if (!n++)
			family(b, name, "gauge",
			       "A node of the fabric, its name and LID, as "
			       "of the last discovery sweep.");
		put(b, "%s{guid=\"0x%016" PRIx64 "\",%s=\"", name, nv->n->guid,
		    kind);
		put_label(b, nv->name);
		put(b, "\",lid=\"%u\"} 1\n", nv->n->lid);
	}
}

/* A port with a link whose rate means something: a physical port, not
 * gone, its PortInfo read and the link trained. */
static int port_rated(const struct ibw_snapshot_port *pv, int is_switch)
{
	return pv->node->is_switch == is_switch && !pv->node->n->gone &&
	       !pv->gone && pv->external && pv->p->have_pi && pv->link_up;
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
 * HCA's per node (infiniband_hca_[raw_]rate_bytes_per_second{guid}), which
 * for an HCA of several ports is its lowest-numbered port with a link.
 */
static void rate_families(struct buf *b, const struct ibw_snapshot *s,
			  int is_switch)
{
	const struct ibw_snapshot_port *pv;
	unsigned w, n;
	char name[96];
	uint64_t last = 0;
	int have_last;

	for (w = 0; w < 2; w++) {
		snprintf(name, sizeof(name), "infiniband_%s%s_bytes_per_second",
			 is_switch ? "switch_port_" : "hca_",
			 w ? "raw_rate" : "rate");
		n = 0;
		have_last = 0;
		ibw_snapshot_foreach_port(s, pv) {
			uint64_t guid = pv->node->n->guid;
			double data, raw;

			if (!port_rated(pv, is_switch))
				continue;
			if (!is_switch && have_last && last == guid)
				continue; /* one per HCA, its first port */
			port_rates(pv, &data, &raw);
			if (data <= 0)
				continue;
			last = guid;
			have_last = 1;
			if (!n++)
				family(b, name, "gauge",
				       w ? raw_rate_help : rate_help);
			put(b, "%s{guid=\"0x%016" PRIx64 "\"", name, guid);
			if (is_switch)
				put(b, ",port=\"%u\"", (unsigned)pv->p->num);
			put(b, "} %.15g\n", w ? raw : data);
		}
	}
}

/*
 * infiniband_{switch,hca}_uplink_info: one a connected port, naming the
 * node at its other end, the join key of the exporter's recording rules
 * (* on(guid,port) group_left(switch, uplink, uplink_port)).
 */
static void uplink_family(struct buf *b, const struct ibw_snapshot *s,
			  int is_switch)
{
	const struct ibw_snapshot_port *pv;
	unsigned n = 0;
	char name[64];
	const char *kind = kind_of(is_switch);

	snprintf(name, sizeof(name), "infiniband_%s_uplink_info", kind);
	ibw_snapshot_foreach_port(s, pv) {
		const struct ibw_fport *fp = pv->p;
		const struct ibw_snapshot_node *rv;

		if (pv->node->is_switch != is_switch || pv->node->n->gone ||
		    pv->gone || !pv->external || !fp->remote_guid)
			continue;
		rv = ibw_snapshot_find_node(s, fp->remote_guid);
		if (!rv || rv->n->gone)
			continue;
		if (!n++)
			family(b, name, "gauge",
			       "A connected port and the node at its other "
			       "end, as of the last discovery sweep.");
		/* Labels in the order the exporter's output has them. */
		put(b, "%s{guid=\"0x%016" PRIx64 "\",", name,
		    pv->node->n->guid);
		if (is_switch)
			put(b, "port=\"%u\",switch=\"", (unsigned)fp->num);
		else
			put(b, "hca=\"");
		put_label(b, pv->node->name);
		if (!is_switch)
			put(b, "\",port=\"%u", (unsigned)fp->num);
		put(b, "\",uplink=\"");
		put_label(b, rv->name);
		put(b,
		    "\",uplink_guid=\"0x%016" PRIx64 "\",uplink_lid=\"%u\","
		    "uplink_port=\"%u\",uplink_type=\"%s\"} 1\n",
		    rv->n->guid,
		    ibw_snapshot_lid(s, rv->n->guid, fp->remote_port),
		    (unsigned)fp->remote_port, type_of(rv->n));
	}
}

/* ibwatch's own: the PortInfo state of every physical port. */
static void state_family(struct buf *b, const struct ibw_snapshot *s,
			 int is_switch)
{
	const struct ibw_snapshot_port *pv;
	unsigned n = 0;
	char name[64];

	snprintf(name, sizeof(name), "ibwatch_%s_port_state",
		 kind_of(is_switch));
	ibw_snapshot_foreach_port(s, pv) {
		const struct ibw_fport *fp = pv->p;

		if (pv->node->is_switch != is_switch || pv->node->n->gone ||
		    !pv->external || !fp->have_pi)
			continue;
		if (!n++)
			family(b, name, "gauge",
			       "Port state as of the last discovery sweep: "
			       "1 down, 2 init, 3 armed, 4 active.");
		put(b, "%s{guid=\"0x%016" PRIx64 "\",port=\"%u\"} %u\n", name,
		    pv->node->n->guid, (unsigned)fp->num, fp->pi.state);
	}
}

/*
 * The exporter's collection health, per node and per collector. Its
 * collect_timeout is a device whose perfquery ran out of time, its
 * collect_error one that failed otherwise; ours: timeout when no port of
 * the node answered the last counter sweep, error when only some did not.
 */
static void health_families(struct buf *b, const struct ibw_snapshot *s,
			    int is_switch, unsigned *nerr, unsigned *ntmo)
{
	const struct ibw_snapshot_node *nv;
	const char *kind = kind_of(is_switch);
	unsigned w, n;
	char name[64];

	*nerr = *ntmo = 0;
	for (w = 0; w < 2; w++) {
		snprintf(name, sizeof(name), "infiniband_%s_collect_%s", kind,
			 w ? "timeout" : "error");
		n = 0;
		ibw_snapshot_foreach_node(s, nv) {
			const struct ibw_snapshot_port *pv;
			unsigned read = 0, failed = 0;
			int v;

			if (nv->is_switch != is_switch || nv->n->gone)
				continue;
			ibw_snapshot_foreach_node_port(nv, pv) {
				if (!pv->ctrs)
					continue;
				if (pv->ctrs->stale)
					failed++;
				else
					read++;
			}
			if (!read && !failed)
				continue; /* its counters not swept yet */
			v = w ? failed && !read : failed && read;
			if (w)
				*ntmo += (unsigned)v;
			else
				*nerr += (unsigned)v;
			if (!n++)
				family(b, name, "gauge",
				       w ? "1 when no port of the node "
					   "answered the last counter sweep."
					 : "1 when some but not all ports of "
					   "the node answered the last "
					   "counter sweep.");
			put(b,
			    "%s{collector=\"%s\",guid=\"0x%016" PRIx64 "\"} "
			    "%d\n",
			    name, kind, nv->n->guid, v);
		}
	}
}

/* What a port runs at, may run at and can run at: lanes of the widest
 * width and the fastest speed (enum ibw_speed) of each set. */
static void speed_families(struct buf *b, const struct ibw_snapshot *s,
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
			 kind_of(is_switch), what[w]);
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
				family(b, name, "gauge", help[w]);
			put(b, "%s{guid=\"0x%016" PRIx64 "\",port=\"%u\"} %u\n",
			    name, nd->guid, (unsigned)fp->num, v);
		}
	}
}

/* Per cable of the link view: both ends as labels, end[0] the lower
 * (GUID, port). */
static void link_labels(struct buf *b, const char *name,
			const struct ibw_link *k)
{
	put(b, "%s{guid=\"0x%016" PRIx64 "\",port=\"%u\"", name, k->end[0].guid,
	    (unsigned)k->end[0].port);
	put(b, ",remote_guid=\"0x%016" PRIx64 "\",remote_port=\"%u\"",
	    k->end[1].guid, (unsigned)k->end[1].port);
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
static void link_families(struct buf *b, const struct ibw_snapshot *s)
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
	family(b, "ibwatch_link_health", "gauge",
	       "Health of a cable: 0 ok, 1 degraded, 2 failing, 3 down "
	       "(docs/links.md).");
	for (i = 0; i < v->n; i++) {
		link_labels(b, "ibwatch_link_health", by[i]);
		put(b, "} %d\n", (int)by[i]->health);
	}
	any = 0;
	for (i = 0; i < v->n; i++) {
		const struct ibw_link *k = by[i];

		for (r = 0; r < IBW_LR_MAX; r++) {
			if (!(k->reasons & IBW_LR_BIT(r)))
				continue;
			if (!any++)
				family(b, "ibwatch_link_reason", "gauge",
				       "1 for each reason a cable is not ok "
				       "(only those present).");
			link_labels(b, "ibwatch_link_reason", k);
			put(b, ",reason=\"%s\"} 1\n",
			    ibw_link_reason_str((enum ibw_link_reason)r));
		}
	}
	any = 0;
	for (i = 0; i < v->n; i++) {
		if (by[i]->ber < 0)
			continue;
		if (!any++)
			family(b, "ibwatch_link_ber", "gauge",
			       "Estimated bit error rate over the last hour, "
			       "the worse direction (docs/links.md).");
		link_labels(b, "ibwatch_link_ber", by[i]);
		put(b, "} %.6g\n", by[i]->ber);
	}
	any = 0;
	for (i = 0; i < v->n; i++) {
		if (by[i]->xmit_wait_ratio < 0)
			continue;
		if (!any++)
			family(b, "ibwatch_link_xmit_wait_ratio", "gauge",
			       "Share of the last sweep spent waiting to "
			       "transmit, the worse direction.");
		link_labels(b, "ibwatch_link_xmit_wait_ratio", by[i]);
		put(b, "} %.6g\n", by[i]->xmit_wait_ratio);
	}
	free(by);
}

/* The route census (docs/routes.md): counts, and the routes per link
 * direction, so the series grow with the links, not the pairs. */
static void route_families(struct buf *b, const struct ibw_snapshot *s)
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
	family(b, "ibwatch_routes_pairs", "gauge",
	       "Pairs (source CA port, destination LID) of the last route "
	       "census by status: ok is routed.");
	for (i = 0; i < IBW_ROUTE_STATUS_MAX; i++) {
		put(b, "ibwatch_routes_pairs{status=\"%s\"} %" PRIu64 "\n",
		    ibw_route_status_key((enum ibw_route_status)i),
		    cs->by_status[i]);
	}
	family(b, "ibwatch_routes_non_minimal", "gauge",
	       "Routed pairs longer than the topology's shortest path.");
	put(b, "ibwatch_routes_non_minimal %" PRIu64 "\n", cs->non_minimal);
	family(b, "ibwatch_routes_tables", "gauge",
	       "Switch forwarding tables of the last read: fresh, stale "
	       "(kept from an earlier read) or missing.");
	put(b, "ibwatch_routes_tables{state=\"fresh\"} %u\n", ts->fresh);
	put(b, "ibwatch_routes_tables{state=\"stale\"} %u\n", ts->stale);
	put(b, "ibwatch_routes_tables{state=\"missing\"} %u\n", ts->missing);
	family(b, "ibwatch_routes_tables_mads", "gauge",
	       "MADs the last read of the forwarding tables sent.");
	put(b, "ibwatch_routes_tables_mads %" PRIu64 "\n", ts->mads);
	t = ibw_census_tiers(c, &n);
	if (n) {
		family(b, "ibwatch_routes_tier_max_mean", "gauge",
		       "Routes on a tier's most loaded uplink over the mean "
		       "of its uplinks (1 is even; docs/routes.md).");
		for (i = 0; i < n; i++)
			put(b,
			    "ibwatch_routes_tier_max_mean{tier=\"%u\"} "
			    "%.6g\n",
			    t[i].tier, t[i].max_mean);
		family(b, "ibwatch_routes_tier_cv", "gauge",
		       "Coefficient of variation of the routes over a tier's "
		       "uplinks (0 is even).");
		for (i = 0; i < n; i++)
			put(b, "ibwatch_routes_tier_cv{tier=\"%u\"} %.6g\n",
			    t[i].tier, t[i].cv);
	}
	l = ibw_census_loads(c, &n);
	if (!n)
		return;
	family(b, "ibwatch_route_load", "gauge",
	       "Routed pairs whose path leaves by this port across its "
	       "link (one series per link direction).");
	for (i = 0; i < n; i++)
		put(b,
		    "ibwatch_route_load{guid=\"0x%016" PRIx64
		    "\",port=\"%u\",remote_guid=\"0x%016" PRIx64
		    "\",remote_port=\"%u\"} %u\n",
		    l[i].guid, (unsigned)l[i].port, l[i].peer_guid,
		    (unsigned)l[i].peer_port, l[i].routes);
}

static void endport_families(struct buf *b, const struct ibw_snapshot *s)
{
	const struct ibw_snapshot_endport *v;

	if (!s->nendports)
		return;
	family(b, "ibwatch_endport_up", "gauge",
	       "1 when the endport answers pings (state up or degraded).");
	ibw_snapshot_foreach_endport(s, v) {
		const struct ibw_endport *e = v->ep;

		put(b, "ibwatch_endport_up{guid=\"0x%016" PRIx64 "\",name=\"",
		    e->port_guid);
		put_label(b, e->name);
		put(b, "\",lid=\"%u\"} %d\n", e->lid,
		    e->state == IBW_EP_UP || e->state == IBW_EP_DEGRADED);
	}
	family(b, "ibwatch_endport_state", "gauge",
	       "0 unknown, 1 up, 2 degraded, 3 down.");
	ibw_snapshot_foreach_endport(s, v)
		put(b, "ibwatch_endport_state{guid=\"0x%016" PRIx64 "\"} %d\n",
		    v->ep->port_guid, (int)v->ep->state);
	family(b, "ibwatch_endport_rtt_seconds", "gauge",
	       "Round-trip time of the last answered ping.");
	ibw_snapshot_foreach_endport(s, v) {
		const struct ibw_endport *e = v->ep;

		if (e->received)
			put(b,
			    "ibwatch_endport_rtt_seconds{guid=\"0x%016" PRIx64
			    "\"} %.6f\n",
			    e->port_guid, (double)e->rtt_last_us / 1e6);
	}
	family(b, "ibwatch_endport_loss_ratio", "gauge",
	       "Share of pings lost over the sliding window.");
	ibw_snapshot_foreach_endport(s, v)
		put(b,
		    "ibwatch_endport_loss_ratio{guid=\"0x%016" PRIx64 "\"} "
		    "%.4f\n",
		    v->ep->port_guid, v->window_loss_ratio);
}

static char *finish(struct buf *b, size_t *len)
{
	if (b->oom) {
		free(b->p);
		return NULL;
	}
	if (!b->p) {
		b->p = calloc(1, 1);
		if (!b->p)
			return NULL;
	}
	*len = b->len;
	return b->p;
}

static void render_snapshot(struct buf *bp, const struct ibw_snapshot *s)
{
	static const char *const probes[2] = { "discovery", "counters" };
	const struct ibw_sweep_stats *sw[2] = { &s->discovery, &s->counters };
	unsigned nerr[2], ntmo[2];
	struct buf b = *bp;
	int k;

	for (k = 1; k >= 0; k--) {
		counter_families(&b, s, k);
		info_family(&b, s, k);
		rate_families(&b, s, k);
		uplink_family(&b, s, k);
		state_family(&b, s, k);
		health_families(&b, s, k, &nerr[k], &ntmo[k]);
		speed_families(&b, s, k);
	}
	link_families(&b, s);
	route_families(&b, s);
	family(&b, "infiniband_exporter_collect_errors", "gauge",
	       "Nodes of each collector (switch, hca) with a collect_error "
	       "in the last counter sweep.");
	for (k = 1; k >= 0; k--)
		put(&b,
		    "infiniband_exporter_collect_errors{collector=\"%s\"} %u\n",
		    kind_of(k), nerr[k]);
	family(&b, "infiniband_exporter_collect_timeouts", "gauge",
	       "Nodes of each collector (switch, hca) with a collect_timeout "
	       "in the last counter sweep.");
	for (k = 1; k >= 0; k--)
		put(&b,
		    "infiniband_exporter_collect_timeouts{collector=\"%s\"} "
		    "%u\n",
		    kind_of(k), ntmo[k]);
	family(&b, "infiniband_exporter_collector_duration_seconds", "gauge",
	       "Duration of the last counter sweep (one sweep reads switches "
	       "and HCAs alike).");
	for (k = 1; k >= 0; k--)
		put(&b,
		    "infiniband_exporter_collector_duration_seconds{collector="
		    "\"%s\"} %.6f\n",
		    kind_of(k), (double)s->counters.duration_us / 1e6);
	endport_families(&b, s);
	family(&b, "ibwatch_sweep_duration_seconds", "gauge",
	       "Duration of the last sweep of each probe.");
	for (k = 0; k < 2; k++)
		put(&b, "ibwatch_sweep_duration_seconds{probe=\"%s\"} %.6f\n",
		    probes[k], (double)sw[k]->duration_us / 1e6);
	family(&b, "ibwatch_sweep_mads", "gauge",
	       "MADs the last sweep of each probe sent.");
	for (k = 0; k < 2; k++)
		put(&b, "ibwatch_sweep_mads{probe=\"%s\"} %" PRIu64 "\n",
		    probes[k], sw[k]->mads);
	family(&b, "ibwatch_sweep_timeouts", "gauge",
	       "MADs of the last sweep of each probe that were not answered.");
	for (k = 0; k < 2; k++)
		put(&b, "ibwatch_sweep_timeouts{probe=\"%s\"} %" PRIu64 "\n",
		    probes[k], sw[k]->timeouts);
	family(&b, "ibwatch_unreachable_ports", "gauge",
	       "Ports whose counters did not answer in the last sweep.");
	put(&b, "ibwatch_unreachable_ports %u\n", s->unreachable_ports);
	family(&b, "ibwatch_lids_in_flux", "gauge",
	       "1 while there is a sign that the SM moves LIDs, until a "
	       "discovery finds them settled.");
	put(&b, "ibwatch_lids_in_flux %d\n",
	    s->counter_verify.lids_in_flux ? 1 : 0);
	family(&b, "ibwatch_lid_checks_total", "counter",
	       "NodeInfo SMPs sent to check which node a LID read counters "
	       "from.");
	put(&b, "ibwatch_lid_checks_total %" PRIu64 "\n",
	    s->counter_verify.nodeinfos);
	family(&b, "ibwatch_pma_readings_checked_total", "counter",
	       "Port counter readings checked with a NodeInfo.");
	put(&b, "ibwatch_pma_readings_checked_total %" PRIu64 "\n",
	    s->counter_verify.verified);
	family(&b, "ibwatch_pma_readings_lid_moved_total", "counter",
	       "Port counter readings dropped: another node answered at the "
	       "LID.");
	put(&b, "ibwatch_pma_readings_lid_moved_total %" PRIu64 "\n",
	    s->counter_verify.lid_moved);
	if (s->npma_redirects)
		family(&b, "ibwatch_pma_redirect_info", "gauge",
		       "Nodes whose PMA redirects its counters elsewhere "
		       "(followed=\"0\": outside the default partition, "
		       "unread).");
	for (k = 0; k < (int)s->npma_redirects; k++) {
		const struct ibw_pma_redirect *r = &s->pma_redirects[k];

		put(&b,
		    "ibwatch_pma_redirect_info{guid=\"0x%016" PRIx64
		    "\",lid=\"%u\",redirect_lid=\"%u\",redirect_qp=\"%u\","
		    "followed=\"%d\"} 1\n",
		    r->guid, r->lid, r->redirect_lid, r->redirect_qp,
		    r->followed);
	}
	*bp = b;
}

char *ibw_prom_render_snapshot(const struct ibw_snapshot *s, int om,
			       size_t *len)
{
	struct buf b = { 0 };

	b.om = om;
	render_snapshot(&b, s);
	return finish(&b, len);
}

int ibw_prom_render_snapshot_to(const struct ibw_snapshot *s, int om,
				size_t hold,
				int (*sink)(void *arg, const char *p, size_t n),
				void *arg)
{
	struct buf b = { 0 };
	int rc = 0;

	b.om = om;
	b.sink = sink;
	b.sink_arg = arg;
	b.hold = hold;
	render_snapshot(&b, s);
	if (!b.oom && b.len && sink(arg, b.p, b.len) < 0)
		b.oom = 1;
	if (b.oom)
		rc = -ENOMEM;
	free(b.p);
	return rc;
}

char *ibw_prom_render_live(const struct ibw_snapshot *s,
			   const struct ibw_engine_stats *st,
			   const struct ibw_agentx_status *ax, uint64_t now_us,
			   int om, size_t *len)
{
	struct buf b = { 0 };

	b.om = om;
	family(&b, "ibwatch_build_info", "gauge",
	       "The ibwatchd that serves these metrics: version and git "
	       "revision.");
	put(&b, "ibwatch_build_info{version=\"");
	put_label(&b, build_version);
	put(&b, "\",revision=\"");
	put_label(&b, build_revision);
	put(&b, "\"} 1\n");
	family(&b, "ibwatch_snapshot_age_seconds", "gauge",
	       "Age of the data served.");
	put(&b, "ibwatch_snapshot_age_seconds %.3f\n",
	    now_us > s->taken_us ? (double)(now_us - s->taken_us) / 1e6 : 0.0);
	family(&b, "ibwatch_stale", "gauge",
	       "1 when the data is stale: no good sweep for three intervals, "
	       "or the local port is not active.");
	put(&b, "ibwatch_stale %d\n", ibw_snapshot_stale(s, now_us));
	family(&b, "ibwatch_local_port_active", "gauge",
	       "1 when the port ibwatchd sweeps from is active.");
	put(&b, "ibwatch_local_port_active %d\n",
	    s->local_state == IBW_PORT_ACTIVE);
	if (st) {
		family(&b, "ibwatch_mads_sent_total", "counter",
		       "MADs put on the wire, retries included.");
		put(&b, "ibwatch_mads_sent_total %" PRIu64 "\n", st->sent);
		family(&b, "ibwatch_mads_received_total", "counter",
		       "MADs read from the port.");
		put(&b, "ibwatch_mads_received_total %" PRIu64 "\n",
		    st->received);
		family(&b, "ibwatch_mad_timeouts_total", "counter",
		       "Tries that met their deadline.");
		put(&b, "ibwatch_mad_timeouts_total %" PRIu64 "\n",
		    st->try_timeouts);
		family(&b, "ibwatch_mad_retries_total", "counter",
		       "Tries sent again.");
		put(&b, "ibwatch_mad_retries_total %" PRIu64 "\n", st->retries);
	}
	if (ax) {
		family(&b, "ibwatch_agentx_connected", "gauge",
		       "1 while the AgentX session with the master agent is "
		       "open.");
		put(&b, "ibwatch_agentx_connected %d\n",
		    ax->state == IBW_AGENTX_CONNECTED);
		family(&b, "ibwatch_agentx_connect_attempts_total", "counter",
		       "Attempts to open an AgentX session.");
		put(&b, "ibwatch_agentx_connect_attempts_total %" PRIu64 "\n",
		    ax->attempts_total);
		family(&b, "ibwatch_agentx_reconnects_total", "counter",
		       "AgentX sessions opened again after one was lost.");
		put(&b, "ibwatch_agentx_reconnects_total %" PRIu64 "\n",
		    ax->reconnects);
	}
	if (om)
		put(&b, "# EOF\n");
	return finish(&b, len);
}

static char *render(const struct ibw_snapshot *s,
		    const struct ibw_engine_stats *st, uint64_t now_us,
		    size_t *len, int om)
{
	size_t a, b;
	char *x = ibw_prom_render_snapshot(s, om, &a);
	char *y = ibw_prom_render_live(s, st, NULL, now_us, om, &b);
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

char *ibw_prom_render(const struct ibw_snapshot *s,
		      const struct ibw_engine_stats *st, uint64_t now_us,
		      size_t *len)
{
	return render(s, st, now_us, len, 0);
}

char *ibw_openmetrics_render(const struct ibw_snapshot *s,
			     const struct ibw_engine_stats *st, uint64_t now_us,
			     size_t *len)
{
	return render(s, st, now_us, len, 1);
}
