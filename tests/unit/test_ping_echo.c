// SPDX-License-Identifier: BSD-2-Clause
/*
 * The echo wire format: a request answered and parsed back, the
 * timestamp and host info, ibping's own MADs, malformed requests refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec.h"
#include "echo.h"

#include "ping_fx.h"

void request(uint8_t *m, enum ibw_echo_type type, uint16_t id, uint16_t seq,
	     const char *data)
{
	memset(m, 0, 256);
	m[0] = 1;
	m[1] = 0x32;
	m[2] = 1;
	m[3] = 0x01;
	mad_set_field64(m, 0, IB_MAD_TRID_F, 0x1234);
	mad_set_field(m, 0, IB_VEND2_OUI_F, IBW_ECHO_OUI);
	ibw_echo_request(m + IBW_ECHO_OFFS, type, id, seq, data,
			 data ? strlen(data) : 0);
}

void test_echo_roundtrip(void **state)
{
	uint8_t m[256];
	struct ibw_echo_reply r;

	request(m, IBW_ECHO_REQ, 7, 9, "hello fabric");
	assert_int_equal(ibw_echo_answer(m, 256, "h.d", 5, 0x1122), 0);
	assert_int_equal(m[3], 0x81);
	assert_true(ibw_mad_get64(m, IB_MAD_TRID_F) == 0x1234);
	assert_int_equal(ibw_echo_parse_reply(m, 256, &r), 0);
	assert_int_equal(r.type, IBW_ECHO_RESP);
	assert_int_equal(r.id, 7);
	assert_int_equal(r.seq, 9);
	assert_memory_equal(r.data, "hello fabric", 12);
}

void test_timestamp_and_info(void **state)
{
	uint8_t m[256];
	struct ibw_echo_reply r;

	uint32_t before, after;

	before = ibw_echo_timestamp();
	request(m, IBW_TS_REQ, 1, 2, NULL);
	assert_int_equal(ibw_echo_answer(m, 256, "h", 5, 0x1122), 0);
	after = ibw_echo_timestamp();
	assert_int_equal(ibw_echo_parse_reply(m, 256, &r), 0);
	assert_int_equal(r.type, IBW_TS_RESP);
	/* Every stamp is a time of this test, in ms since midnight UTC
	 * (unless midnight fell inside it: then only the order is known). */
	if (before <= after) {
		assert_true(r.ts_orig >= before && r.ts_orig <= after);
		assert_true(r.ts_recv >= r.ts_orig && r.ts_recv <= after);
		assert_true(r.ts_xmit >= r.ts_recv && r.ts_xmit <= after);
	}
	assert_true(r.ts_xmit < 86400000u);

	request(m, IBW_INFO_REQ, 1, 2, NULL);
	assert_int_equal(
		ibw_echo_answer(m, 256, "h", 0xbeef, 0x0002c90300a00001ull), 0);
	assert_int_equal(ibw_echo_parse_reply(m, 256, &r), 0);
	assert_int_equal(r.type, IBW_INFO_RESP);
	assert_int_equal(r.lid, 0xbeef);
	assert_true(r.port_guid == 0x0002c90300a00001ull);
}

void test_ibping_compatible(void **state)
{
	uint8_t m[256];
	struct ibw_echo_reply r;
	int i;

	/* ibping sends zeros from byte 40; the answer is host.domain. */
	request(m, IBW_ECHO_IBPING, 0, 0, NULL);
	for (i = IBW_ECHO_OFFS; i < 256; i++)
		assert_int_equal(m[i], 0);
	assert_int_equal(ibw_echo_answer(m, 256, "node0002.cluster", 5, 1), 0);
	assert_string_equal((char *)m + IBW_ECHO_OFFS, "node0002.cluster");
	assert_int_equal(ibw_echo_parse_reply(m, 256, &r), 0);
	assert_int_equal(r.type, IBW_ECHO_IBPING);
	assert_string_equal(r.host, "node0002.cluster");
	/* ibping -S answering one of our typed requests: its host name
	 * overwrites the type byte. */
	request(m, IBW_ECHO_REQ, 3, 4, "x");
	m[3] = 0x81;
	strcpy((char *)m + IBW_ECHO_OFFS, "vm.(none)");
	assert_int_equal(ibw_echo_parse_reply(m, 256, &r), 0);
	assert_int_equal(r.type, IBW_ECHO_IBPING);
	assert_string_equal(r.host, "vm.(none)");
}

void test_malformed_requests_refused(void **state)
{
	uint8_t m[256];

	request(m, IBW_ECHO_REQ, 1, 1, NULL);
	m[1] = 0x33; /* another class */
	assert_int_equal(ibw_echo_answer(m, 256, "h", 1, 1), -EINVAL);
	request(m, IBW_ECHO_REQ, 1, 1, NULL);
	mad_set_field(m, 0, IB_VEND2_OUI_F, 0x0002c9);
	assert_int_equal(ibw_echo_answer(m, 256, "h", 1, 1), -EINVAL);
	request(m, IBW_ECHO_REQ, 1, 1, NULL);
	m[3] = 0x02; /* Set */
	assert_int_equal(ibw_echo_answer(m, 256, "h", 1, 1), -EINVAL);
	request(m, IBW_ECHO_REQ, 1, 1, NULL);
	m[3] = 0x81; /* a response, not a request */
	assert_int_equal(ibw_echo_answer(m, 256, "h", 1, 1), -EINVAL);
	request(m, IBW_ECHO_REQ, 1, 1, NULL);
	m[IBW_ECHO_OFFS] = 2; /* a response type in a request */
	assert_int_equal(ibw_echo_answer(m, 256, "h", 1, 1), -EINVAL);
	request(m, IBW_ECHO_REQ, 1, 1, NULL);
	mad_set_field(m, 0, IB_MAD_ATTRID_F, 5);
	assert_int_equal(ibw_echo_answer(m, 256, "h", 1, 1), -EINVAL);
	request(m, IBW_ECHO_REQ, 1, 1, NULL);
	assert_int_equal(ibw_echo_answer(m, 100, "h", 1, 1), -EINVAL);
	assert_int_equal(ibw_echo_answer(NULL, 256, "h", 1, 1), -EINVAL);
}
