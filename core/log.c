// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "safename.h"

static enum ibw_log_level cur_level = IBW_LOG_INFO;
static int to_syslog;
static int to_journal;

static const struct {
	const char *name;
	enum ibw_log_level level;
} level_names[] = {
	{ "err", IBW_LOG_ERR },
	{ "warn", IBW_LOG_WARN },
	{ "info", IBW_LOG_INFO },
	{ "debug", IBW_LOG_DEBUG },
};

void ibw_log_to_syslog(const char *ident)
{
	openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	to_syslog = 1;
}

int ibw_log_detect_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	uintmax_t dev, ino;
	struct stat st;
	char end;

	to_journal = 0;
	/* systemd writes both numbers in decimal (systemd.exec(5)). */
	if (!env || sscanf(env, "%ju:%ju%c", &dev, &ino, &end) != 2)
		return 0;
	if (fstat(STDERR_FILENO, &st) < 0)
		return 0;
	to_journal = (uintmax_t)st.st_dev == dev && (uintmax_t)st.st_ino == ino;
	return to_journal;
}

void ibw_log_stderr_text(enum ibw_log_level level, const char *text)
{
	const char *p = text;
	size_t n;

	if (!to_journal) {
		fputs(text, stderr);
		return;
	}
	while (*p) {
		n = strcspn(p, "\n");
		fprintf(stderr, "<%d>%.*s\n", (int)level, (int)n, p);
		p += n;
		if (*p == '\n')
			p++;
	}
}

/* The level is read by every thread that logs (the HTTP server's too)
 * and set on the loop's thread on a reload. */
void ibw_log_set_level(enum ibw_log_level level)
{
	__atomic_store_n(&cur_level, level, __ATOMIC_RELAXED);
}

int ibw_log_level_parse(const char *name, enum ibw_log_level *level)
{
	size_t i;

	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(name, level_names[i].name) == 0) {
			*level = level_names[i].level;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *level_tag(enum ibw_log_level level)
{
	size_t i;

	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (level_names[i].level == level)
			return level_names[i].name;
	return "?";
}

void ibw_log(enum ibw_log_level level, const char *subsys, const char *fmt, ...)
{
	char raw[1024], msg[3 * sizeof(raw)];
	va_list ap;
	int n;

	if (level > __atomic_load_n(&cur_level, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	n = vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* Whatever a message quotes (a name from the fabric, a client's
	 * request, a config line), the log gets one line of valid UTF-8:
	 * control bytes become '?', ill-formed ones U+FFFD. */
	if (n < 0)
		n = 0;
	ibw_name_sanitize(msg, sizeof(msg), raw,
			  (size_t)n < sizeof(raw) ? (size_t)n : strlen(raw));
	if (to_syslog) {
		/* Our levels are syslog's. */
		syslog((int)level, "%s: %s", subsys, msg);
		return;
	}
	/* One write per line so concurrent writers do not interleave. The
	 * journal has the name, PID and priority apart: "<N>" sets the
	 * last. */
	if (to_journal)
		fprintf(stderr, "<%d>%s: %s\n", (int)level, subsys, msg);
	else
		fprintf(stderr, "ibwatchd[%s] %s: %s\n", level_tag(level),
			subsys, msg);
}
