// SPDX-License-Identifier: BSD-2-Clause
/*
 * The MAD engine's device: its loss and return (reopening with a
 * growing delay), and the engine's small accessors and setters, the
 * destinations' helpers and the kernel's receive-queue size.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"

static const char *const result_names[] = {
	[IBW_MAD_OK] = "ok",
	[IBW_MAD_TIMEOUT] = "timeout",
	[IBW_MAD_STATUS] = "status error",
	[IBW_MAD_TRANSPORT] = "transport error",
	[IBW_MAD_CANCELLED] = "cancelled",
};

const char *ibw_mad_result_str(enum ibw_mad_result r)
{
	if ((unsigned)r < sizeof(result_names) / sizeof(result_names[0]))
		return result_names[r];
	return "unknown";
}

void ibw_dest_lid(struct ibw_dest *d, uint16_t lid)
{
	memset(d, 0, sizeof(*d));
	d->lid = lid;
}

int ibw_dest_dr_parse(struct ibw_dest *d, const char *path)
{
	const char *p = path;
	char *end;
	unsigned long v;
	int n = 0;

	memset(d, 0, sizeof(*d));
	d->directed = 1;
	/* The first element is the local port and is always 0. */
	v = strtoul(p, &end, 10);
	if (end == p || v != 0)
		return -EINVAL;
	p = end;
	while (*p == ',') {
		p++;
		v = strtoul(p, &end, 10);
		if (end == p || v == 0 || v > 255 || n == IBW_DR_MAX_HOPS)
			return -EINVAL;
		d->path[++n] = (uint8_t)v;
		p = end;
	}
	if (*p)
		return -EINVAL;
	d->hops = (uint8_t)n;
	return 0;
}

char *ibw_dest_str(const struct ibw_dest *d, char *buf, size_t len)
{
	size_t off;
	int i;

	if (!d->directed) {
		snprintf(buf, len, "lid %u", d->lid);
		return buf;
	}
	off = (size_t)snprintf(buf, len, "dr 0");
	for (i = 1; i <= d->hops && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, ",%u",
					d->path[i]);
	return buf;
}

/*
 * The device is gone (an HCA reset, a driver reload): the kernel has
 * marked this file's agents dead, poll says EPOLLERR for good and every
 * read and write fails. Stop watching the fd at once, or a level-triggered
 * error wakes the loop forever; settle what was in flight and waiting, and
 * fail what comes later without touching the device. Reopening is the
 * owner's business (the lost callback).
 */
void ibw_eng_transport_lost(struct ibw_engine *e, int err)
{
	struct req *r;
	struct dest_q *q;
	int b;

	if (e->lost)
		return;
	e->lost = err < 0 ? err : -EIO;
	ibw_loop_unwatch(e->loop, ibw_transport_fd(e->t));
	if (e->reopen_fn) {
		e->reopen_delay_us = e->reopen_first_us;
		e->st.reopen_tries_failed = 0;
		ibw_timer_arm(e->reopen_timer, e->reopen_delay_us);
	}
	/* The queues first, so that no destination is left runnable with
	 * nothing queued; then what is in flight (which may free them). */
	for (b = 0; b < DEST_BUCKETS; b++) {
		for (q = e->buckets[b]; q; q = q->hnext) {
			while ((r = q->head)) {
				q->head = r->next;
				e->st.queued--;
				ibw_eng_finish(e, r, IBW_MAD_TRANSPORT,
					       -e->lost);
			}
			q->tail = NULL;
			q->runnable = 0;
			q->blocked = 0;
			q->run_next = NULL;
		}
	}
	e->run_head = e->run_tail = NULL;
	memset(e->blk_head, 0, sizeof(e->blk_head));
	memset(e->blk_tail, 0, sizeof(e->blk_tail));
	while ((r = e->fl_head)) {
		ibw_eng_leave_flight(e, r, SLOT_CLOSED);
		ibw_eng_finish(e, r, IBW_MAD_TRANSPORT, -e->lost);
	}
	ibw_eng_arm_deadline(e);
	if (e->lost_cb)
		e->lost_cb(e, e->lost, e->lost_arg);
}

void ibw_eng_on_reopen_timer(struct ibw_timer *tm, void *arg)
{
	struct ibw_engine *e = arg;
	struct ibw_transport *t = NULL;
	int rc;

	if (!e->lost)
		return;
	if (e->t) {
		/* Closed here, not where the loss was seen: a MAD being
		 * handled then still points into the transport's buffer.
		 * The kernel frees the file's dead agents on this close. */
		ibw_transport_close(e->t);
		e->t = NULL;
	}
	rc = e->reopen_fn(&t, e->reopen_arg);
	if (rc == 0 && t &&
	    ibw_loop_watch(e->loop, ibw_transport_fd(t), IBW_EV_READ,
			   ibw_eng_on_readable, e) < 0) {
		ibw_transport_close(t);
		rc = -ENOMEM;
	}
	if (rc < 0 || !t) {
		e->st.reopen_tries_failed++;
		e->reopen_delay_us *= 2;
		if (e->reopen_delay_us > e->reopen_max_us)
			e->reopen_delay_us = e->reopen_max_us;
		ibw_timer_arm(tm, e->reopen_delay_us);
		return;
	}
	/* Every agent was registered afresh on the new file by the open;
	 * what was in flight on the old one has long been settled. */
	e->t = t;
	e->lost = 0;
	e->st.reopens++;
	if (e->back_cb)
		e->back_cb(e, e->reopen_arg);
	ibw_eng_pump(e);
}

void ibw_engine_set_reopen(struct ibw_engine *e, ibw_reopen_fn fn,
			   ibw_back_cb back, void *arg, uint64_t first_us,
			   uint64_t max_us)
{
	e->reopen_fn = fn;
	e->back_cb = back;
	e->reopen_arg = arg;
	e->reopen_first_us = first_us ? first_us : 1000000u;
	e->reopen_max_us = max_us > e->reopen_first_us ? max_us
						       : e->reopen_first_us;
}

uint64_t ibw_engine_reopen_delay(const struct ibw_engine *e)
{
	return e->lost && e->reopen_fn ? e->reopen_delay_us : 0;
}

struct ibw_transport *ibw_engine_transport(const struct ibw_engine *e)
{
	return e->t;
}

int ibw_engine_lost(const struct ibw_engine *e)
{
	return e->lost;
}

void ibw_engine_set_lost_handler(struct ibw_engine *e, ibw_lost_cb cb,
				 void *arg)
{
	e->lost_cb = cb;
	e->lost_arg = arg;
}

int ibw_kernel_recvq_read(const char *path, unsigned *out)
{
	char buf[32], *end;
	unsigned long v;
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok)
		return -EINVAL;
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n') || !v || v > 65536)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

void ibw_engine_set_sa_sl(struct ibw_engine *e, uint8_t sl)
{
	e->sa_sl = sl & 0x0f;
}

void ibw_engine_set_mkey(struct ibw_engine *e, uint64_t mkey)
{
	e->smp_mkey = mkey;
}

void ibw_engine_set_request_handler(struct ibw_engine *e, ibw_request_cb cb,
				    void *arg)
{
	e->req_cb = cb;
	e->req_arg = arg;
}

void ibw_engine_get_stats(const struct ibw_engine *e,
			  struct ibw_engine_stats *st)
{
	*st = e->st;
	st->window = e->cfg.max_inflight;
	st->smp_limit = e->grp_cap[0];
	st->sa_limit = e->grp_cap[1];
	st->recv_queue_size = e->cfg.recv_queue_size;
	st->device_lost = -e->lost;
	st->loop_wakeups = ibw_loop_wakeups(e->loop);
}

struct ibw_loop *ibw_engine_loop(const struct ibw_engine *e)
{
	return e->loop;
}
