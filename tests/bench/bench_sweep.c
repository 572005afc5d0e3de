// SPDX-License-Identifier: BSD-2-Clause
/*
 * Discovery and a full counter sweep on the engine, as ibwatchd runs
 * them (engine defaults unless told). Prints one line per round for
 * each; tests/bench/sweep.sh runs it beside ibnetdiscover and
 * ibqueryerrors on the same fabric.
 *
 *   bench_sweep [--rounds N] [--counter-rounds N] [--window N]
 *               [--per-dest N] [--peer-pid PID] [--links]
 *               [--counter-check always|in-flux]
 *
 * --rounds discoveries, then --counter-rounds counter sweeps (default:
 * as many as discoveries); the first counter sweep is cold (it reads
 * every node's ClassPortInfo and meets every port for the first time).
 *
 * Each line ends with the CPU time the process used in that round (user
 * and system, all its threads: on the simulator that includes
 * umad2sim's receive thread), that time per 100,000 MADs, and the
 * round's start and end on CLOCK_MONOTONIC in seconds, so that a
 * profile taken with `perf record -k CLOCK_MONOTONIC` can be cut to one
 * round (`perf report --time START,END`). With --peer-pid, also the
 * CPU time process PID (ibsim) used in the round, from /proc/PID/stat:
 * on the simulator every MAD costs both sides.
 *
 * With --links, after each counter sweep the link view is built from it
 * as ibwatchd's monitor does for each snapshot (ibw_links_begin, every
 * cable once with both ends' PortInfo and counter totals, then
 * ibw_links_view): a "links" line gives the cables, the CPU time of the
 * updates and of the view on this thread (CLOCK_THREAD_CPUTIME_ID, so
 * not the umad bridge's), their sum against the sweep's process CPU and
 * wall time, and the growth of the peak RSS the first round caused.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"
#include "discover.h"
#include "engine.h"
#include "links.h"
#include "umad.h"
#include "walk.h"

static struct ibw_fabric *fab;

static void got_fabric(struct ibw_fabric *f, void *arg)
{
	ibw_fabric_unref(fab);
	fab = f;
}

static int swept;
static int peer_pid;

static double cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* User plus system seconds of process peer_pid, -1 if unknown. */
static double peer_cpu_s(void)
{
	unsigned long long ut, st;
	char path[64], buf[1024], *p;
	size_t n;
	FILE *f;

	if (!peer_pid)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", peer_pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* The command name may hold spaces: fields count from its ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%llu %llu",
			 &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

struct mark {
	double cpu, peer;
	uint64_t t0;
};

static struct mark mark_now(void)
{
	struct mark m;

	m.cpu = cpu_s();
	m.peer = peer_cpu_s();
	m.t0 = ibw_now_us();
	return m;
}

/* The tail of every line: CPU seconds of the round, per 100,000 MADs,
 * the peer's CPU seconds, and the round's bounds on CLOCK_MONOTONIC. */
static void print_cpu(const struct mark *m, uint64_t mads)
{
	double cpu = cpu_s() - m->cpu, peer = peer_cpu_s();

	printf(" cpu %.3f s %.3f s/100k MADs", cpu,
	       mads ? cpu * 1e5 / (double)mads : 0.0);
	if (peer >= 0 && m->peer >= 0)
		printf(" peer-cpu %.3f s %.3f s/100k MADs", peer - m->peer,
		       mads ? (peer - m->peer) * 1e5 / (double)mads : 0.0);
	printf(" mono %.6f %.6f\n", (double)m->t0 / 1e6,
	       (double)ibw_now_us() / 1e6);
}

static double thread_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static long maxrss_kb(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) < 0 ? 0 : ru.ru_maxrss;
}

/* One end as the monitor gives it (core/monitor.c, link_end). */
static void link_end(struct ibw_counters *c, const struct ibw_fnode *n,
		     unsigned p, struct ibw_link_end_in *e)
{
	static const int ctr[IBW_LERR_MAX] = {
		IBW_CTR_SYMBOL_ERRORS,
		IBW_CTR_LINK_ERROR_RECOVERY,
		IBW_CTR_LINK_DOWNED,
		IBW_CTR_RCV_ERRORS,
		IBW_CTR_RCV_REMOTE_PHYS_ERRORS,
		IBW_CTR_LOCAL_LINK_INTEGRITY_ERRORS,
		IBW_CTR_EXCESSIVE_BUFFER_OVERRUN_ERRORS,
		IBW_CTR_XMIT_DISCARDS,
	};
	const struct ibw_fport *fp = &n->ports[p];
	const struct ibw_port_ctrs *pc =
		ibw_counters_find(c, n->guid, (uint8_t)p);
	int sw = n->ni.node_type == IBW_NODE_SWITCH, k;

	memset(e, 0, sizeof(*e));
	e->guid = n->guid;
	e->port = (uint8_t)p;
	e->node_type = (uint8_t)n->ni.node_type;
	e->lid = sw ? n->lid : fp->pi.lid;
	e->name = n->desc;
	e->pi = &fp->pi;
	if (sw && n->nports && n->ports[0].have_pi)
		e->cap = &n->ports[0].pi;
	e->tick = -1;
	if (!pc || !pc->updated_us)
		return;
	e->have_ctrs = 1;
	e->ctr_us = pc->updated_us;
	for (k = 0; k < IBW_LERR_MAX; k++) {
		e->err[k] = pc->v[ctr[k]].total;
		if (pc->v[ctr[k]].saturated)
			e->saturated |= 1u << k;
	}
	e->xmit_wait = pc->v[IBW_CTR_XMIT_WAIT].total;
	e->xmit_bytes = pc->v[IBW_CTR_XMIT_DATA].total;
	e->fec = pc->fec; /* as core/monitor.c feeds it */
	if (pc->have_vl) {
		e->vl_mask = 0xffff;
		memcpy(e->vl_xmit_wait, pc->vl_xmit_wait,
		       sizeof(e->vl_xmit_wait));
	}
}

/* A round of the link view from @f and the counters; returns the cables
 * and sets the CPU milliseconds of the updates and of the view. */
static unsigned links_round(struct ibw_links *l, struct ibw_counters *c,
			    const struct ibw_fabric *f, double *upd_ms,
			    double *view_ms)
{
	struct ibw_link_end_in a, b;
	struct ibw_link_view *v;
	uint64_t now = ibw_realtime_us();
	unsigned i, p, n = 0;
	double t0 = thread_ms(), t1;

	ibw_links_begin(l, now);
	for (i = 0; i < f->nnodes; i++) {
		const struct ibw_fnode *nd = &f->nodes[i];

		for (p = 1; p < nd->nports; p++) {
			const struct ibw_fport *fp = &nd->ports[p];
			const struct ibw_fnode *r;
			const struct ibw_fport *rp;

			if (!fp->have_pi || !fp->remote_guid)
				continue;
			r = ibw_fabric_find(f, fp->remote_guid);
			if (!r || !fp->remote_port ||
			    fp->remote_port >= r->nports)
				continue;
			rp = &r->ports[fp->remote_port];
			if (!rp->have_pi ||
			    (rp->remote_guid == nd->guid &&
			     rp->remote_port == p &&
			     (r->guid < nd->guid ||
			      (r->guid == nd->guid && fp->remote_port < p))))
				continue;
			link_end(c, nd, p, &a);
			link_end(c, r, fp->remote_port, &b);
			if (ibw_links_update(l, &a, &b) == 0)
				n++;
		}
	}
	t1 = thread_ms();
	v = ibw_links_view(l, now);
	*upd_ms = t1 - t0;
	*view_ms = thread_ms() - t1;
	ibw_link_view_unref(v);
	return n;
}

static void on_swept(struct ibw_counters *c, void *arg)
{
	swept = 1;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "counter-rounds", required_argument, NULL, 'c' },
		{ "window", required_argument, NULL, 'w' },
		{ "per-dest", required_argument, NULL, 'p' },
		{ "peer-pid", required_argument, NULL, 'P' },
		{ "links", no_argument, NULL, 'L' },
		{ "counter-check", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	struct ibw_engine_config cfg = { .retries = -1 };
	unsigned rounds = 5, crounds = 0, r, i, nports = 0;
	struct ibw_local_port lp;
	struct ibw_transport *t;
	struct ibw_discover *d;
	struct ibw_counters *c;
	struct ibw_loop *loop;
	struct ibw_engine *e;
	struct ibw_links *links = NULL;
	/* the engine's retries, as with no options */
	struct ibw_counters_opts co = { .retries = -1 };
	char err[256];
	int ch, with_links = 0;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (ch == 'r')
			rounds = (unsigned)atoi(optarg);
		else if (ch == 'c')
			crounds = (unsigned)atoi(optarg);
		else if (ch == 'w')
			cfg.max_inflight = (unsigned)atoi(optarg);
		else if (ch == 'p')
			cfg.max_per_dest = (unsigned)atoi(optarg);
		else if (ch == 'P')
			peer_pid = atoi(optarg);
		else if (ch == 'L')
			with_links = 1;
		else if (ch == 'C' && !strcmp(optarg, "always"))
			co.check = IBW_CHECK_ALWAYS;
		else if (ch == 'C' && !strcmp(optarg, "in-flux"))
			co.check = IBW_CHECK_IN_FLUX;
		else if (ch == 'C') {
			fprintf(stderr, "bench_sweep: --counter-check: always "
					"or in-flux\n");
			return 2;
		} else
			return 2;
	}
	if (!crounds)
		crounds = rounds;
	loop = ibw_loop_new();
	if (ibw_umad_open(NULL, 0, &t, &lp, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_sweep: %s\n", err);
		return 1;
	}
	e = ibw_engine_new(loop, t, &cfg);
	d = ibw_discover_new(e, NULL);
	c = ibw_counters_new(e, NULL, &co);
	if (with_links && !(links = ibw_links_new(NULL)))
		return 1;
	for (r = 0; r < rounds; r++) {
		struct mark m = mark_now();

		if (ibw_discover_start(d, got_fabric, NULL) < 0 ||
		    walk_run_until_idle(loop, e, 120000) < 0) {
			fprintf(stderr, "bench_sweep: discovery failed\n");
			return 1;
		}
		printf("discovery %u nodes %.3f s %llu MADs %llu timeouts",
		       fab->nnodes, (double)(ibw_now_us() - m.t0) / 1e6,
		       (unsigned long long)fab->sweep.mads,
		       (unsigned long long)fab->sweep.timeouts);
		print_cpu(&m, fab->sweep.mads);
		fflush(stdout);
	}
	for (i = 0, nports = 0; i < fab->nnodes; i++)
		nports += fab->nodes[i].ni.node_type == IBW_NODE_SWITCH
				  ? fab->nodes[i].ni.num_ports
				  : 1;
	for (r = 0; r < crounds; r++) {
		struct mark m = mark_now();
		struct ibw_sweep_stats st;
		double sweep_cpu, sweep_wall, upd, view;
		long rss0;
		unsigned nl;

		swept = 0;
		if (ibw_counters_sweep(c, fab, 0, on_swept, NULL) < 0 ||
		    walk_run_until_idle(loop, e, 120000) < 0 || !swept) {
			fprintf(stderr, "bench_sweep: counter sweep failed\n");
			return 1;
		}
		st = ibw_counters_last_sweep(c);
		printf("counters %u ports %.3f s %llu MADs %llu timeouts %u "
		       "unreachable",
		       nports, (double)(ibw_now_us() - m.t0) / 1e6,
		       (unsigned long long)st.mads,
		       (unsigned long long)st.timeouts,
		       ibw_counters_unreachable(c));
		sweep_cpu = cpu_s() - m.cpu;
		sweep_wall = (double)(ibw_now_us() - m.t0) / 1e6;
		print_cpu(&m, st.mads);
		if (links) {
			rss0 = maxrss_kb();
			nl = links_round(links, c, fab, &upd, &view);
			printf("links %u cables update %.2f ms view %.2f ms "
			       "cpu %.2f ms = %.2f%% of the sweep's cpu, "
			       "%.2f%% of its time; peak rss +%ld kB\n",
			       nl, upd, view, upd + view,
			       sweep_cpu > 0 ? (upd + view) / 10 / sweep_cpu
					     : 0.0,
			       (upd + view) / 10 / sweep_wall,
			       maxrss_kb() - rss0);
		}
		fflush(stdout);
	}
	ibw_links_free(links);
	ibw_engine_free(e);
	ibw_discover_free(d);
	ibw_counters_free(c);
	ibw_fabric_unref(fab);
	ibw_transport_close(t);
	ibw_loop_free(loop);
	return 0;
}
