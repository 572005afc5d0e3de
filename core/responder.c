// SPDX-License-Identifier: BSD-2-Clause
#include <stdlib.h>
#include <string.h>

#include "echo.h"
#include "log.h"
#include "ratelimit.h"
#include "responder.h"

#define BUCKETS 256 /* per-source token buckets, by LID hash */

struct bucket {
	uint16_t lid;
	int used;
	struct ibw_ratelimit rl;
};

struct ibw_responder {
	struct ibw_engine *e;
	uint16_t lid;
	uint64_t port_guid;
	unsigned rate; /* answers a second per source; bursts of twice that */
	char host[IBW_ECHO_PAYLOAD];
	struct bucket b[BUCKETS];
	struct ibw_responder_stats st;
};

static int allow(struct ibw_responder *r, uint16_t src)
{
	struct bucket *b = &r->b[(src * 2654435761u) >> 24 & (BUCKETS - 1)];
	uint64_t now = ibw_now_us();

	if (b->lid != src || !b->used) {
		/* A new source takes the slot (two sources sharing one
		 * bucket only makes the limit stricter for both). */
		b->lid = src;
		b->used = 1;
		ibw_ratelimit_init(&b->rl, r->rate, 1000000, 2 * r->rate, now);
	}
	return ibw_ratelimit_take(&b->rl, now);
}

int ibw_responder_handle(struct ibw_responder *r, const struct ibw_rx *rx)
{
	uint8_t mad[IBW_MAD_SIZE];
	struct ibw_mad_addr to;

	if (!rx->mad || rx->len < IBW_MAD_SIZE || rx->mad[1] != 0x32) {
		r->st.malformed++;
		return 0;
	}
	memcpy(mad, rx->mad, IBW_MAD_SIZE);
	if (ibw_echo_answer(mad, IBW_MAD_SIZE, r->host, r->lid, r->port_guid) <
	    0) {
		r->st.malformed++;
		return 0;
	}
	if (!allow(r, rx->from.lid)) {
		r->st.rate_limited++;
		return 0;
	}
	/* Back the way it came: same SL, P_Key index and, when it had one,
	 * global route (the kernel fills these in on receive). */
	to = rx->from;
	to.qpn = rx->from.qpn ? rx->from.qpn : 1;
	to.qkey = IBW_QP1_QKEY;
	if (ibw_engine_send_raw(r->e, &to, mad, IBW_MAD_SIZE) < 0) {
		r->st.send_errors++;
		return 0;
	}
	r->st.answered++;
	return 1;
}

static int on_request(const struct ibw_rx *rx, void *arg)
{
	/* Every request we are handed is ours to take: answered or
	 * dropped as malformed, it has been dealt with. */
	ibw_responder_handle(arg, rx);
	return 1;
}

struct ibw_responder *ibw_responder_new(struct ibw_engine *e, uint16_t lid,
					uint64_t port_guid, unsigned rate)
{
	struct ibw_responder *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->e = e;
	r->lid = lid;
	r->port_guid = port_guid;
	r->rate = rate ? rate : 200;
	ibw_echo_host_domain(r->host, sizeof(r->host));
	ibw_engine_set_request_handler(e, on_request, r);
	return r;
}

void ibw_responder_free(struct ibw_responder *r)
{
	if (!r)
		return;
	ibw_engine_set_request_handler(r->e, NULL, NULL);
	free(r);
}

void ibw_responder_set_lid(struct ibw_responder *r, uint16_t lid)
{
	r->lid = lid;
}

void ibw_responder_get_stats(const struct ibw_responder *r,
			     struct ibw_responder_stats *st)
{
	*st = r->st;
}
