/*
 * ibwatchd's options, from the config file and the command line: one
 * keyword table serves both (the file's names are the long options').
 */
#ifndef IBW_OPTIONS_H
#define IBW_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "engine.h"
#include "log.h"
#include "monitor.h"
#include "server.h"
#include "snmp.h"

#define IBW_DEFAULT_CONFIG "/etc/ibwatch/ibwatch.conf"
#define DEFAULT_STATE_FILE "/var/lib/ibwatch/counters.state"
#define MAX_PING_TARGETS 1024
#define IBW_OPTS_MAX_STRINGS (3 * MAX_PING_TARGETS + 64)

struct opts {
	const char *config; /* the file read, NULL when none */
	int config_read;
	int check_config;
	int version, help;
	const char *user; /* drop privileges to this user */
	int log_syslog;
	enum ibw_log_level log_level;
	int have_log_level;
	const char *ca;
	int port;
	int once;
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
	char *targets[MAX_PING_TARGETS];
	char *watch[MAX_PING_TARGETS];
	struct ibw_engine_config ecfg;
	struct ibw_monitor_opts mon;
	/* lists the file set: the command line replaces them */
	int targets_from_file, watch_from_file, http_from_file;
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

/* 1 when @name may appear in the config file. */
int ibw_opts_config_key(const char *name);
/* Every name the config file accepts, one a line. */
void ibw_opts_list_keys(FILE *f);
void ibw_opts_usage(FILE *f);

#endif
