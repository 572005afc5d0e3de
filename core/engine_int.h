/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The MAD engine's insides, shared by engine.c (queues, window, tries,
 * answers, the device's loss and return) and engine_set.c (the MAD
 * built, the settings and readings, which call nothing in engine.c):
 * not for any other file.
 */
#ifndef IBW_ENGINE_INT_H
#define IBW_ENGINE_INT_H

#include <stdint.h>

#include "engine.h"
#include "loop.h"
#include "madkind.h"
#include "transport.h"

/* What recent kernels send at once per agent before holding solicited
 * requests in a backlog, as fractions of recv_queue_size: a quarter for
 * SMPs (and for any agent that only sends), a 32nd for SA agents with
 * methods (drivers/infiniband/core/mad.c, get_sol_fc_max_outstanding;
 * see docs/architecture.md). Our SA agent only sends, but the SA is one
 * SM thread for the whole fabric: we keep to the lower figure. */
#define IBW_KERNEL_SMP_FRAC 4
#define IBW_KERNEL_SA_FRAC 32
#define DEST_BUCKETS 1024 /* power of two */

enum slot_state {
	SLOT_FREE = 0,
	SLOT_INFLIGHT,
	SLOT_ANSWERED,
	SLOT_TIMEDOUT,
	SLOT_CLOSED, /* returned, cancelled or failed */
};

struct dest_q;

/* Queued requests of a counter sweep number in the tens of thousands:
 * the payload lives only in the encoded MAD. */
struct req {
	struct ibw_mad_req r;
	uint8_t mad[IBW_MAD_SIZE]; /* the encoded request */
	struct ibw_mad_addr addr;
	struct dest_q *dq;
	uint32_t tid;
	unsigned tries;
	uint64_t sent_at;
	uint64_t deadline;
	/* result, for deferred completion */
	enum ibw_mad_result result;
	int status;
	struct req *prev, *next; /* in flight (by deadline) or a queue */
	/* A try in flight is in the window (TRY_FRESH, on the fresh list
	 * in the order sent) until it has waited wait_after() and a try
	 * sent after it was answered: then it is a wait (TRY_WAIT), out of
	 * the window. try_seq: the try's place in the order of sending. */
	uint8_t try_state;
	struct req *fprev, *fnext;
	uint64_t try_seq;
	uint8_t kind; /* its slot in st.kinds, found once at submit */
	/* IBW_MAD_F_OPTIONAL: ended unsent (its kind silent), or the one
	 * request of a silent kind out */
	uint8_t skipped;
	uint8_t probe;
};

/* TRY_BLIND: a wait no later try has overtaken yet (on the blind list,
 * by the same links as the fresh list) */
enum { TRY_NONE, TRY_FRESH, TRY_WAIT, TRY_BLIND };

struct dest_q {
	uint64_t key;
	unsigned inflight;
	/* PerfMgt here since the queue was made (a destination's silence
	 * lasts as long as its queue: a sweep's reads of it): answered
	 * (well or with an error status), or a request out of tries with
	 * none answered yet (perf_silent: dest_silent()) */
	uint8_t perf_heard, perf_silent;
	struct req *head, *tail; /* waiting for the window */
	int runnable;
	int blocked; /* its next request's class is at its limit */
	struct dest_q *run_next;
	struct dest_q *hnext;
};

struct slot {
	uint32_t tid;
	uint8_t state;
	struct req *req;
};

struct ibw_engine {
	struct ibw_loop *loop;
	struct ibw_transport *t;
	struct ibw_engine_config cfg;
	struct ibw_engine_stats st;

	struct slot *slots;
	uint32_t slot_mask;
	uint32_t next_tid;

	struct req *fl_head, *fl_tail; /* in flight, by deadline */
	struct ibw_timer *deadline_timer;
	/* The window: tries in flight that have not waited long yet, the
	 * oldest first; the ones that have are waits, bounded only by
	 * max_outstanding (fresh and waits together). rtt_avg_us: of the
	 * answered tries, what "long" is measured against. */
	unsigned fresh;
	struct req *fresh_head, *fresh_tail;
	unsigned blind; /* blind waits, at most the window's size */
	struct req *blind_head, *blind_tail;
	unsigned max_outstanding;
	uint64_t rtt_avg_us;
	/* tries sent so far, and the latest sent of those answered */
	uint64_t try_seq, answered_seq;
	struct ibw_timer *age_timer;

	struct dest_q *buckets[DEST_BUCKETS];
	struct dest_q *run_head, *run_tail;
	/* Per class group (SMPs, SA, the rest): in flight, the limit, and
	 * the destinations waiting for a place. */
	unsigned grp_inflight[3];
	unsigned grp_cap[3];
	struct dest_q *blk_head[3], *blk_tail[3];

	struct req *done_head, *done_tail; /* completed, callback due */
	/* requests out of each silent kind of st.kinds (0 or 1) */
	uint8_t probing[IBW_MAD_KINDS];
	struct ibw_timer *done_timer;

	ibw_request_cb req_cb;
	void *req_arg;
	ibw_lost_cb lost_cb;
	void *lost_arg;
	int lost; /* the device is gone: -errno, else 0 */
	uint64_t smp_mkey; /* put in every SMP */
	uint8_t sa_sl; /* SA requests go out on this SL (the SMSL) */
	/* Reopening a lost device (ibw_engine_set_reopen): the next try
	 * in reopen_delay_us, doubling up to reopen_max_us. */
	ibw_reopen_fn reopen_fn;
	ibw_back_cb back_cb;
	void *reopen_arg;
	uint64_t reopen_first_us, reopen_max_us, reopen_delay_us;
	struct ibw_timer *reopen_timer;
	int pumping;
	int closing;
};

/* engine_set.c */
/* Encode @r's MAD and address from @q (the caller's payload, which r->r
 * no longer points to), with @e's M_Key in SMPs and SMSL on SA queries. */
int ibw_eng_build(const struct ibw_engine *e, struct req *r,
		  const struct ibw_mad_req *q);

#endif
