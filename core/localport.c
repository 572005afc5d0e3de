// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <string.h>

#include "localport.h"

static void settle(struct ibw_localport_query *q, const struct ibw_mad_done *d,
		   uint16_t attr)
{
	int rc = -EINVAL;

	if (d->result == IBW_MAD_OK) {
		switch (attr) {
		case IBW_ATTR_NODE_INFO:
			rc = ibw_nodeinfo_decode(d->mad, d->len, &q->ni);
			q->have_nodeinfo = rc == 0;
			break;
		case IBW_ATTR_PORT_INFO:
			rc = ibw_portinfo_decode(d->mad, d->len, &q->pi);
			q->have_portinfo = rc == 0;
			/* SA queries go out on the SL the port says the SM
			 * is reached on, as libibmad's do. */
			if (rc == 0)
				ibw_engine_set_sa_sl(q->e, q->pi.sm_sl);
			break;
		case IBW_ATTR_NODE_DESC:
			rc = ibw_nodedesc_decode(d->mad, d->len, q->desc,
						 sizeof(q->desc));
			q->have_desc = rc == 0;
			break;
		}
	}
	if (q->first_error == IBW_MAD_OK && d->result != IBW_MAD_OK) {
		q->first_error = d->result;
		q->first_status = d->status;
	}
}

static void on_answer(const struct ibw_mad_done *d, void *arg)
{
	struct ibw_localport_part *p = arg;
	struct ibw_localport_query *q = p->q;

	settle(q, d, p->attr);
	if (--q->pending == 0)
		q->cb(q, q->arg);
}

int ibw_localport_query(struct ibw_engine *e, int portnum,
			struct ibw_localport_query *q,
			void (*cb)(struct ibw_localport_query *q, void *arg),
			void *arg)
{
	static const uint16_t attrs[3] = { IBW_ATTR_NODE_INFO,
					   IBW_ATTR_NODE_DESC,
					   IBW_ATTR_PORT_INFO };
	struct ibw_mad_req r;
	int i, rc;

	memset(q, 0, sizeof(*q));
	q->e = e;
	q->cb = cb;
	q->arg = arg;
	for (i = 0; i < 3; i++) {
		memset(&r, 0, sizeof(r));
		ibw_dest_dr_parse(&r.dest, "0");
		r.mgmt_class = IBW_CLASS_SMI_DR;
		r.method = IBW_METHOD_GET;
		r.attr_id = attrs[i];
		r.attr_mod = attrs[i] == IBW_ATTR_PORT_INFO ? (uint32_t)portnum
							    : 0;
		r.retries = -1;
		r.cb = on_answer;
		q->parts[i].q = q;
		q->parts[i].attr = attrs[i];
		r.arg = &q->parts[i];
		rc = ibw_engine_submit(e, &r);
		if (rc < 0 && i == 0)
			return rc;
		if (rc < 0) {
			/* The parts already queued settle and call back. */
			q->first_error = IBW_MAD_TRANSPORT;
			q->first_status = -rc;
			break;
		}
		q->pending++;
	}
	return 0;
}
