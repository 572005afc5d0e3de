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
#include "json_links.h"
#include "links.h"
#include "prom.h"
#include "snapfixture.h"

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
	struct ibw_snapshot *s = ibw_test_snapshot();
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
	struct ibw_snapshot *s = ibw_test_snapshot();
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

/* promtool check metrics on @text: it must say nothing. */
static void promtool_clean(const char *text, size_t len)
{
	FILE *f = fopen("render-metrics.prom", "w"), *p;
	char out[4096];
	size_t n;
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
}

static void test_promtool_finds_nothing(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_engine_stats st = { 0 };
	size_t len;
	char *text = ibw_prom_render(s, &st, T0, &len);

	promtool_clean(text, len);
	free(text);
	ibw_snapshot_unref(s);
}

static void test_openmetrics(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
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

/* A node whose PMA redirects shows in the status and in the metrics
 * (which promtool still accepts). */
static void test_pma_redirect_rendered(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	char *t;
	size_t len;

	s->pma_redirects = calloc(1, sizeof(*s->pma_redirects));
	assert_non_null(s->pma_redirects);
	s->npma_redirects = 1;
	s->pma_redirects[0].guid = 0x0002c90300000010ull;
	s->pma_redirects[0].lid = 5;
	s->pma_redirects[0].redirect_lid = 9;
	s->pma_redirects[0].redirect_qp = 4660;
	s->pma_redirects[0].redirect_pkey = 0xffff;
	s->pma_redirects[0].followed = 1;
	t = dump(ibw_json_status(s, NULL, T0));
	assert_non_null(strstr(t, "\"redirect_lid\": 9"));
	assert_non_null(strstr(t, "\"guid\": \"0x0002c90300000010\""));
	free(t);
	t = ibw_prom_render(s, NULL, T0, &len);
	assert_non_null(strstr(t, "\nibwatch_pma_redirect_info{guid="
				  "\"0x0002c90300000010\","
				  "lid=\"5\",redirect_lid=\"9\",redirect_qp="
				  "\"4660\","
				  "followed=\"1\"} 1\n"));
	free(t);
	ibw_snapshot_unref(s);
}

static void test_json_documents(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
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

/* One end for a link view: active at @width, 1x and 4x supported. */
static void link_side(struct ibw_link_end_in *in, struct ibw_portinfo *pi,
		      uint64_t guid, uint8_t port, int sw, unsigned width)
{
	memset(in, 0, sizeof(*in));
	memset(pi, 0, sizeof(*pi));
	pi->state = IBW_PORT_ACTIVE;
	pi->phys_state = IBW_PHYS_LINKUP;
	pi->width_active = (uint8_t)width;
	pi->width_enabled = pi->width_supported = 1 | 2;
	pi->speed_active = pi->speed_enabled = pi->speed_supported = 1;
	in->guid = guid;
	in->port = port;
	in->node_type = sw ? IBW_NODE_SWITCH : IBW_NODE_CA;
	in->name = sw ? "sw" : "hca";
	in->pi = pi;
	in->tick = -1;
}

/* The fixture's two cables as a link view, the second trained at 1x:
 * /api/v1/links puts it first, degraded for width, its filters and the
 * lookup from either end find the right one, and status counts it. */
static void test_json_links(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_end_in a, b;
	struct ibw_portinfo pa, pb;
	struct ibw_link_filter f = { -1, -1, 0, 0, NULL };
	struct ibw_engine_stats st = { 0 };
	json_t *j, *k;
	char *text;
	size_t len;

	assert_non_null(l);
	ibw_links_begin(l, T0);
	link_side(&a, &pa, 0x0002c90300000001ull, 1, 1, 2);
	link_side(&b, &pb, 0x0002c90300000010ull, 1, 0, 2);
	assert_int_equal(ibw_links_update(l, &a, &b), 0);
	link_side(&a, &pa, 0x0002c90300000001ull, 2, 1, 1);
	link_side(&b, &pb, 0x0002c90300000011ull, 1, 0, 1);
	assert_int_equal(ibw_links_update(l, &b, &a), 0);
	s->links = ibw_links_view(l, T0);
	assert_non_null(s->links);

	j = ibw_json_links(s, NULL);
	assert_int_equal(json_array_size(json_object_get(j, "links")), 2);
	k = json_array_get(json_object_get(j, "links"), 0);
	assert_string_equal(json_string_value(json_object_get(k, "health")),
			    "degraded");
	assert_int_equal(json_array_size(json_object_get(k, "reasons")), 1);
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(k, "reasons"), 0)),
			    "width");
	assert_string_equal(json_string_value(json_object_get(k, "width_"
								 "active")),
			    "1x");
	assert_string_equal(json_string_value(json_object_get(k, "width_best")),
			    "4x");
	/* end 0 is the lower GUID: the switch, port 2 */
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(k, "ends"), 0), "guid")),
		"0x0002c90300000001");
	assert_int_equal(
		json_integer_value(json_object_get(
			json_array_get(json_object_get(k, "ends"), 0), "port")),
		2);
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(k, "ends"), 1), "guid")),
		"0x0002c90300000011");
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(j, "counts"), "degraded")),
			 1);
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(j, "counts"), "ok")),
			 1);
	json_decref(j);

	/* filters */
	f.reason = IBW_LR_WIDTH;
	j = ibw_json_links(s, &f);
	assert_int_equal(json_array_size(json_object_get(j, "links")), 1);
	json_decref(j);
	f.reason = -1;
	f.health = IBW_HEALTH_OK;
	f.guid = 0x0002c90300000010ull;
	j = ibw_json_links(s, &f);
	assert_int_equal(json_array_size(json_object_get(j, "links")), 1);
	json_decref(j);
	f.guid = 0x0002c90300000011ull;
	j = ibw_json_links(s, &f);
	assert_int_equal(json_array_size(json_object_get(j, "links")), 0);
	json_decref(j);
	f.health = -1;
	f.guid = 0;
	f.type = 1; /* switch to switch: none here */
	j = ibw_json_links(s, &f);
	assert_int_equal(json_array_size(json_object_get(j, "links")), 0);
	json_decref(j);

	/* one link, from either end */
	j = ibw_json_link_at(s, 0x0002c90300000011ull, 1);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "health")),
			    "degraded");
	json_decref(j);
	j = ibw_json_link_at(s, 0x0002c90300000001ull, 2);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "health")),
			    "degraded");
	json_decref(j);
	assert_null(ibw_json_link_at(s, 0x0002c90300000001ull, 3));

	j = ibw_json_status(s, &st, T0);
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(j, "links"), "degraded")),
			 1);
	json_decref(j);

	/* the same in /metrics, promtool-clean */
	text = ibw_prom_render(s, &st, T0, &len);
	assert_non_null(strstr(text, "\nibwatch_link_health{guid="
				     "\"0x0002c90300000001\","
				     "port=\"2\",remote_guid="
				     "\"0x0002c90300000011\","
				     "remote_port=\"1\"} 1\n"));
	assert_non_null(strstr(text, "\nibwatch_link_health{guid="
				     "\"0x0002c90300000001\","
				     "port=\"1\",remote_guid="
				     "\"0x0002c90300000010\","
				     "remote_port=\"1\"} 0\n"));
	assert_non_null(strstr(text, "\nibwatch_link_reason{guid="
				     "\"0x0002c90300000001\","
				     "port=\"2\",remote_guid="
				     "\"0x0002c90300000011\","
				     "remote_port=\"1\",reason=\"width\"} "
				     "1\n"));
	/* only the reasons present; no BER or wait without readings */
	assert_null(strstr(text, "reason=\"speed\""));
	assert_null(strstr(text, "ibwatch_link_ber{"));
	promtool_clean(text, len);
	free(text);
	ibw_links_free(l);
	ibw_snapshot_unref(s); /* drops the view too */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_document),
		cmocka_unit_test(test_metrics_structure),
		cmocka_unit_test(test_promtool_finds_nothing),
		cmocka_unit_test(test_openmetrics),
		cmocka_unit_test(test_json_documents),
		cmocka_unit_test(test_pma_redirect_rendered),
		cmocka_unit_test(test_json_links),
	};

	return cmocka_run_group_tests_name("render", tests, NULL, NULL);
}
