// SPDX-License-Identifier: BSD-2-Clause
/*
 * Engine throughput: PortCounters to every port of the fabric (every
 * switch port and every CA port), with windows of 1, 16, 64 and 256
 * MADs in flight. Prints one line per window. Run it through
 * tests/bench/engine.sh, which builds the 2048-host fat tree.
 *
 *   bench_engine [--rounds N] [--repeat N] [--windows 1,16,64,256]
 *                [--per-dest N]
 *
 * A round sends PortCounters to every port --repeat times (default 10);
 * the line for a window reports the median of --rounds rounds (default
 * 5).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "engine.h"
#include "umad.h"
#include "walk.h"

struct target {
	uint16_t lid;
	uint8_t port;
};

static unsigned done_ok, done_fail;

static void on_done(const struct ibw_mad_done *d, void *arg)
{
	if (d->result == IBW_MAD_OK)
		done_ok++;
	else
		done_fail++;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "windows", required_argument, NULL, 'w' },
		{ "per-dest", required_argument, NULL, 'p' },
		{ "repeat", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	char windows[128] = "1,16,64,256", err[256], *tok;
	unsigned rounds = 5, per_dest = 64, ntargets = 0, repeat = 10, i;
	struct ibw_engine_config cfg = { .max_inflight = 64,
					 .max_per_dest = 64,
					 .timeout_ms = 500,
					 .retries = 2 };
	struct ibw_local_port lp;
	struct ibw_transport *t;
	struct ibw_loop *loop;
	struct ibw_engine *e;
	struct target *targets;
	struct walk w;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'r')
			rounds = (unsigned)atoi(optarg);
		else if (c == 'w')
			snprintf(windows, sizeof(windows), "%s", optarg);
		else if (c == 'p')
			per_dest = (unsigned)atoi(optarg);
		else if (c == 'n')
			repeat = (unsigned)atoi(optarg);
		else
			return 2;
	}
	if (rounds < 1 || rounds > 64 || repeat < 1) {
		fprintf(stderr, "bench_engine: rounds 1..64, repeat >= 1\n");
		return 2;
	}
	loop = ibw_loop_new();
	if (ibw_umad_open(NULL, 0, &t, &lp, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_engine: %s\n", err);
		return 1;
	}
	e = ibw_engine_new(loop, t, &cfg);
	if (walk_fabric(loop, e, &w, 120000) < 0 || w.errors) {
		fprintf(stderr, "bench_engine: walk failed\n");
		return 1;
	}
	targets = calloc(w.nnodes * 64 + 1, sizeof(*targets));
	for (i = 0; i < w.nnodes; i++) {
		struct walk_node *n = &w.nodes[i];
		unsigned p;

		if (n->ni.node_type == IBW_NODE_SWITCH) {
			for (p = 1; p <= n->ni.num_ports && p <= 64; p++) {
				targets[ntargets].lid = n->pi.lid;
				targets[ntargets++].port = (uint8_t)p;
			}
		} else {
			targets[ntargets].lid = n->pi.lid;
			targets[ntargets++].port = (uint8_t)n->ni.local_port;
		}
	}
	printf("fabric: %u nodes, %u ports; per-destination limit %u\n",
	       w.nnodes, ntargets, per_dest);
	printf("%8s %8s %10s %12s %8s\n", "window", "MADs", "seconds", "MAD/s",
	       "failed");
	for (tok = strtok(windows, ","); tok; tok = strtok(NULL, ",")) {
		unsigned win = (unsigned)atoi(tok), r;
		double secs[64];
		unsigned fails = 0, nmads = ntargets * repeat;

		ibw_engine_set_window(e, win, per_dest < win ? per_dest : win);
		for (r = 0; r < rounds; r++) {
			uint64_t t0 = ibw_now_us(), t1;
			uint8_t payload[IB_PC_DATA_SZ];

			done_ok = done_fail = 0;
			for (i = 0; i < nmads; i++) {
				const struct target *tg =
					&targets[i % ntargets];
				struct ibw_mad_req q;

				memset(&q, 0, sizeof(q));
				memset(payload, 0, sizeof(payload));
				mad_set_field(payload, 0, IB_PC_PORT_SELECT_F,
					      tg->port);
				ibw_dest_lid(&q.dest, tg->lid);
				q.mgmt_class = IBW_CLASS_PERF;
				q.method = IBW_METHOD_GET;
				q.attr_id = IBW_ATTR_PORT_COUNTERS;
				q.data = payload;
				q.data_len = sizeof(payload);
				q.retries = -1;
				q.cb = on_done;
				if (ibw_engine_submit(e, &q) < 0)
					done_fail++;
			}
			if (walk_run_until_idle(loop, e, 600000) < 0) {
				fprintf(stderr, "bench_engine: timed out\n");
				return 1;
			}
			t1 = ibw_now_us();
			secs[r] = (double)(t1 - t0) / 1e6;
			fails += done_fail;
		}
		qsort(secs, rounds, sizeof(secs[0]), cmp_double);
		printf("%8u %8u %10.3f %12.0f %8u\n", win, nmads,
		       secs[rounds / 2], nmads / secs[rounds / 2], fails);
		fflush(stdout);
	}
	free(targets);
	walk_free(&w);
	ibw_engine_free(e);
	ibw_transport_close(t);
	ibw_loop_free(loop);
	return 0;
}
