/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One end of a cable as core/links takes it, for the link unit tests
 * (test_links.c, test_link_fec.c): its PortInfo, its input and, where a
 * test gives it some, its FEC totals.
 */
#ifndef IBW_TEST_LINKSIDE_H
#define IBW_TEST_LINKSIDE_H

#include <stdint.h>
#include <string.h>

#include "fec.h"
#include "links.h"

struct side {
	struct ibw_portinfo pi;
	struct ibw_link_end_in in;
	struct ibw_fec fec;
};

/* An SDR port of @width (1x and 4x enabled), LinkUp and Active, with
 * counters; a switch's if @sw. */
static inline void mk(struct side *s, uint64_t guid, uint8_t port, int sw,
		      unsigned width)
{
	memset(s, 0, sizeof(*s));
	s->pi.state = IBW_PORT_ACTIVE;
	s->pi.phys_state = IBW_PHYS_LINKUP;
	s->pi.width_active = (uint8_t)width;
	s->pi.width_enabled = IBW_WIDTH_1X | IBW_WIDTH_4X;
	s->pi.width_supported = IBW_WIDTH_1X | IBW_WIDTH_4X;
	s->pi.speed_active = 1;
	s->pi.speed_enabled = 1;
	s->pi.speed_supported = 1;
	s->in.guid = guid;
	s->in.port = port;
	s->in.node_type = sw ? IBW_NODE_SWITCH : IBW_NODE_CA;
	s->in.name = sw ? "sw" : "hca";
	s->in.pi = &s->pi;
	s->in.have_ctrs = 1;
	s->in.tick = -1;
}

static inline const struct ibw_link_end *end_by_guid(const struct ibw_link *k,
						     uint64_t guid)
{
	return k->end[0].guid == guid ? &k->end[0] : &k->end[1];
}

#endif
