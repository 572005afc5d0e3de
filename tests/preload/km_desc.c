// SPDX-License-Identifier: BSD-2-Clause
/* The model's NodeDescriptions: see km_desc.h. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "km_desc.h"

#define KMD_MAX 64 /* nodes the file rewrites at most */
#define KMD_LEN 64 /* the field */

struct kmd_node {
	uint8_t from[KMD_LEN], to[KMD_LEN];
};

static struct {
	pthread_mutex_t lock;
	char path[600];
	struct timespec mtime;
	off_t size;
	struct kmd_node v[KMD_MAX];
	unsigned n;
} kmd = { .lock = PTHREAD_MUTEX_INITIALIZER };

void kmd_init(const char *state_dir)
{
	if (state_dir && *state_dir)
		snprintf(kmd.path, sizeof(kmd.path), "%s/nodedesc", state_dir);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "HEX ORIGINAL" into @d: 0, or -1 for a line that is neither. */
static int parse(const char *line, struct kmd_node *d)
{
	const char *s = line;
	size_t n = 0, len;

	memset(d, 0, sizeof(*d));
	while (hexval(s[0]) >= 0 && hexval(s[1]) >= 0 && n < KMD_LEN) {
		d->to[n++] = (uint8_t)(hexval(s[0]) << 4 | hexval(s[1]));
		s += 2;
	}
	if (*s != ' ')
		return -1;
	s++;
	len = strcspn(s, "\n");
	if (!len || len > KMD_LEN)
		return -1;
	memcpy(d->from, s, len);
	return 0;
}

/* Under kmd.lock: the file read again if it changed. */
static void reload(void)
{
	struct stat st;
	char line[400];
	FILE *f;

	if (!kmd.path[0])
		return;
	if (stat(kmd.path, &st) < 0) {
		kmd.n = 0;
		kmd.size = -1;
		return;
	}
	if (st.st_size == kmd.size && st.st_mtim.tv_sec == kmd.mtime.tv_sec &&
	    st.st_mtim.tv_nsec == kmd.mtime.tv_nsec)
		return;
	f = fopen(kmd.path, "re");
	if (!f)
		return;
	kmd.mtime = st.st_mtim;
	kmd.size = st.st_size;
	kmd.n = 0;
	while (kmd.n < KMD_MAX && fgets(line, sizeof(line), f))
		if (parse(line, &kmd.v[kmd.n]) == 0)
			kmd.n++;
	fclose(f);
}

int kmd_answer(uint8_t *field)
{
	unsigned i;
	int done = 0;

	if (!kmd.path[0])
		return 0;
	pthread_mutex_lock(&kmd.lock);
	reload();
	for (i = 0; i < kmd.n && !done; i++)
		if (!memcmp(kmd.v[i].from, field, KMD_LEN)) {
			memcpy(field, kmd.v[i].to, KMD_LEN);
			done = 1;
		}
	pthread_mutex_unlock(&kmd.lock);
	return done;
}
