/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ibwatchd's settings as the options fill them (struct opts) and the
 * limits of the option table: a type alone, with no code, which the
 * table (opt_table.h) describes and the reader (options.h) fills.
 */
#ifndef IBW_OPTS_H
#define IBW_OPTS_H

#include <stdint.h>

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

#endif
