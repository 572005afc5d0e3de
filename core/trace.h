/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Path trace from the local port to a destination LID, walked with
 * directed-route SMPs: at each switch the LinearForwardingTable block
 * holding the destination LID gives the output port; that port's
 * PortInfo and the neighbour's NodeInfo/NodeDescription give the next
 * hop. The reverse path (destination back to source) is read from the
 * switches' tables for the source LID, with nothing run at the
 * destination (seed 001). Node facts come from the last discovery when
 * there is one; LFT blocks are cached until the next discovery.
 */
#ifndef IBW_TRACE_H
#define IBW_TRACE_H

#include <stdint.h>

#include "engine.h"
#include "events.h"
#include "fabric.h"

#define IBW_TRACE_MAX_HOPS 64

enum ibw_trace_status {
	IBW_TRACE_OK,
	IBW_TRACE_NO_ROUTE, /* no LFT entry for the LID */
	IBW_TRACE_PORT_DOWN, /* the output port is not active */
	IBW_TRACE_LOOP, /* a node seen twice, or too many hops */
	IBW_TRACE_DEAD_END, /* a CA that is not the destination */
	IBW_TRACE_TIMEOUT, /* a hop did not answer */
	IBW_TRACE_ERROR, /* any other failure */
};

const char *ibw_trace_status_str(enum ibw_trace_status s);

struct ibw_hop {
	uint64_t node_guid;
	uint64_t port_guid; /* of the port we came in by (CAs) */
	enum ibw_node_type type;
	char name[IBW_NAME_SIZE];
	uint16_t lid; /* base LID of the node (switch) or port (CA) */
	uint8_t lmc;
	uint8_t in_port; /* 0 for the source */
	uint8_t out_port; /* 0 for the destination */
	/* the link leaving by out_port */
	uint8_t state, width, speed, speed_ext;
};

struct ibw_path {
	enum ibw_trace_status status;
	char reason[128];
	unsigned fail_hop;
	unsigned nhops;
	struct ibw_hop hops[IBW_TRACE_MAX_HOPS + 2];
};

enum ibw_confirm {
	IBW_CONFIRM_NOT_TRIED,
	IBW_CONFIRM_OK, /* the responder's port GUID is the expected one */
	IBW_CONFIRM_MISMATCH,
	IBW_CONFIRM_NO_RESPONDER,
};

const char *ibw_confirm_str(enum ibw_confirm c);

struct ibw_trace {
	uint16_t slid, dlid;
	struct ibw_path fwd;
	int have_reverse;
	struct ibw_path rev;
	int differs; /* forward and reverse go through other ports */
	enum ibw_confirm confirm;
	uint64_t confirm_guid; /* what the responder said */
	unsigned mads;
	uint64_t duration_us;
	int cancelled; /* the engine went away mid-trace */
	int deadline_hit; /* gave up at the trace's own deadline */
};

#define IBW_TRACE_REVERSE 0x1
#define IBW_TRACE_CONFIRM 0x2
#define IBW_TRACE_NOCACHE 0x4 /* read every LFT block afresh */

typedef void (*ibw_trace_cb)(const struct ibw_trace *t, void *arg);

struct ibw_tracer;

/* @local_port: the port number we trace from. */
struct ibw_tracer *ibw_tracer_new(struct ibw_engine *e, unsigned local_port);
void ibw_tracer_free(struct ibw_tracer *tr);
/* Use @f for node facts (NULL: ask the fabric every time); drops the
 * LFT cache. */
void ibw_tracer_set_fabric(struct ibw_tracer *tr, struct ibw_fabric *f);
void ibw_tracer_set_local_lid(struct ibw_tracer *tr, uint16_t lid);

/* Trace to @dlid; at most 8 traces at once (-EBUSY), each bounded by
 * @timeout_ms (0: 5000). The callback runs once, never inside. */
int ibw_trace_start(struct ibw_tracer *tr, uint16_t dlid, unsigned flags,
		    unsigned timeout_ms, ibw_trace_cb cb, void *arg);

/* The same from another endport, @src_lid, which the last discovery must
 * know (-ENOENT if not): a trace between two other nodes. */
int ibw_trace_start_from(struct ibw_tracer *tr, uint16_t src_lid, uint16_t dlid,
			 unsigned flags, unsigned timeout_ms, ibw_trace_cb cb,
			 void *arg);

/* "guid[in>out] ..." of a path, for events and logs. */
void ibw_path_str(const struct ibw_path *p, char *buf, size_t len);
/* Same hops and ports. */
int ibw_path_equal(const struct ibw_path *a, const struct ibw_path *b);

#endif
