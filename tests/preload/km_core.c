// SPDX-License-Identifier: BSD-2-Clause
/*
 * The kernel and fabric model's state and its machinery (km_int.h): the
 * configuration read from the environment, the statistics line written
 * at exit, the pools, the timer heap and the waiting requests.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "km_int.h"
#include "km_clear.h"
#include "km_desc.h"
#include "km_silent.h"
#include "km_fec.h"
#include "km_pc.h"
#include "km_hw.h"

open_fn n_open;
close_fn n_close;
read_fn n_read;
write_fn n_write;
poll_fn n_poll;
ioctl_fn n_ioctl;

struct km_state km = { .mu = PTHREAD_MUTEX_INITIALIZER };

void km_resolve(void)
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

uint64_t km_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000;
}

/* Cancellation is off while the mutex is held: opensm cancels its
 * receiver thread, and a resend inside poll() calls write(), a
 * cancellation point. */
int km_lock(void)
{
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_mutex_lock(&km.mu);
	return old;
}

void km_unlock(int old)
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

int km_bit_get(const uint8_t *map, unsigned i)
{
	return map[i / 8] >> (i % 8) & 1;
}

/* "5,7-9 0x10": LIDs and ranges, separated by commas or white space. */
int km_parse_lids(const char *s, uint8_t *map)
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
void km_host_name(char *out, size_t n, const char *name)
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
		if (km_parse_lids(s, km.dead_env) < 0)
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
		km_host_name(host, sizeof(host), h && *h ? h : "default");
		snprintf(km.reg_path, sizeof(km.reg_path), "%s/agents.%s",
			 km.state_dir, host);
		snprintf(km.calid_path, sizeof(km.calid_path), "%s/ca-lids",
			 km.state_dir);
		kmf_init(km.state_dir);
		kmh_init(km.state_dir);
		kmp_init(km.state_dir);
		kmc_init(km.state_dir);
		kmd_init(km.state_dir);
	}
	s = getenv("IBW_KM_LOG");
	if (s && *s)
		snprintf(km.log_path, sizeof(km.log_path), "%s", s);
}

static pthread_once_t config_once = PTHREAD_ONCE_INIT;

void km_init(void)
{
	km_resolve();
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
		"unsupported=%llu fec_answered=%llu hw_answered=%llu\n",
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
		(unsigned long long)km.fec_answered,
		(unsigned long long)km.hw_answered);
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

void km_hook_sigterm(void)
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

struct msg *km_msg_get(void)
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

void km_msg_put(struct msg *m)
{
	m->next = km.free_msg;
	km.free_msg = m;
}

struct req *km_req_get(void)
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

void km_req_put(struct req *r)
{
	if (r->held)
		km_msg_put(r->held);
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

void km_heap_del(struct req *r)
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

int km_heap_set(struct req *r, uint64_t when)
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

int km_ht_init(void)
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

void km_ht_add(struct req *r)
{
	uint32_t b;

	if (km.nreq > 2 * km.htmask)
		ht_grow();
	b = hash_key(r->cls, r->tid) & km.htmask;
	r->hnext = km.ht[b];
	km.ht[b] = r;
	km.nreq++;
}

void km_ht_del(struct req *r)
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
struct req *km_ht_find(uint8_t cls, uint32_t tid, uint32_t agent)
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
