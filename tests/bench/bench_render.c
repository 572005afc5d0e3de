// SPDX-License-Identifier: BSD-2-Clause
/*
 * The JSON renderers alone, without a fabric or HTTP: a snapshot shaped
 * like the 3-level fat tree of 10,368 hosts (1,296 switches of 36 ports
 * and their port 0, one port per host, counters on every port, every
 * port linked, every host an endport, a link view of its cables: 46,656,
 * where the real tree has 25,920, since every switch port is linked),
 * then /api/v1/ports, /api/v1/nodes, /api/v1/links and /api/v1/endports
 * written into a buffer as the HTTP handlers write them, and /metrics
 * with the fabric label on no series, on the ibwatch_* ones (the
 * default) and on all. Prints the CPU and wall time and the size of
 * each.
 *   bench_render [HOSTS [ROUNDS]]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric.h"
#include "json.h"
#include "json_links.h"
#include "links.h"
#include "prom.h"
#include "snapshot.h"
#include "stream.h"

#define SW_PORTS 36

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fill_port(struct ibw_fport *p, uint64_t guid, uint16_t lid)
{
	p->have_pi = 1;
	p->guid = guid;
	p->pi.lid = lid;
	p->pi.state = 4;
	p->pi.phys_state = 5;
	p->pi.width_active = 2;
	p->pi.speed_active = 4;
	p->pi.width_enabled = p->pi.width_supported = 3;
	p->pi.speed_enabled = p->pi.speed_supported = 7;
	p->pi.capmask = 0x2651084a;
}

/* One end of a cable for the link view, read at @us. */
static void link_end(struct ibw_link_end_in *in, const struct ibw_fnode *n,
		     unsigned port, uint64_t us)
{
	memset(in, 0, sizeof(*in));
	in->guid = n->guid;
	in->port = (uint8_t)port;
	in->node_type = n->ni.node_type;
	in->lid = n->lid;
	in->name = n->desc;
	in->pi = &n->ports[port].pi;
	in->have_ctrs = 1;
	in->ctr_us = us;
	in->xmit_bytes = 1000003ull * port;
	in->xmit_wait = 17ull * port;
	in->tick = -1;
}

/* The link view of @f's cables, each end read once at @us. */
static struct ibw_link_view *big_links(const struct ibw_fabric *f, uint64_t us)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	struct ibw_link_end_in a, b;
	unsigned i, p;

	if (!l)
		return NULL;
	ibw_links_begin(l, us);
	for (i = 0; i < f->nnodes; i++) {
		const struct ibw_fnode *n = &f->nodes[i], *r;

		for (p = 1; p < n->nports; p++) {
			const struct ibw_fport *fp = &n->ports[p];

			r = ibw_fabric_find(f, fp->remote_guid);
			if (!fp->remote_guid || !r ||
			    fp->remote_port >= r->nports)
				continue;
			link_end(&a, n, p, us);
			link_end(&b, r, fp->remote_port, us);
			ibw_links_update(l, &a, &b);
		}
	}
	v = ibw_links_view(l, us);
	ibw_links_free(l);
	return v;
}

static struct ibw_snapshot *big_snapshot(unsigned hosts)
{
	struct ibw_snapshot *s = ibw_snapshot_new();
	struct ibw_fabric *f = ibw_fabric_new();
	unsigned nsw = hosts / 8; /* 1,296 for 10,368 hosts */
	unsigned i, p, k = 0;
	uint64_t swg = 0x0002c90300100000ull, hg = 0x0002c90300800000ull;

	for (i = 0; i < nsw; i++) {
		struct ibw_fnode *n =
			ibw_fabric_add_node(f, swg + i, SW_PORTS + 1);

		n->ni.node_type = IBW_NODE_SWITCH;
		n->ni.num_ports = SW_PORTS;
		n->ni.vendor_id = 0x2c9;
		n->ni.system_guid = swg + i;
		n->lid = (uint16_t)(1 + i);
		snprintf(n->desc, sizeof(n->desc), "MF0;switch-%u:MQM8700/U1",
			 i);
		ibw_dest_dr_parse(&n->dr, "0,1,3,5");
		for (p = 0; p <= SW_PORTS; p++) {
			fill_port(&n->ports[p], swg + i, n->lid);
			if (!p)
				continue;
			/* downlinks to hosts on the first switches, the
			 * rest to other switches */
			if (p <= SW_PORTS / 2 &&
			    i * (SW_PORTS / 2) + p <= hosts)
				n->ports[p].remote_guid =
					hg + i * (SW_PORTS / 2) + p - 1;
			else
				n->ports[p].remote_guid = swg + (i + p) % nsw;
			n->ports[p].remote_port = (uint8_t)p;
		}
	}
	for (i = 0; i < hosts; i++) {
		struct ibw_fnode *n = ibw_fabric_add_node(f, hg + i, 2);

		n->ni.node_type = IBW_NODE_CA;
		n->ni.num_ports = 1;
		n->ni.system_guid = hg + i;
		n->lid = (uint16_t)(nsw + 1 + i);
		snprintf(n->desc, sizeof(n->desc), "node%05u HCA-1", i + 1);
		ibw_dest_dr_parse(&n->dr, "0,1,3,5,7,9");
		fill_port(&n->ports[1], hg + 0x100000 + i, n->lid);
		n->ports[1].remote_guid = swg + i / (SW_PORTS / 2);
		n->ports[1].remote_port = (uint8_t)(1 + i % (SW_PORTS / 2));
	}
	ibw_fabric_freeze(f);
	s->fabric = f;
	s->nports = nsw * SW_PORTS + hosts;
	s->ports = calloc(s->nports, sizeof(*s->ports));
	for (i = 0; i < nsw; i++)
		for (p = 1; p <= SW_PORTS; p++) {
			s->ports[k].guid = swg + i;
			s->ports[k].port = (uint8_t)p;
			s->ports[k++].is_switch = 1;
		}
	for (i = 0; i < hosts; i++) {
		s->ports[k].guid = hg + i;
		s->ports[k++].port = 1;
	}
	for (i = 0; i < s->nports; i++) {
		struct ibw_port_ctrs *pc = &s->ports[i];
		int c;

		pc->have_ext = 1;
		pc->updated_us = 1795306300000000ull;
		pc->xmit_bytes_per_s = 1234567.25 * (i % 97);
		pc->rcv_bytes_per_s = 7654321.5 * (i % 89);
		pc->xmit_pkts_per_s = 1024.0 * (i % 13);
		pc->rcv_pkts_per_s = 0.1 * i;
		for (c = 0; c < IBW_CTR_MAX; c++) {
			struct ibw_ctr_val *v = ibw_ctr_val_w(pc, c);

			if (!v)
				continue;
			v->have_raw = 1;
			v->total = (uint64_t)i * 1000003u * (c + 1);
			v->raw = v->total & 0xffffffffu;
		}
	}
	s->nendports = hosts;
	s->endports = calloc(hosts, sizeof(*s->endports));
	for (i = 0; i < hosts; i++) {
		struct ibw_endport *e = &s->endports[i];

		e->port_guid = hg + 0x100000 + i;
		e->node_guid = hg + i;
		e->port = 1;
		e->lid = (uint16_t)(nsw + 1 + i);
		e->found = 1;
		snprintf(e->name, sizeof(e->name), "node%05u HCA-1", i + 1);
		snprintf(e->reason, sizeof(e->reason), "answered");
		e->state = IBW_EP_UP;
		e->state_since_us = 1795306300000000ull - 5000000;
		e->sent = e->received = e->window_n = 10;
		e->rtt_last_us = e->rtt_min_us = e->rtt_max_us = 25 + i % 7;
		e->rtt_avg_us = 25.5;
		e->rtt_mdev_us = 1.25;
		e->last_method = IBW_PING_PMA;
		e->last_reply_us = 1795306300000000ull - 1000000;
	}
	s->taken_us = 1795306300000000ull;
	s->links = big_links(f, s->taken_us);
	if (ibw_snapshot_seal(s) < 0) {
		ibw_snapshot_unref(s);
		return NULL;
	}
	return s;
}

static int part_ports(struct ibw_jw *w, const struct ibw_snapshot *s,
		      const void *f, size_t *pos, size_t budget)
{
	return ibw_json_write_ports_part(w, s, f, pos, budget);
}

static int part_nodes(struct ibw_jw *w, const struct ibw_snapshot *s,
		      const void *f, size_t *pos, size_t budget)
{
	(void)f;
	return ibw_json_write_nodes_part(w, s, pos, budget);
}

static int part_links(struct ibw_jw *w, const struct ibw_snapshot *s,
		      const void *f, size_t *pos, size_t budget)
{
	(void)f;
	return ibw_json_write_links_part(w, s, NULL, pos, budget);
}

/* A sink that only counts what it is given. */
static int count_bytes(void *arg, const char *p, size_t n)
{
	(void)p;
	*(size_t *)arg += n;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned hosts = argc > 1 ? (unsigned)atoi(argv[1]) : 10368;
	int rounds = argc > 2 ? atoi(argv[2]) : 3, r, d;
	struct ibw_snapshot *s = big_snapshot(hosts);
	struct ibw_port_filter all = { 0, 0, -1, 0 };
	static const char *const docs[] = { "ports", "nodes", "links",
					    "endports" };
	struct ibw_link_filter any = { -1, -1, 0, 0, NULL, 0 };
	static const ibw_stream_part_fn parts[] = { part_ports, part_nodes,
						    part_links };

	if (!s) {
		fprintf(stderr, "bench_render: no snapshot\n");
		return 1;
	}
	printf("%u nodes, %u counter ports, %zu links\n", s->fabric->nnodes,
	       s->nports, s->links ? s->links->n : 0);
	/* ... and streamed, as HTTP sends a list too big to keep: parts
	 * read IBW_STREAM_PART bytes at a time. */
	for (r = 0; r < rounds; r++)
		for (d = 0; d < 3; d++) {
			double c0 = now(CLOCK_PROCESS_CPUTIME_ID);
			double w0 = now(CLOCK_MONOTONIC);
			struct ibw_stream *st =
				ibw_stream_new(s, parts[d], &all, sizeof(all));
			static char buf[IBW_STREAM_PART];
			size_t len = 0;
			ssize_t n;

			if (!st)
				return 1;
			while ((n = ibw_stream_read(st, len, buf,
						    sizeof(buf))) > 0)
				len += (size_t)n;
			ibw_stream_free(st);
			printf("/api/v1/%s streamed: %.3f s CPU, %.3f s wall, "
			       "%zu bytes\n",
			       docs[d], now(CLOCK_PROCESS_CPUTIME_ID) - c0,
			       now(CLOCK_MONOTONIC) - w0, len);
		}
	for (r = 0; r < rounds; r++)
		for (d = 0; d < 4; d++) {
			double c0 = now(CLOCK_PROCESS_CPUTIME_ID);
			double w0 = now(CLOCK_MONOTONIC);
			struct ibw_jw w;
			size_t len = 0;
			char *t;

			ibw_jw_init(&w);
			if (d == 0)
				ibw_json_write_ports(&w, s, &all);
			else if (d == 1)
				ibw_json_write_nodes(&w, s);
			else if (d == 2)
				ibw_json_write_links(&w, s, &any);
			else
				ibw_json_write_endports(&w, s);
			t = ibw_jw_finish(&w, &len);
			printf("/api/v1/%s: %.3f s CPU, %.3f s wall, %zu bytes\n",
			       docs[d], now(CLOCK_PROCESS_CPUTIME_ID) - c0,
			       now(CLOCK_MONOTONIC) - w0, len);
			if (!t)
				return 1;
			free(t);
		}
	/* /metrics: the fabric label's cost (docs/benchmarks.md) */
	s->fabric_id.known = 1;
	s->fabric_id.subnet_prefix = 0xfe80000000000000ull;
	s->fabric_id.sm_guid = 0x0002c90300000001ull;
	for (r = 0; r < rounds; r++)
		for (d = 0; d < 3; d++) {
			static const int mode[] = { IBW_PROM_FABRIC_NONE,
						    IBW_PROM_FABRIC_IBWATCH,
						    IBW_PROM_FABRIC_ALL };
			static const char *const name[] = { "none", "ibwatch",
							    "all" };
			struct ibw_prom_opts o = { .fabric_label = mode[d] };
			double c0 = now(CLOCK_PROCESS_CPUTIME_ID);
			double w0 = now(CLOCK_MONOTONIC);
			size_t len = 0;

			/* in 64 KB parts, as the HTTP handler renders it */
			if (ibw_prom_render_snapshot_to(s, &o, 65536,
							count_bytes, &len) < 0)
				return 1;
			printf("/metrics, fabric label %s: %.3f s CPU, %.3f s "
			       "wall, %zu bytes\n",
			       name[d], now(CLOCK_PROCESS_CPUTIME_ID) - c0,
			       now(CLOCK_MONOTONIC) - w0, len);
		}
	ibw_snapshot_unref(s);
	return 0;
}
