// SPDX-License-Identifier: BSD-2-Clause
/*
 * ibwatchd's option table: the defaults are core's constants, each kind
 * of option reaches its field from the command line and from the file,
 * errors name their place, and the SIGHUP diff names what changed.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "options.h"

static struct opts o, o2;
static char errs[4096];
static char conf[64];

/* @text into a fresh config file, named in conf. */
static void write_conf(const char *text)
{
	int fd;

	snprintf(conf, sizeof(conf), "/tmp/ibw-test-options-XXXXXX");
	fd = mkstemp(conf);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* Load @o from a file holding @text and the options in @args (NULL
 * ended), as "ibwatchd -c FILE ARGS...". */
static int load_into(struct opts *p, const char *text, ...)
{
	char *argv[32] = { "ibwatchd", "-c", conf };
	int argc = 3, rc;
	va_list ap;

	write_conf(text);
	va_start(ap, text);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	rc = ibw_opts_load(argc, argv, p, errs, sizeof(errs));
	unlink(conf);
	return rc;
}

static int teardown(void **state)
{
	ibw_opts_free(&o);
	ibw_opts_free(&o2);
	return 0;
}

static void test_defaults_are_cores(void **state)
{
	assert_int_equal(load_into(&o, "", NULL), 0);
	assert_int_equal(o.ecfg.max_inflight, IBW_ENGINE_DEFAULT_MAX_INFLIGHT);
	assert_int_equal(o.ecfg.max_per_dest, IBW_ENGINE_DEFAULT_MAX_PER_DEST);
	assert_int_equal(o.ecfg.timeout_ms, IBW_ENGINE_DEFAULT_TIMEOUT_MS);
	assert_int_equal(o.ecfg.retries, IBW_ENGINE_DEFAULT_RETRIES);
	assert_int_equal(o.mon.discovery_interval_us,
			 IBW_DISCOVERY_INTERVAL_US);
	assert_int_equal(o.mon.counter_interval_us, IBW_COUNTER_INTERVAL_US);
	assert_int_equal(o.mon.trace_interval_us, IBW_TRACE_INTERVAL_US);
	assert_string_equal(o.mon.state_file, IBW_DEFAULT_STATE_FILE);
	assert_null(o.mon.node_name_map);
	assert_int_equal(o.mon.counters.scope, IBW_SCOPE_ALL);
	/* narrow counters are cleared before they saturate, as PerfMgr
	 * clears them */
	assert_true(o.mon.counters.reset_data && o.mon.counters.reset_errors);
	/* not options: the engine's, as core reads -1 */
	assert_int_equal(o.mon.discover.retries, -1);
	assert_int_equal(o.mon.counters.retries, -1);
	assert_int_equal(o.mon.ping.interval_us,
			 IBW_PING_DEFAULT_INTERVAL_MS * 1000ull);
	assert_int_equal(o.mon.ping.timeout_ms, IBW_PING_DEFAULT_TIMEOUT_MS);
	assert_int_equal(o.mon.ping.retries, IBW_PING_DEFAULT_RETRIES);
	assert_int_equal(o.mon.ping.down_after, IBW_PING_DEFAULT_DOWN_AFTER);
	assert_int_equal(o.mon.ping.up_after, IBW_PING_DEFAULT_UP_AFTER);
	assert_int_equal(o.mon.ping.window, IBW_PING_DEFAULT_WINDOW);
	assert_int_equal(o.mon.ping.method, IBW_PING_AUTO);
	assert_int_equal(o.mon.ping.ntargets, 0);
	assert_null(o.mon.ping.targets);
	assert_int_equal(o.count, IBW_PING_DEFAULT_COUNT);
	assert_int_equal(o.ping_type, IBW_ECHO_REQ);
	assert_int_equal(o.http.nlisten, 1);
	assert_string_equal(o.http.listen[0], IBW_HTTP_DEFAULT_LISTEN);
	assert_null(o.snmp.agentx_socket);
	assert_int_equal(o.snmp.ping_interval_s,
			 IBW_SNMP_DEFAULT_PING_INTERVAL_S);
	assert_int_equal(o.snmp.trap_rate, IBW_SNMP_DEFAULT_TRAP_RATE);
	assert_int_equal(o.log_level, IBW_LOG_INFO);
	assert_int_equal(o.log_syslog, 0);
	assert_string_equal(o.config, conf);
}

static void test_once_decides_in_one_round(void **state)
{
	assert_int_equal(load_into(&o, "", "--once", NULL), 0);
	assert_int_equal(o.mon.ping.up_after, 1);
	assert_int_equal(o.mon.ping.down_after, 1);
	assert_int_equal(load_into(&o2, "up-after = 4\n", "--once",
				   "--down-after", "5", NULL),
			 0);
	assert_int_equal(o2.mon.ping.up_after, 4);
	assert_int_equal(o2.mon.ping.down_after, 5);
}

/* reset-counters never: nothing cleared, saturated counters then say
 * so (docs/links.md) */
static void test_reset_never(void **state)
{
	(void)state;
	assert_int_equal(load_into(&o, "reset-counters = never\n", NULL), 0);
	assert_false(o.mon.counters.reset_data || o.mon.counters.reset_errors);
}

/* Each kind of option, from the file and from the command line. */
static void test_every_kind(void **state)
{
	assert_int_equal(load_into(&o,
				   "ping-interval-ms = 1500\n"
				   "scope = switches\n"
				   "reset-counters = data\n"
				   "no-state-file = yes\n"
				   "threshold = SymbolErrorCounter=7\n"
				   "ping-capmask = 0x2\n"
				   "agentx = tcp:localhost:705\n"
				   "detail-counters = no\n"
				   "no-ping = on\n"
				   "log-target = syslog\n",
				   "--counter-interval", "7", "--reverse",
				   "--confirm", "--reset-counters", "errors",
				   "--log-level", "debug", NULL),
			 0);
	assert_int_equal(o.mon.ping.interval_us, 1500000);
	assert_int_equal(o.mon.counter_interval_us, 7000000);
	assert_int_equal(o.mon.counters.scope, IBW_SCOPE_SWITCHES);
	/* the command line's group replaces the file's */
	assert_false(o.mon.counters.reset_data);
	assert_true(o.mon.counters.reset_errors);
	assert_null(o.mon.state_file);
	assert_int_equal(o.mon.counters.thresholds[ibw_ctr_lookup("SymbolErrorC"
								  "ounter")],
			 7);
	assert_int_equal(o.mon.ping.capmask_bits, 2);
	assert_string_equal(o.snmp.agentx_socket, "tcp:localhost:705");
	assert_false(o.mon.counters.details);
	assert_true(o.mon.no_ping);
	assert_int_equal(o.log_syslog, 1);
	assert_int_equal(o.log_level, IBW_LOG_DEBUG);
	assert_int_equal(o.trace_flags, IBW_TRACE_REVERSE | IBW_TRACE_CONFIRM);
}

/* A repeatable option: the file's lines replace the default, the
 * command line's replace the file's. */
static void test_lists(void **state)
{
	assert_int_equal(load_into(&o,
				   "http = 127.0.0.1:1\n"
				   "http = 127.0.0.1:2\n"
				   "ping-target = a\n"
				   "ping-target = b\n"
				   "watch-path = w\n",
				   "--ping-target", "c", NULL),
			 0);
	assert_int_equal(o.http.nlisten, 2);
	assert_string_equal(o.http.listen[0], "127.0.0.1:1");
	assert_string_equal(o.http.listen[1], "127.0.0.1:2");
	assert_int_equal(o.mon.ping.ntargets, 1);
	assert_string_equal(o.mon.ping.targets[0], "c");
	assert_int_equal(o.mon.nwatch, 1);
	assert_string_equal(o.mon.watch[0], "w");
	assert_int_equal(load_into(&o2, "http = 127.0.0.1:1\n", "--http",
				   "127.0.0.1:3", "--http", "127.0.0.1:4",
				   "--http", "127.0.0.1:5", "--http",
				   "127.0.0.1:6", "--http", "127.0.0.1:7",
				   NULL),
			 -1);
	assert_string_equal(errs, "ibwatchd: --http: at most 4 values\n");
}

static void test_file_errors(void **state)
{
	assert_int_equal(load_into(&o,
				   "discovery-interval = 30\n"
				   "counter-interval = often\n"
				   "no-such-option = 1\n"
				   "once = yes\n"
				   "no-http = maybe\n"
				   "dump-options = yes\n"
				   "ping-window = 0\n"
				   "log-level = loud\n"
				   "[section]\n"
				   "ca = x\n",
				   NULL),
			 -1);
	assert_non_null(strstr(errs, ":2: counter-interval: 'often' is not a "
				     "number in 0..86400\n"));
	assert_non_null(strstr(errs, ":3: unknown option 'no-such-option' "
				     "(see ibwatch.conf(5))\n"));
	assert_non_null(strstr(errs, ":4: 'once' goes only on the command "
				     "line\n"));
	assert_non_null(strstr(errs, ":5: no-http: 'maybe' is not yes or "
				     "no\n"));
	assert_non_null(strstr(errs, ":6: 'dump-options' goes only on the "
				     "command line\n"));
	assert_non_null(strstr(errs, ":7: ping-window must be at least 1\n"));
	assert_non_null(strstr(errs, ":8: log-level: 'loud' is not one of "
				     "err, warn, info, debug\n"));
	assert_non_null(strstr(errs, ":10: sections are not used ([section]): "
				     "put 'ca' at the top level\n"));
	/* each line starts with the file's name */
	assert_int_equal(strncmp(errs, conf, strlen(conf)), 0);
}

static void test_command_line_errors(void **state)
{
	static const struct {
		const char *opt, *arg, *msg;
	} cases[] = {
		{ "--port", "nine",
		  "ibwatchd: --port: 'nine' is not a number in 0..254\n" },
		{ "--ping-window", "257",
		  "ibwatchd: --ping-window: '257' is "
		  "not a number in 0..256\n" },
		{ "--agentx", "", "ibwatchd: --agentx: empty socket\n" },
		{ "--user", "", "ibwatchd: --user: empty user name\n" },
		{ "--ping-capmask", "0",
		  "ibwatchd: --ping-capmask: '0' is not "
		  "a non-zero 32-bit mask\n" },
		{ "--threshold", "LinkDownedCounter",
		  "ibwatchd: --threshold: 'LinkDownedCounter' is not "
		  "NAME=VALUE\n" },
		{ "--threshold", "PortXmitData=1",
		  "ibwatchd: --threshold: 'PortXmitData' is not an error "
		  "counter\n" },
		{ "--ping-type", "loud",
		  "ibwatchd: --ping-type: 'loud' is not "
		  "one of echo, timestamp, info, "
		  "ibping\n" },
		{ "--reset-counters", "sometimes",
		  "ibwatchd: --reset-counters: 'sometimes' is not one of "
		  "never, data, errors, all\n" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(load_into(&o, "", cases[i].opt, cases[i].arg,
					   NULL),
				 -1);
		assert_string_equal(errs, cases[i].msg);
		ibw_opts_free(&o);
	}
	assert_int_equal(load_into(&o, "", "--once", "--no-probes", NULL), -1);
	assert_string_equal(errs, "ibwatchd: --once needs the probes; drop "
				  "--no-probes\n");
}

static char changed[512];

static void on_changed(const char *name, enum ibw_opt_when when,
		       const void *arg)
{
	size_t n = strlen(changed);

	snprintf(changed + n, sizeof(changed) - n, "%s%s:%s", n ? " " : "",
		 name,
		 when == IBW_OPT_SIGHUP	   ? "sighup"
		 : when == IBW_OPT_RESTART ? "restart"
					   : "cli");
}

/* The SIGHUP diff: every option that changed, once, with when it
 * applies; command-line options never (the command line is the same). */
static void test_diff(void **state)
{
	static const char run[] = "counter-interval = 30\n"
				  "http = 127.0.0.1:1\n"
				  "ping-target = a\n"
				  "threshold = SymbolErrorCounter=5\n"
				  "max-inflight = 64\n";

	assert_int_equal(load_into(&o, run, "--ping", "x", NULL), 0);
	assert_int_equal(load_into(&o2, run, "--ping", "x", NULL), 0);
	changed[0] = '\0';
	ibw_opts_diff(&o, &o2, on_changed, NULL);
	assert_string_equal(changed, "");
	ibw_opts_free(&o2);

	assert_int_equal(load_into(&o2,
				   "counter-interval = 5\n"
				   "http = 127.0.0.1:2\n"
				   "ping-target = a\n"
				   "ping-target = b\n"
				   "threshold = SymbolErrorCounter=6\n"
				   "max-inflight = 64\n"
				   "no-state-file = yes\n"
				   "log-level = debug\n"
				   "ping-method = pma\n",
				   "--ping", "y", NULL),
			 0);
	ibw_opts_diff(&o, &o2, on_changed, NULL);
	assert_string_equal(changed, "counter-interval:sighup "
				     "state-file:restart "
				     "threshold:restart "
				     "ping-method:restart "
				     "ping-target:restart "
				     "http:restart "
				     "log-level:sighup");
	/* Adopted, the applied ones no longer differ. */
	ibw_opts_adopt(&o, &o2);
	assert_int_equal(o.mon.counter_interval_us, 5000000);
	changed[0] = '\0';
	ibw_opts_diff(&o, &o2, on_changed, NULL);
	assert_string_equal(changed, "state-file:restart "
				     "threshold:restart "
				     "ping-method:restart "
				     "ping-target:restart "
				     "http:restart");
}

/* SIGHUP applies the jobs options, strings among them: the running
 * options take the new file's strings, which outlive the new options,
 * and the next SIGHUP's diff finds nothing changed. */
static void test_adopt_strings(void **state)
{
	static struct opts o3;

	assert_int_equal(load_into(&o,
				   "jobs-dir = /run/a\n"
				   "jobs-host-map = /etc/map-a\n",
				   NULL),
			 0);
	assert_int_equal(load_into(&o2,
				   "jobs-dir = /run/b\n"
				   "jobs-check-interval = 5\n"
				   "jobs-host-map = /etc/map-a\n"
				   "jobs-squeue = /opt/slurm/bin/squeue\n",
				   NULL),
			 0);
	changed[0] = '\0';
	ibw_opts_diff(&o, &o2, on_changed, NULL);
	assert_string_equal(changed, "jobs-dir:sighup "
				     "jobs-check-interval:sighup "
				     "jobs-squeue:sighup");
	ibw_opts_adopt(&o, &o2);
	ibw_opts_free(&o2);
	assert_string_equal(o.mon.jobs_dir, "/run/b");
	assert_string_equal(o.mon.jobs_host_map, "/etc/map-a");
	assert_string_equal(o.mon.jobs_squeue, "/opt/slurm/bin/squeue");
	assert_int_equal(o.mon.jobs_check_us, 5000000);
	/* again, back to the defaults and no jobs-dir */
	assert_int_equal(load_into(&o3, "jobs-host-map = /etc/map-c\n", NULL),
			 0);
	ibw_opts_adopt(&o, &o3);
	ibw_opts_free(&o3);
	assert_null(o.mon.jobs_dir);
	assert_string_equal(o.mon.jobs_host_map, "/etc/map-c");
	assert_string_equal(o.mon.jobs_squeue, "/usr/bin/squeue");
	assert_int_equal(o.mon.jobs_check_us, 60000000);
	assert_int_equal(load_into(&o2, "jobs-host-map = /etc/map-c\n", NULL),
			 0);
	changed[0] = '\0';
	ibw_opts_diff(&o, &o2, on_changed, NULL);
	assert_string_equal(changed, "");
}

static char *capture(void (*fn)(FILE *f))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f);
	fclose(f);
	return buf;
}

/* --dump-options: four fields a line, every option of --help once, the
 * hidden one not; SIGHUP applies exactly what reload() applies. */
/* @text into a fresh file of mode @mode; its name in conf. */
static void write_mode(const char *text, mode_t mode)
{
	write_conf(text);
	assert_int_equal(chmod(conf, mode), 0);
}

/* The M_Key file: a secret, so only a file neither group nor others may
 * touch is read, one number in it, and no message quotes what it holds. */
static void test_mkey_file(void **state)
{
	static const struct {
		const char *text;
		mode_t mode;
		const char *why; /* NULL: read */
	} cases[] = {
		{ "0x1122334455667788\n", 0600, NULL },
		{ "# the SM's M_Key\n\n  0x1122334455667788  \n", 0400, NULL },
		{ "1234605616436508552", 0600, NULL }, /* the same, decimal */
		{ "0x1122334455667788\n", 0640, "mode 0640 lets its group" },
		{ "0x1122334455667788\n", 0604, "mode 0604 lets its group" },
		{ "0x1122334455667788\n", 0620, "mode 0620 lets its group" },
		{ "", 0600, "no key in it" },
		{ "# nothing\n", 0600, "no key in it" },
		{ "0x0\n", 0600, "line 1: the key is 0" },
		{ "secret-key-xyz\n", 0600, "line 1: not a 64-bit number" },
		{ "0x11223344556677889\n", 0600, "line 1: not a 64-bit" },
		{ "-5\n", 0600, "line 1: not a 64-bit number" },
		{ "0x1122334455667788 0x99\n", 0600, "line 1: not a 64-bit" },
		{ "\n0x1122334455667788\n0x5\n", 0600, "line 3: a second key" },
	};
	char err[512];
	uint64_t key;
	unsigned i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_mode(cases[i].text, cases[i].mode);
		key = 0;
		err[0] = '\0';
		rc = ibw_opts_read_mkey(conf, &key, err, sizeof(err));
		if (!cases[i].why) {
			assert_int_equal(rc, 0);
			assert_true(key == 0x1122334455667788ull);
		} else {
			assert_int_equal(rc, -1);
			if (!strstr(err, cases[i].why) || !strstr(err, conf))
				fail_msg("case %u: '%s'", i, err);
			/* never the key, nor what was there instead */
			assert_null(strstr(err, "1122334455667788"));
			assert_null(strstr(err, "secret"));
			assert_null(strstr(err, "0x99"));
		}
		unlink(conf);
	}
	/* a directory, a missing file */
	assert_int_equal(ibw_opts_read_mkey("/tmp", &key, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "not a regular file"));
	assert_int_equal(ibw_opts_read_mkey("/nonexistent/mkey", &key, err,
					    sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "No such file"));
	/* a big file is not an M_Key file */
	{
		char big[2048];

		memset(big, '#', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		write_mode(big, 0600);
		assert_int_equal(
			ibw_opts_read_mkey(conf, &key, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "longer than"));
		unlink(conf);
	}
	/* The option only names the file: read where ibwatchd starts. */
	assert_int_equal(load_into(&o, "mkey-file = /etc/ibwatch/mkey\n", NULL),
			 0);
	assert_string_equal(o.mkey_file, "/etc/ibwatch/mkey");
	assert_int_equal(load_into(&o2, "", "--mkey-file", "", NULL), -1);
	assert_non_null(strstr(errs, "mkey-file: empty file name"));
}

static void test_dump_and_usage(void **state)
{
	char *dump = capture(ibw_opts_dump), *usage = capture(ibw_opts_usage);
	char *line, *save = NULL, *f[5], *p, opt[80], sighup[256] = "";
	unsigned lines = 0, n;

	for (line = strtok_r(dump, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		for (n = 0, p = line; n < 5 && p; n++)
			f[n] = strsep(&p, "\t");
		assert_int_equal(n, 4);
		assert_true(!strcmp(f[2], "cli") || !strcmp(f[2], "sighup") ||
			    !strcmp(f[2], "restart"));
		snprintf(opt, sizeof(opt), "--%s ", f[0]);
		if (!strstr(usage, opt)) {
			snprintf(opt, sizeof(opt), "--%s\n", f[0]);
			assert_non_null(strstr(usage, opt));
		}
		if (!strcmp(f[2], "sighup"))
			snprintf(sighup + strlen(sighup),
				 sizeof(sighup) - strlen(sighup), "%s ", f[0]);
		assert_string_not_equal(f[0], "dump-options");
		lines++;
	}
	assert_true(lines > 40);
	assert_string_equal(sighup, "discovery-interval counter-interval "
				    "link-threshold trace-interval jobs-dir "
				    "jobs-check-interval jobs-host-map "
				    "jobs-squeue log-level ");
	assert_null(strstr(usage, "dump-options"));
	free(dump);
	free(usage);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_defaults_are_cores, teardown),
		cmocka_unit_test_teardown(test_once_decides_in_one_round,
					  teardown),
		cmocka_unit_test_teardown(test_every_kind, teardown),
		cmocka_unit_test_teardown(test_lists, teardown),
		cmocka_unit_test_teardown(test_file_errors, teardown),
		cmocka_unit_test_teardown(test_command_line_errors, teardown),
		cmocka_unit_test_teardown(test_reset_never, teardown),
		cmocka_unit_test_teardown(test_diff, teardown),
		cmocka_unit_test_teardown(test_adopt_strings, teardown),
		cmocka_unit_test_teardown(test_mkey_file, teardown),
		cmocka_unit_test(test_dump_and_usage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
