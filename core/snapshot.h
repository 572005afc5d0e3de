/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Snapshots: what every reader (the HTTP API, /metrics, the MIB,
 * ibwatchd --once) sees of the monitor's state. The monitor fills one in,
 * seals it (ibw_snapshot_seal computes the summary and the views below)
 * and publishes it; from then on it is immutable and shared by reference,
 * so a reader never sees it change.
 *
 * The summary and views are the one place where the facts readers share
 * are derived: node, port and link counts, endport state counts, ping
 * loss, which ports a node has (a switch has a port 0, a CA does not).
 * Readers use them and derive none of these themselves, so the front
 * ends agree by construction.
 */
#ifndef IBW_SNAPSHOT_H
#define IBW_SNAPSHOT_H

#include <stdint.h>

#include "census.h"
#include "counters.h"
#include "ctr_journal.h"
#include "fabric.h"
#include "fabric_id.h"
#include "hw.h"
#include "links.h"
#include "ping.h"
#include "trace.h"

struct ibw_watched {
	char target[80];
	uint16_t lid; /* resolved */
	uint64_t traces, changes;
	uint64_t last_us; /* CLOCK_REALTIME of the last trace */
	int have;
	struct ibw_trace last;
	/* The last forward path traced to the end: a change is between two
	 * of these, so a trace failing while the SM reroutes is no change
	 * (its status shows in last). */
	int have_good;
	struct ibw_path good;
};

struct ibw_snapshot_port;
struct ibw_jobroutes;

/* Why a counter sweep ran. The first after start and the first after the
 * local port came back read at full speed (readers have no current
 * counters to show); the interval's are spread over it. */
enum ibw_sweep_reason {
	IBW_SWEEP_START,
	IBW_SWEEP_PORT_BACK,
	IBW_SWEEP_INTERVAL,
};

/* "start", "local_port_back", "interval" */
const char *ibw_snapshot_sweep_reason_str(enum ibw_sweep_reason r);

/* A node of the fabric as readers see it. */
struct ibw_snapshot_node {
	const struct ibw_fnode *n;
	const char *name; /* the name map's, else the description */
	int is_switch;
	int has_port0; /* switch port 0 (management) exists; CA port 0 not */
	/* The ports it has, by number (from 0 or 1, see has_port0): a
	 * slice of the snapshot's port views. */
	const struct ibw_snapshot_port *ports;
	unsigned nports;
};

/* A port that exists (the port-0 rule applied). */
struct ibw_snapshot_port {
	const struct ibw_snapshot_node *node;
	const struct ibw_fport *p;
	const struct ibw_port_ctrs *ctrs; /* NULL: no counters read */
	const char *remote_name; /* the peer's name; "" without a known one */
	/* A physical port (not switch port 0): it has a link, a state and a
	 * rate of its own. */
	int external;
	/* PortInfo known and the link trained (PortState Init or beyond):
	 * width, speed and rate mean something. */
	int link_up;
	int gone; /* the port or its node vanished */
};

/* An endport (ping target) with its loss figures. */
struct ibw_snapshot_endport {
	const struct ibw_endport *ep;
	double loss_pct; /* pings lost since start, in percent */
	double window_loss_pct; /* over the sliding window, in percent */
	double window_loss_ratio; /* the same as a share, 0 to 1 */
	/* the same in hundredths of a percent, rounded down */
	unsigned window_loss_centipct;
};

struct ibw_snapshot_summary {
	unsigned nodes; /* present (not gone): switches + cas */
	unsigned switches;
	unsigned cas; /* present nodes that are not switches */
	unsigned gone_nodes;
	unsigned ports; /* external ports of present nodes */
	unsigned links; /* between present nodes' ports, each once */
	unsigned endports[IBW_EP_NSTATES]; /* by state; out of range: unknown */
};

struct ibw_snapshot {
	unsigned refs; /* atomic: any thread may take or drop one */
	uint64_t seq; /* increases with every snapshot published */
	uint64_t taken_us; /* CLOCK_REALTIME */
	struct ibw_fabric *fabric; /* NULL before the first discovery */
	char **names; /* per fabric node: the name map's name, else NULL */
	/* The counter records: @nports of them, in the shared table
	 * (one reference held) when it is set, else at @ports (sorted by
	 * (guid, port), the snapshot's own, from malloc()). Read them
	 * with ibw_snapshot_port() or the views. */
	struct ibw_port_ctrs *ports;
	unsigned nports;
	struct ibw_ctr_table *ports_table;
	struct ibw_sweep_stats discovery;
	struct ibw_sweep_stats counters;
	/* how long the last counter sweep read CAs [0] and switches [1],
	 * its pauses left out (ibw_counters_last_busy) */
	uint64_t counters_busy_us[2];
	unsigned unreachable_ports;
	/* nodes whose PMA redirects (followed or not) */
	struct ibw_pma_redirect *pma_redirects;
	unsigned npma_redirects;
	uint64_t discoveries, counter_sweeps;
	/* The counter sweep under way when this was taken (its reads so far
	 * are in ports), or else the last one, and why it ran. */
	struct ibw_counters_progress counter_sweep;
	enum ibw_sweep_reason counter_sweep_reason;
	/* Periodic counter sweeps start this far apart now, aligned with
	 * this many scrapers of /metrics (0: every counter interval). */
	uint64_t counter_interval_us;
	unsigned counter_aligned_scrapers;
	/* LIDs in flux (core/counters.h): the mode, and the readings
	 * checked and dropped since start. */
	struct ibw_counters_verify counter_verify;
	struct ibw_counters_clears counter_clears;
	/* What writing the state file has cost (have_state_file 0: none
	 * kept), as of the last write before this snapshot, and its last
	 * error (a negative errno, 0). */
	int have_state_file, state_err;
	struct ibw_ctr_journal_stats state_file;
	struct ibw_endport *endports; /* ping targets and their state */
	unsigned nendports;
	struct ibw_watched *watched; /* watched paths, last traces */
	unsigned nwatched;
	uint64_t started_us; /* when the monitor started (CLOCK_REALTIME) */
	uint64_t fresh_until_us; /* data older than this is stale */
	/* Which fabric this is (core/fabric_id.h), as of the last
	 * discovery; known 0 before it. */
	struct ibw_fabric_id fabric_id;
	uint8_t local_state; /* PortInfo state of the local port, 0: unknown */
	int local_lost; /* it is not active: the data is the last seen */
	/* The link view of this snapshot's fabric and counters, one
	 * reference held (shared with the monitor and other snapshots);
	 * NULL before the first discovery. */
	struct ibw_link_view *links;
	/* The last route census (docs/routes.md), one reference held
	 * (shared like links); NULL until the first tables are read, and
	 * always with --once. Its fabric may be older than @fabric. */
	struct ibw_census *census;
	/* The last hardware sweep (core/hw.h), one reference held; NULL
	 * before the first, with --once and when it is off. */
	struct ibw_hw_view *hw;
	/* The running jobs (core/jobs.h), one reference held; NULL when no
	 * job source is configured. */
	struct ibw_jobset *jobs;
	/* Where their view against this snapshot is made and kept
	 * (core/jobcache.h): the monitor's, which outlives every reader of
	 * its snapshots; not owned. NULL: no job view. */
	struct ibw_jobcache *jobcache;

	/* Computed by ibw_snapshot_seal() from the above; read the views
	 * through the iterators below. */
	struct ibw_snapshot_summary sum;
	struct ibw_snapshot_node *node_views; /* as fabric->nodes */
	unsigned nnode_views;
	struct ibw_snapshot_port *port_views; /* by (node GUID, port) */
	unsigned nport_views;
	struct ibw_snapshot_endport *endport_views; /* as endports */
};

/* Every node (also those gone), by GUID. */
#define ibw_snapshot_foreach_node(s, v)                                       \
	for ((v) = (s)->node_views; (v) < (s)->node_views + (s)->nnode_views; \
	     (v)++)
/* Every port that exists, by (node GUID, port number). */
#define ibw_snapshot_foreach_port(s, v)                                       \
	for ((v) = (s)->port_views; (v) < (s)->port_views + (s)->nport_views; \
	     (v)++)
/* The ports of node view @nv, by number. */
#define ibw_snapshot_foreach_node_port(nv, v) \
	for ((v) = (nv)->ports; (v) < (nv)->ports + (nv)->nports; (v)++)
/* Every endport, in the pinger's order. */
#define ibw_snapshot_foreach_endport(s, v) \
	for ((v) = (s)->endport_views;     \
	     (v) < (s)->endport_views + (s)->nendports; (v)++)

/* A new, empty snapshot with one reference, for the monitor to fill. */
struct ibw_snapshot *ibw_snapshot_new(void);
/*
 * Compute the summary and views from what @s holds: call it once @s is
 * filled in, before anyone else sees it. It may be called again while @s
 * is still private to its builder (a test changes a fixture and seals it
 * again); never after publishing. 0, or -ENOMEM (then @s has no views:
 * do not publish it).
 */
int ibw_snapshot_seal(struct ibw_snapshot *s);
/* Thread-safe: readers on other threads (the HTTP server's) hold
 * references while the loop publishes. */
struct ibw_snapshot *ibw_snapshot_ref(struct ibw_snapshot *s);
void ibw_snapshot_unref(struct ibw_snapshot *s);

/* The node's display name: the name map's, else its description. */
const char *ibw_snapshot_node_name(const struct ibw_snapshot *s,
				   const struct ibw_fnode *n);
/* Stale at @now_us (CLOCK_REALTIME): no good sweep for three intervals,
 * or the local port is lost. */
int ibw_snapshot_stale(const struct ibw_snapshot *s, uint64_t now_us);
/* The counters of (@guid, @port), or NULL. */
const struct ibw_port_ctrs *ibw_snapshot_port(const struct ibw_snapshot *s,
					      uint64_t guid, uint8_t port);
/* The view of node @guid, or NULL. */
const struct ibw_snapshot_node *
ibw_snapshot_find_node(const struct ibw_snapshot *s, uint64_t guid);
/* The view of port @port of node @guid, or NULL (also for a CA's port 0). */
const struct ibw_snapshot_port *
ibw_snapshot_find_port(const struct ibw_snapshot *s, uint64_t guid,
		       unsigned port);
/* The LID that reaches (@guid, @port): a CA port's own, else the node's
 * (a switch's ports share port 0's); 0 for an unknown node. */
uint16_t ibw_snapshot_lid(const struct ibw_snapshot *s, uint64_t guid,
			  unsigned port);

#endif
