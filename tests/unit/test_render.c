/*
 * Renderers on a fixture snapshot (a switch and two hosts): the
 * Prometheus text and the JSON documents equal the reviewed documents in
 * tests/fixtures/, each metric family is contiguous with one HELP and
 * one TYPE, label values are escaped, and promtool finds nothing wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"
#include "prom.h"

#define T0 1795306300000000ull /* 2026-11-22T00:11:40Z */

static struct ibw_snapshot *fixture(void)
{
	struct ibw_snapshot *s = calloc(1, sizeof(*s));
	struct ibw_fabric *f = ibw_fabric_new();
	struct ibw_fnode *n;
	unsigned i, p;

	n = ibw_fabric_add_node(f, 0x0002c90300000001ull, 4);
	n->ni.node_type = IBW_NODE_SWITCH;
	n->ni.num_ports = 3;
	n->ni.vendor_id = 0x2c9;
	n->lid = 1;
	snprintf(n->desc, sizeof(n->desc), "leaf \"A\" \\ 1");
	ibw_dest_dr_parse(&n->dr, "0,1");
	for (p = 0; p < 4; p++) {
		n->ports[p].have_pi = 1;
		n->ports[p].guid = n->guid;
		n->ports[p].pi.lid = 1;
		n->ports[p].pi.state = p == 3 ? 1 : 4;
		n->ports[p].pi.phys_state = p == 3 ? 2 : 5;
		n->ports[p].pi.width_active = 2;
		n->ports[p].pi.speed_active = 4;
	}
	for (i = 0; i < 2; i++) {
		n = &f->nodes[0];
		n->ports[i + 1].remote_guid = 0x0002c90300000010ull + i;
		n->ports[i + 1].remote_port = 1;
		n = ibw_fabric_add_node(f, 0x0002c90300000010ull + i, 2);
		n->ni.node_type = IBW_NODE_CA;
		n->ni.num_ports = 1;
		n->lid = (uint16_t)(2 + i);
		snprintf(n->desc, sizeof(n->desc), "node%04u HCA-1", i + 1);
		ibw_dest_dr_parse(&n->dr, i ? "0,1,2" : "0");
		n->ports[1].have_pi = 1;
		n->ports[1].guid = 0x0002c90300000020ull + i;
		n->ports[1].pi.lid = (uint16_t)(2 + i);
		n->ports[1].pi.state = 4;
		n->ports[1].pi.phys_state = 5;
		n->ports[1].pi.width_active = 2;
		n->ports[1].pi.speed_active = 4;
		n->ports[1].remote_guid = 0x0002c90300000001ull;
		n->ports[1].remote_port = (uint8_t)(i + 1);
	}
	ibw_fabric_freeze(f);
	f->local_guid = 0x0002c90300000010ull;
	s->refs = 1;
	s->fabric = f;
	s->taken_us = T0;
	s->started_us = T0 - 60000000ull;
	s->fresh_until_us = T0 + 90000000ull;
	s->local_state = 4;
	s->discoveries = 2;
	s->counter_sweeps = 3;
	s->discovery.start_us = T0 - 1000;
	s->discovery.duration_us = 812;
	s->discovery.mads = 17;
	s->counters.start_us = T0 - 500;
	s->counters.duration_us = 430;
	s->counters.mads = 12;
	s->counters.timeouts = 1;
	s->unreachable_ports = 1;
	/* counters: switch ports 1-3 and the hosts' ports, sorted */
	s->nports = 5;
	s->ports = calloc(5, sizeof(*s->ports));
	for (i = 0; i < 5; i++) {
		struct ibw_port_ctrs *pc = &s->ports[i];
		int c;

		pc->guid = i < 3 ? 0x0002c90300000001ull
				 : 0x0002c90300000010ull + (i - 3);
		pc->port = (uint8_t)(i < 3 ? i + 1 : 1);
		pc->is_switch = i < 3;
		pc->have_ext = 1;
		pc->updated_us = T0 - 200;
		for (c = 0; c < IBW_CTR_MAX; c++) {
			pc->v[c].have_raw = 1;
			pc->v[c].total = (uint64_t)(i * 100 + c);
			pc->v[c].raw = pc->v[c].total;
		}
	}
	s->ports[1].v[IBW_CTR_SYMBOL_ERRORS].total = 1000;
	s->ports[1].v[IBW_CTR_SYMBOL_ERRORS].raw = 1000;
	s->ports[1].v[IBW_CTR_SYMBOL_ERRORS].over_threshold = 1;
	s->ports[1].error_increments = 7;
	s->ports[2].stale = 1;
	s->ports[2].unreachable = 2;
	/* a 64-bit total past INT64_MAX, exactly */
	s->ports[4].v[IBW_CTR_XMIT_PKTS].total = 18446744073709551606ull;
	s->ports[4].v[IBW_CTR_XMIT_PKTS].raw = 18446744073709551606ull;
	s->nendports = 2;
	s->endports = calloc(2, sizeof(*s->endports));
	for (i = 0; i < 2; i++) {
		struct ibw_endport *e = &s->endports[i];

		e->port_guid = 0x0002c90300000020ull + i;
		e->node_guid = 0x0002c90300000010ull + i;
		e->port = 1;
		e->lid = (uint16_t)(2 + i);
		e->found = 1;
		snprintf(e->name, sizeof(e->name), "node%04u HCA-1", i + 1);
		e->state = i ? IBW_EP_DOWN : IBW_EP_UP;
		e->state_since_us = T0 - 5000000;
		e->sent = 10;
		e->received = i ? 4 : 10;
		e->window_n = 10;
		e->window_lost = i ? 6 : 0;
		e->rtt_last_us = e->rtt_min_us = e->rtt_max_us = 25;
		e->rtt_avg_us = 25.0;
		e->last_method = IBW_PING_PMA;
		e->last_reply_us = T0 - 1000000;
	}
	return s;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

/* Compare @got with the fixture @name; write @got beside the build so a
 * changed document can be reviewed and copied in. */
static void golden(const char *name, const char *got)
{
	char path[512], out[512];
	char *want;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
	snprintf(out, sizeof(out), "%s.actual", name);
	f = fopen(out, "w");
	if (f) {
		fputs(got, f);
		fclose(f);
	}
	want = slurp(path);
	if (!want)
		fail_msg("no fixture %s (this run wrote %s)", path, out);
	if (strcmp(want, got))
		fail_msg("%s differs from %s: diff %s %s", out, path, path,
			 out);
	free(want);
}

static char *dump(json_t *j)
{
	char *s = ibw_json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	size_t n = strlen(s);
	char *t = malloc(n + 2);

	memcpy(t, s, n);
	t[n] = '\n';
	t[n + 1] = '\0';
	free(s);
	json_decref(j);
	return t;
}

static void test_metrics_document(void **state)
{
	struct ibw_snapshot *s = fixture();
	struct ibw_engine_stats st = { 0 };
	size_t len;
	char *text;

	st.sent = 5000;
	st.received = 4990;
	st.try_timeouts = 10;
	st.retries = 8;
	text = ibw_prom_render(s, &st, T0 + 2000000, &len);
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	golden("metrics.prom", text);
	free(text);
	ibw_snapshot_unref(s);
}

static void test_metrics_structure(void **state)
{
	struct ibw_snapshot *s = fixture();
	char *text, *line, *save = NULL, seen[200][128], cur[128] = "";
	unsigned nseen = 0, i, helps = 0, types = 0;
	size_t len;

	text = ibw_prom_render(s, NULL, T0, &len);
	/* the escaped name: quote and backslash */
	assert_non_null(strstr(text, "name=\"leaf \\\"A\\\" \\\\ 1\""));
	/* exact 64-bit values */
	assert_non_null(strstr(text, "} 18446744073709551606\n"));
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[128];

		if (!strncmp(line, "# HELP ", 7)) {
			sscanf(line + 7, "%127s", name);
			helps++;
		} else if (!strncmp(line, "# TYPE ", 7)) {
			sscanf(line + 7, "%127s", name);
			types++;
		} else {
			sscanf(line, "%127[^{ ]", name);
		}
		if (strcmp(name, cur)) {
			/* a new family: never one seen before */
			for (i = 0; i < nseen; i++)
				if (!strcmp(seen[i], name))
					fail_msg("family %s is split", name);
			assert_true(nseen < 200);
			snprintf(seen[nseen++], 128, "%s", name);
			snprintf(cur, sizeof(cur), "%s", name);
		}
	}
	assert_int_equal(helps, nseen);
	assert_int_equal(types, nseen);
	free(text);
	ibw_snapshot_unref(s);
}

static void test_promtool_finds_nothing(void **state)
{
	struct ibw_snapshot *s = fixture();
	struct ibw_engine_stats st = { 0 };
	char out[4096];
	size_t len, n;
	char *text = ibw_prom_render(s, &st, T0, &len);
	FILE *f = fopen("render-metrics.prom", "w"), *p;
	int rc;

	assert_non_null(f);
	fwrite(text, 1, len, f);
	fclose(f);
	p = popen("promtool check metrics < render-metrics.prom 2>&1", "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	rc = pclose(p);
	if (rc != 0 || n)
		fail_msg("promtool (exit %d) says:\n%s", rc, out);
	free(text);
	ibw_snapshot_unref(s);
}

static void test_openmetrics(void **state)
{
	struct ibw_snapshot *s = fixture();
	size_t len;
	char *text = ibw_openmetrics_render(s, NULL, T0, &len);

	assert_non_null(text);
	assert_true(len > 6 && !strcmp(text + len - 6, "# EOF\n"));
	assert_non_null(strstr(text, "# TYPE infiniband_hca_port_symbol_error "
				     "counter\n"));
	assert_null(strstr(text, "# TYPE "
				 "infiniband_hca_port_symbol_error_total"));
	assert_non_null(strstr(text, "\ninfiniband_hca_port_symbol_error_"
				     "total{"));
	free(text);
	ibw_snapshot_unref(s);
}

static void test_json_documents(void **state)
{
	struct ibw_snapshot *s = fixture();
	struct ibw_port_filter all = { 0, 0, -1, 0 }, errs = { 0, 0, -1, 1 };
	struct ibw_engine_stats st = { 0 };
	char *t;

	t = dump(ibw_json_ports(s, &all));
	golden("ports.json", t);
	free(t);
	t = dump(ibw_json_ports(s, &errs));
	assert_non_null(strstr(t, "\"port\": 2"));
	assert_null(strstr(t, "\"port\": 3"));
	free(t);
	t = dump(ibw_json_status(s, &st, T0 + 2000000));
	golden("status.json", t);
	free(t);
	t = dump(ibw_json_endports(s));
	golden("endports.json", t);
	free(t);
	ibw_snapshot_unref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_document),
		cmocka_unit_test(test_metrics_structure),
		cmocka_unit_test(test_promtool_finds_nothing),
		cmocka_unit_test(test_openmetrics),
		cmocka_unit_test(test_json_documents),
	};

	return cmocka_run_group_tests_name("render", tests, NULL, NULL);
}
