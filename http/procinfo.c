// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "procinfo.h"

/* /proc/stat's btime: the boot time, in Unix seconds; 0 if unknown. */
static unsigned long long boot_time(void)
{
	unsigned long long bt = 0;
	char line[256];
	FILE *f = fopen("/proc/stat", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %llu", &bt) == 1)
			break;
	fclose(f);
	return bt;
}

static uint64_t count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	uint64_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	/* less the one opendir() holds */
	return n ? n - 1 : 0;
}

int ibw_procinfo_read(struct ibw_procinfo *pi)
{
	unsigned long long utime, stime, start, vsize;
	long long rss;
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	char buf[1024], *p;
	struct rlimit rl;
	size_t n;
	FILE *f;

	memset(pi, 0, sizeof(*pi));
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		pi->max_fds = rl.rlim_cur;
	if (getrlimit(RLIMIT_AS, &rl) == 0)
		pi->virtual_max_bytes = rl.rlim_cur == RLIM_INFINITY
						? 18446744073709551615.0
						: (double)rl.rlim_cur;
	f = fopen("/proc/self/stat", "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* After the command's ")", which may hold spaces and parentheses:
	 * state is field 3; utime 14, stime 15, starttime 22, vsize 23,
	 * rss 24 (proc(5)). */
	p = strrchr(buf, ')');
	if (!p || tick <= 0 || page <= 0 ||
	    sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d "
		   "%*d %*d %*d %*d %*d %llu %llu %lld",
		   &utime, &stime, &start, &vsize, &rss) != 5)
		return -EINVAL;
	pi->cpu_seconds = (double)(utime + stime) / (double)tick;
	pi->start_time = (double)boot_time() + (double)start / (double)tick;
	pi->virtual_bytes = vsize;
	pi->resident_bytes = rss > 0 ? (uint64_t)rss * (uint64_t)page : 0;
	pi->open_fds = count_fds();
	return 0;
}
