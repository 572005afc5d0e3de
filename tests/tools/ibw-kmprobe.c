// SPDX-License-Identifier: BSD-2-Clause
/*
 * Probes for the kernel model (tests/preload/ibw_kmodel.c), straight on
 * libibumad so that nothing between the test and the MAD layer retries
 * or matches on its own. Each prints key=value lines for
 * tests/integration/kmodel.sh.
 *
 *   ibw-kmprobe rule LID         NodeInfo with timeout 0, then with a
 *                                timeout; a hop-0 directed-route one
 *                                with timeout 0
 *   ibw-kmprobe lost LID MS TRIES
 *                                one NodeInfo that gets no answer: when
 *                                and how the report comes
 *   ibw-kmprobe burst LID N      N NodeInfo requests at once, all read
 *   ibw-kmprobe death            the device dies on cue (dead.<pid>)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/umad.h>

#define MAD_SIZE 256
#define ATTR_NODE_INFO 0x0011

static int fd = -1, lid_agent = -1, dr_agent = -1;
static uint8_t sendbuf[512], recvbuf[512];

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int open_port(void)
{
	if (umad_init() < 0)
		return -1;
	fd = umad_open_port(NULL, 0);
	if (fd < 0)
		return -1;
	/* Client agents: no methods, so they conflict with nobody. */
	lid_agent = umad_register(fd, 0x01, 1, 0, NULL);
	dr_agent = umad_register(fd, 0x81, 1, 0, NULL);
	return lid_agent < 0 || dr_agent < 0 ? -1 : 0;
}

/* A NodeInfo Get, LID-routed to lid, or directed-route over no hop at
 * all when lid is 0 (the local port answers it). */
static int send_nodeinfo(unsigned lid, uint32_t tid, int timeout, int tries)
{
	uint8_t *mad = umad_get_mad(sendbuf);

	memset(sendbuf, 0, sizeof(sendbuf));
	mad[0] = 1; /* base version */
	mad[1] = lid ? 0x01 : 0x81; /* class */
	mad[2] = 1; /* class version */
	mad[3] = 0x01; /* Get */
	mad[12] = (uint8_t)(tid >> 24);
	mad[13] = (uint8_t)(tid >> 16);
	mad[14] = (uint8_t)(tid >> 8);
	mad[15] = (uint8_t)tid;
	mad[16] = ATTR_NODE_INFO >> 8;
	mad[17] = ATTR_NODE_INFO & 0xff;
	if (!lid) {
		/* DrSLID and DrDLID permissive: the whole path is directed */
		mad[32] = mad[33] = mad[34] = mad[35] = 0xff;
		umad_set_addr(sendbuf, 0xffff, 0, 0, 0);
	} else {
		umad_set_addr(sendbuf, (int)lid, 0, 0, 0);
	}
	return umad_send(fd, lid ? lid_agent : dr_agent, sendbuf, MAD_SIZE,
			 timeout, tries);
}

static uint32_t tid_of(const uint8_t *umad)
{
	const uint8_t *mad = umad_get_mad((void *)umad);

	return (uint32_t)mad[12] << 24 | (uint32_t)mad[13] << 16 |
	       (uint32_t)mad[14] << 8 | mad[15];
}

/* Wait up to ms for a MAD with this TID. Returns its MAD length, -1 when
 * none came; *status gets the umad status. */
static int wait_tid(uint32_t tid, int ms, int *status)
{
	double end = now_ms() + ms;

	for (;;) {
		int left = (int)(end - now_ms()), len = MAD_SIZE;

		if (left <= 0)
			return -1;
		if (umad_recv(fd, recvbuf, &len, left) < 0)
			continue;
		if (tid_of(recvbuf) == tid) {
			*status = umad_status(recvbuf);
			return len;
		}
	}
}

static int cmd_rule(unsigned lid)
{
	int st, len;

	if (send_nodeinfo(lid, 0x1001, 0, 0) < 0)
		return 1;
	len = wait_tid(0x1001, 500, &st);
	printf("timeout0=%s\n", len < 0 ? "none" : "answer");
	if (send_nodeinfo(lid, 0x1002, 1000, 0) < 0)
		return 1;
	len = wait_tid(0x1002, 2000, &st);
	printf("timeout1000=%s\n", len > 0 && !st ? "answer" : "none");
	if (send_nodeinfo(0, 0x1003, 0, 0) < 0)
		return 1;
	len = wait_tid(0x1003, 1000, &st);
	printf("dr_hop0_timeout0=%s\n", len > 0 && !st ? "answer" : "none");
	return 0;
}

static int cmd_lost(unsigned lid, int ms, int tries)
{
	double t0;
	int st = 0, len;

	t0 = now_ms();
	if (send_nodeinfo(lid, 0x2001, ms, tries - 1) < 0)
		return 1;
	len = wait_tid(0x2001, ms * tries * 3 + 1000, &st);
	printf("elapsed_ms=%.1f\nlen=%d\nstatus=%d\n", now_ms() - t0, len, st);
	return 0;
}

static int cmd_burst(unsigned lid, int n)
{
	double t0 = now_ms();
	int i, got = 0;

	for (i = 0; i < n; i++)
		if (send_nodeinfo(lid, 0x3000 + (uint32_t)i, 5000, 0) < 0)
			return 1;
	while (got < n) {
		int len = MAD_SIZE;

		if (umad_recv(fd, recvbuf, &len, 10000) < 0)
			break;
		if (!umad_status(recvbuf))
			got++;
	}
	printf("answered=%d\nelapsed_ms=%.1f\n", got, now_ms() - t0);
	return 0;
}

static const char *err_name(int e)
{
	switch (e) {
	case 0:
		return "none";
	case EIO:
		return "EIO";
	case ENODEV:
		return "ENODEV";
	case EAGAIN:
		return "EAGAIN";
	default:
		return strerror(e);
	}
}

static int cmd_death(void)
{
	const char *dir = getenv("IBW_KM_STATE_DIR");
	char path[512];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	double t0;
	int rc, f;
	ssize_t n;

	if (!dir)
		return 1;
	snprintf(path, sizeof(path), "%s/dead.%d", dir, (int)getpid());
	/* Alive first: a poll with nothing to read times out. */
	rc = poll(&p, 1, 100);
	printf("alive_poll=%d\n", rc);
	f = open(path, O_WRONLY | O_CREAT, 0644);
	if (f < 0)
		return 1;
	close(f);
	t0 = now_ms();
	rc = poll(&p, 1, 5000);
	printf("dead_poll=%d\ndead_revents=0x%x\ndead_poll_ms=%.1f\n", rc,
	       p.revents, now_ms() - t0);
	errno = 0;
	n = read(fd, recvbuf, sizeof(recvbuf));
	printf("read=%zd\nread_errno=%s\n", n, err_name(n < 0 ? errno : 0));
	errno = 0;
	n = write(fd, sendbuf, 64 + MAD_SIZE);
	printf("write=%zd\nwrite_errno=%s\n", n, err_name(n < 0 ? errno : 0));
	errno = 0;
	f = open("/dev/infiniband/umad0", O_RDWR | O_NONBLOCK);
	printf("open_dead_errno=%s\n", err_name(f < 0 ? errno : 0));
	unlink(path);
	/* The model looks for the file at most every 20 ms. */
	usleep(50000);
	errno = 0;
	f = open("/dev/infiniband/umad0", O_RDWR | O_NONBLOCK);
	printf("open_after_errno=%s\n", err_name(f < 0 ? errno : 0));
	errno = 0;
	n = read(fd, recvbuf, sizeof(recvbuf));
	printf("old_fd_read_errno=%s\n", err_name(n < 0 ? errno : 0));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || open_port() < 0) {
		fprintf(stderr, "usage: ibw-kmprobe rule|lost|burst|death ... "
				"(on a simulated node)\n");
		return 2;
	}
	if (!strcmp(argv[1], "rule") && argc == 3)
		return cmd_rule((unsigned)strtoul(argv[2], NULL, 0));
	if (!strcmp(argv[1], "lost") && argc == 5)
		return cmd_lost((unsigned)strtoul(argv[2], NULL, 0),
				atoi(argv[3]), atoi(argv[4]));
	if (!strcmp(argv[1], "burst") && argc == 4)
		return cmd_burst((unsigned)strtoul(argv[2], NULL, 0),
				 atoi(argv[3]));
	if (!strcmp(argv[1], "death"))
		return cmd_death();
	fprintf(stderr, "ibw-kmprobe: bad arguments\n");
	return 2;
}
