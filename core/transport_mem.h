/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An in-memory transport for unit tests: sent MADs queue up for the test
 * to inspect, and the test injects what the fabric would answer.
 */
#ifndef IBW_TRANSPORT_MEM_H
#define IBW_TRANSPORT_MEM_H

#include "transport.h"

struct ibw_transport *ibw_mem_transport_new(void);

/* Sent MADs, oldest first. Returns 0 when none is left. */
int ibw_mem_next_sent(struct ibw_transport *t, uint8_t mad[IBW_MAD_SIZE],
		      struct ibw_mad_addr *to);
unsigned ibw_mem_sent_count(struct ibw_transport *t);

/* Queue @mad (@len bytes) to be received, with @status as the umad
 * status (non-zero: a send handed back). */
int ibw_mem_inject(struct ibw_transport *t, const uint8_t *mad, size_t len,
		   int status);

/* As ibw_mem_inject(), as if received from @from (NULL: all zero). */
int ibw_mem_inject_from(struct ibw_transport *t, const uint8_t *mad, size_t len,
			int status, const struct ibw_mad_addr *from);

/* The umad timeout the MAD last taken by ibw_mem_next_sent() went out
 * with. */
unsigned ibw_mem_sent_timeout(struct ibw_transport *t);
/* Behave like the kernel: the test injects ETIMEDOUT reports itself. */
void ibw_mem_set_reports_timeouts(struct ibw_transport *t, int on);
/* The device goes away for good: every send and recv fails with EIO and
 * the fd stays readable (as EPOLLERR does). */
void ibw_mem_kill(struct ibw_transport *t);
/* How often recv was called: a spinning reader shows here. */
unsigned ibw_mem_recv_calls(struct ibw_transport *t);

/* Make the next @n sends fail with -@err. */
void ibw_mem_fail_sends(struct ibw_transport *t, unsigned n, int err);
/* Make the next recv return -@err once. */
void ibw_mem_fail_recv(struct ibw_transport *t, int err);

/* Turn @mad, a request, into its GetResp with @status and the TID kept. */
void ibw_mem_make_response(uint8_t mad[IBW_MAD_SIZE], int status);

#endif
