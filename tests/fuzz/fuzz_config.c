// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target: the config file parser (libinih and our option table):
 * the input is written to a file read with -c, as the daemon reads it.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct opts o;
	static char errs[4096];
	char path[64];
	char *argv[] = { "ibwatchd", "-c", path, NULL };
	int fd = memfd_create("ibwatch.conf", 0);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ibw_opts_load(3, argv, &o, errs, sizeof(errs));
		ibw_opts_free(&o);
	}
	close(fd);
	return 0;
}
