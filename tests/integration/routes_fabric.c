// SPDX-License-Identifier: BSD-2-Clause
/*
 * The route census on the simulated fabric, driven line by line from
 * standard input so that a script can compare what it says with ibroute
 * and ibtracert between fabric changes (tests/integration/routes.sh,
 * tests/bench/routes.sh). Each command's output ends with a line ".".
 *
 *   census            discover, read every table, compute; the summary
 *                     as "key value" lines, then (from the second census
 *                     on) the delta and events against the previous one
 *   tables FILE       every switch's table in ibroute -n's form:
 *                     "switch 0xGUID lid LID top TOP", "0xLLLL PPP"...
 *   lids FILE         the LID of every CA port, one a line
 *   sample N FILE     N pairs of CA ports spread over the fabric:
 *                     "SLID DLID"
 *   paths IN OUT      for each "SLID DLID" of IN, "SLID DLID STATUS HOPS"
 *                     and the hops as ibtracert -n prints them, joined:
 *                     "0xNODE/PORT OUT>0xGUID/IN ... 0xNODE/PORT"
 *   path SLID DLID    one path, with the reason of a break
 *   broken N          up to N broken pairs and where they break
 *   load GUID PORT    the routes leaving that port ("none": no link)
 *   uplinks GUID      the balance of a switch's uplinks
 *   tiers, top        the tiers' balance, the most loaded links
 *   setlft GUID LID PORT   change one LFT entry (directed-route Set)
 *   lookups N         time N path lookups from the census
 *   quit
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "codec.h"
#include "discover.h"
#include "engine.h"
#include "lft.h"
#include "census.h"
#include "umad.h"
#include "walk.h"

static struct ibw_loop *loop;
static struct ibw_engine *eng;
static struct ibw_lft *reader;
static struct ibw_census *cur, *prev;
static struct ibw_events *events;
static struct ibw_lft_set *got;

static void on_set(struct ibw_lft_set *s, void *arg)
{
	(void)arg;
	got = ibw_lft_set_ref(s);
}

static uint64_t cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static double ms_since(uint64_t t0)
{
	return (double)(ibw_now_us() - t0) / 1000.0;
}

static int cmd_census(void)
{
	struct ibw_fabric *f;
	const struct ibw_census_summary *s;
	const struct ibw_lft_stats *ls;
	struct ibw_census *c;
	struct rusage ru;
	uint64_t t0 = ibw_now_us(), seq;
	double disc_ms, lft_ms;
	unsigned i;

	f = walk_discover(loop, eng, 300000);
	if (!f) {
		printf("error discovery failed\n");
		return -1;
	}
	disc_ms = ms_since(t0);
	t0 = ibw_now_us();
	got = NULL;
	if (ibw_lft_refresh(reader, f) < 0) {
		ibw_fabric_unref(f);
		printf("error cannot read the tables\n");
		return -1;
	}
	while (!got && ibw_now_us() - t0 < 300000000u)
		ibw_loop_run_once(loop, 100000);
	lft_ms = ms_since(t0);
	if (!got) {
		ibw_fabric_unref(f);
		printf("error the tables were not read\n");
		return -1;
	}
	c = ibw_census_compute(f, got, NULL);
	ls = ibw_lft_set_stats(got);
	ibw_lft_set_unref(got);
	ibw_fabric_unref(f);
	if (!c) {
		printf("error census failed\n");
		return -1;
	}
	ibw_census_unref(prev);
	prev = cur;
	cur = c;
	s = ibw_census_summary(c);
	getrusage(RUSAGE_SELF, &ru);
	printf("discover_ms %.1f\n", disc_ms);
	printf("lft_ms %.1f\n", lft_ms);
	printf("lft_switches %u\nlft_fresh %u\nlft_stale %u\nlft_missing %u\n",
	       ls->switches, ls->fresh, ls->stale, ls->missing);
	printf("lft_blocks %" PRIu64 "\nlft_mads %" PRIu64 "\n", ls->blocks,
	       ls->mads);
	printf("lft_failed_blocks %" PRIu64 "\nlft_memory %zu\n",
	       ls->failed_blocks, ls->memory_bytes);
	printf("sources %u\ndlids %u\nswitches %u\n", s->sources, s->dlids,
	       s->switches);
	printf("pairs %" PRIu64 "\nrouted %" PRIu64 "\nunreachable %" PRIu64
	       "\nlooping %" PRIu64 "\nnon_minimal %" PRIu64 "\n",
	       s->pairs, s->routed, s->unreachable, s->looping, s->non_minimal);
	for (i = 0; i < IBW_ROUTE_STATUS_MAX; i++) {
		char name[32];
		size_t k;

		snprintf(name, sizeof(name), "%s", ibw_route_status_str(i));
		for (k = 0; name[k]; k++)
			if (name[k] == ' ')
				name[k] = '_';
		printf("status_%s %" PRIu64 "\n", name, s->by_status[i]);
	}
	printf("max_hops %u\nmean_hops %.3f\n", s->max_hops, s->mean_hops);
	printf("compute_cpu_us %" PRIu64 "\nmemory_bytes %zu\n", s->compute_us,
	       s->memory_bytes);
	printf("maxrss_kb %ld\n", ru.ru_maxrss);
	if (prev) {
		struct ibw_census_delta d;
		struct ibw_event ev[64];
		unsigned n;

		seq = ibw_events_last_seq(events);
		t0 = cpu_us();
		ibw_census_diff(prev, cur, NULL, &d, events);
		printf("diff_cpu_us %" PRIu64 "\n", cpu_us() - t0);
		printf("delta_compared %" PRIu64 "\ndelta_lost %" PRIu64
		       "\ndelta_restored %" PRIu64 "\ndelta_new_loops %" PRIu64
		       "\ndelta_balance_worse %u\n",
		       d.compared, d.lost, d.restored, d.new_loops,
		       d.balance_worse);
		n = ibw_events_since(events, seq, ev, 64);
		for (i = 0; i < n; i++)
			printf("event %s 0x%016" PRIx64 " %" PRIu64 " %" PRIu64
			       " %s\n",
			       ibw_event_kind_str(ev[i].kind), ev[i].node_guid,
			       ev[i].old_value, ev[i].new_value, ev[i].detail);
	}
	return 0;
}

static int cmd_tables(const char *file)
{
	const struct ibw_lft_set *t = ibw_census_tables(cur);
	FILE *o = fopen(file, "w");
	unsigned i, l;

	if (!o)
		return -errno;
	for (i = 0; i < ibw_lft_count(t); i++) {
		const struct ibw_lft_table *x = ibw_lft_at(t, i);

		fprintf(o, "switch 0x%016" PRIx64 " lid %u top %u%s\n", x->guid,
			x->lid, x->top, x->ports ? "" : " missing");
		for (l = 0; l < x->n; l++)
			if (x->ports[l] != 0xff)
				fprintf(o, "0x%04x %03u\n", l, x->ports[l]);
	}
	fclose(o);
	return 0;
}

/* The LIDs of the CA ports of the census's fabric. */
static unsigned ca_lids(uint16_t **out)
{
	const struct ibw_fabric *f = ibw_census_fabric(cur);
	uint16_t *l = calloc(f->nnodes * 2 + 1, sizeof(*l));
	unsigned i, p, n = 0;

	for (i = 0; l && i < f->nnodes; i++) {
		const struct ibw_fnode *fn = &f->nodes[i];

		if (fn->gone || fn->ni.node_type == IBW_NODE_SWITCH)
			continue;
		for (p = 1; p < fn->nports && n < f->nnodes * 2; p++)
			if (fn->ports[p].have_pi && fn->ports[p].pi.lid)
				l[n++] = fn->ports[p].pi.lid;
	}
	*out = l;
	return n;
}

static int cmd_lids(const char *file)
{
	uint16_t *l;
	unsigned n = ca_lids(&l), i;
	FILE *o = fopen(file, "w");

	if (!o) {
		free(l);
		return -errno;
	}
	for (i = 0; i < n; i++)
		fprintf(o, "%u\n", l[i]);
	free(l);
	fclose(o);
	return 0;
}

/* A fixed pseudo-random sequence (xorshift64), so that runs compare. */
static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* N pairs of two CA ports, spread over the fabric. */
static int cmd_sample(unsigned n, const char *file)
{
	uint64_t x = 88172645463325252ull;
	uint16_t *l;
	unsigned nl = ca_lids(&l), i;
	FILE *o = fopen(file, "w");

	if (!o || nl < 2) {
		free(l);
		if (o)
			fclose(o);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		unsigned a = (unsigned)(next_rand(&x) % nl);
		unsigned b = (unsigned)(next_rand(&x) % (nl - 1));

		fprintf(o, "%u %u\n", l[a], l[b < a ? b : b + 1]);
	}
	free(l);
	fclose(o);
	return 0;
}

/* A path in ibtracert -n's terms: the source node and port, each hop's
 * out port and the next port (switch: node GUID, CA: port GUID), the
 * destination node and port. */
static void print_path(FILE *o, uint16_t slid, uint16_t dlid,
		       const struct ibw_census_route *r)
{
	const struct ibw_path *p = &r->path;
	unsigned i;

	fprintf(o, "%u %u %s %u", slid, dlid, ibw_route_status_str(r->status),
		r->hops);
	for (i = 0; i < p->nhops; i++) {
		const struct ibw_hop *h = &p->hops[i];
		uint64_t g = h->type == IBW_NODE_SWITCH ? h->node_guid
							: h->port_guid;

		if (i == 0)
			fprintf(o, " 0x%016" PRIx64 "/%u", h->node_guid,
				h->type == IBW_NODE_SWITCH ? 0 : h->out_port);
		else
			fprintf(o, " %u>0x%016" PRIx64 "/%u",
				p->hops[i - 1].out_port, g, h->in_port);
	}
	if (r->status == IBW_ROUTE_OK && p->nhops > 1) {
		const struct ibw_hop *h = &p->hops[p->nhops - 1];

		fprintf(o, " 0x%016" PRIx64 "/%u", h->node_guid,
			h->type == IBW_NODE_SWITCH ? 0 : h->in_port);
	}
	fprintf(o, "\n");
}

static int cmd_paths(const char *in, const char *out)
{
	FILE *i = fopen(in, "r"), *o;
	unsigned s, d;
	struct ibw_census_route r;

	if (!i)
		return -errno;
	o = fopen(out, "w");
	if (!o) {
		fclose(i);
		return -errno;
	}
	while (fscanf(i, "%u %u", &s, &d) == 2) {
		if (ibw_census_lookup(cur, (uint16_t)s, (uint16_t)d, &r) < 0)
			fprintf(o, "%u %u unknown-source\n", s, d);
		else
			print_path(o, (uint16_t)s, (uint16_t)d, &r);
	}
	fclose(i);
	fclose(o);
	return 0;
}

static int cmd_path(unsigned s, unsigned d)
{
	struct ibw_census_route r;
	char buf[4096];

	if (ibw_census_lookup(cur, (uint16_t)s, (uint16_t)d, &r) < 0)
		return -ENOENT;
	print_path(stdout, (uint16_t)s, (uint16_t)d, &r);
	ibw_path_str(&r.path, buf, sizeof(buf));
	printf("hops %u min_hops %u minimal %d\n", r.hops, r.min_hops,
	       r.minimal);
	printf("path %s\nreason %s\n", buf, r.path.reason);
	return 0;
}

static int cmd_broken(unsigned n)
{
	struct ibw_route_pair *p = calloc(n ? n : 1, sizeof(*p));
	uint64_t total;
	unsigned i, got_n;

	if (!p)
		return -ENOMEM;
	got_n = ibw_census_pairs(cur, IBW_CENSUS_SEL_BROKEN, 0, p, n, &total);
	printf("total %" PRIu64 "\n", total);
	for (i = 0; i < got_n; i++)
		printf("pair %u %u %s at 0x%016" PRIx64 " %u\n", p[i].slid,
		       p[i].dlid, ibw_route_status_str(p[i].status),
		       p[i].break_guid, p[i].break_port);
	free(p);
	return 0;
}

static int cmd_load(uint64_t guid, unsigned port)
{
	struct ibw_link_load l;

	if (ibw_census_link_load(cur, guid, (uint8_t)port, &l) < 0)
		printf("none\n");
	else
		printf("routes %u peer 0x%016" PRIx64 " %u\n", l.routes,
		       l.peer_guid, l.peer_port);
	return 0;
}

/* The balance of a switch's uplinks, and the load of every port of it
 * that leads to a switch. */
static int cmd_uplinks(uint64_t guid)
{
	const struct ibw_fabric *f = ibw_census_fabric(cur);
	const struct ibw_fnode *sw = ibw_fabric_find(f, guid);
	const struct ibw_switch_balance *b;
	struct ibw_link_load l;
	unsigned n, i;

	b = ibw_census_switch_balance(cur, &n);
	for (i = 0; i < n && b[i].guid != guid; i++)
		;
	if (i < n)
		printf("tier %u uplinks %u min %u max %u sum %" PRIu64 " max_"
		       "mean "
		       "%.4f "
		       "cv "
		       "%.4f\n",
		       b[i].tier, b[i].uplinks, b[i].up_min, b[i].up_max,
		       b[i].up_routes, b[i].max_mean, b[i].cv);
	else
		printf("none\n");
	for (i = 1; sw && i < sw->nports; i++) {
		const struct ibw_fnode *peer;

		if (ibw_census_link_load(cur, guid, (uint8_t)i, &l) < 0)
			continue;
		peer = ibw_fabric_find(f, l.peer_guid);
		if (peer && peer->ni.node_type == IBW_NODE_SWITCH)
			printf("port %u routes %u\n", i, l.routes);
	}
	return 0;
}

static int cmd_tiers(void)
{
	const struct ibw_tier_balance *t;
	unsigned n, i;

	t = ibw_census_tiers(cur, &n);
	for (i = 0; i < n; i++)
		printf("tier %u switches %u with_uplinks %u uplinks %u "
		       "max_mean %.4f cv %.4f worst 0x%016" PRIx64 " %.4f "
		       "mean_max_"
		       "mean %.4f "
		       "mean_cv "
		       "%.4f\n",
		       t[i].tier, t[i].switches, t[i].with_uplinks,
		       t[i].uplinks, t[i].max_mean, t[i].cv, t[i].worst_guid,
		       t[i].worst_max_mean, t[i].mean_max_mean, t[i].mean_cv);
	return 0;
}

static int cmd_top(void)
{
	unsigned n, i;
	const struct ibw_link_load *l = ibw_census_top_links(cur, &n);

	for (i = 0; i < n; i++)
		printf("link 0x%016" PRIx64 " %u -> 0x%016" PRIx64 " %u %u\n",
		       l[i].guid, l[i].port, l[i].peer_guid, l[i].peer_port,
		       l[i].routes);
	return 0;
}

struct setctx {
	int done;
	struct ibw_mad_done d;
	uint8_t block[IBW_LFT_BLOCK];
};

static void on_mad(const struct ibw_mad_done *d, void *arg)
{
	struct setctx *x = arg;

	x->d = *d;
	if (d->result == IBW_MAD_OK)
		ibw_lft_block_decode(d->mad, d->len, x->block);
	x->done = 1;
}

static int smp(const struct ibw_fnode *n, uint8_t method, uint32_t block,
	       struct setctx *x, const uint8_t *data)
{
	struct ibw_mad_req r;

	memset(&r, 0, sizeof(r));
	r.dest = n->dr;
	r.mgmt_class = IBW_CLASS_SMI_DR;
	r.method = method;
	r.attr_id = IBW_ATTR_LINEAR_FWD;
	r.attr_mod = block;
	r.data = data;
	r.data_len = data ? IBW_LFT_BLOCK : 0;
	r.retries = -1;
	r.cb = on_mad;
	r.arg = x;
	x->done = 0;
	if (ibw_engine_submit(eng, &r) < 0)
		return -EIO;
	while (!x->done)
		ibw_loop_run_once(loop, 100000);
	return x->d.result == IBW_MAD_OK ? 0 : -EIO;
}

/* Change one entry the way an SM would: read the block, Set it back
 * with the entry changed (directed route: the LID route may be the one
 * being broken). */
static int cmd_setlft(uint64_t guid, unsigned lid, unsigned port)
{
	const struct ibw_fnode *n =
		ibw_fabric_find(ibw_census_fabric(cur), guid);
	struct setctx x;
	uint8_t b[IBW_LFT_BLOCK];

	if (!n)
		return -ENOENT;
	if (smp(n, IBW_METHOD_GET, lid / IBW_LFT_BLOCK, &x, NULL) < 0)
		return -EIO;
	memcpy(b, x.block, sizeof(b));
	b[lid % IBW_LFT_BLOCK] = (uint8_t)port;
	if (smp(n, IBW_METHOD_SET, lid / IBW_LFT_BLOCK, &x, b) < 0)
		return -EIO;
	printf("entry %u now %u\n", lid, x.block[lid % IBW_LFT_BLOCK]);
	return x.block[lid % IBW_LFT_BLOCK] == port ? 0 : -EIO;
}

static int cmd_lookups(unsigned n)
{
	uint64_t x = 0x2545f4914f6cdd1dull;
	uint16_t *l, *pairs;
	unsigned nl = ca_lids(&l), i, hops = 0;
	struct ibw_census_route r;
	struct timespec a, b;

	pairs = calloc(2 * (size_t)n + 2, sizeof(*pairs));
	if (!pairs || nl < 2) {
		free(l);
		free(pairs);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		unsigned s = (unsigned)(next_rand(&x) % nl);
		unsigned d = (unsigned)(next_rand(&x) % (nl - 1));

		pairs[2 * i] = l[s];
		pairs[2 * i + 1] = l[d < s ? d : d + 1];
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		ibw_census_lookup(cur, pairs[2 * i], pairs[2 * i + 1], &r);
		hops += r.hops;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("lookups %u mean_hops %.2f lookup_us %.3f\n", n,
	       n ? (double)hops / n : 0.0,
	       n ? ((double)(b.tv_sec - a.tv_sec) * 1e6 +
		    (double)(b.tv_nsec - a.tv_nsec) / 1e3) /
			       n
		 : 0.0);
	free(l);
	free(pairs);
	return 0;
}

static int run(char *line)
{
	char a[512], b[512];
	unsigned n, m, k;
	uint64_t g;

	if (!strcmp(line, "census"))
		return cmd_census();
	if (!cur)
		return -EAGAIN;
	if (sscanf(line, "tables %511s", a) == 1)
		return cmd_tables(a);
	if (sscanf(line, "lids %511s", a) == 1)
		return cmd_lids(a);
	if (sscanf(line, "sample %u %511s", &n, a) == 2)
		return cmd_sample(n, a);
	if (sscanf(line, "paths %511s %511s", a, b) == 2)
		return cmd_paths(a, b);
	if (sscanf(line, "path %u %u", &n, &m) == 2)
		return cmd_path(n, m);
	if (sscanf(line, "broken %u", &n) == 1)
		return cmd_broken(n);
	if (sscanf(line, "load %" SCNx64 " %u", &g, &n) == 2)
		return cmd_load(g, n);
	if (sscanf(line, "uplinks %" SCNx64, &g) == 1)
		return cmd_uplinks(g);
	if (!strcmp(line, "tiers"))
		return cmd_tiers();
	if (!strcmp(line, "top"))
		return cmd_top();
	if (sscanf(line, "setlft %" SCNx64 " %u %u", &g, &n, &k) == 3)
		return cmd_setlft(g, n, k);
	if (sscanf(line, "lookups %u", &n) == 1)
		return cmd_lookups(n);
	return -EINVAL;
}

int main(int argc, char **argv)
{
	struct ibw_local_port lp;
	struct ibw_transport *t;
	struct ibw_lft_opts o = { .retries = -1 };
	char err[256], line[1024];

	(void)argc;
	(void)argv;
	setvbuf(stdout, NULL, _IOLBF, 0);
	loop = ibw_loop_new();
	if (ibw_umad_open(NULL, 0, &t, &lp, err, sizeof(err)) < 0) {
		fprintf(stderr, "routes_fabric: %s\n", err);
		return 1;
	}
	eng = ibw_engine_new(loop, t, NULL);
	reader = ibw_lft_new(eng, &o, on_set, NULL);
	events = ibw_events_new(256);
	while (fgets(line, sizeof(line), stdin)) {
		int rc;

		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, "quit"))
			break;
		rc = run(line);
		if (rc < 0 && rc != -1)
			printf("error %s\n", strerror(-rc));
		printf(".\n");
	}
	ibw_census_unref(cur);
	ibw_census_unref(prev);
	ibw_lft_free(reader);
	ibw_engine_free(eng);
	ibw_events_free(events);
	ibw_transport_close(t);
	ibw_loop_free(loop);
	return 0;
}
