// SPDX-License-Identifier: BSD-2-Clause
/*
 * SA queries against opensm on the simulated fabric: GUID and name to
 * LID, PathRecord, a cut multi-record answer reported as incomplete, and
 * capability selection (by the SA when its answer is whole, else from
 * discovery). LIDs are checked against discovery, which the discovery
 * test checks against ibnetdiscover, and against saquery.
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

#include "discover.h"
#include "engine.h"
#include "sa.h"
#include "umad.h"
#include "walk.h"

static struct ibw_loop *loop;
static struct ibw_transport *tr;
static struct ibw_engine *eng;
static struct ibw_local_port lp;
static struct ibw_fabric *fab;
static uint16_t sm_lid;

static int setup(void **state)
{
	char err[256];
	unsigned i;

	loop = ibw_loop_new();
	if (ibw_umad_open(NULL, 0, &tr, &lp, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	eng = ibw_engine_new(loop, tr, NULL);
	fab = walk_discover(loop, eng, 30000);
	if (!fab)
		return -1;
	for (i = 0; i < fab->nnodes; i++)
		if (fab->nodes[i].guid == fab->local_guid)
			sm_lid = fab->nodes[i].ports[lp.portnum].pi.sm_lid;
	return sm_lid ? 0 : -1;
}

static int teardown(void **state)
{
	ibw_fabric_unref(fab);
	ibw_engine_free(eng);
	ibw_transport_close(tr);
	ibw_loop_free(loop);
	return 0;
}

static struct ibw_sa_lid last_lid;
static int lid_done;

static void on_lid(const struct ibw_sa_lid *r, void *arg)
{
	last_lid = *r;
	lid_done = 1;
}

static void wait_lid(void)
{
	assert_int_equal(walk_run_until_idle(loop, eng, 5000), 0);
	assert_true(lid_done);
	lid_done = 0;
}

static const struct ibw_fnode *host(unsigned k)
{
	unsigned i, n = 0;

	for (i = 0; i < fab->nnodes; i++)
		if (fab->nodes[i].ni.node_type == IBW_NODE_CA && n++ == k)
			return &fab->nodes[i];
	return NULL;
}

static void test_guid_and_name_to_lid(void **state)
{
	unsigned k;

	for (k = 0; k < 20; k++) {
		const struct ibw_fnode *h = host(k * 13);
		const struct ibw_fport *p;

		if (!h)
			break;
		p = &h->ports[1];
		assert_int_equal(ibw_sa_lid_by_guid(eng, sm_lid, p->guid,
						    on_lid, NULL),
				 0);
		wait_lid();
		assert_int_equal(last_lid.result, IBW_MAD_OK);
		assert_int_equal(last_lid.lid, p->pi.lid);
		assert_int_equal(ibw_sa_lid_by_name(eng, sm_lid, h->desc,
						    on_lid, NULL),
				 0);
		wait_lid();
		assert_int_equal(last_lid.result, IBW_MAD_OK);
		assert_int_equal(last_lid.lid, p->pi.lid);
	}
	/* an unknown GUID: the SA says so (a status), no LID */
	assert_int_equal(ibw_sa_lid_by_guid(eng, sm_lid, 0xdeadbeefull, on_lid,
					    NULL),
			 0);
	wait_lid();
	assert_int_equal(last_lid.result, IBW_MAD_STATUS);
	assert_int_equal(last_lid.lid, 0);
}

static void test_name_to_lid_matches_saquery(void **state)
{
	const struct ibw_fnode *h = host(7);
	char cmd[128], out[8192], want[IBW_NAME_SIZE + 32];
	FILE *p;
	size_t n;

	assert_non_null(h);
	assert_int_equal(ibw_sa_lid_by_name(eng, sm_lid, h->desc, on_lid, NULL),
			 0);
	wait_lid();
	assert_int_equal(last_lid.result, IBW_MAD_OK);
	/* saquery's NodeRecord for that LID names the same node. (saquery
	 * -N NAME fetches the whole table, which the simulator cuts.) */
	snprintf(cmd, sizeof(cmd), "saquery NR %u 2>/dev/null", last_lid.lid);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	pclose(p);
	snprintf(want, sizeof(want), "NodeDescription.........%s", h->desc);
	if (!strstr(out, want))
		fail_msg("saquery NR %u does not name %s:\n%s", last_lid.lid,
			 h->desc, out);
}

static void test_path_record(void **state)
{
	uint8_t sgid[16], dgid[16];
	const struct ibw_fnode *h = host(11);
	uint64_t pfx = 0xfe80000000000000ull, g;
	int i;

	assert_non_null(h);
	for (i = 0; i < 8; i++) {
		sgid[i] = dgid[i] = (uint8_t)(pfx >> (56 - 8 * i));
		sgid[8 + i] = (uint8_t)(lp.port_guid >> (56 - 8 * i));
		g = h->ports[1].guid;
		dgid[8 + i] = (uint8_t)(g >> (56 - 8 * i));
	}
	assert_int_equal(
		ibw_sa_path_dlid(eng, sm_lid, sgid, dgid, on_lid, NULL), 0);
	wait_lid();
	assert_int_equal(last_lid.result, IBW_MAD_OK);
	assert_int_equal(last_lid.lid, h->ports[1].pi.lid);
}

static struct ibw_sa_result last_res;
static int res_done;

static void on_res(const struct ibw_sa_result *r, void *arg)
{
	last_res = *r;
	last_res.records = NULL;
	res_done = 1;
}

static void test_cut_table_is_incomplete(void **state)
{
	/* Every NodeRecord: far more than one MAD holds; umad2sim carries
	 * only the first segment. */
	assert_int_equal(ibw_sa_query(eng, sm_lid, IBW_METHOD_GET_TABLE,
				      IBW_SA_ATTR_NODE_RECORD, 0, 0, NULL, 0,
				      on_res, NULL),
			 0);
	assert_int_equal(walk_run_until_idle(loop, eng, 5000), 0);
	assert_true(res_done);
	assert_int_equal(last_res.result, IBW_MAD_OK);
	assert_false(last_res.complete);
	assert_true(last_res.nrecords < fab->nnodes);
}

static struct ibw_sa_selection last_sel;
static uint16_t sel_lids[4096];
static int sel_done;

static void on_sel(const struct ibw_sa_selection *s, void *arg)
{
	last_sel = *s;
	memcpy(sel_lids, s->lids, s->n * sizeof(uint16_t));
	last_sel.lids = sel_lids;
	sel_done = 1;
}

static unsigned count_capmask(uint32_t bits)
{
	unsigned i, p, n = 0;

	for (i = 0; i < fab->nnodes; i++) {
		const struct ibw_fnode *nd = &fab->nodes[i];

		for (p = 0; p < nd->nports; p++) {
			if (nd->ni.node_type == IBW_NODE_SWITCH ? p != 0
								: p == 0)
				continue;
			if (nd->ports[p].have_pi && nd->ports[p].pi.lid &&
			    (nd->ports[p].pi.capmask & bits) == bits)
				n++;
		}
	}
	return n;
}

static void select_bits(uint32_t bits)
{
	sel_done = 0;
	assert_int_equal(ibw_sa_select_by_capmask(eng, sm_lid, bits, fab,
						  on_sel, NULL),
			 0);
	assert_int_equal(walk_run_until_idle(loop, eng, 5000), 0);
	assert_true(sel_done);
}

static void test_select_by_capability(void **state)
{
	/* IsSM (bit 1): only opensm's port. One record fits one MAD. */
	select_bits(1u << 1);
	fprintf(stderr, "IsSM: SA match %s, source %s, %u ports\n",
		last_sel.sa_supports_match ? "supported" : "not supported",
		last_sel.source == IBW_SEL_SA ? "SA" : "discovery", last_sel.n);
	assert_int_equal(last_sel.n, 1);
	assert_int_equal(sel_lids[0], sm_lid);
	if (last_sel.sa_supports_match)
		assert_int_equal(last_sel.source, IBW_SEL_SA);

	/* A bit every CA has: the SA's table comes cut, so discovery's
	 * view is used, and says so. */
	select_bits(1u << 3);
	assert_int_equal(last_sel.n, count_capmask(1u << 3));
	assert_true(last_sel.n > 10);
	assert_int_equal(last_sel.source, IBW_SEL_DISCOVERY);
	if (last_sel.sa_supports_match)
		assert_true(last_sel.sa_incomplete);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guid_and_name_to_lid),
		cmocka_unit_test(test_name_to_lid_matches_saquery),
		cmocka_unit_test(test_path_record),
		cmocka_unit_test(test_cut_table_is_incomplete),
		cmocka_unit_test(test_select_by_capability),
	};

	return cmocka_run_group_tests_name("sa_fabric", tests, setup, teardown);
}
