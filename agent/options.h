/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ibwatchd's options. One table (options.c) holds every option: its
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

#include "engine.h"
#include "log.h"
#include "monitor.h"
#include "server.h"
#include "snmp.h"

#define IBW_DEFAULT_CONFIG "/etc/ibwatch/ibwatch.conf"
#define IBW_DEFAULT_STATE_FILE "/var/lib/ibwatch/counters.state"
#define IBW_OPTS_MAX_LIST 1024 /* values of one repeatable option */
#define IBW_OPTS_MAX_STRINGS (3 * IBW_OPTS_MAX_LIST + 64)
#define IBW_OPTS_MAX 96 /* rows of the option table at most */

/* When a changed option takes effect. */
enum ibw_opt_when {
	IBW_OPT_CLI, /* command line only: it runs ibwatchd once */
	IBW_OPT_SIGHUP, /* SIGHUP applies it */
	IBW_OPT_RESTART, /* the next restart applies it */
};

struct opts {
	const char *config; /* the file read, NULL when none */
	int config_read;
	int check_config;
	int dump_options;
	int version, help;
	const char *user; /* drop privileges to this user */
	int log_syslog;
	enum ibw_log_level log_level;
	const char *ca;
	int port;
	uint64_t port_guid; /* choose the port by its GUID (0: by ca/port) */
	const char *mkey_file; /* the M_Key for SMPs is in this file */
	int once; /* 1 --once; 3 --links: the same, printing the links */
	int full; /* --once prints every document, not the summary */
	const char *textfile; /* --once writing /metrics to this file */
	int responder;
	int no_probes;
	const char *ping; /* on-demand: this target */
	const char *trace; /* on-demand: this target */
	struct ibw_http_opts http;
	int no_http;
	struct ibw_snmp_opts snmp;
	int no_snmp;
	unsigned trace_flags;
	unsigned count;
	enum ibw_echo_type ping_type;
	int reset_counters; /* 1 data, 2 errors, 3 all */
	char *targets[IBW_OPTS_MAX_LIST];
	char *watch[IBW_OPTS_MAX_LIST];
	struct ibw_engine_config ecfg;
	struct ibw_monitor_opts mon;
	/* per table row: where its value came from (0 the default, 1 the
	 * file, 2 the command line); a list set by the file is replaced,
	 * not extended, by the command line */
	unsigned char src[IBW_OPTS_MAX];
	/* the file's values, owned here */
	char *strings[IBW_OPTS_MAX_STRINGS];
	unsigned nstrings;
};

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
			      void *arg),
		   void *arg);
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
