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

#include "codec.h"
#include "fabric.h"
#include "json.h"
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
	assert_non_null(strstr(text, "switch=\"leaf \\\"A\\\" \\\\ 1\""));
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
	struct ibw_snapshot *s = ibw_test_snapshot();
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

/* The label names of sample @line (name{a="x",b="y"} v), sorted and
 * joined with commas, into @out. */
static void label_names(const char *line, char *out, size_t cap)
{
	char names[16][64], tmp[64];
	unsigned n = 0, i, j;
	const char *q = strchr(line, '{');

	out[0] = '\0';
	while (q && (*q == '{' || *q == ',')) {
		size_t k = 0;

		q++;
		if (*q == '}')
			break;
		while (*q && *q != '=' && k < sizeof(tmp) - 1)
			tmp[k++] = *q++;
		tmp[k] = '\0';
		assert_true(n < 16);
		snprintf(names[n++], sizeof(names[0]), "%s", tmp);
		assert_int_equal(q[0], '=');
		assert_int_equal(q[1], '"');
		for (q += 2; *q && *q != '"'; q++)
			if (*q == '\\')
				q++;
		assert_int_equal(*q, '"');
		q++;
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (strcmp(names[j], names[i]) < 0) {
				snprintf(tmp, sizeof(tmp), "%s", names[i]);
				snprintf(names[i], sizeof(names[0]), "%s",
					 names[j]);
				snprintf(names[j], sizeof(names[0]), "%s", tmp);
			}
	for (i = 0; i < n; i++) {
		strncat(out, i ? "," : "", cap - strlen(out) - 1);
		strncat(out, names[i], cap - strlen(out) - 1);
	}
}

/*
 * Every series of infiniband_exporter's switch and HCA collectors (the
 * facts list) is in our output, each sample of it with exactly its label
 * names; and a 4x EDR link's rates are the exporter's figures.
 */
static void test_exporter_series(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_fnode *n;
	char path[512], fact[256], *text, *facts, *fl, *fsave = NULL;
	unsigned nfacts = 0;
	size_t len;

	/* One HCA at 4x EDR: extended speeds as its capability mask says. */
	n = (struct ibw_fnode *)ibw_fabric_find(s->fabric,
						0x0002c90300000010ull);
	assert_non_null(n);
	n->ports[1].pi.capmask |= IBW_CAP_EXT_SPEEDS;
	n->ports[1].pi.speed_ext_active = 2;
	assert_int_equal(ibw_snapshot_seal(s), 0);
	text = ibw_prom_render(s, NULL, T0, &len);
	assert_non_null(strstr(text, "\ninfiniband_hca_rate_bytes_per_second{"
				     "guid=\"0x0002c90300000010\"} "
				     "12500000000\n"));
	assert_non_null(strstr(text, "\ninfiniband_hca_raw_rate_bytes_per_"
				     "second{guid=\"0x0002c90300000010\"} "
				     "12890625000\n"));

	snprintf(path, sizeof(path), "%s/infiniband_exporter_series.txt",
		 FIXTURES);
	facts = slurp(path);
	assert_non_null(facts);
	for (fl = strtok_r(facts, "\n", &fsave); fl;
	     fl = strtok_r(NULL, "\n", &fsave)) {
		char name[128], want[256], got[256], *copy, *line, *save = NULL;
		unsigned found = 0;

		if (fl[0] == '#' || !fl[0])
			continue;
		assert_int_equal(sscanf(fl, "%127s %255s", name, want), 2);
		nfacts++;
		copy = strdup(text);
		for (line = strtok_r(copy, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			size_t k = strlen(name);

			if (strncmp(line, name, k) ||
			    (line[k] != '{' && line[k] != ' '))
				continue;
			label_names(line, got, sizeof(got));
			if (strcmp(got, want))
				fail_msg("%s has labels %s, the exporter %s",
					 name, got, want);
			found++;
		}
		free(copy);
		snprintf(fact, sizeof(fact), "%s", name);
		if (!found)
			fail_msg("no %s in /metrics", fact);
	}
	assert_true(nfacts >= 70);
	free(facts);
	free(text);
	ibw_snapshot_unref(s);
}

int main(void)
{
	/* Fixed, so the fixtures do not change with every commit. */
	ibw_prom_set_build_info("0.1.0", "fixture");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_document),
		cmocka_unit_test(test_metrics_structure),
		cmocka_unit_test(test_promtool_finds_nothing),
		cmocka_unit_test(test_openmetrics),
		cmocka_unit_test(test_json_documents),
		cmocka_unit_test(test_pma_redirect_rendered),
		cmocka_unit_test(test_exporter_series),
	};

	return cmocka_run_group_tests_name("render", tests, NULL, NULL);
}
