// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target: Slurm hostlist expressions (job files and squeue output:
 * any bytes). Every name handed back is NUL-terminated and within the
 * bound; the count matches the calls.
 */
#include <stdint.h>
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
	return 0;
}
