// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target: the HTTP server's request handling, path and query
 * parsing included, as a client reaches it: the input is sent as raw
 * bytes on a loopback connection to the server (libmicrohttpd's
 * threads parse the request line and headers, our routes parse the
 * path and the query; on-demand probes are handed to the agent's loop,
 * which the target runs). The monitor behind it has no fabric;
 * on-demand traces and pings go to the in-memory transport and are never
 * answered, so they end at their deadlines.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine.h"
#include "loop.h"
#include "monitor.h"
#include "server.h"
#include "transport_mem.h"

static struct ibw_loop *loop;
static struct ibw_http *http;
static int port;

static void setup(void)
{
	static char addr[32];
	struct ibw_transport *t = ibw_mem_transport_new();
	struct ibw_engine *e;
	struct ibw_monitor *m;
	struct ibw_monitor_opts mo;
	struct ibw_http_opts ho;
	char err[256];
	int try;

	loop = ibw_loop_new();
	e = ibw_engine_new(loop, t, NULL);
	memset(&mo, 0, sizeof(mo));
	mo.discover.retries = -1;
	mo.counters.retries = -1;
	mo.ping.retries = -1;
	m = ibw_monitor_new(e, &mo, err, sizeof(err));
	for (try = 0; m && !http && try < 20; try++) {
		port = 20000 + (int)((getpid() * 7 + try * 131) % 20000);
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
		memset(&ho, 0, sizeof(ho));
		ho.listen[0] = addr;
		ho.nlisten = 1;
		ho.ondemand_per_minute = 1000000;
		http = ibw_http_new(loop, m, e, &ho, err, sizeof(err));
	}
	if (!http) {
		fprintf(stderr, "fuzz_http: no server: %s\n", err);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in sa;
	char buf[65536];
	int fd, i, eof = 0, got = 0, idle = 0;

	if (!loop)
		setup();
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
	    errno != EINPROGRESS) {
		close(fd);
		return 0;
	}
	ibw_loop_run_once(loop, 0);
	if (size > 65536)
		size = 65536;
	/* Send what fits while the server reads; then say we are done. */
	for (i = 0; size && i < 200; i++) {
		ssize_t n = send(fd, data, size, MSG_NOSIGNAL);

		if (n > 0) {
			data += n;
			size -= (size_t)n;
		} else if (n < 0 && errno != EAGAIN) {
			break;
		}
		ibw_loop_run_once(loop, 0);
	}
	shutdown(fd, SHUT_WR);
	/* Read the answer until the server closes, or until it has said
	 * something and then stayed quiet (an on-demand probe waiting for
	 * its deadline), bounded. */
	for (i = 0; !eof && i < 300 && idle < 20; i++) {
		ssize_t n;

		ibw_loop_run_once(loop, 1000);
		while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
			got = 1;
		if (n == 0 || (n < 0 && errno != EAGAIN))
			eof = 1;
		idle = got ? idle + 1 : 0;
	}
	close(fd);
	ibw_loop_run_once(loop, 0);
	return 0;
}
