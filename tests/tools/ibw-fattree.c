// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fat-tree topologies for ibsim, with names like a real cluster's:
 * hosts node0001.. ("node0001 HCA-1"), leaf01.., spine01.. (2 levels) or
 * p1-leaf01.., p1-agg01.., core01.. (3 levels).
 *
 *   ibw-fattree --levels 2 --hosts 324            prints the net file
 *   ibw-fattree --levels 3 --hosts 2592 --flags   prints ibsim's -N -S -P
 *
 * 2 levels: radix R is the smallest usual switch radix (8, 12, 16, 24,
 * 36, 48, 64, 128, 252) with (R/2)*R >= hosts;
 * each leaf has R/2 hosts and one uplink to each of R/2 spines.
 * 3 levels: radix 36 unless given; pods of R/2 leaves and R/2 aggs, fully
 * connected inside the pod; each agg has R/4 uplinks, spread round-robin
 * over just enough cores.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct link {
	int a, ap, b, bp; /* node index and port, both ends */
};

struct node {
	char id[32];
	char desc[64];
	int sw;
	int nports;
};

static struct node *nodes;
static int nnodes;
static struct link *links;
static int nlinks;

static int add_node(int sw, int nports, const char *id, const char *desc)
{
	struct node *n = &nodes[nnodes];

	n->sw = sw;
	n->nports = nports;
	snprintf(n->id, sizeof(n->id), "%s", id);
	snprintf(n->desc, sizeof(n->desc), "%s", desc);
	return nnodes++;
}

static void add_link(int a, int ap, int b, int bp)
{
	links[nlinks].a = a;
	links[nlinks].ap = ap;
	links[nlinks].b = b;
	links[nlinks].bp = bp;
	nlinks++;
}

static void print_node(int i)
{
	int l;

	printf("%s\t%d \"%s\"", nodes[i].sw ? "Switch" : "Hca", nodes[i].nports,
	       nodes[i].id);
	if (strcmp(nodes[i].id, nodes[i].desc))
		printf(" # \"%s\"", nodes[i].desc);
	printf("\n");
	for (l = 0; l < nlinks; l++) {
		if (links[l].a == i)
			printf("[%d]\t\"%s\"[%d]\n", links[l].ap,
			       nodes[links[l].b].id, links[l].bp);
		else if (links[l].b == i)
			printf("[%d]\t\"%s\"[%d]\n", links[l].bp,
			       nodes[links[l].a].id, links[l].ap);
	}
	printf("\n");
}

static int host(int h)
{
	char id[32], desc[64];

	snprintf(id, sizeof(id), "node%04d", h + 1);
	snprintf(desc, sizeof(desc), "node%04d HCA-1", h + 1);
	return add_node(0, 1, id, desc);
}

static void two_level(int hosts, int radix)
{
	int half, nleaves, l, s, h = 0, first_spine;
	char id[32];

	static const int radices[] = { 8, 12, 16, 24, 36, 48, 64, 128, 252 };
	size_t i;

	for (i = 0; !radix && i < sizeof(radices) / sizeof(radices[0]); i++)
		if ((radices[i] / 2) * radices[i] >= hosts)
			radix = radices[i];
	if (!radix) {
		fprintf(stderr, "ibw-fattree: too many hosts for 2 levels\n");
		exit(2);
	}
	half = radix / 2;
	nleaves = (hosts + half - 1) / half;
	first_spine = 0;
	for (s = 0; s < half; s++) {
		snprintf(id, sizeof(id), "spine%02d", s + 1);
		add_node(1, radix, id, id);
	}
	for (l = 0; l < nleaves; l++) {
		int leaf, p;

		snprintf(id, sizeof(id), "leaf%02d", l + 1);
		leaf = add_node(1, radix, id, id);
		for (s = 0; s < half; s++)
			add_link(leaf, half + 1 + s, first_spine + s, l + 1);
		for (p = 0; p < half && h < hosts; p++, h++)
			add_link(leaf, p + 1, host(h), 1);
	}
}

static void three_level(int hosts, int radix)
{
	int half, quarter, per_pod, npods, ncores, p, j, u, h = 0, k = 0;
	int first_core;
	char id[32];

	if (!radix)
		radix = 36;
	half = radix / 2;
	quarter = radix / 4;
	per_pod = half * half;
	npods = (hosts + per_pod - 1) / per_pod;
	ncores = (npods * half * quarter + radix - 1) / radix;
	first_core = nnodes;
	for (j = 0; j < ncores; j++) {
		snprintf(id, sizeof(id), "core%02d", j + 1);
		add_node(1, radix, id, id);
	}
	for (p = 0; p < npods; p++) {
		int aggs = nnodes, leaf, a, hp;

		for (j = 0; j < half; j++) {
			snprintf(id, sizeof(id), "p%d-agg%02d", p + 1, j + 1);
			a = add_node(1, radix, id, id);
			for (u = 0; u < quarter; u++, k++)
				add_link(a, half + 1 + u,
					 first_core + k % ncores,
					 k / ncores + 1);
		}
		for (j = 0; j < half && h < hosts; j++) {
			snprintf(id, sizeof(id), "p%d-leaf%02d", p + 1, j + 1);
			leaf = add_node(1, radix, id, id);
			for (a = 0; a < half; a++)
				add_link(leaf, half + 1 + a, aggs + a, j + 1);
			for (hp = 0; hp < half && h < hosts; hp++, h++)
				add_link(leaf, hp + 1, host(h), 1);
		}
	}
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "levels", required_argument, NULL, 'l' },
		{ "hosts", required_argument, NULL, 'n' },
		{ "radix", required_argument, NULL, 'r' },
		{ "flags", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int levels = 2, hosts = 324, radix = 0, flags = 0, c, i;
	int nsw = 0, nports = 0;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'l':
			levels = atoi(optarg);
			break;
		case 'n':
			hosts = atoi(optarg);
			break;
		case 'r':
			radix = atoi(optarg);
			break;
		case 'f':
			flags = 1;
			break;
		default:
			fprintf(stderr, "usage: ibw-fattree [--levels 2|3] "
					"[--hosts N] [--radix R] [--flags]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if ((levels != 2 && levels != 3) || hosts < 1 || hosts > 100000 ||
	    radix < 0 || radix % 4 || radix > 254) {
		fprintf(stderr, "ibw-fattree: levels must be 2 or 3, hosts "
				"1..100000, radix a multiple of 4 up to 252\n");
		return 2;
	}
	nodes = calloc(2 * (size_t)hosts + 1024, sizeof(*nodes));
	links = calloc(8 * (size_t)hosts + 8192, sizeof(*links));
	if (!nodes || !links)
		return 1;
	if (levels == 2)
		two_level(hosts, radix);
	else
		three_level(hosts, radix);

	for (i = 0; i < nnodes; i++) {
		nsw += nodes[i].sw;
		nports += nodes[i].nports + 1;
	}
	if (flags) {
		/* ibsim's defaults: 2048 nodes, 256 switches, 13312 ports. */
		printf("-N %d -S %d -P %d\n",
		       nnodes > 2048 ? nnodes + 16 : 2048,
		       nsw > 256 ? nsw + 16 : 256,
		       nports > 13312 ? nports + 64 : 13312);
		return 0;
	}
	printf("# ibsim fat tree: %d levels, %d hosts, %d switches\n\n", levels,
	       hosts, nsw);
	for (i = 0; i < nnodes; i++)
		print_node(i);
	return 0;
}
