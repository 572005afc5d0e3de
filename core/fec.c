// SPDX-License-Identifier: BSD-2-Clause
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "codec.h"
#include "ctr_math.h"
#include "fec.h"

/* libibmad's field of @f in @layout, or -1 where the layout has none. */
static int mad_field(enum ibw_fec_field f, enum ibw_fec_layout layout)
{
	int rs = layout == IBW_FEC_RS;

	if (f == IBW_FEC_SYNC_HDR)
		return rs ? IB_PESC_RSFEC_SYNC_HDR_ERR_CTR_F
			  : IB_PESC_SYNC_HDR_ERR_CTR_F;
	if (f == IBW_FEC_UNK_BLOCK)
		return rs ? IB_PESC_RSFEC_UNK_BLOCK_CTR_F
			  : IB_PESC_UNK_BLOCK_CTR_F;
	if (!rs && f >= IBW_FEC_ERR_DET0 && f < IBW_FEC_CORR_BLK0)
		return IB_PESC_ERR_DET_CTR_LANE0_F + (f - IBW_FEC_ERR_DET0);
	if (!rs && f >= IBW_FEC_CORR_BLK0 && f < IBW_FEC_UNCORR_BLK0)
		return IB_PESC_FEC_CORR_BLOCK_CTR_LANE0_F +
		       (f - IBW_FEC_CORR_BLK0);
	if (!rs && f >= IBW_FEC_UNCORR_BLK0 && f < IBW_FEC_CORR_SYM0)
		return IB_PESC_FEC_UNCORR_BLOCK_CTR_LANE0_F +
		       (f - IBW_FEC_UNCORR_BLK0);
	if (rs && f >= IBW_FEC_CORR_SYM0 && f < IBW_FEC_PORT_CORR_BLK)
		return IB_PESC_RSFEC_FEC_CORR_SYMBOL_CTR_LANE0_F +
		       (f - IBW_FEC_CORR_SYM0);
	if (rs && f == IBW_FEC_PORT_CORR_BLK)
		return IB_PESC_PORT_FEC_CORR_BLOCK_CTR_F;
	if (rs && f == IBW_FEC_PORT_UNCORR_BLK)
		return IB_PESC_PORT_FEC_UNCORR_BLOCK_CTR_F;
	if (rs && f == IBW_FEC_PORT_CORR_SYM)
		return IB_PESC_PORT_FEC_CORR_SYMBOL_CTR_F;
	return -1;
}

const char *ibw_fec_field_name(enum ibw_fec_field f)
{
	int m = mad_field(f, IBW_FEC_FC);

	if (m < 0)
		m = mad_field(f, IBW_FEC_RS);
	return m < 0 ? "?" : mad_field_name((enum MAD_FIELDS)m);
}

const char *ibw_fec_layout_name(enum ibw_fec_layout l)
{
	return l == IBW_FEC_FC ? "fc" : l == IBW_FEC_RS ? "rs" : "none";
}

unsigned ibw_fec_field_bits(enum ibw_fec_field f)
{
	return f < IBW_FEC_CORR_BLK0 ? 16 : 32;
}

int ibw_fec_decode(const uint8_t *data, size_t len, enum ibw_fec_layout layout,
		   struct ibw_fec_reading *r)
{
	uint8_t mode, src;
	unsigned f;

	/* the last field ends at bit 1216 (PortFECCorrectedSymbolCtr) */
	if (len < 152 || (layout != IBW_FEC_FC && layout != IBW_FEC_RS))
		return -1;
	mode = r->mode;
	src = r->mode_src;
	memset(r, 0, sizeof(*r));
	r->layout = (uint8_t)layout;
	r->mode = mode;
	r->mode_src = src;
	for (f = 0; f < IBW_FEC_NFIELDS; f++) {
		int m = mad_field((enum ibw_fec_field)f, layout);

		if (m < 0)
			continue;
		r->v[f] = ibw_mad_get(data, m);
		r->have |= 1ull << f;
	}
	return 0;
}

struct ibw_fec *ibw_fec_fold(struct ibw_fec *old,
			     const struct ibw_fec_reading *r, int ours)
{
	struct ibw_fec *n;
	unsigned f;
	int reset = 0;
	int changed = !old || ours || old->layout != r->layout ||
		      old->mode != r->mode || old->mode_src != r->mode_src ||
		      (old->have & r->have) != r->have;

	for (f = 0; !changed && f < IBW_FEC_NFIELDS; f++)
		if ((r->have >> f & 1) &&
		    (old->raw[f] != r->v[f] || old->last_delta[f]))
			changed = 1;
	if (!changed)
		return ibw_fec_ref(old);
	n = malloc(sizeof(*n));
	if (!n)
		return NULL;
	if (old)
		*n = *old;
	else
		memset(n, 0, sizeof(*n));
	n->refs = 1;
	n->layout = r->layout;
	n->saturated = 0;
	n->mode = r->mode;
	n->mode_src = r->mode_src;
	for (f = 0; f < IBW_FEC_NFIELDS; f++) {
		int first = !(n->have >> f & 1);

		n->last_delta[f] = 0;
		if (!(r->have >> f & 1))
			continue;
		n->last_delta[f] = ibw_ctr_fold32(&n->raw[f], &n->total[f],
						  r->v[f], first, ours, &reset);
		if (ibw_ctr_saturated(r->v[f],
				      ibw_ctr_max(ibw_fec_field_bits(f))))
			n->saturated |= 1ull << f;
		n->have |= 1ull << f;
	}
	n->resets += (uint32_t)reset; /* one clearing, however many fields */
	return n;
}

uint64_t ibw_fec_near_max(const struct ibw_fec_reading *r)
{
	uint64_t m = 0;
	unsigned f;

	for (f = 0; f < IBW_FEC_NFIELDS; f++)
		if ((r->have >> f & 1) &&
		    ibw_ctr_near_max(r->v[f],
				     ibw_ctr_max(ibw_fec_field_bits(f))))
			m |= 1ull << f;
	return m;
}

struct ibw_fec *ibw_fec_ref(struct ibw_fec *f)
{
	if (f)
		__atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
	return f;
}

void ibw_fec_unref(struct ibw_fec *f)
{
	if (f && __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(f);
}

int ibw_fec_mode_is_rs(int pma_rs, unsigned mode)
{
	/* perfquery -T: RS-FEC (2) or RS-FEC2 (4); not low-latency RS (3) */
	return pma_rs && (mode == 2 || mode == 4);
}

const char *ibw_fec_mode_name(unsigned mode)
{
	static const char *const names[] = { "none", "fc", "rs", "ll_rs",
					     "rs2" };

	return mode < sizeof(names) / sizeof(names[0]) ? names[mode]
						       : "unknown";
}

const char *ibw_fec_mode_src_name(enum ibw_fec_mode_src s)
{
	switch (s) {
	case IBW_FEC_MODE_READ:
		return "read";
	case IBW_FEC_MODE_LAST:
		return "last_known";
	case IBW_FEC_MODE_FALLBACK:
		return "fc_fallback";
	default:
		return "unread";
	}
}
