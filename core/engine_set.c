// SPDX-License-Identifier: BSD-2-Clause
/*
 * The MAD engine's leaves, which call nothing in engine.c: a request's
 * MAD as it goes on the wire, the engine's settings and readings, the
 * destinations' helpers and the kernel's receive-queue size.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "codec.h"
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

/* Encode @r's MAD with the caller's payload (@q->data, which r->r no
 * longer points to) and @e's M_Key in SMPs. */
int ibw_eng_build(const struct ibw_engine *e, struct req *r,
		  const struct ibw_mad_req *q)
{
	/* mad_encode() takes a non-const payload: a copy, not a cast. */
	uint8_t data[IBW_MAD_SIZE];
	ib_rpc_t rpc;
	ib_dr_path_t dr;
	int off = (int)ibw_mad_data_offset(q->mgmt_class);

	if (q->data_len > (size_t)(IBW_MAD_SIZE - off))
		return -EINVAL;
	if (q->data_len)
		memcpy(data, q->data, q->data_len);
	memset(&rpc, 0, sizeof(rpc));
	rpc.mgtclass = q->mgmt_class;
	rpc.method = q->method;
	rpc.attr.id = q->attr_id;
	rpc.attr.mod = q->attr_mod;
	rpc.dataoffs = off;
	rpc.datasz = (int)q->data_len;
	rpc.mask = q->sa_comp_mask;
	rpc.trid = 1; /* replaced per try */
	if (q->mgmt_class == IBW_CLASS_VENDOR_ECHO)
		rpc.oui = 0x001405;
	memset(&dr, 0, sizeof(dr));
	if (q->mgmt_class == IBW_CLASS_SMI_DR) {
		if (!q->dest.directed || q->dest.hops > IBW_DR_MAX_HOPS)
			return -EINVAL;
		dr.cnt = q->dest.hops;
		memcpy(dr.p, q->dest.path, sizeof(q->dest.path));
		dr.drslid = 0xffff;
		dr.drdlid = 0xffff;
	} else if (q->dest.directed || !q->dest.lid) {
		return -EINVAL;
	}
	/* Every SMP, whatever sends it (discovery, traces, the local port,
	 * pings, counter checks), carries the configured M_Key: an SMA
	 * whose port the SM protected drops SMPs with another key
	 * unanswered. Other classes have no M_Key there (an SA MAD has its
	 * SM_Key in those bytes). */
	if (q->mgmt_class == IBW_CLASS_SMI || q->mgmt_class == IBW_CLASS_SMI_DR)
		rpc.mkey = e->smp_mkey;
	memset(r->mad, 0, sizeof(r->mad));
	if (!mad_encode(r->mad, &rpc,
			q->mgmt_class == IBW_CLASS_SMI_DR ? &dr : NULL,
			q->data_len ? data : NULL))
		return -EINVAL;

	memset(&r->addr, 0, sizeof(r->addr));
	if (q->mgmt_class == IBW_CLASS_SMI_DR) {
		r->addr.lid = 0xffff;
	} else if (q->mgmt_class == IBW_CLASS_SMI) {
		r->addr.lid = q->dest.lid;
	} else {
		r->addr.lid = q->dest.lid;
		r->addr.qpn = q->dest.qpn ? q->dest.qpn : 1;
		r->addr.qkey = q->dest.qkey ? q->dest.qkey : IBW_QP1_QKEY;
		r->addr.sl = q->mgmt_class == IBW_CLASS_SA ? e->sa_sl
							   : q->dest.sl;
	}
	return 0;
}

unsigned ibw_engine_busy(const struct ibw_engine *e)
{
	unsigned n = e->st.queued + e->st.inflight;
	const struct req *r;

	for (r = e->done_head; r; r = r->next)
		n++;
	return n;
}
