// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sdnotify.h"

int ibw_sd_notify(const char *state)
{
	const char *addr = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	socklen_t salen;
	size_t n;
	ssize_t sent;
	int fd, err;

	if (!addr || !*addr)
		return 0;
	if (addr[0] != '/' && addr[0] != '@')
		return -EAFNOSUPPORT;
	n = strlen(addr);
	/* A path needs its terminating NUL in sun_path; an abstract name
	 * is the NUL that replaces the '@' and exactly the bytes after it:
	 * the address length, not a NUL, ends it. */
	if (n > sizeof(sa.sun_path) - (addr[0] == '/'))
		return -ENAMETOOLONG;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, addr, n);
	if (addr[0] == '@')
		sa.sun_path[0] = '\0';
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
			    (addr[0] == '/'));

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL,
		      (const struct sockaddr *)&sa, salen);
	err = errno;
	close(fd);
	if (sent < 0)
		return -err;
	return 1;
}
