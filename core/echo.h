/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The echo protocol on vendor class 0x32, OUI 0x001405, method Get,
 * attribute 0, interoperable with infiniband-diags' ibping:
 *
 *   byte 40      Type: 0 ibping, 1/2 echo, 3/4 timestamp, 5/6 LID/GUID
 *   byte 44-45   Identifier     byte 46-47  Sequence number
 *   byte 48-255  data of the type (seed 000: endport liveness proposal)
 *
 * An ibping request is all zeros from byte 40, so Type 0 means "answer
 * like ibping -S": the responder's "hostname.domain" over bytes 40-255.
 * A plain ibping -S answers any request that way, so a reply whose Type
 * byte is not 2, 4 or 6 is taken as an ibping-style answer.
 */
#ifndef IBW_ECHO_H
#define IBW_ECHO_H

#include <stddef.h>
#include <stdint.h>

#define IBW_ECHO_OUI 0x001405u
#define IBW_ECHO_OFFS 40 /* Type */
#define IBW_ECHO_DATA_OFFS 48 /* data of the type */
#define IBW_ECHO_PAYLOAD 216 /* bytes 40-255 */
#define IBW_ECHO_DATA_MAX 208 /* bytes 48-255 */

enum ibw_echo_type {
	IBW_ECHO_IBPING = 0,
	IBW_ECHO_REQ = 1,
	IBW_ECHO_RESP = 2,
	IBW_TS_REQ = 3,
	IBW_TS_RESP = 4,
	IBW_INFO_REQ = 5,
	IBW_INFO_RESP = 6,
};

/* What a reply said. */
struct ibw_echo_reply {
	int type; /* IBW_ECHO_RESP/TS_RESP/INFO_RESP or IBW_ECHO_IBPING */
	uint16_t id, seq;
	const uint8_t *data; /* echo data (IBW_ECHO_DATA_MAX bytes) */
	uint32_t ts_orig, ts_recv, ts_xmit;
	uint16_t lid;
	uint64_t port_guid;
	char host[IBW_ECHO_PAYLOAD + 1]; /* ibping-style answers */
};

/* Fill @payload (bytes 40-255 of a request) for @type. For a timestamp
 * request the originate time is now. @data (echo) up to 208 bytes. */
void ibw_echo_request(uint8_t payload[IBW_ECHO_PAYLOAD],
		      enum ibw_echo_type type, uint16_t id, uint16_t seq,
		      const void *data, size_t len);

/* Parse the answer MAD @mad (@len bytes); 0 or -EINVAL. */
int ibw_echo_parse_reply(const uint8_t *mad, size_t len,
			 struct ibw_echo_reply *r);

/* Turn the request in @mad (@len bytes) into its answer, in place.
 * Returns 0, or -EINVAL for anything that is not a well-formed echo
 * request of ours (wrong class, method, attribute, OUI, type, length):
 * such a request is dropped, never answered. */
int ibw_echo_answer(uint8_t *mad, size_t len, const char *host_domain,
		    uint16_t lid, uint64_t port_guid);

/* Milliseconds since midnight UT; the high bit set when the clock gives
 * no such time. */
uint32_t ibw_echo_timestamp(void);

/* "hostname.domain" as ibping -S answers (no domain: just the host). */
void ibw_echo_host_domain(char *buf, size_t len);

#endif
