/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel and fabric model's silent kinds (docs/testing.md): requests
 * nobody answers, fabric-wide or at chosen LIDs, as a firmware bug, a
 * vendor PMA or a class a host never registered leaves them. The
 * environment's IBW_KM_SILENT lists them, separated by white space or
 * semicolons:
 *
 *   CLASS[:ATTR][@LIDS]
 *
 * CLASS: pma, sma (LID-routed SMPs), sa, or a number (0x04); ATTR: an
 * attribute ID (a number; none: every attribute of the class); LIDS:
 * LIDs and ranges separated by commas (5,7-9; none: every LID). A
 * LID-routed request that one names is swallowed as a dead port's is:
 * nothing goes out, and the try times out.
 */
#ifndef IBW_KM_SILENT_H
#define IBW_KM_SILENT_H

#include <stdint.h>

/* @spec (IBW_KM_SILENT; NULL or "": none) read. -1, said on stderr, when
 * an entry is malformed (the others are kept). */
int kms_init(const char *spec);

/* 1 when a LID-routed request of @cls and @attr to @lid is silent. */
int kms_silent(uint8_t cls, uint16_t attr, uint16_t lid);

#endif
