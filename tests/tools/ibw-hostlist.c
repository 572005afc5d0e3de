// SPDX-License-Identifier: BSD-2-Clause
/*
 * Print each expression's names one per line, as `scontrol show
 * hostnames` does, with core/hostlist.c (tests/integration/slurm.sh
 * compares the two); exit 1 on a malformed expression.
 */
#include <stdio.h>

#include "hostlist.h"

static int put(const char *name, void *arg)
{
	(void)arg;
	puts(name);
	return 0;
}

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (ibw_hostlist_expand(argv[i], put, NULL) < 0) {
			fprintf(stderr, "ibw-hostlist: %s: malformed\n",
				argv[i]);
			return 1;
		}
	return 0;
}
