/*
 * ibwatchd: attach to a local HCA port and watch the fabric.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "engine.h"
#include "ibw_version.h"
#include "json.h"
#include "localport.h"
#include "monitor.h"
#include "ping.h"
#include "responder.h"
#include "server.h"
#include "snmp.h"
#include "sa.h"
#include "trace.h"
#include "log.h"
#include "loop.h"
#include "umad.h"

#define LOCAL_REFRESH_US (10u * 1000000u)
#define DEFAULT_STATE_FILE "/var/lib/ibwatch/counters.state"

#define MAX_PING_TARGETS 1024

struct opts {
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
};

struct daemon {
	struct opts o;
	struct ibw_loop *loop;
	struct ibw_transport *t;
	struct ibw_engine *e;
	struct ibw_local_port lp;
	struct ibw_localport_query lq;
	int lq_done;
	struct ibw_timer *refresh;
	struct ibw_monitor *mon;
	struct ibw_responder *resp;
	struct ibw_pinger *pinger; /* --ping without the monitor */
	struct ibw_tracer *tracer; /* --trace */
	struct ibw_http *http;
	struct ibw_snmp *snmp;
	int once_done;
	int ping_started;
	int ping_status;
	int sfd;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ibwatchd [options]\n"
		   "       ibwatchd --ping TARGET [--count N] [--ping-method "
		   "M] [--ping-type T]\n"
		   "       ibwatchd --trace TARGET [--reverse] [--confirm]\n"
		   "\n"
		   "Port and engine:\n"
		   "  --ca NAME            CA to attach to (default: first "
		   "with an active port)\n"
		   "  --port N             port on that CA (default: first "
		   "active)\n"
		   "  --max-inflight N     MADs in flight in all (default 64)\n"
		   "  --max-per-dest N     MADs in flight to one destination "
		   "(default 8)\n"
		   "  --timeout-ms N       deadline of one try (default 100)\n"
		   "  --retries N          extra tries after a timeout "
		   "(default 2)\n"
		   "\n"
		   "Probes:\n"
		   "  --once               run one cycle, print a JSON "
		   "snapshot, exit\n"
		   "  --discovery-interval S   seconds between discovery "
		   "sweeps (default 60)\n"
		   "  --counter-interval S     seconds between counter sweeps "
		   "(default 30)\n"
		   "  --state-file PATH    counter totals kept here\n"
		   "                       (default " DEFAULT_STATE_FILE ")\n"
		   "  --no-state-file      keep no state file\n"
		   "  --node-name-map PATH infiniband-diags node-name-map "
		   "(re-read on SIGHUP)\n"
		   "  --scope SCOPE        counters of: all (default), "
		   "switches, cas\n"
		   "  --threshold NAME=N   error threshold, e.g. "
		   "SymbolErrorCounter=10\n"
		   "  --reset-counters GROUP   clear narrow counters before "
		   "they saturate:\n"
		   "                       data, errors or all (default: "
		   "never)\n"
		   "  --detail-counters    also PortRcvErrorDetails and "
		   "PortXmitDiscardDetails\n"
		   "\n"
		   "Pings:\n"
		   "  --responder          also answer echo pings (ibping and "
		   "ibwatchd)\n"
		   "  --no-probes          no discovery, counters or pings "
		   "(with --responder)\n"
		   "  --no-ping            no endport pings\n"
		   "  --ping-interval-ms N interval between pings of one "
		   "endport (default 10000)\n"
		   "  --ping-method M      auto (default), echo, pma or smp\n"
		   "  --ping-timeout-ms N  deadline of one ping (default 200)\n"
		   "  --ping-retries N     further tries of a ping (default "
		   "0)\n"
		   "  --ping-target T      ping T (LID, GUID or node name); "
		   "repeatable.\n"
		   "                       Default: every CA port of the "
		   "fabric\n"
		   "  --ping-capmask BITS  ping the endports with these "
		   "capability bits\n"
		   "  --down-after N       lost pings in a row that make an "
		   "endport down (3)\n"
		   "  --up-after N         answered pings in a row that bring "
		   "it up (2)\n"
		   "  --ping-window N      pings in the loss window (default "
		   "20, at most 256)\n"
		   "  --ping TARGET        ping TARGET now, print the result "
		   "as JSON, exit\n"
		   "  --count N            pings for --ping (default 5)\n"
		   "  --ping-type T        with --ping: echo, timestamp, info "
		   "or ibping\n"
		   "\n"
		   "Traces:\n"
		   "  --trace TARGET       trace the path to TARGET now, print "
		   "it as JSON, exit\n"
		   "  --reverse            with --trace: also the path back\n"
		   "  --confirm            with --trace: ask a responder there "
		   "who it is\n"
		   "  --watch-path T       trace the path to T (LID, GUID or "
		   "name) at an\n"
		   "                       interval, an event when it changes; "
		   "repeatable\n"
		   "  --trace-interval S   seconds between traces of watched "
		   "paths (default 60)\n"
		   "\n"
		   "HTTP:\n"
		   "  --http ADDR:PORT     serve JSON and Prometheus metrics "
		   "here "
		   "(default\n"
		   "                       127.0.0.1:9776; [::1]:9776 for "
		   "IPv6)\n"
		   "  --no-http            no HTTP endpoint\n"
		   "  --http-cert FILE     serve HTTPS with this PEM "
		   "certificate\n"
		   "  --http-key FILE      ... and this PEM key\n"
		   "  --http-token-file F  require this bearer token on trace "
		   "and "
		   "ping\n"
		   "  --http-token-everywhere  ... and on every endpoint\n"
		   "\n"
		   "SNMP (an AgentX subagent of snmpd):\n"
		   "  --agentx SOCKET      the master agent's AgentX socket "
		   "(default\n"
		   "                       /var/agentx/master)\n"
		   "  --agentx-ping-interval S  seconds between pings of the "
		   "master;\n"
		   "                       reconnect this often when it is "
		   "gone (default 15)\n"
		   "  --snmp-trap-rate N   notifications per minute at most "
		   "(default 60)\n"
		   "  --no-snmp            no SNMP subagent\n"
		   "\n"
		   "  --log-level LEVEL    err, warn, info or debug (default "
		   "info)\n"
		   "  --version            print the version and exit\n"
		   "  --help               print this help and exit\n");
}

static int parse_uint(const char *opt, const char *s, unsigned max,
		      unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > max) {
		fprintf(stderr, "ibwatchd: %s: '%s' is not a number in 0..%u\n",
			opt, s, max);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

static int parse_uint_fail(const char *opt)
{
	fprintf(stderr, "ibwatchd: %s must be at least 1\n", opt);
	return -1;
}

static int parse_threshold(const char *arg, struct ibw_counters_opts *co)
{
	const char *eq = strchr(arg, '=');
	char name[64];
	unsigned v;
	int c;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(name)) {
		fprintf(stderr,
			"ibwatchd: --threshold: '%s' is not NAME=VALUE\n", arg);
		return -1;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
	c = ibw_ctr_lookup(name);
	if (c < 0 || !ibw_ctr_desc(c)->is_error) {
		fprintf(stderr,
			"ibwatchd: --threshold: '%s' is not an error counter\n",
			name);
		return -1;
	}
	if (parse_uint("--threshold", eq + 1, 0xffffffffu, &v) < 0)
		return -1;
	if (!v)
		return parse_uint_fail("--threshold");
	co->thresholds[c] = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	enum {
		OPT_CA = 256,
		OPT_PORT,
		OPT_ONCE,
		OPT_MAXIF,
		OPT_MAXPD,
		OPT_TIMEOUT,
		OPT_RETRIES,
		OPT_LOGLEVEL,
		OPT_DISC_IVL,
		OPT_CTR_IVL,
		OPT_STATE,
		OPT_NO_STATE,
		OPT_NAMEMAP,
		OPT_SCOPE,
		OPT_THRESHOLD,
		OPT_RESET,
		OPT_DETAILS,
		OPT_RESPONDER,
		OPT_NO_PROBES,
		OPT_NO_PING,
		OPT_PING_IVL,
		OPT_PING_METHOD,
		OPT_PING_TIMEOUT,
		OPT_PING_RETRIES,
		OPT_PING_TARGET,
		OPT_PING_CAPMASK,
		OPT_DOWN_AFTER,
		OPT_PING_WINDOW,
		OPT_UP_AFTER,
		OPT_PING,
		OPT_COUNT,
		OPT_PING_TYPE,
		OPT_TRACE,
		OPT_REVERSE,
		OPT_CONFIRM,
		OPT_WATCH,
		OPT_TRACE_IVL,
		OPT_HTTP,
		OPT_NO_HTTP,
		OPT_HTTP_CERT,
		OPT_HTTP_KEY,
		OPT_HTTP_TOKEN,
		OPT_HTTP_AUTH_ALL,
		OPT_AGENTX,
		OPT_AGENTX_PING,
		OPT_TRAP_RATE,
		OPT_NO_SNMP,
		OPT_VERSION,
		OPT_HELP,
	};
	static const struct option longopts[] = {
		{ "ca", required_argument, NULL, OPT_CA },
		{ "port", required_argument, NULL, OPT_PORT },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "max-inflight", required_argument, NULL, OPT_MAXIF },
		{ "max-per-dest", required_argument, NULL, OPT_MAXPD },
		{ "timeout-ms", required_argument, NULL, OPT_TIMEOUT },
		{ "retries", required_argument, NULL, OPT_RETRIES },
		{ "log-level", required_argument, NULL, OPT_LOGLEVEL },
		{ "discovery-interval", required_argument, NULL, OPT_DISC_IVL },
		{ "counter-interval", required_argument, NULL, OPT_CTR_IVL },
		{ "state-file", required_argument, NULL, OPT_STATE },
		{ "no-state-file", no_argument, NULL, OPT_NO_STATE },
		{ "node-name-map", required_argument, NULL, OPT_NAMEMAP },
		{ "scope", required_argument, NULL, OPT_SCOPE },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "reset-counters", required_argument, NULL, OPT_RESET },
		{ "detail-counters", no_argument, NULL, OPT_DETAILS },
		{ "responder", no_argument, NULL, OPT_RESPONDER },
		{ "no-probes", no_argument, NULL, OPT_NO_PROBES },
		{ "no-ping", no_argument, NULL, OPT_NO_PING },
		{ "ping-interval-ms", required_argument, NULL, OPT_PING_IVL },
		{ "ping-method", required_argument, NULL, OPT_PING_METHOD },
		{ "ping-timeout-ms", required_argument, NULL,
		  OPT_PING_TIMEOUT },
		{ "ping-retries", required_argument, NULL, OPT_PING_RETRIES },
		{ "ping-target", required_argument, NULL, OPT_PING_TARGET },
		{ "ping-capmask", required_argument, NULL, OPT_PING_CAPMASK },
		{ "down-after", required_argument, NULL, OPT_DOWN_AFTER },
		{ "ping-window", required_argument, NULL, OPT_PING_WINDOW },
		{ "up-after", required_argument, NULL, OPT_UP_AFTER },
		{ "ping", required_argument, NULL, OPT_PING },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "ping-type", required_argument, NULL, OPT_PING_TYPE },
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "reverse", no_argument, NULL, OPT_REVERSE },
		{ "confirm", no_argument, NULL, OPT_CONFIRM },
		{ "watch-path", required_argument, NULL, OPT_WATCH },
		{ "trace-interval", required_argument, NULL, OPT_TRACE_IVL },
		{ "http", required_argument, NULL, OPT_HTTP },
		{ "no-http", no_argument, NULL, OPT_NO_HTTP },
		{ "http-cert", required_argument, NULL, OPT_HTTP_CERT },
		{ "http-key", required_argument, NULL, OPT_HTTP_KEY },
		{ "http-token-file", required_argument, NULL, OPT_HTTP_TOKEN },
		{ "http-token-everywhere", no_argument, NULL,
		  OPT_HTTP_AUTH_ALL },
		{ "agentx", required_argument, NULL, OPT_AGENTX },
		{ "agentx-ping-interval", required_argument, NULL,
		  OPT_AGENTX_PING },
		{ "snmp-trap-rate", required_argument, NULL, OPT_TRAP_RATE },
		{ "no-snmp", no_argument, NULL, OPT_NO_SNMP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	enum ibw_log_level lvl;
	unsigned v;
	int c;

	memset(o, 0, sizeof(*o));
	o->ecfg.retries = -1;
	o->mon.discover.retries = -1;
	o->mon.counters.retries = -1;
	o->mon.state_file = DEFAULT_STATE_FILE;
	o->mon.ping.retries = -1;
	o->count = 5;
	o->ping_type = IBW_ECHO_REQ;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CA:
			o->ca = optarg;
			break;
		case OPT_PORT:
			if (parse_uint("--port", optarg, 254, &v) < 0)
				return -1;
			o->port = (int)v;
			break;
		case OPT_ONCE:
			o->once = 1;
			break;
		case OPT_MAXIF:
			if (parse_uint("--max-inflight", optarg, 16384, &v) < 0)
				return -1;
			o->ecfg.max_inflight = v;
			break;
		case OPT_MAXPD:
			if (parse_uint("--max-per-dest", optarg, 16384, &v) < 0)
				return -1;
			o->ecfg.max_per_dest = v;
			break;
		case OPT_TIMEOUT:
			if (parse_uint("--timeout-ms", optarg, 60000, &v) < 0)
				return -1;
			o->ecfg.timeout_ms = v;
			break;
		case OPT_RETRIES:
			if (parse_uint("--retries", optarg, 20, &v) < 0)
				return -1;
			o->ecfg.retries = (int)v;
			break;
		case OPT_LOGLEVEL:
			if (ibw_log_level_parse(optarg, &lvl) < 0) {
				fprintf(stderr,
					"ibwatchd: --log-level: '%s' is not "
					"one of err, warn, info, debug\n",
					optarg);
				return -1;
			}
			ibw_log_set_level(lvl);
			break;
		case OPT_DISC_IVL:
			if (parse_uint("--discovery-interval", optarg, 86400,
				       &v) < 0)
				return -1;
			if (!v)
				return parse_uint_fail("--discovery-interval");
			o->mon.discovery_interval_us = (uint64_t)v * 1000000u;
			break;
		case OPT_CTR_IVL:
			if (parse_uint("--counter-interval", optarg, 86400,
				       &v) < 0)
				return -1;
			if (!v)
				return parse_uint_fail("--counter-interval");
			o->mon.counter_interval_us = (uint64_t)v * 1000000u;
			break;
		case OPT_STATE:
			o->mon.state_file = optarg;
			break;
		case OPT_NO_STATE:
			o->mon.state_file = NULL;
			break;
		case OPT_NAMEMAP:
			o->mon.node_name_map = optarg;
			break;
		case OPT_SCOPE:
			if (!strcmp(optarg, "all")) {
				o->mon.counters.scope = IBW_SCOPE_ALL;
			} else if (!strcmp(optarg, "switches")) {
				o->mon.counters.scope = IBW_SCOPE_SWITCHES;
			} else if (!strcmp(optarg, "cas")) {
				o->mon.counters.scope = IBW_SCOPE_CAS;
			} else {
				fprintf(stderr,
					"ibwatchd: --scope: '%s' is not one of "
					"all, switches, cas\n",
					optarg);
				return -1;
			}
			break;
		case OPT_THRESHOLD:
			if (parse_threshold(optarg, &o->mon.counters) < 0)
				return -1;
			break;
		case OPT_RESET:
			if (!strcmp(optarg, "data") || !strcmp(optarg, "all"))
				o->mon.counters.reset_data = 1;
			if (!strcmp(optarg, "errors") || !strcmp(optarg, "all"))
				o->mon.counters.reset_errors = 1;
			if (strcmp(optarg, "data") &&
			    strcmp(optarg, "errors") && strcmp(optarg, "all")) {
				fprintf(stderr,
					"ibwatchd: --reset-counters: '%s' is "
					"not one of data, errors, all\n",
					optarg);
				return -1;
			}
			break;
		case OPT_DETAILS:
			o->mon.counters.details = 1;
			break;
		case OPT_RESPONDER:
			o->responder = 1;
			break;
		case OPT_NO_PROBES:
			o->no_probes = 1;
			break;
		case OPT_NO_PING:
			o->mon.no_ping = 1;
			break;
		case OPT_PING_IVL:
			if (parse_uint("--ping-interval-ms", optarg, 86400000,
				       &v) < 0)
				return -1;
			if (!v)
				return parse_uint_fail("--ping-interval-ms");
			o->mon.ping.interval_us = (uint64_t)v * 1000u;
			break;
		case OPT_PING_METHOD:
			if (ibw_ping_method_parse(optarg, &o->mon.ping.method) <
			    0) {
				fprintf(stderr,
					"ibwatchd: --ping-method: '%s' is not "
					"one of auto, echo, pma, smp\n",
					optarg);
				return -1;
			}
			break;
		case OPT_PING_TIMEOUT:
			if (parse_uint("--ping-timeout-ms", optarg, 60000, &v) <
			    0)
				return -1;
			if (!v)
				return parse_uint_fail("--ping-timeout-ms");
			o->mon.ping.timeout_ms = v;
			break;
		case OPT_PING_RETRIES:
			if (parse_uint("--ping-retries", optarg, 20, &v) < 0)
				return -1;
			o->mon.ping.retries = (int)v;
			break;
		case OPT_PING_TARGET:
			if (o->mon.ping.ntargets == MAX_PING_TARGETS) {
				fprintf(stderr,
					"ibwatchd: more than %d "
					"--ping-target\n",
					MAX_PING_TARGETS);
				return -1;
			}
			o->targets[o->mon.ping.ntargets++] = optarg;
			o->mon.ping.targets = o->targets;
			break;
		case OPT_PING_CAPMASK: {
			char *end;
			unsigned long m;

			errno = 0;
			m = strtoul(optarg, &end, 0);
			if (errno || *end || !m || m > 0xffffffffu) {
				fprintf(stderr,
					"ibwatchd: --ping-capmask: '%s' is not "
					"a non-zero 32-bit mask\n",
					optarg);
				return -1;
			}
			o->mon.ping.capmask_bits = (uint32_t)m;
		} break;
		case OPT_DOWN_AFTER:
			if (parse_uint("--down-after", optarg, 1000, &v) < 0)
				return -1;
			if (!v)
				return parse_uint_fail("--down-after");
			o->mon.ping.down_after = v;
			break;
		case OPT_PING_WINDOW:
			if (parse_uint("--ping-window", optarg,
				       IBW_PING_WINDOW_MAX, &v) < 0)
				return -1;
			if (!v)
				return parse_uint_fail("--ping-window");
			o->mon.ping.window = v;
			break;
		case OPT_UP_AFTER:
			if (parse_uint("--up-after", optarg, 1000, &v) < 0)
				return -1;
			if (!v)
				return parse_uint_fail("--up-after");
			o->mon.ping.up_after = v;
			break;
		case OPT_PING:
			o->ping = optarg;
			break;
		case OPT_COUNT:
			if (parse_uint("--count", optarg, 10000, &v) < 0)
				return -1;
			if (!v)
				return parse_uint_fail("--count");
			o->count = v;
			break;
		case OPT_PING_TYPE:
			if (!strcmp(optarg, "echo")) {
				o->ping_type = IBW_ECHO_REQ;
			} else if (!strcmp(optarg, "timestamp")) {
				o->ping_type = IBW_TS_REQ;
			} else if (!strcmp(optarg, "info")) {
				o->ping_type = IBW_INFO_REQ;
			} else if (!strcmp(optarg, "ibping")) {
				o->ping_type = IBW_ECHO_IBPING;
			} else {
				fprintf(stderr,
					"ibwatchd: --ping-type: '%s' is not "
					"one of echo, timestamp, info, "
					"ibping\n",
					optarg);
				return -1;
			}
			break;
		case OPT_TRACE:
			o->trace = optarg;
			break;
		case OPT_REVERSE:
			o->trace_flags |= IBW_TRACE_REVERSE;
			break;
		case OPT_CONFIRM:
			o->trace_flags |= IBW_TRACE_CONFIRM;
			break;
		case OPT_WATCH:
			if (o->mon.nwatch == MAX_PING_TARGETS) {
				fprintf(stderr,
					"ibwatchd: more than %d --watch-path\n",
					MAX_PING_TARGETS);
				return -1;
			}
			o->watch[o->mon.nwatch++] = optarg;
			o->mon.watch = o->watch;
			break;
		case OPT_TRACE_IVL:
			if (parse_uint("--trace-interval", optarg, 86400, &v) <
			    0)
				return -1;
			if (!v)
				return parse_uint_fail("--trace-interval");
			o->mon.trace_interval_us = (uint64_t)v * 1000000u;
			break;
		case OPT_HTTP:
			if (o->http.nlisten == IBW_HTTP_MAX_LISTEN) {
				fprintf(stderr,
					"ibwatchd: at most %d --http "
					"addresses\n",
					IBW_HTTP_MAX_LISTEN);
				return -1;
			}
			o->http.listen[o->http.nlisten++] = optarg;
			break;
		case OPT_HTTP_CERT:
			o->http.tls_cert = optarg;
			break;
		case OPT_HTTP_KEY:
			o->http.tls_key = optarg;
			break;
		case OPT_HTTP_TOKEN:
			o->http.token_file = optarg;
			break;
		case OPT_HTTP_AUTH_ALL:
			o->http.token_everywhere = 1;
			break;
		case OPT_NO_HTTP:
			o->no_http = 1;
			break;
		case OPT_AGENTX:
			if (!*optarg) {
				fprintf(stderr, "ibwatchd: --agentx: empty "
						"socket\n");
				return -1;
			}
			o->snmp.agentx_socket = optarg;
			break;
		case OPT_AGENTX_PING:
			if (parse_uint("--agentx-ping-interval", optarg, 3600,
				       &v) < 0)
				return -1;
			if (!v)
				return parse_uint_fail("--agentx-ping-"
						       "interval");
			o->snmp.ping_interval_s = v;
			break;
		case OPT_TRAP_RATE:
			if (parse_uint("--snmp-trap-rate", optarg, 60000, &v) <
			    0)
				return -1;
			if (!v)
				return parse_uint_fail("--snmp-trap-rate");
			o->snmp.trap_rate = v;
			break;
		case OPT_NO_SNMP:
			o->no_snmp = 1;
			break;
		case OPT_VERSION:
			printf("ibwatchd %s\n", IBW_VERSION);
			exit(0);
		case OPT_HELP:
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ibwatchd: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	if (o->no_probes && o->once) {
		fprintf(stderr, "ibwatchd: --once needs the probes; drop "
				"--no-probes\n");
		return -1;
	}
	/* One round decides: an endport that answers its one ping is up. */
	if (o->once && !o->mon.ping.up_after)
		o->mon.ping.up_after = 1;
	if (o->once && !o->mon.ping.down_after)
		o->mon.ping.down_after = 1;
	if (o->trace && (o->once || o->ping)) {
		fprintf(stderr, "ibwatchd: --trace goes with neither --once "
				"nor --ping\n");
		return -1;
	}
	if (o->ping && o->once) {
		fprintf(stderr, "ibwatchd: --ping and --once do not go "
				"together\n");
		return -1;
	}
	return 0;
}

static json_t *snapshot_json(struct daemon *d)
{
	struct ibw_engine_stats st;
	const struct ibw_localport_query *q = &d->lq;
	struct ibw_snapshot *snap = ibw_monitor_snapshot(d->mon);
	struct ibw_event evs[256];
	struct ibw_local_ca cas[4];
	json_t *root = json_object(), *sweeps;
	int ncas;
	unsigned nev;

	ibw_engine_get_stats(d->e, &st);
	json_object_set_new(root, "version", json_string(IBW_VERSION));
	json_object_set_new(
		root, "local_port",
		ibw_json_local_port(&d->lp, q->have_portinfo ? &q->pi : NULL,
				    q->have_nodeinfo ? &q->ni : NULL,
				    q->have_desc ? q->desc : NULL));
	ncas = ibw_umad_local_cas(cas, 4);
	json_object_set_new(root, "local",
			    ibw_json_local_cas(cas,
					       ncas > 0 ? (unsigned)ncas : 0));
	sweeps = json_object();
	json_object_set_new(sweeps, "discovery",
			    ibw_json_sweep(&snap->discovery));
	json_object_set_new(sweeps, "counters",
			    ibw_json_sweep(&snap->counters));
	json_object_set_new(sweeps, "unreachable_ports",
			    json_integer(snap->unreachable_ports));
	json_object_set_new(root, "sweeps", sweeps);
	json_object_set_new(root, "nodes", ibw_json_nodes(snap));
	json_object_set_new(root, "endports", ibw_json_endports(snap));
	json_object_set_new(root, "traces", ibw_json_watched(snap));
	nev = ibw_events_since(ibw_monitor_events(d->mon), 0, evs, 256);
	json_object_set_new(root, "events", ibw_json_events(evs, nev));
	json_object_set_new(root, "engine", ibw_json_engine_stats(&st));
	ibw_snapshot_unref(snap);
	return root;
}

static void start_ping(struct daemon *d);

static void on_local(struct ibw_localport_query *q, void *arg)
{
	struct daemon *d = arg;

	d->lq_done = 1;
	if (q->first_error != IBW_MAD_OK)
		log_warn("local", "local port query: %s (status %d)",
			 ibw_mad_result_str(q->first_error), q->first_status);
	else
		log_debug("local", "local port lid %u state %s", q->pi.lid,
			  ibw_port_state_str(q->pi.state));
	if (q->have_portinfo && d->resp)
		ibw_responder_set_lid(d->resp, q->pi.lid);
	if (q->have_portinfo && d->mon)
		ibw_monitor_set_local_lid(d->mon, q->pi.lid);
	if ((d->o.ping || d->o.trace) && !d->ping_started)
		start_ping(d);
	if (d->o.once && d->once_done)
		ibw_loop_stop(d->loop);
}

static void on_ping_result(const struct ibw_ping_summary *sum, void *arg)
{
	struct daemon *d = arg;
	json_t *j = ibw_json_ping_summary(sum);
	char *text = ibw_json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);

	if (text)
		printf("%s\n", text);
	free(text);
	json_decref(j);
	d->ping_status = sum->received ? 0 : 1;
	ibw_loop_stop(d->loop);
}

static void ping_lid(struct daemon *d, uint16_t lid)
{
	enum ibw_ping_method m = d->o.mon.ping.method;
	int rc;

	rc = ibw_ping_run(d->pinger, lid,
			  m == IBW_PING_AUTO ? IBW_PING_ECHO : m,
			  d->o.ping_type, d->o.count, d->o.mon.ping.timeout_ms,
			  on_ping_result, d);
	if (rc < 0) {
		fprintf(stderr, "ibwatchd: cannot ping lid %u: %s\n", lid,
			strerror(-rc));
		d->ping_status = 1;
		ibw_loop_stop(d->loop);
	}
}

static void on_trace(const struct ibw_trace *t, void *arg)
{
	struct daemon *d = arg;
	json_t *j = ibw_json_trace(t);
	char *text = ibw_json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);

	if (text)
		printf("%s\n", text);
	free(text);
	json_decref(j);
	d->ping_status = t->fwd.status == IBW_TRACE_OK ? 0 : 1;
	ibw_loop_stop(d->loop);
}

static void trace_lid(struct daemon *d, uint16_t lid)
{
	int rc;

	ibw_tracer_set_local_lid(d->tracer, d->lq.have_portinfo ? d->lq.pi.lid
								: d->lp.lid);
	rc = ibw_trace_start(d->tracer, lid, d->o.trace_flags, 0, on_trace, d);
	if (rc < 0) {
		fprintf(stderr, "ibwatchd: cannot trace to lid %u: %s\n", lid,
			strerror(-rc));
		d->ping_status = 1;
		ibw_loop_stop(d->loop);
	}
}

static void on_target_lid(const struct ibw_sa_lid *r, void *arg)
{
	struct daemon *d = arg;

	if (r->result != IBW_MAD_OK || !r->lid) {
		fprintf(stderr, "ibwatchd: %s: the SA does not know it (%s)\n",
			d->o.ping ? d->o.ping : d->o.trace,
			ibw_mad_result_str(r->result));
		d->ping_status = 1;
		ibw_loop_stop(d->loop);
		return;
	}
	if (d->o.ping)
		ping_lid(d, r->lid);
	else
		trace_lid(d, r->lid);
}

/* --ping/--trace: a LID as it is; a GUID or a name through the SA. */
static void start_ping(struct daemon *d)
{
	const char *t = d->o.ping ? d->o.ping : d->o.trace;
	uint16_t sm = d->lq.have_portinfo ? d->lq.pi.sm_lid : d->lp.sm_lid;
	char *end;
	unsigned long long v;
	int rc;

	d->ping_started = 1;
	errno = 0;
	v = strtoull(t, &end, 0);
	if (*t && !*end && !errno && strncmp(t, "0x", 2) && v && v < 0xc000) {
		if (d->o.ping)
			ping_lid(d, (uint16_t)v);
		else
			trace_lid(d, (uint16_t)v);
		return;
	}
	if (*t && !*end && !errno)
		rc = ibw_sa_lid_by_guid(d->e, sm, v, on_target_lid, d);
	else
		rc = ibw_sa_lid_by_name(d->e, sm, t, on_target_lid, d);
	if (rc < 0) {
		fprintf(stderr, "ibwatchd: --ping %s: %s\n", t, strerror(-rc));
		d->ping_status = 1;
		ibw_loop_stop(d->loop);
	}
}

static void on_once(struct ibw_monitor *m, void *arg)
{
	struct daemon *d = arg;

	d->once_done = 1;
	if (d->lq_done)
		ibw_loop_stop(d->loop);
}

static void on_refresh(struct ibw_timer *t, void *arg)
{
	struct daemon *d = arg;
	int rc;

	d->lq_done = 0;
	rc = ibw_localport_query(d->e, d->lp.portnum, &d->lq, on_local, d);
	if (rc < 0)
		log_warn("local", "cannot query the local port: %s",
			 strerror(-rc));
	if (!d->o.once)
		ibw_timer_arm(t, LOCAL_REFRESH_US);
}

static void on_signal(struct ibw_loop *loop, int fd, unsigned ev, void *arg)
{
	struct daemon *d = arg;
	struct signalfd_siginfo si;
	char err[256];

	if (read(fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return;
	if (si.ssi_signo == SIGHUP) {
		if (ibw_monitor_reload_names(d->mon, err, sizeof(err)) < 0)
			log_warn("main",
				 "SIGHUP: node-name map not reloaded: %s", err);
		else
			log_info("main", "SIGHUP: node-name map reloaded");
		return;
	}
	log_info("main", "signal %u: stopping", si.ssi_signo);
	ibw_loop_stop(loop);
}

static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

static int setup_signals(struct daemon *d)
{
	sigset_t set;

	stop_signals(&set);
	d->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->sfd < 0)
		return -errno;
	return ibw_loop_watch(d->loop, d->sfd, IBW_EV_READ, on_signal, d);
}

int main(int argc, char **argv)
{
	struct daemon d;
	sigset_t set;
	char err[256];
	int rc, status = 0;

	memset(&d, 0, sizeof(d));
	d.sfd = -1;
	/* Block the stop signals before any thread exists (umad2sim starts
	 * one when the port opens): they must reach the signalfd, not kill
	 * the process from another thread. */
	stop_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/* A master agent that goes away must not kill us on the next write
	 * to its socket. */
	signal(SIGPIPE, SIG_IGN);
	if (parse_opts(argc, argv, &d.o) < 0)
		return 2;

	rc = ibw_umad_open2(d.o.ca, d.o.port, d.o.responder, &d.t, &d.lp, err,
			    sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "ibwatchd: %s\n", err);
		return 1;
	}
	d.loop = ibw_loop_new();
	if (!d.loop || setup_signals(&d) < 0) {
		fprintf(stderr, "ibwatchd: cannot set up the event loop\n");
		return 1;
	}
	d.e = ibw_engine_new(d.loop, d.t, &d.o.ecfg);
	if (!d.e) {
		fprintf(stderr, "ibwatchd: cannot start the MAD engine\n");
		return 1;
	}
	log_info("main", "attached to %s port %d (port GUID 0x%016llx)",
		 d.lp.ca_name, d.lp.portnum,
		 (unsigned long long)d.lp.port_guid);
	if (d.o.responder) {
		d.resp = ibw_responder_new(d.e, d.lp.lid, d.lp.port_guid, 0);
		if (!d.resp) {
			fprintf(stderr, "ibwatchd: cannot start the "
					"responder\n");
			return 1;
		}
		log_info("main", "answering echo pings");
	}
	if (d.o.ping) {
		d.pinger = ibw_pinger_new(d.e, NULL, &d.o.mon.ping);
		if (!d.pinger)
			return 1;
	} else if (d.o.trace) {
		d.tracer = ibw_tracer_new(d.e, (unsigned)d.lp.portnum);
		if (!d.tracer)
			return 1;
	} else if (!d.o.no_probes) {
		d.o.mon.local_port = (unsigned)d.lp.portnum;
		d.mon = ibw_monitor_new(d.e, &d.o.mon, err, sizeof(err));
		if (!d.mon) {
			fprintf(stderr, "ibwatchd: %s\n", err);
			return 1;
		}
	}

	if (d.mon && !d.o.once && !d.o.no_http) {
		d.http = ibw_http_new(d.loop, d.mon, d.e, &d.o.http, err,
				      sizeof(err));
		if (!d.http) {
			fprintf(stderr, "ibwatchd: %s\n", err);
			return 1;
		}
	}

	if (d.mon && !d.o.once && !d.o.no_snmp) {
		d.snmp = ibw_snmp_new(d.loop, d.mon, &d.lp, &d.lq, &d.o.snmp,
				      err, sizeof(err));
		if (!d.snmp) {
			fprintf(stderr, "ibwatchd: %s\n", err);
			return 1;
		}
	}

	d.refresh = ibw_timer_new(d.loop, on_refresh, &d);
	ibw_timer_arm(d.refresh, 0);
	rc = 0;
	if (d.mon && d.o.once)
		rc = ibw_monitor_once(d.mon, on_once, &d);
	else if (d.mon)
		rc = ibw_monitor_start(d.mon);
	if (rc < 0) {
		fprintf(stderr, "ibwatchd: cannot start the probes: %s\n",
			strerror(-rc));
		return 1;
	}
	rc = ibw_loop_run(d.loop);
	if (rc < 0) {
		log_err("main", "event loop failed: %s", strerror(-rc));
		status = 1;
	}

	if (d.o.once) {
		json_t *j = snapshot_json(&d);

		char *text = ibw_json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);

		if (text)
			printf("%s\n", text);
		free(text);
		json_decref(j);
		if (!d.lq_done || d.lq.first_error != IBW_MAD_OK) {
			fprintf(stderr,
				"ibwatchd: the local port did not answer: %s\n",
				d.lq_done ? ibw_mad_result_str(d.lq.first_error)
					  : "interrupted");
			status = 1;
		}
	}
	ibw_timer_free(d.refresh);
	if ((d.o.ping || d.o.trace) && !status)
		status = d.ping_status;
	ibw_http_free(d.http);
	ibw_snmp_free(d.snmp);
	ibw_responder_free(d.resp);
	/* The engine first: it cancels what the probes have in flight. */
	ibw_engine_free(d.e);
	ibw_monitor_free(d.mon);
	ibw_pinger_free(d.pinger);
	ibw_tracer_free(d.tracer);
	ibw_transport_close(d.t);
	if (d.sfd >= 0)
		close(d.sfd);
	ibw_loop_free(d.loop);
	return status;
}
