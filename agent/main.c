// SPDX-License-Identifier: BSD-2-Clause
/*
 * ibwatchd: attach to a local HCA port and watch the fabric.
 */
#include <errno.h>
#include <inttypes.h>
#include <grp.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "ibw_version.h"
#include "json.h"
#include "json_events.h"
#include "json_links.h"
#include "json_summary.h"
#include "localdev.h"
#include "localport.h"
#include "monitor.h"
#include "namemap.h"
#include "options.h"
#include "ping.h"
#include "responder.h"
#include "sdnotify.h"
#include "server.h"
#include "snmp.h"
#include "sa.h"
#include "trace.h"
#include "log.h"
#include "loop.h"
#include "umad.h"

#define LOCAL_REFRESH_US (10u * 1000000u)

struct daemon {
	struct opts o;
	int argc;
	char **argv;
	struct ibw_loop *loop;
	struct ibw_transport *t;
	struct ibw_engine *e;
	int reopens; /* the engine opens a lost device again */
	char reopen_err[256]; /* the last failed reopen's reason, warned */
	struct ibw_local_port lp;
	struct ibw_localport_query lq;
	int lq_done;
	unsigned lq_failed; /* local port queries failed in a row */
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
	int lockfd; /* --textfile's lock, held until exit */
};

/* "ibwatchd: " and @fmt's line(s) on stderr: the errors that end a
 * start or a command-line run. Under the journal, at priority err. */
static void __attribute__((format(printf, 1, 2))) say_err(const char *fmt, ...)
{
	char line[1024] = "ibwatchd: ";
	size_t n = strlen(line);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	ibw_log_stderr_text(IBW_LOG_ERR, line);
}

/* Tell the service manager (Type=notify) where we are, if one listens. */
static void notify(const char *state)
{
	int rc = ibw_sd_notify(state);

	if (rc < 0)
		log_warn("main", "cannot notify the service manager (%s): %s",
			 state, strerror(-rc));
}

/*
 * --textfile: /metrics as infiniband_exporter --exporter.runonce writes
 * it, for node_exporter's textfile collector, which reads FILE whole at
 * any moment: written to a temporary name beside it (one the collector
 * skips: not ending in .prom), flushed to disk, then renamed over it.
 */
static int write_textfile(struct daemon *d, const char *path)
{
	struct ibw_snapshot *snap = ibw_monitor_snapshot(d->mon);
	struct ibw_prom_opts po = d->o.http.prom;
	char tmp[4096];
	char *text = NULL;
	size_t len = 0, off = 0;
	int fd, rc = 0;

	po.om = 0;
	po.process = 0;
	po.runonce = 1;
	po.rcv_err = d->o.mon.counters.details;
	if (snap) {
		text = ibw_prom_render_snapshot(snap, &po, &len);
		ibw_snapshot_unref(snap);
	}
	if (!text)
		return -ENOMEM;
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
		free(text);
		return -ENAMETOOLONG;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		rc = -errno;
		free(text);
		return rc;
	}
	while (off < len && !rc) {
		ssize_t w = write(fd, text + off, len - off);

		if (w < 0 && errno != EINTR)
			rc = -errno;
		else if (w > 0)
			off += (size_t)w;
	}
	free(text);
	if (!rc && (fchmod(fd, 0644) != 0 || fsync(fd) != 0))
		rc = -errno;
	if (close(fd) != 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

/* Exit status of a --textfile run that another run's lock turned away
 * (sysexits.h's EX_TEMPFAIL: the next cron run will do). */
#define TEXTFILE_LOCKED 75

/*
 * --textfile: take FILE.lock (flock, exclusive, not waiting) before the
 * fabric is touched or the state file read, and hold it until exit, so
 * that overlapping cron runs never interleave their state file and
 * textfile writes. The file holds the holder's pid, for the message of
 * the run turned away. It stays when we exit: unlinking it would let a
 * run lock an unlinked file while another locks a new one. Returns the
 * fd, -EWOULDBLOCK (@err names the holder) or another negative errno.
 */
static int lock_textfile(const char *path, char *err, size_t len)
{
	char name[4096], pid[32] = "";
	ssize_t n;
	int fd, rc, i;

	if (snprintf(name, sizeof(name), "%s.lock", path) >= (int)sizeof(name))
		return -ENAMETOOLONG;
	fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, len, "cannot open %s.lock: %s", path,
			 strerror(-rc));
		return rc;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		rc = -errno;
		/* The holder writes its pid just after it locks: a run that
		 * starts with it can find the file empty, so look again a
		 * few times (100 ms at most). */
		for (n = 0, i = 0; rc == -EWOULDBLOCK && n <= 0 && i < 20;
		     i++) {
			if (i)
				usleep(5000);
			n = pread(fd, pid, sizeof(pid) - 1, 0);
		}
		pid[n > 0 ? strcspn(pid, "\n") : 0] = '\0';
		if (rc == -EWOULDBLOCK)
			snprintf(
				err, len,
				"another --textfile run (pid %s) holds %s.lock: "
				"%s not written by this one",
				*pid ? pid : "unknown", path, path);
		else
			snprintf(err, len, "cannot lock %s.lock: %s", path,
				 strerror(-rc));
		close(fd);
		return rc;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n)
		log_warn("main", "cannot write the pid to %s: %s", name,
			 strerror(errno));
	return fd;
}

/* --links: /api/v1/links's document alone. */
static int links_json(struct daemon *d, FILE *f)
{
	struct ibw_snapshot *snap = ibw_monitor_snapshot(d->mon);
	struct ibw_jw w;

	ibw_jw_init_stream(&w, f);
	ibw_json_write_links(&w, snap, NULL);
	ibw_snapshot_unref(snap);
	return ibw_jw_close(&w);
}

/*
 * --once: the documents the HTTP API serves, each under its name and in
 * its shape (status, nodes, ports, endports, traces, events, links;
 * docs/api.md), and the local port and CAs, which only --once prints.
 */
static int once_json(struct daemon *d, FILE *f)
{
	static const struct ibw_port_filter all_ports = { 0, 0, -1, 0 };
	struct ibw_engine_stats st;
	const struct ibw_localport_query *q = &d->lq;
	struct ibw_snapshot *snap = ibw_monitor_snapshot(d->mon);
	struct ibw_events *ev = ibw_monitor_events(d->mon);
	/* as many as /api/v1/events gives */
	struct ibw_event *evs = calloc(4096, sizeof(*evs));
	struct ibw_local_ca cas[4];
	struct ibw_jw w;
	int ncas;
	unsigned nev;
	int rc;

	ibw_engine_get_stats(d->e, &st);
	ncas = ibw_umad_local_cas(cas, 4);
	nev = evs ? ibw_events_since(ev, 0, evs, 4096) : 0;
	/* Written member by member, in JSON_SORT_KEYS order: the big
	 * documents go element by element, never as one tree. */
	ibw_jw_init_stream(&w, f);
	ibw_jw_object(&w);
	ibw_jw_key(&w, "endports");
	ibw_json_write_endports(&w, snap);
	ibw_jw_key(&w, "events");
	ibw_json_write_events_doc(&w, ibw_events_last_seq(ev), evs, nev);
	ibw_jw_key(&w, "links");
	ibw_json_write_links(&w, snap, NULL);
	ibw_jw_key(&w, "local");
	ibw_jw_value(&w,
		     ibw_json_local_cas(cas, ncas > 0 ? (unsigned)ncas : 0));
	ibw_jw_key(&w, "local_port");
	ibw_jw_value(&w, ibw_json_local_port(&d->lp,
					     q->have_portinfo ? &q->pi : NULL,
					     q->have_nodeinfo ? &q->ni : NULL,
					     q->have_desc ? q->desc : NULL));
	ibw_jw_key(&w, "nodes");
	ibw_json_write_nodes(&w, snap);
	ibw_jw_key(&w, "ports");
	ibw_json_write_ports(&w, snap, &all_ports);
	ibw_jw_key(&w, "status");
	ibw_jw_value(&w, ibw_json_status(snap, &st, ibw_realtime_us()));
	ibw_jw_key(&w, "traces");
	ibw_json_write_watched(&w, snap);
	ibw_jw_end(&w);
	rc = ibw_jw_close(&w);
	free(evs);
	ibw_snapshot_unref(snap);
	return rc;
}

/* --once's default: what one look needs (http/json_summary.c). */
static int once_summary(struct daemon *d, FILE *f)
{
	struct ibw_engine_stats st;
	const struct ibw_localport_query *q = &d->lq;
	struct ibw_snapshot *snap = ibw_monitor_snapshot(d->mon);
	json_t *j;
	int rc;

	ibw_engine_get_stats(d->e, &st);
	j = ibw_json_once_summary(
		snap, &st,
		ibw_json_local_port(&d->lp, q->have_portinfo ? &q->pi : NULL,
				    q->have_nodeinfo ? &q->ni : NULL,
				    q->have_desc ? q->desc : NULL),
		ibw_realtime_us());
	rc = j ? json_dumpf(j, f, JSON_INDENT(2) | JSON_SORT_KEYS) : -1;
	json_decref(j);
	if (snap)
		ibw_snapshot_unref(snap);
	return rc < 0 ? -EIO : 0;
}

static void start_ping(struct daemon *d);

/* This thread's CPU time: --once's document is written on it alone, and
 * its wall time moves with what else the machine runs. */
static uint64_t thread_cpu_us(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void on_local(struct ibw_localport_query *q, void *arg)
{
	struct daemon *d = arg;

	d->lq_done = 1;
	/* One warning per run of failures: while the device is lost the
	 * query fails on every try of the reopen's backoff. */
	if (q->first_error != IBW_MAD_OK && !d->lq_failed++)
		log_warn("local",
			 "local port query: %s (status %d); further failures "
			 "are not logged until it answers again",
			 ibw_mad_result_str(q->first_error), q->first_status);
	else if (q->first_error != IBW_MAD_OK)
		log_debug("local", "local port query: %s (status %d)",
			  ibw_mad_result_str(q->first_error), q->first_status);
	if (q->first_error == IBW_MAD_OK && d->lq_failed) {
		log_info("local",
			 "local port query answered again, after %u "
			 "failures",
			 d->lq_failed);
		d->lq_failed = 0;
	}
	if (q->first_error == IBW_MAD_OK)
		log_debug("local", "local port lid %u state %s", q->pi.lid,
			  ibw_port_state_str(q->pi.state));
	if (q->have_portinfo && d->resp)
		ibw_responder_set_lid(d->resp, q->pi.lid);
	if (q->have_portinfo && d->mon) {
		ibw_monitor_set_local_lid(d->mon, q->pi.lid);
		ibw_monitor_set_sm_lid(d->mon, q->pi.sm_lid);
	}
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
		say_err("cannot ping lid %u: %s\n", lid, strerror(-rc));
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
		say_err("cannot trace to lid %u: %s\n", lid, strerror(-rc));
		d->ping_status = 1;
		ibw_loop_stop(d->loop);
	}
}

static void on_target_lid(const struct ibw_sa_lid *r, void *arg)
{
	struct daemon *d = arg;

	if (r->result != IBW_MAD_OK || !r->lid) {
		say_err("%s: the SA does not know it (%s)\n",
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
		say_err("--ping %s: %s\n", t, strerror(-rc));
		d->ping_status = 1;
		ibw_loop_stop(d->loop);
	}
}

/*
 * The kernel's limits come from ib_core's recv_queue_size: read what the
 * running kernel uses (the module parameter), else assume its default,
 * and say when --max-inflight is cut to half of it (docs/operations.md).
 */
static void kernel_limits(struct ibw_engine_config *c)
{
	unsigned q = IBW_KERNEL_RECVQ_DEFAULT;
	int rc = ibw_kernel_recvq_read(IBW_KERNEL_RECVQ_PATH, &q);

	if (rc < 0) {
		q = IBW_KERNEL_RECVQ_DEFAULT;
		/* no ib_core module at all (the simulator): debug */
		ibw_log(rc == -ENOENT ? IBW_LOG_DEBUG : IBW_LOG_INFO, "main",
			"cannot read %s (%s): taking ib_core's default "
			"recv_queue_size, %u",
			IBW_KERNEL_RECVQ_PATH, strerror(-rc), q);
	}
	c->recv_queue_size = q;
	if (c->max_inflight > q / 2)
		log_warn("main",
			 "max-inflight %u is more than half of ib_core's "
			 "recv_queue_size (%u): %u are sent at once",
			 c->max_inflight, q, q / 2 ? q / 2 : 1);
}

/* The device went away under us (HCA reset, driver reload): the engine
 * has stopped touching it; the monitor keeps the last fabric, stale, and
 * looks again with a backoff. */
static void on_device_lost(struct ibw_engine *e, int err, void *arg)
{
	struct daemon *d = arg;

	if (!d->reopens) {
		log_err("main", "%s port %d: the umad device failed (%s)",
			d->lp.ca_name, d->lp.portnum, strerror(-err));
		ibw_loop_stop(d->loop);
		return;
	}
	log_err("main",
		"%s port %d: the umad device failed (%s): the HCA was reset "
		"or its driver reloaded. %s, and opening it again with a "
		"backoff",
		d->lp.ca_name, d->lp.portnum, strerror(-err),
		d->mon ? "Serving the last fabric, marked stale"
		       : "Answering nothing meanwhile");
	if (d->mon)
		ibw_monitor_device_lost(d->mon);
}

/* The engine's reopen: the same CA and port, every agent registered
 * again on the new file (SMI, SA, PerfMgt, the echo class). */
/* A failed reopen is a warning, once for each new reason: the engine
 * tries again with its backoff, up to the discovery interval. */
static void reopen_failed(struct daemon *d, const char *err)
{
	if (strcmp(err, d->reopen_err)) {
		log_warn("main",
			 "cannot open the device again: %s; trying again "
			 "(further failures for this reason at debug level)",
			 err);
		snprintf(d->reopen_err, sizeof(d->reopen_err), "%s", err);
	} else {
		log_debug("main", "reopen: %s", err);
	}
}

/*
 * The device came back (an HCA reset, a driver reload): the port is
 * found again by its GUID, which it keeps, not by the CA name and port
 * number, which the kernel may hand out anew (mlx5_0 can come back as
 * mlx5_2, and another HCA may take the old name).
 */
static int reopen_device(struct ibw_transport **out, void *arg)
{
	struct daemon *d = arg;
	struct ibw_local_port lp;
	char err[256], ca[IBW_CA_NAME_LEN];
	int rc, port = d->lp.portnum;

	snprintf(ca, sizeof(ca), "%s", d->lp.ca_name);
	if (d->lp.port_guid) {
		rc = ibw_localdev_find(d->lp.port_guid, ca, sizeof(ca), &port);
		if (rc < 0) {
			snprintf(err, sizeof(err),
				 "no local port has GUID 0x%016" PRIx64
				 " (yet)",
				 d->lp.port_guid);
			reopen_failed(d, err);
			return rc;
		}
		if (strcmp(ca, d->lp.ca_name) || port != d->lp.portnum)
			log_info("main",
				 "port GUID 0x%016" PRIx64 " is back as %s "
				 "port %d (was %s port %d)",
				 d->lp.port_guid, ca, port, d->lp.ca_name,
				 d->lp.portnum);
	}
	rc = ibw_umad_open2(ca, port, d->resp != NULL, out, &lp, err,
			    sizeof(err));
	if (rc < 0) {
		reopen_failed(d, err);
		return rc;
	}
	if (d->lp.port_guid && lp.port_guid != d->lp.port_guid) {
		/* another port between our look and the open */
		snprintf(err, sizeof(err),
			 "%s port %d has GUID 0x%016" PRIx64 " now, not ours",
			 ca, port, lp.port_guid);
		reopen_failed(d, err);
		ibw_transport_close(*out);
		*out = NULL;
		return -ENODEV;
	}
	d->reopen_err[0] = '\0';
	d->lp = lp;
	return 0;
}

/* --port-guid: the CA and port that have it. 0, or -1 with @err. */
static int choose_port(struct opts *o, char *ca, size_t calen, char *err,
		       size_t errlen)
{
	int port, rc;

	if (!o->port_guid)
		return 0;
	rc = ibw_localdev_find(o->port_guid, ca, calen, &port);
	if (rc < 0) {
		snprintf(err, errlen,
			 "--port-guid 0x%016" PRIx64 ": no local port has "
			 "it (ibstat lists them)",
			 o->port_guid);
		return -1;
	}
	if ((o->ca && strcmp(o->ca, ca)) || (o->port && o->port != port)) {
		snprintf(err, errlen,
			 "--port-guid 0x%016" PRIx64 " is %s port %d, not "
			 "--ca %s --port %d",
			 o->port_guid, ca, port, o->ca ? o->ca : ca,
			 o->port ? o->port : port);
		return -1;
	}
	o->ca = ca;
	o->port = port;
	return 0;
}

/*
 * --user: after a reset the device node comes back with the mode udev
 * gives it, and the daemon, then that user, must open it again. Refuse
 * at start when that user could not, rather than lose the fabric at the
 * first reset.
 */
static int check_user_reopen(const struct daemon *d, char *err, size_t len)
{
	char why[160];
	int rc;

	if (!d->o.user || d->o.once || d->o.ping || d->o.trace)
		return 0;
	rc = ibw_localdev_user_can_open(d->lp.ca_name, d->lp.portnum, d->o.user,
					why, sizeof(why));
	if (rc == 0) {
		snprintf(err, len,
			 "user %s: %s, so after an HCA reset ibwatchd could "
			 "not open its device again; give the user access "
			 "(the udev rule and group of docs/operations.md) or "
			 "run without --user",
			 d->o.user, why);
		return -1;
	}
	if (rc < 0)
		log_info("main",
			 "user %s: cannot tell whether it may reopen the "
			 "device after a reset: %s",
			 d->o.user, why);
	return 0;
}

static void on_device_back(struct ibw_engine *e, void *arg)
{
	struct daemon *d = arg;

	log_info("main",
		 "%s port %d: the umad device is open again (lid %u, SM lid "
		 "%u); rediscovering",
		 d->lp.ca_name, d->lp.portnum, d->lp.lid, d->lp.sm_lid);
	if (d->resp) {
		if (d->lp.echo_refused)
			log_warn("main",
				 "not answering echo pings any more: another "
				 "agent took the echo class while the device "
				 "was away");
		ibw_responder_set_lid(d->resp, d->lp.lid);
	}
	if (d->mon)
		ibw_monitor_device_back(d->mon, d->lp.lid);
	/* the port's own view (LID, SM) at once, not in 10 s */
	if (d->refresh)
		ibw_timer_arm(d->refresh, 0);
}

/* A device that went away (HCA reset, driver reload) is opened again in
 * place: 1 s, doubling up to @max_us (the discovery interval). */
static void arm_reopen(struct daemon *d, uint64_t max_us)
{
	ibw_engine_set_reopen(d->e, reopen_device, on_device_back, d, 1000000u,
			      max_us);
	d->reopens = 1;
}

/* --once: a fabric we could not see past our own port is no answer. */
static int once_status(struct daemon *d)
{
	struct ibw_snapshot *snap = ibw_monitor_snapshot(d->mon);
	int status = 0;

	if (ibw_engine_lost(d->e)) {
		say_err("the umad device failed: %s\n",
			strerror(-ibw_engine_lost(d->e)));
		status = 1;
	} else if (snap && snap->fabric && snap->sum.nodes <= 1 &&
		   d->lq.have_portinfo && d->lq.pi.state == IBW_PORT_ACTIVE &&
		   (snap->discovery.timeouts || snap->discovery.errors)) {
		say_err("the local port is active but nothing "
			"beyond it answered (%" PRIu64 " timeouts, %" PRIu64
			" errors)\n",
			snap->discovery.timeouts, snap->discovery.errors);
		status = 1;
	}
	if (snap)
		ibw_snapshot_unref(snap);
	return status;
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

/* One option changed in the file @arg: applied by reload(), or it
 * needs a restart. */
static void on_changed(const char *name, enum ibw_opt_when when,
		       const void *arg)
{
	const char *file = arg;

	if (when == IBW_OPT_SIGHUP)
		log_info("main", "SIGHUP: %s changed in %s: applied", name,
			 file);
	else
		log_warn("main", "SIGHUP: %s changed in %s: needs a restart",
			 name, file);
}

/*
 * SIGHUP: read the config file again. A broken file changes nothing (each
 * error logged); a good one applies the options the table marks
 * IBW_OPT_SIGHUP (sweep and trace intervals, log level, link health
 * thresholds, the jobs options), re-reads the node-name map's and the
 * jobs host map's contents, and names each other changed option as
 * needing a restart. Counters, ping history and the SNMP registration
 * stay as they are.
 */
static void reload(struct daemon *d)
{
	static struct opts n; /* large: not on the stack */
	char errs[4096], err[256], *line, *save = NULL;
	const char *file = d->o.config ? d->o.config : "the command line";
	int jobs_were = d->o.mon.jobs_dir != NULL;
	int rc;

	rc = ibw_opts_load(d->argc, d->argv, &n, errs, sizeof(errs));
	if (rc < 0) {
		for (line = strtok_r(errs, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			log_err("main", "SIGHUP: %s", line);
		log_err("main",
			"SIGHUP: %s not applied: the running "
			"configuration stays",
			file);
		ibw_opts_free(&n);
		return;
	}
	ibw_log_set_level(n.log_level);
	if (d->mon) {
		ibw_monitor_set_intervals(d->mon, n.mon.discovery_interval_us,
					  n.mon.counter_interval_us,
					  n.mon.trace_interval_us);
		/* the reopen backoff's ceiling follows (from its next try) */
		if (d->reopens)
			arm_reopen(d, n.mon.discovery_interval_us);
		if (ibw_monitor_reload_names(d->mon, err, sizeof(err)) < 0)
			log_warn("main",
				 "SIGHUP: node-name map not reloaded: %s", err);
		ibw_monitor_set_link_thresholds(d->mon, &n.mon.link_thresholds);
	}
	ibw_opts_diff(&d->o, &n, on_changed, file);
	ibw_opts_adopt(&d->o, &n);
	/* after the adopt: the job source keeps d->o's strings. Made anew
	 * even when nothing changed, to read the host map again. */
	if (d->mon && (d->o.mon.jobs_dir || jobs_were) &&
	    ibw_monitor_set_jobs(d->mon, d->o.mon.jobs_dir,
				 d->o.mon.jobs_check_us, d->o.mon.jobs_squeue,
				 d->o.mon.jobs_host_map, err, sizeof(err)) < 0)
		log_warn("main",
			 "SIGHUP: jobs: %s; the job view stays as it was", err);
	log_info("main",
		 "SIGHUP: %s applied: discovery every %llu s, counters every "
		 "%llu s",
		 file,
		 (unsigned long long)n.mon.discovery_interval_us / 1000000u,
		 (unsigned long long)n.mon.counter_interval_us / 1000000u);
	/* The running daemon keeps pointing into its own option strings;
	 * the new ones are only compared and dropped. */
	ibw_opts_free(&n);
}

static void on_signal(struct ibw_loop *loop, int fd, unsigned ev, void *arg)
{
	struct daemon *d = arg;
	struct signalfd_siginfo si;

	if (read(fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return;
	if (si.ssi_signo == SIGHUP) {
		reload(d);
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

/* --check-config: everything that can be checked without the fabric. */
static int check_config(const struct opts *o)
{
	struct ibw_namemap *nm;
	char err[512];
	int bad = 0;

	if (o->mon.node_name_map) {
		nm = ibw_namemap_load(o->mon.node_name_map, err, sizeof(err));
		if (!nm) {
			say_err("node-name-map: %s\n", err);
			bad = 1;
		}
		ibw_namemap_free(nm);
	}
	if (ibw_http_check_opts(&o->http, err, sizeof(err)) < 0) {
		say_err("%s\n", err);
		bad = 1;
	}
	if (o->user && !getpwnam(o->user)) {
		say_err("user: no user '%s'\n", o->user);
		bad = 1;
	}
	if (o->mkey_file) {
		uint64_t key;

		if (ibw_opts_read_mkey(o->mkey_file, &key, err, sizeof(err)) <
		    0) {
			fprintf(stderr, "ibwatchd: %s\n", err);
			bad = 1;
		}
		explicit_bzero(&key, sizeof(key));
	}
	if (bad)
		return 1;
	printf("%s: configuration OK\n",
	       o->config ? o->config : "no config file, command line");
	return 0;
}

/* Become @user for good, once the port is open and HTTP bound. */
static int drop_privileges(const char *user, char *err, size_t len)
{
	struct passwd *pw = getpwnam(user);

	if (!pw) {
		snprintf(err, len, "user: no user '%s'", user);
		return -1;
	}
	if (geteuid() == pw->pw_uid)
		return 0;
	if (geteuid() != 0) {
		snprintf(err, len, "user %s: only root can change user", user);
		return -1;
	}
	if (initgroups(pw->pw_name, pw->pw_gid) < 0 || setgid(pw->pw_gid) < 0 ||
	    setuid(pw->pw_uid) < 0) {
		snprintf(err, len, "cannot become %s: %s", user,
			 strerror(errno));
		return -1;
	}
	if (setuid(0) == 0) {
		snprintf(err, len,
			 "could become root again after dropping "
			 "to %s",
			 user);
		return -1;
	}
	log_info("main", "running as %s (uid %u, gid %u)", user,
		 (unsigned)pw->pw_uid, (unsigned)pw->pw_gid);
	return 0;
}

int main(int argc, char **argv)
{
	static char errs[8192];
	static char port_ca[IBW_CA_NAME_LEN]; /* --port-guid's CA */
	struct daemon d;
	sigset_t set;
	char err[512];
	uint64_t mkey = 0;
	int rc, status = 0;

	memset(&d, 0, sizeof(d));
	d.sfd = -1;
	d.lockfd = -1;
	/* Block the stop signals before any thread exists (umad2sim starts
	 * one when the port opens): they must reach the signalfd, not kill
	 * the process from another thread. */
	stop_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/* A master agent that goes away must not kill us on the next write
	 * to its socket. */
	signal(SIGPIPE, SIG_IGN);
#ifdef __GLIBC__
	/* Large answers (the port list of a big fabric is megabytes) get
	 * their own mappings, returned when freed. glibc would otherwise
	 * raise this threshold after the first such free and serve the next
	 * ones from the heap, which keeps the peak of a burst of requests
	 * resident for good. */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
	d.argc = argc;
	d.argv = argv;
	/* Before the first line: an option error under systemd is one too. */
	ibw_log_detect_journal();
	if (ibw_opts_load(argc, argv, &d.o, errs, sizeof(errs)) < 0) {
		ibw_log_stderr_text(IBW_LOG_ERR, errs);
		ibw_opts_free(&d.o);
		return 2;
	}
	if (d.o.help || d.o.dump_options || d.o.version || d.o.check_config) {
		if (d.o.help)
			ibw_opts_usage(stdout);
		else if (d.o.dump_options)
			ibw_opts_dump(stdout);
		else if (d.o.version)
			printf("ibwatchd %s\n", IBW_VERSION);
		else
			status = check_config(&d.o);
		ibw_opts_free(&d.o);
		return status;
	}
	ibw_log_set_level(d.o.log_level);
	if (d.o.log_syslog)
		ibw_log_to_syslog("ibwatchd");
	if (d.o.config)
		log_info("main", "configuration from %s", d.o.config);
	/* Read before the fabric is touched, and before privileges go. */
	if (d.o.mkey_file &&
	    ibw_opts_read_mkey(d.o.mkey_file, &mkey, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibwatchd: %s\n", err);
		status = 1;
		goto out;
	}

	if (d.o.textfile) {
		d.lockfd = lock_textfile(d.o.textfile, err, sizeof(err));
		if (d.lockfd < 0) {
			say_err("%s\n", err);
			status = d.lockfd == -EWOULDBLOCK ? TEXTFILE_LOCKED : 1;
			goto out;
		}
	}

	if (choose_port(&d.o, port_ca, sizeof(port_ca), err, sizeof(err)) < 0) {
		say_err("%s\n", err);
		status = 1;
		goto out;
	}
	rc = ibw_umad_open2(d.o.ca, d.o.port, d.o.responder, &d.t, &d.lp, err,
			    sizeof(err));
	if (rc < 0) {
		say_err("%s\n", err);
		status = 1;
		goto out;
	}
	d.loop = ibw_loop_new();
	if (!d.loop || setup_signals(&d) < 0) {
		say_err("cannot set up the event loop\n");
		status = 1;
		goto out;
	}
	kernel_limits(&d.o.ecfg);
	d.e = ibw_engine_new(d.loop, d.t, &d.o.ecfg);
	if (!d.e) {
		say_err("cannot start the MAD engine\n");
		status = 1;
		goto out;
	}
	ibw_engine_set_lost_handler(d.e, on_device_lost, &d);
	/* until the local port query says (sysfs may lag) */
	ibw_engine_set_sa_sl(d.e, d.lp.sm_sl);
	if (mkey) {
		/* The key itself is never logged, served or exported. */
		ibw_engine_set_mkey(d.e, mkey);
		explicit_bzero(&mkey, sizeof(mkey));
		log_info("main", "SMPs carry the M_Key from %s", d.o.mkey_file);
	}
	if (!d.o.once && !d.o.ping && !d.o.trace)
		arm_reopen(&d, d.o.mon.discovery_interval_us);
	log_info("main", "attached to %s port %d (port GUID 0x%016llx)",
		 d.lp.ca_name, d.lp.portnum,
		 (unsigned long long)d.lp.port_guid);
	if (d.lp.vendor_a_refused && d.o.mon.hw.interval_us) {
		log_warn(
			"main",
			"no hardware health: the kernel refused a vendor class "
			"0x0A agent on %s port %d",
			d.lp.ca_name, d.lp.portnum);
		d.o.mon.hw.interval_us = 0;
	}
	if (d.o.responder && d.lp.echo_refused) {
		log_warn("main",
			 "not answering echo pings: another agent on %s port "
			 "%d (ibping -S, or another ibwatchd --responder) "
			 "already serves them, and the kernel allows one; "
			 "pinging works as usual",
			 d.lp.ca_name, d.lp.portnum);
	} else if (d.o.responder) {
		d.resp = ibw_responder_new(d.e, d.lp.lid, d.lp.port_guid, 0);
		if (!d.resp) {
			say_err("cannot start the responder\n");
			status = 1;
			goto out;
		}
		log_info("main", "answering echo pings");
	}
	if (d.o.ping) {
		d.pinger = ibw_pinger_new(d.e, NULL, &d.o.mon.ping);
		if (!d.pinger) {
			status = 1;
			goto out;
		}
	} else if (d.o.trace) {
		d.tracer = ibw_tracer_new(d.e, (unsigned)d.lp.portnum);
		if (!d.tracer) {
			status = 1;
			goto out;
		}
	} else if (!d.o.no_probes) {
		d.o.mon.local_port = (unsigned)d.lp.portnum;
		d.mon = ibw_monitor_new(d.e, &d.o.mon, err, sizeof(err));
		if (!d.mon) {
			say_err("%s\n", err);
			status = 1;
			goto out;
		}
	}

	if (d.mon && !d.o.once && !d.o.no_http) {
		d.o.http.prom.rcv_err = d.o.mon.counters.details;
		d.http = ibw_http_new(d.loop, d.mon, d.e, &d.o.http, err,
				      sizeof(err));
		if (!d.http) {
			say_err("%s\n", err);
			status = 1;
			goto out;
		}
	}

	if (d.mon && !d.o.once && !d.o.no_snmp) {
		d.o.snmp.state_file = d.o.mon.state_file;
		d.snmp = ibw_snmp_new(d.loop, d.mon, &d.lp, &d.lq, &d.o.snmp,
				      err, sizeof(err));
		if (!d.snmp) {
			say_err("%s\n", err);
			status = 1;
			goto out;
		}
	}

	if (check_user_reopen(&d, err, sizeof(err)) < 0 ||
	    (d.o.user && drop_privileges(d.o.user, err, sizeof(err)) < 0)) {
		say_err("%s\n", err);
		status = 1;
		goto out;
	}

	d.refresh = ibw_timer_new(d.loop, on_refresh, &d);
	ibw_timer_arm(d.refresh, 0);
	rc = 0;
	if (d.mon && d.o.once)
		rc = ibw_monitor_once(d.mon, on_once, &d);
	else if (d.mon)
		rc = ibw_monitor_start(d.mon);
	if (rc < 0) {
		say_err("cannot start the probes: %s\n", strerror(-rc));
		status = 1;
		goto out;
	}
	/* Serving: HTTP bound, the AgentX session under way, the probes
	 * started (Type=notify orders the units after us from here). */
	notify("READY=1");
	rc = ibw_loop_run(d.loop);
	notify("STOPPING=1");
	if (rc < 0) {
		log_err("main", "event loop failed: %s", strerror(-rc));
		status = 1;
	}

	if (d.o.once) {
		uint64_t t0 = ibw_now_us(), c0 = thread_cpu_us();

		if (d.o.textfile && d.mon) {
			rc = write_textfile(&d, d.o.textfile);
			if (rc < 0) {
				say_err("cannot write %s: %s\n", d.o.textfile,
					strerror(-rc));
				status = 1;
			}
		} else {
			rc = (d.o.once & 2) && d.mon ? links_json(&d, stdout)
			     : d.o.full || !d.mon    ? once_json(&d, stdout)
						     : once_summary(&d, stdout);
			if (rc < 0 || putchar('\n') == EOF || fflush(stdout)) {
				log_err("main",
					"--once: cannot write the document: %s",
					strerror(rc < 0 ? -rc : errno));
				status = 1;
			}
		}
		log_debug("main",
			  "--once: document written in %.3f s (%.3f s CPU)",
			  (double)(ibw_now_us() - t0) / 1e6,
			  (double)(thread_cpu_us() - c0) / 1e6);
		if (!d.lq_done || d.lq.first_error != IBW_MAD_OK) {
			say_err("the local port did not answer: %s\n",
				d.lq_done ? ibw_mad_result_str(d.lq.first_error)
					  : "interrupted");
			status = 1;
		} else if (d.mon && once_status(&d)) {
			status = 1;
		}
	}
out:
	explicit_bzero(&mkey, sizeof(mkey));
	/* Start-up failures end here too: everything is freed, so that
	 * a refused start (a port in use, a bad option) leaks nothing. */
	ibw_timer_free(d.refresh);
	if ((d.o.ping || d.o.trace) && !status)
		status = d.ping_status;
	ibw_http_free(d.http);
	ibw_snmp_free(d.snmp);
	ibw_responder_free(d.resp);
	/* The engine first: it cancels what the probes have in flight.
	 * It may have reopened the device: close the one it holds. */
	if (d.e)
		d.t = ibw_engine_transport(d.e);
	ibw_engine_free(d.e);
	ibw_monitor_free(d.mon);
	ibw_pinger_free(d.pinger);
	ibw_tracer_free(d.tracer);
	ibw_transport_close(d.t);
	if (d.sfd >= 0)
		close(d.sfd);
	ibw_loop_free(d.loop);
	/* After the monitor saved the state file: the lock covers it. */
	if (d.lockfd >= 0)
		close(d.lockfd);
	ibw_opts_free(&d.o);
	return status;
}
