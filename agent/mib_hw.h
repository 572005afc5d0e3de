/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * IBWATCH-MIB's hardware tables (agent/mib_hw.c): ibwHwDeviceTable,
 * ibwHwSensorTable, ibwHwFanTable and ibwHwPsuTable, from a snapshot's
 * hardware view (core/hw.h), indexed by the node's ibwNodeIndex.
 */
#ifndef IBW_MIB_HW_H
#define IBW_MIB_HW_H

#include "mib_int.h"

/* ibwHwDeviceTable's columns */
enum {
	HW_COL_NODE_GUID = 1,
	HW_COL_STATE,
	HW_COL_FIRMWARE,
	HW_COL_PSID,
	HW_COL_SERIAL,
	HW_COL_PART,
	HW_COL_UPTIME,
	HW_COL_FANS_FAILED,
	HW_COL_PSUS_FAILED,
	HW_COL_NODE_NAME,
};

/* The four tables' rows of m->snap's hardware view: 0 or -ENOMEM. */
int mib_hw_index(struct ibw_mib *m);
void mib_hw_drop(struct ibw_mib *m);
/* ... and what holds them, when the MIB goes */
void mib_hw_free(struct ibw_mib *m);

/* ibwHwDeviceTable .. ibwHwPsuTable (arcs 10 to 13), after mib_tables */
extern const struct table mib_hw_tables[];
extern const unsigned mib_hw_ntables;

#endif
