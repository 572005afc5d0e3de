/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The state file written by what changed (docs/operations.md, "The state
 * file"): a snapshot (core/ctr_state.h) now and then, and between
 * snapshots an append-only journal beside it, PATH.journal, of batches.
 *
 * A port's line goes into the journal only when its base changes in a way
 * the hardware does not remember: between clears the counter itself is
 * the journal, since a saved total T0 and reading R0 and a later reading
 * R >= R0 give T0 + (R - R0) * scale, the total the daemon holds. So a
 * sweep whose counters only grew writes nothing; a clear, a reset, a flag
 * or a new port writes that port's lines. The link windows have no such
 * luck: every state interval one batch carries each link's bases and the
 * buckets changed since the last one.
 *
 * A batch is "batch GEN", lines, and "end NPORTS NLINKS HASH" (FNV-1a 64
 * of the batch's lines): a torn last batch is dropped whole. GEN is the
 * snapshot's generation; batches of another generation (a journal left
 * over from before the last snapshot) are never applied.
 */
#ifndef IBW_CTR_JOURNAL_H
#define IBW_CTR_JOURNAL_H

#include <stdint.h>

struct ibw_port_ctrs;
struct ibw_links;
struct ibw_ctr_journal;

/* What writing the state has cost since ibw_ctr_journal_new(). */
struct ibw_ctr_journal_stats {
	uint64_t bytes; /* written: snapshots and batches */
	uint64_t snapshots, snapshot_bytes;
	uint64_t batches, batch_bytes;
	uint64_t journal_bytes; /* the journal's size now */
	uint64_t loaded_batches; /* applied at the load */
};

/* The state kept at @path (the journal at @path".journal"), the links'
 * windows written once @interval_us has passed since they last were.
 * NULL on ENOMEM. */
struct ibw_ctr_journal *ibw_ctr_journal_new(const char *path,
					    uint64_t interval_us);
void ibw_ctr_journal_free(struct ibw_ctr_journal *j);

/*
 * Read the snapshot, then the journal's batches of its generation in
 * order up to the first that is torn or bad: a port's later lines
 * replace its record, a link's later line merges into it
 * (ibw_links_merge_line). Outputs and errors as ibw_ctr_state_load(); a
 * journal that cannot be read costs its batches only. The next
 * ibw_ctr_journal_save() writes a snapshot (which drops the journal).
 */
int ibw_ctr_journal_load(struct ibw_ctr_journal *j,
			 struct ibw_port_ctrs **ports, unsigned *n,
			 unsigned *cap, struct ibw_links *links,
			 unsigned *bad_links);

/*
 * After a sweep: a batch of the @n records at @ports whose base changed
 * since written, and when @interval_us has passed since the last window
 * batch at @now_us (CLOCK_REALTIME, the links' clock), the links'
 * changes; nothing when neither has any. A snapshot instead when none
 * was written yet, after a failed write, or when the journal has grown
 * past IBW_CTR_JOURNAL_FACTOR times the snapshot (and
 * IBW_CTR_JOURNAL_MIN_BOUND). 0 or a negative errno.
 */
#define IBW_CTR_JOURNAL_FACTOR 4
#define IBW_CTR_JOURNAL_MIN_BOUND (16u << 20)
int ibw_ctr_journal_save(struct ibw_ctr_journal *j,
			 const struct ibw_port_ctrs *const *ports, unsigned n,
			 const struct ibw_links *links, uint64_t now_us);

/* A snapshot now (a stop), the journal emptied. 0 or a negative errno. */
int ibw_ctr_journal_compact(struct ibw_ctr_journal *j,
			    const struct ibw_port_ctrs *const *ports,
			    unsigned n, const struct ibw_links *links,
			    uint64_t now_us);

struct ibw_ctr_journal_stats
ibw_ctr_journal_stats(const struct ibw_ctr_journal *j);

#endif
