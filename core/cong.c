// SPDX-License-Identifier: BSD-2-Clause
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "codec.h"
#include "cong.h"
#include "ctr_math.h"

static const struct {
	uint16_t id;
	uint8_t count;
	int first_field; /* libibmad's */
	uint64_t opt; /* PortSamplesControl:OptionMask bits */
} attrs[IBW_CONG_NATTR] = {
	[IBW_CONG_SW_VL] = { 0x30, 16, IB_PC_SW_PORT_VL_CONGESTION0_F,
			     1ull << 48 },
	[IBW_CONG_RCV_CC] = { 0x31, 2, IB_PC_RCV_CON_CTRL_PKT_RCV_FECN_F,
			      3ull << 49 },
	[IBW_CONG_SL_FECN] = { 0x32, 16, IB_PC_SL_RCV_FECN0_F, 1ull << 51 },
	[IBW_CONG_SL_BECN] = { 0x33, 16, IB_PC_SL_RCV_BECN0_F, 1ull << 52 },
	[IBW_CONG_XMIT_CC] = { 0x34, 1, IB_PC_XMIT_CON_CTRL_TIME_CONG_F,
			       1ull << 53 },
	[IBW_CONG_VL_XMIT_TC] = { 0x35, 15, IB_PC_VL_XMIT_TIME_CONG0_F,
				  1ull << 54 },
};

unsigned ibw_cong_attr_id(enum ibw_cong_attr a)
{
	return attrs[a].id;
}

unsigned ibw_cong_first(enum ibw_cong_attr a)
{
	unsigned i, n = 0;

	for (i = 0; i < (unsigned)a; i++)
		n += attrs[i].count;
	return n;
}

unsigned ibw_cong_count(enum ibw_cong_attr a)
{
	return attrs[a].count;
}

enum ibw_cong_attr ibw_cong_attr_of(unsigned i)
{
	int a;

	for (a = 0; a < IBW_CONG_NATTR - 1; a++) {
		if (i < attrs[a].count)
			break;
		i -= attrs[a].count;
	}
	return (enum ibw_cong_attr)a;
}

const char *ibw_cong_field_name(unsigned i)
{
	enum ibw_cong_attr a = ibw_cong_attr_of(i);

	return mad_field_name((enum MAD_FIELDS)(attrs[a].first_field +
						(int)(i - ibw_cong_first(a))));
}

int ibw_cong_advertised(uint64_t mask, enum ibw_cong_attr a)
{
	return (mask & attrs[a].opt) != 0;
}

uint64_t ibw_cong_option_bits(enum ibw_cong_attr a)
{
	return attrs[a].opt;
}

int ibw_cong_decode(const uint8_t *data, size_t len, enum ibw_cong_attr a,
		    struct ibw_cong_reading *r)
{
	unsigned k, first = ibw_cong_first(a);

	/* the widest, 16 x 32 bits after the 4-byte header */
	if (len < 68 || (unsigned)a >= IBW_CONG_NATTR)
		return -1;
	for (k = 0; k < attrs[a].count; k++)
		r->v[first + k] =
			ibw_mad_get(data, attrs[a].first_field + (int)k);
	r->have |= (uint8_t)(1u << a);
	return 0;
}

static unsigned field_bits(unsigned i)
{
	return ibw_cong_attr_of(i) == IBW_CONG_SW_VL ? 16 : 32;
}

struct ibw_cong *ibw_cong_fold(struct ibw_cong *old,
			       const struct ibw_cong_reading *r, unsigned ours)
{
	struct ibw_cong *n;
	unsigned i;
	int reset = 0, changed = !old || (ours & r->have) ||
				 (old->have & r->have) != r->have;

	for (i = 0; !changed && i < IBW_CONG_NFIELDS; i++)
		if ((r->have >> ibw_cong_attr_of(i) & 1) &&
		    old->raw[i] != r->v[i])
			changed = 1;
	if (!changed)
		return ibw_cong_ref(old);
	n = malloc(sizeof(*n));
	if (!n)
		return NULL;
	if (old)
		*n = *old;
	else
		memset(n, 0, sizeof(*n));
	n->refs = 1;
	for (i = 0; i < IBW_CONG_NFIELDS; i++) {
		unsigned a = ibw_cong_attr_of(i);

		if (!(r->have >> a & 1))
			continue;
		ibw_ctr_fold32(&n->raw[i], &n->total[i], r->v[i],
			       !(n->have >> a & 1), ours >> a & 1, &reset);
	}
	n->have |= r->have;
	n->resets += (uint32_t)reset;
	return n;
}

unsigned ibw_cong_near_max(const struct ibw_cong_reading *r)
{
	unsigned i, m = 0;

	for (i = 0; i < IBW_CONG_NFIELDS; i++)
		if ((r->have >> ibw_cong_attr_of(i) & 1) &&
		    ibw_ctr_near_max(r->v[i], ibw_ctr_max(field_bits(i))))
			m |= 1u << ibw_cong_attr_of(i);
	return m;
}

struct ibw_cong *ibw_cong_ref(struct ibw_cong *c)
{
	if (c)
		__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
	return c;
}

void ibw_cong_unref(struct ibw_cong *c)
{
	if (c && __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(c);
}

/* libibmad's field table, counted: the table above must agree with it */
_Static_assert(
	IB_PC_SW_PORT_VL_CONGESTION_LAST_F - IB_PC_SW_PORT_VL_CONGESTION0_F ==
			16 &&
		IB_PC_RCV_CON_CTRL_LAST_F - IB_PC_RCV_CON_CTRL_PKT_RCV_FECN_F ==
			2 &&
		IB_PC_SL_RCV_FECN_LAST_F - IB_PC_SL_RCV_FECN0_F == 16 &&
		IB_PC_SL_RCV_BECN_LAST_F - IB_PC_SL_RCV_BECN0_F == 16 &&
		IB_PC_XMIT_CON_CTRL_LAST_F - IB_PC_XMIT_CON_CTRL_TIME_CONG_F ==
			1 &&
		IB_PC_VL_XMIT_TIME_CONG_LAST_F - IB_PC_VL_XMIT_TIME_CONG0_F ==
			15,
	"congestion fields");
