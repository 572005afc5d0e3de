// SPDX-License-Identifier: BSD-2-Clause
/*
 * One table describes a counter (core/ctr_desc.c): walk it, and every
 * front end names every row. On the fixture snapshot, whose ports have
 * every counter read: /api/v1/ports' counters.totals has the row's JSON
 * key (tree and writer), /metrics the row's series with the port's
 * total, IBWATCH-MIB's port table the row's column with that total, and
 * mib/IBWATCH-MIB.txt's object at that column says which JSON key it
 * is. A counter added to the enum without its row, its series, its
 * column or its MIB object fails here.
 */
#define _GNU_SOURCE /* memmem */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mib.h" /* net-snmp's headers first: see its xdump note */

#define xdump ibw_libibmad_xdump
#include "json.h"
#include "json_counters.h"
#include "prom.h"
#include "render_fx.h"
#include "snapfixture.h"
#undef xdump

static const oid root[] = { IBW_MIB_ROOT };
#define ROOT_LEN OID_LENGTH(root)

/* the fixture's switch, port 1: ports[0], every total its counter's
 * number */
#define SW 0x0002c90300000001ull

static struct ibw_snapshot *get_snap(void *arg)
{
	return ibw_snapshot_ref(arg);
}

static void test_rows_are_whole(void **state)
{
	unsigned c, d;

	(void)state;
	for (c = 0; c < IBW_CTR_MAX; c++) {
		const struct ibw_ctr_desc *x = ibw_ctr_desc(c);

		assert_non_null(x->name);
		assert_non_null(x->key);
		assert_non_null(x->metric);
		assert_true(x->mib_col >= 20);
		assert_int_equal(ibw_ctr_lookup(x->name), c);
		assert_int_equal(ibw_ctr_lookup(x->key), c);
		assert_int_equal(ibw_ctr_by_mib_col(x->mib_col), c);
		/* a detail counter comes from its attribute, the others
		 * from PortCounters or PortCountersExtended */
		assert_true(c >= IBW_CTR_NBASE
				    ? x->detail_attr != 0
				    : x->pc_field >= 0 || x->ext_field >= 0);
		for (d = 0; d < c; d++) {
			assert_string_not_equal(x->key, ibw_ctr_desc(d)->key);
			assert_string_not_equal(x->metric,
						ibw_ctr_desc(d)->metric);
		}
	}
}

static void test_json_names_every_row(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	const struct ibw_port_ctrs *pc;
	json_t *o, *tot;
	struct ibw_jw w;
	unsigned c;

	(void)state;
	assert_int_equal(ibw_snapshot_seal(s), 0);
	pc = ibw_snapshot_port(s, SW, 1);
	assert_non_null(pc);
	o = ibw_json_counters(pc);
	tot = json_object_get(o, "totals");
	ibw_jw_init(&w);
	ibw_json_write_counters(&w, pc);
	assert_int_equal(w.err, 0);
	for (c = 0; c < IBW_CTR_MAX; c++) {
		const char *k = ibw_ctr_desc(c)->key;
		char want[128];

		assert_int_equal(json_integer_value(json_object_get(tot, k)),
				 ibw_ctr_val(pc, c)->total);
		snprintf(want, sizeof(want), "\"%s\": %" PRIu64, k,
			 ibw_ctr_val(pc, c)->total);
		if (!strstr(w.buf, want))
			fail_msg("the written counters have no %s: %.300s",
				 want, w.buf);
	}
	ibw_jw_release(&w);
	json_decref(o);
	ibw_snapshot_unref(s);
}

static void test_metrics_name_every_row(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_prom_opts o = { 0 };
	const struct ibw_port_ctrs *pc;
	size_t len;
	char *text;
	unsigned c;

	(void)state;
	assert_int_equal(ibw_snapshot_seal(s), 0);
	pc = ibw_snapshot_port(s, SW, 1);
	o.rcv_err = 1; /* the detail counters' series too */
	text = ibw_prom_render(s, NULL, T0, &o, &len);
	assert_non_null(text);
	for (c = 0; c < IBW_CTR_MAX; c++) {
		const struct ibw_ctr_desc *d = ibw_ctr_desc(c);
		char want[256];

		snprintf(want, sizeof(want),
			 "\n%s_switch_port_%s_total{guid=\"0x%016" PRIx64
			 "\",port=\"1\"} %" PRIu64 "\n",
			 d->ibwatch_metric ? "ibwatch" : "infiniband",
			 d->metric, (uint64_t)SW, ibw_ctr_val(pc, c)->total);
		if (!strstr(text, want))
			fail_msg("/metrics has no %s", want + 1);
	}
	free(text);
	ibw_snapshot_unref(s);
}

static void test_mib_names_every_row(void **state)
{
	struct ibw_snapshot *s = ibw_test_snapshot();
	struct ibw_local_port lp = { 0 };
	struct ibw_localport_query lq = { 0 };
	struct ibw_mib_stats st = { 0 };
	const struct ibw_port_ctrs *pc;
	struct ibw_mib *m;
	char path[512], *mib;
	unsigned c, row;

	(void)state;
	assert_int_equal(ibw_snapshot_seal(s), 0);
	pc = ibw_snapshot_port(s, SW, 1);
	m = ibw_mib_new(get_snap, s, &lp, &lq, &st, NULL);
	assert_non_null(m);
	/* rows are given in (GUID, port) order: the switch's port 0 is 1 */
	row = 2;
	snprintf(path, sizeof(path), "%s/mib/IBWATCH-MIB.txt", SOURCE_DIR);
	mib = slurp(path);
	assert_non_null(mib);
	for (c = 0; c < IBW_CTR_MAX; c++) {
		const struct ibw_ctr_desc *d = ibw_ctr_desc(c);
		netsnmp_variable_list *vb = NULL;
		oid o[MAX_OID_LEN];
		char at[64], key[96];
		const char *end, *obj;

		memcpy(o, root, sizeof(root));
		o[ROOT_LEN] = 1;
		o[ROOT_LEN + 1] = 3;
		o[ROOT_LEN + 2] = 1;
		o[ROOT_LEN + 3] = d->mib_col;
		o[ROOT_LEN + 4] = row;
		snmp_varlist_add_variable(&vb, o, ROOT_LEN + 5, ASN_NULL, NULL,
					  0);
		assert_int_equal(ibw_mib_query(m, vb, 0), 0);
		assert_int_equal(vb->type, ASN_COUNTER64);
		assert_int_equal(((uint64_t)vb->val.counter64->high << 32) |
					 vb->val.counter64->low,
				 ibw_ctr_val(pc, c)->total);
		snmp_free_varbind(vb);
		/* the MIB's object at that column names the JSON key */
		snprintf(at, sizeof(at), "::= { ibwPortEntry %u }", d->mib_col);
		end = strstr(mib, at);
		if (!end)
			fail_msg("IBWATCH-MIB has no ibwPortEntry %u",
				 d->mib_col);
		for (obj = end; obj > mib && strncmp(obj, "OBJECT-TYPE", 11);
		     obj--)
			;
		snprintf(key, sizeof(key), "counters.totals.%s", d->key);
		if (!memmem(obj, (size_t)(end - obj), key, strlen(key)))
			fail_msg(
				"ibwPortEntry %u's DESCRIPTION does not name %s",
				d->mib_col, key);
	}
	free(mib);
	ibw_mib_free(m);
	ibw_snapshot_unref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_are_whole),
		cmocka_unit_test(test_json_names_every_row),
		cmocka_unit_test(test_metrics_name_every_row),
		cmocka_unit_test(test_mib_names_every_row),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
