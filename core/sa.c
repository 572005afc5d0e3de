// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "sa.h"

#define SA_HDR_LEN 20 /* SM_Key .. ComponentMask, part of RMPP payload */
#define RMPP_ACTIVE 0x1
#define RMPP_FIRST 0x2
#define RMPP_LAST 0x4

/* Component mask bits. */
#define NR_PORTGUID (1ull << 8)
#define NR_NODEDESC (1ull << 14)
#define PIR_CAPMASK (1ull << 7)
#define PR_DGID (1ull << 2)
#define PR_SGID (1ull << 3)
#define PR_NUMBPATH (1ull << 12)

/* Record layouts (IBA 15.2.5). */
#define NR_LID_OFFS 0
#define NR_NODEINFO_OFFS 4
#define NR_DESC_OFFS 44
#define PIR_LID_OFFS 0
#define PIR_PORTINFO_OFFS 4

int ibw_sa_parse(const uint8_t *mad, size_t len, struct ibw_sa_result *r)
{
	unsigned flags, attr_offs;
	size_t data_len;

	memset(r, 0, sizeof(*r));
	if (!mad || len < IB_SA_DATA_OFFS || mad[1] != IBW_CLASS_SA)
		return -EINVAL;
	attr_offs = ibw_mad_get(mad, IB_SA_ATTROFFS_F);
	r->record_size = (size_t)attr_offs * 8;
	flags = ibw_mad_get(mad, IB_SA_RMPP_FLAGS_F);
	data_len = len - IB_SA_DATA_OFFS;
	r->complete = 1;
	if (flags & RMPP_ACTIVE) {
		r->payload_len = ibw_mad_get(mad, IB_SA_RMPP_LEN_F);
		if (len == IBW_MAD_SIZE && !(flags & RMPP_LAST)) {
			/* A full segment and nothing says it is the last:
			 * the rest never came (the kernel hands over only
			 * whole transfers, and umad2sim cuts every answer
			 * at one MAD). Whatever we have is not the table. A
			 * shorter answer is whole even without the flags. */
			r->complete = 0;
		} else if (len <= 256 && (flags & RMPP_FIRST) &&
			   r->payload_len >= SA_HDR_LEN &&
			   r->payload_len - SA_HDR_LEN < data_len) {
			/* A single-segment transfer: the payload length
			 * says how much of the MAD is records. */
			data_len = r->payload_len - SA_HDR_LEN;
		}
	}
	if (r->record_size) {
		r->nrecords = (unsigned)(data_len / r->record_size);
	} else if (data_len && !(flags & RMPP_ACTIVE)) {
		/* An old SA leaving AttributeOffset 0 on a Get: one record
		 * filling the data area. */
		r->record_size = data_len;
		r->nrecords = 1;
	}
	r->records = mad + IB_SA_DATA_OFFS;
	return 0;
}

struct sa_op {
	ibw_sa_cb cb;
	void *arg;
};

static void sa_done(const struct ibw_mad_done *d, void *arg)
{
	struct sa_op *op = arg;
	struct ibw_sa_result r;

	memset(&r, 0, sizeof(r));
	if (d->mad && ibw_sa_parse(d->mad, d->len, &r) < 0 &&
	    d->result == IBW_MAD_OK) {
		r.result = IBW_MAD_STATUS;
		r.status = -EINVAL;
	} else {
		r.result = d->result;
		r.status = d->status;
	}
	if (r.result != IBW_MAD_OK) {
		r.nrecords = 0;
		r.records = NULL;
	}
	op->cb(&r, op->arg);
	free(op);
}

int ibw_sa_query(struct ibw_engine *e, uint16_t sm_lid, uint8_t method,
		 uint16_t attr, uint32_t attr_mod, uint64_t comp_mask,
		 const void *tmpl, size_t tmpl_len, ibw_sa_cb cb, void *arg)
{
	struct sa_op *op;
	struct ibw_mad_req r;
	int rc;

	if (!sm_lid || !cb || tmpl_len > IB_SA_DATA_SIZE)
		return -EINVAL;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	op->cb = cb;
	op->arg = arg;
	memset(&r, 0, sizeof(r));
	ibw_dest_lid(&r.dest, sm_lid);
	r.mgmt_class = IBW_CLASS_SA;
	r.method = method;
	r.attr_id = attr;
	r.attr_mod = attr_mod;
	r.sa_comp_mask = comp_mask;
	r.data = tmpl;
	r.data_len = tmpl_len;
	r.retries = -1;
	r.cb = sa_done;
	r.arg = op;
	rc = ibw_engine_submit(e, &r);
	if (rc < 0)
		free(op);
	return rc;
}

struct lid_op {
	ibw_sa_lid_cb cb;
	void *arg;
	int path; /* PathRecord: the DLID field */
};

static void lid_done(const struct ibw_sa_result *r, void *arg)
{
	struct lid_op *op = arg;
	struct ibw_sa_lid out;

	memset(&out, 0, sizeof(out));
	out.result = r->result;
	out.status = r->status;
	if (r->result == IBW_MAD_OK && r->nrecords >= 1) {
		if (op->path)
			out.lid = (uint16_t)ibw_mad_get(r->records,
							IB_SA_PR_DLID_F);
		else
			out.lid = (uint16_t)(r->records[NR_LID_OFFS] << 8 |
					     r->records[NR_LID_OFFS + 1]);
	}
	op->cb(&out, op->arg);
	free(op);
}

static int lid_query(struct ibw_engine *e, uint16_t sm_lid, uint16_t attr,
		     uint64_t mask, const uint8_t *tmpl, size_t len, int path,
		     ibw_sa_lid_cb cb, void *arg)
{
	struct lid_op *op = calloc(1, sizeof(*op));
	int rc;

	if (!op)
		return -ENOMEM;
	op->cb = cb;
	op->arg = arg;
	op->path = path;
	rc = ibw_sa_query(e, sm_lid, IBW_METHOD_GET, attr, 0, mask, tmpl, len,
			  lid_done, op);
	if (rc < 0)
		free(op);
	return rc;
}

int ibw_sa_lid_by_guid(struct ibw_engine *e, uint16_t sm_lid,
		       uint64_t port_guid, ibw_sa_lid_cb cb, void *arg)
{
	uint8_t rec[IB_SA_NR_RECSZ];

	memset(rec, 0, sizeof(rec));
	mad_set_field64(rec + NR_NODEINFO_OFFS, 0, IB_NODE_PORT_GUID_F,
			port_guid);
	return lid_query(e, sm_lid, IBW_SA_ATTR_NODE_RECORD, NR_PORTGUID, rec,
			 sizeof(rec), 0, cb, arg);
}

int ibw_sa_lid_by_name(struct ibw_engine *e, uint16_t sm_lid,
		       const char *node_desc, ibw_sa_lid_cb cb, void *arg)
{
	uint8_t rec[IB_SA_NR_RECSZ];
	size_t n = strlen(node_desc);

	if (!n || n > 64)
		return -EINVAL;
	memset(rec, 0, sizeof(rec));
	memcpy(rec + NR_DESC_OFFS, node_desc, n);
	return lid_query(e, sm_lid, IBW_SA_ATTR_NODE_RECORD, NR_NODEDESC, rec,
			 sizeof(rec), 0, cb, arg);
}

int ibw_sa_path_dlid(struct ibw_engine *e, uint16_t sm_lid,
		     const uint8_t sgid[16], const uint8_t dgid[16],
		     ibw_sa_lid_cb cb, void *arg)
{
	uint8_t rec[IB_SA_PR_RECSZ];
	/* mad_set_array() takes a non-const source: copies, not casts */
	uint8_t d[16], s[16];

	memcpy(d, dgid, sizeof(d));
	memcpy(s, sgid, sizeof(s));
	memset(rec, 0, sizeof(rec));
	mad_set_array(rec, 0, IB_SA_PR_DGID_F, d);
	mad_set_array(rec, 0, IB_SA_PR_SGID_F, s);
	/* NumbPath 1: one path is all we ask for. */
	mad_set_field(rec, 0, IB_SA_PR_NPATH_F, 1);
	return lid_query(e, sm_lid, IBW_SA_ATTR_PATH_RECORD,
			 PR_DGID | PR_SGID | PR_NUMBPATH, rec, sizeof(rec), 1,
			 cb, arg);
}

struct sel_op {
	struct ibw_engine *e;
	uint16_t sm_lid;
	uint32_t bits;
	const struct ibw_fabric *f;
	ibw_sa_select_cb cb;
	void *arg;
	struct ibw_sa_selection sel;
};

static void select_from_fabric(struct sel_op *op)
{
	const struct ibw_fabric *f = op->f;
	unsigned i, p, n = 0;

	op->sel.source = IBW_SEL_DISCOVERY;
	op->sel.lids = calloc(f ? f->nnodes * 2 + 1 : 1, sizeof(uint16_t));
	for (i = 0; op->sel.lids && f && i < f->nnodes; i++) {
		const struct ibw_fnode *nd = &f->nodes[i];

		if (nd->gone || nd->ni.node_type == IBW_NODE_SWITCH) {
			/* A switch is one endport: port 0. */
			if (!nd->gone && nd->ports[0].have_pi &&
			    (nd->ports[0].pi.capmask & op->bits) == op->bits) {
				if (n < f->nnodes * 2)
					op->sel.lids[n++] = nd->ports[0].pi.lid;
			}
			continue;
		}
		for (p = 1; p < nd->nports; p++) {
			const struct ibw_fport *fp = &nd->ports[p];

			if (fp->have_pi && fp->pi.lid &&
			    (fp->pi.capmask & op->bits) == op->bits &&
			    n < f->nnodes * 2)
				op->sel.lids[n++] = fp->pi.lid;
		}
	}
	op->sel.n = n;
}

static void finish_select(struct sel_op *op)
{
	op->cb(&op->sel, op->arg);
	free(op->sel.lids);
	free(op);
}

static void pir_done(const struct ibw_sa_result *r, void *arg)
{
	struct sel_op *op = arg;
	unsigned i;

	if (r->result == IBW_MAD_OK && r->complete) {
		op->sel.source = IBW_SEL_SA;
		op->sel.lids = calloc(r->nrecords + 1, sizeof(uint16_t));
		for (i = 0; op->sel.lids && i < r->nrecords; i++) {
			const uint8_t *rec = r->records + i * r->record_size;

			op->sel.lids[op->sel.n++] =
				(uint16_t)(rec[PIR_LID_OFFS] << 8 |
					   rec[PIR_LID_OFFS + 1]);
		}
		if (op->sel.lids) {
			finish_select(op);
			return;
		}
	}
	op->sel.sa_incomplete = r->result == IBW_MAD_OK && !r->complete;
	select_from_fabric(op);
	finish_select(op);
}

static void cpi_done(const struct ibw_sa_result *r, void *arg)
{
	struct sel_op *op = arg;
	uint8_t rec[IB_SA_DATA_SIZE];
	uint32_t cap = 0;

	if (r->result == IBW_MAD_OK && r->records)
		cap = ibw_mad_get(r->records, IB_CPI_CAPMASK_F);
	op->sel.sa_supports_match = (cap & IBW_SA_CAP_PORTINFO_CAPMASK_MATCH) !=
				    0;
	if (!op->sel.sa_supports_match)
		goto fallback;
	/* PortInfoRecord: EndportLID, PortNum, reserved, then PortInfo. */
	memset(rec, 0, sizeof(rec));
	mad_set_field(rec + PIR_PORTINFO_OFFS, 0, IB_PORT_CAPMASK_F, op->bits);
	if (ibw_sa_query(op->e, op->sm_lid, IBW_METHOD_GET_TABLE,
			 IBW_SA_ATTR_PORTINFO_RECORD, 1u << 31, PIR_CAPMASK,
			 rec, 4 + 64, pir_done, op) == 0)
		return;
fallback:
	select_from_fabric(op);
	finish_select(op);
}

int ibw_sa_select_by_capmask(struct ibw_engine *e, uint16_t sm_lid,
			     uint32_t bits, const struct ibw_fabric *f,
			     ibw_sa_select_cb cb, void *arg)
{
	struct sel_op *op = calloc(1, sizeof(*op));
	int rc;

	if (!op)
		return -ENOMEM;
	op->e = e;
	op->sm_lid = sm_lid;
	op->bits = bits;
	op->f = f;
	op->cb = cb;
	op->arg = arg;
	rc = ibw_sa_query(e, sm_lid, IBW_METHOD_GET,
			  IBW_SA_ATTR_CLASS_PORT_INFO, 0, 0, NULL, 0, cpi_done,
			  op);
	if (rc < 0)
		free(op);
	return rc;
}
