// SPDX-License-Identifier: BSD-2-Clause
/*
 * net-snmp as an AgentX subagent inside ibwatchd's loop. Before every
 * wait a hook asks net-snmp for its descriptors and its next timeout
 * (snmp_select_info2) and keeps the loop's watches and one timer in step;
 * a readable descriptor goes to snmp_read2, the timer to snmp_timeout and
 * run_alarms. Alarms (the AgentX ping and reconnect) run from that timer,
 * never from SIGALRM: NETSNMP_DS_LIB_ALARM_DONT_USE_SIG makes
 * snmp_select_info2 include them in the timeout it returns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

/* mib.h first: net-snmp's headers (the agent's too) and core's, in the
 * order they need each other. */
#include "mib.h"

#include <net-snmp/agent/agent_sysORTable.h>
#include <net-snmp/library/large_fd_set.h>

#include "log.h"
#include "ratelimit.h"
#include "snmp.h"

static oid mib_oid[] = { IBW_MIB_ROOT };

#define MAX_FDS 16
#define EVENT_BATCH 64

struct ibw_snmp {
	struct ibw_loop *loop;
	struct ibw_monitor *mon;
	struct ibw_mib *mib;
	struct ibw_mib_stats stats;
	struct ibw_timer *timer;
	int fds[MAX_FDS];
	unsigned nfds;
	uint64_t last_seq; /* events up to here are dealt with */
	struct ibw_ratelimit notify_rl; /* the notification rate limit */
	uint64_t suppressed_logged;
	char last_log[256];
};

/* net-snmp is process-wide state: one subagent per process. */
static struct ibw_snmp *the_snmp;

/*
 * The SNMP context of our registrations (NULL: the default context).
 * net-snmp takes it from each registration's contextName, which mib.c
 * leaves NULL: ibwatchd is linked with
 * -Wl,--wrap=netsnmp_register_handler (agent/CMakeLists.txt), so that
 * mib.c's calls come here first and get it, and the MIB knows nothing
 * of instances. A subagent answers a request in the context it arrives
 * in, looked up among its own registrations, so these must be in the
 * context too, not only the AgentX Register PDUs.
 */
static char *reg_context;

int __real_netsnmp_register_handler(netsnmp_handler_registration *reg);
int __wrap_netsnmp_register_handler(netsnmp_handler_registration *reg);

int __wrap_netsnmp_register_handler(netsnmp_handler_registration *reg)
{
	if (reg && reg_context && !reg->contextName) {
		reg->contextName = strdup(reg_context);
		if (!reg->contextName) {
			/* as net-snmp does on its own failures */
			netsnmp_handler_registration_free(reg);
			return MIB_REGISTRATION_FAILED;
		}
	}
	return __real_netsnmp_register_handler(reg);
}

static int on_log(int major, int minor, void *server, void *client)
{
	struct snmp_log_message *msg = server;
	struct ibw_snmp *s = the_snmp;
	char line[256];
	size_t n;

	if (!msg || !msg->msg)
		return 0;
	snprintf(line, sizeof(line), "%s", msg->msg);
	n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == ' '))
		line[--n] = '\0';
	if (!n)
		return 0;
	/* The reconnect alarm repeats the same failure every interval:
	 * say it once, then only at debug level. */
	if (s && !strcmp(line, s->last_log)) {
		log_debug("snmp", "net-snmp: %s", line);
		return 0;
	}
	if (s)
		snprintf(s->last_log, sizeof(s->last_log), "%s", line);
	if (msg->priority <= LOG_ERR)
		log_err("snmp", "net-snmp: %s", line);
	else if (msg->priority <= LOG_WARNING)
		log_warn("snmp", "net-snmp: %s", line);
	else if (msg->priority <= LOG_INFO)
		log_info("snmp", "net-snmp: %s", line);
	else
		log_debug("snmp", "net-snmp: %s", line);
	return 0;
}

static void on_readable(struct ibw_loop *loop, int fd, unsigned events,
			void *arg)
{
	netsnmp_large_fd_set set;

	netsnmp_large_fd_set_init(&set, FD_SETSIZE);
	NETSNMP_LARGE_FD_SET(fd, &set);
	snmp_read2(&set);
	netsnmp_large_fd_set_cleanup(&set);
	netsnmp_check_outstanding_agent_requests();
}

static void on_timer(struct ibw_timer *t, void *arg)
{
	snmp_timeout();
	run_alarms();
	netsnmp_check_outstanding_agent_requests();
}

static struct ibw_snapshot *snapshot_of(void *arg)
{
	return ibw_monitor_snapshot(arg);
}

/* Turn new events into notifications, within the rate limit. */
static void notify(struct ibw_snmp *s)
{
	struct ibw_events *ev = ibw_monitor_events(s->mon);
	struct ibw_event batch[EVENT_BATCH];
	unsigned n, i, rounds;

	for (rounds = 0; rounds < 64; rounds++) {
		n = ibw_events_since(ev, s->last_seq, batch, EVENT_BATCH);
		if (!n)
			break;
		for (i = 0; i < n; i++) {
			netsnmp_variable_list *vars =
				ibw_mib_notification(s->mib, &batch[i]);

			s->last_seq = batch[i].seq;
			if (!vars)
				continue;
			if (ibw_ratelimit_take(&s->notify_rl, ibw_now_us())) {
				send_v2trap(vars);
				s->stats.notifications_sent++;
			} else {
				s->stats.notifications_suppressed++;
			}
			snmp_free_varbind(vars);
		}
	}
	if (s->stats.notifications_suppressed != s->suppressed_logged) {
		log_warn("snmp",
			 "notification rate limit: %llu suppressed so far "
			 "(the events stay in /api/v1/events)",
			 (unsigned long long)s->stats.notifications_suppressed);
		s->suppressed_logged = s->stats.notifications_suppressed;
	}
}

/* Before every wait: notifications, then net-snmp's fds and timeout. */
static void before_wait(struct ibw_loop *loop, void *arg)
{
	struct ibw_snmp *s = arg;
	netsnmp_large_fd_set set;
	struct timeval tv = { 0, 0 };
	int maxfd = 0, block = 1, fd;
	unsigned i;

	if (ibw_events_last_seq(ibw_monitor_events(s->mon)) != s->last_seq)
		notify(s);

	netsnmp_large_fd_set_init(&set, FD_SETSIZE);
	snmp_select_info2(&maxfd, &set, &tv, &block);
	/* Drop watches net-snmp no longer wants. */
	for (i = 0; i < s->nfds;) {
		if (s->fds[i] < maxfd &&
		    NETSNMP_LARGE_FD_ISSET(s->fds[i], &set)) {
			i++;
			continue;
		}
		ibw_loop_unwatch(loop, s->fds[i]);
		s->fds[i] = s->fds[--s->nfds];
	}
	for (fd = 0; fd < maxfd; fd++) {
		int known = 0;

		if (!NETSNMP_LARGE_FD_ISSET(fd, &set))
			continue;
		for (i = 0; i < s->nfds; i++)
			known |= s->fds[i] == fd;
		if (known)
			continue;
		if (s->nfds == MAX_FDS) {
			log_warn("snmp", "more than %d net-snmp descriptors",
				 MAX_FDS);
			break;
		}
		if (ibw_loop_watch(loop, fd, IBW_EV_READ, on_readable, s) == 0)
			s->fds[s->nfds++] = fd;
	}
	netsnmp_large_fd_set_cleanup(&set);
	if (block)
		ibw_timer_disarm(s->timer);
	else
		ibw_timer_arm(s->timer, (uint64_t)tv.tv_sec * 1000000u +
						(uint64_t)tv.tv_usec);
}

struct ibw_snmp *ibw_snmp_new(struct ibw_loop *loop, struct ibw_monitor *mon,
			      const struct ibw_local_port *lp,
			      const struct ibw_localport_query *lq,
			      const struct ibw_snmp_opts *o, char *err,
			      size_t errlen)
{
	struct ibw_snmp *s;
	unsigned rate = o->trap_rate ? o->trap_rate
				     : IBW_SNMP_DEFAULT_TRAP_RATE;
	unsigned ping_s = o->ping_interval_s ? o->ping_interval_s
					     : IBW_SNMP_DEFAULT_PING_INTERVAL_S;

	if (the_snmp) {
		snprintf(err, errlen, "the SNMP subagent is already running");
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->loop = loop;
	s->mon = mon;
	/* @rate a minute, and as many at once */
	ibw_ratelimit_init(&s->notify_rl, rate, 60000000, rate, ibw_now_us());
	s->last_seq = ibw_events_last_seq(ibw_monitor_events(mon));
	s->mib = ibw_mib_new(snapshot_of, mon, lp, lq, &s->stats);
	s->timer = ibw_timer_new(loop, on_timer, s);
	if (!s->mib || !s->timer) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}

	/* net-snmp's own output goes to our logger, nowhere else. No client
	 * argument: snmp_shutdown frees the ones it holds. */
	the_snmp = s;
	snmp_disable_log();
	snmp_register_callback(SNMP_CALLBACK_LIBRARY, SNMP_CALLBACK_LOGGING,
			       on_log, NULL);
	snmp_enable_calllog();

	netsnmp_ds_set_boolean(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_ROLE,
			       1);
	if (o->agentx_socket)
		netsnmp_ds_set_string(NETSNMP_DS_APPLICATION_ID,
				      NETSNMP_DS_AGENT_X_SOCKET,
				      o->agentx_socket);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID,
			       NETSNMP_DS_LIB_ALARM_DONT_USE_SIG, 1);
	/* Nothing from /etc/snmp or persistent files: our options are on
	 * our command line, and the daemon must not need /var/lib/snmp. */
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID,
			       NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID,
			       NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID,
			       NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID,
			       NETSNMP_DS_LIB_DONT_PERSIST_STATE, 1);
	/* The subagent speaks numeric OIDs only: load no MIB text, or
	 * net-snmp complains about every module it cannot resolve. */
	setenv("MIBS", "", 1);
	setenv("MIBDIRS", "", 1);
	if (init_agent("ibwatchd") != 0) {
		snprintf(err, errlen, "net-snmp: init_agent failed");
		goto fail;
	}
	/* init_agent resets the ping interval: set it after. Without one,
	 * a subagent whose master went away never reconnects. */
	netsnmp_ds_set_int(NETSNMP_DS_APPLICATION_ID,
			   NETSNMP_DS_AGENT_AGENTX_PING_INTERVAL, (int)ping_s);
	reg_context = o->context && *o->context ? strdup(o->context) : NULL;
	if (o->context && *o->context && !reg_context) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (ibw_mib_register(s->mib) < 0) {
		snprintf(err, errlen, "cannot register IBWATCH-MIB");
		goto fail;
	}
	/* Connects to the master (or arms the reconnect alarm). */
	init_snmp("ibwatchd");
	/* IBWATCH-MIB in the master's sysORTable (SNMPv2-MIB), so managers
	 * see what this agent implements. After init_snmp: net-snmp's
	 * subagent sends AgentX addAgentCaps for an entry registered while
	 * connected, and every entry again when it reconnects to a master
	 * that restarted. */
	if (register_sysORTable(mib_oid, OID_LENGTH(mib_oid),
				"IBWATCH-MIB: InfiniBand fabric monitoring "
				"by ibwatchd") < 0)
		log_warn("snmp", "cannot add IBWATCH-MIB to sysORTable");
	if (ibw_loop_add_hook(loop, before_wait, s) < 0) {
		snprintf(err, errlen, "cannot hook into the event loop");
		snmp_shutdown("ibwatchd");
		goto fail;
	}
	log_info("snmp", "AgentX subagent for %s, ping interval %u s%s%s%s",
		 o->agentx_socket ? o->agentx_socket : "the default socket",
		 ping_s, reg_context ? ", context \"" : "",
		 reg_context ? reg_context : "", reg_context ? "\"" : "");
	return s;
fail:
	free(reg_context);
	reg_context = NULL;
	the_snmp = NULL;
	ibw_timer_free(s->timer);
	ibw_mib_free(s->mib);
	free(s);
	return NULL;
}

void ibw_snmp_free(struct ibw_snmp *s)
{
	unsigned i;

	if (!s)
		return;
	ibw_loop_del_hook(s->loop, before_wait, s);
	for (i = 0; i < s->nfds; i++)
		ibw_loop_unwatch(s->loop, s->fds[i]);
	/* Our logger must not be called back from inside the shutdown,
	 * which holds net-snmp's callback lock while it logs. */
	snmp_disable_calllog();
	snmp_shutdown("ibwatchd");
	ibw_timer_free(s->timer);
	ibw_mib_free(s->mib);
	free(reg_context);
	reg_context = NULL;
	the_snmp = NULL;
	free(s);
}
