/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared by the ping tests: test_ping_echo.c (the echo wire format) and
 * test_ping.c (the responder, the endports' states, losses confirmed).
 */
#ifndef IBW_PING_FX_H
#define IBW_PING_FX_H

#include <stdint.h>

#include "echo.h"

/* An echo request of @type, @id, @seq and @data (NULL: none) in the
 * 256-byte MAD @m, as ibping sends it. */
void request(uint8_t *m, enum ibw_echo_type type, uint16_t id, uint16_t seq,
	     const char *data);

/* test_ping_echo.c */
void test_echo_roundtrip(void **state);
void test_timestamp_and_info(void **state);
void test_ibping_compatible(void **state);
void test_malformed_requests_refused(void **state);

#endif
