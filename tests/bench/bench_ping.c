// SPDX-License-Identifier: BSD-2-Clause
/*
 * One ping round to every CA port of the fabric by pma (PerfMgt
 * ClassPortInfo), as the pinger sends it: round time and MAD rate.
 *
 *   bench_ping [--rounds N] [--method pma|smp]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discover.h"
#include "engine.h"
#include "ping.h"
#include "umad.h"
#include "walk.h"

static struct ibw_fabric *fab;
static int round_done;

static void on_round(struct ibw_pinger *p, void *arg)
{
	round_done = 1;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "method", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	struct ibw_ping_opts po;
	struct ibw_local_port lp;
	struct ibw_transport *t;
	struct ibw_pinger *p;
	struct ibw_loop *loop;
	struct ibw_engine *e;
	unsigned rounds = 5, r, n, i, up;
	char err[256];
	int c;

	memset(&po, 0, sizeof(po));
	po.method = IBW_PING_PMA;
	po.interval_us = 3600000000ull; /* rounds only, no schedule */
	po.timeout_ms = 500;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'r')
			rounds = (unsigned)atoi(optarg);
		else if (c == 'm' && ibw_ping_method_parse(optarg, &po.method))
			return 2;
		else if (c != 'm')
			return 2;
	}
	loop = ibw_loop_new();
	if (ibw_umad_open(NULL, 0, &t, &lp, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_ping: %s\n", err);
		return 1;
	}
	e = ibw_engine_new(loop, t, NULL);
	fab = walk_discover(loop, e, 120000);
	if (!fab)
		return 1;
	p = ibw_pinger_new(e, NULL, &po);
	ibw_pinger_update(p, fab, NULL, NULL);
	ibw_pinger_endports(p, &n);
	printf("%u endports, method %s, engine window at its defaults\n", n,
	       ibw_ping_method_str(po.method));
	for (r = 0; r < rounds; r++) {
		uint64_t t0 = ibw_now_us();
		double secs;
		const struct ibw_endport *eps;

		round_done = 0;
		if (ibw_pinger_round(p, on_round, NULL) < 0)
			return 1;
		while (!round_done && ibw_now_us() - t0 < 60000000u)
			ibw_loop_run_once(loop, 100000);
		secs = (double)(ibw_now_us() - t0) / 1e6;
		eps = ibw_pinger_endports(p, &n);
		for (i = 0, up = 0; i < n; i++)
			up += eps[i].received == r + 1;
		printf("round %u: %.3f s, %.0f MAD/s, %u of %u answered\n",
		       r + 1, secs, n / secs, up, n);
		fflush(stdout);
	}
	ibw_engine_free(e);
	ibw_pinger_free(p);
	ibw_fabric_unref(fab);
	ibw_transport_close(t);
	ibw_loop_free(loop);
	return 0;
}
