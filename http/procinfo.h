/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * This process as every Prometheus client library describes it (the
 * process_* series): CPU time, memory, file descriptors and start time,
 * read from /proc/self and getrlimit().
 */
#ifndef IBW_PROCINFO_H
#define IBW_PROCINFO_H

#include <stdint.h>

struct ibw_procinfo {
	double cpu_seconds; /* user and system */
	double start_time; /* Unix time, seconds */
	uint64_t resident_bytes, virtual_bytes;
	uint64_t open_fds;
	uint64_t max_fds; /* RLIMIT_NOFILE's soft limit */
	double virtual_max_bytes; /* RLIMIT_AS; 2^64 - 1 unlimited */
};

/* 0, or a negative errno when /proc could not be read (*@pi then holds
 * what could be: the limits). */
int ibw_procinfo_read(struct ibw_procinfo *pi);

#endif
