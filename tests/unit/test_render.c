// SPDX-License-Identifier: BSD-2-Clause
/*
 * Renderers on a fixture snapshot (a switch and two hosts): the
 * Prometheus text and the JSON documents equal the reviewed documents in
 * tests/fixtures/, each metric family is contiguous with one HELP and
 * one TYPE, label values are escaped, and promtool finds nothing wrong.
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
#include "fabric.h"
#include "json.h"
#include "json_links.h"
#include "links.h"
#include "prom.h"
#include "snapfixture.h"
#include "stream.h"

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

/* The writer's document with the newline --once and the fixtures add. */
static char *written(struct ibw_jw *w)
{
	size_t n;
	char *s = ibw_jw_finish(w, &n);
	char *t;

	assert_non_null(s);
	assert_int_equal(n, strlen(s));
	t = realloc(s, n + 2);
	assert_non_null(t);
	t[n] = '\n';
	t[n + 1] = '\0';
	return t;
}

/*
 * What the writer wrote must be what jansson writes for the tree of the
 * same document: parse it and dump the tree. The reals here are short,
 * so they come back as they were; integers of 19 digits or more (the
 * fixture's counters above INT64_MAX) are parsed as ibw_json_u64()'s
 * marked strings, which ibw_json_dumps() writes back bare.
 */
static void same_as_tree(const char *t)
{
	size_t n = strlen(t), i = 0, k, o = 0;
	char *m = malloc(2 * n + 1), *d;
	json_error_t err;
	json_t *j;

	assert_non_null(m);
	while (i < n) {
		for (k = i; k < n && t[k] >= '0' && t[k] <= '9';)
			k++;
		if (k - i >= 19 && t[i - 1] == ' ') {
			o += (size_t)sprintf(m + o, "\"\\u0001u64:%.*s\"",
					     (int)(k - i), t + i);
			i = k;
		} else if (k > i) {
			memcpy(m + o, t + i, k - i);
			o += k - i;
			i = k;
		} else {
			m[o++] = t[i++];
		}
	}
	m[o] = '\0';
	j = json_loads(m, 0, &err);
	if (!j)
		fail_msg("writer output does not parse: %s", err.text);
	free(m);
	d = dump(j);
	assert_string_equal(d, t);
	free(d);
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

/* The AgentX subagent's series: only with its status, in both formats
 * (OpenMetrics names the counter families without _total). */
static void test_agentx_series(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_agentx_status ax = { 0 };
	size_t len;
	char *text;

	text = ibw_prom_render_live(s, NULL, NULL, T0, 0, &len);
	assert_null(strstr(text, "ibwatch_agentx_"));
	free(text);
	ax.state = IBW_AGENTX_CONNECTED;
	ax.attempts_total = 7;
	ax.reconnects = 2;
	text = ibw_prom_render_live(s, NULL, &ax, T0, 0, &len);
	assert_non_null(strstr(text, "\nibwatch_agentx_connected 1\n"));
	assert_non_null(
		strstr(text, "\nibwatch_agentx_connect_attempts_total 7\n"));
	assert_non_null(strstr(text, "\nibwatch_agentx_reconnects_total 2\n"));
	free(text);
	ax.state = IBW_AGENTX_WAITING;
	text = ibw_prom_render_live(s, NULL, &ax, T0, 1, &len);
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
	struct ibw_jw w;
	char *t;

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
		      const struct ibw_port_filter *f, size_t budget,
		      size_t take, size_t *len)
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
		      const struct ibw_port_filter *f, size_t *pos,
		      size_t budget)
{
	return ibw_json_write_ports_part(w, s, f, pos, budget);
}

static int part_nodes(struct ibw_jw *w, const struct ibw_snapshot *s,
		      const struct ibw_port_filter *f, size_t *pos,
		      size_t budget)
{
	return ibw_json_write_nodes_part(w, s, pos, budget);
}

static int part_endports(struct ibw_jw *w, const struct ibw_snapshot *s,
			 const struct ibw_port_filter *f, size_t *pos,
			 size_t budget)
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
	char *want = ibw_prom_render_snapshot(s, 0, &wn);
	char *got;

	assert_non_null(want);
	assert_true(wn > 1000);
	for (k = 0; k < 2; k++) {
		for (t = 0; t < 2; t++) {
			struct ibw_body *b = ibw_body_start(7, keeps[k]);
			struct ibw_share *sh;
			long r;

			assert_non_null(b);
			assert_int_equal(ibw_prom_render_snapshot_to(
						 s, 0, 100, ibw_body_append, b),
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

/* Misuse and the document's end are refused, not written. */
static void test_writer_refuses(void **state)
{
	struct ibw_jw w;
	size_t n;

	ibw_jw_init(&w);
	ibw_jw_array(&w);
	assert_null(ibw_jw_finish(&w, &n)); /* not closed */
	ibw_jw_init(&w);
	ibw_jw_object(&w);
	ibw_jw_value(&w, json_integer(1)); /* no key */
	ibw_jw_end(&w);
	assert_int_equal(w.err, -EINVAL);
	assert_null(ibw_jw_finish(&w, &n));
	ibw_jw_init(&w);
	ibw_jw_value(&w, json_integer(1));
	ibw_jw_value(&w, json_integer(2)); /* a second document */
	assert_null(ibw_jw_finish(&w, &n));
	ibw_jw_init(&w);
	ibw_jw_value(&w, NULL); /* what a failed json_*() gives */
	assert_null(ibw_jw_finish(&w, &n));
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
	/* Fixed, so the fixtures do not change with every commit. */
	ibw_prom_set_build_info("0.1.0", "fixture");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_document),
		cmocka_unit_test(test_metrics_structure),
		cmocka_unit_test(test_promtool_finds_nothing),
		cmocka_unit_test(test_openmetrics),
		cmocka_unit_test(test_json_documents),
		cmocka_unit_test(test_events_written),
		cmocka_unit_test(test_stream_same_bytes),
		cmocka_unit_test(test_parts_same_bytes),
		cmocka_unit_test(test_metrics_body_in_pieces),
		cmocka_unit_test(test_writer_refuses),
		cmocka_unit_test(test_pma_redirect_rendered),
		cmocka_unit_test(test_exporter_series),
		cmocka_unit_test(test_agentx_series),
		cmocka_unit_test(test_json_links),
	};

	return cmocka_run_group_tests_name("render", tests, NULL, NULL);
}
