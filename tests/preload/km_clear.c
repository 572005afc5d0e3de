// SPDX-License-Identifier: BSD-2-Clause
/* The model's counter clears: see km_clear.h. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "km_clear.h"

#define KMC_CHECK_NS 10000000ll /* the file looked at this often */

struct kmc_port {
	uint32_t key; /* 0: free slot; else kind << 24 | lid << 8 | port */
	long long ns[64];
};

static struct {
	pthread_mutex_t lock;
	char path[600];
	long long checked_ns;
	off_t done; /* bytes of the file applied */
	struct kmc_port *v;
	uint32_t mask, n; /* open addressing, mask + 1 slots */
} kmc = { .lock = PTHREAD_MUTEX_INITIALIZER };

static long long clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void kmc_init(const char *state_dir)
{
	if (state_dir && *state_dir)
		snprintf(kmc.path, sizeof(kmc.path), "%s/clears", state_dir);
}

static uint32_t key_of(uint16_t lid, unsigned port, int kind)
{
	return (uint32_t)(kind + 1) << 24 | (uint32_t)lid << 8 | (port & 0xff);
}

static uint32_t slot_of(uint32_t key, uint32_t mask)
{
	return (key * 2654435761u) >> 8 & mask;
}

/* Under kmc.lock: the port's entry, made if @make. */
static struct kmc_port *entry(uint32_t key, int make)
{
	uint32_t i;

	if (make && (!kmc.v || 2 * (kmc.n + 1) > kmc.mask)) {
		uint32_t nmask = kmc.v ? 2 * kmc.mask + 1 : 63, j;
		struct kmc_port *nv = calloc(nmask + 1, sizeof(*nv));

		if (!nv)
			return NULL;
		for (j = 0; kmc.v && j <= kmc.mask; j++) {
			if (!kmc.v[j].key)
				continue;
			i = slot_of(kmc.v[j].key, nmask);
			while (nv[i].key)
				i = (i + 1) & nmask;
			nv[i] = kmc.v[j];
		}
		free(kmc.v);
		kmc.v = nv;
		kmc.mask = nmask;
	}
	if (!kmc.v)
		return NULL;
	for (i = slot_of(key, kmc.mask); kmc.v[i].key; i = (i + 1) & kmc.mask)
		if (kmc.v[i].key == key)
			return &kmc.v[i];
	if (!make)
		return NULL;
	kmc.v[i].key = key;
	memset(kmc.v[i].ns, 0, sizeof(kmc.v[i].ns));
	kmc.n++;
	return &kmc.v[i];
}

/* Under kmc.lock. */
static void apply(uint16_t lid, unsigned port, int kind, uint64_t mask,
		  long long ns)
{
	struct kmc_port *p = entry(key_of(lid, port, kind), 1);
	unsigned b;

	for (b = 0; p && b < 64; b++)
		if (mask >> b & 1 && p->ns[b] < ns)
			p->ns[b] = ns;
}

static void apply_line(const char *s)
{
	unsigned lid, port;
	unsigned long long mask;
	long long ns;
	char kind[8];

	if (sscanf(s, "%u %u %7s %llx %lld", &lid, &port, kind, &mask, &ns) !=
		    5 ||
	    !lid || lid >= 0xc000 || port > 255)
		return;
	if (!strcmp(kind, "pc"))
		apply((uint16_t)lid, port, KMC_PC, mask, ns);
	else if (!strcmp(kind, "fec"))
		apply((uint16_t)lid, port, KMC_FEC, mask, ns);
	else if (!strcmp(kind, "cong"))
		apply((uint16_t)lid, port, KMC_CONG, mask, ns);
}

/* Under kmc.lock: the lines appended since the last look. */
static void check(void)
{
	long long t = clock_ns(CLOCK_MONOTONIC);
	char buf[8192];
	struct stat st;
	ssize_t n;
	int fd;

	if (!kmc.path[0] ||
	    (kmc.checked_ns && t - kmc.checked_ns < KMC_CHECK_NS))
		return;
	kmc.checked_ns = t;
	if (stat(kmc.path, &st) < 0 || st.st_size < kmc.done) {
		/* gone or truncated: a fresh start */
		free(kmc.v);
		kmc.v = NULL;
		kmc.mask = kmc.n = 0;
		kmc.done = 0;
		if (stat(kmc.path, &st) < 0)
			return;
	}
	if (st.st_size == kmc.done)
		return;
	fd = open(kmc.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (lseek(fd, kmc.done, SEEK_SET) == kmc.done) {
		while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
			char *s = buf, *e;

			buf[n] = '\0';
			/* whole lines only; a line being written is taken
			 * next time */
			while ((e = strchr(s, '\n'))) {
				*e = '\0';
				apply_line(s);
				s = e + 1;
			}
			kmc.done += s - buf;
			if (s == buf ||
			    lseek(fd, kmc.done, SEEK_SET) != kmc.done)
				break;
		}
	}
	close(fd);
}

void kmc_clear(uint16_t lid, unsigned port, int kind, uint64_t mask)
{
	long long ns = clock_ns(CLOCK_REALTIME);
	char line[128];
	int fd, n;

	if (!mask)
		return;
	pthread_mutex_lock(&kmc.lock);
	apply(lid, port, kind, mask, ns);
	if (kmc.path[0]) {
		n = snprintf(line, sizeof(line), "%u %u %s %llx %lld\n", lid,
			     port & 0xff,
			     kind == KMC_PC    ? "pc"
			     : kind == KMC_FEC ? "fec"
					       : "cong",
			     (unsigned long long)mask, ns);
		fd = open(kmc.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
			  0644);
		/* One write of a short line with O_APPEND: whole, and in
		 * the order the clears happened. */
		if (fd >= 0) {
			if (write(fd, line, (size_t)n) < 0) {
				/* the other processes miss this clear */
			}
			close(fd);
		}
	}
	pthread_mutex_unlock(&kmc.lock);
}

long long kmc_last(uint16_t lid, unsigned port, int kind, unsigned bit)
{
	struct kmc_port *p;
	long long ns = 0;

	if (bit >= 64)
		return 0;
	pthread_mutex_lock(&kmc.lock);
	check();
	p = entry(key_of(lid, port, kind), 0);
	if (p)
		ns = p->ns[bit];
	pthread_mutex_unlock(&kmc.lock);
	return ns;
}

/* VALUE + RATE x (t - t0), t0 no later than t */
static uint64_t at(uint64_t value, double rate, const struct timespec *t0,
		   long long t)
{
	long long start = t0->tv_sec * 1000000000ll + t0->tv_nsec;
	double dt = (double)(t - start) / 1e9;

	if (dt <= 0 || rate <= 0)
		return value;
	return value + (uint64_t)(rate * dt);
}

uint64_t kmc_value(uint64_t value, double rate, const struct timespec *t0,
		   long long clear_ns)
{
	long long start = t0->tv_sec * 1000000000ll + t0->tv_nsec;
	uint64_t now = at(value, rate, t0, clock_ns(CLOCK_REALTIME));
	uint64_t then;

	if (!clear_ns || clear_ns < start)
		return now;
	then = at(value, rate, t0, clear_ns);
	return now > then ? now - then : 0;
}
