/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The MAD engine's unit tests' fixture (engine_fx.c): an engine on the
 * in-memory transport, requests submitted and answered by hand, and the
 * tests kept in test_engine_dev.c.
 */
#ifndef IBW_ENGINE_FX_H
#define IBW_ENGINE_FX_H

#include <stdint.h>

#include "engine.h"
#include "loop.h"
#include "transport_mem.h"

struct fx {
	struct ibw_loop *loop;
	struct ibw_transport *t;
	struct ibw_engine *e;
};

struct outcome {
	int calls;
	struct ibw_mad_done d;
	uint8_t mad[IBW_MAD_SIZE];
	int inside_submit; /* set while the test is inside submit() */
};

/* Run the loop until @cond or 2 s pass. */
#define RUN_UNTIL(f, cond)                                  \
	do {                                                \
		uint64_t end_ = ibw_now_us() + 2000000u;    \
		while (!(cond) && ibw_now_us() < end_)      \
			ibw_loop_run_once((f)->loop, 5000); \
	} while (0)

/* set while a test is inside ibw_engine_submit() */
extern int in_submit;

void on_done(const struct ibw_mad_done *d, void *arg);
int fx_setup_cfg(void **state, unsigned maxif, unsigned perdest,
		 unsigned timeout_ms, int retries);
int fx_setup(void **state);
int fx_setup_window(void **state);
int fx_teardown(void **state);
uint64_t run_past(struct fx *f, unsigned ms);
void submit_get(struct fx *f, uint16_t lid, uint16_t attr, struct outcome *o,
		int retries);
uint32_t tid_of(const uint8_t *mad);
void answer(struct fx *f, uint8_t *req, int status, uint8_t tag);
struct ibw_engine_stats stats(struct fx *f);
void submit_pma(struct fx *f, uint16_t lid, uint16_t attr, unsigned flags,
		struct outcome *o);
const struct ibw_mad_kind *kind_of(const struct ibw_engine_stats *st,
				   uint16_t attr);
int all_called(const struct outcome *o, unsigned n);

/* test_engine_dev.c: the device lost and back, the window and the waits */
void test_device_lost_no_spin(void **state);
void test_device_reopened(void **state);
void test_returned_send_is_retried(void **state);
void test_recv_error_keeps_engine_alive(void **state);
void test_window_limits(void **state);
void test_waits_leave_window(void **state);
void test_slow_fabric_stays_bounded(void **state);
void test_recv_queue_limits(void **state);

#endif
