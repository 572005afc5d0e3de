// SPDX-License-Identifier: BSD-2-Clause
/*
 * The link view's cost without a fabric: N cables (default 7,128, the
 * 14,256-port tree's) fed in rounds 10 s apart with counters that move,
 * then a view. Prints the CPU time of the updates and of the view per
 * round and their medians, to set against a counter sweep's time
 * (docs/links.md, docs/benchmarks.md).
 *
 *   bench_links [--links N] [--rounds N] [--step SECONDS] [--fec] [--save]
 *
 * --step: seconds between rounds (10); --rounds 1440 --step 60 fills
 * every window (a day of minutes).
 * --save: at the end, the state file's link lines (ibw_links_save): their
 * bytes and the CPU time to make them, and to load them back.
 *
 * --fec: both ends of every cable have RS-FEC counters that correct on
 * every lane (an HDR fabric), so the FEC windows are built and viewed
 * too. The peak RSS (/usr/bin/time -v) shows their memory.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fec.h"
#include "links.h"

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct saved {
	char **line;
	size_t n, cap, bytes;
};

static int keep(const char *line, void *arg)
{
	struct saved *s = arg;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		char **l = realloc(s->line, cap * sizeof(*l));

		if (!l)
			return -1;
		s->line = l;
		s->cap = cap;
	}
	s->line[s->n] = strdup(line);
	if (!s->line[s->n])
		return -1;
	s->bytes += strlen(line) + 3; /* as the state file: "l " and '\n' */
	s->n++;
	return 0;
}

/* The link lines of @l: bytes, CPU to make them and to load them. */
static int save_load(const struct ibw_links *l)
{
	struct saved s = { NULL, 0, 0, 0 };
	struct ibw_links *m = ibw_links_new(NULL);
	double t0, t1, t2;
	size_t i;
	int bad = 0;

	if (!m)
		return -1;
	t0 = cpu_ms();
	if (ibw_links_save(l, keep, &s) < 0)
		return -1;
	t1 = cpu_ms();
	for (i = 0; i < s.n; i++)
		bad |= ibw_links_load_line(m, s.line[i]) < 0;
	t2 = cpu_ms();
	printf("state lines: %zu, %.1f MB, save %.0f ms, load %.0f ms (CPU)%s\n",
	       s.n, s.bytes / 1e6, t1 - t0, t2 - t1,
	       bad ? ", some NOT loaded" : "");
	for (i = 0; i < s.n; i++)
		free(s.line[i]);
	free(s.line);
	ibw_links_free(m);
	return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "links", required_argument, NULL, 'l' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "fec", no_argument, NULL, 'f' },
		{ "step", required_argument, NULL, 's' },
		{ "save", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	struct ibw_link_end_in *a, *b;
	struct ibw_fec *fa = NULL, *fb = NULL;
	struct ibw_portinfo pi = { 0 };
	struct ibw_link_view *v;
	struct ibw_links *l;
	unsigned n = 7128, rounds = 30, r, i;
	double *upd, *view, t0, t1, t2;
	uint64_t now = 1699999200ull * 1000000;
	uint64_t step = 10000000;
	int c, fec = 0, save = 0, k;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'l')
			n = (unsigned)strtoul(optarg, NULL, 10);
		else if (c == 'r')
			rounds = (unsigned)strtoul(optarg, NULL, 10);
		else if (c == 'f')
			fec = 1;
		else if (c == 's')
			step = strtoull(optarg, NULL, 10) * 1000000ull;
		else if (c == 'S')
			save = 1;
		else
			return 2;
	}
	if (!n || !rounds || !step)
		return 2;
	a = calloc(n, sizeof(*a));
	b = calloc(n, sizeof(*b));
	upd = calloc(rounds, sizeof(*upd));
	view = calloc(rounds, sizeof(*view));
	l = ibw_links_new(NULL);
	if (!a || !b || !upd || !view || !l)
		return 1;
	if (fec) {
		fa = calloc(n, sizeof(*fa));
		fb = calloc(n, sizeof(*fb));
		if (!fa || !fb)
			return 1;
	}
	pi.state = IBW_PORT_ACTIVE;
	pi.phys_state = IBW_PHYS_LINKUP;
	pi.width_active = IBW_WIDTH_4X;
	pi.width_supported = IBW_WIDTH_1X | IBW_WIDTH_4X;
	pi.speed_active = pi.speed_supported = 1;
	for (i = 0; i < n; i++) {
		/* 36-port switches to hosts, as in the fat trees. */
		a[i].guid = 0x0002c90300000000ull + i / 36;
		a[i].port = (uint8_t)(i % 36 + 1);
		a[i].node_type = IBW_NODE_SWITCH;
		a[i].name = "spine switch 0123";
		b[i].guid = 0x0002c90400000000ull + i;
		b[i].port = 1;
		b[i].node_type = IBW_NODE_CA;
		b[i].name = "node0123 HCA-1";
		a[i].pi = b[i].pi = &pi;
		a[i].have_ctrs = b[i].have_ctrs = 1;
		a[i].tick = b[i].tick = -1;
		if (fec) {
			fa[i].layout = fb[i].layout = IBW_FEC_RS;
			fa[i].have = fb[i].have = ~0ull;
			a[i].fec = &fa[i];
			b[i].fec = &fb[i];
		}
	}
	for (r = 0; r < rounds; r++, now += step) {
		t0 = cpu_ms();
		ibw_links_begin(l, now);
		for (i = 0; i < n; i++) {
			a[i].ctr_us = b[i].ctr_us = now;
			a[i].err[IBW_LERR_SYMBOL] += i % 3;
			a[i].xmit_bytes += 1000000;
			b[i].xmit_wait += 100;
			for (k = 0; fec && k < 4; k++) {
				fa[i].total[IBW_FEC_CORR_SYM0 + k] += 1000 + k;
				fb[i].total[IBW_FEC_CORR_SYM0 + k] += 2000 + k;
			}
			if (fec) {
				fa[i].total[IBW_FEC_PORT_CORR_SYM] += 4006;
				fb[i].total[IBW_FEC_PORT_CORR_SYM] += 8006;
			}
			ibw_links_update(l, &a[i], &b[i]);
		}
		t1 = cpu_ms();
		v = ibw_links_view(l, now);
		t2 = cpu_ms();
		if (!v)
			return 1;
		upd[r] = t1 - t0;
		view[r] = t2 - t1;
		if (rounds <= 100 || r % 100 == 0 || r == rounds - 1)
			printf("round %u: %u links, update %.2f ms, view %.2f ms\n",
			       r, n, upd[r], view[r]);
		ibw_link_view_free(v);
	}
	qsort(upd, rounds, sizeof(*upd), cmp_double);
	qsort(view, rounds, sizeof(*view), cmp_double);
	printf("median: update %.2f ms, view %.2f ms (CPU)\n", upd[rounds / 2],
	       view[rounds / 2]);
	if (save && save_load(l) < 0)
		return 1;
	ibw_links_free(l);
	free(a);
	free(b);
	free(upd);
	free(view);
	free(fa);
	free(fb);
	return 0;
}
