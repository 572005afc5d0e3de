/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel and fabric model's port lists (docs/testing.md): the fec,
 * cong and pc files share one form, a port a line,
 *
 *   LID PORT WORD ... [t0=SECONDS]
 *
 * read again when they change (their mtime or size) and kept sorted by
 * LID and port, the first listed first, for a binary search. Each file's
 * own words are its parser's; a record starts with the key below.
 */
#ifndef IBW_KM_LIST_H
#define IBW_KM_LIST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct km_key {
	uint16_t lid;
	uint8_t port;
	int have_t0;
	/* when RATE starts: t0=SECONDS on the line, else the file's mtime,
	 * the same for every process that reads it */
	struct timespec t0;
	unsigned ord; /* its place in the file */
};

struct km_list {
	char path[600]; /* "": no file */
	size_t elem; /* a record's size; each starts with a struct km_key */
	unsigned max; /* lines kept at most */
	int lid0; /* LID 0 is a key of the file's (else the line is skipped) */
	/* The words of a line after LID and PORT (@rest, which it may
	 * change) into @rec, zeroed but for its key: 0, or -1 to skip the
	 * line. @arg is the list's. */
	int (*parse)(char *rest, void *rec, int arg);
	int arg;
	/* what the file held when last read */
	struct timespec mtime;
	off_t size;
	char *v;
	unsigned n;
};

/* @l's file read again if it changed since; a file that is gone empties
 * the list. The caller serialises. */
void km_list_reload(struct km_list *l);

/* Record @i (< l->n). */
static inline void *km_list_rec(const struct km_list *l, unsigned i)
{
	return l->v + (size_t)i * l->elem;
}

static inline const struct km_key *km_list_key(const struct km_list *l,
					       unsigned i)
{
	return (const struct km_key *)(void *)km_list_rec(l, i);
}

/* The first record at @lid whose port is @port or more (l->n if none). */
unsigned km_list_lower_bound(const struct km_list *l, uint16_t lid,
			     unsigned port);
/* The first record for (@lid, @port), or NULL. */
void *km_list_find(const struct km_list *l, uint16_t lid, unsigned port);

/* A line's word NAME=VALUE that every list takes (t0=SECONDS) into @k:
 * 1 if it was one. */
int km_key_word(struct km_key *k, const char *name, const char *value);

/* The largest value libibmad's field @f holds: its width. */
uint32_t km_field_max(int f);

#endif
