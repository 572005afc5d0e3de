/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * IBWATCH-MIB (mib/IBWATCH-MIB.txt) served from the monitor's snapshots:
 * the agent scalars, the node, port, endport, path, hop and link tables,
 * and the notifications built from events. Tables are read-only views of
 * the current snapshot, re-indexed when a new one is published.
 */
#ifndef IBW_MIB_H
#define IBW_MIB_H

#include <stddef.h>
#include <stdint.h>

#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>
#include <net-snmp/agent/net-snmp-agent-includes.h>

/* libibmad's mad.h (under core's headers) and net-snmp's tools.h both
 * declare an xdump() of different types; we call neither, so rename
 * libibmad's out of the way. */
#define xdump ibw_libibmad_xdump
#include "events.h"
#include "localport.h"
#include "snapshot.h"
#include "umad.h"
#undef xdump

/*
 * PROVISIONAL: ibwatch has no IANA Private Enterprise Number yet; the
 * module sits under 32473, reserved for documentation (RFC 5612). This
 * and the MODULE-IDENTITY's assignment in mib/IBWATCH-MIB.txt are the
 * only two places to change when a number is registered.
 */
#define IBW_MIB_ROOT 1, 3, 6, 1, 4, 1, 32473

struct ibw_mib;

struct ibw_mib_stats {
	uint64_t notifications_sent;
	uint64_t notifications_suppressed;
};

/* Where the MIB gets the current snapshot: a new reference, or NULL. */
typedef struct ibw_snapshot *(*ibw_mib_snapshot_fn)(void *arg);

/* @lp and @lq (the local port and its last live query) must outlive the
 * MIB; @stats is read for the agent scalars. The row indexes are kept
 * at @rows_path (agent/mib_rows.h; NULL: given afresh at every start).
 * NULL on ENOMEM. */
struct ibw_mib *ibw_mib_new(ibw_mib_snapshot_fn snapshot, void *arg,
			    const struct ibw_local_port *lp,
			    const struct ibw_localport_query *lq,
			    const struct ibw_mib_stats *stats,
			    const char *rows_path);
void ibw_mib_free(struct ibw_mib *m);

/*
 * Register the handlers with the net-snmp agent (after init_agent), in
 * SNMP context @context (NULL or "": the default context). A subagent
 * answers a request among its own registrations in the request's
 * context, so they carry it, not only the Register PDUs.
 */
int ibw_mib_register(struct ibw_mib *m, const char *context);

/*
 * The notification for @e, as a varbind list starting with snmpTrapOID.0,
 * or NULL when the event maps to none. The caller sends it
 * (send_v2trap) and frees it (snmp_free_varbind).
 */
netsnmp_variable_list *ibw_mib_notification(struct ibw_mib *m,
					    const struct ibw_event *e);

/*
 * What the handlers answer, without an agent (for the unit tests): a GET
 * (@next 0) or GETNEXT of @vb->name across the whole module. Returns 0
 * with @vb set, or SNMP_NOSUCHOBJECT / SNMP_NOSUCHINSTANCE for a GET,
 * SNMP_ENDOFMIBVIEW when a GETNEXT runs off the module's end.
 */
int ibw_mib_query(struct ibw_mib *m, netsnmp_variable_list *vb, int next);

#endif
