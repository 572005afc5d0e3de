/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logging: one sink for the whole daemon, lines tagged with a subsystem
 * token ("engine", "umad", ...). Libraries log through here and never
 * print on their own.
 */
#ifndef IBW_LOG_H
#define IBW_LOG_H

enum ibw_log_level {
	IBW_LOG_ERR = 3,
	IBW_LOG_WARN = 4,
	IBW_LOG_INFO = 6,
	IBW_LOG_DEBUG = 7,
};

/* Send every line to syslog (facility daemon) instead of stderr. */
void ibw_log_to_syslog(const char *ident);

/*
 * Find out whether stderr is the systemd journal: $JOURNAL_STREAM holds
 * "DEVICE:INODE" of the stream systemd connected, and it is ours if
 * stderr still has that device and inode (a redirection in between, or
 * a child's own stderr, does not). If so, every line written to stderr
 * from then on starts with its priority as "<N>" (sd-daemon(3)), which
 * journald reads as the line's priority, and leaves out the program
 * name and level, which the journal records itself. Returns 1 if so, 0
 * if not. Call it once, before the first line.
 */
int ibw_log_detect_journal(void);

/*
 * Write @text, one or more lines ending in '\n', to stderr at @level,
 * as they are but for the "<N>" prefix of each line under the journal:
 * for the daemon's own start-up errors, which do not go through
 * ibw_log().
 */
void ibw_log_stderr_text(enum ibw_log_level level, const char *text);

/* Messages above @level are dropped. Default: IBW_LOG_INFO. */
void ibw_log_set_level(enum ibw_log_level level);

/* Parse "err", "warn", "info" or "debug"; returns -EINVAL otherwise. */
int ibw_log_level_parse(const char *name, enum ibw_log_level *level);

void ibw_log(enum ibw_log_level level, const char *subsys, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_err(subsys, ...) ibw_log(IBW_LOG_ERR, subsys, __VA_ARGS__)
#define log_warn(subsys, ...) ibw_log(IBW_LOG_WARN, subsys, __VA_ARGS__)
#define log_info(subsys, ...) ibw_log(IBW_LOG_INFO, subsys, __VA_ARGS__)
#define log_debug(subsys, ...) ibw_log(IBW_LOG_DEBUG, subsys, __VA_ARGS__)

#endif
