/*
 * ibwatchd's options: one keyword table (getopt's) for the command line
 * and the config file. The file holds "name = value" lines named as the
 * long options; it is read first and the command line overrides it.
 * Errors say where: "ibwatchd: ..." or "FILE:LINE: ...".
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <ini.h>

#include "ibw_version.h"
#include "options.h"

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
	OPT_CONFIG,
	OPT_CHECK_CONFIG,
	OPT_USER,
	OPT_LOG_TARGET,
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
	{ "ping-timeout-ms", required_argument, NULL, OPT_PING_TIMEOUT },
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
	{ "http-token-everywhere", no_argument, NULL, OPT_HTTP_AUTH_ALL },
	{ "agentx", required_argument, NULL, OPT_AGENTX },
	{ "agentx-ping-interval", required_argument, NULL, OPT_AGENTX_PING },
	{ "snmp-trap-rate", required_argument, NULL, OPT_TRAP_RATE },
	{ "no-snmp", no_argument, NULL, OPT_NO_SNMP },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
	{ "user", required_argument, NULL, OPT_USER },
	{ "log-target", required_argument, NULL, OPT_LOG_TARGET },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* Options that make sense only on the command line. */
static const char *const cli_only[] = {
	"once",	   "ping",   "count",	     "ping-type", "trace", "reverse",
	"confirm", "config", "check-config", "version",	  "help",  NULL,
};

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

static int parse_uint(const char *opt, const char *s, unsigned max,
		      unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > max) {
		opt_err("%s: '%s' is not a number in 0..%u\n", opt, s, max);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

static int parse_uint_fail(const char *opt)
{
	opt_err("%s must be at least 1\n", opt);
	return -1;
}

static int parse_threshold(const char *arg, struct ibw_counters_opts *co)
{
	const char *eq = strchr(arg, '=');
	char name[64];
	unsigned v;
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
	if (!v)
		return parse_uint_fail("--threshold");
	co->thresholds[c] = v;
	return 0;
}

/* Apply option @c with argument @arg (NULL for flags). @in_file: it
 * comes from the config file. */
static int apply_opt(struct opts *o, int c, char *arg, int in_file)
{
	enum ibw_log_level lvl;
	unsigned v;

	switch (c) {
	case OPT_CA:
		o->ca = arg;
		break;
	case OPT_PORT:
		if (parse_uint("--port", arg, 254, &v) < 0)
			return -1;
		o->port = (int)v;
		break;
	case OPT_ONCE:
		o->once = 1;
		break;
	case OPT_MAXIF:
		if (parse_uint("--max-inflight", arg, 16384, &v) < 0)
			return -1;
		o->ecfg.max_inflight = v;
		break;
	case OPT_MAXPD:
		if (parse_uint("--max-per-dest", arg, 16384, &v) < 0)
			return -1;
		o->ecfg.max_per_dest = v;
		break;
	case OPT_TIMEOUT:
		if (parse_uint("--timeout-ms", arg, 60000, &v) < 0)
			return -1;
		o->ecfg.timeout_ms = v;
		break;
	case OPT_RETRIES:
		if (parse_uint("--retries", arg, 20, &v) < 0)
			return -1;
		o->ecfg.retries = (int)v;
		break;
	case OPT_LOGLEVEL:
		if (ibw_log_level_parse(arg, &lvl) < 0) {
			opt_err("--log-level: '%s' is not "
				"one of err, warn, info, debug\n",
				arg);
			return -1;
		}
		o->log_level = lvl;
		o->have_log_level = 1;
		break;
	case OPT_DISC_IVL:
		if (parse_uint("--discovery-interval", arg, 86400, &v) < 0)
			return -1;
		if (!v)
			return parse_uint_fail("--discovery-interval");
		o->mon.discovery_interval_us = (uint64_t)v * 1000000u;
		break;
	case OPT_CTR_IVL:
		if (parse_uint("--counter-interval", arg, 86400, &v) < 0)
			return -1;
		if (!v)
			return parse_uint_fail("--counter-interval");
		o->mon.counter_interval_us = (uint64_t)v * 1000000u;
		break;
	case OPT_STATE:
		o->mon.state_file = arg;
		break;
	case OPT_NO_STATE:
		o->mon.state_file = NULL;
		break;
	case OPT_NAMEMAP:
		o->mon.node_name_map = arg;
		break;
	case OPT_SCOPE:
		if (!strcmp(arg, "all")) {
			o->mon.counters.scope = IBW_SCOPE_ALL;
		} else if (!strcmp(arg, "switches")) {
			o->mon.counters.scope = IBW_SCOPE_SWITCHES;
		} else if (!strcmp(arg, "cas")) {
			o->mon.counters.scope = IBW_SCOPE_CAS;
		} else {
			opt_err("--scope: '%s' is not one of "
				"all, switches, cas\n",
				arg);
			return -1;
		}
		break;
	case OPT_THRESHOLD:
		if (parse_threshold(arg, &o->mon.counters) < 0)
			return -1;
		break;
	case OPT_RESET:
		if (!strcmp(arg, "data") || !strcmp(arg, "all"))
			o->mon.counters.reset_data = 1;
		if (!strcmp(arg, "errors") || !strcmp(arg, "all"))
			o->mon.counters.reset_errors = 1;
		if (strcmp(arg, "data") && strcmp(arg, "errors") &&
		    strcmp(arg, "all")) {
			opt_err("--reset-counters: '%s' is "
				"not one of data, errors, all\n",
				arg);
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
		if (parse_uint("--ping-interval-ms", arg, 86400000, &v) < 0)
			return -1;
		if (!v)
			return parse_uint_fail("--ping-interval-ms");
		o->mon.ping.interval_us = (uint64_t)v * 1000u;
		break;
	case OPT_PING_METHOD:
		if (ibw_ping_method_parse(arg, &o->mon.ping.method) < 0) {
			opt_err("--ping-method: '%s' is not "
				"one of auto, echo, pma, smp\n",
				arg);
			return -1;
		}
		break;
	case OPT_PING_TIMEOUT:
		if (parse_uint("--ping-timeout-ms", arg, 60000, &v) < 0)
			return -1;
		if (!v)
			return parse_uint_fail("--ping-timeout-ms");
		o->mon.ping.timeout_ms = v;
		break;
	case OPT_PING_RETRIES:
		if (parse_uint("--ping-retries", arg, 20, &v) < 0)
			return -1;
		o->mon.ping.retries = (int)v;
		break;
	case OPT_PING_TARGET:
		if (o->targets_from_file && !in_file) {
			o->mon.ping.ntargets = 0;
			o->targets_from_file = 0;
		}
		o->targets_from_file |= in_file;
		if (o->mon.ping.ntargets == MAX_PING_TARGETS) {
			opt_err("more than %d "
				"--ping-target\n",
				MAX_PING_TARGETS);
			return -1;
		}
		o->targets[o->mon.ping.ntargets++] = arg;
		o->mon.ping.targets = o->targets;
		break;
	case OPT_PING_CAPMASK: {
		char *end;
		unsigned long m;

		errno = 0;
		m = strtoul(arg, &end, 0);
		if (errno || *end || !m || m > 0xffffffffu) {
			opt_err("--ping-capmask: '%s' is not "
				"a non-zero 32-bit mask\n",
				arg);
			return -1;
		}
		o->mon.ping.capmask_bits = (uint32_t)m;
	} break;
	case OPT_DOWN_AFTER:
		if (parse_uint("--down-after", arg, 1000, &v) < 0)
			return -1;
		if (!v)
			return parse_uint_fail("--down-after");
		o->mon.ping.down_after = v;
		break;
	case OPT_PING_WINDOW:
		if (parse_uint("--ping-window", arg, IBW_PING_WINDOW_MAX, &v) <
		    0)
			return -1;
		if (!v)
			return parse_uint_fail("--ping-window");
		o->mon.ping.window = v;
		break;
	case OPT_UP_AFTER:
		if (parse_uint("--up-after", arg, 1000, &v) < 0)
			return -1;
		if (!v)
			return parse_uint_fail("--up-after");
		o->mon.ping.up_after = v;
		break;
	case OPT_PING:
		o->ping = arg;
		break;
	case OPT_COUNT:
		if (parse_uint("--count", arg, 10000, &v) < 0)
			return -1;
		if (!v)
			return parse_uint_fail("--count");
		o->count = v;
		break;
	case OPT_PING_TYPE:
		if (!strcmp(arg, "echo")) {
			o->ping_type = IBW_ECHO_REQ;
		} else if (!strcmp(arg, "timestamp")) {
			o->ping_type = IBW_TS_REQ;
		} else if (!strcmp(arg, "info")) {
			o->ping_type = IBW_INFO_REQ;
		} else if (!strcmp(arg, "ibping")) {
			o->ping_type = IBW_ECHO_IBPING;
		} else {
			opt_err("--ping-type: '%s' is not "
				"one of echo, timestamp, info, "
				"ibping\n",
				arg);
			return -1;
		}
		break;
	case OPT_TRACE:
		o->trace = arg;
		break;
	case OPT_REVERSE:
		o->trace_flags |= IBW_TRACE_REVERSE;
		break;
	case OPT_CONFIRM:
		o->trace_flags |= IBW_TRACE_CONFIRM;
		break;
	case OPT_WATCH:
		if (o->watch_from_file && !in_file) {
			o->mon.nwatch = 0;
			o->watch_from_file = 0;
		}
		o->watch_from_file |= in_file;
		if (o->mon.nwatch == MAX_PING_TARGETS) {
			opt_err("more than %d --watch-path\n",
				MAX_PING_TARGETS);
			return -1;
		}
		o->watch[o->mon.nwatch++] = arg;
		o->mon.watch = o->watch;
		break;
	case OPT_TRACE_IVL:
		if (parse_uint("--trace-interval", arg, 86400, &v) < 0)
			return -1;
		if (!v)
			return parse_uint_fail("--trace-interval");
		o->mon.trace_interval_us = (uint64_t)v * 1000000u;
		break;
	case OPT_HTTP:
		if (o->http_from_file && !in_file) {
			o->http.nlisten = 0;
			o->http_from_file = 0;
		}
		o->http_from_file |= in_file;
		if (o->http.nlisten == IBW_HTTP_MAX_LISTEN) {
			opt_err("at most %d --http "
				"addresses\n",
				IBW_HTTP_MAX_LISTEN);
			return -1;
		}
		o->http.listen[o->http.nlisten++] = arg;
		break;
	case OPT_HTTP_CERT:
		o->http.tls_cert = arg;
		break;
	case OPT_HTTP_KEY:
		o->http.tls_key = arg;
		break;
	case OPT_HTTP_TOKEN:
		o->http.token_file = arg;
		break;
	case OPT_HTTP_AUTH_ALL:
		o->http.token_everywhere = 1;
		break;
	case OPT_NO_HTTP:
		o->no_http = 1;
		break;
	case OPT_AGENTX:
		if (!*arg) {
			opt_err("--agentx: empty "
				"socket\n");
			return -1;
		}
		o->snmp.agentx_socket = arg;
		break;
	case OPT_AGENTX_PING:
		if (parse_uint("--agentx-ping-interval", arg, 3600, &v) < 0)
			return -1;
		if (!v)
			return parse_uint_fail("--agentx-ping-"
					       "interval");
		o->snmp.ping_interval_s = v;
		break;
	case OPT_TRAP_RATE:
		if (parse_uint("--snmp-trap-rate", arg, 60000, &v) < 0)
			return -1;
		if (!v)
			return parse_uint_fail("--snmp-trap-rate");
		o->snmp.trap_rate = v;
		break;
	case OPT_NO_SNMP:
		o->no_snmp = 1;
		break;
	case OPT_CONFIG:
		o->config = arg;
		break;
	case OPT_CHECK_CONFIG:
		o->check_config = 1;
		break;
	case OPT_USER:
		if (!*arg) {
			opt_err("--user: empty user name\n");
			return -1;
		}
		o->user = arg;
		break;
	case OPT_LOG_TARGET:
		if (!strcmp(arg, "stderr")) {
			o->log_syslog = 0;
		} else if (!strcmp(arg, "syslog")) {
			o->log_syslog = 1;
		} else {
			opt_err("--log-target: '%s' is not one of stderr, "
				"syslog\n",
				arg);
			return -1;
		}
		break;
	case OPT_VERSION:
		o->version = 1;
		break;
	case OPT_HELP:
		o->help = 1;
		break;
	default:
		return -1;
	}
	return 0;
}

static void set_defaults(struct opts *o)
{
	o->ecfg.retries = -1;
	o->mon.discover.retries = -1;
	o->mon.counters.retries = -1;
	o->mon.state_file = DEFAULT_STATE_FILE;
	o->mon.ping.retries = -1;
	o->count = 5;
	o->ping_type = IBW_ECHO_REQ;
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
	const struct option *opt;
	char *arg;
	unsigned i;
	int b;

	snprintf(sink.where, sizeof(sink.where), "%s:%u", r->path, r->line);
	if (section && *section) {
		opt_err("sections are not used ([%s]): put '%s' at the top "
			"level",
			section, name);
		r->errors++;
		return 1;
	}
	for (i = 0; cli_only[i]; i++) {
		if (!strcmp(name, cli_only[i])) {
			opt_err("'%s' goes only on the command line", name);
			r->errors++;
			return 1;
		}
	}
	for (opt = longopts; opt->name; opt++)
		if (!strcmp(opt->name, name))
			break;
	if (!opt->name) {
		opt_err("unknown option '%s' (see ibwatch.conf(5))", name);
		r->errors++;
		return 1;
	}
	if (opt->has_arg == no_argument) {
		if (parse_bool(value, &b) < 0) {
			opt_err("%s: '%s' is not yes or no", name, value);
			r->errors++;
		} else if (b && apply_opt(r->o, opt->val, NULL, 1) < 0) {
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
	if (apply_opt(r->o, opt->val, arg, 1) < 0)
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

int ibw_opts_load(int argc, char **argv, struct opts *o, char *errs,
		  size_t errlen)
{
	const char *path = config_arg(argc, argv);
	int c, failed = 0;

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
	optind = 0; /* start afresh: this may run again on SIGHUP */
	while ((c = getopt_long(argc, argv, "c:", longopts, NULL)) != -1) {
		if (c == 'c')
			c = OPT_CONFIG;
		if (apply_opt(o, c, optarg, 0) < 0)
			return -1;
	}
	if (failed)
		return -1;
	if (optind < argc) {
		opt_err("unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->no_probes && o->once) {
		opt_err("--once needs the probes; drop "
			"--no-probes\n");
		return -1;
	}
	/* One round decides: an endport that answers its one ping is up. */
	if (o->once && !o->mon.ping.up_after)
		o->mon.ping.up_after = 1;
	if (o->once && !o->mon.ping.down_after)
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
	return 0;
}

void ibw_opts_free(struct opts *o)
{
	unsigned i;

	for (i = 0; i < o->nstrings; i++)
		free(o->strings[i]);
	o->nstrings = 0;
}

int ibw_opts_config_key(const char *name)
{
	const struct option *opt;
	unsigned i;

	for (i = 0; cli_only[i]; i++)
		if (!strcmp(name, cli_only[i]))
			return 0;
	for (opt = longopts; opt->name; opt++)
		if (!strcmp(opt->name, name))
			return 1;
	return 0;
}

void ibw_opts_list_keys(FILE *f)
{
	const struct option *opt;

	for (opt = longopts; opt->name; opt++)
		if (ibw_opts_config_key(opt->name))
			fprintf(f, "%s\n", opt->name);
}

void ibw_opts_usage(FILE *f)
{
	fprintf(f, "usage: ibwatchd [options]\n"
		   "       ibwatchd --ping TARGET [--count N] [--ping-method "
		   "M] [--ping-type T]\n"
		   "       ibwatchd --trace TARGET [--reverse] [--confirm]\n"
		   "\n"
		   "  -c, --config FILE    read options from FILE "
		   "(default " IBW_DEFAULT_CONFIG "\n"
		   "                       if it exists); command-line "
		   "options override it\n"
		   "  --check-config       check the configuration and exit\n"
		   "\n"
		   "Port and engine:\n"
		   "  --ca NAME            CA to attach to (default: first "
		   "with an active port)\n"
		   "  --port N             port on that CA (default: first "
		   "active)\n"
		   "  --max-inflight N     MADs in flight in all (default "
		   "128)\n"
		   "  --max-per-dest N     MADs in flight to one destination "
		   "(default 4)\n"
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
		   "  --log-target T       stderr (default) or syslog\n"
		   "  --user NAME          drop to this user (and its group) "
		   "once the\n"
		   "                       port is open and HTTP bound\n"
		   "  --version            print the version and exit\n"
		   "  --help               print this help and exit\n");
}
