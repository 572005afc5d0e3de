/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One job's entry in a job view (core/jobview.h): its ports, the links
 * its host pairs are routed over and its sums. A type alone, with no
 * code: the view builds it and the kept census walks (jobroutes.h) fill
 * and keep its links, so that neither includes the other.
 */
#ifndef IBW_JOBVIEW_JOB_H
#define IBW_JOBVIEW_JOB_H

#include <stdint.h>

#include "jobs.h"

struct ibw_fnode;

struct ibw_jobview_port {
	const struct ibw_fnode *n;
	uint8_t port;
	uint16_t lid;
	const char *host; /* the job's name for it */
};

/* One direction of a link: leaving node guid by port. */
struct ibw_jobview_link {
	uint64_t guid;
	uint8_t port;
	uint32_t pairs; /* the job's host pairs routed over it this way */
};

struct ibw_jobview_job {
	const struct ibw_job *job;
	struct ibw_jobview_port *ports;
	unsigned nports;
	unsigned hosts_found, hosts_shared;
	int shared; /* a host of it is in another running job */
	double xmit_bytes_per_s, rcv_bytes_per_s;
	double xmit_pkts_per_s, rcv_pkts_per_s;
	uint64_t error_increments; /* last sweep, over its ports */
	double xmit_wait_ratio; /* mean over its ports, last sweep; -1 */
	struct ibw_jobview_link *links; /* by (guid, port) */
	unsigned nlinks;
	uint64_t pairs, pairs_routed;
	int partial; /* more pairs than IBW_JOB_PAIRS_MAX */
	int have_census;
	uint8_t worst; /* enum ibw_link_health over its links */
};

#endif
