// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "session.h"

struct slot {
	int used;
	uint64_t born_us;
	unsigned char v[IBW_SESSION_BYTES];
};

struct ibw_sessions {
	pthread_mutex_t lock;
	uint64_t ttl_us;
	unsigned max;
	struct slot slot[]; /* @max of them, under @lock */
};

struct ibw_sessions *ibw_sessions_new(unsigned max, uint64_t ttl_us)
{
	struct ibw_sessions *ss;

	if (!max)
		return NULL;
	ss = calloc(1, sizeof(*ss) + max * sizeof(ss->slot[0]));
	if (!ss)
		return NULL;
	pthread_mutex_init(&ss->lock, NULL);
	ss->ttl_us = ttl_us;
	ss->max = max;
	return ss;
}

void ibw_sessions_free(struct ibw_sessions *ss)
{
	if (!ss)
		return;
	/* explicit_bzero: a plain memset before free() may be dropped */
	explicit_bzero(ss->slot, ss->max * sizeof(ss->slot[0]));
	pthread_mutex_destroy(&ss->lock);
	free(ss);
}

/* Whole: getrandom(2) may return less than asked when a signal comes. */
static int fill_random(unsigned char *b, size_t n)
{
	ssize_t got;

	while (n) {
		got = getrandom(b, n, 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += got;
		n -= (size_t)got;
	}
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* @hex as bytes: 0, or -EINVAL when it is not exactly our form (a
 * cookie is the client's to set: anything may come). */
static int parse(const char *hex, unsigned char v[IBW_SESSION_BYTES])
{
	int hi, lo;
	unsigned i;

	if (!hex || strlen(hex) != IBW_SESSION_HEX)
		return -EINVAL;
	for (i = 0; i < IBW_SESSION_BYTES; i++) {
		hi = hexval(hex[2 * i]);
		lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		v[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

static int alive(const struct ibw_sessions *ss, const struct slot *s,
		 uint64_t now_us)
{
	/* a clock before the sign-in: the session is not older than 0 */
	return s->used &&
	       (now_us < s->born_us || now_us - s->born_us < ss->ttl_us);
}

/* The slot holding @v, or NULL; under @ss->lock. Every slot is looked
 * at, every byte compared: how long it takes says nothing of @v. */
static struct slot *find(struct ibw_sessions *ss,
			 const unsigned char v[IBW_SESSION_BYTES])
{
	struct slot *hit = NULL;
	unsigned i, j, diff;

	for (i = 0; i < ss->max; i++) {
		diff = 0;
		for (j = 0; j < IBW_SESSION_BYTES; j++)
			diff |= ss->slot[i].v[j] ^ v[j];
		if (!diff && ss->slot[i].used)
			hit = &ss->slot[i];
	}
	return hit;
}

int ibw_session_open(struct ibw_sessions *ss, uint64_t now_us,
		     char hex[IBW_SESSION_HEX + 1])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char v[IBW_SESSION_BYTES];
	struct slot *s = NULL;
	unsigned i;
	int rc;

	rc = fill_random(v, sizeof(v));
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&ss->lock);
	/* A free or ended slot; else the oldest session gives way. */
	for (i = 0; i < ss->max; i++) {
		struct slot *t = &ss->slot[i];

		if (!alive(ss, t, now_us)) {
			s = t;
			break;
		}
		if (!s || t->born_us < s->born_us)
			s = t;
	}
	s->used = 1;
	s->born_us = now_us;
	memcpy(s->v, v, sizeof(v));
	pthread_mutex_unlock(&ss->lock);
	for (i = 0; i < IBW_SESSION_BYTES; i++) {
		hex[2 * i] = digits[v[i] >> 4];
		hex[2 * i + 1] = digits[v[i] & 15];
	}
	hex[IBW_SESSION_HEX] = '\0';
	explicit_bzero(v, sizeof(v));
	return 0;
}

int ibw_session_valid(struct ibw_sessions *ss, const char *hex, uint64_t now_us)
{
	unsigned char v[IBW_SESSION_BYTES];
	struct slot *s;
	int ok;

	if (parse(hex, v) < 0)
		return 0;
	pthread_mutex_lock(&ss->lock);
	s = find(ss, v);
	ok = s && alive(ss, s, now_us);
	if (s && !ok)
		memset(s, 0, sizeof(*s)); /* ended: its slot is free */
	pthread_mutex_unlock(&ss->lock);
	return ok;
}

int ibw_session_close(struct ibw_sessions *ss, const char *hex)
{
	unsigned char v[IBW_SESSION_BYTES];
	struct slot *s;

	if (parse(hex, v) < 0)
		return 0;
	pthread_mutex_lock(&ss->lock);
	s = find(ss, v);
	if (s)
		explicit_bzero(s, sizeof(*s));
	pthread_mutex_unlock(&ss->lock);
	return s != NULL;
}
