// SPDX-License-Identifier: BSD-2-Clause
/*
 * Test tool: an echo responder that claims another port GUID, to check
 * that a trace notices when the port answering at a LID is not the one
 * expected (a duplicate or stale LID); or, with "silent", one that takes
 * echo requests and never answers, so that pings to its port time out
 * for real (ibsim hands a MAD it cannot deliver straight back).
 * Runs until SIGTERM, then prints how many echo requests it took.
 *
 *   fake_responder 0xGUID | silent
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "echo.h"
#include "engine.h"
#include "umad.h"

static uint64_t claimed;
static int silent;
static uint16_t my_lid;
static struct ibw_engine *eng;
static volatile sig_atomic_t stop;
static unsigned long requests; /* echo requests taken */

static int on_request(const struct ibw_rx *rx, void *arg)
{
	uint8_t mad[IBW_MAD_SIZE];
	struct ibw_mad_addr to;

	if (rx->len < IBW_MAD_SIZE)
		return 1;
	if (rx->mad[1] == IBW_CLASS_VENDOR_ECHO)
		requests++;
	if (silent)
		return 1;
	memcpy(mad, rx->mad, IBW_MAD_SIZE);
	if (ibw_echo_answer(mad, IBW_MAD_SIZE, "fake", my_lid, claimed) < 0)
		return 1;
	to = rx->from;
	to.qpn = to.qpn ? to.qpn : 1;
	to.qkey = IBW_QP1_QKEY;
	ibw_engine_send_raw(eng, &to, mad, IBW_MAD_SIZE);
	return 1;
}

static void on_term(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	struct ibw_local_port lp;
	struct ibw_transport *t;
	struct ibw_loop *loop;
	char err[256];

	if (argc != 2)
		return 2;
	silent = !strcmp(argv[1], "silent");
	claimed = silent ? 0 : strtoull(argv[1], NULL, 0);
	signal(SIGTERM, on_term);
	if (ibw_umad_open2(NULL, 0, 1, &t, &lp, err, sizeof(err)) < 0) {
		fprintf(stderr, "fake_responder: %s\n", err);
		return 1;
	}
	if (lp.echo_refused) {
		fprintf(stderr, "fake_responder: another agent serves echo "
				"requests on this port\n");
		ibw_transport_close(t);
		return 1;
	}
	my_lid = lp.lid;
	loop = ibw_loop_new();
	eng = ibw_engine_new(loop, t, NULL);
	ibw_engine_set_request_handler(eng, on_request, NULL);
	while (!stop)
		ibw_loop_run_once(loop, 200000);
	ibw_engine_free(eng);
	ibw_transport_close(t);
	ibw_loop_free(loop);
	printf("fake_responder: %lu requests\n", requests);
	return 0;
}
