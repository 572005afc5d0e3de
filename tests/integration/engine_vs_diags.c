// SPDX-License-Identifier: BSD-2-Clause
/*
 * The engine against infiniband-diags on the simulated fabric: walk the
 * fabric with directed-route SMPs, then for every node compare NodeInfo
 * read by directed route with `smpquery -D nodeinfo PATH`, NodeInfo read
 * LID-routed with `smpquery nodeinfo LID`, and PortCounters with
 * `perfquery LID PORT` read right after ours. Runs under the simulator's
 * preload (see with-fabric.sh); the reference tools inherit it.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec.h"
#include "engine.h"
#include "simcon.h"
#include "umad.h"
#include "walk.h"

/* Counters move only with MAD traffic: perfquery's own query of this
 * port adds at most a few packets between our read and its read. */
#define MAX_PKT_DRIFT 4
#define DWORDS_PER_MAD 72

static struct ibw_loop *loop;
static struct ibw_transport *tr;
static struct ibw_engine *eng;
static struct ibw_local_port lp;
static struct walk fab;

struct kv {
	char name[64];
	char value[128];
};

struct dump {
	struct kv kv[64];
	int n;
};

/* Parse "Name:......value" lines (libibmad's dump format). */
static void parse_dump(const char *text, struct dump *d)
{
	const char *line = text;

	d->n = 0;
	while (line && *line && d->n < 64) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *colon = memchr(line, ':', len);

		if (line[0] != '#' && colon) {
			struct kv *kv = &d->kv[d->n++];
			const char *v = colon + 1;
			size_t vl;

			snprintf(kv->name, sizeof(kv->name), "%.*s",
				 (int)(colon - line), line);
			while (v < line + len && *v == '.')
				v++;
			vl = (size_t)(line + len - v);
			snprintf(kv->value, sizeof(kv->value), "%.*s", (int)vl,
				 v);
		}
		line = nl ? nl + 1 : NULL;
	}
}

static const char *lookup(const struct dump *d, const char *name)
{
	int i;

	for (i = 0; i < d->n; i++)
		if (strcmp(d->kv[i].name, name) == 0)
			return d->kv[i].value;
	return NULL;
}

static int run_tool(const char *cmd, char *out, size_t outlen)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	if (!p)
		return -errno;
	n = fread(out, 1, outlen - 1, p);
	out[n] = '\0';
	return pclose(p);
}

struct sync_req {
	int done;
	struct ibw_mad_done d;
	uint8_t mad[IBW_MAD_SIZE];
};

static void on_sync(const struct ibw_mad_done *d, void *arg)
{
	struct sync_req *s = arg;

	s->done = 1;
	s->d = *d;
	if (d->mad)
		memcpy(s->mad, d->mad, IBW_MAD_SIZE);
}

/* One request through the engine, waited for. */
static enum ibw_mad_result query(const struct ibw_dest *dest, uint8_t mclass,
				 uint16_t attr, uint32_t mod, const void *data,
				 size_t len, uint8_t mad[IBW_MAD_SIZE])
{
	struct sync_req s = { 0 };
	struct ibw_mad_req r;

	memset(&r, 0, sizeof(r));
	r.dest = *dest;
	r.mgmt_class = mclass;
	r.method = IBW_METHOD_GET;
	r.attr_id = attr;
	r.attr_mod = mod;
	r.data = data;
	r.data_len = len;
	r.retries = 2;
	r.cb = on_sync;
	r.arg = &s;
	assert_int_equal(ibw_engine_submit(eng, &r), 0);
	assert_int_equal(walk_run_until_idle(loop, eng, 5000), 0);
	assert_true(s.done);
	memcpy(mad, s.mad, IBW_MAD_SIZE);
	return s.d.result;
}

static void dr_str(const struct ibw_dest *d, char *buf, size_t len)
{
	char tmp[300];

	ibw_dest_str(d, tmp, sizeof(tmp));
	snprintf(buf, len, "%s", tmp + 3); /* drop "dr " */
}

static int group_setup(void **state)
{
	char err[256];
	struct ibw_engine_config cfg = { .max_inflight = 64,
					 .max_per_dest = 8,
					 .timeout_ms = 200,
					 .retries = 2 };

	loop = ibw_loop_new();
	if (ibw_umad_open(NULL, 0, &tr, &lp, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	eng = ibw_engine_new(loop, tr, &cfg);
	if (!loop || !eng)
		return -1;
	if (walk_fabric(loop, eng, &fab, 30000) < 0 || fab.errors) {
		fprintf(stderr, "walk failed: %u errors\n", fab.errors);
		return -1;
	}
	fprintf(stderr, "walked %u nodes\n", fab.nnodes);
	return 0;
}

static int group_teardown(void **state)
{
	walk_free(&fab);
	ibw_engine_free(eng);
	ibw_transport_close(tr);
	ibw_loop_free(loop);
	return 0;
}

static void test_walk_matches_ibnetdiscover_counts(void **state)
{
	char *out = malloc(1 << 22);
	unsigned sw = 0, ca = 0, i, ref_sw = 0, ref_ca = 0;
	char *line;

	assert_non_null(out);
	assert_int_equal(run_tool("ibnetdiscover -l 2>/dev/null", out, 1 << 22),
			 0);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		ref_sw += strncmp(line, "Switch", 6) == 0;
		ref_ca += strncmp(line, "Ca", 2) == 0;
	}
	for (i = 0; i < fab.nnodes; i++) {
		sw += fab.nodes[i].ni.node_type == IBW_NODE_SWITCH;
		ca += fab.nodes[i].ni.node_type == IBW_NODE_CA;
	}
	free(out);
	assert_true(sw > 0 && ca > 1);
	assert_int_equal(sw, ref_sw);
	assert_int_equal(ca, ref_ca);
}

static void compare_dumps(const char *what, const char *mine, const char *ref)
{
	struct dump a, b;
	int i;

	parse_dump(mine, &a);
	parse_dump(ref, &b);
	assert_true(a.n > 5);
	if (a.n != b.n)
		fail_msg("%s: %d fields, reference has %d", what, a.n, b.n);
	for (i = 0; i < a.n; i++) {
		const char *rv = lookup(&b, a.kv[i].name);

		if (!rv || strcmp(rv, a.kv[i].value))
			fail_msg("%s: %s is %s, reference says %s", what,
				 a.kv[i].name, a.kv[i].value, rv ? rv : "-");
	}
}

static void test_nodeinfo_directed_route(void **state)
{
	uint8_t mad[IBW_MAD_SIZE];
	char mine[4096], ref[4096], cmd[512], path[300];
	unsigned i;

	for (i = 0; i < fab.nnodes; i++) {
		struct walk_node *n = &fab.nodes[i];

		assert_int_equal(query(&n->dr, IBW_CLASS_SMI_DR,
				       IBW_ATTR_NODE_INFO, 0, NULL, 0, mad),
				 IBW_MAD_OK);
		mad_dump_nodeinfo(mine, sizeof(mine), mad + IB_SMP_DATA_OFFS,
				  IB_SMP_DATA_SIZE);
		dr_str(&n->dr, path, sizeof(path));
		snprintf(cmd, sizeof(cmd), "smpquery -D nodeinfo %s", path);
		assert_int_equal(run_tool(cmd, ref, sizeof(ref)), 0);
		compare_dumps(cmd, mine, ref);
	}
}

static void test_nodeinfo_lid_routed(void **state)
{
	uint8_t mad[IBW_MAD_SIZE];
	char mine[4096], ref[4096], cmd[512];
	struct ibw_dest d;
	unsigned i;

	for (i = 0; i < fab.nnodes; i++) {
		struct walk_node *n = &fab.nodes[i];

		assert_true(n->have_pi);
		assert_int_not_equal(n->pi.lid, 0);
		ibw_dest_lid(&d, n->pi.lid);
		assert_int_equal(query(&d, IBW_CLASS_SMI, IBW_ATTR_NODE_INFO, 0,
				       NULL, 0, mad),
				 IBW_MAD_OK);
		mad_dump_nodeinfo(mine, sizeof(mine), mad + IB_SMP_DATA_OFFS,
				  IB_SMP_DATA_SIZE);
		snprintf(cmd, sizeof(cmd), "smpquery nodeinfo %u", n->pi.lid);
		assert_int_equal(run_tool(cmd, ref, sizeof(ref)), 0);
		compare_dumps(cmd, mine, ref);
		/* The same node either way. */
		assert_true(ibw_mad_get64(mad + IB_SMP_DATA_OFFS,
					  IB_NODE_GUID_F) == n->ni.node_guid);
	}
}

static int is_traffic_counter(const char *name)
{
	return !strcmp(name, "PortXmitData") || !strcmp(name, "PortRcvData") ||
	       !strcmp(name, "PortXmitPkts") || !strcmp(name, "PortRcvPkts");
}

static void compare_counters(uint16_t lid, unsigned port)
{
	uint8_t payload[IB_PC_DATA_SZ] = { 0 };
	uint8_t mad[IBW_MAD_SIZE];
	char mine[4096], ref[4096], cmd[128], what[160];
	struct ibw_dest d;
	struct dump a, b;
	int i;

	ibw_dest_lid(&d, lid);
	mad_set_field(payload, 0, IB_PC_PORT_SELECT_F, port);
	assert_int_equal(query(&d, IBW_CLASS_PERF, IBW_ATTR_PORT_COUNTERS, 0,
			       payload, sizeof(payload), mad),
			 IBW_MAD_OK);
	snprintf(cmd, sizeof(cmd), "perfquery %u %u", lid, port);
	assert_int_equal(run_tool(cmd, ref, sizeof(ref)), 0);
	mad_dump_perfcounters(mine, sizeof(mine), mad + IB_PC_DATA_OFFS,
			      IB_PC_DATA_SZ);
	parse_dump(mine, &a);
	parse_dump(ref, &b);
	snprintf(what, sizeof(what), "%s", cmd);
	assert_true(a.n >= 18);
	for (i = 0; i < a.n; i++) {
		const char *rv = lookup(&b, a.kv[i].name);
		unsigned long long mv, r;

		if (!rv)
			fail_msg("%s: no %s in perfquery's output", what,
				 a.kv[i].name);
		if (!is_traffic_counter(a.kv[i].name)) {
			if (strcmp(rv, a.kv[i].value))
				fail_msg("%s: %s is %s, perfquery says %s",
					 what, a.kv[i].name, a.kv[i].value, rv);
			continue;
		}
		mv = strtoull(a.kv[i].value, NULL, 0);
		r = strtoull(rv, NULL, 0);
		/* perfquery read later: equal, or a few MADs more. */
		if (r < mv || r - mv > (strstr(a.kv[i].name, "Data")
						? MAX_PKT_DRIFT * DWORDS_PER_MAD
						: MAX_PKT_DRIFT))
			fail_msg("%s: %s is %llu, perfquery says %llu", what,
				 a.kv[i].name, mv, r);
	}
}

/* perfquery's reading of counter NAME on LID/PORT, as a number; fails
 * the test when perfquery does not print it. */
static unsigned long long perfquery_value(uint16_t lid, unsigned port,
					  const char *name)
{
	char ref[4096], cmd[128];
	const char *v;
	struct dump b;

	snprintf(cmd, sizeof(cmd), "perfquery %u %u", lid, port);
	assert_int_equal(run_tool(cmd, ref, sizeof(ref)), 0);
	parse_dump(ref, &b);
	v = lookup(&b, name);
	if (!v)
		fail_msg("%s: no %s in perfquery's output", cmd, name);
	return strtoull(v, NULL, 0);
}

static void test_port_counters_vs_perfquery(void **state)
{
	char line[256];
	unsigned i, n = 0, injected = 0;
	uint16_t inj_lid[4];
	unsigned inj_port[4];

	/* Non-zero error counters to compare, set on a few CA ports. */
	for (i = 0; i < fab.nnodes && injected < 4; i++) {
		struct walk_node *nd = &fab.nodes[i];
		char desc[IBW_NAME_SIZE];
		uint8_t mad[IBW_MAD_SIZE];

		if (nd->ni.node_type != IBW_NODE_CA || i == 0)
			continue;
		assert_int_equal(query(&nd->dr, IBW_CLASS_SMI_DR,
				       IBW_ATTR_NODE_DESC, 0, NULL, 0, mad),
				 IBW_MAD_OK);
		ibw_nodedesc_decode(mad, sizeof(mad), desc, sizeof(desc));
		/* ibsim takes the node id: the description's first word in
		 * the bundled topologies. */
		strtok(desc, " ");
		snprintf(line, sizeof(line),
			 "PerformanceSet \"%s\"[%u] "
			 "PortCounters.SymbolErrorCounter=%u",
			 desc, nd->ni.local_port, 1000 + injected);
		assert_int_equal(sim_console(line), 0);
		snprintf(line, sizeof(line),
			 "PerformanceSet \"%s\"[%u] "
			 "PortCounters.LinkDownedCounter=255",
			 desc, nd->ni.local_port);
		assert_int_equal(sim_console(line), 0);
		inj_lid[injected] = nd->pi.lid;
		inj_port[injected] = nd->ni.local_port;
		injected++;
	}
	assert_true(injected >= 1);
	/* The reference must hold what was injected: comparing ours with a
	 * perfquery that read zeros (or nothing) would prove nothing. */
	for (i = 0; i < injected; i++) {
		unsigned long long sym, down;

		sym = perfquery_value(inj_lid[i], inj_port[i],
				      "SymbolErrorCounter");
		down = perfquery_value(inj_lid[i], inj_port[i],
				       "LinkDownedCounter");
		if (sym != 1000 + i || down != 255)
			fail_msg("lid %u port %u: perfquery reads "
				 "SymbolErrorCounter %llu, LinkDownedCounter "
				 "%llu; injected %u and 255",
				 inj_lid[i], inj_port[i], sym, down, 1000 + i);
	}
	fprintf(stderr, "perfquery reads the injected values on %u ports\n",
		injected);
	for (i = 0; i < fab.nnodes; i++) {
		struct walk_node *nd = &fab.nodes[i];

		if (nd->ni.node_type == IBW_NODE_SWITCH) {
			/* Port 1 and the last port: host and uplink sides. */
			compare_counters(nd->pi.lid, 1);
			compare_counters(nd->pi.lid, nd->ni.num_ports);
			n += 2;
		} else {
			compare_counters(nd->pi.lid, nd->ni.local_port);
			n++;
		}
	}
	fprintf(stderr, "compared %u ports with perfquery\n", n);
}

static void test_pipelined_sweep_of_every_lid(void **state)
{
	/* Every node at once, many MADs in flight: all must come back. */
	static struct sync_req s[3 * 4096];
	uint8_t payload[IB_PC_DATA_SZ];
	struct ibw_engine_stats st;
	unsigned i, k = 0;

	assert_true(fab.nnodes <= 4096);
	for (i = 0; i < fab.nnodes; i++) {
		struct walk_node *nd = &fab.nodes[i];
		struct ibw_mad_req r;
		int j;

		for (j = 0; j < 3; j++) {
			memset(&r, 0, sizeof(r));
			r.method = IBW_METHOD_GET;
			r.retries = 2;
			r.cb = on_sync;
			r.arg = &s[k++];
			if (j == 0) {
				r.dest = nd->dr;
				r.mgmt_class = IBW_CLASS_SMI_DR;
				r.attr_id = IBW_ATTR_NODE_INFO;
			} else if (j == 1) {
				ibw_dest_lid(&r.dest, nd->pi.lid);
				r.mgmt_class = IBW_CLASS_SMI;
				r.attr_id = IBW_ATTR_NODE_INFO;
			} else {
				ibw_dest_lid(&r.dest, nd->pi.lid);
				r.mgmt_class = IBW_CLASS_PERF;
				r.attr_id = IBW_ATTR_PORT_COUNTERS;
				memset(payload, 0, sizeof(payload));
				mad_set_field(payload, 0, IB_PC_PORT_SELECT_F,
					      nd->ni.node_type == IBW_NODE_CA
						      ? nd->ni.local_port
						      : 1);
				r.data = payload;
				r.data_len = sizeof(payload);
			}
			assert_int_equal(ibw_engine_submit(eng, &r), 0);
		}
	}
	assert_int_equal(walk_run_until_idle(loop, eng, 30000), 0);
	for (i = 0; i < k; i++) {
		assert_true(s[i].done);
		assert_int_equal(s[i].d.result, IBW_MAD_OK);
	}
	for (i = 0; i < fab.nnodes; i++) {
		struct ibw_nodeinfo a, b;

		ibw_nodeinfo_decode(s[3 * i].mad, IBW_MAD_SIZE, &a);
		ibw_nodeinfo_decode(s[3 * i + 1].mad, IBW_MAD_SIZE, &b);
		assert_true(a.node_guid == fab.nodes[i].ni.node_guid);
		assert_true(b.node_guid == fab.nodes[i].ni.node_guid);
	}
	ibw_engine_get_stats(eng, &st);
	assert_true(st.inflight_hwm > 1);
	assert_int_equal(st.unmatched, 0);
	assert_int_equal(st.mismatched, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_matches_ibnetdiscover_counts),
		cmocka_unit_test(test_pipelined_sweep_of_every_lid),
		cmocka_unit_test(test_nodeinfo_directed_route),
		cmocka_unit_test(test_nodeinfo_lid_routed),
		cmocka_unit_test(test_port_counters_vs_perfquery),
	};

	return cmocka_run_group_tests_name("engine_vs_diags", tests,
					   group_setup, group_teardown);
}
