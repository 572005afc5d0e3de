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

struct ibw_port_ctrs;
struct ibw_links;

/* Write the @n records @ports points at, and the windows of @links
 * (NULL: none; core/links.h), to @path atomically: a temporary file
 * beside it, fsynced, renamed over it. 0 or a negative errno. */
int ibw_ctr_state_save(const char *path,
		       const struct ibw_port_ctrs *const *ports, unsigned n,
		       const struct ibw_links *links);

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

#endif
