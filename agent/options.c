// SPDX-License-Identifier: BSD-2-Clause
/*
 * ibwatchd's options: one table. A row names an option (long option,
 * config-file keyword, short option), says how its value is read and
 * checked, where it goes in struct opts, its default (core's named
 * constants), whether SIGHUP applies a change and its help. getopt's
 * table, the config file's keywords, --help, --dump-options and the
 * SIGHUP diff are all made from it. The file holds "name = value"
 * lines, is read first, and the command line overrides it. Errors say
 * where: "ibwatchd: ..." or "FILE:LINE: ...".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "options.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

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

/* A row's first fields. */
#define OPT(n, t, w) .name = n, .type = t, .when = w
/*
 * A row's field in struct opts. Numbers and flags must be 4 or 8 bytes,
 * strings pointers, lists arrays of pointers counted by an unsigned:
 * anything else does not compile (MUST() makes a negative array size).
 */
#define MUST(cond) (0 * sizeof(char[(cond) ? 1 : -1]))
#define OPTS_FIELD(f) (((struct opts *)0)->f)
#define FIELD(f) .off = offsetof(struct opts, f), .size = sizeof(OPTS_FIELD(f))
#define NUM(f)     \
	FIELD(f) + \
		MUST(sizeof(OPTS_FIELD(f)) == 4 || sizeof(OPTS_FIELD(f)) == 8)
#define STR(f) FIELD(f) + MUST(sizeof(OPTS_FIELD(f)) == sizeof(char *))
#define LIST(a, n)                                                          \
	FIELD(a), .count_off = offsetof(struct opts, n),                    \
		  .max = ARRAY_LEN(OPTS_FIELD(a)) +                         \
			 MUST(sizeof(OPTS_FIELD(a)[0]) == sizeof(char *) && \
			      sizeof(OPTS_FIELD(n)) == sizeof(unsigned))

static int parse_threshold(struct opts *o, const char *arg);
static int parse_link_threshold(struct opts *o, const char *arg);
static int parse_capmask(struct opts *o, const char *arg);
static int parse_port_guid(struct opts *o, const char *arg);

static const struct choice log_levels[] = {
	{ "err", IBW_LOG_ERR },
	{ "warn", IBW_LOG_WARN },
	{ "info", IBW_LOG_INFO },
	{ "debug", IBW_LOG_DEBUG },
	{ NULL, 0 },
};
static const struct choice log_targets[] = {
	{ "stderr", 0 },
	{ "syslog", 1 },
	{ NULL, 0 },
};
static const struct choice scopes[] = {
	{ "all", IBW_SCOPE_ALL },
	{ "switches", IBW_SCOPE_SWITCHES },
	{ "cas", IBW_SCOPE_CAS },
	{ NULL, 0 },
};
static const struct choice reset_groups[] = {
	{ "never", 0 }, { "data", 1 }, { "errors", 2 },
	{ "all", 3 },	{ NULL, 0 },
};
static const struct choice counter_aligns[] = {
	{ "scrapers", 0 },
	{ "interval", 1 },
	{ NULL, 0 },
};
static const struct choice counter_checks[] = {
	{ "always", IBW_CHECK_ALWAYS },
	{ "in-flux", IBW_CHECK_IN_FLUX },
	{ NULL, 0 },
};
static const struct choice yes_no[] = {
	{ "yes", 1 },
	{ "no", 0 },
	{ NULL, 0 },
};
static const struct choice ping_methods[] = {
	{ "auto", IBW_PING_AUTO },
	{ "echo", IBW_PING_ECHO },
	{ "pma", IBW_PING_PMA },
	{ "smp", IBW_PING_SMP },
	{ NULL, 0 },
};
static const struct choice ping_types[] = {
	{ "echo", IBW_ECHO_REQ },
	{ "timestamp", IBW_TS_REQ },
	{ "info", IBW_INFO_REQ },
	{ "ibping", IBW_ECHO_IBPING },
	{ NULL, 0 },
};

#define US_PER_S 1000000u

/*
 * The options, in --help's order. Adding one: a row here (and in both
 * man pages; the docs_options test holds them to this table), and its
 * use where the field is read.
 */
static const struct opt table[] = {
	{ OPT("config", T_STRING, IBW_OPT_CLI), .short_name = 'c', STR(config),
	  .def_text = IBW_DEFAULT_CONFIG, .def_note = "read only if it exists",
	  .group = "", .arg = "FILE",
	  .help = "read options from FILE; the command line overrides it" },
	{ OPT("check-config", T_FLAG, IBW_OPT_CLI), NUM(check_config),
	  .help = "check the configuration and exit" },
	/* Prints the table for the man page test (tests/lib). */
	{ OPT("dump-options", T_FLAG, IBW_OPT_CLI), NUM(dump_options) },

	{ OPT("ca", T_STRING, IBW_OPT_RESTART), STR(ca),
	  .def_text = "the first CA with an active port",
	  .group = "Port and engine:", .arg = "NAME",
	  .help = "CA to attach to" },
	{ OPT("port", T_UINT, IBW_OPT_RESTART), NUM(port), .max = 254,
	  .def_text = "its first active port", .arg = "N",
	  .help = "port on that CA" },
	{ OPT("port-guid", T_CUSTOM, IBW_OPT_RESTART), FIELD(port_guid),
	  .parse = parse_port_guid, .def_text = "by ca and port", .arg = "GUID",
	  .help = "the local port with this port GUID, on whatever CA" },
	{ OPT("max-inflight", T_UINT, IBW_OPT_RESTART), NUM(ecfg.max_inflight),
	  .max = IBW_ENGINE_MAX_INFLIGHT,
	  .def = IBW_ENGINE_DEFAULT_MAX_INFLIGHT, .arg = "N",
	  .help = "MADs in flight in all" },
	{ OPT("max-per-dest", T_UINT, IBW_OPT_RESTART), NUM(ecfg.max_per_dest),
	  .max = IBW_ENGINE_MAX_INFLIGHT,
	  .def = IBW_ENGINE_DEFAULT_MAX_PER_DEST, .arg = "N",
	  .help = "MADs in flight to one destination" },
	{ OPT("timeout-ms", T_UINT, IBW_OPT_RESTART), NUM(ecfg.timeout_ms),
	  .max = 60000, .def = IBW_ENGINE_DEFAULT_TIMEOUT_MS, .arg = "N",
	  .help = "deadline of one try, in milliseconds" },
	{ OPT("retries", T_UINT, IBW_OPT_RESTART), NUM(ecfg.retries), .max = 20,
	  .def = IBW_ENGINE_DEFAULT_RETRIES, .arg = "N",
	  .help = "further tries after a timeout" },
	{ OPT("mkey-file", T_STRING, IBW_OPT_RESTART), STR(mkey_file),
	  .nonempty = "file name", .arg = "FILE",
	  .help = "put the M_Key in FILE (mode 0600) into every SMP" },

	{ OPT("once", T_FLAG, IBW_OPT_CLI), NUM(once), .group = "Probes:",
	  .help = "run one cycle, print its summary as JSON, exit" },
	{ OPT("full", T_FLAG, IBW_OPT_CLI), NUM(full),
	  .help = "with --once: print every document (nodes, ports, links, "
		  "endports, events), not the summary" },
	/* --once printing the link view alone (bit 2 of once) */
	{ OPT("links", T_FLAG, IBW_OPT_CLI), NUM(once), .bits = 3,
	  .help = "run one cycle, print the link view as JSON, exit" },
	{ OPT("textfile", T_STRING, IBW_OPT_CLI), STR(textfile),
	  .nonempty = "file name", .arg = "FILE",
	  .help = "run one cycle, write the Prometheus metrics to FILE "
		  "(atomically, for node_exporter's textfile collector), "
		  "exit (status 75 if another run holds FILE.lock)" },
	{ OPT("discovery-interval", T_UINT, IBW_OPT_SIGHUP),
	  NUM(mon.discovery_interval_us), .min = 1, .max = 86400,
	  .scale = US_PER_S, .def = IBW_DISCOVERY_INTERVAL_US / US_PER_S,
	  .arg = "S", .help = "seconds between discovery sweeps" },
	{ OPT("counter-interval", T_UINT, IBW_OPT_SIGHUP),
	  NUM(mon.counter_interval_us), .min = 1, .max = 86400,
	  .scale = US_PER_S, .def = IBW_COUNTER_INTERVAL_US / US_PER_S,
	  .arg = "S",
	  .help = "seconds between counter sweeps (at most, aligned with "
		  "scrapers)" },
	{ OPT("counter-full-speed", T_FLAG, IBW_OPT_RESTART),
	  NUM(mon.counters_full_speed),
	  .help = "read every counter sweep at full speed, none spread over "
		  "the interval (for benchmarks)" },
	{ OPT("counter-align", T_CHOICE, IBW_OPT_RESTART),
	  NUM(mon.no_scrape_align), .choices = counter_aligns, .def = 0,
	  .arg = "scrapers|interval",
	  .help = "counter sweeps aligned with the scrapers of /metrics "
		  "(their interval divides the scrapers', at most "
		  "counter-interval), or every counter-interval" },
	{ OPT("state-file", T_STRING, IBW_OPT_RESTART), STR(mon.state_file),
	  .def_str = IBW_DEFAULT_STATE_FILE, .arg = "PATH",
	  .help = "counter totals kept here" },
	{ OPT("no-state-file", T_UNSET, IBW_OPT_RESTART), STR(mon.state_file),
	  .help = "keep no state file" },
	{ OPT("node-name-map", T_STRING, IBW_OPT_RESTART),
	  STR(mon.node_name_map), .arg = "PATH",
	  .help = "infiniband-diags node-name-map (its contents re-read on "
		  "SIGHUP)" },
	{ OPT("scope", T_CHOICE, IBW_OPT_RESTART), NUM(mon.counters.scope),
	  .choices = scopes, .def = IBW_SCOPE_ALL, .arg = "SCOPE",
	  .help = "whose counters to read" },
	{ OPT("threshold", T_CUSTOM, IBW_OPT_RESTART),
	  FIELD(mon.counters.thresholds), .parse = parse_threshold,
	  .def_text = "those of infiniband-diags' error_thresholds",
	  .arg = "NAME=N",
	  .help = "error threshold, e.g. SymbolErrorCounter=10; repeatable" },
	{ OPT("link-threshold", T_CUSTOM, IBW_OPT_SIGHUP),
	  FIELD(mon.link_thresholds), .parse = parse_link_threshold,
	  .def_text = "those of docs/links.md", .arg = "NAME=VALUE",
	  .help = "link health threshold, e.g. ber_degraded=1e-12 or "
		  "link_downed_per_hour=10; repeatable" },
	{ OPT("reset-counters", T_CHOICE, IBW_OPT_RESTART), NUM(reset_counters),
	  .choices = reset_groups, .def = 3, .arg = "GROUP",
	  .help = "clear narrow counters before they saturate" },
	{ OPT("counter-check", T_CHOICE, IBW_OPT_RESTART),
	  NUM(mon.counters.check), .choices = counter_checks,
	  .def = IBW_CHECK_ALWAYS, .arg = "WHEN",
	  .help = "when a NodeInfo to its LID checks whose counters a "
		  "reading holds (one per node and sweep)" },
	{ OPT("detail-counters", T_FLAG, IBW_OPT_RESTART),
	  NUM(mon.counters.details),
	  .help = "also PortRcvErrorDetails and PortXmitDiscardDetails" },

	{ OPT("responder", T_FLAG, IBW_OPT_RESTART), NUM(responder),
	  .group = "Pings:",
	  .help = "also answer echo pings (ibping and ibwatchd)" },
	{ OPT("no-probes", T_FLAG, IBW_OPT_RESTART), NUM(no_probes),
	  .help = "no discovery, counters or pings (with --responder)" },
	{ OPT("no-ping", T_FLAG, IBW_OPT_RESTART), NUM(mon.no_ping),
	  .help = "no endport pings" },
	{ OPT("ping-interval-ms", T_UINT, IBW_OPT_RESTART),
	  NUM(mon.ping.interval_us), .min = 1, .max = 86400000, .scale = 1000,
	  .def = IBW_PING_DEFAULT_INTERVAL_MS, .arg = "N",
	  .help = "interval between pings of one endport" },
	{ OPT("ping-method", T_CHOICE, IBW_OPT_RESTART), NUM(mon.ping.method),
	  .choices = ping_methods, .def = IBW_PING_AUTO, .arg = "M",
	  .help = "how to ping" },
	{ OPT("ping-timeout-ms", T_UINT, IBW_OPT_RESTART),
	  NUM(mon.ping.timeout_ms), .min = 1, .max = 60000,
	  .def = IBW_PING_DEFAULT_TIMEOUT_MS, .arg = "N",
	  .help = "deadline of one ping" },
	{ OPT("ping-retries", T_UINT, IBW_OPT_RESTART), NUM(mon.ping.retries),
	  .max = 20, .def = IBW_PING_DEFAULT_RETRIES, .arg = "N",
	  .help = "further tries of a ping" },
	{ OPT("ping-target", T_LIST, IBW_OPT_RESTART),
	  LIST(targets, mon.ping.ntargets),
	  .def_text = "every CA port of the fabric", .arg = "T",
	  .help = "ping T (LID, GUID or node name); repeatable" },
	{ OPT("ping-capmask", T_CUSTOM, IBW_OPT_RESTART),
	  FIELD(mon.ping.capmask_bits), .parse = parse_capmask, .arg = "BITS",
	  .help = "ping the endports with these capability bits" },
	{ OPT("down-after", T_UINT, IBW_OPT_RESTART), NUM(mon.ping.down_after),
	  .min = 1, .max = 1000, .def = IBW_PING_DEFAULT_DOWN_AFTER,
	  .def_note = "1 with --once", .arg = "N",
	  .help = "lost pings in a row that make an endport down" },
	{ OPT("up-after", T_UINT, IBW_OPT_RESTART), NUM(mon.ping.up_after),
	  .min = 1, .max = 1000, .def = IBW_PING_DEFAULT_UP_AFTER,
	  .def_note = "1 with --once", .arg = "N",
	  .help = "answered pings in a row that bring it up" },
	{ OPT("ping-window", T_UINT, IBW_OPT_RESTART), NUM(mon.ping.window),
	  .min = 1, .max = IBW_PING_WINDOW_MAX, .def = IBW_PING_DEFAULT_WINDOW,
	  .arg = "N", .help = "pings in the loss window" },
	{ OPT("ping", T_STRING, IBW_OPT_CLI), STR(ping), .arg = "TARGET",
	  .help = "ping TARGET now, print the result as JSON, exit" },
	{ OPT("count", T_UINT, IBW_OPT_CLI), NUM(count), .min = 1, .max = 10000,
	  .def = IBW_PING_DEFAULT_COUNT, .arg = "N",
	  .help = "pings for --ping" },
	{ OPT("ping-type", T_CHOICE, IBW_OPT_CLI), NUM(ping_type),
	  .choices = ping_types, .def = IBW_ECHO_REQ, .arg = "T",
	  .help = "with --ping" },

	{ OPT("trace", T_STRING, IBW_OPT_CLI), STR(trace),
	  .group = "Traces:", .arg = "TARGET",
	  .help = "trace the path to TARGET now, print it as JSON, exit" },
	{ OPT("reverse", T_FLAG, IBW_OPT_CLI), NUM(trace_flags),
	  .bits = IBW_TRACE_REVERSE,
	  .help = "with --trace: also the path back" },
	{ OPT("confirm", T_FLAG, IBW_OPT_CLI), NUM(trace_flags),
	  .bits = IBW_TRACE_CONFIRM,
	  .help = "with --trace: ask a responder there who it is" },
	{ OPT("watch-path", T_LIST, IBW_OPT_RESTART), LIST(watch, mon.nwatch),
	  .arg = "T",
	  .help = "trace the path to T (LID, GUID or name) at an interval, an "
		  "event when it changes; repeatable" },
	{ OPT("trace-interval", T_UINT, IBW_OPT_SIGHUP),
	  NUM(mon.trace_interval_us), .min = 1, .max = 86400, .scale = US_PER_S,
	  .def = IBW_TRACE_INTERVAL_US / US_PER_S, .arg = "S",
	  .help = "seconds between traces of watched paths" },
	{ OPT("lft-interval", T_UINT, IBW_OPT_RESTART),
	  NUM(mon.lft_interval_us), .min = 1, .max = 86400, .scale = US_PER_S,
	  .def = IBW_LFT_INTERVAL_US / US_PER_S, .arg = "S",
	  .help = "seconds between reads of every switch's forwarding table "
		  "for the route census" },

	{ OPT("jobs-dir", T_STRING, IBW_OPT_SIGHUP), STR(mon.jobs_dir),
	  .group = "Jobs:", .arg = "DIR",
	  .help = "the running jobs: one file per job, written by the "
		  "shipped Slurm prolog (docs/jobs.md)" },
	{ OPT("jobs-check-interval", T_UINT, IBW_OPT_SIGHUP),
	  NUM(mon.jobs_check_us), .max = 86400, .scale = US_PER_S, .def = 60,
	  .arg = "S",
	  .help = "seconds between checks of --jobs-dir against squeue; 0: "
		  "none" },
	{ OPT("jobs-host-map", T_STRING, IBW_OPT_SIGHUP),
	  STR(mon.jobs_host_map), .arg = "FILE",
	  .help = "Slurm node names to fabric names (\"NAME FABRIC_NAME\" "
		  "lines; re-read on SIGHUP)" },
	{ OPT("jobs-squeue", T_STRING, IBW_OPT_SIGHUP), STR(mon.jobs_squeue),
	  .def_str = "/usr/bin/squeue", .arg = "FILE",
	  .help = "the squeue to check with" },

	{ OPT("http", T_LIST, IBW_OPT_RESTART), LIST(http.listen, http.nlisten),
	  .def_str = IBW_HTTP_DEFAULT_LISTEN,
	  .group = "HTTP:", .arg = "ADDR:PORT",
	  .help = "serve JSON and Prometheus metrics here ([::1]:9776 for "
		  "IPv6); repeatable" },
	{ OPT("no-http", T_FLAG, IBW_OPT_RESTART), NUM(no_http),
	  .help = "no HTTP endpoint" },
	{ OPT("http-cert", T_STRING, IBW_OPT_RESTART), STR(http.tls_cert),
	  .arg = "FILE", .help = "serve HTTPS with this PEM certificate" },
	{ OPT("http-key", T_STRING, IBW_OPT_RESTART), STR(http.tls_key),
	  .arg = "FILE", .help = "... and this PEM key" },
	{ OPT("http-token-file", T_STRING, IBW_OPT_RESTART),
	  STR(http.token_file), .arg = "F",
	  .help = "require this bearer token on trace and ping" },
	{ OPT("http-token-everywhere", T_FLAG, IBW_OPT_RESTART),
	  NUM(http.token_everywhere), .help = "... and on every endpoint" },
	{ OPT("http-max-connections", T_UINT, IBW_OPT_RESTART),
	  NUM(http.max_connections), .min = 1, .max = 10000,
	  .def = IBW_HTTP_DEFAULT_MAX_CONNECTIONS, .arg = "N",
	  .help = "connections at once; more wait in the listen backlog" },
	{ OPT("http-max-per-address", T_UINT, IBW_OPT_RESTART),
	  NUM(http.max_per_address), .min = 1, .max = 10000,
	  .def = IBW_HTTP_DEFAULT_MAX_PER_ADDRESS, .arg = "N",
	  .help = "connections at once from one client address; more are "
		  "closed at once" },
	{ OPT("http-header-timeout", T_UINT, IBW_OPT_RESTART),
	  NUM(http.header_timeout_s), .min = 1, .max = 3600,
	  .def = IBW_HTTP_DEFAULT_HEADER_TIMEOUT, .arg = "S",
	  .help = "seconds from a connection's accept to its request's "
		  "headers" },
	{ OPT("http-idle-timeout", T_UINT, IBW_OPT_RESTART),
	  NUM(http.idle_timeout_s), .min = 1, .max = 86400,
	  .def = IBW_HTTP_DEFAULT_IDLE_TIMEOUT, .arg = "S",
	  .help = "seconds a connection (keep-alive too) may sit idle" },
	{ OPT("http-nice", T_UINT, IBW_OPT_RESTART), NUM(http.nice), .max = 19,
	  .def = IBW_HTTP_DEFAULT_NICE, .arg = "N",
	  .help = "nice value of the threads that serve HTTP, so that "
		  "probing goes first under load (0: the loop's)" },
	{ OPT("http-cache-mb", T_UINT, IBW_OPT_RESTART), NUM(http.cache_bytes),
	  .max = 65536, .scale = 1048576, .def = IBW_HTTP_DEFAULT_CACHE_MB,
	  .arg = "MB",
	  .help = "JSON answers kept per snapshot, in all; bigger ones are "
		  "streamed (0: none kept)" },

	{ OPT("metrics-all-ports", T_FLAG, IBW_OPT_RESTART),
	  NUM(http.prom.all_ports),
	  .help = "/metrics: counters of every switch port, unconnected ones "
		  "too (infiniband_exporter has connected ports only)" },
	{ OPT("metrics-timestamps", T_CHOICE, IBW_OPT_RESTART),
	  NUM(http.prom.timestamps), .choices = yes_no, .def = 0,
	  .arg = "yes|no",
	  .help = "/metrics: port counter samples carry the time of their "
		  "reading (for scrapers the counter sweeps cannot align "
		  "with)" },

	{ OPT("agentx", T_STRING, IBW_OPT_RESTART), STR(snmp.agentx_socket),
	  .nonempty = "socket", .def_text = IBW_SNMP_DEFAULT_SOCKET,
	  .group = "SNMP (an AgentX subagent of snmpd):", .arg = "SOCKET",
	  .help = "the master agent's AgentX socket" },
	{ OPT("snmp-context", T_STRING, IBW_OPT_RESTART), STR(snmp.context),
	  .def_text = "none", .def_note = "the unnamed context \"\"",
	  .arg = "NAME",
	  .help = "register IBWATCH-MIB in this SNMP context (one instance "
		  "per HCA port, each its own)" },
	{ OPT("agentx-ping-interval", T_UINT, IBW_OPT_RESTART),
	  NUM(snmp.ping_interval_s), .min = 1, .max = 3600,
	  .def = IBW_SNMP_DEFAULT_PING_INTERVAL_S, .arg = "S",
	  .help = "seconds between pings of the master; reconnect at least "
		  "this often when it is gone" },
	{ OPT("agentx-timeout", T_UINT, IBW_OPT_RESTART), NUM(snmp.timeout_ms),
	  .min = 10, .max = 60000, .def = IBW_SNMP_DEFAULT_TIMEOUT_MS,
	  .arg = "MS",
	  .help = "milliseconds the loop waits for the master at most: a "
		  "connection, one AgentX round trip" },
	{ OPT("snmp-trap-rate", T_UINT, IBW_OPT_RESTART), NUM(snmp.trap_rate),
	  .min = 1, .max = 60000, .def = IBW_SNMP_DEFAULT_TRAP_RATE, .arg = "N",
	  .help = "notifications per minute at most" },
	{ OPT("no-snmp", T_FLAG, IBW_OPT_RESTART), NUM(no_snmp),
	  .help = "no SNMP subagent" },

	{ OPT("log-level", T_CHOICE, IBW_OPT_SIGHUP), NUM(log_level),
	  .choices = log_levels, .def = IBW_LOG_INFO,
	  .group = "The daemon:", .arg = "LEVEL", .help = "what to log" },
	{ OPT("log-target", T_CHOICE, IBW_OPT_RESTART), NUM(log_syslog),
	  .choices = log_targets, .def = 0, .arg = "T",
	  .help = "where to log" },
	{ OPT("user", T_STRING, IBW_OPT_RESTART), STR(user),
	  .nonempty = "user name", .arg = "NAME",
	  .help = "drop to this user (and its group) once the port is open and "
		  "HTTP bound" },
	{ OPT("version", T_FLAG, IBW_OPT_CLI), NUM(version),
	  .help = "print the version and exit" },
	{ OPT("help", T_FLAG, IBW_OPT_CLI), NUM(help),
	  .help = "print this help and exit" },
};

_Static_assert(ARRAY_LEN(table) <= IBW_OPTS_MAX, "raise IBW_OPTS_MAX");

enum { SRC_DEFAULT, SRC_FILE, SRC_CLI };

/* Where errors go while parsing: the caller's buffer, each line
 * prefixed with where it comes from. */
static struct {
	char *buf;
	size_t len, cap;
	char where[512];
	int in_file;
	unsigned n;
} sink;

static void __attribute__((format(printf, 1, 2))) opt_err(const char *fmt, ...)
{
	char msg[512];
	const char *m = msg;
	size_t n;
	va_list ap;
	int w;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	/* In the file, options are named without their dashes. */
	if (sink.in_file && !strncmp(m, "--", 2))
		m += 2;
	sink.n++;
	if (!sink.buf || sink.len >= sink.cap)
		return;
	w = snprintf(sink.buf + sink.len, sink.cap - sink.len, "%s: %s\n",
		     sink.where, m);
	if (w > 0)
		sink.len += (size_t)w < sink.cap - sink.len
				    ? (size_t)w
				    : sink.cap - sink.len - 1;
}

static int parse_uint(const char *opt, const char *s, unsigned long long max,
		      unsigned long long *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > max) {
		opt_err("%s: '%s' is not a number in 0..%llu\n", opt, s, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_threshold(struct opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[64];
	unsigned long long v;
	int c;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(name)) {
		opt_err("--threshold: '%s' is not NAME=VALUE\n", arg);
		return -1;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
	c = ibw_ctr_lookup(name);
	if (c < 0 || !ibw_ctr_desc(c)->is_error) {
		opt_err("--threshold: '%s' is not an error counter\n", name);
		return -1;
	}
	if (parse_uint("--threshold", eq + 1, 0xffffffffu, &v) < 0)
		return -1;
	if (!v) {
		opt_err("--threshold must be at least 1\n");
		return -1;
	}
	o->mon.counters.thresholds[c] = v;
	return 0;
}

static int parse_link_threshold(struct opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[64];
	int rc;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(name)) {
		opt_err("--link-threshold: '%s' is not NAME=VALUE\n", arg);
		return -1;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
	rc = ibw_link_thresholds_set(&o->mon.link_thresholds, name, eq + 1);
	if (rc == -ENOENT) {
		opt_err("--link-threshold: '%s' is not a link threshold "
			"(docs/links.md)\n",
			name);
		return -1;
	}
	if (rc < 0) {
		opt_err("--link-threshold: '%s' is not a value for %s\n",
			eq + 1, name);
		return -1;
	}
	return 0;
}

static int parse_capmask(struct opts *o, const char *arg)
{
	char *end;
	unsigned long m;

	errno = 0;
	m = strtoul(arg, &end, 0);
	if (errno || *end || !m || m > 0xffffffffu) {
		opt_err("--ping-capmask: '%s' is not a non-zero 32-bit mask\n",
			arg);
		return -1;
	}
	o->mon.ping.capmask_bits = (uint32_t)m;
	return 0;
}

static int parse_port_guid(struct opts *o, const char *arg)
{
	char *end;
	unsigned long long g;

	errno = 0;
	g = strtoull(arg, &end, 0);
	if (errno || *end || !g || arg[0] == '-') {
		opt_err("--port-guid: '%s' is not a non-zero 64-bit GUID "
			"(0x0002c90300a1b2c3)\n",
			arg);
		return -1;
	}
	o->port_guid = g;
	return 0;
}

static void *field(struct opts *o, const struct opt *r)
{
	return (char *)o + r->off;
}

static const void *cfield(const struct opts *o, const struct opt *r)
{
	return (const char *)o + r->off;
}

/* Numbers go through memcpy: a row's field is any 4- or 8-byte integer
 * or enum (NUM() checks the size). */
static void put_num(struct opts *o, const struct opt *r, unsigned long long v)
{
	uint64_t v64 = v;
	uint32_t v32 = (uint32_t)v;

	if (r->size == sizeof(v64))
		memcpy(field(o, r), &v64, sizeof(v64));
	else
		memcpy(field(o, r), &v32, sizeof(v32));
}

static unsigned long long get_num(const struct opts *o, const struct opt *r)
{
	uint64_t v64;
	uint32_t v32;

	if (r->size == sizeof(v64)) {
		memcpy(&v64, cfield(o, r), sizeof(v64));
		return v64;
	}
	memcpy(&v32, cfield(o, r), sizeof(v32));
	return v32;
}

static void put_str(struct opts *o, const struct opt *r, const char *s)
{
	memcpy(field(o, r), &s, sizeof(s));
}

static const char *get_str(const struct opts *o, const struct opt *r)
{
	const char *s;

	memcpy(&s, cfield(o, r), sizeof(s));
	return s;
}

static unsigned *list_count(struct opts *o, const struct opt *r)
{
	return (unsigned *)((char *)o + r->count_off);
}

static unsigned list_len(const struct opts *o, const struct opt *r)
{
	return *(const unsigned *)((const char *)o + r->count_off);
}

static const char *list_get(const struct opts *o, const struct opt *r,
			    unsigned i)
{
	const char *s;

	memcpy(&s, (const char *)cfield(o, r) + i * sizeof(s), sizeof(s));
	return s;
}

static void list_put(struct opts *o, const struct opt *r, unsigned i,
		     const char *s)
{
	memcpy((char *)field(o, r) + i * sizeof(s), &s, sizeof(s));
}

/* "a, b, c" (@last ", ") or "a, b or c" (@last " or ") into @buf. */
static const char *choice_list(const struct choice *c, const char *last,
			       char *buf, size_t len)
{
	size_t n = 0;
	int w;

	buf[0] = '\0';
	for (; c->name && n < len; c++) {
		w = snprintf(buf + n, len - n, "%s%s",
			     n ? (c[1].name ? ", " : last) : "", c->name);
		if (w < 0)
			break;
		n += (size_t)w;
	}
	return buf;
}

/* The default as --help, --dump-options and the man pages show it, or
 * NULL when the option has none. */
static const char *default_text(const struct opt *r, char *buf, size_t len)
{
	const struct choice *c;

	if (r->def_text)
		return r->def_text;
	switch (r->type) {
	case T_UINT:
		snprintf(buf, len, "%llu", r->def);
		return buf;
	case T_CHOICE:
		for (c = r->choices; c->name; c++)
			if ((unsigned long long)c->value == r->def)
				return c->name;
		return NULL;
	case T_STRING:
	case T_LIST:
		return r->def_str;
	default:
		return NULL;
	}
}

/* Apply row @i with argument @arg (NULL for flags) from @src. */
static int apply(struct opts *o, unsigned i, const char *arg, int src)
{
	const struct opt *r = &table[i];
	const struct choice *c;
	unsigned long long v;
	char name[64], list[128];
	unsigned *n;

	snprintf(name, sizeof(name), "--%s", r->name);
	switch (r->type) {
	case T_FLAG:
		put_num(o, r, get_num(o, r) | (r->bits ? r->bits : 1));
		break;
	case T_UNSET:
		put_str(o, r, NULL);
		break;
	case T_UINT:
		if (parse_uint(name, arg, r->max, &v) < 0)
			return -1;
		if (v < r->min) {
			opt_err("%s must be at least %llu\n", name, r->min);
			return -1;
		}
		put_num(o, r, v * (r->scale ? r->scale : 1));
		break;
	case T_STRING:
		if (r->nonempty && !*arg) {
			opt_err("%s: empty %s\n", name, r->nonempty);
			return -1;
		}
		put_str(o, r, arg);
		break;
	case T_CHOICE:
		for (c = r->choices; c->name; c++)
			if (!strcmp(arg, c->name))
				break;
		if (!c->name) {
			opt_err("%s: '%s' is not one of %s\n", name, arg,
				choice_list(r->choices, ", ", list,
					    sizeof(list)));
			return -1;
		}
		put_num(o, r, (unsigned)c->value);
		break;
	case T_LIST:
		n = list_count(o, r);
		/* The file's list replaces the default, the command line's
		 * the file's. */
		if (o->src[i] < src)
			*n = 0;
		if (*n == r->max) {
			opt_err("%s: at most %llu values\n", name, r->max);
			return -1;
		}
		list_put(o, r, (*n)++, arg);
		break;
	case T_CUSTOM:
		if (r->parse(o, arg) < 0)
			return -1;
		break;
	}
	o->src[i] = (unsigned char)src;
	return 0;
}

static char *keep(struct opts *o, const char *s)
{
	char *d;

	if (o->nstrings == IBW_OPTS_MAX_STRINGS)
		return NULL;
	d = strdup(s);
	if (d)
		o->strings[o->nstrings++] = d;
	return d;
}

static void set_defaults(struct opts *o)
{
	const struct opt *r;
	const char *s;
	unsigned i;

	for (i = 0; i < ARRAY_LEN(table); i++) {
		r = &table[i];
		switch (r->type) {
		case T_UINT:
			put_num(o, r, r->def * (r->scale ? r->scale : 1));
			break;
		case T_CHOICE:
			put_num(o, r, r->def);
			break;
		case T_STRING:
			put_str(o, r, r->def_str);
			break;
		case T_LIST:
			s = r->def_str ? keep(o, r->def_str) : NULL;
			if (s)
				apply(o, i, s, SRC_DEFAULT);
			break;
		default:
			break;
		}
	}
	/* Core's link thresholds, which the option changes one by one. */
	ibw_link_thresholds_default(&o->mon.link_thresholds);
	o->mon.have_link_thresholds = 1;
	/* Not options: the engine's deadline and tries. */
	o->mon.discover.retries = -1;
	o->mon.counters.retries = -1;
}

/* The row named @name, or -1. */
static int row_of(const char *name)
{
	unsigned i;

	for (i = 0; i < ARRAY_LEN(table); i++)
		if (!strcmp(table[i].name, name))
			return (int)i;
	return -1;
}

static int takes_value(const struct opt *r)
{
	return r->type != T_FLAG && r->type != T_UNSET;
}

static int parse_bool(const char *s, int *b)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i])) {
			*b = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*b = 0;
			return 0;
		}
	}
	return -1;
}

struct cfg_read {
	FILE *f;
	const char *path;
	unsigned line;
	struct opts *o;
	int errors;
};

/* inih reads the file through this, so we know the line of each key. */
static char *cfg_reader(char *str, int num, void *stream)
{
	struct cfg_read *r = stream;

	r->line++;
	return fgets(str, num, r->f);
}

static int cfg_handler(void *user, const char *section, const char *name,
		       const char *value)
{
	struct cfg_read *r = user;
	int i = row_of(name), b;
	char *arg;

	snprintf(sink.where, sizeof(sink.where), "%s:%u", r->path, r->line);
	if (section && *section) {
		opt_err("sections are not used ([%s]): put '%s' at the top "
			"level",
			section, name);
		r->errors++;
		return 1;
	}
	if (i >= 0 && table[i].when == IBW_OPT_CLI) {
		opt_err("'%s' goes only on the command line", name);
		r->errors++;
		return 1;
	}
	if (i < 0) {
		opt_err("unknown option '%s' (see ibwatch.conf(5))", name);
		r->errors++;
		return 1;
	}
	if (!takes_value(&table[i])) {
		if (parse_bool(value, &b) < 0) {
			opt_err("%s: '%s' is not yes or no", name, value);
			r->errors++;
		} else if (b && apply(r->o, (unsigned)i, NULL, SRC_FILE) < 0) {
			r->errors++;
		}
		return 1;
	}
	if (!*value) {
		opt_err("%s: no value", name);
		r->errors++;
		return 1;
	}
	arg = keep(r->o, value);
	if (!arg) {
		opt_err("%s: too many values in the file (at most %d)", name,
			IBW_OPTS_MAX_STRINGS);
		r->errors++;
		return 1;
	}
	if (apply(r->o, (unsigned)i, arg, SRC_FILE) < 0)
		r->errors++;
	return 1;
}

static int read_config(struct opts *o, const char *path, int must_exist)
{
	struct cfg_read r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.path = path;
	r.o = o;
	r.f = fopen(path, "r");
	if (!r.f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		snprintf(sink.where, sizeof(sink.where), "%s", path);
		opt_err("cannot read it: %s", strerror(errno));
		return -1;
	}
	sink.in_file = 1;
	rc = ini_parse_stream(cfg_reader, &r, cfg_handler, &r);
	sink.in_file = 0;
	fclose(r.f);
	if (rc > 0) {
		/* A line inih could not parse (the handler never saw it). */
		snprintf(sink.where, sizeof(sink.where), "%s:%d", path, rc);
		opt_err("not 'name = value'");
		r.errors++;
	} else if (rc < 0) {
		snprintf(sink.where, sizeof(sink.where), "%s", path);
		opt_err("cannot parse it (out of memory)");
		r.errors++;
	}
	o->config_read = 1;
	return r.errors ? -1 : 0;
}

/* The config file named on the command line, if any. */
static const char *config_arg(int argc, char **argv)
{
	const char *path = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if ((!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config")) &&
		    i + 1 < argc)
			path = argv[++i];
		else if (!strncmp(argv[i], "--config=", 9))
			path = argv[i] + 9;
	}
	return path;
}

/* getopt_long's tables, from ours: a long option's value is 256 + its
 * row. */
static void getopt_tables(struct option *lo, char *so, size_t solen)
{
	const struct opt *r;
	size_t i, n = 0;

	for (i = 0; i < ARRAY_LEN(table); i++) {
		r = &table[i];
		lo[i].name = r->name;
		lo[i].has_arg = takes_value(r) ? required_argument
					       : no_argument;
		lo[i].flag = NULL;
		lo[i].val = 256 + (int)i;
		if (r->short_name && n + 3 < solen) {
			so[n++] = r->short_name;
			if (takes_value(r))
				so[n++] = ':';
		}
	}
	memset(&lo[i], 0, sizeof(lo[i]));
	so[n] = '\0';
}

/* The row of getopt's answer @c, or -1. */
static int row_of_getopt(int c)
{
	unsigned i;

	if (c >= 256 && c < 256 + (int)ARRAY_LEN(table))
		return c - 256;
	for (i = 0; i < ARRAY_LEN(table); i++)
		if (table[i].short_name && table[i].short_name == c)
			return (int)i;
	return -1;
}

static int given(const struct opts *o, const char *name)
{
	int i = row_of(name);

	return i >= 0 && o->src[i] != SRC_DEFAULT;
}

int ibw_opts_load(int argc, char **argv, struct opts *o, char *errs,
		  size_t errlen)
{
	static struct option longopts[ARRAY_LEN(table) + 1];
	char shortopts[2 * ARRAY_LEN(table) + 1];
	const char *path = config_arg(argc, argv);
	int c, i, failed = 0;

	memset(o, 0, sizeof(*o));
	set_defaults(o);
	memset(&sink, 0, sizeof(sink));
	sink.buf = errs;
	sink.cap = errlen;
	if (errs && errlen)
		errs[0] = '\0';

	if (read_config(o, path ? path : IBW_DEFAULT_CONFIG, path != NULL) < 0)
		failed = 1;
	o->config = path ? path : o->config_read ? IBW_DEFAULT_CONFIG : NULL;

	snprintf(sink.where, sizeof(sink.where), "ibwatchd");
	getopt_tables(longopts, shortopts, sizeof(shortopts));
	optind = 0; /* start afresh: this may run again on SIGHUP */
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		/* getopt has said what is wrong with an unknown option */
		i = row_of_getopt(c);
		if (i < 0 || apply(o, (unsigned)i, optarg, SRC_CLI) < 0)
			return -1;
	}
	if (failed)
		return -1;
	if (optind < argc) {
		opt_err("unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->textfile && (o->once & 2)) {
		opt_err("--textfile and --links do not go together\n");
		return -1;
	}
	if (o->full && (!(o->once & 1) || (o->once & 2) || o->textfile)) {
		opt_err("--full goes with --once alone\n");
		return -1;
	}
	if (o->textfile)
		o->once |= 1;
	if (o->no_probes && o->once) {
		opt_err("--once needs the probes; drop "
			"--no-probes\n");
		return -1;
	}
	/* One round decides: an endport that answers its one ping is up. */
	if (o->once && !given(o, "up-after"))
		o->mon.ping.up_after = 1;
	if (o->once && !given(o, "down-after"))
		o->mon.ping.down_after = 1;
	if (o->trace && (o->once || o->ping)) {
		opt_err("--trace goes with neither --once "
			"nor --ping\n");
		return -1;
	}
	if (o->ping && o->once) {
		opt_err("--ping and --once do not go "
			"together\n");
		return -1;
	}
	/* Where core reads what the table filled in. */
	o->mon.ping.targets = o->mon.ping.ntargets ? o->targets : NULL;
	o->mon.watch = o->mon.nwatch ? o->watch : NULL;
	o->mon.counters.reset_data = (o->reset_counters & 1) != 0;
	o->mon.counters.reset_errors = (o->reset_counters & 2) != 0;
	return 0;
}

void ibw_opts_free(struct opts *o)
{
	unsigned i;

	for (i = 0; i < o->nstrings; i++)
		free(o->strings[i]);
	o->nstrings = 0;
}

/* @s from column @col, words wrapped at 79 columns onto lines indented
 * to @indent. */
static void wrap(FILE *f, const char *s, int col, int indent)
{
	const char *w;
	int len;

	while (*s) {
		while (*s == ' ')
			s++;
		w = s;
		while (*s && *s != ' ')
			s++;
		len = (int)(s - w);
		if (!len)
			break;
		if (col > indent && col + 1 + len > 79) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", len, w);
		col += len;
	}
	fputc('\n', f);
}

void ibw_opts_usage(FILE *f)
{
	enum { HELP_COL = 23 };
	const struct opt *r;
	char left[64], text[768], choices[128], def[32], applied[512];
	const char *d, *sighup[16];
	size_t i, n = 0, nsighup = 0;
	int col;

	fputs("usage: ibwatchd [options]\n"
	      "       ibwatchd --ping TARGET [--count N] [--ping-method M] "
	      "[--ping-type T]\n"
	      "       ibwatchd --trace TARGET [--reverse] [--confirm]\n",
	      f);
	for (i = 0; i < ARRAY_LEN(table); i++) {
		r = &table[i];
		if (!r->help)
			continue;
		if (r->group)
			fprintf(f, "\n%s%s", r->group, *r->group ? "\n" : "");
		if (r->short_name)
			snprintf(left, sizeof(left), "  -%c, --%s%s%s",
				 r->short_name, r->name, r->arg ? " " : "",
				 r->arg ? r->arg : "");
		else
			snprintf(left, sizeof(left), "  --%s%s%s", r->name,
				 r->arg ? " " : "", r->arg ? r->arg : "");
		d = default_text(r, def, sizeof(def));
		snprintf(text, sizeof(text), "%s%s%s%s%s%s%s%s", r->help,
			 r->choices ? ": " : "",
			 r->choices ? choice_list(r->choices, " or ", choices,
						  sizeof(choices))
				    : "",
			 d ? " (default: " : "", d ? d : "",
			 d && r->def_note ? "; " : "",
			 d && r->def_note ? r->def_note : "", d ? ")" : "");
		col = fprintf(f, "%s", left);
		if (col >= HELP_COL - 1) {
			fprintf(f, "\n");
			col = 0;
		}
		fprintf(f, "%*s", HELP_COL - col, "");
		wrap(f, text, HELP_COL, HELP_COL);
		if (r->when == IBW_OPT_SIGHUP && nsighup < ARRAY_LEN(sighup))
			sighup[nsighup++] = r->name;
	}
	applied[0] = '\0';
	for (i = 0; i < nsighup; i++)
		n += (size_t)snprintf(applied + n, sizeof(applied) - n,
				      "%s--%s",
				      !i		? ""
				      : i + 1 < nsighup ? ", "
							: " and ",
				      sighup[i]);
	snprintf(text, sizeof(text),
		 "SIGHUP reads the config file again and applies %s at once; "
		 "a change to another option needs a restart.",
		 applied);
	fputc('\n', f);
	wrap(f, text, 0, 0);
}

static const char *const when_names[] = {
	[IBW_OPT_CLI] = "cli",
	[IBW_OPT_SIGHUP] = "sighup",
	[IBW_OPT_RESTART] = "restart",
};

void ibw_opts_dump(FILE *f)
{
	const struct opt *r;
	char def[32];
	const char *d;
	size_t i;

	for (i = 0; i < ARRAY_LEN(table); i++) {
		r = &table[i];
		if (!r->help)
			continue;
		d = default_text(r, def, sizeof(def));
		fprintf(f, "%s\t%s\t%s\t", r->name, d ? d : "-",
			when_names[r->when]);
		if (r->short_name)
			fprintf(f, "-%c\n", r->short_name);
		else
			fprintf(f, "-\n");
	}
}

static int str_differs(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a && strcmp(a, b));
}

static int differs(const struct opts *a, const struct opts *b,
		   const struct opt *r)
{
	unsigned i;

	switch (r->type) {
	case T_STRING:
	case T_UNSET:
		return str_differs(get_str(a, r), get_str(b, r));
	case T_LIST:
		if (list_len(a, r) != list_len(b, r))
			return 1;
		for (i = 0; i < list_len(a, r); i++)
			if (str_differs(list_get(a, r, i), list_get(b, r, i)))
				return 1;
		return 0;
	default:
		return memcmp(cfield(a, r), cfield(b, r), r->size) != 0;
	}
}

/* 1 when an earlier row has @r's field: the change is named there. */
static int shares_field(const struct opt *r)
{
	const struct opt *p;

	for (p = table; p < r; p++)
		if (p->off == r->off)
			return 1;
	return 0;
}

void ibw_opts_diff(const struct opts *run, const struct opts *next,
		   void (*cb)(const char *name, enum ibw_opt_when when,
			      void *arg),
		   void *arg)
{
	const struct opt *r;
	size_t i;

	for (i = 0; i < ARRAY_LEN(table); i++) {
		r = &table[i];
		if (r->when == IBW_OPT_CLI || shares_field(r))
			continue;
		if (differs(run, next, r))
			cb(r->name, r->when, arg);
	}
}

/* The slot of @o->strings holding @s, or -1 (a default, the command
 * line's argv, NULL). */
static int owned(const struct opts *o, const char *s)
{
	unsigned i;

	for (i = 0; s && i < o->nstrings; i++)
		if (o->strings[i] == s)
			return (int)i;
	return -1;
}

/* @run takes @next's string for row @r, and with it the string's
 * storage; its old one goes to @next, freed with it. */
static void adopt_str(struct opts *run, struct opts *next, const struct opt *r)
{
	const char *was = get_str(run, r), *now = get_str(next, r);
	int k = owned(next, now), j = owned(run, was);

	if (!str_differs(was, now))
		return;
	if (k >= 0 && j >= 0) {
		run->strings[j] = next->strings[k];
		next->strings[k] = (char *)was;
	} else if (k >= 0 && run->nstrings < IBW_OPTS_MAX_STRINGS) {
		run->strings[run->nstrings++] = next->strings[k];
		next->strings[k] = NULL;
	} else if (k >= 0) {
		return; /* no room: the next SIGHUP names it again */
	}
	put_str(run, r, now);
}

void ibw_opts_adopt(struct opts *run, struct opts *next)
{
	const struct opt *r;
	size_t i;

	for (i = 0; i < ARRAY_LEN(table); i++) {
		r = &table[i];
		if (r->when != IBW_OPT_SIGHUP)
			continue;
		/* A list would point into @next's storage: none is
		 * applied by SIGHUP. */
		if (r->type == T_STRING)
			adopt_str(run, next, r);
		else if (r->type != T_LIST && r->type != T_UNSET)
			memcpy(field(run, r), cfield(next, r), r->size);
	}
}

/* The key line of an M_Key file (@buf, NUL-terminated) into @key. No
 * message quotes the file: it holds a secret. */
static int parse_mkey(char *buf, uint64_t *key, const char *path, char *err,
		      size_t errlen)
{
	char *line, *next, *end;
	unsigned n = 0, lineno = 0, keyline = 0;
	unsigned long long v = 0;

	for (line = buf; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line += strspn(line, " \t\r");
		if (!*line || *line == '#')
			continue;
		if (n++) {
			snprintf(err, errlen,
				 "mkey-file %s: line %u: a second key (one "
				 "M_Key per file)",
				 path, lineno);
			return -1;
		}
		keyline = lineno;
		errno = 0;
		v = strtoull(line, &end, 0);
		end += strspn(end, " \t\r");
		if (errno || end == line || *end || *line == '-') {
			snprintf(err, errlen,
				 "mkey-file %s: line %u: not a 64-bit number "
				 "(0x-prefixed hex or decimal)",
				 path, lineno);
			return -1;
		}
	}
	if (!n) {
		snprintf(err, errlen, "mkey-file %s: no key in it", path);
		return -1;
	}
	if (!v) {
		snprintf(err, errlen,
			 "mkey-file %s: line %u: the key is 0, what SMPs "
			 "carry without one",
			 path, keyline);
		return -1;
	}
	*key = v;
	return 0;
}

int ibw_opts_read_mkey(const char *path, uint64_t *key, char *err,
		       size_t errlen)
{
	char buf[512];
	struct stat st;
	ssize_t n;
	size_t len = 0;
	int fd, rc = -1;

	/* fstat on what we opened: the checks are about the file read. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errlen, "mkey-file %s: %s", path,
			 strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "mkey-file %s: %s", path,
			 strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "mkey-file %s: not a regular file", path);
		goto out;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(err, errlen,
			 "mkey-file %s: mode %04o lets its group or others "
			 "at the M_Key: make it 0600 (or 0400), owned by the "
			 "user ibwatchd runs as",
			 path, (unsigned)(st.st_mode & 07777));
		goto out;
	}
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "mkey-file %s: %s", path,
				 strerror(errno));
			goto out;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	if (len == sizeof(buf)) {
		snprintf(err, errlen,
			 "mkey-file %s: longer than %zu bytes: not an M_Key "
			 "file",
			 path, sizeof(buf) - 1);
		goto out;
	}
	buf[len] = '\0';
	if (memchr(buf, '\0', len)) {
		snprintf(err, errlen, "mkey-file %s: not a text file", path);
		goto out;
	}
	rc = parse_mkey(buf, key, path, err, errlen);
out:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return rc;
}
