// SPDX-License-Identifier: BSD-2-Clause
/*
 * Renderers on a fixture snapshot (a switch and two hosts): the
 * Prometheus text and the JSON documents equal the reviewed documents in
 * tests/fixtures/, each metric family is contiguous with one HELP and
 * one TYPE, label values are escaped, and promtool finds nothing wrong.
 * The JSON writer against jansson is in test_render_writer.c,
 * infiniband_exporter's series in test_render_exporter.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cache.h"
#include "codec.h"
#include "cong.h"
#include "fabric.h"
#include "json.h"
#include "json_events.h"
#include "json_links.h"
#include "links.h"
#include "prom.h"
#include "render_fx.h"
#include "snapfixture.h"
#include "stream.h"

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
	text = ibw_prom_render(s, &st, T0 + 2000000, NULL, &len);
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	golden("metrics.prom", text);
	free(text);
	ibw_snapshot_unref(s);
}

/* The AgentX subagent's series: only with its status, in both formats
 * (OpenMetrics names the counter families without _total). */
static void test_agentx_series(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_agentx_status ax = { 0 };
	struct ibw_prom_opts om = { .om = 1 };
	size_t len;
	char *text;

	text = ibw_prom_render_live(s, NULL, NULL, T0, NULL, &len);
	assert_null(strstr(text, "ibwatch_agentx_"));
	free(text);
	ax.state = IBW_AGENTX_CONNECTED;
	ax.attempts_total = 7;
	ax.reconnects = 2;
	text = ibw_prom_render_live(s, NULL, &ax, T0, NULL, &len);
	assert_non_null(strstr(text, "\nibwatch_agentx_connected 1\n"));
	assert_non_null(
		strstr(text, "\nibwatch_agentx_connect_attempts_total 7\n"));
	assert_non_null(strstr(text, "\nibwatch_agentx_reconnects_total 2\n"));
	free(text);
	ax.state = IBW_AGENTX_WAITING;
	text = ibw_prom_render_live(s, NULL, &ax, T0, &om, &len);
	assert_non_null(strstr(text, "\nibwatch_agentx_connected 0\n"));
	assert_non_null(
		strstr(text, "# TYPE ibwatch_agentx_reconnects counter\n"));
	assert_non_null(strstr(text, "\nibwatch_agentx_reconnects_total 2\n"));
	free(text);
	assert_string_equal(ibw_agentx_state_str(IBW_AGENTX_WAITING),
			    "waiting");
	assert_string_equal(ibw_agentx_state_str(IBW_AGENTX_DISABLED),
			    "disabled");
	ibw_snapshot_unref(s);
}

static void test_metrics_structure(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	char *text, *line, *save = NULL, seen[200][128], cur[128] = "";
	unsigned nseen = 0, i, helps = 0, types = 0;
	size_t len;

	text = ibw_prom_render(s, NULL, T0, NULL, &len);
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

/* The engine's requests by kind on /metrics: one row a kind in each of
 * the three families, named by the IBA's names, and promtool content. */
static void test_request_kinds(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_engine_stats st = { 0 };
	uint8_t mad[24] = { 1, 0x04, 1, 0x01 };
	size_t len;
	char *text;
	unsigned i;

	(void)state;
	mad[17] = 0x1f;
	for (i = 0; i < 5; i++)
		ibw_mad_kinds_count(&st.kinds, mad, i < 3, 0);
	/* more kinds than the table keeps: the rest share "other" */
	for (i = 0; i < 40; i++) {
		mad[16] = (uint8_t)(0x80 + i);
		ibw_mad_kinds_count(&st.kinds, mad, 0, 1);
	}
	text = ibw_prom_render_live(s, &st, NULL, T0, NULL, &len);
	assert_non_null(strstr(
		text,
		"\nibwatch_mad_request_timeouts_total{class=\"PerfMgt\","
		"method=\"Get\",attribute=\"PortExtendedSpeedsCounters\"} "
		"3\n"));
	assert_non_null(strstr(
		text,
		"\nibwatch_mad_requests_total{class=\"PerfMgt\","
		"method=\"Get\",attribute=\"PortExtendedSpeedsCounters\"} "
		"5\n"));
	/* 30 named kinds beside the first, 10 in "other" */
	assert_non_null(strstr(
		text, "\nibwatch_mad_request_errors_total{class=\"other\","
		      "method=\"other\",attribute=\"other\"} 10\n"));
	promtool_clean(text, len);
	free(text);
	ibw_snapshot_unref(s);
}

static void test_promtool_finds_nothing(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_engine_stats st = { 0 };
	size_t len;
	char *text = ibw_prom_render(s, &st, T0, NULL, &len);

	promtool_clean(text, len);
	free(text);
	ibw_snapshot_unref(s);
}

static void test_openmetrics(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_prom_opts om = { .om = 1 };
	size_t len;
	char *text = ibw_prom_render(s, NULL, T0, &om, &len);

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
	t = ibw_prom_render(s, NULL, T0, NULL, &len);
	assert_non_null(strstr(t, "\nibwatch_pma_redirect_info{guid="
				  "\"0x0002c90300000010\","
				  "lid=\"5\",redirect_lid=\"9\",redirect_qp="
				  "\"4660\","
				  "followed=\"1\"} 1\n"));
	free(t);
	/* one that cannot be followed says why */
	s->pma_redirects[0].followed = 0;
	s->pma_redirects[0].refusal = IBW_REDIRECT_QKEY;
	s->pma_redirects[0].redirect_qkey = 0x5678;
	t = dump(ibw_json_status(s, NULL, T0));
	assert_non_null(strstr(t, "\"refused\": \"q_key\""));
	assert_non_null(strstr(t, "\"redirect_qkey\": 22136"));
	assert_non_null(strstr(t, "\"redirect_gid\": null"));
	free(t);
	t = ibw_prom_render(s, NULL, T0, NULL, &len);
	assert_non_null(strstr(t, "followed=\"0\",refused=\"q_key\"} 1\n"));
	free(t);
	ibw_snapshot_unref(s);
}

static void test_json_documents(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_port_filter all = { 0, 0, -1, 0 }, errs = { 0, 0, -1, 1 };
	struct ibw_engine_stats st = { 0 };
	struct ibw_jw w;
	uint8_t mad[24] = { 1, 0x04, 1, 0x01 };
	char *t;

	/* requests by kind: PerfMgt Get PortCounters twice, one timed out;
	 * an SMP Get of an attribute without a name, answered in error */
	mad[17] = 0x12;
	ibw_mad_kinds_count(&st.kinds, mad, 0, 0);
	ibw_mad_kinds_count(&st.kinds, mad, 1, 0);
	mad[1] = 0x81;
	mad[16] = 0xbe;
	mad[17] = 0xef;
	ibw_mad_kinds_count(&st.kinds, mad, 0, 1);
	ibw_jw_init(&w);
	ibw_json_write_ports(&w, s, &all);
	t = written(&w);
	golden("ports.json", t);
	same_as_tree(t);
	free(t);
	ibw_jw_init(&w);
	ibw_json_write_ports(&w, s, &errs);
	t = written(&w);
	assert_non_null(strstr(t, "\"port\": 2"));
	assert_null(strstr(t, "\"port\": 3"));
	free(t);
	t = dump(ibw_json_status(s, &st, T0 + 2000000));
	golden("status.json", t);
	free(t);
	ibw_jw_init(&w);
	ibw_json_write_endports(&w, s);
	t = written(&w);
	golden("endports.json", t);
	same_as_tree(t);
	free(t);
	ibw_jw_init(&w);
	ibw_json_write_nodes(&w, s);
	t = written(&w);
	assert_non_null(strstr(t, "\"ports\": ["));
	same_as_tree(t);
	free(t);
	ibw_snapshot_unref(s);
}

/* A stream writes the same bytes as a buffer, through its small buffer
 * many times over (a document of many copies of the fixture's ports). */
static void test_stream_same_bytes(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_port_filter all = { 0, 0, -1, 0 };
	struct ibw_jw w;
	size_t n, sn;
	char *t, *m;
	FILE *f;
	int i;

	ibw_jw_init(&w);
	ibw_jw_array(&w);
	for (i = 0; i < 200; i++)
		ibw_json_write_ports(&w, s, &all);
	ibw_jw_end(&w);
	t = ibw_jw_finish(&w, &n);
	assert_non_null(t);
	assert_true(n > 4 * 65536);
	f = open_memstream(&m, &sn);
	assert_non_null(f);
	ibw_jw_init_stream(&w, f);
	ibw_jw_array(&w);
	for (i = 0; i < 200; i++)
		ibw_json_write_ports(&w, s, &all);
	ibw_jw_end(&w);
	assert_int_equal(ibw_jw_close(&w), 0);
	fclose(f);
	assert_int_equal(sn, n);
	assert_memory_equal(m, t, n);
	free(m);
	free(t);
	/* an unfinished document is an error, not silence */
	f = open_memstream(&m, &sn);
	assert_non_null(f);
	ibw_jw_init_stream(&w, f);
	ibw_jw_array(&w);
	assert_int_equal(ibw_jw_close(&w), -EINVAL);
	fclose(f);
	free(m);
	ibw_snapshot_unref(s);
}

/* @part's document of @s, a part of at least @budget bytes at a time,
 * each taken out in pieces of @take bytes as a response would be. */
static char *by_parts(ibw_stream_part_fn part, const struct ibw_snapshot *s,
		      const void *f, size_t budget, size_t take, size_t *len)
{
	struct ibw_jw w;
	size_t pos = 0, n = 0, cap = 1 << 20, k;
	char *t = malloc(cap);
	int rc = 0, parts = 0;

	assert_non_null(t);
	ibw_jw_init(&w);
	while (rc != 1) {
		rc = part(&w, s, f, &pos, budget);
		assert_true(rc == 0 || rc == 1);
		parts++;
		do {
			assert_true(n + take <= cap);
			k = ibw_jw_take(&w, t + n, take);
			n += k;
		} while (k);
		assert_int_equal(w.len, 0);
	}
	/* done stays done: nothing more is written */
	assert_int_equal(part(&w, s, f, &pos, budget), 1);
	assert_int_equal(w.len, 0);
	ibw_jw_release(&w);
	/* a budget of a byte: the opening is a part of its own */
	if (budget == 1)
		assert_true(parts >= 2);
	*len = n;
	return t;
}

static int part_ports(struct ibw_jw *w, const struct ibw_snapshot *s,
		      const void *f, size_t *pos, size_t budget)
{
	return ibw_json_write_ports_part(w, s, f, pos, budget);
}

static int part_nodes(struct ibw_jw *w, const struct ibw_snapshot *s,
		      const void *f, size_t *pos, size_t budget)
{
	return ibw_json_write_nodes_part(w, s, pos, budget);
}

static int part_links(struct ibw_jw *w, const struct ibw_snapshot *s,
		      const void *f, size_t *pos, size_t budget)
{
	return ibw_json_write_links_part(w, s, f, pos, budget);
}

static int part_endports(struct ibw_jw *w, const struct ibw_snapshot *s,
			 const void *f, size_t *pos, size_t budget)
{
	return ibw_json_write_endports_part(w, s, pos, budget);
}

/* Written a part at a time, and taken out in pieces, the documents are
 * byte for byte the whole-document writers' (ports: the fixture). */
static void test_parts_same_bytes(void **state)
{
	static const size_t budgets[] = { 1, 100, 1000, 100000 };
	static const size_t takes[] = { 1, 7, 4096 };
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_port_filter all = { 0, 0, -1, 0 }, errs = { 0, 0, -1, 1 };
	struct {
		ibw_stream_part_fn part;
		const struct ibw_port_filter *f;
	} docs[] = {
		{ part_ports, &all },
		{ part_ports, &errs },
		{ part_nodes, NULL },
		{ part_endports, NULL },
	};
	size_t d, b, k, n, wn;
	struct ibw_jw w;
	char *t, *want;

	for (d = 0; d < sizeof(docs) / sizeof(docs[0]); d++) {
		ibw_jw_init(&w);
		if (docs[d].part == part_ports)
			ibw_json_write_ports(&w, s, docs[d].f);
		else if (docs[d].part == part_nodes)
			ibw_json_write_nodes(&w, s);
		else
			ibw_json_write_endports(&w, s);
		want = ibw_jw_finish(&w, &wn);
		assert_non_null(want);
		for (b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++) {
			for (k = 0; k < sizeof(takes) / sizeof(takes[0]); k++) {
				t = by_parts(docs[d].part, s, docs[d].f,
					     budgets[b], takes[k], &n);
				assert_int_equal(n, wn);
				assert_memory_equal(t, want, n);
				free(t);
			}
		}
		if (d == 0) {
			/* ... and the port list is the fixture's */
			t = realloc(want, wn + 2);
			assert_non_null(t);
			t[wn] = '\n';
			t[wn + 1] = '\0';
			golden("ports.json", t);
			want = t;
		}
		free(want);
	}
	ibw_snapshot_unref(s);
}

/* /metrics rendered in pieces into a body, gzipped as it comes: kept
 * as text when small enough, else read back by inflating, the same
 * bytes as one rendering, then the tail. */
static void test_metrics_body_in_pieces(void **state)
{
	static const size_t keeps[] = { 0, SIZE_MAX };
	static const size_t takes[] = { 7, 65536 };
	struct ibw_snapshot *s = ibw_test_snapshot();
	size_t wn, k, t, n;
	char *want = ibw_prom_render_snapshot(s, NULL, &wn);
	char *got;

	assert_non_null(want);
	assert_true(wn > 1000);
	for (k = 0; k < 2; k++) {
		for (t = 0; t < 2; t++) {
			struct ibw_body *b = ibw_body_start(7, keeps[k]);
			struct ibw_share *sh;
			long r;

			assert_non_null(b);
			assert_int_equal(
				ibw_prom_render_snapshot_to(s, NULL, 100,
							    ibw_body_append, b),
				0);
			assert_int_equal(ibw_body_end(b), 0);
			assert_int_equal(b->len, wn);
			if (keeps[k]) {
				assert_non_null(b->text);
				assert_memory_equal(b->text, want, wn);
			} else {
				assert_null(b->text);
			}
			sh = ibw_share_new(b);
			ibw_body_unref(b);
			assert_non_null(sh);
			sh->tail = strdup("live 1\n");
			sh->tail_len = 7;
			got = malloc(wn + 8);
			assert_non_null(got);
			n = 0;
			while ((r = ibw_share_read_text(sh, got + n,
							takes[t] < wn + 8 - n
								? takes[t]
								: wn + 8 - n)) >
			       0)
				n += (size_t)r;
			assert_int_equal(r, 0);
			assert_int_equal(n, wn + 7);
			assert_memory_equal(got, want, wn);
			assert_memory_equal(got + wn, "live 1\n", 7);
			free(got);
			ibw_share_free(sh);
		}
	}
	free(want);
	ibw_snapshot_unref(s);
}

/* The events document, empty and not, nested one level as in --once. */
static void test_events_written(void **state)
{
	struct ibw_event ev[2];
	struct ibw_jw w;
	unsigned n;
	char *t;

	memset(ev, 0, sizeof(ev));
	ev[0].seq = 7;
	ev[0].time_us = T0;
	ev[0].kind = IBW_EVT_PORT_STATE_CHANGED;
	ev[0].node_guid = 0x1234;
	ev[0].port = 3;
	ev[0].old_value = IBW_PORT_ACTIVE;
	ev[0].new_value = IBW_PORT_DOWN;
	ev[1] = ev[0];
	ev[1].seq = 8;
	ev[1].kind = IBW_EVT_PATH_CHANGED;
	snprintf(ev[1].what, sizeof(ev[1].what), "line\nbreak \"quoted\"");
	for (n = 0; n <= 2; n++) {
		ibw_jw_init(&w);
		ibw_jw_object(&w);
		ibw_jw_key(&w, "a");
		ibw_jw_array(&w);
		ibw_jw_end(&w);
		ibw_jw_key(&w, "events");
		ibw_json_write_events_doc(&w, 8, ev, n);
		ibw_jw_key(&w, "z");
		ibw_jw_value(&w, json_pack("{s:[], s:{}, s:[i, {s:s}]}", "e",
					   "o", "x", 1, "k", "v\tw"));
		ibw_jw_end(&w);
		t = written(&w);
		assert_non_null(strstr(t, "\"last_seq\": 8"));
		same_as_tree(t);
		free(t);
	}
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
	struct ibw_link_filter f = { -1, -1, 0, 0, NULL, 0 };
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
	text = ibw_prom_render(s, &st, T0, NULL, &len);
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

/*
 * The fixture snapshot with what the plain one lacks, so the documents
 * that grow with the fabric are held byte for byte over every kind of
 * value: VL waits, saturated and over-threshold counters, u64 values
 * past 2^53 and 2^63, reals of every form, a gone node and a gone port,
 * a port without a peer, quotes, backslashes, control and non-ASCII
 * characters, and a description that is not UTF-8 (jansson refuses the
 * string, so its member is left out).
 */
static struct ibw_snapshot *rich_snapshot(void)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_fnode *n;
	struct ibw_port_ctrs *pc;
	struct ibw_endport *e;
	int i;

	assert_non_null(s);
	n = (struct ibw_fnode *)ibw_fabric_find(s->fabric,
						0x0002c90300000001ull);
	n->ports[3].gone = 1;
	n->ports[3].remote_guid = 0;
	n = (struct ibw_fnode *)ibw_fabric_find(s->fabric,
						0x0002c90300000010ull);
	snprintf(n->desc, sizeof(n->desc),
		 "n\xc5\x93ud\t\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80 \x01/x");
	n->ports[1].pi.capmask = 0x2651084a;
	n = (struct ibw_fnode *)ibw_fabric_find(s->fabric,
						0x0002c90300000011ull);
	snprintf(n->desc, sizeof(n->desc), "bad \xff\xfe utf-8");
	n->gone = 1;
	n->gone_since_us = T0 - 7000000;
	n->is_protected = 1;
	n->protected_since_us = T0 - 6000000;

	pc = &s->ports[0];
	pc->have_vl = 1;
	for (i = 0; i < 16; i++) {
		pc->vl_raw[i] = (uint16_t)(i * 4099);
		pc->vl_xmit_wait[i] = (uint64_t)i * 1000003u;
	}
	pc->vl_xmit_wait[3] = 9007199254740993ull; /* 2^53 + 1 */
	pc->vl_xmit_wait[15] = 9223372036854775813ull; /* 2^63 + 5 */
	pc->v[IBW_CTR_XMIT_DATA].saturated = 1;
	pc->v[IBW_CTR_RCV_PKTS].saturated = 1;
	pc->v[IBW_CTR_LINK_DOWNED].over_threshold = 1;
	pc->v[IBW_CTR_RCV_DATA].total = 9007199254740993ull;
	pc->v[IBW_CTR_RCV_DATA].raw = 9223372036854775808ull;
	pc->xmit_bytes_per_s = 12.5e9;
	pc->rcv_bytes_per_s = 0.1;
	pc->xmit_pkts_per_s = 1e-7;
	pc->rcv_pkts_per_s = 0;
	pc->resets = 3;
	pc->discontinuity_us = T0 - 123456;
	pc->error_increments = 18446744073709551615ull;
	pc = &s->ports[1];
	pc->xmit_bytes_per_s = 123456789012345.0;
	pc->rcv_bytes_per_s = 1e21;
	pc->xmit_pkts_per_s = 2.0 / 3.0;
	pc->rcv_pkts_per_s = 1e300;
	pc = &s->ports[3];
	pc->have_ext = 0;
	pc->v[IBW_CTR_SYMBOL_ERRORS].have_raw = 0;
	pc->v[IBW_CTR_VL15_DROPPED].have_raw = 0;
	pc->xmit_bytes_per_s = 5e-324;
	pc->rcv_bytes_per_s = 1.7976931348623157e308;
	pc->xmit_pkts_per_s = 100.0;
	pc->rcv_pkts_per_s = 0.000123456789012345;

	e = &s->endports[0];
	snprintf(e->target, sizeof(e->target), "lid \"2\" \\ \xc3\xa9");
	snprintf(e->responder_host, sizeof(e->responder_host),
		 "h\xc3\xb4st.example\n");
	snprintf(e->reason, sizeof(e->reason), "ok");
	e->echo_answered = 1;
	e->rtt_avg_us = 25.333333333333;
	e->rtt_mdev_us = 0.1;
	e->sent = 18446744073709551615ull;
	e->received = 9007199254740993ull;
	e = &s->endports[1];
	e->port_guid = 0;
	e->node_guid = 0;
	snprintf(e->name, sizeof(e->name), "bad \xff");
	snprintf(e->reason, sizeof(e->reason), "timeout");
	assert_int_equal(ibw_snapshot_seal(s), 0);
	return s;
}

/* One event of every kind, with what each kind writes. */
static unsigned rich_events(struct ibw_event *ev, unsigned cap)
{
	unsigned n = 0;
	int k;

	for (k = 0; k < IBW_EVT_KIND_MAX && n + 2 <= cap; k++) {
		struct ibw_event *e = &ev[n++];

		memset(e, 0, sizeof(*e));
		e->seq = (uint64_t)n;
		e->time_us = T0 + (uint64_t)n * 1000;
		e->kind = (enum ibw_event_kind)k;
		e->node_guid = 0x0002c90300000001ull;
		e->port = (uint8_t)(k % 4);
		e->peer_guid = k % 3 ? 0x0002c90300000010ull : 0;
		e->peer_port = 1;
		e->old_value = k == IBW_EVT_THRESHOLD_CROSSED
				       ? 9223372036854775809ull
				       : (uint64_t)(k % 2);
		e->new_value = k == IBW_EVT_THRESHOLD_CROSSED
				       ? 18446744073709551615ull
				       : (uint64_t)(k % 3);
		e->reasons = 0x5;
		e->old_reasons = k % 2 ? 0x2 : 0;
		if (k % 2) /* a safe name: quotes, backslash, U+FFFD */
			snprintf(e->name, sizeof(e->name),
				 "sw \"%d\" \\ \xef\xbf\xbd", k);
		if (k % 4)
			snprintf(e->what, sizeof(e->what), "what \"%d\"\t\\",
				 k);
		snprintf(e->detail, sizeof(e->detail),
			 "a -> b \xc3\xa9 \xe2\x82\xac %d", k);
		if (k == IBW_EVT_LINK_HEALTH_CHANGED)
			snprintf(e->detail, sizeof(e->detail), "%s",
				 "ok () -> degraded (raw_ber); lane 3 at "
				 "sw \"1\" port 1");
		if (k == IBW_EVT_LINK_HEALTH_CHANGED)
			snprintf(e->affects, sizeof(e->affects), "4711,4712_3");
	}
	/* strings jansson refuses: the member goes */
	ev[n] = ev[0];
	ev[n].seq = n + 1;
	ev[n].kind = IBW_EVT_PATH_CHANGED;
	snprintf(ev[n].what, sizeof(ev[n].what), "bad \xff");
	n++;
	return n;
}

/* A link view on the rich snapshot's two cables with every field set. */
static void rich_links(struct ibw_snapshot *s, struct ibw_links **lp)
{
	static struct ibw_link_fec fx;
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_end_in a, b;
	struct ibw_portinfo pa, pb;
	struct ibw_link *k;
	int j, w, e;

	assert_non_null(l);
	ibw_links_begin(l, T0);
	link_side(&a, &pa, 0x0002c90300000001ull, 1, 1, 2);
	link_side(&b, &pb, 0x0002c90300000010ull, 1, 0, 2);
	assert_int_equal(ibw_links_update(l, &a, &b), 0);
	link_side(&a, &pa, 0x0002c90300000001ull, 2, 1, 1);
	link_side(&b, &pb, 0x0002c90300000011ull, 1, 0, 1);
	b.name = "bad \xff";
	assert_int_equal(ibw_links_update(l, &b, &a), 0);
	s->links = ibw_links_view(l, T0);
	assert_non_null(s->links);
	k = &s->links->links[1];
	k->ber = 1e-12;
	k->xmit_wait_ratio = 0.25;
	k->seen_us = T0;
	for (j = 0; j < 2; j++) {
		struct ibw_link_end *x = &k->end[j];

		x->saturated = 0x3;
		x->sample_us = T0 - 10;
		x->vl_mask = 0x8005;
		x->vl_xmit_wait_ratio[0] = 0.5f;
		x->vl_xmit_wait_ratio[2] = 0.1f;
		x->vl_xmit_wait_ratio[15] = 1e-7f;
		for (w = 0; w < IBW_LWIN_MAX; w++) {
			x->win[w].seconds = 10.0 * (w + 1);
			x->win[w].ber = w ? 2.5e-15 : -1;
			x->win[w].xmit_wait_ratio = 0.001;
			x->win[w].utilisation = 0.75;
			x->win[w].xmit_bytes = 9223372036854775808ull;
			x->win[w].bits = 12345;
			for (e = 0; e < IBW_LERR_MAX; e++)
				x->win[w].errors[e] = (uint64_t)(e * 7 + w);
		}
	}
	/* the 1x link's HCA end with FEC counters (RS-FEC, lane 2 bad) */
	k = &s->links->links[0];
	memset(&fx, 0, sizeof(fx));
	fx.layout = IBW_FEC_RS;
	fx.lanes = 4;
	fx.bad_lane = 2;
	fx.raw_state = IBW_HEALTH_DEGRADED;
	fx.effective_state = IBW_HEALTH_OK;
	for (w = 0; w < IBW_FWIN_MAX; w++) {
		fx.win[w].seconds = 60.0 * (w + 1);
		fx.win[w].bits = w ? 6e11 * (w + 1) : 0;
		fx.win[w].corrected = 1e6 * w;
		fx.win[w].lane[0] = 10.0 * w;
		fx.win[w].lane[2] = 1e6 * w - 10.0 * w;
		fx.win[w].uncorrectable = (uint64_t)w;
		fx.win[w].effective = (uint64_t)(2 * w);
		fx.win[w].raw_ber = w ? fx.win[w].corrected / fx.win[w].bits
				      : -1;
		fx.win[w].effective_ber =
			w ? (double)fx.win[w].effective / fx.win[w].bits : -1;
	}
	k->end[1].fec = &fx;
	/* judged by them: RS-FEC read as active */
	k->end[1].fec_mode = 2;
	k->end[1].fec_mode_src = IBW_FEC_MODE_READ;
	k->end[1].fec_active = 1;
	k->end[1].by_fec = 1;
	k->end[1].why = IBW_LJ_MODE_ON;
	/* its cable module under its low rx power warning on lane 3 */
	k->end[1].module.level = 1;
	k->end[1].module.what = IBW_MOD_RX_POWER;
	k->end[1].module.lane = 3;
	k->end[1].module.value = -12.25f;
	k->end[1].module.threshold = -14.0f;
	/* the other cable's switch end: PortInfoExtended unanswered, no
	 * mode known, at a speed where FEC is optional */
	k = &s->links->links[1];
	k->end[0].fec_mode_src = IBW_FEC_MODE_FALLBACK;
	k->end[0].fec_active = -1;
	k->end[0].why = IBW_LJ_SPEED_OPTIONAL;
	k = &s->links->links[0];
	k->raw_ber = fx.win[IBW_FWIN_12M].raw_ber;
	k->effective_ber = fx.win[IBW_FWIN_12M].effective_ber;
	*lp = l;
}

/* The rich snapshot's documents, byte for byte as reviewed. */
static void test_rich_documents(void **state)
{
	size_t len;
	struct ibw_snapshot *s = rich_snapshot();
	struct ibw_port_filter all = { 0, 0, -1, 0 };
	struct ibw_event ev[IBW_EVT_KIND_MAX + 2];
	const struct ibw_snapshot_node *nv;
	const struct ibw_snapshot_endport *epv;
	static const size_t budgets[] = { 1, 100, 100000 };
	struct ibw_links *l;
	struct ibw_jw w;
	unsigned nev, i;
	size_t b, n;
	json_t *j;
	char *t, *t2;

	ibw_jw_init(&w);
	ibw_json_write_ports(&w, s, &all);
	t = written(&w);
	golden("ports-rich.json", t);
	free(t);
	ibw_jw_init(&w);
	ibw_json_write_nodes(&w, s);
	t = written(&w);
	golden("nodes.json", t);
	/* the single node's tree (jansson) says the same as the writer */
	ibw_jw_init(&w);
	ibw_jw_array(&w);
	ibw_snapshot_foreach_node(s, nv)
		ibw_jw_value(&w, ibw_json_node(s, nv->n->guid));
	ibw_jw_end(&w);
	t2 = written(&w);
	assert_string_equal(t2, t);
	free(t2);
	free(t);
	j = ibw_json_node(s, 0x0002c90300000010ull);
	assert_non_null(j);
	t = dump(j);
	golden("node.json", t);
	free(t);
	ibw_jw_init(&w);
	ibw_json_write_endports(&w, s);
	t = written(&w);
	golden("endports-rich.json", t);
	ibw_jw_init(&w);
	ibw_jw_array(&w);
	ibw_snapshot_foreach_endport(s, epv)
		ibw_jw_value(&w, ibw_json_endport(epv));
	ibw_jw_end(&w);
	t2 = written(&w);
	assert_string_equal(t2, t);
	free(t2);
	free(t);
	nev = rich_events(ev, IBW_EVT_KIND_MAX + 2);
	ibw_jw_init(&w);
	ibw_json_write_events_doc(&w, 99, ev, nev);
	t = written(&w);
	golden("events.json", t);
	/* each event's tree (ibw_json_event) says the same as the writer */
	ibw_jw_init(&w);
	ibw_jw_object(&w);
	ibw_jw_key(&w, "events");
	ibw_jw_array(&w);
	for (i = 0; i < nev; i++)
		ibw_jw_value(&w, ibw_json_event(&ev[i]));
	ibw_jw_end(&w);
	ibw_jw_key(&w, "last_seq");
	ibw_jw_u64(&w, 99);
	ibw_jw_end(&w);
	t2 = written(&w);
	assert_string_equal(t2, t);
	free(t2);
	free(t);
	rich_links(s, &l);
	t = dump(ibw_json_links(s, NULL));
	golden("links.json", t);
	free(t);
	ibw_jw_init(&w);
	ibw_json_write_links(&w, s, NULL);
	t = written(&w);
	golden("links.json", t);
	free(t);
	/* filtered, and without a view: the writer as the tree */
	for (i = 0; i < 5; i++) {
		struct ibw_link_filter f = { -1, -1, 0, 0, NULL, 0 };
		struct ibw_link_view *keep = s->links;

		if (i == 1)
			f.health = IBW_HEALTH_DEGRADED;
		if (i == 2)
			s->links = NULL;
		f.limit = i == 3 ? 1 : i == 4 ? 2 : 0; /* the first, two */
		t = dump(ibw_json_links(s, &f));
		ibw_jw_init(&w);
		ibw_json_write_links(&w, s, &f);
		t2 = written(&w);
		assert_string_equal(t2, t);
		free(t2);
		if (f.limit) { /* the first f.limit of the whole list */
			/* (a count past INT64_MAX in it: as a real) */
			json_t *a =
				json_loads(t, JSON_DECODE_INT_AS_REAL, NULL);

			assert_int_equal(
				json_array_size(json_object_get(a, "links")),
				f.limit);
			json_decref(a);
		}
		/* and a part at a time, as /api/v1/links streams it (no
		 * newline: written() adds it); no links, no second part */
		for (b = i == 2; b < 3; b++) {
			t2 = by_parts(part_links, s, &f, budgets[b], 7, &n);
			assert_int_equal(n + 1, strlen(t));
			assert_memory_equal(t2, t, n);
			free(t2);
		}
		free(t);
		s->links = keep;
	}
	t = dump(ibw_json_link_at(s, 0x0002c90300000011ull, 1));
	golden("link.json", t);
	free(t);
	/* the FEC end's series: the link's worse raw and effective BER by
	 * window, its lanes (its raw BER is degraded) and the bad lane */
	t = ibw_prom_render(s, NULL, T0, NULL, &len);
	assert_non_null(t);
	assert_true(has_line_with(t, "ibwatch_link_raw_ber{",
				  "window=\"12m\"} 8.33333e-07"));
	assert_true(has_line_with(t, "ibwatch_link_effective_ber{",
				  "window=\"24h\"} 2.5e-12"));
	assert_true(
		has_line_with(t, "ibwatch_link_lane_raw_ber{",
			      "receiver_guid=\"0x0002c90300000011\","
			      "receiver_port=\"1\",lane=\"2\"} 3.3333e-06"));
	assert_true(has_line_with(t, "ibwatch_link_bad_lane{",
				  "receiver_port=\"1\"} 2"));
	/* judged by its FEC counters, and why; no other receiver has them */
	assert_true(has_line_with(t, "ibwatch_link_judged_by_fec{",
				  "receiver_guid=\"0x0002c90300000011\","
				  "receiver_port=\"1\","
				  "why=\"fec_mode_active\"} 1"));
	assert_false(has_line_with(t, "ibwatch_link_judged_by_fec{",
				   "receiver_guid=\"0x0002c90300000001\""));
	/* the 4x link has no FEC counters: no such series */
	assert_false(has_line_with(t, "ibwatch_link_raw_ber{",
				   "guid=\"0x0002c90300000001\",port=\"1\""));
	free(t);
	ibw_links_free(l);
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
		cmocka_unit_test(test_request_kinds),
		cmocka_unit_test(test_openmetrics),
		cmocka_unit_test(test_json_documents),
		cmocka_unit_test(test_events_written),
		cmocka_unit_test(test_stream_same_bytes),
		cmocka_unit_test(test_parts_same_bytes),
		cmocka_unit_test(test_metrics_body_in_pieces),
		cmocka_unit_test(test_writer_refuses),
		cmocka_unit_test(test_writer_scalars),
		cmocka_unit_test(test_writer_many_keys),
		cmocka_unit_test(test_pma_redirect_rendered),
		cmocka_unit_test(test_exporter_series),
		cmocka_unit_test(test_exporter_rows),
		cmocka_unit_test(test_exporter_dual_port),
		cmocka_unit_test(test_hca_counters_join_uplink),
		cmocka_unit_test(test_fabric_label),
		cmocka_unit_test(test_agentx_series),
		cmocka_unit_test(test_json_links),
		cmocka_unit_test(test_rich_documents),
	};

	return cmocka_run_group_tests_name("render", tests, NULL, NULL);
}
