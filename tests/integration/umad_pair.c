// SPDX-License-Identifier: BSD-2-Clause
/*
 * The SMI/GSI pair on the simulated fabric: the local port opened twice,
 * once for SMPs alone and once for every other MAD, as a planarized
 * HCA's two devices are (core/transport_pair.c). The discovery runs on
 * it as on one device and finds what ibnetdiscover finds; PerfMgt reads
 * and SA queries are answered; and every SMP went through the first
 * device, every other MAD through the second. Runs under the
 * simulator's preload (with-fabric.sh); the reference tool inherits it.
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

#include "codec.h"
#include "engine.h"
#include "localport.h"
#include "sa.h"
#include "transport_pair.h"
#include "umad.h"
#include "walk.h"

static struct ibw_loop *loop;
static struct ibw_transport *tr;
static struct ibw_engine *eng;
static struct ibw_local_port lp;

static int group_setup(void **state)
{
	struct ibw_local_port one;
	struct ibw_transport *t1;
	char err[512];

	(void)state;
	/* the local CA and port, as a plain open finds them */
	if (ibw_umad_open(NULL, 0, &t1, &one, err, sizeof(err)) < 0) {
		fprintf(stderr, "open: %s\n", err);
		return -1;
	}
	ibw_transport_close(t1);
	if (ibw_umad_open_pair(one.ca_name, one.portnum, one.ca_name,
			       one.portnum, 0, &tr, &lp, err,
			       sizeof(err)) < 0) {
		fprintf(stderr, "open pair: %s\n", err);
		return -1;
	}
	loop = ibw_loop_new();
	eng = loop ? ibw_engine_new(loop, tr, NULL) : NULL;
	return eng ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	ibw_engine_free(eng);
	ibw_transport_close(tr);
	ibw_loop_free(loop);
	return 0;
}

static void on_local(struct ibw_localport_query *q, void *arg)
{
	(void)q;
	*(int *)arg = 1;
}

struct pma {
	int done;
	enum ibw_mad_result result;
};

static void on_pma(const struct ibw_mad_done *d, void *arg)
{
	struct pma *p = arg;

	p->done = 1;
	p->result = d->result;
}

struct sa {
	int done;
	struct ibw_sa_lid r;
};

static void on_sa(const struct ibw_sa_lid *r, void *arg)
{
	struct sa *s = arg;

	s->done = 1;
	s->r = *r;
}

static void test_pair_works_as_one_device(void **state)
{
	struct ibw_localport_query q;
	uint64_t sent[2], recvd[2], before[2], rbefore[2];
	struct ibw_fabric *f;
	struct ibw_mad_req r;
	struct pma pm = { 0 };
	struct sa sq = { 0 };
	char cmd[256], line[256];
	unsigned ref = 0;
	int done = 0;
	FILE *p;

	(void)state;
	assert_string_equal(lp.smi_ca_name, lp.ca_name);
	assert_int_equal(lp.smi_portnum, lp.portnum);
	assert_true(ibw_transport_pair_counts(tr, before, rbefore));

	/* SMPs: the local port's own view, then a whole discovery */
	assert_int_equal(
		ibw_localport_query(eng, lp.portnum, &q, on_local, &done), 0);
	assert_int_equal(walk_run_until_idle(loop, eng, 5000), 0);
	assert_true(done && q.have_portinfo && q.have_nodeinfo);
	f = walk_discover(loop, eng, 30000);
	assert_non_null(f);
	p = popen("ibnetdiscover 2>/dev/null", "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		ref += !strncmp(line, "Switch\t", 7) ||
		       !strncmp(line, "Ca\t", 3);
	pclose(p);
	assert_true(ref > 2);
	assert_int_equal(f->nnodes, ref);
	ibw_fabric_unref(f);

	/* a GMP: PerfMgt ClassPortInfo of the local port */
	memset(&r, 0, sizeof(r));
	ibw_dest_lid(&r.dest, q.pi.lid);
	r.mgmt_class = IBW_CLASS_PERF;
	r.method = IBW_METHOD_GET;
	r.attr_id = IBW_ATTR_CLASS_PORT_INFO;
	r.cb = on_pma;
	r.arg = &pm;
	assert_int_equal(ibw_engine_submit(eng, &r), 0);
	/* and an SA query: our own port's LID by its GUID */
	assert_int_equal(ibw_sa_lid_by_guid(eng, q.pi.sm_lid, lp.port_guid,
					    on_sa, &sq),
			 0);
	assert_int_equal(walk_run_until_idle(loop, eng, 5000), 0);
	assert_true(pm.done && sq.done);
	assert_int_equal(pm.result, IBW_MAD_OK);
	assert_int_equal(sq.r.result, IBW_MAD_OK);
	assert_int_equal(sq.r.lid, q.pi.lid);

	/* every SMP through the SMI device, the rest through the GSI one */
	assert_true(ibw_transport_pair_counts(tr, sent, recvd));
	snprintf(cmd, sizeof(cmd),
		 "SMI %llu sent %llu received, GSI %llu "
		 "sent %llu received",
		 (unsigned long long)(sent[0] - before[0]),
		 (unsigned long long)(recvd[0] - rbefore[0]),
		 (unsigned long long)(sent[1] - before[1]),
		 (unsigned long long)(recvd[1] - rbefore[1]));
	print_message("%s\n", cmd);
	assert_true(sent[0] - before[0] > ref);
	assert_int_equal(sent[1] - before[1], 2);
	assert_int_equal(recvd[1] - rbefore[1], 2);
	assert_int_equal(recvd[0] - rbefore[0], sent[0] - before[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pair_works_as_one_device),
	};

	return cmocka_run_group_tests_name("umad_pair", tests, group_setup,
					   group_teardown);
}
