// SPDX-License-Identifier: BSD-2-Clause
/*
 * Trace latency and MADs: cold (no discovery, nothing cached: every
 * hop asked of the fabric, as `ibwatchd --trace` does) and warm (the
 * last discovery's node facts and the LFT blocks cached, as the daemon
 * traces), to the LIDs given on the command line. One line per trace.
 *
 *   bench_trace LID...
 */
#include <stdio.h>
#include <stdlib.h>

#include "discover.h"
#include "engine.h"
#include "trace.h"
#include "umad.h"
#include "walk.h"

static struct ibw_fabric *fab;
static struct ibw_trace last;
static int done;

static void on_trace(const struct ibw_trace *t, void *arg)
{
	last = *t;
	done = 1;
}

static int run(struct ibw_loop *loop, struct ibw_tracer *tr, uint16_t lid,
	       const char *kind)
{
	uint64_t t0 = ibw_now_us();

	done = 0;
	if (ibw_trace_start(tr, lid, 0, 10000, on_trace, NULL) < 0)
		return -1;
	while (!done)
		ibw_loop_run_once(loop, 100000);
	printf("%s lid %u: %s, %u hops, %u MADs, %.3f ms\n", kind, lid,
	       ibw_trace_status_str(last.fwd.status), last.fwd.nhops, last.mads,
	       (double)(ibw_now_us() - t0) / 1000.0);
	return last.fwd.status == IBW_TRACE_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct ibw_local_port lp;
	struct ibw_transport *t;
	struct ibw_tracer *cold, *warm;
	struct ibw_loop *loop;
	struct ibw_engine *e;
	char err[256];
	int i, rc = 0;

	loop = ibw_loop_new();
	if (ibw_umad_open(NULL, 0, &t, &lp, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_trace: %s\n", err);
		return 1;
	}
	e = ibw_engine_new(loop, t, NULL);
	fab = walk_discover(loop, e, 120000);
	if (!fab)
		return 1;
	cold = ibw_tracer_new(e, (unsigned)lp.portnum);
	warm = ibw_tracer_new(e, (unsigned)lp.portnum);
	ibw_tracer_set_fabric(warm, fab);
	for (i = 1; i < argc; i++) {
		uint16_t lid = (uint16_t)atoi(argv[i]);

		rc |= run(loop, cold, lid, "cold");
		rc |= run(loop, warm, lid, "first"); /* fills the LFT cache */
		rc |= run(loop, warm, lid, "warm");
	}
	ibw_engine_free(e);
	ibw_tracer_free(cold);
	ibw_tracer_free(warm);
	ibw_fabric_unref(fab);
	ibw_transport_close(t);
	ibw_loop_free(loop);
	return rc ? 1 : 0;
}
