/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two transports as one: SMPs (classes 0x01, 0x81) through the first,
 * every other MAD through the second. A planarized HCA's port may have
 * no SMI, which another device of the same HCA has; libibumad (rdma-core
 * 56) pairs the two, and libibmad sends SMPs and GMPs through them so.
 */
#ifndef IBW_TRANSPORT_PAIR_H
#define IBW_TRANSPORT_PAIR_H

#include <stdint.h>

#include "transport.h"

/* @smi and @gsi as one transport (it owns them from here, also on
 * failure). 0 and *out, or -errno. */
int ibw_transport_pair(struct ibw_transport *smi, struct ibw_transport *gsi,
		       struct ibw_transport **out);

/* MADs sent through each of a pair's transports ([0] SMI, [1] GSI) and
 * received from each; 0 for a transport that is not a pair. */
int ibw_transport_pair_counts(const struct ibw_transport *t, uint64_t sent[2],
			      uint64_t received[2]);

#endif
