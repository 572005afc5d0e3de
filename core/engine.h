/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The MAD engine: every MAD ibwatch sends goes through here. A request
 * names a destination (LID-routed or a directed-route path), the MAD's
 * class, method, attribute, modifier and payload, a deadline and a retry
 * count, and one callback that receives the outcome. The engine keeps its
 * own deadlines and retries, matches answers by the low 32 bits of the
 * transaction id, bounds the MADs in flight globally and per destination,
 * and counts everything it does.
 */
#ifndef IBW_ENGINE_H
#define IBW_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "loop.h"
#include "madkind.h"
#include "transport.h"

#define IBW_DR_MAX_HOPS 63
#define IBW_QP1_QKEY 0x80010000u

enum {
	IBW_CLASS_SMI = 0x01,
	IBW_CLASS_SA = 0x03,
	IBW_CLASS_PERF = 0x04,
	IBW_CLASS_VENDOR_ECHO = 0x32,
	IBW_CLASS_SMI_DR = 0x81,
};

enum {
	IBW_METHOD_GET = 0x01,
	IBW_METHOD_SET = 0x02,
	IBW_METHOD_GET_RESP = 0x81,
	IBW_METHOD_GET_TABLE = 0x12,
};

/* Where a request goes. */
struct ibw_dest {
	int directed; /* 1: directed route over @path, else to @lid */
	uint16_t lid;
	uint8_t hops; /* directed: number of hops, 0 = the local port */
	uint8_t path[IBW_DR_MAX_HOPS + 1]; /* path[1..hops]: output ports */
	/* GMPs only; 0 means QP1 with the well-known QP1 Q_Key */
	uint32_t qpn;
	uint32_t qkey;
	uint8_t sl;
};

/* Fill @d for a LID-routed request. */
void ibw_dest_lid(struct ibw_dest *d, uint16_t lid);
/* Fill @d for a directed route; @path is "0" (local port) or "0,1,3".
 * Returns 0 or -EINVAL. */
int ibw_dest_dr_parse(struct ibw_dest *d, const char *path);
/* Format @d as "lid 12" or "dr 0,1,3"; returns @buf. */
char *ibw_dest_str(const struct ibw_dest *d, char *buf, size_t len);

enum ibw_mad_result {
	IBW_MAD_OK = 0,
	IBW_MAD_TIMEOUT, /* no answer to any try */
	IBW_MAD_STATUS, /* answered with a non-zero MAD status */
	IBW_MAD_TRANSPORT, /* send failed, or the fabric handed it back */
	IBW_MAD_CANCELLED, /* the engine was freed first */
};

const char *ibw_mad_result_str(enum ibw_mad_result r);

struct ibw_mad_done {
	enum ibw_mad_result result;
	/* IBW_MAD_STATUS: the MAD status; IBW_MAD_TRANSPORT: an errno */
	int status;
	/* The answer, when one came (OK and STATUS); valid only during the
	 * callback. */
	const uint8_t *mad;
	size_t len;
	unsigned tries;
	uint64_t rtt_us; /* of the try that was answered */
};

typedef void (*ibw_mad_cb)(const struct ibw_mad_done *done, void *arg);

struct ibw_mad_req {
	struct ibw_dest dest;
	uint8_t mgmt_class; /* SMI requests to a directed dest use 0x81 */
	uint8_t method;
	uint16_t attr_id;
	uint32_t attr_mod;
	uint64_t sa_comp_mask; /* SA only */
	const void *data; /* copied at the class's data offset */
	size_t data_len;
	unsigned timeout_ms; /* 0: the engine's default */
	int retries; /* -1: the engine's default */
	unsigned flags; /* IBW_MAD_F_* */
	ibw_mad_cb cb;
	void *arg;
};

/*
 * An attribute a node may never answer (an optional PerfMgt attribute:
 * ibsim's PMA drops PortExtendedSpeedsCounters, some firmware drops
 * others). Silence is learned once, across the fabric: while the kind
 * (class, method, attribute) is silent (madkind.h: never answered, and
 * IBW_MAD_SILENT_TRIES of its tries unanswered), one request of it goes
 * out at a time and the others end at once as timeouts, unsent (counted
 * as skipped). The first answer ends that for good.
 */
#define IBW_MAD_F_OPTIONAL 1u

/* The defaults of struct ibw_engine_config, measured under the latency
 * model (docs/benchmarks.md, "Under modelled hardware latency"). */
#define IBW_ENGINE_DEFAULT_MAX_INFLIGHT 128
#define IBW_ENGINE_DEFAULT_MAX_PER_DEST 4
#define IBW_ENGINE_DEFAULT_TIMEOUT_MS 100
#define IBW_ENGINE_DEFAULT_RETRIES 2
/* More in flight is cut to this: the TID slots must stay far from full. */
#define IBW_ENGINE_MAX_INFLIGHT 16384
/* A try leaves the window (it is a wait) once a try sent after it was
 * answered and it has waited four times the answered tries' average
 * round trip plus a millisecond, at least this, at most half its
 * timeout; with no later try answered, four times that, and at most a
 * window's worth so (docs/architecture.md, "The window and the waits"). */
#define IBW_ENGINE_WAIT_AFTER_MIN_US 2000u

struct ibw_engine_config {
	/* MADs in flight in all; 0: IBW_ENGINE_DEFAULT_MAX_INFLIGHT */
	unsigned max_inflight;
	/* ... to one destination; 0: IBW_ENGINE_DEFAULT_MAX_PER_DEST */
	unsigned max_per_dest;
	unsigned timeout_ms; /* per try; 0: IBW_ENGINE_DEFAULT_TIMEOUT_MS */
	int retries; /* extra tries; -1: IBW_ENGINE_DEFAULT_RETRIES */
	/* SMPs and SA requests in flight at most (the kernel's solicited
	 * flow control holds more back unsent); 0: 128 and 16. */
	unsigned max_smp_inflight;
	unsigned max_sa_inflight;
	/* A try leaves the window after at least this long; 0:
	 * IBW_ENGINE_WAIT_AFTER_MIN_US. */
	unsigned wait_after_min_us;
	/* ib_core's recv_queue_size (0: IBW_KERNEL_RECVQ_DEFAULT): the
	 * kernel's per-agent limits are fractions of it (a quarter for
	 * SMPs, a 32nd for SA requests), and the window is kept to half of
	 * it, so answers cannot overrun the QPs' receive rings. */
	unsigned recv_queue_size;
};

/* ib_core's default recv_queue_size, and where a running kernel says
 * what it uses. */
#define IBW_KERNEL_RECVQ_DEFAULT 512
#define IBW_KERNEL_RECVQ_PATH "/sys/module/ib_core/parameters/recv_queue_size"

/* Read a recv_queue_size from @path (a number, 1 to 65536). 0, or
 * -errno (-EINVAL for a file that says something else). */
int ibw_kernel_recvq_read(const char *path, unsigned *out);

struct ibw_engine_stats {
	uint64_t submitted;
	uint64_t sent; /* tries put on the wire, retries included */
	uint64_t received; /* MADs read from the transport */
	uint64_t ok;
	uint64_t timeouts; /* requests that ran out of tries */
	uint64_t try_timeouts; /* tries that went unanswered */
	uint64_t kernel_timeouts; /* ... that the kernel reported so */
	uint64_t retries;
	uint64_t status_errors;
	uint64_t transport_errors; /* requests failed by the transport */
	uint64_t send_errors;
	uint64_t returned; /* tries the fabric handed back undelivered */
	uint64_t late; /* answers to a try that had already timed out */
	uint64_t duplicates; /* second answers to an answered try */
	uint64_t unmatched; /* answers to nothing we sent */
	uint64_t mismatched; /* our TID, but not an answer to our MAD */
	uint64_t unsolicited; /* requests from elsewhere, not handled */
	uint64_t recv_errors; /* reads that failed (device still there) */
	uint64_t cancelled;
	/* times a request waited for a place in its class (SMP, SA) */
	uint64_t class_held;
	/* tries in flight in all (in the window or waits), most so far */
	unsigned inflight;
	unsigned inflight_hwm;
	/* tries that outwaited the window, in all, now and most at once;
	 * blind_waits: of waits, those that left it with no later try
	 * answered (docs/architecture.md, "The window and the waits") */
	uint64_t waits;
	uint64_t blind_waits;
	unsigned waiting;
	unsigned waiting_hwm;
	unsigned queued;
	unsigned queued_hwm;
	/* the limits in use: the window, SMPs and SA requests in flight,
	 * and the recv_queue_size they come from */
	unsigned window;
	unsigned window_hwm; /* the most tries in the window at once */
	unsigned smp_limit;
	unsigned sa_limit;
	unsigned recv_queue_size;
	int device_lost; /* the errno the device went away with, else 0 */
	uint64_t reopens; /* times a lost device was opened again */
	/* failed tries to reopen since the device was last lost */
	uint64_t reopen_tries_failed;
	/* the engine's loop's wakeups (ibw_loop_wakeups): not the
	 * engine's own count, but where its readers already look */
	uint64_t loop_wakeups;
	/* requests as they ended, by class, method and attribute */
	struct ibw_mad_kinds kinds;
	/* requests ended unsent as timeouts: their kind is silent
	 * (IBW_MAD_F_OPTIONAL), or their destination's PMA is (a PerfMgt
	 * request out of tries there, none answered since its queue was
	 * made) */
	uint64_t skipped;
};

struct ibw_engine;

/* Requests from other nodes (non-responses): return 1 if handled. */
typedef int (*ibw_request_cb)(const struct ibw_rx *rx, void *arg);
/* The device went away (-EIO...): called once, from the loop. */
typedef void (*ibw_lost_cb)(struct ibw_engine *e, int err, void *arg);

struct ibw_engine *ibw_engine_new(struct ibw_loop *loop,
				  struct ibw_transport *t,
				  const struct ibw_engine_config *cfg);
/* Cancels what is still queued or in flight (callbacks see CANCELLED). */
void ibw_engine_free(struct ibw_engine *e);

/* Queue @req; 0 or -errno (-EINVAL for a malformed request). The
 * callback always runs exactly once, never from inside this call. */
int ibw_engine_submit(struct ibw_engine *e, const struct ibw_mad_req *req);

/* The SL SA requests go out on: the local port's MasterSMSL (PortInfo
 * SMSL, sysfs sm_sl), as libibmad resolves the SM's address. 0 until
 * set. */
void ibw_engine_set_sa_sl(struct ibw_engine *e, uint8_t sl);

void ibw_engine_set_window(struct ibw_engine *e, unsigned max_inflight,
			   unsigned max_per_dest);
/* The M_Key every SMP submitted from now on carries (fabrics whose SM
 * protects the ports' management with one); 0, the default: none. A
 * secret: nothing the engine reports includes it. */
void ibw_engine_set_mkey(struct ibw_engine *e, uint64_t mkey);
void ibw_engine_set_request_handler(struct ibw_engine *e, ibw_request_cb cb,
				    void *arg);
/* Send @mad as it is (an answer to someone else's request): no TID, no
 * deadline, no retries. 0 or -errno. */
int ibw_engine_send_raw(struct ibw_engine *e, const struct ibw_mad_addr *to,
			const uint8_t *mad, size_t len);
/* Once the transport has failed for good (the device is gone), the engine
 * stops watching it and completes every request, queued or new, with
 * IBW_MAD_TRANSPORT; @cb hears of it once. */
void ibw_engine_set_lost_handler(struct ibw_engine *e, ibw_lost_cb cb,
				 void *arg);
/* Opens the device again: 0 and *@out (a transport with every agent
 * registered), or -errno while it is not back. */
typedef int (*ibw_reopen_fn)(struct ibw_transport **out, void *arg);
/* The device is open again: called from the loop, before requests that
 * waited are sent on it. */
typedef void (*ibw_back_cb)(struct ibw_engine *e, void *arg);

/*
 * Reopen a lost device in place: @first_us after a loss the engine closes
 * the dead transport and calls @open, again after twice as long on each
 * failure up to @max_us (0: 1 s; @max_us below it: @first_us), until it
 * succeeds; then it uses the new transport and calls @back. With this set,
 * the engine owns its transport (ibw_engine_transport() gives the current
 * one, NULL while the device is away); the caller still closes it after
 * ibw_engine_free(). Requests keep failing with IBW_MAD_TRANSPORT until
 * the device is back.
 */
void ibw_engine_set_reopen(struct ibw_engine *e, ibw_reopen_fn open,
			   ibw_back_cb back, void *arg, uint64_t first_us,
			   uint64_t max_us);
/* While the device is away and being reopened: the delay before the
 * next try (the backoff), else 0. */
uint64_t ibw_engine_reopen_delay(const struct ibw_engine *e);
/* The transport in use; NULL while a lost device is closed. */
struct ibw_transport *ibw_engine_transport(const struct ibw_engine *e);
/* 0, or the -errno with which the device went away. */
int ibw_engine_lost(const struct ibw_engine *e);
void ibw_engine_get_stats(const struct ibw_engine *e,
			  struct ibw_engine_stats *st);
struct ibw_loop *ibw_engine_loop(const struct ibw_engine *e);
/* Requests queued or in flight. */
unsigned ibw_engine_busy(const struct ibw_engine *e);
/* Read and dispatch what the transport holds (the loop calls this). */
void ibw_engine_poll(struct ibw_engine *e);

#endif
