/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ibwatchd's option table (opt_table.c) and what its rows' parsers share
 * with the machinery that reads it (options.c): internal to agent/.
 */
#ifndef IBW_OPT_TABLE_H
#define IBW_OPT_TABLE_H

#include <stddef.h>

#include "opts.h"

/* How an option's value is read. */
enum opt_type {
	T_FLAG, /* no value: sets @bits in an int field */
	T_UNSET, /* no value: clears a string field (no-state-file) */
	T_UINT, /* a number in @min..@max, stored times @scale */
	T_STRING, /* a string, kept as given */
	T_CHOICE, /* one of @choices, stored as its value */
	T_LIST, /* a string, repeatable: the array at @off, its count at
		   @count_off, @max of them */
	T_CUSTOM, /* @parse reads it into the field at @off */
};

struct choice {
	const char *name;
	int value;
};

struct opt {
	const char *name; /* long option and config-file keyword */
	char short_name; /* or 0 */
	enum opt_type type;
	enum ibw_opt_when when;
	size_t off, size; /* its field in struct opts */
	size_t count_off; /* T_LIST */
	unsigned long long min, max, scale; /* T_UINT; T_LIST: max */
	unsigned long long def; /* T_UINT (in the option's unit), T_CHOICE */
	unsigned bits; /* T_FLAG: 0 means 1 */
	const char *def_str; /* T_STRING, T_LIST: the default value */
	/* the default as shown, where no value above says it */
	const char *def_text;
	const char *def_note; /* shown after the default */
	const struct choice *choices; /* T_CHOICE, ended by a NULL name */
	const char *nonempty; /* T_STRING: "" is refused as "empty ..." */
	int (*parse)(struct opts *o, const char *arg); /* T_CUSTOM */
	const char *group; /* --help: a heading before this row */
	const char *arg; /* --help: the value's name */
	const char *help; /* --help: one phrase; NULL hides the option */
};

/* The options, in --help's order, and how many. */
extern const struct opt ibw_opt_table[];
extern const unsigned ibw_opt_table_len;

#endif
