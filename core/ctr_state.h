/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The counters' state file: every port's running totals, so that they
 * survive a restart of ibwatchd. A text file, one line per port, closed
 * by a line with the number of ports and an FNV-1a 64 hash of all that
 * came before (format in docs/architecture.md, "The state file"); files
 * written by earlier versions of this format must keep loading.
 *
 * Only the fields that carry a total over are kept: the counters' totals,
 * last readings, flags and reset counts, and each port's identity, resets
 * and times. Everything else of a loaded record is zero.
 */
#ifndef IBW_CTR_STATE_H
#define IBW_CTR_STATE_H

#include <stddef.h>
#include <stdint.h>

struct ibw_port_ctrs;
struct ibw_links;
struct ibw_fec;
struct ibw_cong;

/* Write the @n records @ports points at, and the windows of @links
 * (NULL: none; core/links.h), to @path atomically: a temporary file
 * beside it, fsynced, renamed over it. 0 or a negative errno. */
int ibw_ctr_state_save(const char *path,
		       const struct ibw_port_ctrs *const *ports, unsigned n,
		       const struct ibw_links *links);

/* The same, as a snapshot of generation @gen (core/ctr_journal.h); its
 * size in *@bytes (NULL: not wanted) on success. */
int ibw_ctr_state_write(const char *path,
			const struct ibw_port_ctrs *const *ports, unsigned n,
			const struct ibw_links *links, uint64_t gen,
			uint64_t *bytes);

/*
 * Read @path: on success *@ports is a new array (the caller frees it) of
 * *@n records in file order, *@cap records long. A torn or corrupt file
 * (no end line, a wrong count or hash, a line that does not parse) is
 * refused with -EBADMSG and the outputs are left alone; a file that
 * cannot be opened gives its negative errno. Once the file is found
 * whole, its link lines are given to @links (NULL: skipped); those
 * ibw_links_load_line() refuses are counted in *@bad_links (if not NULL)
 * and cost nothing else.
 */
int ibw_ctr_state_load(const char *path, struct ibw_port_ctrs **ports,
		       unsigned *n, unsigned *cap, struct ibw_links *links,
		       unsigned *bad_links);
/* The same, with the file's generation in *@gen (NULL: not wanted; 0
 * for files of versions 1 to 3). */
int ibw_ctr_state_read(const char *path, struct ibw_port_ctrs **ports,
		       unsigned *n, unsigned *cap, struct ibw_links *links,
		       unsigned *bad_links, uint64_t *gen);

/*
 * A port's lines as the file has them, shared with its journal
 * (ctr_journal.c): the "p" line, then its "f" and "g" lines where it has
 * FEC and congestion counters, each ending in a newline. Returns their
 * length, 0 if they do not fit in @cap bytes (IBW_CTR_STATE_LINES_MAX
 * always do).
 */
#define IBW_CTR_STATE_LINES_MAX 16384
size_t ibw_ctr_state_port_text(char *buf, size_t cap,
			       const struct ibw_port_ctrs *p);
/* A "p" line into *@p (zeroed first): 0, or -1 if it does not parse. */
int ibw_ctr_state_parse_port(const char *line, struct ibw_port_ctrs *p);
/* An "f" ("g") line into a new record with one reference; NULL if it
 * does not parse or on ENOMEM. */
struct ibw_fec *ibw_ctr_state_parse_fec(const char *line);
struct ibw_cong *ibw_ctr_state_parse_cong(const char *line);

#endif
