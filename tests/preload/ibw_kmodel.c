// SPDX-License-Identifier: BSD-2-Clause
/*
 * Test-only preload: the Linux kernel's MAD layer on top of umad2sim,
 * plus a latency and dead-port model. Loaded first, so that libibumad's
 * open/close/read/write/poll/ioctl reach it before umad2sim's:
 *
 *   LD_PRELOAD=libibw_kmodel.so:libumad2sim.so:libibw_simguard.so
 *
 * umad2sim hands every MAD to the reader at once: answers to requests
 * sent with timeout 0, answers nobody waits for any more, and MADs
 * ibsim dropped (the request comes back with status 110). The kernel
 * (drivers/infiniband/core/mad.c, user_mad.c) hands a response to an
 * agent only while a request of that agent with the same TID waits
 * (ib_find_send_mad), retries a request itself, and reports a request
 * that got no answer only when its last try timed out, with the MAD
 * header alone. Code that works on the simulator can thus fail on
 * hardware; this library makes the simulator that strict.
 *
 * It can also play SMAs whose port the SM protected with an M_Key
 * (ibsim checks none): an SMP to a node listed in IBW_KM_MKEY_FILE that
 * carries another key gets no answer, as the IBA has a protected port
 * drop it.
 *
 * docs/testing.md, "The kernel and fabric model", lists every variable
 * and default. Only fds opened from /dev/infiniband/umad* are modelled;
 * umad2sim's own socket reads and writes pass straight through (they
 * reach these wrappers too, as umad2sim calls write() by name).
 *
 * Threads: one mutex guards everything; it is never held across a
 * blocking wait. umad2sim's read() returns -EWOULDBLOCK when empty and
 * its poll() understands one fake fd per call, so poll() here drains
 * umad2sim into per-fd queues and sleeps in slices.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Both headers define struct ib_user_mad; keep umad.h's (libibumad's
 * view, ib_user_mad_t) and take only the registration request and the
 * ioctl numbers from the kernel's. */
#define ib_user_mad ibw_kernel_user_mad
#include <rdma/ib_user_mad.h>
#undef ib_user_mad
#include <infiniband/umad.h>

#include "km_clear.h"
#include "km_desc.h"
#include "km_silent.h"
#include "km_fec.h"
#include "km_pc.h"

/* umad_size() is sizeof(struct ib_user_mad); taking the size here keeps
 * libibumad out of the preload. */
#define HDR ((size_t)sizeof(ib_user_mad_t))
#define MAD_MAX 256 /* umad2sim carries one 256-byte MAD */
#define MSG_CAP (HDR + MAD_MAX)
#define MAD_HDR 24 /* what a timeout report carries */
#define KM_ETIMEDOUT 110 /* ETIMEDOUT as the kernel writes it */

#define MAXFD 16 /* open umad fds per process */
#define FDLIM 4096 /* umad2sim's fake fds are 1024..2047 */
#define NAGENT 64 /* umad2sim hands out ids below 32 */
#define NTRY 8 /* ready times remembered per request */
#define LINGER_US 2000000 /* a timed-out request's answer is "late" */
#define DEAD_CHECK_US 20000 /* dead.<pid> looked for at most this often */
#define DEADLID_CHECK_US 100000 /* IBW_KM_DEAD_FILE likewise */
#define MKEY_CHECK_US 100000 /* IBW_KM_MKEY_FILE likewise */
#define CALID_CHECK_US 100000 /* the state dir's ca-lids likewise */
#define MKEY_MAX 64 /* protected nodes */
#define SLICE_US 20000 /* longest sleep without looking around */
#define MIXED_SLICE_MS 1 /* poll slice with other fds in the set */
#define INF UINT64_MAX

#define CLS_SMI 0x01
#define CLS_SA 0x03
#define CLS_PMA 0x04
#define CLS_DR 0x81
#define METHOD_RESP 0x80
#define METHOD_TRAP_REPRESS 0x07

enum { G_SMA, G_PMA, G_SA, G_VENDOR, NGROUP };
enum { RQ_BACKLOG = 1, RQ_WAIT, RQ_LATE };

struct msg {
	struct msg *next;
	size_t len;
	uint8_t buf[MSG_CAP];
};

struct kfd;

/* A request sent with a timeout, from write() until it is answered,
 * timed out (then lingering as RQ_LATE so a late answer is counted as
 * such) or its fd goes. */
struct req {
	struct req *hnext; /* hash chain */
	struct req *qnext; /* agent backlog, free list */
	struct kfd *kf;
	int hidx; /* timer heap slot, -1 if none */
	uint64_t when; /* timer: next thing to do */
	uint64_t try_end; /* this try's deadline */
	uint64_t final; /* the last try's deadline */
	struct msg *held; /* an answer kept until held_at */
	uint64_t held_at;
	uint64_t ready[NTRY]; /* modelled ready time of each unanswered try */
	unsigned rhead, rcount;
	uint32_t timeout_ms, tries_left, agent, tid;
	uint8_t cls, state;
	size_t len;
	uint8_t buf[MSG_CAP]; /* the request as written (resends, reports) */
};

struct agent {
	int used;
	uint8_t cls, ver, oui[3], mask[16];
	unsigned outstanding, backlog;
	struct req *bl_head, *bl_tail;
};

struct kfd {
	int fd, used, dead;
	struct msg *qhead, *qtail; /* deliverable now */
	struct msg *shead, *stail; /* answered by the model at write() */
	struct agent ag[NAGENT];
};

struct dest {
	uint64_t key;
	uint64_t busy[NGROUP];
	uint64_t node_guid; /* who answered NodeInfo here; 0: not known */
};

typedef int (*open_fn)(const char *, int, ...);
typedef int (*close_fn)(int);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*ioctl_fn)(int, unsigned long, ...);

static open_fn n_open;
static close_fn n_close;
static read_fn n_read;
static write_fn n_write;
static poll_fn n_poll;
static ioctl_fn n_ioctl;

/* A CA port the fabric reaches: its LID and its node's name (ibsim's). */
struct calid {
	uint16_t lid;
	char host[64];
};

static struct {
	pthread_mutex_t mu;
	int on, rule, latency;
	int real_portinfo; /* PortInfo's supported sets as hardware's */
	int real_psc; /* PMAs answer PortSamplesControl, as hardware's do */
	int real_unsupported; /* hosts answer unserved classes 0x000C */
	unsigned fc_smp, fc_sa;
	uint64_t wire_us, hop_us, svc_us[NGROUP];
	char state_dir[512], dead_path[600], reg_path[700], log_path[512];
	uint8_t dead_cls[32]; /* classes a dead LID swallows */
	uint8_t dead_env[8192], dead_file[8192];
	int any_dead_env;
	char dead_file_path[512];
	uint64_t dead_file_checked;
	struct timespec dead_file_mtime;
	off_t dead_file_size;
	int dead_file_present;

	struct kfd fds[MAXFD];
	uint64_t dead_checked;
	int dead_now;
	int opened; /* a umad fd was ever opened: log at exit */

	struct req **ht;
	uint32_t htmask, nreq;
	struct req **heap;
	uint32_t nheap, capheap;
	struct req *free_req;
	struct msg *free_msg;
	struct dest *dt;
	uint32_t dtmask, ndest;

	uint64_t sent, answered, unmatched, late, timeouts, resent;
	uint64_t psc_answered; /* PortSamplesControl Gets ibsim dropped */
	uint64_t fec_answered; /* FEC ports' Gets ibsim dropped (km_fec.c) */
	uint64_t backlogged, backlog_hwm, refused, dr_hops, bounced, dead_lid;
	uint64_t mkey_dropped;
	uint64_t unsupported; /* answered 0x000C: no agent at that CA */
	int logged;

	/* CA ports a request of a class nobody there registered gets
	 * "method not supported" from (the state dir's ca-lids, which the
	 * test bed writes): by LID, with their node's name. */
	char calid_path[600];
	uint64_t calid_checked;
	struct timespec calid_mtime;
	off_t calid_size;
	struct calid *calid;
	size_t ncalid;

	/* protected SMAs: node GUID and the M_Key they demand */
	char mkey_path[512];
	uint64_t mkey_checked;
	struct timespec mkey_mtime;
	off_t mkey_size;
	unsigned nprot;
	uint64_t prot_guid[MKEY_MAX], prot_key[MKEY_MAX];
} km = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* Lock-free: is this fd one of ours? umad2sim's own socket writes reach
 * write() here while the mutex is held, so they must not take it. */
static unsigned char isfd_tab[FDLIM];

static int isfd(int fd)
{
	return fd >= 0 && fd < FDLIM &&
	       __atomic_load_n(&isfd_tab[fd], __ATOMIC_ACQUIRE);
}

static void resolve(void)
{
	if (n_ioctl)
		return;
	n_open = (open_fn)dlsym(RTLD_NEXT, "open");
	n_close = (close_fn)dlsym(RTLD_NEXT, "close");
	n_read = (read_fn)dlsym(RTLD_NEXT, "read");
	n_write = (write_fn)dlsym(RTLD_NEXT, "write");
	n_poll = (poll_fn)dlsym(RTLD_NEXT, "poll");
	n_ioctl = (ioctl_fn)dlsym(RTLD_NEXT, "ioctl");
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000;
}

/* Cancellation is off while the mutex is held: opensm cancels its
 * receiver thread, and a resend inside poll() calls write(), a
 * cancellation point. */
static int lock(void)
{
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_mutex_lock(&km.mu);
	return old;
}

static void unlock(int old)
{
	pthread_mutex_unlock(&km.mu);
	pthread_setcancelstate(old, NULL);
}

/* ---- configuration ---- */

static uint64_t env_u64(const char *name, uint64_t def, int *set)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end) {
		fprintf(stderr, "ibw_kmodel: ignoring %s=%s\n", name, s);
		return def;
	}
	if (set)
		*set = 1;
	return v;
}

static void bit_set(uint8_t *map, unsigned i)
{
	map[i / 8] |= (uint8_t)(1u << (i % 8));
}

static int bit_get(const uint8_t *map, unsigned i)
{
	return map[i / 8] >> (i % 8) & 1;
}

/* "5,7-9 0x10": LIDs and ranges, separated by commas or white space. */
static int parse_lids(const char *s, uint8_t *map)
{
	int n = 0;

	while (*s) {
		char *end;
		unsigned long a, b;

		if (strchr(", \t\r\n", *s)) {
			s++;
			continue;
		}
		a = strtoul(s, &end, 0);
		if (end == s)
			return -1;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtoul(s + 1, &end, 0);
			if (end == s + 1)
				return -1;
			s = end;
		}
		for (; a <= b && a < 65536; a++, n++)
			bit_set(map, (unsigned)a);
	}
	return n;
}

static void parse_dead_classes(const char *s)
{
	char buf[128], *tok, *save;
	unsigned c;

	memset(km.dead_cls, 0, sizeof(km.dead_cls));
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ", ", &save); tok;
	     tok = strtok_r(NULL, ", ", &save)) {
		if (!strcmp(tok, "sma"))
			bit_set(km.dead_cls, CLS_SMI);
		else if (!strcmp(tok, "pma"))
			bit_set(km.dead_cls, CLS_PMA);
		else if (!strcmp(tok, "sa"))
			bit_set(km.dead_cls, CLS_SA);
		else if (!strcmp(tok, "vendor")) {
			for (c = 0x09; c <= 0x0f; c++)
				bit_set(km.dead_cls, c);
			for (c = 0x30; c <= 0x4f; c++)
				bit_set(km.dead_cls, c);
		} else
			fprintf(stderr,
				"ibw_kmodel: unknown class %s in "
				"IBW_KM_DEAD_CLASSES\n",
				tok);
	}
}

/* A node's name as a file name: SIM_HOST may be a NodeDescription
 * ("node0001 HCA-1"). */
static void host_name(char *out, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i + 1 < n && name[i]; i++)
		out[i] = name[i];
	out[i] = '\0';
	for (i = 0; out[i]; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.",
			    out[i]))
			out[i] = '_';
}

static void config(void)
{
	const char *s;
	int lat = 0;

	s = getenv("IBW_KM");
	km.on = !(s && !strcmp(s, "0"));
	km.rule = (int)env_u64("IBW_KM_RULE", 1, NULL) != 0;
	km.real_portinfo = (int)env_u64("IBW_KM_PORTINFO", 1, NULL) != 0;
	km.real_psc = (int)env_u64("IBW_KM_PSC", 1, NULL) != 0;
	km.real_unsupported = (int)env_u64("IBW_KM_UNSUPPORTED", 1, NULL) != 0;
	km.fc_smp = (unsigned)env_u64("IBW_KM_FC_SMP", 128, NULL);
	km.fc_sa = (unsigned)env_u64("IBW_KM_FC_SA", 16, NULL);

	/* Any latency variable turns the model on with the documented
	 * defaults for the others; IBW_KM_LATENCY=0 keeps it off. */
	km.wire_us = env_u64("IBW_KM_WIRE_US", 2, &lat);
	km.hop_us = env_u64("IBW_KM_HOP_US", 10, &lat);
	km.svc_us[G_SMA] = env_u64("IBW_KM_SVC_SMA_US", 50, &lat);
	km.svc_us[G_PMA] = env_u64("IBW_KM_SVC_PMA_US", 100, &lat);
	km.svc_us[G_SA] = env_u64("IBW_KM_SVC_SA_US", 100, &lat);
	km.svc_us[G_VENDOR] = env_u64("IBW_KM_SVC_VENDOR_US", 20, &lat);
	s = getenv("IBW_KM_LATENCY");
	if (s && *s)
		km.latency = strcmp(s, "0") != 0;
	else
		km.latency = lat;

	s = getenv("IBW_KM_DEAD_LIDS");
	if (s && *s) {
		if (parse_lids(s, km.dead_env) < 0)
			fprintf(stderr, "ibw_kmodel: bad IBW_KM_DEAD_LIDS\n");
		km.any_dead_env = 1;
	}
	s = getenv("IBW_KM_DEAD_FILE");
	if (s && *s)
		snprintf(km.dead_file_path, sizeof(km.dead_file_path), "%s", s);
	s = getenv("IBW_KM_DEAD_CLASSES");
	parse_dead_classes(s && *s ? s : "pma,sma,vendor");
	kms_init(getenv("IBW_KM_SILENT"));
	s = getenv("IBW_KM_MKEY_FILE");
	if (s && *s)
		snprintf(km.mkey_path, sizeof(km.mkey_path), "%s", s);

	s = getenv("IBW_KM_STATE_DIR");
	if (s && *s) {
		char host[64];
		const char *h = getenv("SIM_HOST");

		snprintf(km.state_dir, sizeof(km.state_dir), "%s", s);
		snprintf(km.dead_path, sizeof(km.dead_path), "%s/dead.%d", s,
			 (int)getpid());
		host_name(host, sizeof(host), h && *h ? h : "default");
		snprintf(km.reg_path, sizeof(km.reg_path), "%s/agents.%s",
			 km.state_dir, host);
		snprintf(km.calid_path, sizeof(km.calid_path), "%s/ca-lids",
			 km.state_dir);
		kmf_init(km.state_dir);
		kmp_init(km.state_dir);
		kmc_init(km.state_dir);
		kmd_init(km.state_dir);
	}
	s = getenv("IBW_KM_LOG");
	if (s && *s)
		snprintf(km.log_path, sizeof(km.log_path), "%s", s);
}

static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static void init(void)
{
	resolve();
	pthread_once(&config_once, config);
}

/* ---- statistics line ---- */

static void write_log(void)
{
	char line[512];
	int fd, n;

	if (km.logged || !km.opened || !km.log_path[0])
		return;
	km.logged = 1;
	n = snprintf(
		line, sizeof(line),
		"pid=%d comm=%s sent=%llu answered=%llu "
		"unmatched_dropped=%llu late_dropped=%llu timeouts=%llu "
		"resent=%llu backlogged=%llu backlog_hwm=%llu "
		"refused_reg=%llu dr_hops=%llu bounced=%llu "
		"dead_lid=%llu mkey_dropped=%llu psc_answered=%llu "
		"unsupported=%llu fec_answered=%llu\n",
		(int)getpid(), program_invocation_short_name,
		(unsigned long long)km.sent, (unsigned long long)km.answered,
		(unsigned long long)km.unmatched, (unsigned long long)km.late,
		(unsigned long long)km.timeouts, (unsigned long long)km.resent,
		(unsigned long long)km.backlogged,
		(unsigned long long)km.backlog_hwm,
		(unsigned long long)km.refused, (unsigned long long)km.dr_hops,
		(unsigned long long)km.bounced, (unsigned long long)km.dead_lid,
		(unsigned long long)km.mkey_dropped,
		(unsigned long long)km.psc_answered,
		(unsigned long long)km.unsupported,
		(unsigned long long)km.fec_answered);
	fd = n_open(km.log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
		    0644);
	if (fd < 0)
		return;
	/* One write of a short line with O_APPEND: lines of processes
	 * ending together do not interleave. */
	if (n_write(fd, line, (size_t)n) < 0) {
		/* nothing to do about it at exit */
	}
	n_close(fd);
}

__attribute__((destructor)) static void at_exit(void)
{
	if (n_write)
		write_log();
}

/* SIGTERM ends a process without running destructors unless it has a
 * handler of its own; then this one writes the line first. A program
 * that installs its own handler later replaces it, and exits normally. */
static void on_term(int sig)
{
	write_log();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void hook_sigterm(void)
{
	struct sigaction sa;

	if (!km.log_path[0] || sigaction(SIGTERM, NULL, &sa) < 0 ||
	    sa.sa_handler != SIG_DFL)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
}

/* ---- pools: no malloc per MAD once warmed up ---- */

static struct msg *msg_get(void)
{
	struct msg *m = km.free_msg;
	int i;

	if (!m) {
		m = calloc(64, sizeof(*m));
		if (!m)
			return NULL;
		for (i = 1; i < 63; i++)
			m[i].next = &m[i + 1];
		m[63].next = NULL;
		km.free_msg = &m[1];
		return m;
	}
	km.free_msg = m->next;
	return m;
}

static void msg_put(struct msg *m)
{
	m->next = km.free_msg;
	km.free_msg = m;
}

static struct req *req_get(void)
{
	struct req *r = km.free_req;
	int i;

	if (!r) {
		r = calloc(64, sizeof(*r));
		if (!r)
			return NULL;
		for (i = 1; i < 63; i++)
			r[i].qnext = &r[i + 1];
		r[63].qnext = NULL;
		km.free_req = &r[1];
	} else {
		km.free_req = r->qnext;
	}
	r->hnext = r->qnext = NULL;
	r->held = NULL;
	r->hidx = -1;
	r->rhead = r->rcount = 0;
	r->state = 0;
	return r;
}

static void req_put(struct req *r)
{
	if (r->held)
		msg_put(r->held);
	r->held = NULL;
	r->state = 0;
	r->qnext = km.free_req;
	km.free_req = r;
}

/* ---- timer heap (min-heap on when, each request at most once) ---- */

static void heap_swap(uint32_t a, uint32_t b)
{
	struct req *t = km.heap[a];

	km.heap[a] = km.heap[b];
	km.heap[b] = t;
	km.heap[a]->hidx = (int)a;
	km.heap[b]->hidx = (int)b;
}

static void heap_up(uint32_t i)
{
	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (km.heap[p]->when <= km.heap[i]->when)
			break;
		heap_swap(i, p);
		i = p;
	}
}

static void heap_down(uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < km.nheap && km.heap[l]->when < km.heap[m]->when)
			m = l;
		if (r < km.nheap && km.heap[r]->when < km.heap[m]->when)
			m = r;
		if (m == i)
			break;
		heap_swap(i, m);
		i = m;
	}
}

static void heap_del(struct req *r)
{
	uint32_t i;

	if (r->hidx < 0)
		return;
	i = (uint32_t)r->hidx;
	r->hidx = -1;
	km.nheap--;
	if (i == km.nheap)
		return;
	km.heap[i] = km.heap[km.nheap];
	km.heap[i]->hidx = (int)i;
	heap_up(i);
	heap_down((uint32_t)km.heap[i]->hidx);
}

static int heap_set(struct req *r, uint64_t when)
{
	if (r->hidx >= 0) {
		uint32_t i = (uint32_t)r->hidx;

		r->when = when;
		heap_up(i);
		heap_down((uint32_t)r->hidx);
		return 0;
	}
	if (km.nheap == km.capheap) {
		uint32_t cap = km.capheap ? km.capheap * 2 : 256;
		struct req **h = realloc(km.heap, cap * sizeof(*h));

		if (!h)
			return -1;
		km.heap = h;
		km.capheap = cap;
	}
	r->when = when;
	r->hidx = (int)km.nheap;
	km.heap[km.nheap++] = r;
	heap_up((uint32_t)r->hidx);
	return 0;
}

/* ---- waiting requests by (class, low 32 bits of the TID) ---- */

static uint32_t hash_key(uint8_t cls, uint32_t tid)
{
	uint32_t h = tid * 2654435761u ^ cls * 40503u;

	return h ^ h >> 15;
}

static int ht_init(void)
{
	if (km.ht)
		return 0;
	km.htmask = 4095;
	km.ht = calloc(km.htmask + 1, sizeof(*km.ht));
	return km.ht ? 0 : -1;
}

static void ht_grow(void)
{
	uint32_t nmask = km.htmask * 2 + 1, i;
	struct req **nt = calloc(nmask + 1, sizeof(*nt));

	if (!nt)
		return;
	for (i = 0; i <= km.htmask; i++) {
		struct req *r = km.ht[i], *next;

		for (; r; r = next) {
			uint32_t b = hash_key(r->cls, r->tid) & nmask;

			next = r->hnext;
			r->hnext = nt[b];
			nt[b] = r;
		}
	}
	free(km.ht);
	km.ht = nt;
	km.htmask = nmask;
}

static void ht_add(struct req *r)
{
	uint32_t b;

	if (km.nreq > 2 * km.htmask)
		ht_grow();
	b = hash_key(r->cls, r->tid) & km.htmask;
	r->hnext = km.ht[b];
	km.ht[b] = r;
	km.nreq++;
}

static void ht_del(struct req *r)
{
	struct req **p = &km.ht[hash_key(r->cls, r->tid) & km.htmask];

	for (; *p; p = &(*p)->hnext)
		if (*p == r) {
			*p = r->hnext;
			km.nreq--;
			return;
		}
}

/* A waiting request first; else one that timed out lately. */
static struct req *ht_find(uint8_t cls, uint32_t tid, uint32_t agent)
{
	struct req *r = km.ht ? km.ht[hash_key(cls, tid) & km.htmask] : NULL;
	struct req *late = NULL;

	for (; r; r = r->hnext) {
		if (r->cls != cls || r->tid != tid || r->agent != agent)
			continue;
		if (r->state == RQ_WAIT)
			return r;
		if (!late)
			late = r;
	}
	return late;
}

/* ---- per-destination service queues (latency model) ---- */

static struct dest *dest_get(uint64_t key)
{
	uint32_t i;

	if (!km.dt || km.ndest * 2 > km.dtmask) {
		uint32_t nmask = km.dt ? km.dtmask * 2 + 1 : 1023, j;
		struct dest *nt = calloc(nmask + 1, sizeof(*nt));

		if (!nt)
			return NULL;
		for (j = 0; km.dt && j <= km.dtmask; j++) {
			uint32_t k;

			if (!km.dt[j].key)
				continue;
			k = (uint32_t)(km.dt[j].key * 0x9e3779b97f4a7c15ull >>
				       40) &
			    nmask;
			while (nt[k].key)
				k = (k + 1) & nmask;
			nt[k] = km.dt[j];
		}
		free(km.dt);
		km.dt = nt;
		km.dtmask = nmask;
	}
	i = (uint32_t)(key * 0x9e3779b97f4a7c15ull >> 40) & km.dtmask;
	while (km.dt[i].key && km.dt[i].key != key)
		i = (i + 1) & km.dtmask;
	if (!km.dt[i].key) {
		km.dt[i].key = key;
		km.ndest++;
	}
	return &km.dt[i];
}

static int group_of(uint8_t cls)
{
	switch (cls) {
	case CLS_SMI:
	case CLS_DR:
		return G_SMA;
	case CLS_PMA:
		return G_PMA;
	case CLS_SA:
		return G_SA;
	default:
		return G_VENDOR;
	}
}

static uint16_t req_dlid(const uint8_t *buf)
{
	const ib_user_mad_t *u = (const void *)buf;

	return ntohs(u->addr.lid);
}

/* A request's destination: a directed-route SMP's initial path, a
 * LID-routed MAD's DLID. */
static uint64_t req_key(const struct req *r)
{
	const uint8_t *mad = r->buf + HDR;

	if (r->cls == CLS_DR) {
		unsigned hops = mad[7], i;
		uint64_t h = 1469598103934665603ull;

		for (i = 0; i <= hops && 128 + i < MAD_MAX; i++) {
			h ^= i ? mad[128 + i] : hops;
			h *= 1099511628211ull;
		}
		return h | 1ull << 63;
	}
	return (uint64_t)req_dlid(r->buf) + 1;
}

/* When the answer to this send would be back: the request travels one
 * way, waits for the destination to finish the MADs of this class group
 * it got earlier, is served, and the answer travels back. */
static uint64_t model_ready(const struct req *r, uint64_t now)
{
	const uint8_t *mad = r->buf + HDR;
	uint64_t oneway, start;
	struct dest *d;
	int g = group_of(r->cls);

	if (r->cls == CLS_DR)
		oneway = km.hop_us * mad[7];
	else
		oneway = km.wire_us;
	d = dest_get(req_key(r));
	start = now + oneway;
	if (d) {
		if (d->busy[g] > start)
			start = d->busy[g];
		d->busy[g] = start + km.svc_us[g];
	}
	return start + km.svc_us[g] + oneway;
}

/* ---- dead destinations ---- */

static void dead_file_check(uint64_t now)
{
	struct stat st;
	FILE *f;
	char *buf = NULL;
	size_t cap = 0;

	if (!km.dead_file_path[0] ||
	    (km.dead_file_checked &&
	     now - km.dead_file_checked < DEADLID_CHECK_US))
		return;
	km.dead_file_checked = now;
	if (stat(km.dead_file_path, &st) < 0) {
		if (km.dead_file_present)
			memset(km.dead_file, 0, sizeof(km.dead_file));
		km.dead_file_present = 0;
		return;
	}
	if (km.dead_file_present &&
	    st.st_mtim.tv_sec == km.dead_file_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == km.dead_file_mtime.tv_nsec &&
	    st.st_size == km.dead_file_size)
		return;
	km.dead_file_present = 1;
	km.dead_file_mtime = st.st_mtim;
	km.dead_file_size = st.st_size;
	memset(km.dead_file, 0, sizeof(km.dead_file));
	f = fopen(km.dead_file_path, "re");
	if (!f)
		return;
	if (getdelim(&buf, &cap, '\0', f) > 0 &&
	    parse_lids(buf, km.dead_file) < 0)
		fprintf(stderr, "ibw_kmodel: bad LID list in %s\n",
			km.dead_file_path);
	free(buf);
	fclose(f);
}

/* LID-routed requests only: a directed-route SMP walks the path it
 * names, and the model does not know which port a path ends at. */
static int dest_dead(const uint8_t *buf, uint8_t cls, uint64_t now)
{
	const uint8_t *mad = buf + HDR;
	uint16_t lid;

	if (cls == CLS_DR)
		return 0;
	lid = req_dlid(buf);
	/* a kind nobody answers (km_silent.h) */
	if (kms_silent(cls, (uint16_t)(mad[16] << 8 | mad[17]), lid))
		return 1;
	if (!bit_get(km.dead_cls, cls))
		return 0;
	dead_file_check(now);
	return (km.any_dead_env && bit_get(km.dead_env, lid)) ||
	       (km.dead_file_present && bit_get(km.dead_file, lid));
}

/* ---- protected SMAs ---- */

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* IBW_KM_MKEY_FILE: "NODE_GUID M_KEY" per line (numbers as strtoull
 * reads them, # comments), read again when it changes. */
static void mkey_file_check(uint64_t now)
{
	struct stat st;
	FILE *f;
	char line[256];

	if (km.mkey_checked && now - km.mkey_checked < MKEY_CHECK_US)
		return;
	km.mkey_checked = now;
	if (stat(km.mkey_path, &st) < 0) {
		km.nprot = 0;
		km.mkey_size = -1;
		return;
	}
	if (st.st_mtim.tv_sec == km.mkey_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == km.mkey_mtime.tv_nsec &&
	    st.st_size == km.mkey_size)
		return;
	km.mkey_mtime = st.st_mtim;
	km.mkey_size = st.st_size;
	km.nprot = 0;
	f = fopen(km.mkey_path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && km.nprot < MKEY_MAX) {
		char *p = line, *end;
		uint64_t g, k;

		p += strspn(p, " \t");
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		g = strtoull(p, &end, 0);
		k = strtoull(end, &end, 0);
		if (!g) {
			fprintf(stderr, "ibw_kmodel: bad line in %s\n",
				km.mkey_path);
			continue;
		}
		km.prot_guid[km.nprot] = g;
		km.prot_key[km.nprot++] = k;
	}
	fclose(f);
}

/*
 * Does the SMA that sent answer @ans to @r drop @r instead? Who is at a
 * destination (a directed route, a LID) the model learns from the
 * NodeInfo answers that come from it, so a node counts as protected
 * from its first NodeInfo on (every discovery asks that first). A
 * request whose M_Key is not the node's is dropped: a Get or a Set,
 * as by a port whose M_KeyProtectBits are 2 or 3.
 */
static int mkey_refuses(const struct req *r, const uint8_t *ans, size_t len,
			uint64_t now)
{
	struct dest *d;
	unsigned i;

	if (!km.mkey_path[0] || (r->cls != CLS_SMI && r->cls != CLS_DR))
		return 0;
	d = dest_get(req_key(r));
	if (!d)
		return 0;
	/* NodeInfo (0x0011): NodeGUID at byte 12 of the SMP's data (64) */
	if (len >= 64 + 20 && ans[16] == 0x00 && ans[17] == 0x11)
		d->node_guid = be64(ans + 64 + 12);
	mkey_file_check(now);
	for (i = 0; i < km.nprot; i++)
		if (km.prot_guid[i] == d->node_guid)
			return be64(r->buf + HDR + 24) != km.prot_key[i];
	return 0;
}

/* ---- per-fd state ---- */

static struct kfd *kfd_of(int fd)
{
	int i;

	for (i = 0; i < MAXFD; i++)
		if (km.fds[i].used && km.fds[i].fd == fd)
			return &km.fds[i];
	return NULL;
}

static void deliver(struct kfd *kf, struct msg *m)
{
	m->next = NULL;
	if (kf->qtail)
		kf->qtail->next = m;
	else
		kf->qhead = m;
	kf->qtail = m;
}

static unsigned fc_limit(uint8_t cls)
{
	if (cls == CLS_SMI || cls == CLS_DR)
		return km.fc_smp;
	if (cls == CLS_SA)
		return km.fc_sa;
	return 0;
}

static struct agent *agent_of(struct kfd *kf, uint32_t id)
{
	return id < NAGENT ? &kf->ag[id] : NULL;
}

static void pma_set_sent(const uint8_t *buf);
static int local_answer(struct req *r, uint64_t now);
static int never_answered(const uint8_t *mad);
static int ca_reached(uint16_t lid, uint64_t now);

/* One try on the wire (or not, for a dead destination). */
static int transmit(struct req *r, uint64_t now)
{
	const uint8_t *mad = r->buf + HDR;

	if (dest_dead(r->buf, r->cls, now)) {
		/* Nothing goes out, nothing comes back: the try times
		 * out like one to a port that is down. */
		km.dead_lid++;
		return 0;
	}
	pma_set_sent(r->buf);
	if (local_answer(r, now) < 0 && n_write(r->kf->fd, r->buf, r->len) < 0)
		return -1;
	if (r->cls == CLS_DR)
		km.dr_hops += mad[7];
	if (km.latency) {
		unsigned slot = (r->rhead + r->rcount) % NTRY;

		r->ready[slot] = model_ready(r, now);
		if (r->rcount < NTRY)
			r->rcount++;
		else
			r->rhead = (r->rhead + 1) % NTRY;
	}
	return 0;
}

/* The ready time of the oldest try nothing came back for yet. */
static uint64_t pop_try(struct req *r, uint64_t now)
{
	uint64_t t;

	if (!r->rcount)
		return now;
	t = r->ready[r->rhead];
	r->rhead = (r->rhead + 1) % NTRY;
	r->rcount--;
	return t;
}

static void resched(struct req *r)
{
	uint64_t w = r->try_end;

	if (r->held && r->held_at < w)
		w = r->held_at;
	heap_set(r, w);
}

static void start(struct req *r, uint64_t now);

/* An outstanding request of this agent completed: the kernel sends the
 * next one it held back. */
static void fc_release(struct kfd *kf, uint32_t id, uint64_t now)
{
	struct agent *ag = agent_of(kf, id);

	if (!ag)
		return;
	if (ag->outstanding)
		ag->outstanding--;
	while (ag->bl_head) {
		struct req *r = ag->bl_head;
		unsigned lim = fc_limit(r->cls);

		if (lim && ag->outstanding >= lim)
			break;
		ag->bl_head = r->qnext;
		if (!ag->bl_head)
			ag->bl_tail = NULL;
		ag->backlog--;
		r->qnext = NULL;
		start(r, now);
	}
}

/* Answered or reported: the request is done. */
static void finish(struct req *r, uint64_t now)
{
	struct kfd *kf = r->kf;
	uint32_t id = r->agent;

	heap_del(r);
	ht_del(r);
	req_put(r);
	fc_release(kf, id, now);
}

static void start(struct req *r, uint64_t now)
{
	struct agent *ag = agent_of(r->kf, r->agent);

	r->state = RQ_WAIT;
	r->try_end = now + (uint64_t)r->timeout_ms * 1000;
	r->final = now + (uint64_t)r->timeout_ms * 1000 * (r->tries_left + 1);
	if (ag)
		ag->outstanding++;
	ht_add(r);
	if (transmit(r, now) < 0) {
		/* umad2sim could not write to ibsim: as a send that failed
		 * on the wire, the try just gets no answer. */
	}
	resched(r);
}

/* The kernel's report for a request nothing answered: the header the
 * program wrote with status ETIMEDOUT, then the MAD header alone, with
 * the TID as it went out (umad2sim puts the agent in bits 32..47). */
static void timeout_report(struct req *r, uint64_t now)
{
	struct msg *m = msg_get();
	ib_user_mad_t *u;
	uint8_t *mad;

	km.timeouts++;
	if (m) {
		memcpy(m->buf, r->buf, HDR + MAD_HDR);
		u = (ib_user_mad_t *)(void *)m->buf;
		u->status = KM_ETIMEDOUT;
		mad = m->buf + HDR;
		mad[10] = (uint8_t)(r->agent >> 8);
		mad[11] = (uint8_t)r->agent;
		m->len = HDR + MAD_HDR;
		deliver(r->kf, m);
	}
	/* Kept a while so that an answer coming now counts as late. */
	r->state = RQ_LATE;
	if (r->held) {
		msg_put(r->held);
		r->held = NULL;
	}
	heap_set(r, now + LINGER_US);
	fc_release(r->kf, r->agent, now);
}

static void fire(struct req *r, uint64_t now)
{
	if (r->state == RQ_LATE) {
		heap_del(r);
		ht_del(r);
		req_put(r);
		return;
	}
	if (r->held && r->held_at <= now) {
		struct msg *m = r->held;

		r->held = NULL;
		km.answered++;
		deliver(r->kf, m);
		finish(r, now);
		return;
	}
	if (r->try_end <= now) {
		if (!r->tries_left) {
			timeout_report(r, now);
			return;
		}
		r->tries_left--;
		r->try_end += (uint64_t)r->timeout_ms * 1000;
		km.resent++;
		transmit(r, now);
	}
	resched(r);
}

static void run_timers(uint64_t now)
{
	while (km.nheap && km.heap[0]->when <= now)
		fire(km.heap[0], now);
}

static uint64_t next_timer(void)
{
	return km.nheap ? km.heap[0]->when : INF;
}

#define ATTR_PORTINFO 0x0015
#define ATTR_NODEDESC 0x10
#define SMP_DATA 64 /* LID-routed and directed-route SMPs alike */
/* PortInfo byte offsets (IBA 14.2.5.6: LocalPortNum is byte 28) */
#define PI_WIDTH_SUPPORTED 30
#define PI_SPEED_SUPPORTED_STATE 32 /* supported: high nibble */
#define PI_SPEED_ACTIVE_ENABLED 35 /* enabled: low nibble */

/*
 * ibsim says every port supports 1x to 12x and SDR to QDR but enables
 * 4x (1x where the net file says w=1) and SDR, so "the best both ends
 * support" finds every simulated link narrow and slow. A real port
 * supports what its hardware does: 1x and 4x, at the speeds it is
 * enabled for. Rewriting PortInfo answers so makes a w=1 link the one
 * narrow link (docs/testing.md, "Simulator vs real host").
 */
static void real_portinfo(struct msg *m)
{
	uint8_t *mad = m->buf + HDR;
	uint8_t *pi = mad + SMP_DATA;
	unsigned attr, en;

	if (!km.real_portinfo || m->len < HDR + SMP_DATA + 64)
		return;
	if ((mad[1] != CLS_SMI && mad[1] != CLS_DR) ||
	    mad[3] != (METHOD_RESP | 0x01))
		return;
	attr = (unsigned)mad[16] << 8 | mad[17];
	if (attr != ATTR_PORTINFO)
		return;
	if (pi[PI_WIDTH_SUPPORTED])
		pi[PI_WIDTH_SUPPORTED] = 0x03; /* 1x, 4x */
	en = pi[PI_SPEED_ACTIVE_ENABLED] & 0x0f;
	if (en && en != 0x0f) /* 15: "set to supported", not a set */
		pi[PI_SPEED_SUPPORTED_STATE] =
			(uint8_t)(en << 4 |
				  (pi[PI_SPEED_SUPPORTED_STATE] & 0x0f));
}

/* A NodeDescription answer: as root on that host set it (km_desc.h). */
static void real_nodedesc(struct msg *m)
{
	uint8_t *mad = m->buf + HDR;

	if (m->len < HDR + SMP_DATA + 64 ||
	    (mad[1] != CLS_SMI && mad[1] != CLS_DR) ||
	    mad[3] != (METHOD_RESP | 0x01) || mad[16] != 0 ||
	    mad[17] != ATTR_NODEDESC)
		return;
	kmd_answer(mad + SMP_DATA);
}

#define ATTR_PORT_SAMPLES_CONTROL 0x0010
#define PMA_DATA 64 /* PerfMgt: 24-byte header, 40 reserved */

/* An answer from ibsim through the FEC ports of km_fec.c and the driven
 * counters of km_pc.c: a PortInfo's capability bits, a PMA
 * ClassPortInfo's IsRSFECCountersSupported, CapabilityMask2, PortCounters
 * and PortCountersExtended values. */
static void real_fec(struct msg *m)
{
	uint8_t *mad = m->buf + HDR;
	const ib_user_mad_t *u = (const void *)m->buf;
	unsigned attr;

	if (m->len < HDR + SMP_DATA + 64 || mad[3] != (METHOD_RESP | 0x01))
		return;
	attr = (unsigned)mad[16] << 8 | mad[17];
	if ((mad[1] == CLS_SMI || mad[1] == CLS_DR) && attr == ATTR_PORTINFO)
		kmf_portinfo(mad + SMP_DATA,
			     (uint32_t)mad[20] << 24 | (uint32_t)mad[21] << 16 |
				     (uint32_t)mad[22] << 8 | mad[23]);
	else if (mad[1] == CLS_PMA && attr == 0x0001) {
		kmf_pma_cpi(mad + PMA_DATA, ntohs(u->addr.lid));
		kmp_pma_cpi(mad + PMA_DATA, ntohs(u->addr.lid));
	} else if (mad[1] == CLS_PMA)
		kmp_answer(mad + PMA_DATA, attr, ntohs(u->addr.lid));
}

/* A PerfSet the program sends: the modelled counters it clears are
 * cleared now, for every process (km_clear.h). Sent on to ibsim too,
 * which clears its own. */
static void pma_set_sent(const uint8_t *buf)
{
	const uint8_t *mad = buf + HDR;

	if (mad[1] != CLS_PMA || mad[3] != 0x02)
		return;
	kmp_set(mad + PMA_DATA, (unsigned)mad[16] << 8 | mad[17],
		req_dlid(buf));
	kmf_set(mad, req_dlid(buf));
}

/* A Get of a FEC port's PortExtendedSpeedsCounters or PortInfoExtended
 * that ibsim handed back: its answer (km_fec.c). 1 if it was. */
static int fec_answer(struct msg *m, const struct req *r)
{
	ib_user_mad_t *u = (ib_user_mad_t *)(void *)m->buf;
	uint16_t dlid;

	if (!r)
		return 0;
	dlid = req_dlid(r->buf);
	if (!kmf_answer(m->buf + HDR, (unsigned)(m->len - HDR), dlid))
		return 0;
	u->status = 0;
	u->addr.lid = htons(dlid);
	return 1;
}

/*
 * A PerfMgt Get of PortSamplesControl that ibsim handed back: ibsim has
 * no handler for the attribute, which the IBA makes mandatory for every
 * PMA, so a real port answers it. Turned into that answer, as a PMA with
 * no sampling under way gives it: everything zero (Tick 0, OpCode 0,
 * SampleStatus done) but the PortSelect asked. 1 if it was.
 */
static int real_psc(struct msg *m)
{
	uint8_t *mad = m->buf + HDR;
	ib_user_mad_t *u = (ib_user_mad_t *)(void *)m->buf;
	unsigned attr;
	uint8_t port_select;

	if (!km.real_psc || m->len < HDR + PMA_DATA + 4 || mad[1] != CLS_PMA ||
	    mad[3] != 0x01)
		return 0;
	attr = (unsigned)mad[16] << 8 | mad[17];
	if (attr != ATTR_PORT_SAMPLES_CONTROL)
		return 0;
	port_select = mad[PMA_DATA + 1];
	memset(mad + PMA_DATA, 0, m->len - HDR - PMA_DATA);
	mad[PMA_DATA + 1] = port_select;
	mad[3] = METHOD_RESP | 0x01;
	mad[4] = mad[5] = 0; /* MAD status */
	u->status = 0;
	return 1;
}

/* ---- classes a CA's MAD layer does not serve ---- */

struct regline {
	long pid;
	unsigned agent, cls, ver, oui;
	uint8_t mask[16];
};

static int parse_regline(const char *s, struct regline *l)
{
	char hex[40];
	int i;

	if (sscanf(s, "%ld %u %x %u %x %32s", &l->pid, &l->agent, &l->cls,
		   &l->ver, &l->oui, hex) != 6 ||
	    strlen(hex) != 32)
		return -1;
	for (i = 0; i < 16; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		l->mask[i] = (uint8_t)v;
	}
	return 0;
}

static int alive(long pid)
{
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno != ESRCH);
}

/*
 * A Linux host's MAD layer answers a Get or Set of a class no agent on
 * that port registered with GetResp status 0x000C, method/attribute not
 * supported, at once (drivers/infiniband/core/mad.c,
 * generate_unmatched_resp); ibsim drops it, as if nobody were there. The
 * kernel itself serves the SMA, the PMA (the HCA's) and CM; any other
 * class (vendor classes: ibping's echo) only a process that registered
 * it. The test bed writes ca-lids into the state dir ("LID NODE" per
 * line: the CA ports the fabric reaches, tests/lib/simfabric.sh); the
 * registry of each node's agents (agents.NODE, below) says which
 * classes a process there registered methods of.
 */

/* Does an alive process on node @host have methods of class @cls
 * registered (the registry of agents.HOST)? */
static int classes_served(const char *host, unsigned cls)
{
	char path[700], line[256];
	struct regline l;
	int served = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/agents.%s", km.state_dir, host);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!served && fgets(line, sizeof(line), f))
		if (parse_regline(line, &l) == 0 && l.cls == cls &&
		    alive(l.pid))
			served = 1;
	fclose(f);
	return served;
}

static int calid_cmp(const void *a, const void *b)
{
	const struct calid *x = a, *y = b;

	return (int)x->lid - (int)y->lid;
}

static void calid_check(uint64_t now)
{
	struct calid *v = NULL, *nv;
	size_t n = 0, cap = 0;
	struct stat st;
	char line[256], name[128];
	unsigned lid;
	FILE *f;

	if (!km.calid_path[0] ||
	    (km.calid_checked && now - km.calid_checked < CALID_CHECK_US))
		return;
	km.calid_checked = now;
	if (stat(km.calid_path, &st) < 0) {
		free(km.calid);
		km.calid = NULL;
		km.ncalid = 0;
		return;
	}
	if (km.calid && st.st_mtim.tv_sec == km.calid_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == km.calid_mtime.tv_nsec &&
	    st.st_size == km.calid_size)
		return;
	f = fopen(km.calid_path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %127s", &lid, name) != 2 || !lid ||
		    lid >= 0xc000)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[n].lid = (uint16_t)lid;
		host_name(v[n].host, sizeof(v[n].host), name);
		n++;
	}
	fclose(f);
	qsort(v, n, sizeof(*v), calid_cmp);
	free(km.calid);
	km.calid = v;
	km.ncalid = n;
	km.calid_mtime = st.st_mtim;
	km.calid_size = st.st_size;
}

/*
 * A request of ours ibsim handed back undelivered: when it went to a CA
 * port the fabric reaches and is of a class nobody on that node serves,
 * turn it into the host's answer, GetResp status 0x000C. 1 if it was.
 */
static int unsupported_class(struct msg *m, const struct req *r, uint64_t now)
{
	uint8_t *mad = m->buf + HDR;
	ib_user_mad_t *u = (ib_user_mad_t *)(void *)m->buf;
	struct calid key, *ca;
	uint8_t cls = mad[1];

	if (!km.real_unsupported || !r || cls == CLS_SMI || cls == CLS_DR ||
	    cls == CLS_PMA || cls == 0x07 || (mad[3] != 0x01 && mad[3] != 0x02))
		return 0;
	calid_check(now);
	/* Handed back, it carries our own LID: where it went is in the
	 * request as we sent it. */
	key.lid = req_dlid(r->buf);
	ca = km.ncalid ? bsearch(&key, km.calid, km.ncalid, sizeof(key),
				 calid_cmp)
		       : NULL;
	if (!ca || classes_served(ca->host, cls))
		return 0;
	mad[3] = METHOD_RESP | 0x01;
	mad[4] = 0x00; /* MAD status 0x000C */
	mad[5] = 0x0c;
	u->status = 0;
	u->addr.lid = htons(key.lid);
	return 1;
}

/*
 * The attributes ibsim never answers: PortSamplesControl,
 * PortExtendedSpeedsCounters and the congestion counters of the PMA,
 * PortInfoExtended of the SMA. ibsim drops them, or hands them to the
 * process flagged as the node's SM, which ignores them or, for a class
 * it did not register, dies of them in umad2sim (opensm).
 */
static int never_answered(const uint8_t *mad)
{
	unsigned attr = (unsigned)mad[16] << 8 | mad[17];

	if (mad[3] != 0x01 && mad[3] != 0x02)
		return 0;
	if (mad[1] == CLS_PMA)
		return attr == ATTR_PORT_SAMPLES_CONTROL || attr == 0x001f ||
		       (attr >= 0x0030 && attr <= 0x0035);
	return mad[1] == CLS_SMI && attr == 0x0033;
}

/* Is @lid a CA port the fabric reaches (ca-lids)? */
static int ca_reached(uint16_t lid, uint64_t now)
{
	struct calid key = { .lid = lid };

	calid_check(now);
	return km.ncalid &&
	       bsearch(&key, km.calid, km.ncalid, sizeof(key), calid_cmp);
}

/*
 * A try of @r that ibsim would not answer, to a CA port the fabric
 * reaches, is not sent: it comes back at once as ibsim hands back what it
 * drops (status 110), and classify() makes of it what it makes of those,
 * the model's answer or nothing. The same for every CA, the SM's node
 * included, whose opensm never sees it. 0 if it was so; -1: send it.
 */
static int local_answer(struct req *r, uint64_t now)
{
	ib_user_mad_t *u;
	struct msg *m;
	uint16_t dlid = req_dlid(r->buf);

	if (r->len < HDR + MAD_HDR || !never_answered(r->buf + HDR) ||
	    !ca_reached(dlid, now) || !(m = msg_get()))
		return -1;
	memcpy(m->buf, r->buf, r->len);
	m->len = r->len;
	u = (ib_user_mad_t *)(void *)m->buf;
	u->status = KM_ETIMEDOUT;
	u->addr.lid = htons(dlid);
	/* the sending agent in TID bits 32..47, as umad2sim sends it */
	m->buf[HDR + 10] = (uint8_t)(r->agent >> 8);
	m->buf[HDR + 11] = (uint8_t)r->agent;
	m->next = NULL;
	if (r->kf->stail)
		r->kf->stail->next = m;
	else
		r->kf->shead = m;
	r->kf->stail = m;
	return 0;
}

/* A MAD umad2sim had for this fd: hold it, queue it or drop it. */
static void classify(struct kfd *kf, struct msg *m, uint64_t now)
{
	ib_user_mad_t *u = (ib_user_mad_t *)(void *)m->buf;
	const uint8_t *mad = m->buf + HDR;
	uint8_t cls, method;
	uint32_t tid;
	struct req *r;
	int resp;

	if (m->len < HDR + MAD_HDR) {
		msg_put(m);
		return;
	}
	cls = mad[1];
	tid = (uint32_t)mad[12] << 24 | (uint32_t)mad[13] << 16 |
	      (uint32_t)mad[14] << 8 | mad[15];
	/* The sending agent is in TID bits 32..47 (umad2sim put it there,
	 * as the kernel puts its hi_tid); umad2sim's agent_id of a MAD
	 * handed back is the class's agent instead. */
	r = ht_find(cls, tid, (uint32_t)mad[10] << 8 | mad[11]);
	if (u->status && real_psc(m)) {
		km.psc_answered++;
		if (r)
			kmf_psc(m->buf + HDR, req_dlid(r->buf));
	} else if (u->status && fec_answer(m, r))
		km.fec_answered++;
	else if (u->status && unsupported_class(m, r, now))
		km.unsupported++;
	method = mad[3];
	if (!u->status) {
		real_portinfo(m);
		real_nodedesc(m);
		real_fec(m);
	}
	resp = (method & METHOD_RESP) || method == METHOD_TRAP_REPRESS;

	if (u->status) {
		/* ibsim dropped a MAD of ours and handed it back. The
		 * kernel never learns of a lost MAD: the try just gets no
		 * answer. */
		km.bounced++;
		if (!resp && r && r->state == RQ_WAIT) {
			pop_try(r, now);
			if (!km.rule) {
				km.answered++;
				deliver(kf, m);
				finish(r, now);
				return;
			}
		} else if (!km.rule) {
			deliver(kf, m);
			return;
		}
		msg_put(m);
		return;
	}
	if (!resp) {
		/* A request from elsewhere (SA query, echo, trap). */
		deliver(kf, m);
		return;
	}
	if (r && r->state == RQ_WAIT) {
		uint64_t ready;

		if (mkey_refuses(r, mad, m->len - HDR, now)) {
			/* The protected SMA dropped it: the try gets no
			 * answer. */
			km.mkey_dropped++;
			pop_try(r, now);
			msg_put(m);
			return;
		}
		ready = pop_try(r, now);
		if (r->held) {
			/* A second answer (to a resend): the first one
			 * completes the request, this one finds nothing. */
			km.unmatched++;
			msg_put(m);
			return;
		}
		if (ready > r->final) {
			km.late++;
			msg_put(m);
			return;
		}
		if (ready <= now) {
			km.answered++;
			deliver(r->kf, m);
			finish(r, now);
			return;
		}
		r->held = m;
		r->held_at = ready;
		resched(r);
		return;
	}
	/* The local port answers a hop-0 directed-route SMP itself; the
	 * kernel delivers that with or without a waiting request. */
	if ((cls == CLS_DR && mad[7] == 0) || !km.rule) {
		km.answered++;
		deliver(kf, m);
		return;
	}
	if (r)
		km.late++;
	else
		km.unmatched++;
	msg_put(m);
}

/* Move what umad2sim has for this fd into the model. */
static void pump(struct kfd *kf, uint64_t now)
{
	while (kf->shead) {
		struct msg *m = kf->shead;

		kf->shead = m->next;
		if (!kf->shead)
			kf->stail = NULL;
		classify(kf, m, now);
	}
	for (;;) {
		struct msg *m = msg_get();
		ssize_t n;

		if (!m)
			return;
		/* umad2sim returns -EWOULDBLOCK (not -1) when empty. */
		n = n_read(kf->fd, m->buf, MSG_CAP);
		if (n <= 0) {
			msg_put(m);
			return;
		}
		m->len = (size_t)n;
		classify(kf, m, now);
	}
}

static void flush_fd(struct kfd *kf)
{
	uint32_t i;
	int a;

	for (i = 0; km.ht && i <= km.htmask; i++) {
		struct req **p = &km.ht[i];

		while (*p) {
			struct req *r = *p;

			if (r->kf != kf) {
				p = &r->hnext;
				continue;
			}
			*p = r->hnext;
			km.nreq--;
			heap_del(r);
			req_put(r);
		}
	}
	for (a = 0; a < NAGENT; a++) {
		struct agent *ag = &kf->ag[a];

		while (ag->bl_head) {
			struct req *r = ag->bl_head;

			ag->bl_head = r->qnext;
			req_put(r);
		}
		ag->bl_tail = NULL;
		ag->backlog = ag->outstanding = 0;
	}
	while (kf->qhead) {
		struct msg *m = kf->qhead;

		kf->qhead = m->next;
		msg_put(m);
	}
	kf->qtail = NULL;
	while (kf->shead) {
		struct msg *m = kf->shead;

		kf->shead = m->next;
		msg_put(m);
	}
	kf->stail = NULL;
}

/* ---- agent registrations shared by the processes of one node ---- */

static int is_vendor_oui_class(unsigned cls)
{
	return cls >= 0x30 && cls <= 0x4f;
}

static unsigned oui_of(const uint8_t *o)
{
	return (unsigned)o[0] << 16 | (unsigned)o[1] << 8 | o[2];
}

/* mad.c's method_in_use: same class, version (and OUI for the vendor
 * classes with one), overlapping methods. */
static int conflicts(unsigned cls, unsigned ver, unsigned oui,
		     const uint8_t *mask, unsigned cls2, unsigned ver2,
		     unsigned oui2, const uint8_t *mask2)
{
	int i;

	if (cls != cls2 || ver != ver2)
		return 0;
	if (is_vendor_oui_class(cls) && oui != oui2)
		return 0;
	for (i = 0; i < 16; i++)
		if (mask[i] & mask2[i])
			return 1;
	return 0;
}

static int mask_empty(const uint8_t *mask)
{
	int i;

	for (i = 0; i < 16; i++)
		if (mask[i])
			return 0;
	return 1;
}

/* The registry file, locked: its text (NUL-terminated) in *text. */
static int reg_open(char **text)
{
	int fd;
	struct stat st;
	ssize_t n;

	*text = NULL;
	fd = n_open(km.reg_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX) < 0 || fstat(fd, &st) < 0) {
		n_close(fd);
		return -1;
	}
	*text = malloc((size_t)st.st_size + 1);
	if (!*text) {
		n_close(fd);
		return -1;
	}
	n = pread(fd, *text, (size_t)st.st_size, 0);
	(*text)[n > 0 ? n : 0] = '\0';
	return fd;
}

/* Rewrite the file without the lines of dead processes and without
 * this process's lines for the agents flagged in drop[]. */
static void reg_rewrite(int fd, const char *text, const int *drop)
{
	char *out = malloc(strlen(text) + 1), *o = out;
	const char *s = text;

	if (!out)
		return;
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s + 1) : strlen(s);
		struct regline l;
		int keep = 1;

		if (parse_regline(s, &l) < 0 || !alive(l.pid))
			keep = 0;
		else if (l.pid == (long)getpid() && l.agent < NAGENT &&
			 drop[l.agent])
			keep = 0;
		if (keep) {
			memcpy(o, s, len);
			o += len;
		}
		s += len;
	}
	if (ftruncate(fd, 0) == 0 &&
	    pwrite(fd, out, (size_t)(o - out), 0) < 0) {
		/* the registry is advisory; a lost line only loses a
		 * conflict check */
	}
	free(out);
}

static void reg_drop(const int *drop)
{
	char *text;
	int fd;

	if (!km.reg_path[0])
		return;
	fd = reg_open(&text);
	if (fd < 0)
		return;
	reg_rewrite(fd, text, drop);
	free(text);
	n_close(fd);
}

static int conflict_mem(const struct ib_user_mad_reg_req *q)
{
	const uint8_t *mask = (const uint8_t *)q->method_mask;
	int i, a;

	for (i = 0; i < MAXFD; i++) {
		if (!km.fds[i].used || km.fds[i].dead)
			continue;
		for (a = 0; a < NAGENT; a++) {
			struct agent *ag = &km.fds[i].ag[a];

			if (ag->used &&
			    conflicts(q->mgmt_class, q->mgmt_class_version,
				      oui_of(q->oui), mask, ag->cls, ag->ver,
				      oui_of(ag->oui), ag->mask))
				return 1;
		}
	}
	return 0;
}

static int conflict_file(const char *text, const struct ib_user_mad_reg_req *q)
{
	const uint8_t *mask = (const uint8_t *)q->method_mask;
	const char *s = text;

	while (*s) {
		struct regline l;
		const char *e = strchr(s, '\n');

		if (parse_regline(s, &l) == 0 && l.pid != (long)getpid() &&
		    alive(l.pid) &&
		    conflicts(q->mgmt_class, q->mgmt_class_version,
			      oui_of(q->oui), mask, l.cls, l.ver, l.oui,
			      l.mask))
			return 1;
		if (!e)
			break;
		s = e + 1;
	}
	return 0;
}

static int do_register(struct kfd *kf, int fd, unsigned long request,
		       struct ib_user_mad_reg_req *q)
{
	const uint8_t *mask = (const uint8_t *)q->method_mask;
	int rfd = -1, rc, i;
	char *text = NULL;
	struct agent *ag;

	if (!mask_empty(mask)) {
		if (conflict_mem(q)) {
			km.refused++;
			errno = EINVAL;
			return -1;
		}
		if (km.reg_path[0]) {
			/* Check and add under the file lock, so that two
			 * processes cannot both get the methods. */
			rfd = reg_open(&text);
			if (rfd >= 0 && conflict_file(text, q)) {
				free(text);
				n_close(rfd);
				km.refused++;
				errno = EINVAL;
				return -1;
			}
		}
	}
	rc = n_ioctl(fd, request, q);
	if (rc == 0 && (ag = agent_of(kf, q->id))) {
		ag->used = 1;
		ag->cls = q->mgmt_class;
		ag->ver = q->mgmt_class_version;
		memcpy(ag->oui, q->oui, 3);
		memcpy(ag->mask, mask, 16);
		if (rfd >= 0) {
			char line[128], *o = line;
			struct stat st;

			o += snprintf(line, sizeof(line), "%d %u %x %u %x ",
				      (int)getpid(), q->id, q->mgmt_class,
				      q->mgmt_class_version, oui_of(q->oui));
			for (i = 0; i < 16; i++)
				o += snprintf(o, 3, "%02x", mask[i]);
			*o++ = '\n';
			if (fstat(rfd, &st) == 0 &&
			    pwrite(rfd, line, (size_t)(o - line), st.st_size) <
				    0) {
				/* advisory, as above */
			}
		}
	}
	if (rfd >= 0) {
		free(text);
		n_close(rfd);
	}
	return rc;
}

/* The fd's agents go: from the registry file too. */
static void drop_agents(struct kfd *kf)
{
	int drop[NAGENT] = { 0 }, a, any = 0;

	for (a = 0; a < NAGENT; a++)
		if (kf->ag[a].used) {
			if (!mask_empty(kf->ag[a].mask))
				drop[a] = any = 1;
			kf->ag[a].used = 0;
		}
	if (any)
		reg_drop(drop);
}

/* ---- device death on cue ---- */

static void kill_fd(struct kfd *kf)
{
	uint32_t id;

	if (kf->dead)
		return;
	flush_fd(kf);
	/* The kernel frees a dead file's agents. umad2sim frees an agent
	 * only on its unregister (its close frees one of the fd's) and
	 * has 32 a device, and the process's own unregisters fail on the
	 * dead fd (EIO): without this, a process that reopens runs out of
	 * agents after six or seven deaths. */
	for (id = 0; id < NAGENT; id++)
		if (kf->ag[id].used)
			n_ioctl(kf->fd, IB_USER_MAD_UNREGISTER_AGENT, &id);
	drop_agents(kf);
	kf->dead = 1;
}

static void dead_poll(uint64_t now)
{
	struct stat st;
	int i;

	if (!km.dead_path[0] ||
	    (km.dead_checked && now - km.dead_checked < DEAD_CHECK_US))
		return;
	km.dead_checked = now;
	km.dead_now = stat(km.dead_path, &st) == 0;
	if (!km.dead_now)
		return;
	for (i = 0; i < MAXFD; i++)
		if (km.fds[i].used)
			kill_fd(&km.fds[i]);
}

/* ---- the wrappers ---- */

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd, old, i;
	struct stat st;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	init();
	if (!km.on || strncmp(path, "/dev/infiniband/umad", 20))
		return n_open(path, flags, mode);

	if (km.dead_path[0] && stat(km.dead_path, &st) == 0) {
		/* The device is gone: nothing to open. */
		errno = ENODEV;
		return -1;
	}
	fd = n_open(path, flags, mode);
	if (fd < 0 || fd >= FDLIM)
		return fd;
	old = lock();
	if (ht_init() == 0) {
		for (i = 0; i < MAXFD; i++)
			if (!km.fds[i].used)
				break;
		if (i < MAXFD) {
			memset(&km.fds[i], 0, sizeof(km.fds[i]));
			km.fds[i].used = 1;
			km.fds[i].fd = fd;
			__atomic_store_n(&isfd_tab[fd], 1, __ATOMIC_RELEASE);
			if (!km.opened) {
				km.opened = 1;
				hook_sigterm();
			}
		}
	}
	unlock(old);
	return fd;
}

int close(int fd)
{
	struct kfd *kf;
	int old;

	resolve();
	if (!isfd(fd))
		return n_close(fd);
	old = lock();
	kf = kfd_of(fd);
	if (kf) {
		flush_fd(kf);
		drop_agents(kf);
		kf->used = 0;
	}
	__atomic_store_n(&isfd_tab[fd], 0, __ATOMIC_RELEASE);
	unlock(old);
	return n_close(fd);
}

ssize_t read(int fd, void *buf, size_t count)
{
	struct kfd *kf;
	struct msg *m = NULL;
	ssize_t n = -1;
	uint64_t now;
	int old, err = EAGAIN;

	resolve();
	if (!isfd(fd))
		return n_read(fd, buf, count);
	old = lock();
	now = now_us();
	dead_poll(now);
	kf = kfd_of(fd);
	if (!kf || kf->dead) {
		err = kf ? EIO : EBADF;
	} else {
		/* Only when empty: each look into umad2sim takes the locks
		 * its receiver thread needs, and a read per MAD is what it
		 * costs without the model. */
		if (!kf->qhead)
			pump(kf, now);
		run_timers(now);
		m = kf->qhead;
		if (m) {
			kf->qhead = m->next;
			if (!kf->qhead)
				kf->qtail = NULL;
			/* A short buffer gets the start, as from umad2sim. */
			n = (ssize_t)(m->len < count ? m->len : count);
			memcpy(buf, m->buf, (size_t)n);
			msg_put(m);
		}
	}
	unlock(old);
	if (n < 0)
		errno = err; /* EAGAIN: the kernel's answer, non-blocking */
	return n;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	const ib_user_mad_t *u = buf;
	const uint8_t *mad = (const uint8_t *)buf + HDR;
	struct kfd *kf;
	struct req *r;
	struct agent *ag;
	uint64_t now;
	ssize_t rc;
	uint8_t cls, method;
	unsigned lim;
	int old;

	resolve();
	if (!isfd(fd))
		return n_write(fd, buf, count);
	old = lock();
	now = now_us();
	dead_poll(now);
	kf = kfd_of(fd);
	if (!kf || kf->dead) {
		unlock(old);
		errno = kf ? EIO : EBADF;
		return -1;
	}
	if (count < HDR + MAD_HDR) {
		rc = n_write(fd, buf, count);
		unlock(old);
		return rc;
	}
	cls = mad[1];
	method = mad[3];
	if ((method & METHOD_RESP) || method == METHOD_TRAP_REPRESS) {
		/* Responses wait for nothing. */
		rc = n_write(fd, buf, count);
		unlock(old);
		return rc;
	}
	km.sent++;
	if (!u->timeout_ms) {
		/* Nothing will wait for the answer: it is dropped when it
		 * comes (unless a hop-0 SMP's). */
		if (dest_dead(buf, cls, now)) {
			km.dead_lid++;
			rc = (ssize_t)count;
		} else {
			if (cls == CLS_DR)
				km.dr_hops += mad[7];
			pma_set_sent(buf);
			/* one the model answers goes nowhere: its answer
			 * would be dropped */
			if (never_answered(mad) &&
			    ca_reached(req_dlid(buf), now))
				rc = (ssize_t)count;
			else
				rc = n_write(fd, buf, count);
		}
		unlock(old);
		return rc;
	}
	r = req_get();
	if (!r) {
		unlock(old);
		errno = ENOMEM;
		return -1;
	}
	r->kf = kf;
	r->len = count < MSG_CAP ? count : MSG_CAP;
	memcpy(r->buf, buf, r->len);
	r->cls = cls;
	r->tid = (uint32_t)mad[12] << 24 | (uint32_t)mad[13] << 16 |
		 (uint32_t)mad[14] << 8 | mad[15];
	r->agent = u->agent_id;
	r->timeout_ms = u->timeout_ms;
	r->tries_left = u->retries < 100 ? u->retries : 100;

	ag = agent_of(kf, r->agent);
	lim = fc_limit(cls);
	if (lim && ag && ag->outstanding >= lim) {
		/* Newer kernels hold a solicited MAD beyond the agent's
		 * limit: write() succeeds, nothing is sent yet, and the
		 * timeout clock starts when it goes out. */
		r->state = RQ_BACKLOG;
		if (ag->bl_tail)
			ag->bl_tail->qnext = r;
		else
			ag->bl_head = r;
		ag->bl_tail = r;
		ag->backlog++;
		km.backlogged++;
		if (ag->backlog > km.backlog_hwm)
			km.backlog_hwm = ag->backlog;
	} else {
		start(r, now);
	}
	unlock(old);
	return (ssize_t)count;
}

int ioctl(int fd, unsigned long request, ...)
{
	struct kfd *kf;
	va_list ap;
	void *arg;
	int rc, old;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	resolve();
	if (!isfd(fd))
		return n_ioctl(fd, request, arg);
	old = lock();
	dead_poll(now_us());
	kf = kfd_of(fd);
	if (!kf || kf->dead) {
		unlock(old);
		errno = kf ? EIO : EBADF;
		return -1;
	}
	if (request == IB_USER_MAD_REGISTER_AGENT && arg) {
		rc = do_register(kf, fd, request, arg);
	} else if (request == IB_USER_MAD_UNREGISTER_AGENT && arg) {
		uint32_t id = *(uint32_t *)arg;
		struct agent *ag = agent_of(kf, id);

		rc = n_ioctl(fd, request, arg);
		if (rc == 0 && ag && ag->used) {
			int drop[NAGENT] = { 0 };

			ag->used = 0;
			if (!mask_empty(ag->mask)) {
				drop[id] = 1;
				reg_drop(drop);
			}
		}
	} else {
		rc = n_ioctl(fd, request, arg);
	}
	unlock(old);
	return rc;
}

/* Look at the model fds of a poll set: drain umad2sim, run the timers,
 * fill in revents. Returns how many are ready; *due is the next timer. */
static int scan(struct pollfd *p, nfds_t n, uint64_t *due)
{
	uint64_t now;
	nfds_t i;
	int ready = 0, old;

	old = lock();
	now = now_us();
	dead_poll(now);
	for (i = 0; i < n; i++) {
		struct kfd *kf;

		if (!isfd(p[i].fd) || !(kf = kfd_of(p[i].fd)) || kf->dead ||
		    kf->qhead)
			continue;
		pump(kf, now);
	}
	run_timers(now);
	for (i = 0; i < n; i++) {
		struct kfd *kf;
		short ev = 0;

		if (!isfd(p[i].fd))
			continue;
		kf = kfd_of(p[i].fd);
		if (!kf)
			ev = POLLNVAL;
		else if (kf->dead)
			ev = POLLERR; /* alone, as the kernel's EPOLLERR */
		else {
			if (kf->qhead)
				ev |= p[i].events & (POLLIN | POLLRDNORM);
			ev |= p[i].events & (POLLOUT | POLLWRNORM);
		}
		p[i].revents = ev;
		if (ev)
			ready++;
	}
	*due = next_timer();
	unlock(old);
	return ready;
}

/* poll() the fds that are not ours for up to ms milliseconds. */
static int poll_others(struct pollfd *p, nfds_t n, int ms)
{
	struct pollfd small[32], *o = small;
	nfds_t i, k = 0;
	int rc;

	if (n > 32 && !(o = malloc(n * sizeof(*o))))
		return -1;
	for (i = 0; i < n; i++)
		if (!isfd(p[i].fd))
			o[k++] = p[i];
	rc = n_poll(o, k, ms);
	for (i = 0, k = 0; rc >= 0 && i < n; i++)
		if (!isfd(p[i].fd))
			p[i].revents = o[k++].revents;
	if (o != small)
		free(o);
	return rc;
}

static int sleep_us(uint64_t us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1000000),
			       .tv_nsec = (long)(us % 1000000) * 1000 };

	return nanosleep(&ts, NULL);
}

int poll(struct pollfd *p, nfds_t n, int timeout)
{
	uint64_t deadline, due, now, wait;
	nfds_t i, nmodel = 0, mfd = 0;
	int ready;

	resolve();
	for (i = 0; i < n; i++)
		if (isfd(p[i].fd)) {
			nmodel++;
			mfd = i;
		}
	if (!nmodel)
		return n_poll(p, n, timeout);
	now = now_us();
	deadline = timeout < 0 ? INF : now + (uint64_t)timeout * 1000;
	for (;;) {
		ready = scan(p, n, &due);
		if (nmodel < n) {
			/* Other fds too: umad2sim's poll would ignore
			 * them, so look at both in short slices. */
			int ms = 0, rc;

			now = now_us();
			if (!ready && now < deadline) {
				ms = MIXED_SLICE_MS;
				if (deadline - now < 1000 ||
				    (due != INF && due <= now + 1000))
					ms = 0;
			}
			rc = poll_others(p, n, ms);
			if (rc < 0)
				return -1;
			ready += rc;
			if (ready)
				return ready;
			if (!ms) {
				now = now_us();
				if (now >= deadline)
					return 0;
				if (due != INF && due > now)
					sleep_us(due - now < 1000 ? due - now
								  : 1000);
			}
			continue;
		}
		if (ready)
			return ready;
		now = now_us();
		if (now >= deadline)
			return 0;
		wait = deadline - now;
		if (due != INF && due < now + wait)
			wait = due > now ? due - now : 0;
		if (wait > SLICE_US)
			wait = SLICE_US;
		if (nmodel > 1 && wait > 1000)
			wait = 1000;
		if (nmodel == 1 && wait >= 1000) {
			/* umad2sim's poll wakes when it gets a MAD. Its
			 * queue is empty after scan(), so this sleeps. */
			struct pollfd one = { .fd = p[mfd].fd,
					      .events = POLLIN };

			n_poll(&one, 1, (int)(wait / 1000));
		} else if (wait) {
			/* Under a millisecond (umad2sim's poll counts in
			 * ms), or several model fds. */
			if (sleep_us(wait) < 0 && errno == EINTR)
				return -1;
		}
	}
}
