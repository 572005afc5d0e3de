/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A small fixture snapshot for the renderer and MIB unit tests.
 */
#ifndef IBW_SNAPFIXTURE_H
#define IBW_SNAPFIXTURE_H

#include "snapshot.h"

#define T0 1795306300000000ull /* 2026-11-22T00:11:40Z */

/* A switch (0x0002c90300000001, ports 0-3, port 3 down) and two hosts
 * (0x0002c90300000010/11, port 1); counters for switch ports 1-3 and the
 * hosts; endports for both hosts, the second down. Sealed: a test that
 * changes it seals it again (ibw_snapshot_seal). Free with
 * ibw_snapshot_unref. */
struct ibw_snapshot *ibw_test_snapshot(void);

#endif
