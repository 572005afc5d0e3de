/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * IBWATCH-MIB's row indexes (docs/mib.md, "Indexes"): an integer per
 * node GUID (ibwNodeIndex) and per (node GUID, port number)
 * (ibwPortIndex), given the first time the agent sees the node or port,
 * in (GUID, port) order within one snapshot, and never given to another.
 * They live in a file of their own beside the state file, rewritten
 * (written aside, then renamed) whenever a new one is given, so a port
 * keeps its row across restarts of the agent and while it is gone.
 */
#ifndef IBW_MIB_ROWS_H
#define IBW_MIB_ROWS_H

#include <stdint.h>

struct mib_rows;

/* The indexes kept at @path (NULL: none kept; given afresh at every
 * start). A file that is missing starts empty; one that cannot be read
 * is logged and starts empty too. NULL on ENOMEM. */
struct mib_rows *mib_rows_new(const char *path);
void mib_rows_free(struct mib_rows *r);

/* The index of node @guid, or of its port @port, given now when it
 * has none; 0 only when memory ran out. */
uint32_t mib_rows_node(struct mib_rows *r, uint64_t guid);
uint32_t mib_rows_port(struct mib_rows *r, uint64_t guid, unsigned port);

/* The index of @guid's port @port, 0 when it has none (nothing given). */
uint32_t mib_rows_find_port(const struct mib_rows *r, uint64_t guid,
			    unsigned port);

/* Write the file when an index was given since the last write: 0, or a
 * negative errno (logged; the indexes stay in memory and the next call
 * tries again). */
int mib_rows_save(struct mib_rows *r);

#endif
