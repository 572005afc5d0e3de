// SPDX-License-Identifier: BSD-2-Clause
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events.h"
#include "safename.h"
#include "loop.h"

struct ibw_events {
	struct ibw_event *ring;
	unsigned cap;
	uint64_t next_seq;
	ibw_events_namer namer;
	void *namer_arg;
};

static const char *const kind_names[IBW_EVT_KIND_MAX] = {
	[IBW_EVT_NODE_ADDED] = "node_added",
	[IBW_EVT_NODE_GONE] = "node_gone",
	[IBW_EVT_PORT_ADDED] = "port_added",
	[IBW_EVT_PORT_GONE] = "port_gone",
	[IBW_EVT_LINK_UP] = "link_up",
	[IBW_EVT_LINK_DOWN] = "link_down",
	[IBW_EVT_LID_CHANGED] = "lid_changed",
	[IBW_EVT_PORT_STATE_CHANGED] = "port_state_changed",
	[IBW_EVT_LINK_WIDTH_CHANGED] = "link_width_changed",
	[IBW_EVT_LINK_SPEED_CHANGED] = "link_speed_changed",
	[IBW_EVT_THRESHOLD_CROSSED] = "threshold_crossed",
	[IBW_EVT_COUNTER_RESET] = "counter_reset",
	[IBW_EVT_ENDPORT_STATE] = "endport_state",
	[IBW_EVT_PATH_CHANGED] = "path_changed",
	[IBW_EVT_ROUTES_LOST] = "routes_lost",
	[IBW_EVT_ROUTES_RESTORED] = "routes_restored",
	[IBW_EVT_ROUTE_LOOPS] = "route_loops",
	[IBW_EVT_ROUTE_BALANCE] = "route_balance",
	[IBW_EVT_ROUTE_LOAD] = "route_load",
	[IBW_EVT_LINK_HEALTH_CHANGED] = "link_health_changed",
	[IBW_EVT_ENDPORT_MOVED] = "endport_moved",
	[IBW_EVT_LOCAL_PORT_LOST] = "local_port_lost",
	[IBW_EVT_LOCAL_PORT_BACK] = "local_port_back",
	[IBW_EVT_HW_HEALTH] = "hardware_health",
	[IBW_EVT_FABRIC_CHANGED] = "fabric_changed",
};

const char *ibw_event_kind_str(enum ibw_event_kind k)
{
	if ((unsigned)k < IBW_EVT_KIND_MAX && kind_names[k])
		return kind_names[k];
	return "unknown";
}

struct ibw_events *ibw_events_new(unsigned capacity)
{
	struct ibw_events *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return NULL;
	ev->cap = capacity ? capacity : 1;
	ev->ring = calloc(ev->cap, sizeof(*ev->ring));
	if (!ev->ring) {
		free(ev);
		return NULL;
	}
	ev->next_seq = 1;
	return ev;
}

void ibw_events_free(struct ibw_events *ev)
{
	if (!ev)
		return;
	free(ev->ring);
	free(ev);
}

void ibw_events_set_namer(struct ibw_events *ev, ibw_events_namer fn, void *arg)
{
	ev->namer = fn;
	ev->namer_arg = arg;
}

uint64_t ibw_events_add(struct ibw_events *ev, const struct ibw_event *e)
{
	struct ibw_event *slot = &ev->ring[ev->next_seq % ev->cap];

	*slot = *e;
	if (!slot->name[0] && slot->node_guid && ev->namer)
		ev->namer(ev->namer_arg, slot->node_guid, slot->name);
	/* Texts that name nodes were cut to fit: never inside a
	 * character, or JSON drops them and SNMP shows half a one. */
	ibw_name_trim(slot->what);
	ibw_name_trim(slot->detail);
	ibw_name_trim(slot->affects);
	slot->seq = ev->next_seq++;
	if (!slot->time_us)
		slot->time_us = ibw_realtime_us();
	return slot->seq;
}

uint64_t ibw_events_last_seq(const struct ibw_events *ev)
{
	return ev->next_seq - 1;
}

uint64_t ibw_events_overwritten(const struct ibw_events *ev)
{
	uint64_t n = ev->next_seq - 1;

	return n > ev->cap ? n - ev->cap : 0;
}

unsigned ibw_events_since(const struct ibw_events *ev, uint64_t since,
			  struct ibw_event *out, unsigned max)
{
	uint64_t first = ibw_events_overwritten(ev) + 1, s;
	unsigned n = 0;

	if (since + 1 > first)
		first = since + 1;
	for (s = first; s < ev->next_seq && n < max; s++)
		out[n++] = ev->ring[s % ev->cap];
	return n;
}
