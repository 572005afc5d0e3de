/* SPDX-License-Identifier: BSD-2-Clause */
/* Test helper: a console command to the simulator of this test
 * (IBW_SIMFABRIC, IBW_SIM_DIR from with-fabric.sh). 0 or -1. */
#ifndef IBW_TEST_SIMCON_H
#define IBW_TEST_SIMCON_H

int sim_console(const char *line);

#endif
