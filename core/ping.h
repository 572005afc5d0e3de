/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Endport liveness. Each target (an endport, followed by port GUID
 * across LID changes) is pinged at an interval by one of:
 *
 *   echo  vendor class 0x32 echo (needs a responder: ibwatchd
 *         --responder or ibping -S at the target)
 *   pma   PerfMgt Get(ClassPortInfo): every IB device answers it
 *   smp   LID-routed SubnGet(NodeInfo)
 *   auto  echo where a responder has answered, else pma
 *
 * with statistics (loss over a sliding window and since start, RTT
 * last/min/avg/max/mdev on CLOCK_MONOTONIC) and a state machine
 * unknown/up/degraded/down with hysteresis; each transition is an event.
 *
 * The loss that would take an endport down is confirmed first: the SA
 * (NodeRecord by port GUID), else a directed-route look where the last
 * discovery found the port, says what LID the port has now; if that is
 * another one and it answers there, the endport moved (an endport_moved
 * event) and is not down.
 */
#ifndef IBW_PING_H
#define IBW_PING_H

#include <stdint.h>

#include "echo.h"
#include "engine.h"
#include "events.h"
#include "fabric.h"

enum ibw_ping_method {
	IBW_PING_AUTO,
	IBW_PING_ECHO,
	IBW_PING_PMA,
	IBW_PING_SMP,
};

enum ibw_endport_state {
	IBW_EP_UNKNOWN,
	IBW_EP_UP,
	IBW_EP_DEGRADED,
	IBW_EP_DOWN,
};
#define IBW_EP_NSTATES 4 /* the states above */

#define IBW_PING_WINDOW_MAX 256

/* The defaults of struct ibw_ping_opts, and of on-demand pings' count. */
#define IBW_PING_DEFAULT_INTERVAL_MS 10000
#define IBW_PING_DEFAULT_TIMEOUT_MS 200
#define IBW_PING_DEFAULT_RETRIES 0
#define IBW_PING_DEFAULT_DOWN_AFTER 3
#define IBW_PING_DEFAULT_UP_AFTER 2
#define IBW_PING_DEFAULT_WINDOW 20
#define IBW_PING_DEFAULT_DEGRADED_PCT 20
#define IBW_PING_DEFAULT_RECOVER_PCT 5
#define IBW_PING_DEFAULT_COUNT 5

const char *ibw_ping_method_str(enum ibw_ping_method m);
int ibw_ping_method_parse(const char *s, enum ibw_ping_method *m);
const char *ibw_endport_state_str(enum ibw_endport_state s);

struct ibw_endport {
	uint64_t port_guid;
	uint64_t node_guid;
	uint8_t port;
	uint16_t lid;
	char name[IBW_NAME_SIZE];
	char target[80]; /* as configured, for configured targets */
	uint8_t found; /* resolved in the fabric */
	uint8_t echo_answered; /* a responder has answered an echo */
	enum ibw_ping_method last_method;
	enum ibw_endport_state state;
	uint64_t state_since_us; /* CLOCK_REALTIME */
	char reason[64];
	uint64_t sent, received;
	unsigned window_n, window_lost;
	uint64_t rtt_last_us, rtt_min_us, rtt_max_us;
	double rtt_avg_us, rtt_mdev_us;
	uint64_t last_reply_us; /* CLOCK_REALTIME */
	char responder_host[IBW_ECHO_PAYLOAD + 1];
	/* private */
	/* the loss window: a bit set per lost probe of the last window_n */
	uint64_t win_lost[IBW_PING_WINDOW_MAX / 64];
	unsigned win_pos;
	double rtt_sum, rtt_sum2;
	uint64_t rtt_n;
	unsigned consec_ok, consec_fail;
	uint64_t next_due;
	uint8_t busy;
	uint8_t seen; /* in the last fabric update */
	uint16_t seq;
	/* where the last discovery found its node (directed 0: unknown) */
	struct ibw_dest dr;
	/* The last confirmation of a loss found its port active at the
	 * LID that went silent: the port is up, its LID's route or its
	 * agent is not. Cleared by an answer, and by a discovery that
	 * finds the port not active or does not find it. */
	uint8_t still_active;
};

/* 0 (retries -1) picks the IBW_PING_DEFAULT_ value. */
struct ibw_ping_opts {
	uint64_t interval_us;
	unsigned timeout_ms; /* per try */
	int retries;
	enum ibw_ping_method method;
	unsigned down_after; /* consecutive lost probes */
	unsigned up_after; /* consecutive answers */
	unsigned window; /* probes in the loss window */
	unsigned degraded_loss_pct;
	unsigned recover_loss_pct;
	/* Targets: a list ("6", "0x0002c90300a00001", "node0001 HCA-1"),
	 * else the endports with every bit of capmask_bits, else every CA
	 * port of the fabric. */
	char **targets;
	unsigned ntargets;
	uint32_t capmask_bits;
};

struct ibw_pinger;

struct ibw_pinger *ibw_pinger_new(struct ibw_engine *e, struct ibw_events *ev,
				  const struct ibw_ping_opts *o);
void ibw_pinger_free(struct ibw_pinger *p);

/* Follow a new discovery: add targets, refresh LIDs by GUID. @names
 * resolves node names (may be NULL). */
void ibw_pinger_update(struct ibw_pinger *p, const struct ibw_fabric *f,
		       const char *(*name_of)(const struct ibw_fnode *n,
					      void *arg),
		       void *arg);
/* Ping every target at its interval, spread across it. */
void ibw_pinger_start(struct ibw_pinger *p);
/* Stop probing while our own port is gone (answers to probes in flight
 * are dropped, so no endport goes down for it); resume after. */
void ibw_pinger_pause(struct ibw_pinger *p, int paused);
/* Call @cb after each lost probe (to check our own port first). */
void ibw_pinger_on_loss(struct ibw_pinger *p, void (*cb)(void *arg), void *arg);
/* Ping every target once now; @cb when all are settled. */
int ibw_pinger_round(struct ibw_pinger *p,
		     void (*cb)(struct ibw_pinger *p, void *arg), void *arg);

const struct ibw_endport *ibw_pinger_endports(const struct ibw_pinger *p,
					      unsigned *n);

/* On demand: @count probes to @lid, one after another. */
struct ibw_ping_probe {
	uint16_t seq;
	enum ibw_mad_result result;
	int status;
	uint64_t rtt_us;
	enum ibw_ping_method method;
	int bad_echo; /* answered, but the echo did not match */
	int no_responder; /* the port answered that nobody serves it there */
};

struct ibw_ping_summary {
	uint16_t lid;
	enum ibw_ping_method method;
	unsigned sent, received;
	unsigned no_responder; /* of received: "not supported" answers */
	double loss_pct;
	uint64_t rtt_min_us, rtt_max_us;
	double rtt_avg_us, rtt_mdev_us;
	char responder_host[IBW_ECHO_PAYLOAD + 1];
	const struct ibw_ping_probe *probes; /* valid during the callback */
	/* echo replies of the last probe, for LID/GUID and timestamps */
	struct ibw_echo_reply last_reply;
	int have_reply;
};

typedef void (*ibw_ping_cb)(const struct ibw_ping_summary *s, void *arg);

/* At most 16 on-demand runs at once: -EBUSY beyond that. @type picks the
 * echo type for IBW_PING_ECHO (1 echo, 3 timestamp, 5 LID/GUID, 0 plain
 * ibping). */
/* 1 if @d is an answer saying nobody serves the request at that port
 * ("not supported", or a redirect): alive, without a responder. */
int ibw_ping_no_responder(const struct ibw_mad_done *d);

int ibw_ping_run(struct ibw_pinger *p, uint16_t lid,
		 enum ibw_ping_method method, enum ibw_echo_type type,
		 unsigned count, unsigned timeout_ms, ibw_ping_cb cb,
		 void *arg);

/* Feed one probe's outcome to @ep's statistics and state machine
 * (exposed for unit tests). Returns 1 when the state changed. */
int ibw_endport_account(struct ibw_endport *ep, const struct ibw_ping_opts *o,
			int ok, uint64_t rtt_us, struct ibw_events *ev);

/* @lost of @sent probes in percent (0 with none sent): the one loss
 * formula, for the state machine, on-demand pings and the snapshot's
 * endport views. */
double ibw_ping_loss_pct(uint64_t lost, uint64_t sent);

#endif
