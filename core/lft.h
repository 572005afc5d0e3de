/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Linear forwarding tables of every switch, read with the engine and kept
 * as an immutable, reference-counted set keyed by switch GUID (the route
 * census reads them; docs/routes.md).
 *
 * A refresh reads, for each switch of a discovered fabric, the 64-entry
 * LinearForwardingTable blocks 0 .. LinearFDBTop / 64 and nothing beyond:
 * the MAD count of a refresh is sum(LinearFDBTop / 64 + 1) over the
 * switches, plus one directed-route retry per LID-routed block that
 * failed. Blocks go LID-routed to a switch that has a LID (directed
 * route otherwise), switch after switch for each block number, at most
 * @window at once on top of the engine's own limits.
 *
 * Only unicast tables: multicast forwarding tables are not read.
 */
#ifndef IBW_LFT_H
#define IBW_LFT_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "fabric.h"

/* One switch's unicast table. */
struct ibw_lft_table {
	uint64_t guid; /* the switch's node GUID */
	uint16_t lid; /* the LID it was read at; 0: by directed route */
	uint16_t top; /* LinearFDBTop (SwitchInfo, from discovery) */
	/* ports[lid] for lid 0..top (n = top + 1 entries); 0xff: no
	 * entry. NULL (n = 0) when the table could not be read at all. */
	uint8_t *ports;
	unsigned n;
	uint64_t read_us; /* CLOCK_REALTIME when these entries were read */
	/* Blocks that failed in the last refresh; then the entries are
	 * the previous refresh's (stale = 1), or there are none. */
	unsigned blocks_failed;
	uint8_t stale;
};

/* What one refresh did. */
struct ibw_lft_stats {
	uint64_t start_us; /* CLOCK_REALTIME */
	uint64_t duration_us;
	unsigned switches; /* tables in the set */
	unsigned fresh; /* read completely by this refresh */
	unsigned stale; /* kept from an earlier refresh */
	unsigned missing; /* no table at all */
	uint64_t blocks; /* blocks asked for */
	uint64_t mads; /* requests sent, directed-route retries included */
	uint64_t lid_fallbacks; /* LID-routed blocks retried by DR */
	uint64_t failed_blocks; /* blocks not read either way */
	uint64_t timeouts;
	size_t memory_bytes; /* the set's tables */
};

struct ibw_lft_set;

/* Building a set by hand (the reader, tests): add tables, then freeze.
 * ibw_lft_set_add copies @n entries of @ports (NULL: a missing table);
 * returns the table (valid until the next add) or NULL. */
struct ibw_lft_set *ibw_lft_set_new(void);
struct ibw_lft_table *ibw_lft_set_add(struct ibw_lft_set *s, uint64_t guid,
				      uint16_t lid, uint16_t top,
				      const uint8_t *ports, unsigned n);
/* Sort by GUID: after this the set is read-only. */
void ibw_lft_set_freeze(struct ibw_lft_set *s);
struct ibw_lft_set *ibw_lft_set_ref(struct ibw_lft_set *s);
void ibw_lft_set_unref(struct ibw_lft_set *s);

/* The table of switch @guid, or NULL. */
const struct ibw_lft_table *ibw_lft_find(const struct ibw_lft_set *s,
					 uint64_t guid);
/* Tables in GUID order: count and the i-th. */
unsigned ibw_lft_count(const struct ibw_lft_set *s);
const struct ibw_lft_table *ibw_lft_at(const struct ibw_lft_set *s, unsigned i);
/* The output port of @t for @lid: 0xff when there is no entry (beyond
 * LinearFDBTop, or no table). */
uint8_t ibw_lft_port(const struct ibw_lft_table *t, uint16_t lid);
const struct ibw_lft_stats *ibw_lft_set_stats(const struct ibw_lft_set *s);

/* The reader. */
struct ibw_lft_opts {
	unsigned window; /* blocks in flight at most; 0: 32 */
	unsigned timeout_ms; /* per try; 0: the engine's default */
	int retries; /* -1: the engine's default */
	/* Read again this long after a refresh ended, with the last
	 * fabric given; 0: only when asked. */
	uint64_t interval_us;
	/* After a refresh asked for by ibw_lft_refresh(), read once more
	 * this long after it ends: a change discovery sees comes before
	 * the SM's new routes. 0: no second read. */
	uint64_t settle_us;
};

/* Called after each refresh that ran to its end, with the new set (a
 * borrowed reference: take one to keep it). Not called for a refresh cut
 * short by the engine going away. */
typedef void (*ibw_lft_cb)(struct ibw_lft_set *s, void *arg);

struct ibw_lft;

struct ibw_lft *ibw_lft_new(struct ibw_engine *e, const struct ibw_lft_opts *o,
			    ibw_lft_cb cb, void *arg);
/* Requests still in flight complete into nothing; free the reader
 * before or after the engine. */
void ibw_lft_free(struct ibw_lft *l);

/* Read every table of @f's switches now (holds a reference to @f). A
 * refresh already running finishes first; the newest fabric asked for
 * is read after it (one, not one per call). 0 or -errno. */
int ibw_lft_refresh(struct ibw_lft *l, struct ibw_fabric *f);
/* The fabric for later periodic refreshes, without reading now. */
void ibw_lft_set_fabric(struct ibw_lft *l, struct ibw_fabric *f);
/* The last complete set (a new reference), or NULL before the first. */
struct ibw_lft_set *ibw_lft_get(struct ibw_lft *l);
/* 1 while a refresh runs. */
int ibw_lft_busy(const struct ibw_lft *l);
/* Refreshes completed and MADs sent since ibw_lft_new(). */
uint64_t ibw_lft_refreshes(const struct ibw_lft *l);
uint64_t ibw_lft_mads(const struct ibw_lft *l);

#endif
