// SPDX-License-Identifier: BSD-2-Clause
/*
 * ibwatchd's option table: one row an option (agent/options.c reads it
 * into getopt's table, the config file's keywords, --help, the dump and
 * the SIGHUP diff), and the parsers of the rows whose values are more
 * than a number, a string or a choice.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt_err.h"
#include "opt_table.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

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
static const struct choice fabric_labels[] = {
	{ "ibwatch", IBW_PROM_FABRIC_IBWATCH },
	{ "all", IBW_PROM_FABRIC_ALL },
	{ "none", IBW_PROM_FABRIC_NONE },
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
const struct opt ibw_opt_table[] = {
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
	{ OPT("state-interval", T_UINT, IBW_OPT_RESTART),
	  NUM(mon.state_interval_us), .min = 1, .max = 86400, .scale = US_PER_S,
	  .def = IBW_STATE_INTERVAL_US / US_PER_S, .arg = "S",
	  .help = "seconds between the link windows' batches in the state "
		  "file's journal (what a crash can misplace in time)" },
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

	{ OPT("hardware-interval", T_UINT, IBW_OPT_RESTART),
	  NUM(mon.hw.interval_us), .max = 86400, .scale = US_PER_S,
	  .def = IBW_HW_INTERVAL_US / US_PER_S, .arg = "S",
	  .group = "Hardware:",
	  .help = "seconds between reads of the switches' and HCAs' sensors, "
		  "fans and power supplies through vendor MADs "
		  "(docs/hardware.md); 0: none" },

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
	{ OPT("metrics-no-modules", T_FLAG, IBW_OPT_RESTART),
	  NUM(http.prom.no_modules),
	  .help = "/metrics: no ibwatch_module_* series (about 16 per cable "
		  "module; docs/hardware.md)" },
	{ OPT("metrics-fabric-label", T_CHOICE, IBW_OPT_RESTART),
	  NUM(http.prom.fabric_label), .choices = fabric_labels,
	  .def = IBW_PROM_FABRIC_IBWATCH, .arg = "ibwatch|all|none",
	  .help = "/metrics: which series carry fabric=\"PREFIX/SM_GUID\" "
		  "(ibwatch: ibwatch_* only, the exporter's series as it "
		  "has them; all: every series)" },
	{ OPT("fabric-name", T_STRING, IBW_OPT_RESTART),
	  STR(http.prom.fabric_name), .def_text = "none",
	  .def_note = "the identity, PREFIX/SM_GUID", .arg = "NAME",
	  .help = "/metrics: the fabric label's value, which stays when the "
		  "SM moves (every agent of a fabric the same)" },
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

const unsigned ibw_opt_table_len = ARRAY_LEN(ibw_opt_table);

_Static_assert(ARRAY_LEN(ibw_opt_table) <= IBW_OPTS_MAX, "raise IBW_OPTS_MAX");

static int parse_threshold(struct opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[64];
	unsigned long long v;
	int c;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(name)) {
		ibw_opt_err("--threshold: '%s' is not NAME=VALUE\n", arg);
		return -1;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
	c = ibw_ctr_lookup(name);
	if (c < 0 || !ibw_ctr_desc(c)->is_error) {
		ibw_opt_err("--threshold: '%s' is not an error counter\n",
			    name);
		return -1;
	}
	if (ibw_opt_parse_uint("--threshold", eq + 1, 0xffffffffu, &v) < 0)
		return -1;
	if (!v) {
		ibw_opt_err("--threshold must be at least 1\n");
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
		ibw_opt_err("--link-threshold: '%s' is not NAME=VALUE\n", arg);
		return -1;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
	rc = ibw_link_thresholds_set(&o->mon.link_thresholds, name, eq + 1);
	if (rc == -ENOENT) {
		ibw_opt_err("--link-threshold: '%s' is not a link threshold "
			    "(docs/links.md)\n",
			    name);
		return -1;
	}
	if (rc < 0) {
		ibw_opt_err("--link-threshold: '%s' is not a value for %s\n",
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
		ibw_opt_err(
			"--ping-capmask: '%s' is not a non-zero 32-bit mask\n",
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
		ibw_opt_err("--port-guid: '%s' is not a non-zero 64-bit GUID "
			    "(0x0002c90300a1b2c3)\n",
			    arg);
		return -1;
	}
	o->port_guid = g;
	return 0;
}
