#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "log.h"

static enum ibw_log_level cur_level = IBW_LOG_INFO;
static int to_syslog;

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

void ibw_log_set_level(enum ibw_log_level level)
{
	cur_level = level;
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
	char msg[1024];
	va_list ap;

	if (level > cur_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (to_syslog) {
		/* Our levels are syslog's. */
		syslog((int)level, "%s: %s", subsys, msg);
		return;
	}
	/* One write per line so concurrent writers do not interleave. */
	fprintf(stderr, "ibwatchd[%s] %s: %s\n", level_tag(level), subsys, msg);
}
