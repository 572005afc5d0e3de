/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel and fabric model's NodeDescriptions (docs/testing.md): on a
 * real host root writes any 64 bytes to
 * /sys/class/infiniband/DEV/node_desc (the kernel copies them as they
 * are, a newline or a NUL included), while ibsim takes a description
 * from the net file, which cannot hold a double quote, a newline or a
 * NUL. $IBW_KM_STATE_DIR/nodedesc rewrites the answers, one node a line:
 *
 *   HEX ORIGINAL
 *
 * HEX: the new 64-byte field in hexadecimal (shorter: NUL-padded);
 * ORIGINAL: the rest of the line, the description ibsim gives the node.
 * A NodeDescription answer (SMP, LID- or directed-route) whose field
 * holds ORIGINAL gets HEX instead. Read again when the file changes.
 */
#ifndef IBW_KM_DESC_H
#define IBW_KM_DESC_H

#include <stdint.h>

/* The state directory the file is in ("" or NULL: none). */
void kmd_init(const char *state_dir);

/* @field: an answer's 64-byte NodeDescription, rewritten in place if the
 * file names it. 1 if it was. */
int kmd_answer(uint8_t *field);

#endif
