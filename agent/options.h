/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ibwatchd's options. One table (opt_table.c) holds every option: its
 * names, its type and checks, its default (core's named constants), when
 * a change takes effect and its help. The command line, the config file
 * (the same names as "name = value" lines), --help, --dump-options and
 * the SIGHUP diff all read it.
 */
#ifndef IBW_OPTIONS_H
#define IBW_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "opts.h"

/*
 * Defaults, then the config file (-c FILE, else IBW_DEFAULT_CONFIG when
 * it exists), then the command line. 0, or -1 with one line per error
 * ("FILE:LINE: ..." or "ibwatchd: ...") in @errs. Free with
 * ibw_opts_free even on failure.
 */
int ibw_opts_load(int argc, char **argv, struct opts *o, char *errs,
		  size_t errlen);
void ibw_opts_free(struct opts *o);

/* --help: generated from the table. */
void ibw_opts_usage(FILE *f);
/*
 * --dump-options: one line per documented option, four fields separated
 * by tabs: name, default as the man pages show it ("-" for none), when a
 * change applies ("cli", "sighup", "restart") and the short option ("-"
 * for none). tests/lib/check-man-options.py compares it with the man
 * pages.
 */
void ibw_opts_dump(FILE *f);

/*
 * SIGHUP: call @cb with each option (not command-line only) whose value
 * in @run, the running configuration, differs from @next's. Options
 * that share a field (state-file, no-state-file) are named once.
 */
void ibw_opts_diff(const struct opts *run, const struct opts *next,
		   void (*cb)(const char *name, enum ibw_opt_when when,
			      const void *arg),
		   const void *arg);
/* Copy the values of the options SIGHUP applies from @next into @run;
 * the strings among them move to @run's storage. */
void ibw_opts_adopt(struct opts *run, struct opts *next);

/*
 * The M_Key in @path (--mkey-file): one number, 0x-prefixed hex or
 * decimal, on a line of its own; empty lines and lines starting with #
 * are ignored. The key is a secret, so the file must be a regular file
 * that neither its group nor others may read or write (mode 0600 or
 * 0400), and no message quotes what it holds. 0, or -1 with the reason
 * in @err.
 */
int ibw_opts_read_mkey(const char *path, uint64_t *key, char *err,
		       size_t errlen);

#endif
