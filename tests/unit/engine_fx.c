// SPDX-License-Identifier: BSD-2-Clause
/*
 * The MAD engine's unit tests' fixture (engine_fx.h).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "codec.h"
#include "engine.h"
#include "engine_fx.h"
#include "localport.h"
#include "sa.h"
#include "transport_mem.h"

int in_submit;

void on_done(const struct ibw_mad_done *d, void *arg)
{
	struct outcome *o = arg;

	o->calls++;
	o->d = *d;
	o->inside_submit = in_submit;
	if (d->mad)
		memcpy(o->mad, d->mad, IBW_MAD_SIZE);
	o->d.mad = d->mad ? o->mad : NULL;
}

int fx_setup_cfg(void **state, unsigned maxif, unsigned perdest,
		 unsigned timeout_ms, int retries)
{
	struct fx *f = calloc(1, sizeof(*f));
	/* Tries stay in the window until half their timeout: the tests of
	 * the window do not depend on how fast this machine answers. */
	struct ibw_engine_config cfg = { .max_inflight = maxif,
					 .max_per_dest = perdest,
					 .timeout_ms = timeout_ms,
					 .retries = retries,
					 .wait_after_min_us = 10000000 };

	f->loop = ibw_loop_new();
	f->t = ibw_mem_transport_new();
	f->e = ibw_engine_new(f->loop, f->t, &cfg);
	if (!f->loop || !f->t || !f->e)
		return -1;
	*state = f;
	return 0;
}

int fx_setup(void **state)
{
	return fx_setup_cfg(state, 64, 8, 20, 0);
}

int fx_setup_window(void **state)
{
	return fx_setup_cfg(state, 4, 2, 1000, 0);
}

int fx_teardown(void **state)
{
	struct fx *f = *state;

	ibw_engine_free(f->e);
	ibw_transport_close(f->t);
	ibw_loop_free(f->loop);
	free(f);
	return 0;
}

static void fired(struct ibw_timer *t, void *arg)
{
	*(int *)arg = 1;
}

/* Run the loop until a timer @ms away has fired, and so every timer due
 * before it (the loop runs them in deadline order); returns how often
 * the loop woke meanwhile. Unlike running it for @ms of the clock, this
 * cannot end before the loop ran once, however late this thread gets
 * the CPU. */
uint64_t run_past(struct fx *f, unsigned ms)
{
	struct ibw_timer *t;
	uint64_t w0 = ibw_loop_wakeups(f->loop);
	int done = 0;

	t = ibw_timer_new(f->loop, fired, &done);
	assert_non_null(t);
	ibw_timer_arm(t, ms * 1000u);
	while (!done)
		ibw_loop_run_once(f->loop, -1);
	ibw_timer_free(t);
	return ibw_loop_wakeups(f->loop) - w0;
}

void submit_get(struct fx *f, uint16_t lid, uint16_t attr, struct outcome *o,
		int retries)
{
	struct ibw_mad_req r;

	memset(&r, 0, sizeof(r));
	ibw_dest_lid(&r.dest, lid);
	r.mgmt_class = IBW_CLASS_SMI;
	r.method = IBW_METHOD_GET;
	r.attr_id = attr;
	r.retries = retries;
	r.cb = on_done;
	r.arg = o;
	in_submit = 1;
	assert_int_equal(ibw_engine_submit(f->e, &r), 0);
	in_submit = 0;
}

uint32_t tid_of(const uint8_t *mad)
{
	return (uint32_t)ibw_mad_get64(mad, IB_MAD_TRID_F);
}

/* Answer @req with @status, and mark the answer with @tag in the data. */
void answer(struct fx *f, uint8_t *req, int status, uint8_t tag)
{
	ibw_mem_make_response(req, status);
	req[IB_SMP_DATA_OFFS] = tag;
	assert_int_equal(ibw_mem_inject(f->t, req, IBW_MAD_SIZE, 0), 0);
}

struct ibw_engine_stats stats(struct fx *f)
{
	struct ibw_engine_stats st;

	ibw_engine_get_stats(f->e, &st);
	return st;
}

void submit_pma(struct fx *f, uint16_t lid, uint16_t attr, unsigned flags,
		struct outcome *o)
{
	struct ibw_mad_req r;

	memset(&r, 0, sizeof(r));
	ibw_dest_lid(&r.dest, lid);
	r.mgmt_class = IBW_CLASS_PERF;
	r.method = IBW_METHOD_GET;
	r.attr_id = attr;
	r.retries = 0;
	r.flags = flags;
	r.cb = on_done;
	r.arg = o;
	assert_int_equal(ibw_engine_submit(f->e, &r), 0);
}

const struct ibw_mad_kind *kind_of(const struct ibw_engine_stats *st,
				   uint16_t attr)
{
	unsigned i;

	for (i = 0; i < st->kinds.n; i++)
		if (st->kinds.k[i].mgmt_class == IBW_CLASS_PERF &&
		    st->kinds.k[i].attr == attr)
			return &st->kinds.k[i];
	return NULL;
}

int all_called(const struct outcome *o, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (!o[i].calls)
			return 0;
	return 1;
}
