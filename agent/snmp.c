// SPDX-License-Identifier: BSD-2-Clause
/*
 * net-snmp as an AgentX subagent inside ibwatchd's loop. Before every
 * wait a hook asks net-snmp for its descriptors and its next timeout
 * (snmp_select_info2) and keeps the loop's watches and one timer in step;
 * a readable descriptor goes to snmp_read2, the timer to snmp_timeout and
 * run_alarms. Alarms run from that timer, never from SIGALRM:
 * NETSNMP_DS_LIB_ALARM_DONT_USE_SIG makes snmp_select_info2 include them
 * in the timeout it returns.
 *
 * The session to the master is ours to open, not net-snmp's: its own
 * open (subagent_open_master_session) connects with a blocking
 * connect(2), which against a master that does not answer SYNs holds
 * the loop for minutes, and a full backlog on a Unix socket for ever.
 * So net-snmp's start-up connect is taken out, its ping interval is 0
 * (it neither pings nor reconnects by itself), and here: a non-blocking
 * connect to the master's address, watched by the loop with a deadline
 * (agentx-timeout); only when that one succeeded does net-snmp open its
 * session, whose connect then succeeds at once, and whose synchronous
 * Open and Register round trips are each bounded by the same timeout
 * with no retry (SNMP_CALLBACK_SESSION_INIT). A failed attempt is tried
 * again after 1 s, doubling up to the ping interval. While connected, a
 * Ping goes out asynchronously every ping interval; one unanswered
 * within the timeout shuts the session's socket, and net-snmp's own
 * disconnect handling tears the session down.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* mib.h first: net-snmp's headers (the agent's too) and core's, in the
 * order they need each other. */
#include "mib.h"

#include <net-snmp/agent/agent_callbacks.h>
#include <net-snmp/agent/agent_sysORTable.h>
#include <net-snmp/library/large_fd_set.h>

#include "agentx_status.h"
#include "log.h"
#include "ratelimit.h"
#include "snmp.h"

static oid mib_oid[] = { IBW_MIB_ROOT };
static const char mib_descr[] = "IBWATCH-MIB: InfiniBand fabric monitoring "
				"by ibwatchd";

/*
 * net-snmp's subagent, exported by libnetsnmpagent (5.7 to 5.9 at
 * least) but declared only in its source tree's
 * agent/mibgroup/agentx/subagent.h, which is not installed. The two
 * constants are from its agentx/protocol.h: the session version it
 * gives AgentX sessions, and the Ping PDU's type (RFC 2741, 6.2.8).
 */
int subagent_startup(int majorID, int minorID, void *serverarg,
		     void *clientarg);
int subagent_open_master_session(void);
#define NETSNMP_AGENTX_VERSION_1 (192 | 1)
#define NETSNMP_AGENTX_MSG_PING 13

#define BACKOFF_FIRST_US 1000000u

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

	/* the session to the master (see the top of this file) */
	struct ibw_agentx_status st;
	unsigned timeout_ms; /* each connect and round trip at most */
	uint64_t backoff_max_us; /* the ping interval */
	uint64_t backoff_us; /* the next wait after a failure */
	uint64_t ping_us;
	struct sockaddr_storage addr; /* where the master listens */
	socklen_t addrlen; /* 0: no address we can probe */
	int probe_fd; /* the non-blocking connect under way, or -1 */
	struct ibw_timer *retry; /* the next attempt, or the probe deadline */
	struct ibw_timer *pinger;
	netsnmp_session *sess; /* the open session, or NULL */
	int ping_out; /* a Ping awaits its answer */
	int or_registered; /* IBWATCH-MIB is in the sysORTable */
	int lost; /* a session was open before: the next one reconnects */
	int stopping; /* ibw_snmp_free: net-snmp's callbacks change nothing */
	const char *master; /* the option's text, for messages */
};

/* net-snmp is process-wide state: one subagent per process. */
static struct ibw_snmp *the_snmp;

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
	/* With its ping interval 0 net-snmp says it will not reconnect
	 * when the master goes; we do (on_index says so). */
	if (strstr(line, "not reconnecting")) {
		log_debug("snmp", "net-snmp: %s", line);
		return 0;
	}
	/* send_trap makes an SNMPv1 form of every notification, for v1
	 * sinks of the subagent's own (none here: the master sends ours
	 * as SNMPv2), and warns twice when a varbind is a Counter64
	 * (ibwErrorThreshold's value), which v1 cannot carry. The
	 * notification itself goes out. */
	if (strstr(line, "traps can't carry Counter64") ||
	    strstr(line, "failed to convert v2->v1")) {
		log_debug("snmp", "net-snmp: %s", line);
		return 0;
	}
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

static void publish(struct ibw_snmp *s)
{
	ibw_agentx_status_publish(&s->st);
}

static void set_state(struct ibw_snmp *s, enum ibw_agentx_state state)
{
	s->st.state = state;
	s->st.since_us = ibw_realtime_us();
	if (state != IBW_AGENTX_WAITING)
		s->st.next_us = 0;
	publish(s);
}

static const char *master_name(const struct ibw_snmp_opts *o)
{
	return o->agentx_socket ? o->agentx_socket : IBW_SNMP_DEFAULT_SOCKET;
}

static void close_probe(struct ibw_snmp *s)
{
	if (s->probe_fd < 0)
		return;
	ibw_loop_unwatch(s->loop, s->probe_fd);
	close(s->probe_fd);
	s->probe_fd = -1;
}

/* An attempt failed (@why): the next one after the backoff. */
/* Try again after the backoff, which doubles up to its ceiling. */
static void schedule_retry(struct ibw_snmp *s)
{
	uint64_t wait = s->backoff_us < s->backoff_max_us ? s->backoff_us
							  : s->backoff_max_us;

	s->backoff_us = wait * 2 < s->backoff_max_us ? wait * 2
						     : s->backoff_max_us;
	s->st.next_us = ibw_realtime_us() + wait;
	set_state(s, IBW_AGENTX_WAITING);
	ibw_timer_arm(s->retry, wait);
}

static void attempt_failed(struct ibw_snmp *s, const char *why)
{
	uint64_t wait = s->backoff_us;

	close_probe(s);
	snprintf(s->st.last_error, sizeof(s->st.last_error), "%s", why);
	/* the first failure of a series is news; its repeats are not */
	if (s->st.attempts == 1)
		log_warn("snmp", "AgentX master %s: %s; trying again in %llu s",
			 s->master, why, (unsigned long long)wait / 1000000u);
	else
		log_debug("snmp", "AgentX master %s: %s (attempt %llu)",
			  s->master, why, (unsigned long long)s->st.attempts);
	schedule_retry(s);
}

/*
 * The master took a connection: let net-snmp open its session (its
 * connect succeeds at once now; the Open and each Register wait
 * timeout_ms at most), then register IBWATCH-MIB and its sysORTable
 * entry with it.
 */
static void open_session(struct ibw_snmp *s)
{
	uint64_t t0 = ibw_now_us();

	/* With no session this only drops the entry here; it is announced
	 * to the new master below (addAgentCaps). */
	if (s->or_registered) {
		unregister_sysORTable(mib_oid, OID_LENGTH(mib_oid));
		s->or_registered = 0;
	}
	if (subagent_open_master_session() != 0 || !s->sess) {
		s->sess = NULL;
		attempt_failed(s, "no answer to the AgentX Open in time");
		return;
	}
	/* Every registration again, as net-snmp's own reconnect does. */
	register_mib_reattach();
	/* IBWATCH-MIB in the master's sysORTable (SNMPv2-MIB), so managers
	 * see what this agent implements. */
	if (register_sysORTable(mib_oid, OID_LENGTH(mib_oid), mib_descr) < 0)
		log_warn("snmp", "cannot add IBWATCH-MIB to sysORTable");
	else
		s->or_registered = 1;
	s->st.connects++;
	if (s->lost)
		s->st.reconnects++;
	log_info("snmp",
		 "AgentX session open with %s after %llu attempt(s)%s "
		 "(session open and MIB registered in %llu ms)",
		 s->master, (unsigned long long)s->st.attempts,
		 s->lost ? ", a reconnect" : "",
		 (unsigned long long)(ibw_now_us() - t0) / 1000u);
	s->st.attempts = 0;
	s->backoff_us = BACKOFF_FIRST_US;
	set_state(s, IBW_AGENTX_CONNECTED);
	ibw_timer_arm(s->pinger, s->ping_us);
}

static void on_probe(struct ibw_loop *loop, int fd, unsigned events, void *arg)
{
	struct ibw_snmp *s = arg;
	socklen_t len = sizeof(int);
	char why[128];
	int err = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	ibw_timer_disarm(s->retry);
	close_probe(s);
	if (err) {
		snprintf(why, sizeof(why), "connect: %s", strerror(err));
		attempt_failed(s, why);
		return;
	}
	open_session(s);
}

/* One attempt: a non-blocking connect, watched with a deadline. */
static void start_attempt(struct ibw_snmp *s)
{
	char why[128];
	int fd;

	s->st.attempts++;
	s->st.attempts_total++;
	set_state(s, IBW_AGENTX_CONNECTING);
	if (!s->addrlen) {
		/* an address we cannot parse: net-snmp's blocking connect */
		open_session(s);
		return;
	}
	fd = socket(s->addr.ss_family,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, sizeof(why), "socket: %s", strerror(errno));
		attempt_failed(s, why);
		return;
	}
	if (connect(fd, (struct sockaddr *)&s->addr, s->addrlen) == 0) {
		close(fd);
		open_session(s);
		return;
	}
	if (errno != EINPROGRESS) {
		/* EAGAIN: a Unix socket whose listen backlog is full */
		snprintf(why, sizeof(why), "connect: %s",
			 errno == EAGAIN ? "the master's backlog is full"
					 : strerror(errno));
		close(fd);
		attempt_failed(s, why);
		return;
	}
	if (ibw_loop_watch(s->loop, fd, IBW_EV_WRITE, on_probe, s) < 0) {
		close(fd);
		attempt_failed(s, "cannot watch the connection");
		return;
	}
	s->probe_fd = fd;
	ibw_timer_arm(s->retry, (uint64_t)s->timeout_ms * 1000u);
}

/* The probe's deadline, or the next attempt. */
static void on_retry(struct ibw_timer *t, void *arg)
{
	struct ibw_snmp *s = arg;
	char why[128];

	if (s->probe_fd >= 0) {
		snprintf(why, sizeof(why), "connect: no answer in %u ms",
			 s->timeout_ms);
		attempt_failed(s, why);
		return;
	}
	start_attempt(s);
}

/* Every AgentX session: our bound on each round trip, and no retry (a
 * master that does not answer in time is tried again later, with the
 * loop free in between). */
static int on_session_init(int major, int minor, void *server, void *client)
{
	netsnmp_session *sess = server;
	struct ibw_snmp *s = the_snmp;

	if (s && sess && sess->version == NETSNMP_AGENTX_VERSION_1) {
		sess->timeout = (long)s->timeout_ms * 1000;
		sess->retries = 0;
	}
	return 0;
}

/* net-snmp opened (INDEX_START) or dropped (INDEX_STOP) the session. */
static int on_index(int major, int minor, void *server, void *client)
{
	struct ibw_snmp *s = the_snmp;

	if (!s || s->stopping)
		return 0;
	if (minor == SNMPD_CALLBACK_INDEX_START) {
		s->sess = server;
		return 0;
	}
	if (!s->sess || s->sess != server)
		return 0;
	/* The master closed it, or our Ping went unanswered. net-snmp
	 * tears the session down; we reconnect. */
	s->sess = NULL;
	s->ping_out = 0;
	s->lost = 1;
	ibw_timer_disarm(s->pinger);
	snprintf(s->st.last_error, sizeof(s->st.last_error),
		 "the session was lost");
	log_warn("snmp", "AgentX session with %s lost; reconnecting",
		 s->master);
	s->backoff_us = BACKOFF_FIRST_US;
	schedule_retry(s);
	return 0;
}

static int on_ping_answer(int op, netsnmp_session *sess, int reqid,
			  netsnmp_pdu *pdu, void *magic)
{
	struct ibw_snmp *s = the_snmp;
	netsnmp_transport *t;

	if (!s || s->stopping)
		return 1;
	s->ping_out = 0;
	if (op != NETSNMP_CALLBACK_OP_TIMED_OUT || sess != s->sess)
		return 1;
	s->st.pings_failed++;
	publish(s);
	log_warn("snmp",
		 "AgentX master %s did not answer a Ping in %u ms: closing the "
		 "session",
		 s->master, s->timeout_ms);
	/* As if the master had closed it: net-snmp reads the end of the
	 * stream and runs its disconnect handling (then on_index). */
	t = snmp_sess_transport(snmp_sess_pointer(sess));
	if (t && t->sock >= 0)
		shutdown(t->sock, SHUT_RDWR);
	return 1;
}

/* While connected: an asynchronous Ping every ping interval. */
static void on_ping(struct ibw_timer *t, void *arg)
{
	struct ibw_snmp *s = arg;
	netsnmp_pdu *pdu;

	if (!s->sess)
		return;
	if (!s->ping_out) {
		pdu = snmp_pdu_create(NETSNMP_AGENTX_MSG_PING);
		if (pdu) {
			pdu->time = 0;
			pdu->sessid = s->sess->sessid;
			if (snmp_async_send(s->sess, pdu, on_ping_answer, s))
				s->ping_out = 1;
			else
				snmp_free_pdu(pdu);
		}
	}
	ibw_timer_arm(t, s->ping_us);
}

/*
 * Where the master listens, for the non-blocking connect: a Unix path
 * ("/path", "unix:/path") or "tcp:HOST[:PORT]" ("tcp6:", "[v6]"), port
 * 705 when none. A host name is resolved once, here, before the loop
 * runs. Anything else leaves addrlen 0.
 */
static void master_addr(struct ibw_snmp *s, const char *spec)
{
	struct addrinfo hints, *ai = NULL;
	char host[256], *h = host, *port, *end;
	const char *p = spec;
	int family = AF_UNSPEC;

	s->addrlen = 0;
	if (!strncmp(p, "unix:", 5))
		p += 5;
	if (*p == '/') {
		struct sockaddr_un *un = (struct sockaddr_un *)&s->addr;

		if (strlen(p) >= sizeof(un->sun_path))
			return;
		un->sun_family = AF_UNIX;
		strcpy(un->sun_path, p);
		s->addrlen = sizeof(*un);
		return;
	}
	if (!strncmp(p, "tcp:", 4)) {
		p += 4;
	} else if (!strncmp(p, "tcp6:", 5)) {
		p += 5;
		family = AF_INET6;
	} else {
		return;
	}
	snprintf(host, sizeof(host), "%s", p);
	if (host[0] == '[' && (end = strchr(host, ']'))) {
		*end = '\0';
		port = end[1] == ':' ? end + 2 : NULL;
		h = host + 1;
	} else if ((port = strrchr(host, ':'))) {
		*port++ = '\0';
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = family;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(h, port && *port ? port : "705", &hints, &ai) || !ai)
		return;
	if (ai->ai_addrlen <= sizeof(s->addr)) {
		memcpy(&s->addr, ai->ai_addr, ai->ai_addrlen);
		s->addrlen = ai->ai_addrlen;
	}
	freeaddrinfo(ai);
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
	const char *ctx = o->context && *o->context ? o->context : NULL;
	char *rows = NULL;

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
	if (o->state_file) {
		size_t n = strlen(o->state_file) + sizeof(IBW_SNMP_ROWS_SUFFIX);

		rows = malloc(n);
		if (rows)
			snprintf(rows, n, "%s%s", o->state_file,
				 IBW_SNMP_ROWS_SUFFIX);
	}
	if (!o->state_file || rows)
		s->mib = ibw_mib_new(snapshot_of, mon, lp, lq, &s->stats, rows);
	free(rows);
	s->timer = ibw_timer_new(loop, on_timer, s);
	s->retry = ibw_timer_new(loop, on_retry, s);
	s->pinger = ibw_timer_new(loop, on_ping, s);
	s->probe_fd = -1;
	s->master = master_name(o);
	s->timeout_ms = o->timeout_ms ? o->timeout_ms
				      : IBW_SNMP_DEFAULT_TIMEOUT_MS;
	s->ping_us = (uint64_t)ping_s * 1000000u;
	s->backoff_max_us = s->ping_us > BACKOFF_FIRST_US ? s->ping_us
							  : BACKOFF_FIRST_US;
	s->backoff_us = BACKOFF_FIRST_US;
	master_addr(s, s->master);
	if (!s->mib || !s->timer || !s->retry || !s->pinger) {
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
	snmp_register_callback(SNMP_CALLBACK_LIBRARY,
			       SNMP_CALLBACK_SESSION_INIT, on_session_init,
			       NULL);
	snmp_register_callback(SNMP_CALLBACK_APPLICATION,
			       SNMPD_CALLBACK_INDEX_START, on_index, NULL);
	snmp_register_callback(SNMP_CALLBACK_APPLICATION,
			       SNMPD_CALLBACK_INDEX_STOP, on_index, NULL);

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
	/* init_agent resets the ping interval: set it after. 0: net-snmp
	 * neither pings nor reconnects by itself, we do (on_ping,
	 * attempt_failed); and its connect at init_snmp is taken out, the
	 * first attempt is ours too. */
	netsnmp_ds_set_int(NETSNMP_DS_APPLICATION_ID,
			   NETSNMP_DS_AGENT_AGENTX_PING_INTERVAL, 0);
	if (snmp_unregister_callback(SNMP_CALLBACK_LIBRARY,
				     SNMP_CALLBACK_POST_READ_CONFIG,
				     subagent_startup, NULL, 1) < 1)
		log_warn("snmp", "net-snmp's start-up connect is still in: "
				 "it may block until the master answers");
	if (ibw_mib_register(s->mib, o->context) < 0) {
		snprintf(err, errlen, "cannot register IBWATCH-MIB");
		goto fail;
	}
	/* Reads no configuration; the session is opened below. */
	init_snmp("ibwatchd");
	if (!s->addrlen)
		log_warn("snmp",
			 "AgentX master %s: not a Unix path or tcp:HOST:PORT, "
			 "so net-snmp connects to it itself, unbounded",
			 s->master);
	if (ibw_loop_add_hook(loop, before_wait, s) < 0) {
		snprintf(err, errlen, "cannot hook into the event loop");
		snmp_shutdown("ibwatchd");
		goto fail;
	}
	log_info("snmp",
		 "AgentX subagent for %s, ping interval %u s, timeout %u "
		 "ms%s%s%s",
		 s->master, ping_s, s->timeout_ms, ctx ? ", context \"" : "",
		 ctx ? ctx : "", ctx ? "\"" : "");
	start_attempt(s);
	return s;
fail:
	the_snmp = NULL;
	ibw_timer_free(s->timer);
	ibw_timer_free(s->retry);
	ibw_timer_free(s->pinger);
	ibw_mib_free(s->mib);
	free(s);
	return NULL;
}

void ibw_snmp_free(struct ibw_snmp *s)
{
	unsigned i;

	if (!s)
		return;
	s->stopping = 1;
	ibw_loop_del_hook(s->loop, before_wait, s);
	for (i = 0; i < s->nfds; i++)
		ibw_loop_unwatch(s->loop, s->fds[i]);
	close_probe(s);
	/* Our logger must not be called back from inside the shutdown,
	 * which holds net-snmp's callback lock while it logs. */
	snmp_disable_calllog();
	snmp_shutdown("ibwatchd");
	ibw_timer_free(s->timer);
	ibw_timer_free(s->retry);
	ibw_timer_free(s->pinger);
	ibw_mib_free(s->mib);
	the_snmp = NULL;
	free(s);
}
