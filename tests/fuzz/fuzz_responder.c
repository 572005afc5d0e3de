// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target: the echo responder's handling of a received request (any
 * MAD a stranger sends to our vendor class), and the echo reply parser.
 */
#include <stdint.h>
#include <string.h>

#include "echo.h"
#include "engine.h"
#include "loop.h"
#include "responder.h"
#include "transport_mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ibw_loop *loop;
	static struct ibw_transport *t;
	static struct ibw_engine *e;
	static struct ibw_responder *r;
	struct ibw_echo_reply rep;
	struct ibw_rx rx;
	uint8_t mad[IBW_MAD_SIZE], out[IBW_MAD_SIZE];

	if (!loop) {
		/* Kept across inputs, like the daemon's: its per-source
		 * rate limit state is part of what is fuzzed. */
		loop = ibw_loop_new();
		t = ibw_mem_transport_new();
		e = ibw_engine_new(loop, t, NULL);
		r = ibw_responder_new(e, 9, 0x99, 1000000);
	}
	memset(&rx, 0, sizeof(rx));
	rx.mad = data;
	rx.len = size;
	rx.from.lid = size >= 2 ? (uint16_t)(data[0] | data[1] << 8) : 1;
	ibw_responder_handle(r, &rx);
	while (ibw_mem_next_sent(t, out, NULL))
		;
	ibw_echo_parse_reply(data, size, &rep);
	if (size <= sizeof(mad)) {
		memcpy(mad, data, size);
		ibw_echo_answer(mad, size, "host.example", 1, 2);
	}
	return 0;
}
