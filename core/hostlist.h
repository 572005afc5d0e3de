/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Slurm hostlist expressions, expanded as `scontrol show hostnames` does
 * (docs/jobs.md): names separated by commas, each with any number of
 * bracket groups of numbers and ranges ("node[0001-0003,0007]",
 * "gpu[1-2]-ib[01-02]"); a range keeps the zero padding of its lower
 * bound, whose upper bound must then have as many digits; empty names
 * ("a,,b") are skipped. Unlike scontrol, a stray bracket ("n1]",
 * "n[1-2") is refused rather than taken as part of a name. Ours, small, fuzzed (tests/fuzz/fuzz_hostlist.c) and held to
 * scontrol on a table of cases (tests/integration/slurm.sh).
 */
#ifndef IBW_HOSTLIST_H
#define IBW_HOSTLIST_H

#include <stddef.h>

/* At most this many names from one expression, and this long each. */
#define IBW_HOSTLIST_MAX 1000000
#define IBW_HOSTLIST_NAME 256

/*
 * Expand @expr, calling @cb with each name (NUL-terminated, valid during
 * the call) in order; a non-zero return from @cb stops and is returned.
 * Returns the number of names, or -EINVAL (a malformed expression:
 * unbalanced or nested brackets, a bad range, an empty name), -E2BIG
 * (more than IBW_HOSTLIST_MAX names, or a name too long); nothing is
 * called for a malformed expression.
 */
long ibw_hostlist_expand(const char *expr,
			 int (*cb)(const char *name, void *arg), void *arg);

#endif
