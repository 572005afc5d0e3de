// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec.h"
#include "echo.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

uint32_t ibw_echo_timestamp(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
		return 0x80000000u;
	return (uint32_t)((ts.tv_sec % 86400) * 1000 + ts.tv_nsec / 1000000);
}

void ibw_echo_host_domain(char *buf, size_t len)
{
	size_t n;

	if (gethostname(buf, len) < 0)
		buf[0] = '\0';
	buf[len - 1] = '\0';
	n = strlen(buf);
	if (n + 2 < len && getdomainname(buf + n + 1, len - n - 1) == 0 &&
	    buf[n + 1] && strcmp(buf + n + 1, "(none)")) {
		buf[n] = '.';
		buf[len - 1] = '\0';
	}
}

void ibw_echo_request(uint8_t payload[IBW_ECHO_PAYLOAD],
		      enum ibw_echo_type type, uint16_t id, uint16_t seq,
		      const void *data, size_t len)
{
	memset(payload, 0, IBW_ECHO_PAYLOAD);
	if (type == IBW_ECHO_IBPING)
		return; /* all zeros, as ibping sends */
	payload[0] = (uint8_t)type;
	put16(payload + 4, id);
	put16(payload + 6, seq);
	if (type == IBW_ECHO_REQ && data) {
		if (len > IBW_ECHO_DATA_MAX)
			len = IBW_ECHO_DATA_MAX;
		memcpy(payload + 8, data, len);
	} else if (type == IBW_TS_REQ) {
		put32(payload + 8, ibw_echo_timestamp());
	}
}

static int is_our_class(const uint8_t *mad, size_t len)
{
	return len >= 256 && mad[0] == 1 && mad[1] == 0x32 &&
	       ibw_mad_get(mad, IB_MAD_ATTRID_F) == 0 &&
	       ibw_mad_get(mad, IB_VEND2_OUI_F) == IBW_ECHO_OUI;
}

int ibw_echo_parse_reply(const uint8_t *mad, size_t len,
			 struct ibw_echo_reply *r)
{
	const uint8_t *p = mad + IBW_ECHO_OFFS;
	size_t i;

	memset(r, 0, sizeof(*r));
	if (!mad || !is_our_class(mad, len) || !(mad[3] & 0x80))
		return -EINVAL;
	r->type = p[0];
	r->id = get16(p + 4);
	r->seq = get16(p + 6);
	switch (r->type) {
	case IBW_ECHO_RESP:
		r->data = p + 8;
		return 0;
	case IBW_TS_RESP:
		r->ts_orig = get32(p + 8);
		r->ts_recv = get32(p + 12);
		r->ts_xmit = get32(p + 16);
		return 0;
	case IBW_INFO_RESP:
		r->lid = get16(p + 8);
		r->port_guid = (uint64_t)get32(p + 10) << 32 | get32(p + 14);
		return 0;
	}
	/* Anything else: an ibping -S style answer, its host name over the
	 * whole payload. Keep the printable part. */
	r->type = IBW_ECHO_IBPING;
	r->id = r->seq = 0;
	for (i = 0; i < IBW_ECHO_PAYLOAD && p[i]; i++)
		r->host[i] = (p[i] >= 0x20 && p[i] < 0x7f) ? (char)p[i] : '?';
	r->host[i] = '\0';
	return 0;
}

int ibw_echo_answer(uint8_t *mad, size_t len, const char *host_domain,
		    uint16_t lid, uint64_t port_guid)
{
	uint8_t *p = mad + IBW_ECHO_OFFS;
	uint32_t now;
	size_t n;

	if (!mad || !is_our_class(mad, len) || mad[3] != 0x01 || mad[2] != 1 ||
	    ibw_mad_get(mad, IB_MAD_STATUS_F))
		return -EINVAL;
	switch (p[0]) {
	case IBW_ECHO_IBPING:
		n = strlen(host_domain);
		if (n > IBW_ECHO_PAYLOAD - 1)
			n = IBW_ECHO_PAYLOAD - 1;
		memset(p, 0, IBW_ECHO_PAYLOAD);
		memcpy(p, host_domain, n);
		break;
	case IBW_ECHO_REQ:
		p[0] = IBW_ECHO_RESP; /* id, seq and data stay as they came */
		break;
	case IBW_TS_REQ:
		now = ibw_echo_timestamp();
		p[0] = IBW_TS_RESP;
		put32(p + 12, now); /* received */
		put32(p + 16, ibw_echo_timestamp()); /* transmitted */
		break;
	case IBW_INFO_REQ:
		p[0] = IBW_INFO_RESP;
		put16(p + 8, lid);
		put32(p + 10, (uint32_t)(port_guid >> 32));
		put32(p + 14, (uint32_t)port_guid);
		break;
	default:
		return -EINVAL;
	}
	/* GetResp, status 0; TID, class, attribute and OUI stay. */
	mad[3] = 0x81;
	mad[4] = mad[5] = 0;
	return 0;
}
