/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Events: what changed in the fabric, with a time, kept in a bounded ring.
 * Later readers (HTTP, SNMP notifications) take them by sequence number.
 */
#ifndef IBW_EVENTS_H
#define IBW_EVENTS_H

#include <stdint.h>

#include "safename.h"

enum ibw_event_kind {
	IBW_EVT_NODE_ADDED,
	IBW_EVT_NODE_GONE,
	IBW_EVT_PORT_ADDED,
	IBW_EVT_PORT_GONE,
	IBW_EVT_LINK_UP, /* a link appeared between two ports */
	IBW_EVT_LINK_DOWN, /* ... or went away */
	IBW_EVT_LID_CHANGED,
	IBW_EVT_PORT_STATE_CHANGED,
	IBW_EVT_LINK_WIDTH_CHANGED,
	IBW_EVT_LINK_SPEED_CHANGED,
	IBW_EVT_THRESHOLD_CROSSED,
	IBW_EVT_COUNTER_RESET, /* reset by someone else */
	IBW_EVT_ENDPORT_STATE, /* old/new: enum ibw_endport_state */
	IBW_EVT_PATH_CHANGED, /* detail: "old -> new" paths */
	/* Route census changes (core/census.h): old/new are pair counts,
	 * detail names a few of the pairs. */
	IBW_EVT_ROUTES_LOST, /* routed pairs that no longer are */
	IBW_EVT_ROUTES_RESTORED, /* ... and broken ones routed again */
	IBW_EVT_ROUTE_LOOPS, /* pairs that newly loop */
	/* a switch's uplinks less even than the threshold: old/new are
	 * max/mean x 1000 */
	IBW_EVT_ROUTE_BALANCE,
	/* a switch's uplinks changed in number, or the most loaded one
	 * carries more routes: old/new are the most loaded's routes */
	IBW_EVT_ROUTE_LOAD,
	/* A cable's health (core/links.h): node/port and peer are its
	 * ends, old/new enum ibw_link_health, reasons/old_reasons the
	 * IBW_LR_BIT()s of each. */
	IBW_EVT_LINK_HEALTH_CHANGED,
	/* a ping target answered at another LID before the next discovery
	 * saw the change: old/new LID, peer_guid its port GUID */
	IBW_EVT_ENDPORT_MOVED,
	/* Our own port: no longer active or no longer answering (what: its
	 * state, or "unreachable"; old_value: its PortState, 0 when none
	 * was read), so the fabric is kept and marked stale; and active
	 * again (new_value: milliseconds it was lost). */
	IBW_EVT_LOCAL_PORT_LOST,
	IBW_EVT_LOCAL_PORT_BACK,
	/* A switch's or HCA's hardware (core/hw.h): what "temperature",
	 * "fan" or "power_supply"; port: the sensor, tacho or supply;
	 * new_value 1 when it went bad (at or above its threshold, stopped
	 * or under its limit, failed), 0 when it is good again; detail: the
	 * values read. */
	IBW_EVT_HW_HEALTH,
	/* Another fabric identity (core/fabric_id.h): the master SM moved to
	 * another port, or the subnet prefix changed. node/port: the new
	 * SM's node and port, peer the old's; old/new_value: the SM port
	 * GUIDs; what "master_sm" or "subnet_prefix"; detail both ids. */
	IBW_EVT_FABRIC_CHANGED,
	IBW_EVT_KIND_MAX,
};

struct ibw_event {
	uint64_t seq; /* from 1, increasing */
	uint64_t time_us; /* CLOCK_REALTIME, microseconds */
	enum ibw_event_kind kind;
	uint64_t node_guid;
	uint8_t port;
	uint64_t peer_guid; /* links: the other end */
	uint8_t peer_port;
	uint64_t old_value;
	uint64_t new_value;
	uint32_t reasons, old_reasons; /* link health changes */
	/* the node's name (of @node_guid) when the event was added, ""
	 * unknown: the name map's, else its NodeDescription, made safe */
	char name[IBW_NAME_SIZE];
	char what[48]; /* a counter name, for threshold/reset events */
	char detail[512]; /* path changes: the old and the new path */
	/* link health changes: the running jobs whose routes cross the
	 * link, ids comma-separated ("" none; ",..." when cut short) */
	char affects[160];
};

struct ibw_events;

struct ibw_events *ibw_events_new(unsigned capacity);
void ibw_events_free(struct ibw_events *ev);

/* Names node @guid into @buf (IBW_NAME_SIZE bytes; "" unknown). */
typedef void (*ibw_events_namer)(void *arg, uint64_t guid, char *buf);

/* An event added with a node GUID and no name is named by @fn, called
 * from ibw_events_add (on the thread that adds: the loop's). */
void ibw_events_set_namer(struct ibw_events *ev, ibw_events_namer fn,
			  void *arg);

/* Add a copy of @e, stamping seq and (if 0) time; returns its seq. */
uint64_t ibw_events_add(struct ibw_events *ev, const struct ibw_event *e);

/* Copy up to @max events with seq > @since, oldest first; returns the
 * count. */
unsigned ibw_events_since(const struct ibw_events *ev, uint64_t since,
			  struct ibw_event *out, unsigned max);
uint64_t ibw_events_last_seq(const struct ibw_events *ev);
/* Events pushed out of the ring before anyone could read them. */
uint64_t ibw_events_overwritten(const struct ibw_events *ev);

const char *ibw_event_kind_str(enum ibw_event_kind k);

#endif
