/*
 * Discovery and a full counter sweep on the engine, as ibwatchd runs
 * them (engine defaults unless told). Prints one line per round for
 * each, ending with the CPU time the whole process (all its threads:
 * under the simulator also umad2sim's receiver and the kernel model's)
 * took for the round; tests/bench/sweep.sh runs it beside ibnetdiscover
 * and ibqueryerrors on the same fabric.
 *
 *   bench_sweep [--rounds N] [--window N] [--per-dest N]
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "counters.h"
#include "discover.h"
#include "engine.h"
#include "umad.h"
#include "walk.h"

static struct ibw_fabric *fab;

static void got_fabric(struct ibw_fabric *f, void *arg)
{
	ibw_fabric_unref(fab);
	fab = f;
}

static int swept;

/* CPU time (user + system) of the process so far, in microseconds. */
static uint64_t cpu_us(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static void on_swept(struct ibw_counters *c, void *arg)
{
	swept = 1;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "window", required_argument, NULL, 'w' },
		{ "per-dest", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct ibw_engine_config cfg = { 0, 0, 0, -1, 0, 0 };
	unsigned rounds = 5, r, i, nports = 0;
	struct ibw_local_port lp;
	struct ibw_transport *t;
	struct ibw_discover *d;
	struct ibw_counters *c;
	struct ibw_loop *loop;
	struct ibw_engine *e;
	char err[256];
	int ch;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (ch == 'r')
			rounds = (unsigned)atoi(optarg);
		else if (ch == 'w')
			cfg.max_inflight = (unsigned)atoi(optarg);
		else if (ch == 'p')
			cfg.max_per_dest = (unsigned)atoi(optarg);
		else
			return 2;
	}
	loop = ibw_loop_new();
	if (ibw_umad_open(NULL, 0, &t, &lp, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_sweep: %s\n", err);
		return 1;
	}
	e = ibw_engine_new(loop, t, &cfg);
	d = ibw_discover_new(e, NULL);
	c = ibw_counters_new(e, NULL, NULL);
	for (r = 0; r < rounds; r++) {
		uint64_t t0 = ibw_now_us(), c0 = cpu_us();

		if (ibw_discover_start(d, got_fabric, NULL) < 0 ||
		    walk_run_until_idle(loop, e, 120000) < 0) {
			fprintf(stderr, "bench_sweep: discovery failed\n");
			return 1;
		}
		printf("discovery %u nodes %.3f s %llu MADs %llu timeouts "
		       "cpu %.3f s\n",
		       fab->nnodes, (double)(ibw_now_us() - t0) / 1e6,
		       (unsigned long long)fab->sweep.mads,
		       (unsigned long long)fab->sweep.timeouts,
		       (double)(cpu_us() - c0) / 1e6);
		fflush(stdout);
	}
	for (i = 0, nports = 0; i < fab->nnodes; i++)
		nports += fab->nodes[i].ni.node_type == IBW_NODE_SWITCH
				  ? fab->nodes[i].ni.num_ports
				  : 1;
	for (r = 0; r < rounds; r++) {
		uint64_t t0 = ibw_now_us(), c0 = cpu_us();
		struct ibw_sweep_stats st;

		swept = 0;
		if (ibw_counters_sweep(c, fab, 0, on_swept, NULL) < 0 ||
		    walk_run_until_idle(loop, e, 120000) < 0 || !swept) {
			fprintf(stderr, "bench_sweep: counter sweep failed\n");
			return 1;
		}
		st = ibw_counters_last_sweep(c);
		printf("counters %u ports %.3f s %llu MADs %llu timeouts %u "
		       "unreachable cpu %.3f s\n",
		       nports, (double)(ibw_now_us() - t0) / 1e6,
		       (unsigned long long)st.mads,
		       (unsigned long long)st.timeouts,
		       ibw_counters_unreachable(c),
		       (double)(cpu_us() - c0) / 1e6);
		fflush(stdout);
	}
	ibw_engine_free(e);
	ibw_discover_free(d);
	ibw_counters_free(c);
	ibw_fabric_unref(fab);
	ibw_transport_close(t);
	ibw_loop_free(loop);
	return 0;
}
