// SPDX-License-Identifier: BSD-2-Clause
/*
 * IBWATCH-MIB's handlers on the fixture snapshot, without an agent: a
 * walk of the whole module is in strictly increasing OID order and ends,
 * every table has its rows, row indexes are given in (GUID, port) order
 * and kept in their file across agents (a port known there keeps its
 * index, new ones come after the highest), the lookup table's GUID index
 * is 18 characters with no length (and a length makes it no such
 * instance), sparse columns skip rows without a value, values carry the
 * MIB's types and units, and events become the notifications the MIB
 * defines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mib.h"
#include "mib_int.h"
#include "snapfixture.h"

#include <net-snmp/agent/net-snmp-agent-includes.h>

static const oid root[] = { IBW_MIB_ROOT };
#define ROOT_LEN OID_LENGTH(root)

#define SW 0x0002c90300000001ull
#define H1 0x0002c90300000010ull
#define H2 0x0002c90300000011ull

struct fx {
	struct ibw_snapshot *snap;
	struct ibw_local_port lp;
	struct ibw_localport_query lq;
	struct ibw_mib_stats stats;
	struct ibw_mib *mib;
	char rows[64]; /* the row index file */
};

/* the fixture of the test that runs (mkoid's row look-ups) */
static struct fx *cur;

static struct ibw_snapshot *get_snap(void *arg)
{
	return ibw_snapshot_ref(arg);
}

/* A link view of the fixture's two cables, the one to H2 at 1x of 4x. */
static struct ibw_link_view *two_links(void)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	struct ibw_portinfo pi[2];
	struct ibw_link_end_in in[2];
	unsigned i, k;

	assert_non_null(l);
	ibw_links_begin(l, T0);
	for (k = 0; k < 2; k++) {
		for (i = 0; i < 2; i++) {
			memset(&pi[i], 0, sizeof(pi[i]));
			memset(&in[i], 0, sizeof(in[i]));
			pi[i].state = IBW_PORT_ACTIVE;
			pi[i].phys_state = IBW_PHYS_LINKUP;
			pi[i].width_active = k ? 1 : 2;
			pi[i].width_enabled = pi[i].width_supported = 3;
			pi[i].speed_active = pi[i].speed_enabled = 1;
			pi[i].speed_supported = 1;
			in[i].pi = &pi[i];
			in[i].tick = -1;
		}
		in[0].guid = SW;
		in[0].port = (uint8_t)(k + 1);
		in[0].node_type = IBW_NODE_SWITCH;
		in[0].name = "sw";
		in[1].guid = k ? H2 : H1;
		in[1].port = 1;
		in[1].node_type = IBW_NODE_CA;
		in[1].name = "host";
		assert_int_equal(ibw_links_update(l, &in[1], &in[0]), 0);
	}
	v = ibw_links_view(l, T0);
	assert_non_null(v);
	ibw_links_free(l);
	return v;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_watched *w;
	struct ibw_endport *e;
	unsigned i;

	/* A configured target nobody found: no row (it has no index). */
	s->endports = realloc(s->endports, 3 * sizeof(*s->endports));
	e = &s->endports[2];
	memset(e, 0, sizeof(*e));
	snprintf(e->target, sizeof(e->target), "no-such-host");
	s->nendports = 3;
	/* A watched path: three hops there, three back. */
	s->watched = calloc(1, sizeof(*s->watched));
	s->nwatched = 1;
	w = &s->watched[0];
	snprintf(w->target, sizeof(w->target), "node0002 HCA-1");
	w->lid = 3;
	w->have = 1;
	w->traces = 4;
	w->changes = 1;
	w->last_us = T0;
	w->last.have_reverse = 1;
	w->last.fwd.nhops = w->last.rev.nhops = 3;
	for (i = 0; i < 3; i++) {
		w->last.fwd.hops[i].node_guid = i == 1 ? SW : i ? H2 : H1;
		w->last.fwd.hops[i].lid = (uint16_t)(i + 2);
		w->last.rev.hops[i].node_guid = i == 1 ? SW : i ? H1 : H2;
	}
	w->last.fwd.hops[1].in_port = 1;
	w->last.fwd.hops[1].out_port = 2;
	s->ports[3].v[IBW_CTR_SYMBOL_ERRORS].total = 5000000000ull;
	s->links = two_links();
	assert_int_equal(ibw_snapshot_seal(s), 0);

	snprintf(f->lp.ca_name, sizeof(f->lp.ca_name), "mlx5_0");
	f->lp.portnum = 1;
	f->lp.port_guid = 0x0002c90300000020ull;
	f->lq.have_portinfo = 1;
	f->lq.pi.lid = 2;
	f->lq.pi.state = 4;
	f->stats.notifications_sent = 3;
	f->snap = s;
	snprintf(f->rows, sizeof(f->rows), "test_mib-%d.snmp-rows",
		 (int)getpid());
	unlink(f->rows);
	f->mib = ibw_mib_new(get_snap, s, &f->lp, &f->lq, &f->stats, f->rows);
	assert_non_null(f->mib);
	cur = f;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	ibw_mib_free(f->mib);
	ibw_snapshot_unref(f->snap);
	unlink(f->rows);
	free(f);
	cur = NULL;
	return 0;
}

static netsnmp_variable_list *query(struct fx *f, const oid *o, size_t n,
				    int next, int *rc)
{
	netsnmp_variable_list *vb = NULL;

	snmp_varlist_add_variable(&vb, o, n, ASN_NULL, NULL, 0);
	assert_non_null(vb);
	*rc = ibw_mib_query(f->mib, vb, next);
	return vb;
}

/* ibwPortLookupIndex."GUID".port: the port's row, 0 without one */
static unsigned port_row(struct fx *f, uint64_t guid, unsigned port)
{
	oid o[MAX_OID_LEN];
	netsnmp_variable_list *vb;
	size_t n = ROOT_LEN;
	unsigned idx = 0;
	int rc;

	memcpy(o, root, sizeof(root));
	memcpy(o + n, (const oid[]){ 1, 9, 1, 3 }, 4 * sizeof(oid));
	n += 4;
	n += ibw_mib_guid_index(guid, o + n);
	o[n++] = port;
	vb = query(f, o, n, 0, &rc);
	if (!rc && vb->type == ASN_UNSIGNED)
		idx = (unsigned)*vb->val.integer;
	snmp_free_varbind(vb);
	return idx;
}

/* The node row whose ibwNodeGuid is @guid, by a walk of that column */
static unsigned node_row(struct fx *f, uint64_t guid)
{
	char want[19];
	oid o[MAX_OID_LEN];
	netsnmp_variable_list *vb;
	size_t n = ROOT_LEN + 4;
	unsigned idx = 0, k;
	int rc;

	ibw_mib_guid_str(guid, want);
	memcpy(o, root, sizeof(root));
	memcpy(o + ROOT_LEN, (const oid[]){ 1, 2, 1, 1 }, 4 * sizeof(oid));
	for (k = 0; k < 100 && !idx; k++) {
		vb = query(f, o, n, 1, &rc);
		if (rc || vb->name_length != ROOT_LEN + 5 ||
		    vb->name[ROOT_LEN + 3] != 1) {
			snmp_free_varbind(vb);
			break;
		}
		if (vb->val_len == 18 && !memcmp(vb->val.string, want, 18))
			idx = (unsigned)vb->name[ROOT_LEN + 4];
		memcpy(o, vb->name, vb->name_length * sizeof(oid));
		n = vb->name_length;
		snmp_free_varbind(vb);
	}
	return idx;
}

/*
 * ROOT.sub... plus an optional row and more sub-ids: with @guid, the row
 * of that node (in ibwNodeTable, arc 2) or of its port @tail[0] (which
 * the row replaces), found through the MIB itself.
 */
static size_t mkoid(oid *o, const oid *sub, size_t nsub, uint64_t guid,
		    const oid *tail, size_t ntail)
{
	size_t n = ROOT_LEN;
	oid row = 0;

	if (guid && nsub > 1 && sub[1] == 2) {
		row = node_row(cur, guid);
	} else if (guid) {
		assert_true(ntail > 0);
		row = port_row(cur, guid, (unsigned)tail[0]);
		tail++;
		ntail--;
	}
	memcpy(o, root, sizeof(root));
	memcpy(o + n, sub, nsub * sizeof(oid));
	n += nsub;
	if (guid) {
		assert_true(row > 0);
		o[n++] = row;
	}
	if (ntail)
		memcpy(o + n, tail, ntail * sizeof(oid));
	return n + ntail;
}

static void test_walk(void **state)
{
	struct fx *f = *state;
	netsnmp_variable_list *vb = NULL;
	oid prev[MAX_OID_LEN];
	size_t plen = ROOT_LEN;
	unsigned n = 0, percol[10][64] = { { 0 } };
	int rc;

	memcpy(prev, root, sizeof(root));
	snmp_varlist_add_variable(&vb, root, ROOT_LEN, ASN_NULL, NULL, 0);
	for (;;) {
		rc = ibw_mib_query(f->mib, vb, 1);
		if (rc)
			break;
		assert_true(snmp_oid_compare(vb->name, vb->name_length, prev,
					     plen) > 0);
		assert_memory_equal(vb->name, root, sizeof(root));
		assert_int_equal(vb->name[ROOT_LEN], 1);
		memcpy(prev, vb->name, vb->name_length * sizeof(oid));
		plen = vb->name_length;
		if (vb->name[ROOT_LEN + 1] < 10 && vb->name[ROOT_LEN + 3] < 64)
			percol[vb->name[ROOT_LEN + 1]]
			      [vb->name[ROOT_LEN + 1] == 1
				       ? vb->name[ROOT_LEN + 2]
				       : vb->name[ROOT_LEN + 3]]++;
		assert_true(++n < 100000);
	}
	assert_int_equal(rc, SNMP_ENDOFMIBVIEW);
	snmp_free_varbind(vb);
	/* 28 scalars; 3 nodes; switch ports 0-3 and two host ports; two
	 * endports (not the unresolved target); 1 path; 6 hops */
	assert_int_equal(percol[1][1] + percol[1][28], 2);
	assert_int_equal(percol[2][2], 3);
	assert_int_equal(percol[3][6], 6);
	assert_int_equal(percol[3][20], 5); /* counters: 5 ports have them */
	assert_int_equal(percol[3][11], 4); /* linked: sw 1, 2 and hosts */
	assert_int_equal(percol[4][7], 2);
	assert_int_equal(percol[5][2], 1);
	assert_int_equal(percol[6][3], 6);
	/* the GUIDs and port numbers are columns, the row indexes not */
	assert_int_equal(percol[2][1], 3);
	assert_int_equal(percol[3][1], 6);
	assert_int_equal(percol[3][2], 6);
	assert_int_equal(percol[3][53], 6); /* the node's name */
	assert_int_equal(percol[2][12] + percol[3][52], 0);
	assert_int_equal(percol[4][1] + percol[4][2], 4);
	/* two cables, every column */
	assert_int_equal(percol[8][1] + percol[8][2], 4);
	assert_int_equal(percol[8][3], 2);
	assert_int_equal(percol[8][16], 2);
	assert_int_equal(percol[8][20], 2);
	assert_int_equal(percol[7][1], 0);
	/* every port by its node GUID (and the CAs' by their port GUID) */
	assert_true(percol[9][3] >= 6);
	assert_int_equal(percol[9][1] + percol[9][2], 0);
}

/* ibwLinkTable: by the lower end, in index order (not the view's
 * worst-first order), both ends, health and reasons. */
static void test_link_table(void **state)
{
	struct fx *f = *state;
	netsnmp_variable_list *vb;
	oid o[MAX_OID_LEN];
	size_t n;
	int rc;

	/* ibwLinkHealth of (SW, 2): degraded(2) */
	n = mkoid(o, (const oid[]){ 1, 8, 1, 9 }, 4, SW, (const oid[]){ 2 }, 1);
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(vb->type, ASN_INTEGER);
	assert_int_equal(*vb->val.integer, 2);
	snmp_free_varbind(vb);
	/* its reasons and remote end */
	o[n - 2] = 10;
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(vb->val_len, 5);
	assert_memory_equal(vb->val.string, "width", 5);
	snmp_free_varbind(vb);
	o[n - 2] = 5;
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(vb->val_len, 18);
	assert_memory_equal(vb->val.string, "0x0002c90300000011", 18);
	snmp_free_varbind(vb);
	/* and the remote end's row */
	o[n - 2] = 20;
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(*vb->val.integer, port_row(f, H2, 1));
	snmp_free_varbind(vb);
	/* GETNEXT from the column's start: (SW, 1) first, ok(1) */
	n = mkoid(o, (const oid[]){ 1, 8, 1, 9 }, 4, 0, NULL, 0);
	vb = query(f, o, n, 1, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(vb->name[vb->name_length - 1], port_row(f, SW, 1));
	assert_int_equal(*vb->val.integer, 1);
	snmp_free_varbind(vb);
	/* ibwLinksDegraded.0 and ibwLinksOk.0 */
	n = mkoid(o, (const oid[]){ 1, 1, 30, 0 }, 4, 0, NULL, 0);
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(vb->type, ASN_GAUGE);
	assert_int_equal(*vb->val.integer, 1);
	snmp_free_varbind(vb);
	o[ROOT_LEN + 2] = 29;
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(*vb->val.integer, 1);
	snmp_free_varbind(vb);
	/* the remote end is no row of its own */
	n = mkoid(o, (const oid[]){ 1, 8, 1, 9 }, 4, H2, (const oid[]){ 1 }, 1);
	vb = query(f, o, n, 0, &rc);
	assert_int_not_equal(rc, 0);
	snmp_free_varbind(vb);
}

static void test_row_index(void **state)
{
	struct fx *f = *state;
	static const oid symerr[] = { 1, 3, 1, 20 };
	static const oid state_col[] = { 1, 3, 1, 6 };
	static const oid port1[] = { 1 };
	oid o[MAX_OID_LEN];
	netsnmp_variable_list *vb;
	size_t n;
	unsigned i;
	int rc;

	/* Given in (GUID, port) order: the switch's ports 0-3, then the
	 * hosts'; the nodes likewise. */
	for (i = 0; i < 4; i++)
		assert_int_equal(port_row(f, SW, i), i + 1);
	assert_int_equal(port_row(f, H1, 1), 5);
	assert_int_equal(port_row(f, H2, 1), 6);
	assert_int_equal(node_row(f, SW), 1);
	assert_int_equal(node_row(f, H2), 3);

	/* ports[3] of the fixture is host 1's port 1 */
	n = mkoid(o, symerr, 4, H1, port1, 1);
	assert_int_equal(n, ROOT_LEN + 4 + 1);
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(vb->type, ASN_COUNTER64);
	assert_int_equal(vb->val.counter64->high, 1);
	assert_int_equal(vb->val.counter64->low, 5000000000ull - 4294967296ull);
	snmp_free_varbind(vb);

	/* The lookup's GUID with a length prefix: no such instance. */
	memcpy(o, root, sizeof(root));
	memcpy(o + ROOT_LEN, (const oid[]){ 1, 9, 1, 3, 18 }, 5 * sizeof(oid));
	n = ROOT_LEN + 5 + ibw_mib_guid_index(H1, o + ROOT_LEN + 5);
	o[n++] = 1;
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, SNMP_NOSUCHINSTANCE);
	snmp_free_varbind(vb);

	/* A port that does not exist, a column that does not, the index
	 * column (not readable), a row past the last. */
	assert_int_equal(port_row(f, H1, 2), 0);
	n = mkoid(o, (const oid[]){ 1, 3, 1, 99 }, 4, H1, port1, 1);
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, SNMP_NOSUCHOBJECT);
	snmp_free_varbind(vb);
	n = mkoid(o, (const oid[]){ 1, 3, 1, 52 }, 4, H1, port1, 1);
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, SNMP_NOSUCHOBJECT);
	snmp_free_varbind(vb);
	n = mkoid(o, state_col, 4, 0, (const oid[]){ 7 }, 1);
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, SNMP_NOSUCHINSTANCE);
	snmp_free_varbind(vb);

	/* GETNEXT from the switch's last port lands on host 1's. */
	n = mkoid(o, state_col, 4, 0, (const oid[]){ 4 }, 1);
	vb = query(f, o, n, 1, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(vb->name_length, ROOT_LEN + 5);
	assert_int_equal(vb->name[ROOT_LEN + 4], 5);
	assert_int_equal(*vb->val.integer, 4); /* active */
	snmp_free_varbind(vb);
}

/* Two agents in turn on one row index file: what the first gave, the
 * second keeps; an index the file holds for a port is that port's, and
 * new ones come after the highest; a broken line costs only itself. */
static void test_rows_kept(void **state)
{
	struct fx *f = *state;
	char line[128];
	FILE *fp;
	int found = 0;

	ibw_mib_free(f->mib);
	fp = fopen(f->rows, "w");
	assert_non_null(fp);
	fprintf(fp, "ibwatch-snmp-rows 1\n"
		    "p 0x0002c90300000010 1 100\n"
		    "n 0x0002c90300000001 7\n"
		    "p 0x00zz 1 3\n"
		    "p 0x0002c90300000099 1 100\n"
		    "p 0x0002c90300000010 1 150\n");
	fclose(fp);
	f->mib = ibw_mib_new(get_snap, f->snap, &f->lp, &f->lq, &f->stats,
			     f->rows);
	assert_non_null(f->mib);
	/* the second claim on H1's port is dropped, but its 150 is not
	 * given again */
	assert_int_equal(port_row(f, H1, 1), 100);
	assert_int_equal(port_row(f, SW, 0), 151);
	assert_int_equal(port_row(f, SW, 3), 154);
	assert_int_equal(port_row(f, H2, 1), 155);
	assert_int_equal(node_row(f, SW), 7);
	assert_int_equal(node_row(f, H1), 8);

	/* the next agent reads what this one wrote */
	ibw_mib_free(f->mib);
	f->mib = ibw_mib_new(get_snap, f->snap, &f->lp, &f->lq, &f->stats,
			     f->rows);
	assert_non_null(f->mib);
	assert_int_equal(port_row(f, H2, 1), 155);
	assert_int_equal(port_row(f, SW, 0), 151);
	assert_int_equal(node_row(f, H2), 9);
	fp = fopen(f->rows, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		found += !strcmp(line, "p 0x0002c90300000011 1 155\n") ||
			 !strcmp(line, "n 0x0002c90300000011 9\n");
	fclose(fp);
	assert_int_equal(found, 2);
}

static void test_sparse_columns(void **state)
{
	struct fx *f = *state;
	oid o[MAX_OID_LEN];
	netsnmp_variable_list *vb;
	size_t n;
	int rc;

	/* Switch port 0 has no counters: the first symbol error instance
	 * is switch port 1. */
	n = mkoid(o, (const oid[]){ 1, 3, 1, 20 }, 4, 0, NULL, 0);
	vb = query(f, o, n, 1, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(vb->name[ROOT_LEN + 4], port_row(f, SW, 1));
	snmp_free_varbind(vb);
	/* Width of the down switch port 3: absent, so GETNEXT from port 2
	 * goes on to host 1. */
	n = mkoid(o, (const oid[]){ 1, 3, 1, 8 }, 4, SW, (const oid[]){ 2 }, 1);
	vb = query(f, o, n, 1, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(vb->name[ROOT_LEN + 4], port_row(f, H1, 1));
	assert_int_equal(*vb->val.integer, 2); /* width4x */
	snmp_free_varbind(vb);
}

static void test_values(void **state)
{
	struct fx *f = *state;
	oid o[MAX_OID_LEN];
	netsnmp_variable_list *vb;
	size_t n;
	int rc;

	/* ibwAgentSnapshotTime.0: DateAndTime, UTC */
	n = mkoid(o, (const oid[]){ 1, 1, 8, 0 }, 4, 0, NULL, 0);
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(vb->type, ASN_OCTET_STR);
	assert_int_equal(vb->val_len, 11);
	assert_memory_equal(vb->val.string,
			    "\x07\xea\x0b\x16\x00\x0b\x28\x00+\x00\x00", 11);
	snmp_free_varbind(vb);
	/* ibwAgentLocalPortGuid.0 */
	n = mkoid(o, (const oid[]){ 1, 1, 4, 0 }, 4, 0, NULL, 0);
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(vb->val_len, 18);
	assert_memory_equal(vb->val.string, "0x0002c90300000020", 18);
	snmp_free_varbind(vb);
	/* ibwEndportState of host 2: down(3); its window loss 60.00% */
	n = mkoid(o, (const oid[]){ 1, 4, 1, 7 }, 4, H2, (const oid[]){ 1 }, 1);
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(*vb->val.integer, 3);
	snmp_free_varbind(vb);
	n = mkoid(o, (const oid[]){ 1, 4, 1, 14 }, 4, H2, (const oid[]){ 1 },
		  1);
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(vb->type, ASN_GAUGE);
	assert_int_equal(*vb->val.integer, 6000);
	snmp_free_varbind(vb);
	/* ibwHopOutPort.1.1.2 (path 1, forward, hop 2) */
	n = mkoid(o, (const oid[]){ 1, 6, 1, 8, 1, 1, 2 }, 7, 0, NULL, 0);
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(*vb->val.integer, 2);
	snmp_free_varbind(vb);
	/* ibwNotificationsSent.0 */
	n = mkoid(o, (const oid[]){ 1, 1, 27, 0 }, 4, 0, NULL, 0);
	vb = query(f, o, n, 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(vb->val.counter64->low, 3);
	snmp_free_varbind(vb);
}

/* The varbind named root.@sub[.guid index][.@tail] in @vars, or NULL. */
static netsnmp_variable_list *find_var(netsnmp_variable_list *vars,
				       const oid *sub, size_t nsub,
				       uint64_t guid, const oid *tail,
				       size_t ntail)
{
	oid o[MAX_OID_LEN];
	size_t n = mkoid(o, sub, nsub, guid, tail, ntail);

	for (; vars; vars = vars->next_variable)
		if (!snmp_oid_compare(vars->name, vars->name_length, o, n))
			return vars;
	return NULL;
}

static unsigned count_vars(const netsnmp_variable_list *vars)
{
	unsigned n = 0;

	for (; vars; vars = vars->next_variable)
		n++;
	return n;
}

/* An integer-valued varbind: its type and value. */
static void assert_var_int(netsnmp_variable_list *vars, const oid *sub,
			   size_t nsub, uint64_t guid, const oid *tail,
			   size_t ntail, u_char type, long value)
{
	netsnmp_variable_list *v = find_var(vars, sub, nsub, guid, tail, ntail);

	assert_non_null(v);
	assert_int_equal(v->type, type);
	assert_int_equal(*v->val.integer, value);
}

static void assert_var_str(netsnmp_variable_list *vars, const oid *sub,
			   size_t nsub, uint64_t guid, const oid *tail,
			   size_t ntail, const char *value)
{
	netsnmp_variable_list *v = find_var(vars, sub, nsub, guid, tail, ntail);

	assert_non_null(v);
	assert_int_equal(v->type, ASN_OCTET_STR);
	assert_int_equal(v->val_len, strlen(value));
	assert_memory_equal(v->val.string, value, v->val_len);
}

static void test_notifications(void **state)
{
	struct fx *f = *state;
	struct ibw_event e;
	netsnmp_variable_list *vars, *v;
	oid want[MAX_OID_LEN];
	unsigned n = 0, lanes;

	memset(&e, 0, sizeof(e));
	e.kind = IBW_EVT_ENDPORT_STATE;
	e.node_guid = H2;
	e.port = 1;
	e.peer_guid = 0x0002c90300000021ull;
	e.old_value = IBW_EP_UP;
	e.new_value = IBW_EP_DOWN;
	snprintf(e.what, sizeof(e.what), "3 probes in a row unanswered");
	vars = ibw_mib_notification(f->mib, &e);
	assert_non_null(vars);
	/* snmpTrapOID.0 = ibwEndportDown */
	assert_int_equal(vars->name_length, 11);
	assert_int_equal(vars->type, ASN_OBJECT_ID);
	mkoid(want, (const oid[]){ 0, 1 }, 2, 0, NULL, 0);
	assert_int_equal(snmp_oid_compare(vars->val.objid,
					  vars->val_len / sizeof(oid), want,
					  ROOT_LEN + 2),
			 0);
	for (v = vars; v; v = v->next_variable)
		n++;
	assert_int_equal(n, 9);
	/* which port, as ibstat writes it */
	assert_var_str(vars, (const oid[]){ 1, 4, 1, 1 }, 4, H2,
		       (const oid[]){ 1 }, 1, "0x0002c90300000011");
	assert_var_int(vars, (const oid[]){ 1, 4, 1, 2 }, 4, H2,
		       (const oid[]){ 1 }, 1, ASN_UNSIGNED, 1);
	snmp_free_varbind(vars);

	/* Up after down: ibwEndportUp; unknown to up (start-up): none. */
	e.old_value = IBW_EP_DOWN;
	e.new_value = IBW_EP_UP;
	vars = ibw_mib_notification(f->mib, &e);
	assert_non_null(vars);
	assert_int_equal(vars->val.objid[ROOT_LEN + 1], 2);
	snmp_free_varbind(vars);
	e.old_value = IBW_EP_UNKNOWN;
	assert_null(ibw_mib_notification(f->mib, &e));

	memset(&e, 0, sizeof(e));
	e.kind = IBW_EVT_THRESHOLD_CROSSED;
	e.node_guid = H1;
	e.port = 1;
	e.old_value = 10;
	e.new_value = 12;
	snprintf(e.what, sizeof(e.what), "SymbolErrorCounter");
	vars = ibw_mib_notification(f->mib, &e);
	assert_non_null(vars);
	assert_int_equal(vars->val.objid[ROOT_LEN + 1], 4);
	snmp_free_varbind(vars);

	/* a cable's health: ibwLinkHealthChange with its 7 objects */
	memset(&e, 0, sizeof(e));
	e.kind = IBW_EVT_LINK_HEALTH_CHANGED;
	e.node_guid = SW;
	e.port = 2;
	e.peer_guid = H2;
	e.peer_port = 1;
	e.old_value = IBW_HEALTH_OK;
	e.new_value = IBW_HEALTH_DEGRADED;
	e.reasons = IBW_LR_BIT(IBW_LR_WIDTH) | IBW_LR_BIT(IBW_LR_RAW_BER);
	snprintf(e.detail, sizeof(e.detail), "%s",
		 "ok () -> degraded (width,raw_ber); lane 2 at sw port 2");
	vars = ibw_mib_notification(f->mib, &e);
	assert_non_null(vars);
	assert_int_equal(vars->val.objid[ROOT_LEN + 1], 6);
	n = lanes = 0;
	for (v = vars; v; v = v->next_variable) {
		n++;
		/* ibwLinkHealth.SW.2 = degraded(2) */
		if (v->name_length == ROOT_LEN + 5 &&
		    v->name[ROOT_LEN + 1] == 8 && v->name[ROOT_LEN + 3] == 9) {
			assert_int_equal(*v->val.integer, 2);
			assert_int_equal(v->name[ROOT_LEN + 4],
					 port_row(f, SW, 2));
		}
		/* ibwLinkBadLane.SW.2: the lanes of the event's detail */
		if (v->name_length == ROOT_LEN + 5 &&
		    v->name[ROOT_LEN + 1] == 8 && v->name[ROOT_LEN + 3] == 19) {
			assert_int_equal(v->val_len, 19);
			assert_memory_equal(v->val.string,
					    "lane 2 at sw port 2", 19);
			lanes++;
		}
	}
	assert_int_equal(n, 11);
	assert_int_equal(lanes, 1);
	assert_var_str(vars, (const oid[]){ 1, 8, 1, 1 }, 4, SW,
		       (const oid[]){ 2 }, 1, "0x0002c90300000001");
	snmp_free_varbind(vars);

	e.kind = IBW_EVT_NODE_ADDED;
	assert_null(ibw_mib_notification(f->mib, &e));
}

/* Our own port lost and back, and an endport found at another LID. */
static void test_notifications_local_moved(void **state)
{
	static const oid zero[] = { 0 }, one[] = { 1 };
	struct fx *f = *state;
	struct ibw_event e;
	netsnmp_variable_list *vars;
	const char *why = "found by its port, silent there yet";

	/* Lost, found down: ibwLocalPortLost (.0.8) with the local port's
	 * scalars, the event's state (the live query still says active)
	 * and ibwAgentSnapshotStale true. */
	memset(&e, 0, sizeof(e));
	e.kind = IBW_EVT_LOCAL_PORT_LOST;
	e.node_guid = 0x0002c90300000020ull;
	e.port = 1;
	e.old_value = IBW_PORT_DOWN;
	snprintf(e.what, sizeof(e.what), "down");
	vars = ibw_mib_notification(f->mib, &e);
	assert_non_null(vars);
	assert_int_equal(vars->val.objid[ROOT_LEN + 1], 8);
	assert_int_equal(count_vars(vars), 7);
	assert_var_str(vars, (const oid[]){ 1, 1, 2 }, 3, 0, zero, 1, "mlx5_0");
	assert_var_int(vars, (const oid[]){ 1, 1, 3 }, 3, 0, zero, 1,
		       ASN_UNSIGNED, 1);
	assert_var_str(vars, (const oid[]){ 1, 1, 4 }, 3, 0, zero, 1,
		       "0x0002c90300000020");
	assert_var_int(vars, (const oid[]){ 1, 1, 5 }, 3, 0, zero, 1,
		       ASN_UNSIGNED, 2);
	assert_var_int(vars, (const oid[]){ 1, 1, 6 }, 3, 0, zero, 1,
		       ASN_INTEGER, 1);
	assert_var_int(vars, (const oid[]){ 1, 1, 10 }, 3, 0, zero, 1,
		       ASN_INTEGER, 1);
	snmp_free_varbind(vars);

	/* Lost without any PortInfo ("unreachable"): state unknown(5). */
	e.old_value = 0;
	snprintf(e.what, sizeof(e.what), "unreachable");
	vars = ibw_mib_notification(f->mib, &e);
	assert_non_null(vars);
	assert_var_int(vars, (const oid[]){ 1, 1, 6 }, 3, 0, zero, 1,
		       ASN_INTEGER, 5);
	snmp_free_varbind(vars);

	/* Back after 4.2 s: ibwLocalPortBack (.0.9), active(4), and
	 * ibwNotifyLostDuration in milliseconds; no stale flag. */
	e.kind = IBW_EVT_LOCAL_PORT_BACK;
	e.old_value = IBW_PORT_ACTIVE;
	e.new_value = 4200;
	snprintf(e.what, sizeof(e.what), "active");
	vars = ibw_mib_notification(f->mib, &e);
	assert_non_null(vars);
	assert_int_equal(vars->val.objid[ROOT_LEN + 1], 9);
	assert_int_equal(count_vars(vars), 7);
	assert_var_int(vars, (const oid[]){ 1, 1, 6 }, 3, 0, zero, 1,
		       ASN_INTEGER, 4);
	assert_var_int(vars, (const oid[]){ 1, 7, 10 }, 3, 0, zero, 1,
		       ASN_UNSIGNED, 4200);
	assert_null(find_var(vars, (const oid[]){ 1, 1, 10 }, 3, 0, zero, 1));
	snmp_free_varbind(vars);
	/* ... a duration beyond 32 bits saturates */
	e.new_value = 1ull << 40;
	vars = ibw_mib_notification(f->mib, &e);
	assert_non_null(vars);
	assert_var_int(vars, (const oid[]){ 1, 7, 10 }, 3, 0, zero, 1,
		       ASN_UNSIGNED, (long)0xffffffffu);
	snmp_free_varbind(vars);

	/* Host 2 (LID 3 in the snapshot) found at LID 7: ibwEndportMoved
	 * (.0.10) with the new LID, not the snapshot's, and the old. */
	memset(&e, 0, sizeof(e));
	e.kind = IBW_EVT_ENDPORT_MOVED;
	e.node_guid = H2;
	e.port = 1;
	e.peer_guid = 0x0002c90300000021ull;
	e.old_value = 3;
	e.new_value = 7;
	snprintf(e.what, sizeof(e.what), "%s", why);
	vars = ibw_mib_notification(f->mib, &e);
	assert_non_null(vars);
	assert_int_equal(vars->val.objid[ROOT_LEN + 1], 10);
	assert_int_equal(count_vars(vars), 8);
	assert_var_str(vars, (const oid[]){ 1, 4, 1, 3 }, 4, H2, one, 1,
		       "0x0002c90300000021");
	assert_var_int(vars, (const oid[]){ 1, 4, 1, 4 }, 4, H2, one, 1,
		       ASN_UNSIGNED, 7);
	assert_var_str(vars, (const oid[]){ 1, 4, 1, 5 }, 4, H2, one, 1,
		       "node0002 HCA-1");
	assert_var_int(vars, (const oid[]){ 1, 7, 11 }, 3, 0, zero, 1,
		       ASN_UNSIGNED, 3);
	assert_var_str(vars, (const oid[]){ 1, 7, 12 }, 3, 0, zero, 1, why);
	snmp_free_varbind(vars);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_row_index, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rows_kept, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sparse_columns, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_notifications, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_notifications_local_moved,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_table, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
