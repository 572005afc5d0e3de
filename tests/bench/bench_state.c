// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the state file costs in bytes written over a day, without a
 * fabric: the port records of a tree (default 14,256 ports, 7,128
 * cables) read every 10 s through the real arithmetic of the totals
 * (ctr_math.h: ibw_ctr_update, ibw_ctr_threshold, ibw_ctr_near_max), the
 * link windows fed from them (links.h), and after every round the state
 * file written as ibwatchd writes it (ctr_journal.h), on a fake clock.
 *
 *   bench_state [--ports N] [--rounds N] [--step S] [--interval S]
 *               [--dir DIR]
 *
 * Defaults: 14,256 ports, 8,640 rounds 10 s apart (a day), the daemon's
 * state-interval, /tmp. --ports 57024 --step 60 --rounds 1440: the
 * largest tree over a day of minute sweeps (4 times the ports, a sixth
 * of the rounds: the same run time).
 *
 * The counters move as on a busy fabric, by the fake clock's seconds
 * (so that --step changes the sweeps, not the traffic): every port's
 * data and packet counters (PortCountersExtended, 64 bits) rise at its
 * own rate; one port in 20 waits to send (PortXmitWait, 32 bits in
 * PortCounters), so its counter is cleared at three quarters of its
 * range every 54 minutes as reset-counters does; one port in 100 counts
 * a symbol error every 10 s (crossing the threshold once), one in 500 a
 * link error recovery every 5 minutes (8 bits: cleared once a day); once
 * an hour another tool resets one port's PortCounters. At the end: bytes written to the snapshot and to the
 * journal, batches and snapshots, and the whole file's size (what writing
 * it after every sweep would cost), then the file read back and its
 * totals checked against the records'.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"
#include "ctr_journal.h"
#include "links.h"
#include "monitor.h"

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The counters read from PortCounters (errors, PortXmitWait) and from
 * PortCountersExtended (data, packets). */
#define N_PC (IBW_CTR_QP1_DROPPED + 1)
#define N_READ (IBW_CTR_MULTICAST_RCV_PKTS + 1)

static const int lerr_ctr[IBW_LERR_MAX] = {
	[IBW_LERR_SYMBOL] = IBW_CTR_SYMBOL_ERRORS,
	[IBW_LERR_LINK_RECOVERY] = IBW_CTR_LINK_ERROR_RECOVERY,
	[IBW_LERR_LINK_DOWNED] = IBW_CTR_LINK_DOWNED,
	[IBW_LERR_RCV] = IBW_CTR_RCV_ERRORS,
	[IBW_LERR_RCV_REMOTE_PHYS] = IBW_CTR_RCV_REMOTE_PHYS_ERRORS,
	[IBW_LERR_LOCAL_INTEGRITY] = IBW_CTR_LOCAL_LINK_INTEGRITY_ERRORS,
	[IBW_LERR_EXCESSIVE_OVERRUN] = IBW_CTR_EXCESSIVE_BUFFER_OVERRUN_ERRORS,
	[IBW_LERR_XMIT_DISCARDS] = IBW_CTR_XMIT_DISCARDS,
};

/* The hardware of port @i from @t0 to @t1 (seconds since the start):
 * what its counters show, whatever the sweeps' step. */
static void drive(uint64_t *hw, unsigned i, uint64_t t0, uint64_t t1)
{
	uint64_t rate = (i % 7 + 1) * 100000000ull; /* words/s */
	uint64_t dt = t1 - t0;
	int k;

	hw[IBW_CTR_XMIT_DATA] += rate * dt;
	hw[IBW_CTR_RCV_DATA] += rate / 10 * 9 * dt;
	hw[IBW_CTR_XMIT_PKTS] += rate / 640 * dt;
	hw[IBW_CTR_RCV_PKTS] += rate / 700 * dt;
	hw[IBW_CTR_UNICAST_XMIT_PKTS] += rate / 640 * dt;
	hw[IBW_CTR_UNICAST_RCV_PKTS] += rate / 700 * dt;
	if (i % 20 == 3)
		hw[IBW_CTR_XMIT_WAIT] += 1000000 * dt;
	if (i % 100 == 7)
		hw[IBW_CTR_SYMBOL_ERRORS] += t1 / 10 - t0 / 10;
	if (i % 500 == 11)
		hw[IBW_CTR_LINK_ERROR_RECOVERY] += t1 / 300 - t0 / 300;
	for (k = 0; k < N_PC; k++) {
		uint64_t max = ibw_ctr_max(ibw_ctr_desc(k)->pc_bits);

		if (max && hw[k] > max)
			hw[k] = max; /* saturated */
	}
}

/* A sweep's reading of port @p, folded as ctr_read.c folds it; a
 * counter near its maximum is cleared (the PerfSet acknowledged). */
static void sweep_port(struct ibw_port_ctrs *p, uint64_t *hw, uint64_t now)
{
	int k;

	for (k = 0; k < N_READ; k++) {
		const struct ibw_ctr_desc *d = ibw_ctr_desc(k);
		int ext = k >= N_PC;
		uint64_t max = ext ? 0 : ibw_ctr_max(d->pc_bits);
		struct ibw_ctr_val *v = &p->v[k];

		if (ibw_ctr_update(v, hw[k], max, d->scale, ext) ==
		    IBW_CTR_STEP_RESET) {
			p->resets++;
			p->discontinuity_us = now;
		}
		ibw_ctr_threshold(v, hw[k], d->threshold);
		if (ibw_ctr_near_max(hw[k], max)) {
			hw[k] = 0;
			v->reset_by_us = 1;
		}
	}
	p->updated_us = now;
}

static void end_in(struct ibw_link_end_in *x, const struct ibw_port_ctrs *p,
		   const struct ibw_portinfo *pi)
{
	int e;

	x->guid = p->guid;
	x->port = p->port;
	x->node_type = p->is_switch ? IBW_NODE_SWITCH : IBW_NODE_CA;
	x->pi = pi;
	x->have_ctrs = 1;
	x->ctr_us = p->updated_us;
	x->tick = -1;
	for (e = 0; e < IBW_LERR_MAX; e++)
		x->err[e] = p->v[lerr_ctr[e]].total;
	x->xmit_wait = p->v[IBW_CTR_XMIT_WAIT].total;
	x->xmit_bytes = p->v[IBW_CTR_XMIT_DATA].total;
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

/* The file read back: every port's totals as the records have them. */
static int check_load(const char *path, const struct ibw_port_ctrs *ports,
		      unsigned n)
{
	struct ibw_ctr_journal *j = ibw_ctr_journal_new(path, 1);
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_port_ctrs *back;
	unsigned nb, cap, i, k, bad = 0, wrong = 0;
	double t0 = cpu_ms();
	int rc;

	if (!j || !l)
		return -1;
	rc = ibw_ctr_journal_load(j, &back, &nb, &cap, l, &bad);
	if (rc < 0) {
		fprintf(stderr, "load: %s\n", strerror(-rc));
		return -1;
	}
	for (i = 0; i < nb; i++) {
		const struct ibw_port_ctrs *p = NULL;

		for (k = 0; k < n && !p; k++)
			if (ports[(i + k) % n].guid == back[i].guid &&
			    ports[(i + k) % n].port == back[i].port)
				p = &ports[(i + k) % n];
		/* the totals the next reading gives are those the records
		 * hold: total less raw times scale, flags, resets */
		for (k = 0; p && k < N_READ; k++) {
			const struct ibw_ctr_val *a = &p->v[k],
						 *b = &back[i].v[k];
			unsigned s = ibw_ctr_desc(k)->scale;

			wrong += a->total - a->raw * s !=
					 b->total - b->raw * s ||
				 a->reset_by_us != b->reset_by_us ||
				 a->resets != b->resets || b->raw > a->raw;
		}
		wrong += !p;
		ibw_ctr_port_release(&back[i]);
	}
	printf("read back: %u ports (%u expected), %zu links, %" PRIu64
	       " journal batches, %.0f ms CPU; ports whose totals differ: %u, "
	       "link lines refused: %u\n",
	       nb, n, ibw_links_count(l),
	       ibw_ctr_journal_stats(j).loaded_batches, cpu_ms() - t0, wrong,
	       bad);
	free(back);
	ibw_links_free(l);
	ibw_ctr_journal_free(j);
	return wrong || nb != n || bad ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ports", required_argument, NULL, 'p' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "step", required_argument, NULL, 's' },
		{ "interval", required_argument, NULL, 'i' },
		{ "dir", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	struct ibw_portinfo pi = { 0 };
	struct ibw_port_ctrs *ports;
	const struct ibw_port_ctrs **pv;
	struct ibw_link_end_in a, b;
	struct ibw_ctr_journal *j;
	struct ibw_ctr_journal_stats st;
	struct ibw_links *l;
	unsigned n = 14256, rounds = 8640, r, i, c;
	uint64_t step = 10000000, interval = IBW_STATE_INTERVAL_US;
	uint64_t now = 1795392000ull * 1000000, *hw, whole;
	const char *dir = "/tmp";
	char path[4096];
	double t0, save_ms = 0, worst = 0;
	int o, rc;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (o == 'p')
			n = (unsigned)strtoul(optarg, NULL, 10) & ~1u;
		else if (o == 'r')
			rounds = (unsigned)strtoul(optarg, NULL, 10);
		else if (o == 's')
			step = strtoull(optarg, NULL, 10) * 1000000ull;
		else if (o == 'i')
			interval = strtoull(optarg, NULL, 10) * 1000000ull;
		else if (o == 'd')
			dir = optarg;
		else
			return 2;
	}
	if (!n || !rounds || !step)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(path, sizeof(path), "%s/bench_state.%d", dir, (int)getpid());
	ports = calloc(n, sizeof(*ports));
	pv = calloc(n, sizeof(*pv));
	hw = calloc((size_t)n * IBW_CTR_MAX, sizeof(*hw));
	l = ibw_links_new(NULL);
	j = ibw_ctr_journal_new(path, interval);
	if (!ports || !pv || !hw || !l || !j)
		return 1;
	for (i = 0; i < n; i++)
		pv[i] = &ports[i];
	pi.state = IBW_PORT_ACTIVE;
	pi.phys_state = IBW_PHYS_LINKUP;
	pi.width_active = IBW_WIDTH_4X;
	pi.width_supported = IBW_WIDTH_1X | IBW_WIDTH_4X;
	pi.speed_active = pi.speed_supported = 1;
	for (c = 0; c < n / 2; c++) {
		/* 36-port switches to hosts, as in the fat trees */
		ports[2 * c].guid = 0x0002c90300000000ull + c / 36;
		ports[2 * c].port = (uint8_t)(c % 36 + 1);
		ports[2 * c].is_switch = 1;
		ports[2 * c + 1].guid = 0x0002c90400000000ull + c;
		ports[2 * c + 1].port = 1;
	}
	for (r = 0; r < rounds; r++, now += step) {
		uint64_t t0s = r ? (r - 1) * step / 1000000 : 0;
		uint64_t t1s = r * step / 1000000;

		if ((t1s + 1800) / 3600 != (t0s + 1800) / 3600) {
			/* another tool resets one port's PortCounters */
			uint64_t *x =
				&hw[(size_t)(t1s / 3600 * 97 % n) * IBW_CTR_MAX];

			memset(x, 0, N_PC * sizeof(*x));
		}
		for (i = 0; i < n; i++) {
			drive(&hw[(size_t)i * IBW_CTR_MAX], i, t0s, t1s);
			sweep_port(&ports[i], &hw[(size_t)i * IBW_CTR_MAX],
				   now);
		}
		ibw_links_begin(l, now);
		for (c = 0; c < n / 2; c++) {
			memset(&a, 0, sizeof(a));
			memset(&b, 0, sizeof(b));
			end_in(&a, &ports[2 * c], &pi);
			end_in(&b, &ports[2 * c + 1], &pi);
			ibw_links_update(l, &a, &b);
		}
		t0 = cpu_ms();
		rc = ibw_ctr_journal_save(j, pv, n, l, now);
		t0 = cpu_ms() - t0;
		save_ms += t0;
		if (t0 > worst)
			worst = t0;
		if (rc < 0) {
			fprintf(stderr, "round %u: %s\n", r, strerror(-rc));
			return 1;
		}
		st = ibw_ctr_journal_stats(j);
		if (r % 360 == 0 || r == rounds - 1)
			printf("round %u (%.1f h): %" PRIu64 " bytes, %" PRIu64
			       " snapshots, %" PRIu64
			       " batches, journal %" PRIu64 "\n",
			       r, (double)(r + 1) * (double)step / 3.6e9,
			       st.bytes, st.snapshots, st.batches,
			       st.journal_bytes);
	}
	st = ibw_ctr_journal_stats(j);
	whole = file_size(path);
	printf("ports %u, links %zu, rounds %u every %" PRIu64
	       " s, state-interval %" PRIu64 " s\n",
	       n, ibw_links_count(l), rounds, step / 1000000,
	       interval / 1000000);
	printf("written: %.1f MB (snapshots %" PRIu64
	       ", %.1f MB; batches %" PRIu64 ", %.1f MB); per day %.1f MB\n",
	       (double)st.bytes / 1e6, st.snapshots,
	       (double)st.snapshot_bytes / 1e6, st.batches,
	       (double)st.batch_bytes / 1e6,
	       (double)st.bytes / 1e6 * 8.64e10 /
		       ((double)rounds * (double)step));
	printf("whole file now %.1f MB: rewritten every round, %.1f GB a day\n",
	       (double)whole / 1e6,
	       (double)whole * 8.64e10 / (double)step / 1e9);
	printf("save CPU: %.2f ms a round, worst %.0f ms\n", save_ms / rounds,
	       worst);
	if (getenv("BENCH_KEEP"))
		return 0;
	rc = check_load(path, ports, n);
	unlink(path);
	strncat(path, ".journal", sizeof(path) - strlen(path) - 1);
	unlink(path);
	for (i = 0; i < n; i++) {
		ibw_ctr_port_release(&ports[i]);
	}
	free(ports);
	free(pv);
	free(hw);
	ibw_links_free(l);
	ibw_ctr_journal_free(j);
	return rc < 0 ? 1 : 0;
}
