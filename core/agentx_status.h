/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the AgentX subagent is doing, for readers on other threads (the
 * HTTP threads render it in /api/v1/status and /metrics). net-snmp is
 * process-wide state, one subagent per process, so its status is one
 * process-wide record too: agent/snmp.c publishes it from the loop's
 * thread, readers take a copy. No net-snmp header here.
 */
#ifndef IBW_AGENTX_STATUS_H
#define IBW_AGENTX_STATUS_H

#include <stdint.h>

enum ibw_agentx_state {
	IBW_AGENTX_DISABLED, /* --no-snmp, or no subagent (yet) */
	IBW_AGENTX_CONNECTING, /* a connection or the Open under way */
	IBW_AGENTX_CONNECTED, /* a session open, MIB registered */
	IBW_AGENTX_WAITING, /* the last attempt failed; next at next_us */
};

struct ibw_agentx_status {
	enum ibw_agentx_state state;
	uint64_t since_us; /* CLOCK_REALTIME: the state was entered */
	uint64_t next_us; /* CLOCK_REALTIME: the next attempt (WAITING) */
	uint64_t attempts; /* attempts since the last session opened */
	uint64_t attempts_total; /* attempts in all */
	uint64_t connects; /* sessions opened */
	uint64_t reconnects; /* sessions opened after a lost one */
	uint64_t pings_failed; /* pings without an answer in time */
	char last_error[128]; /* the last attempt's failure; "" none */
};

/* "disabled", "connecting", "connected", "waiting" */
const char *ibw_agentx_state_str(enum ibw_agentx_state s);
/* Replace the published record with @st. */
void ibw_agentx_status_publish(const struct ibw_agentx_status *st);
/* A copy of the published record (all zero, DISABLED, until the first
 * publish). */
void ibw_agentx_status_get(struct ibw_agentx_status *st);

#endif
