// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target: Slurm hostlist expressions (job files and squeue output:
 * any bytes). Every name handed back is NUL-terminated and within the
 * bound; the count matches the calls. And the first bytes also pick a
 * range written as Slurm's compressor writes one, both bounds printed
 * at the lower bound's width ("n[01-100]"): it must be taken, whole.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

static int check(const char *name, void *arg)
{
	if (strlen(name) >= IBW_HOSTLIST_NAME)
		abort();
	++*(long *)arg;
	return 0;
}

struct span {
	char first[32], last[32];
	long calls;
};

static int ends(const char *name, void *arg)
{
	struct span *sp = arg;

	if (!sp->calls++)
		snprintf(sp->first, sizeof(sp->first), "%s", name);
	snprintf(sp->last, sizeof(sp->last), "%s", name);
	return 0;
}

static void slurm_range(const uint8_t *data)
{
	unsigned long lo = data[0] | (unsigned long)data[1] << 8;
	unsigned long hi = lo + data[2];
	int w = data[3] % 8 + 1;
	char expr[64], first[32], last[32];
	struct span sp = { .calls = 0 };

	snprintf(expr, sizeof(expr), "n[%0*lu-%0*lu]", w, lo, w, hi);
	snprintf(first, sizeof(first), "n%0*lu", w, lo);
	snprintf(last, sizeof(last), "n%0*lu", w, hi);
	if (ibw_hostlist_expand(expr, ends, &sp) != (long)(hi - lo + 1) ||
	    strcmp(sp.first, first) || strcmp(sp.last, last))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	long calls = 0, n;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	n = ibw_hostlist_expand(s, check, &calls);
	if (n >= 0 && n != calls)
		abort();
	if (n < 0 && calls)
		abort();
	free(s);
	if (size >= 4)
		slurm_range(data);
	return 0;
}
