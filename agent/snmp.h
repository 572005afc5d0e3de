/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The AgentX subagent: net-snmp in ibwatchd's event loop, IBWATCH-MIB
 * registered with the master agent (snmpd), re-registered when snmpd
 * comes back, and notifications raised from the monitor's events through
 * a rate limit. Connecting never holds the loop longer than timeout_ms
 * at a time; what the subagent is doing is published through
 * core/agentx_status.h.
 */
#ifndef IBW_SNMP_H
#define IBW_SNMP_H

#include "localport.h"
#include "loop.h"
#include "monitor.h"
#include "umad.h"

/* net-snmp's own default AgentX socket, used when none is named */
#define IBW_SNMP_DEFAULT_SOCKET "/var/agentx/master"
#define IBW_SNMP_DEFAULT_PING_INTERVAL_S 15
#define IBW_SNMP_DEFAULT_TRAP_RATE 60
/* The longest the loop waits for the master at once: a connection, or
 * one AgentX round trip (Open, Register, Ping) */
#define IBW_SNMP_DEFAULT_TIMEOUT_MS 1000

struct ibw_snmp_opts {
	const char *agentx_socket; /* NULL: net-snmp's default */
	/* the SNMP context IBWATCH-MIB is registered in; NULL or "": the
	 * default one. Several instances on one host (one per HCA port)
	 * each take a context of their own. */
	const char *context;
	/* pings of the master, and the longest wait between reconnect
	 * attempts (1 s, doubling up to this); 0:
	 * IBW_SNMP_DEFAULT_PING_INTERVAL_S */
	unsigned ping_interval_s;
	unsigned timeout_ms; /* 0: IBW_SNMP_DEFAULT_TIMEOUT_MS */
	/* notifications per minute, sustained and in a burst; 0:
	 * IBW_SNMP_DEFAULT_TRAP_RATE */
	unsigned trap_rate;
	/* the state file: IBWATCH-MIB's row indexes are kept beside it,
	 * at STATE_FILE.snmp-rows (agent/mib_rows.h); NULL: given afresh
	 * at every start */
	const char *state_file;
};

#define IBW_SNMP_ROWS_SUFFIX ".snmp-rows"

struct ibw_snmp;

/* @lp and @lq must outlive the subagent. NULL on failure, with @err. */
struct ibw_snmp *ibw_snmp_new(struct ibw_loop *loop, struct ibw_monitor *mon,
			      const struct ibw_local_port *lp,
			      const struct ibw_localport_query *lq,
			      const struct ibw_snmp_opts *o, char *err,
			      size_t errlen);
/* Closes the AgentX session and shuts net-snmp down. */
void ibw_snmp_free(struct ibw_snmp *s);

#endif
