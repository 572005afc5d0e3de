// SPDX-License-Identifier: BSD-2-Clause
#include <stdio.h>
#include <stdlib.h>

#include "simcon.h"

int sim_console(const char *line)
{
	const char *sf = getenv("IBW_SIMFABRIC"), *dir = getenv("IBW_SIM_DIR");
	char cmd[512];

	if (!sf || !dir)
		return -1;
	/* The console helper is a shell script: no simulator preload. */
	snprintf(cmd, sizeof(cmd),
		 "env -u LD_PRELOAD \"%s\" cmd \"%s\" '%s' >/dev/null", sf, dir,
		 line);
	return system(cmd) == 0 ? 0 : -1;
}
