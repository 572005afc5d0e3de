// SPDX-License-Identifier: BSD-2-Clause
/*
 * infiniband_exporter's series from the fixture snapshot: the names and
 * label sets its users scrape, its rows (HCA ports by port GUID, connected
 * switch ports, counters absent when unread), dual-port HCAs and an HCA's
 * counters joined to its uplink.
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

#include "fabric.h"
#include "links.h"
#include "prom.h"
#include "render_fx.h"
#include "snapfixture.h"

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
void test_exporter_series(void **state)
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
	text = ibw_prom_render(s, NULL, T0, NULL, &len);
	/* an HCA's rows are named by the port's GUID, as the exporter's */
	assert_non_null(strstr(text, "\ninfiniband_hca_rate_bytes_per_second{"
				     "guid=\"0x0002c90300000020\"} "
				     "12500000000\n"));
	assert_non_null(strstr(text, "\ninfiniband_hca_raw_rate_bytes_per_"
				     "second{guid=\"0x0002c90300000020\"} "
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

static char *render_with(const struct ibw_snapshot *s,
			 const struct ibw_prom_opts *o)
{
	size_t len;
	char *text = ibw_prom_render_snapshot(s, o, &len);

	assert_non_null(text);
	return text;
}

/*
 * The rows infiniband_exporter gives: HCA rows by port GUID, only
 * connected switch ports (all with metrics-all-ports), counters absent
 * where the last sweep could not read them (collect_timeout or
 * collect_error saying why) or the node is gone, or where this run has
 * read nothing yet; each counter sample at the time of its reading (none
 * without timestamps or in --textfile's file); --textfile's collector
 * names and last_execution; the rcv-err collectors.
 */
void test_exporter_rows(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_prom_opts o = { .timestamps = 1 };
	struct ibw_fnode *n;
	char want[256], *text;

	text = render_with(s, &o);
	assert_false(strstr(text, "hca=\"node0001 HCA-1\",lid=\"2\"") &&
		     strstr(text,
			    "infiniband_hca_info{guid=\"0x0002c90300000010\""));
	assert_true(has_line(text,
			     "infiniband_hca_info{guid=\"0x0002c90300000020\","
			     "hca=\"node0001 HCA-1\",lid=\"2\"} 1"));
	assert_false(has_line(text, "infiniband_hca_port_symbol_error_total{"
				    "guid=\"0x0002c90300000010\""));
	assert_true(has_line(text,
			     "infiniband_hca_port_symbol_error_total{"
			     "guid=\"0x0002c90300000020\",port=\"1\"} 300 "));
	snprintf(want, sizeof(want),
		 "infiniband_switch_port_symbol_error_total{guid=\""
		 "0x0002c90300000001\",port=\"1\"} 0 %llu\n",
		 (unsigned long long)((T0 - 200) / 1000));
	assert_non_null(strstr(text, want));
	/* switch port 3: unconnected, and its read failed */
	assert_false(has_line(text, "infiniband_switch_port_symbol_error_total{"
				    "guid=\"0x0002c90300000001\",port=\"3\"}"));
	assert_true(has_line(text,
			     "infiniband_switch_collect_error{collector="
			     "\"switch\",guid=\"0x0002c90300000001\"} 1"));
	assert_true(has_line(text,
			     "infiniband_switch_collect_timeout{collector="
			     "\"switch\",guid=\"0x0002c90300000001\"} 0"));
	assert_false(has_line(text, "infiniband_exporter_last_execution"));
	assert_false(strstr(text, "-rcv-err"));
	free(text);

	/* port 3 read: still no row, unless every port is asked for */
	s->ports[2].stale = 0;
	text = render_with(s, &o);
	assert_false(
		strstr(text, "_total{guid=\"0x0002c90300000001\",port=\"3\"}"));
	free(text);
	o.all_ports = 1;
	text = render_with(s, &o);
	assert_true(has_line(text,
			     "infiniband_switch_port_symbol_error_total{"
			     "guid=\"0x0002c90300000001\",port=\"3\"} 200 "));
	/* ... but a port has no rate or uplink without a cable */
	assert_false(strstr(
		text,
		"rate_bytes_per_second{guid=\"0x0002c90300000001\",port=\"3\"}"));
	free(text);
	o.all_ports = 0;

	/* port 1 unanswered: no samples, a timeout, counted */
	s->ports[0].stale = 1;
	s->ports[0].fail = IBW_CTR_FAIL_TIMEOUT;
	text = render_with(s, &o);
	assert_false(
		strstr(text, "_total{guid=\"0x0002c90300000001\",port=\"1\"}"));
	assert_true(has_line(text,
			     "infiniband_switch_collect_timeout{collector="
			     "\"switch\",guid=\"0x0002c90300000001\"} 1"));
	assert_true(has_line(text,
			     "infiniband_switch_collect_error{collector="
			     "\"switch\",guid=\"0x0002c90300000001\"} 0"));
	assert_true(has_line(text, "infiniband_exporter_collect_timeouts{"
				   "collector=\"switch\"} 1"));
	/* the rates and the uplink stay: discovery still sees the port */
	assert_true(has_line(text,
			     "infiniband_switch_port_rate_bytes_per_second{"
			     "guid=\"0x0002c90300000001\",port=\"1\"}"));
	free(text);
	s->ports[0].stale = 0;
	s->ports[0].fail = 0;

	/* a reading from before this run (the state file's): none yet */
	s->ports[3].updated_us = s->started_us - 1;
	text = render_with(s, &o);
	assert_false(strstr(text, "_total{guid=\"0x0002c90300000020\""));
	assert_false(has_line(text, "infiniband_hca_collect_error{collector="
				    "\"hca\",guid=\"0x0002c90300000020\"}"));
	assert_true(has_line(
		text, "infiniband_hca_info{guid=\"0x0002c90300000020\""));
	free(text);
	s->ports[3].updated_us = T0 - 200;

	/* OpenMetrics: the time in seconds */
	o.om = 1;
	text = render_with(s, &o);
	snprintf(want, sizeof(want),
		 "infiniband_switch_port_symbol_error_total{guid=\""
		 "0x0002c90300000001\",port=\"1\"} 0 %llu.%03llu\n",
		 (unsigned long long)((T0 - 200) / 1000000),
		 (unsigned long long)((T0 - 200) / 1000 % 1000));
	assert_non_null(strstr(text, want));
	free(text);
	o.om = 0;
	o.timestamps = 0;
	text = render_with(s, &o);
	assert_non_null(strstr(text, "infiniband_switch_port_symbol_error_"
				     "total{guid=\"0x0002c90300000001\","
				     "port=\"1\"} 0\n"));
	free(text);
	o.timestamps = 1;

	/* --textfile: the exporter's run-once names, no timestamps */
	o.runonce = 1;
	o.rcv_err = 1;
	text = render_with(s, &o);
	assert_non_null(strstr(text, "infiniband_switch_port_symbol_error_"
				     "total{guid=\"0x0002c90300000001\","
				     "port=\"1\"} 0\n"));
	snprintf(want, sizeof(want),
		 "infiniband_exporter_last_execution{collector=\"switch-"
		 "runonce\"} %llu\n",
		 (unsigned long long)((T0 - 70) / 1000000));
	assert_non_null(strstr(text, want));
	assert_true(has_line(text,
			     "infiniband_exporter_last_execution{collector="
			     "\"ibnetdiscover-runonce\"} "));
	assert_true(has_line(text,
			     "infiniband_exporter_last_execution{collector="
			     "\"hca-runonce\"} "));
	assert_true(has_line(text, "infiniband_switch_collect_error{collector="
				   "\"switch-runonce-rcv-err\",guid=\""
				   "0x0002c90300000001\"} 0"));
	assert_true(has_line(text, "infiniband_hca_collect_duration_seconds{"
				   "collector=\"hca-runonce-rcv-err\",guid=\""
				   "0x0002c90300000021\"} "));
	assert_true(has_line(text, "infiniband_exporter_collector_duration_"
				   "seconds{collector=\"switch-runonce\"} "
				   "0.00038\n"));
	free(text);
	o.runonce = o.rcv_err = 0;

	/* node0002 gone: nothing of it, nor of the switch port to it */
	n = (struct ibw_fnode *)ibw_fabric_find(s->fabric,
						0x0002c90300000011ull);
	assert_non_null(n);
	n->gone = 1;
	assert_int_equal(ibw_snapshot_seal(s), 0);
	text = render_with(s, &o);
	assert_false(has_line_with(text, "infiniband_", "0x0002c90300000021"));
	assert_false(has_line_with(text, "infiniband_",
				   "guid=\"0x0002c90300000001\",port=\"2\"}"));
	assert_false(has_line_with(text, "infiniband_", "port=\"2\",switch="));
	assert_true(has_line(
		text, "infiniband_hca_info{guid=\"0x0002c90300000020\""));
	free(text);
	ibw_snapshot_unref(s);
}

/* A dual-port HCA: a row of each kind per port, by its own GUID and
 * LID. */
void test_exporter_dual_port(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_fabric *f = (struct ibw_fabric *)s->fabric;
	struct ibw_fnode *n =
		(struct ibw_fnode *)ibw_fabric_find(f, 0x0002c90300000010ull);
	struct ibw_port_ctrs *pc;
	char *text;

	/* its port 2 on the switch's port 3, LID 9, GUID ...30 */
	assert_non_null(n);
	n->ports = realloc(n->ports, 3 * sizeof(*n->ports));
	n->ports[2] = n->ports[1];
	n->nports = 3;
	n->ni.num_ports = 2;
	n->ports[2].num = 2;
	n->ports[2].guid = 0x0002c90300000030ull;
	n->ports[2].pi.lid = 9;
	n->ports[2].remote_port = 3;
	n = (struct ibw_fnode *)ibw_fabric_find(f, 0x0002c90300000001ull);
	n->ports[3].pi.state = 4;
	n->ports[3].pi.phys_state = 5;
	n->ports[3].remote_guid = 0x0002c90300000010ull;
	n->ports[3].remote_port = 2;
	s->ports = realloc(s->ports, 6 * sizeof(*s->ports));
	memmove(&s->ports[5], &s->ports[4], sizeof(*s->ports));
	s->ports[4] = s->ports[3];
	ibw_ctr_port_share(&s->ports[4]); /* the copy holds them too */
	pc = &s->ports[4];
	pc->port = 2;
	pc->v[IBW_CTR_XMIT_DATA].total = 4242;
	s->nports = 6;
	assert_int_equal(ibw_snapshot_seal(s), 0);
	text = render_with(s, NULL);
	assert_true(has_line(text,
			     "infiniband_hca_info{guid=\"0x0002c90300000020\","
			     "hca=\"node0001 HCA-1\",lid=\"2\"} 1"));
	assert_true(has_line(text,
			     "infiniband_hca_info{guid=\"0x0002c90300000030\","
			     "hca=\"node0001 HCA-1\",lid=\"9\"} 1"));
	assert_true(has_line(text, "infiniband_hca_port_transmit_data_bytes_"
				   "total{guid=\"0x0002c90300000030\",port="
				   "\"2\"} 4242\n"));
	assert_true(has_line(text, "infiniband_hca_rate_bytes_per_second{guid="
				   "\"0x0002c90300000030\"} "));
	assert_true(has_line(text,
			     "infiniband_hca_uplink_info{guid=\""
			     "0x0002c90300000030\",hca=\"node0001 HCA-1\","
			     "port=\"2\",uplink=\"leaf \\\"A\\\" \\\\ 1\","
			     "uplink_guid=\"0x0002c90300000001\","
			     "uplink_lid=\"1\",uplink_port=\"3\","
			     "uplink_type=\"SW\"} 1"));
	assert_true(has_line(text, "infiniband_switch_uplink_info{guid=\""
				   "0x0002c90300000001\",port=\"3\","));
	assert_non_null(strstr(text, "uplink_guid=\"0x0002c90300000030\","
				     "uplink_lid=\"9\",uplink_port=\"2\","
				     "uplink_type=\"CA\"} 1"));
	assert_true(has_line(text, "infiniband_hca_collect_timeout{collector="
				   "\"hca\",guid=\"0x0002c90300000030\"} 0"));
	free(text);
	ibw_snapshot_unref(s);
}

/* The guid and port label values of the sample @line; 0 if it has none. */
static int sample_key(const char *line, char *guid, char *port)
{
	const char *g = strstr(line, "guid=\""), *p = strstr(line, ",port=\"");

	if (!g || !p || sscanf(g, "guid=\"%18[0-9a-fx]\"", guid) != 1 ||
	    sscanf(p, ",port=\"%7[0-9]\"", port) != 1)
		return 0;
	return 1;
}

/*
 * Issue 36: every HCA port counter series, FEC and congestion ones too,
 * names the port as infiniband_hca_uplink_info does (its port GUID), so
 * an on(guid,port) join keeps them all.
 */
void test_hca_counters_join_uplink(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_cong *g = calloc(1, sizeof(*g));
	const char *p, *e;
	unsigned nfec = 0, ncong = 0;
	char *text;

	/* node0001's port (node GUID ...10, port GUID ...20): congestion
	 * counters beside the fixture's FEC ones */
	assert_non_null(g);
	g->refs = 1;
	g->have = 1u << IBW_CONG_XMIT_CC | 1u << IBW_CONG_RCV_CC;
	g->total[ibw_cong_first(IBW_CONG_XMIT_CC)] = 77;
	s->ports[3].cong = g;
	text = render_with(s, NULL);
	for (p = text; p && *p; p = e ? e + 1 : NULL) {
		char line[256], guid[24], port[8], row[80], sub[40];

		e = strchr(p, '\n');
		if (strncmp(p, "ibwatch_hca_port_", 17))
			continue;
		snprintf(line, sizeof(line), "%.*s",
			 (int)(e ? e - p : (ptrdiff_t)strlen(p)), p);
		if (!strncmp(line + 17, "fec_", 4))
			nfec++;
		else if (strstr(line, "_cong_total{") ||
			 strstr(line, "_fecn_total{") ||
			 strstr(line, "_becn_total{"))
			ncong++;
		else
			continue;
		assert_true(sample_key(line, guid, port));
		snprintf(row, sizeof(row),
			 "infiniband_hca_uplink_info{guid=\"%s\",", guid);
		snprintf(sub, sizeof(sub), ",port=\"%s\",uplink=", port);
		if (!has_line_with(text, row, sub))
			fail_msg("no uplink row for %s", line);
	}
	assert_int_not_equal(nfec, 0);
	assert_int_not_equal(ncong, 0);
	assert_true(has_line(text, "ibwatch_hca_port_fec_corrected_symbols_"
				   "total{guid=\"0x0002c90300000020\",port="
				   "\"1\"} 112354\n"));
	assert_true(has_line(text, "ibwatch_hca_port_xmit_time_cong_total{"
				   "guid=\"0x0002c90300000020\",port=\"1\"} "
				   "77\n"));
	free(text);
	ibw_snapshot_unref(s);
}

/* Pieces handed on by ibw_prom_render_snapshot_to(), joined. */
struct joined {
	char *p;
	size_t len;
};

static int join_piece(void *arg, const char *p, size_t n)
{
	struct joined *j = arg;

	j->p = realloc(j->p, j->len + n + 1);
	assert_non_null(j->p);
	memcpy(j->p + j->len, p, n);
	j->len += n;
	j->p[j->len] = '\0';
	return 0;
}

/* Whether every sample line of @text whose name starts with @prefix
 * ("" any) carries @label first, and no other line has it. */
static int labelled_just(const char *text, const char *prefix,
			 const char *label)
{
	const char *l = text, *nl;
	size_t ll = strlen(label), pl = strlen(prefix);
	unsigned with = 0;

	for (; *l; l = nl + 1) {
		const char *brace;
		int want;

		nl = strchr(l, '\n');
		if (!nl)
			return 0;
		if (*l == '#')
			continue;
		want = !strncmp(l, prefix, pl);
		brace = memchr(l, '{', (size_t)(nl - l));
		if (want != (brace && !strncmp(brace + 1, label, ll)))
			fail_msg("%.*s: label %s", (int)(nl - l), l,
				 want ? "missing" : "where it should not be");
		with += want;
	}
	return with > 0;
}

/*
 * The fabric label (core/fabric_id.h): first in every ibwatch_* sample
 * by default and none in the exporter's; in every sample with "all"; in
 * none but ibwatch_fabric_info with "none"; the same bytes whatever
 * pieces the text is handed on in; none before the fabric is known.
 */
void test_fabric_label(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_prom_opts o = { 0 };
	const char *lab = "fabric=\"0xfe80000000000000/0x0002c90300000001\"";
	char *text, *plain;
	size_t len, hold;

	plain = render_with(s, &o);
	assert_null(strstr(plain, "fabric="));
	free(plain);
	s->fabric_id.known = 1;
	s->fabric_id.subnet_prefix = 0xfe80000000000000ull;
	s->fabric_id.sm_guid = 0x0002c90300000001ull;
	s->fabric_id.sm_lid = 1;

	text = render_with(s, &o);
	assert_true(labelled_just(text, "ibwatch_", lab));
	assert_true(has_line(text,
			     "ibwatch_fabric_info{fabric=\"0xfe80000000000000"
			     "/0x0002c90300000001\",subnet_prefix=\""
			     "0xfe80000000000000\",sm_guid=\""
			     "0x0002c90300000001\",sm_lid=\"1\"} 1"));
	/* a name with no labels gets braces of its own */
	assert_true(has_line(text, "ibwatch_unreachable_ports{fabric="));
	/* in pieces of any size, the same text */
	for (hold = 1; hold < 200; hold += 37) {
		struct joined j = { 0 };

		assert_int_equal(ibw_prom_render_snapshot_to(s, &o, hold,
							     join_piece, &j),
				 0);
		assert_int_equal(j.len, strlen(text));
		assert_string_equal(j.p, text);
		free(j.p);
	}
	free(text);

	o.fabric_label = IBW_PROM_FABRIC_ALL;
	text = render_with(s, &o);
	assert_true(labelled_just(text, "", lab));
	free(text);

	o.fabric_label = IBW_PROM_FABRIC_NONE;
	text = render_with(s, &o);
	assert_true(has_line(text, "ibwatch_fabric_info{fabric=\"0xfe80"));
	assert_null(strstr(strchr(strstr(text, "ibwatch_fabric_info{"), '\n'),
			   "fabric=\""));
	free(text);

	/* fabric-name: the name in place of the identity, which
	 * ibwatch_fabric_info still gives */
	o.fabric_label = IBW_PROM_FABRIC_IBWATCH;
	o.fabric_name = "rail0";
	text = render_with(s, &o);
	assert_true(labelled_just(text, "ibwatch_", "fabric=\"rail0\""));
	assert_true(has_line(text, "ibwatch_fabric_info{fabric=\"rail0\","
				   "subnet_prefix=\"0xfe80000000000000\""));
	free(text);
	o.fabric_name = NULL;

	/* OpenMetrics, with the live part: promtool's parser takes it */
	o.fabric_label = IBW_PROM_FABRIC_IBWATCH;
	o.om = 1;
	text = ibw_prom_render_live(s, NULL, NULL, T0, &o, &len);
	assert_non_null(text);
	assert_true(labelled_just(text, "ibwatch_", lab));
	assert_true(strstr(text, "# EOF\n") != NULL);
	free(text);
	ibw_snapshot_unref(s);
}
