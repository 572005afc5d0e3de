/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What core/links.c and core/links_state.c (the state file's lines) share:
 * a link's state, its buckets and the table of links.
 */
#ifndef IBW_LINKS_INT_H
#define IBW_LINKS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "links.h"

/*
 * Windows are rings of buckets: 12 of 5 minutes for the hour, 24 of an
 * hour for the day. A reading's increments go whole into the bucket of the
 * time it was taken; a window is the buckets of the last 12 (24) bucket
 * periods up to the view's time, so it spans 55 to 60 minutes (23 to 24
 * hours) and its rates divide by the time its readings cover.
 */
#define HOUR_SLOTS 12
#define HOUR_SLOT_US (300ull * 1000000)
#define DAY_SLOTS 24
#define DAY_SLOT_US (3600ull * 1000000)
#define FORGET_US (24ull * 3600 * 1000000)
#define NERR IBW_LERR_MAX

struct hb_end {
	uint32_t err[NERR];
	uint32_t ms; /* time the readings cover */
	uint64_t wait_ns; /* PortXmitWait turned into time */
	uint64_t xmit; /* bytes sent */
	uint64_t cap; /* bytes the effective rate allows in that time */
	uint64_t bits; /* bits on the wire at the signalling rate */
};

/*
 * Buckets keep what every link has: time, wait, bytes and bits. Error
 * counts, which most links never have, are kept apart (struct lerrs),
 * allocated the first time a link counts one: a bucket of 2 ends x 8
 * counters would otherwise be 64 of its bytes, zero on almost every link.
 * Period numbers fit 32 bits (5-minute periods since 1970: 40,000 years).
 */
struct hbucket {
	uint32_t idx; /* period number + 1; 0: empty */
	uint32_t ms[2]; /* time the readings cover, by end */
	uint64_t wait_ns[2]; /* PortXmitWait turned into time */
	uint64_t xmit[2]; /* bytes sent */
	uint64_t cap[2]; /* bytes the effective rate allows in that time */
	uint64_t bits[2]; /* bits on the wire at the signalling rate */
};

struct dbucket {
	uint32_t idx;
	uint32_t ms[2];
};

/* The error counts of the buckets of the same index, by end. */
struct lerrs {
	uint32_t h[HOUR_SLOTS][2][NERR];
	uint32_t d[DAY_SLOTS][2][NERR];
};

struct sample {
	uint64_t us;
	struct hb_end v;
	uint16_t vl_mask;
	float vl_ratio[16];
};

/* What a view reads comes first, then the bases only updates use. */
struct end_state {
	uint64_t guid;
	uint8_t port, node_type;
	uint16_t lid;
	/* its node's name (malloc'd, replaced when it changes; NULL: none
	 * yet), not IBW_NAME_SIZE bytes an end: 7.9 MB on the 57,024-port
	 * tree */
	char *name;
	uint8_t state, phys;
	struct ibw_port_speeds sp;
	uint32_t saturated;
	int16_t tick; /* as the last reading gave it */
	uint8_t have_prev, have_last;
	uint8_t fec_mode, fec_mode_src; /* the last FEC reading's */
	struct ibw_link_module module; /* as the last round gave it */
	uint16_t prev_vl_mask;
	struct sample last;
	uint64_t prev_us, prev_err[NERR], prev_wait, prev_xmit;
	uint64_t prev_vl[16];
};

/* A view reads the first VIEW_BYTES: the ends, then the sums. */
struct lstate {
	struct end_state e[2];
	uint64_t seen_us;
	uint8_t up; /* both ends LinkUp and Active at the last update */
	struct lerrs *errs; /* NULL: no error counted in any bucket */
	struct ibw_lfec *fec; /* NULL: no end has had a FEC reading */
	/* The windows' sums for the period hp (dp), kept current as
	 * samples come, so that a view in that period does not read the
	 * buckets. 0: not computed. The day's uses err and ms only. */
	uint64_t hp, dp;
	struct hb_end hsum[2], dsum[2];
	struct hbucket h[HOUR_SLOTS];
	struct dbucket d[DAY_SLOTS];
};

#define VIEW_BYTES offsetof(struct lstate, h)

struct ibw_links {
	struct ibw_link_thresholds t;
	uint64_t round_us;
	struct lstate **tab; /* open addressing, linear probing */
	size_t cap, n;
	size_t nfec; /* links with FEC state */
	int no_fec_save; /* ibw_links_save_fec(l, 0) */
};

/* The link with these ends, made if new; NULL on ENOMEM. */
struct lstate *ibw_links_get(struct ibw_links *l, uint64_t ga, uint8_t pa,
			     uint64_t gb, uint8_t pb);
/* 1 if any of the NERR counts is not 0. */
int ibw_links_any_error(const uint32_t *err);

/* link_judge.c: the health and reasons of link @k, filled but for them,
 * against @t: @missing, the last round did not have it; @fx, each end's
 * FEC windows (NULL: none), judged here too. */
void ibw_link_judge(struct ibw_link *k, const struct ibw_link_thresholds *t,
		    int missing, struct ibw_link_fec *const fx[2]);

#endif
