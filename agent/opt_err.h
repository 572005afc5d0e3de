/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where the option parsers' errors go (opt_err.c), and the number parser
 * every row shares: below both the table's own parsers (opt_table.c)
 * and the reader (options.c).
 */
#ifndef IBW_OPT_ERR_H
#define IBW_OPT_ERR_H

#include <stddef.h>

/* Errors go to @buf (@cap bytes, emptied; NULL: counted only) from now
 * on, said to come from what ibw_opt_where() names, with options named
 * without their dashes while ibw_opt_in_file(1). */
void ibw_opt_sink(char *buf, size_t cap);
void __attribute__((format(printf, 1, 2))) ibw_opt_where(const char *fmt, ...);
void ibw_opt_in_file(int in_file);
/* An error about an option, said where it came from (the command line,
 * FILE:LINE). */
void __attribute__((format(printf, 1, 2))) ibw_opt_err(const char *fmt, ...);

/* @s as a number in 0..@max into *@out: 0, or -EINVAL (said through
 * ibw_opt_err, naming @opt). */
int ibw_opt_parse_uint(const char *opt, const char *s, unsigned long long max,
		       unsigned long long *out);

#endif
