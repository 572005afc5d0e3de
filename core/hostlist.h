/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Slurm hostlist expressions, expanded as `scontrol show hostnames` does
 * (docs/jobs.md): names separated by commas, spaces or tabs, each with
 * any number of bracket groups of numbers and ranges
 * ("node[0001-0003,0007]", "gpu[1-2]-ib[01-02]"), nothing after the last
 * group. Widths follow Slurm: a range is printed at its lower bound's
 * digit count, whatever the upper bound's ("node[01-100]" is node01 ..
 * node100, "n[1-03]" n1 n2 n3); a range holds at most 65536 names.
 * Empty names ("a,,b") are skipped. Stricter than scontrol: a stray
 * bracket ("n1]", "n[1-2"), and a bound other than plain digits
 * ("n[1-]", "n[ 1]", "n[+1]", more than 18 digits) are refused rather
 * than guessed at. Ours, small, fuzzed (tests/fuzz/fuzz_hostlist.c) and
 * held to scontrol on 10,000 generated expressions
 * (tests/integration/hostlist_scontrol.sh).
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
 * unbalanced or nested brackets, a bad range, text after the last
 * group), -E2BIG (a range of more than 65536 names, more than
 * IBW_HOSTLIST_MAX names, or a name too long); nothing is
 * called for a malformed expression.
 */
long ibw_hostlist_expand(const char *expr,
			 int (*cb)(const char *name, void *arg), void *arg);

#endif
