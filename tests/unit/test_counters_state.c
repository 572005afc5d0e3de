// SPDX-License-Identifier: BSD-2-Clause
/*
 * The counters' state file (corruption, an earlier version's file, the
 * links' lines) and the table shared with snapshots.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "counters.h"
#include "events.h"
#include "hash.h"
#include "links.h"
#include "transport_mem.h"

#include "ctr_fx.h"

void test_state_file_corruption(void **state)
{
	struct rig r;
	FILE *f;
	char buf[8192];
	size_t len;

	struct rig r2;
	struct fake fk = { .sym = 5, .xmit_data = 1000, .ext_xmit_pkts = 7 };
	const struct ibw_port_ctrs *p;
	char *line;

	rig_init(&r);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "ibwatch-counters 1\n");
	fclose(f);
	assert_int_equal(ibw_counters_load(r.c, path, NULL, NULL),
			 -EBADMSG); /* torn */
	assert_int_equal(ibw_counters_load(r.c, "/nonexistent/x", NULL, NULL),
			 -ENOENT);
	/* A file with a port line, read back whole. */
	sweep(&r, &fk);
	assert_int_equal(ibw_counters_save(r.c, path, NULL), 0);
	rig_init(&r2);
	assert_int_equal(ibw_counters_load(r2.c, path, NULL, NULL), 0);
	p = ibw_counters_find(r2.c, 0x10, 1);
	assert_non_null(p);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 5);
	rig_free(&r2);
	/* One changed byte in the port line that still parses (port 1
	 * becomes port 2): only the checksum can tell, and it refuses. */
	f = fopen(path, "r+");
	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = '\0';
	line = strstr(buf, "\np 0x0000000000000010 1 ");
	assert_non_null(line);
	line[22] = '2';
	rewind(f);
	fwrite(buf, 1, len, f);
	fclose(f);
	rig_init(&r2);
	assert_int_equal(ibw_counters_load(r2.c, path, NULL, NULL), -EBADMSG);
	assert_null(ibw_counters_find(r2.c, 0x10, 2));
	assert_null(ibw_counters_find(r2.c, 0x10, 1));
	rig_free(&r2);
	rig_free(&r);
}

/* A state file as ibwatchd wrote it before the counter code was split
 * (saved by test_sweep_threshold_stale_and_state above; format 1, before
 * the link lines): it loads, and saved again its port line comes out
 * byte for byte the same, in a format 2 file. */
void test_state_file_from_before(void **state)
{
	struct rig r;
	const struct ibw_port_ctrs *p;
	char want[4096], got[4096];
	size_t nwant, ngot;
	FILE *f;

	rig_init(&r);
	assert_int_equal(ibw_counters_load(r.c, FIXTURES "/counters-v1.state",
					   NULL, NULL),
			 0);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_non_null(p);
	assert_false(p->is_switch);
	assert_true(p->updated_us == 1795445122163045ull);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 1003);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].over_threshold);
	assert_true(p->v[IBW_CTR_XMIT_DATA].total == 400);
	assert_true(p->v[IBW_CTR_XMIT_DATA].raw == 100);
	assert_true(p->v[IBW_CTR_XMIT_DATA].from_ext);
	assert_true(p->v[IBW_CTR_XMIT_DATA].saturated);
	assert_true(p->v[IBW_CTR_XMIT_PKTS].total == 18446744073709551606ull);
	assert_false(ibw_ctr_val(p, IBW_CTR_LOCAL_PHYSICAL_ERRORS)->have_raw);

	assert_int_equal(ibw_counters_save(r.c, path, NULL), 0);
	f = fopen(FIXTURES "/counters-v1.state", "r");
	assert_non_null(f);
	nwant = fread(want, 1, sizeof(want), f);
	fclose(f);
	f = fopen(path, "r");
	assert_non_null(f);
	ngot = fread(got, 1, sizeof(got), f);
	fclose(f);
	assert_true(nwant > 0 && nwant < sizeof(want));
	assert_true(ngot > 0 && ngot < sizeof(got));
	want[nwant] = got[ngot] = '\0';
	assert_true(!strncmp(want, "ibwatch-counters 1\np ", 21));
	/* version 4: the generation (0 here) on the first line */
	assert_true(
		!strncmp(got, "ibwatch-counters 4 0000000000000000\np ", 38));
	/* the port lines, up to the end line */
	assert_non_null(strstr(want, "\nend 1 "));
	assert_non_null(strstr(got, "\nend 1 0 "));
	assert_int_equal(strstr(got, "\nend ") - got - 17,
			 strstr(want, "\nend ") - want);
	assert_memory_equal(got + 36, want + 19,
			    (size_t)(strstr(want, "\nend ") - want) - 19);
	rig_free(&r);
}

/* Format 2 carries the link windows: saved with the counters, read back
 * into another link set the same; a link line this version cannot read
 * costs that link only. */
void test_state_file_links(void **state)
{
	static const char line[] = "link 0x0000000000000100 1 "
				   "0x0000000000000200 3 1700000000000000 1 "
				   "e 1699999990000000 1 7 0 2 0 0 0 0 0 9 11 "
				   "e 1699999990000000 1 0 0 0 0 0 0 0 4 0 5";
	struct fake fk = { .sym = 5, .xmit_data = 1000, .ext_xmit_pkts = 7 };
	struct lines a = { { NULL }, 0 }, b = { { NULL }, 0 };
	struct ibw_links *l = ibw_links_new(NULL), *m = ibw_links_new(NULL);
	struct rig r, r2;
	unsigned bad = 99;
	uint64_t h = IBW_FNV1A64_INIT;
	char text[256];
	FILE *f;

	assert_non_null(l);
	assert_non_null(m);
	assert_int_equal(ibw_links_load_line(l, line), 0);
	rig_init(&r);
	sweep(&r, &fk);
	assert_int_equal(ibw_counters_save(r.c, path, l), 0);
	rig_init(&r2);
	assert_int_equal(ibw_counters_load(r2.c, path, m, &bad), 0);
	assert_int_equal(bad, 0);
	assert_non_null(ibw_counters_find(r2.c, 0x10, 1));
	assert_int_equal(ibw_links_count(m), 1);
	assert_int_equal(ibw_links_save(l, keep_line, &a), 0);
	assert_int_equal(ibw_links_save(m, keep_line, &b), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(b.n, 1);
	assert_string_equal(a.l[0], b.l[0]);
	free_lines(&a);
	free_lines(&b);
	rig_free(&r2);

	/* Whole (the hash holds) but with a link line from elsewhere. */
	snprintf(text, sizeof(text), "ibwatch-counters 2\nl link 0x1 x\n");
	h = ibw_fnv1a64(h, text, strlen(text));
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%send 0 1 %016llx\n", text, (unsigned long long)h);
	fclose(f);
	ibw_links_free(m);
	m = ibw_links_new(NULL);
	rig_init(&r2);
	assert_int_equal(ibw_counters_load(r2.c, path, m, &bad), 0);
	assert_int_equal(bad, 1);
	assert_int_equal(ibw_links_count(m), 0);
	rig_free(&r2);
	/* The count of link lines is checked like the ports'. */
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%send 0 2 %016llx\n", text, (unsigned long long)h);
	fclose(f);
	rig_init(&r2);
	assert_int_equal(ibw_counters_load(r2.c, path, m, &bad), -EBADMSG);
	rig_free(&r2);

	rig_free(&r);
	ibw_links_free(l);
	ibw_links_free(m);
}

/*
 * The shared table a snapshot holds: the counters' own records, not a
 * copy, while no sweep writes; a sweep writing while it is held leaves
 * it as it was (the writes go to a copy); once its last holder let go
 * the records are the counters' again without a copy; it outlives the
 * counters.
 */
void test_shared_table(void **state)
{
	struct rig r;
	struct fake fk;
	struct ibw_ctr_table *t1, *t2, *t3;
	const struct ibw_port_ctrs *tp, *own;
	unsigned n, m;

	(void)state;
	memset(&fk, 0, sizeof(fk));
	fk.sym = 3;
	rig_init(&r);
	sweep(&r, &fk);
	t1 = ibw_counters_table(r.c);
	assert_non_null(t1);
	n = ibw_ctr_table_n(t1);
	tp = ibw_ctr_table_at(t1, 0);
	m = ibw_counters_nports(r.c);
	own = ibw_counters_port_at(r.c, 0);
	assert_int_equal(n, 1);
	assert_int_equal(m, 1);
	assert_ptr_equal(tp, own);
	t2 = ibw_counters_table(r.c);
	assert_ptr_equal(t2, t1);
	ibw_ctr_table_unref(t2);

	fk.sym = 10;
	sweep(&r, &fk);
	own = ibw_counters_port_at(r.c, 0);
	assert_ptr_not_equal(own, tp);
	assert_true(own[0].v[IBW_CTR_SYMBOL_ERRORS].total == 10);
	assert_true(tp[0].v[IBW_CTR_SYMBOL_ERRORS].total == 3);
	ibw_ctr_table_unref(t1);

	/* Nobody holds the table any more: the sweep writes in place. */
	t3 = ibw_counters_table(r.c);
	tp = ibw_ctr_table_at(t3, 0);
	ibw_ctr_table_unref(t3);
	fk.sym = 12;
	sweep(&r, &fk);
	own = ibw_counters_port_at(r.c, 0);
	assert_ptr_equal(own, tp);
	assert_true(own[0].v[IBW_CTR_SYMBOL_ERRORS].total == 12);

	t3 = ibw_counters_table(r.c);
	rig_free(&r);
	n = ibw_ctr_table_n(t3);
	tp = ibw_ctr_table_at(t3, 0);
	assert_int_equal(n, 1);
	assert_true(tp[0].guid == 0x10 && tp[0].port == 1);
	ibw_ctr_table_unref(t3);
}
