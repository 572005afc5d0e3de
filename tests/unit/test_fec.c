// SPDX-License-Identifier: BSD-2-Clause
/*
 * PortExtendedSpeedsCounters (core/fec.c): both layouts decoded where
 * libibmad's field table puts them and named as perfquery -T names them,
 * totals across a reset and a change of layout, records shared by
 * reference, the layout choice perfquery makes; the congestion
 * counters (core/cong.c) likewise, and which OptionMask bits advertise
 * them; and the state file's "f" and "g" lines (core/ctr_state.c) back
 * to the same totals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <infiniband/mad.h>

#include "cong.h"
#include "counters.h"
#include "ctr_state.h"
#include "fec.h"

/* A PerfMgt payload (from IB_PC_DATA_OFFS) with every field of @layout
 * set to a value of its own: 100 + its index, + @add. */
static void payload(uint8_t *d, enum ibw_fec_layout layout, unsigned add)
{
	int f, first, last;

	memset(d, 0, IB_PC_DATA_SZ);
	first = layout == IBW_FEC_RS ? IB_PESC_RSFEC_SYNC_HDR_ERR_CTR_F
				     : IB_PESC_SYNC_HDR_ERR_CTR_F;
	last = layout == IBW_FEC_RS ? IB_PESC_RSFEC_LAST_F : IB_PESC_LAST_F;
	mad_set_field(d, 0,
		      layout == IBW_FEC_RS ? IB_PESC_RSFEC_PORT_SELECT_F
					   : IB_PESC_PORT_SELECT_F,
		      3);
	for (f = first; f < last; f++)
		mad_set_field(d, 0, (enum MAD_FIELDS)f,
			      100 + (unsigned)(f - first) + add);
}

static void test_fc_layout(void **state)
{
	uint8_t d[IB_PC_DATA_SZ];
	struct ibw_fec_reading r;
	unsigned f, n = 0;

	(void)state;
	payload(d, IBW_FEC_FC, 0);
	assert_int_equal(ibw_fec_decode(d, sizeof(d), IBW_FEC_FC, &r), 0);
	assert_int_equal(r.layout, IBW_FEC_FC);
	for (f = 0; f < IBW_FEC_NFIELDS; f++)
		if (r.have >> f & 1)
			n++;
	/* two header counters and three per lane */
	assert_int_equal(n, 2 + 3 * IBW_FEC_LANES);
	assert_int_equal(r.v[IBW_FEC_SYNC_HDR], 100);
	assert_int_equal(r.v[IBW_FEC_UNK_BLOCK], 101);
	assert_int_equal(r.v[IBW_FEC_ERR_DET0 + 11], 113);
	assert_int_equal(r.v[IBW_FEC_CORR_BLK0], 114);
	assert_int_equal(r.v[IBW_FEC_UNCORR_BLK0 + 11], 137);
	assert_false(r.have >> IBW_FEC_CORR_SYM0 & 1);
	assert_string_equal(ibw_fec_field_name(IBW_FEC_SYNC_HDR),
			    "SyncHeaderErrorCounter");
	assert_string_equal(ibw_fec_field_name(IBW_FEC_CORR_BLK0 + 11),
			    "FECCorrectableBlockCtrLane11");
	assert_string_equal(ibw_fec_field_name(IBW_FEC_UNCORR_BLK0),
			    "FECUncorrectableBlockCtrLane0");
	assert_int_equal(ibw_fec_field_bits(IBW_FEC_ERR_DET0), 16);
	assert_int_equal(ibw_fec_field_bits(IBW_FEC_CORR_BLK0), 32);
	/* shorter than the last field's end */
	assert_int_equal(ibw_fec_decode(d, 100, IBW_FEC_FC, &r), -1);
}

static void test_rs_layout(void **state)
{
	uint8_t d[IB_PC_DATA_SZ];
	struct ibw_fec_reading r;
	unsigned f, n = 0;

	(void)state;
	payload(d, IBW_FEC_RS, 0);
	assert_int_equal(ibw_fec_decode(d, sizeof(d), IBW_FEC_RS, &r), 0);
	for (f = 0; f < IBW_FEC_NFIELDS; f++)
		if (r.have >> f & 1)
			n++;
	assert_int_equal(n, 2 + IBW_FEC_LANES + 3);
	assert_int_equal(r.v[IBW_FEC_CORR_SYM0 + 3], 105);
	assert_int_equal(r.v[IBW_FEC_PORT_CORR_BLK], 114);
	assert_int_equal(r.v[IBW_FEC_PORT_UNCORR_BLK], 115);
	assert_int_equal(r.v[IBW_FEC_PORT_CORR_SYM], 116);
	assert_false(r.have >> IBW_FEC_ERR_DET0 & 1);
	assert_string_equal(ibw_fec_field_name(IBW_FEC_CORR_SYM0 + 3),
			    "FECCorrectableSymbolCtrLane3");
	assert_string_equal(ibw_fec_field_name(IBW_FEC_PORT_UNCORR_BLK),
			    "PortFECUncorrectableBlockCtr");
	/* the same bytes read as FC-FEC: the symbol counters sit where the
	 * correctable blocks do, nothing where the error detection does */
	assert_int_equal(ibw_fec_decode(d, sizeof(d), IBW_FEC_FC, &r), 0);
	assert_int_equal(r.v[IBW_FEC_CORR_BLK0 + 3], 105);
	assert_int_equal(r.v[IBW_FEC_ERR_DET0], 0);
}

static void test_totals_across_reset_and_layout(void **state)
{
	uint8_t d[IB_PC_DATA_SZ];
	struct ibw_fec_reading r;
	struct ibw_fec *a, *b, *c, *e;

	(void)state;
	payload(d, IBW_FEC_FC, 0);
	ibw_fec_decode(d, sizeof(d), IBW_FEC_FC, &r);
	a = ibw_fec_fold(NULL, &r, 0);
	assert_non_null(a);
	assert_true(a->total[IBW_FEC_CORR_BLK0] == 114);
	/* the same again: the same record, one more reference */
	b = ibw_fec_fold(a, &r, 0);
	assert_ptr_equal(a, b);
	assert_int_equal(a->refs, 2);
	ibw_fec_unref(b);
	/* grown by 5 */
	payload(d, IBW_FEC_FC, 5);
	ibw_fec_decode(d, sizeof(d), IBW_FEC_FC, &r);
	b = ibw_fec_fold(a, &r, 0);
	assert_ptr_not_equal(a, b);
	assert_true(b->total[IBW_FEC_CORR_BLK0] == 119);
	assert_true(b->last_delta[IBW_FEC_CORR_BLK0] == 5);
	assert_true(a->total[IBW_FEC_CORR_BLK0] == 114); /* untouched */
	/* cleared, then counted to 7: the total goes on */
	memset(d, 0, sizeof(d));
	mad_set_field(d, 0, IB_PESC_FEC_CORR_BLOCK_CTR_LANE0_F, 7);
	ibw_fec_decode(d, sizeof(d), IBW_FEC_FC, &r);
	c = ibw_fec_fold(b, &r, 0);
	assert_true(c->total[IBW_FEC_CORR_BLK0] == 126);
	assert_true(c->resets == 1);
	/* the link comes up with RS-FEC: its fields start from their
	 * first reading, the FC-FEC totals stay */
	payload(d, IBW_FEC_RS, 0);
	ibw_fec_decode(d, sizeof(d), IBW_FEC_RS, &r);
	e = ibw_fec_fold(c, &r, 0);
	assert_int_equal(e->layout, IBW_FEC_RS);
	assert_true(e->total[IBW_FEC_PORT_CORR_SYM] == 116);
	assert_true(e->total[IBW_FEC_CORR_BLK0] == 126);
	ibw_fec_unref(a);
	ibw_fec_unref(b);
	ibw_fec_unref(c);
	ibw_fec_unref(e);
}

/*
 * A 32-bit FEC counter stuck at all-ones says so; at three quarters of
 * its range it is worth clearing; after our clear the next reading is
 * counted whole, even one above the last (it grew past it meanwhile),
 * and is no foreign reset.
 */
static void test_saturation_and_our_clear(void **state)
{
	struct ibw_fec_reading r;
	struct ibw_fec *a, *b, *c;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.layout = IBW_FEC_RS;
	r.have = 1ull << IBW_FEC_PORT_CORR_SYM;
	r.v[IBW_FEC_PORT_CORR_SYM] = 0x40000000u;
	assert_true(ibw_fec_near_max(&r) == 0);
	a = ibw_fec_fold(NULL, &r, 0);
	r.v[IBW_FEC_PORT_CORR_SYM] = 0xc0000000u;
	assert_true(ibw_fec_near_max(&r) == 1ull << IBW_FEC_PORT_CORR_SYM);
	b = ibw_fec_fold(a, &r, 0);
	assert_true(b->saturated == 0);
	/* cleared by us; 0xd0000000 counted since */
	r.v[IBW_FEC_PORT_CORR_SYM] = 0xd0000000u;
	c = ibw_fec_fold(b, &r, 1);
	assert_true(c->total[IBW_FEC_PORT_CORR_SYM] ==
		    0xc0000000ull + 0xd0000000ull);
	assert_int_equal(c->resets, 0);
	ibw_fec_unref(a);
	a = c;
	/* stuck at all-ones */
	r.v[IBW_FEC_PORT_CORR_SYM] = 0xffffffffu;
	c = ibw_fec_fold(a, &r, 0);
	assert_true(c->saturated == 1ull << IBW_FEC_PORT_CORR_SYM);
	ibw_fec_unref(a);
	ibw_fec_unref(b);
	ibw_fec_unref(c);
}

static void test_layout_choice(void **state)
{
	(void)state;
	/* perfquery -T: RS-FEC (2) and RS-FEC2 (4) where the PMA counts
	 * them; low-latency RS-FEC (3), Fire Code (1), none: FC form */
	assert_true(ibw_fec_mode_is_rs(1, 2));
	assert_true(ibw_fec_mode_is_rs(1, 4));
	assert_false(ibw_fec_mode_is_rs(1, 3));
	assert_false(ibw_fec_mode_is_rs(1, 1));
	assert_false(ibw_fec_mode_is_rs(1, 0));
	assert_false(ibw_fec_mode_is_rs(0, 2));
}

static void test_state_file(void **state)
{
	char path[] = "/tmp/ibw-fec-XXXXXX";
	uint8_t d[IB_PC_DATA_SZ];
	struct ibw_fec_reading r;
	struct ibw_port_ctrs p[2], *back;
	const struct ibw_port_ctrs *pv[2] = { &p[0], &p[1] };
	unsigned n, cap, k;
	int fd;
	FILE *f;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	memset(p, 0, sizeof(p));
	p[0].guid = 0x10;
	p[0].port = 1;
	p[1].guid = 0x20;
	p[1].port = 3;
	payload(d, IBW_FEC_RS, 1000);
	ibw_fec_decode(d, sizeof(d), IBW_FEC_RS, &r);
	p[1].fec = ibw_fec_fold(NULL, &r, 0);
	assert_int_equal(ibw_ctr_state_save(path, pv, 2, NULL), 0);
	assert_int_equal(ibw_ctr_state_load(path, &back, &n, &cap, NULL, NULL),
			 0);
	assert_int_equal(n, 2);
	assert_null(back[0].fec);
	assert_non_null(back[1].fec);
	assert_int_equal(back[1].fec->layout, IBW_FEC_RS);
	assert_true(back[1].fec->have == p[1].fec->have);
	for (k = 0; k < IBW_FEC_NFIELDS; k++) {
		assert_true(back[1].fec->total[k] == p[1].fec->total[k]);
		assert_true(back[1].fec->raw[k] == p[1].fec->raw[k]);
	}
	ibw_fec_unref(back[1].fec);
	free(back);
	/* a broken "f" line: the file is refused, nothing leaks */
	f = fopen(path, "r+");
	assert_non_null(f);
	{
		char buf[16384];
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		char *fl;

		buf[len] = 0;
		fl = strstr(buf, "\nf ");
		assert_non_null(fl);
		fl[3] = '9'; /* no such layout */
		rewind(f);
		fwrite(buf, 1, len, f);
	}
	fclose(f);
	assert_int_equal(ibw_ctr_state_load(path, &back, &n, &cap, NULL, NULL),
			 -EBADMSG);
	ibw_fec_unref(p[1].fec);
	unlink(path);
}

static void test_congestion(void **state)
{
	uint8_t d[IB_PC_DATA_SZ];
	struct ibw_cong_reading r;
	struct ibw_cong *a, *b;
	unsigned x = ibw_cong_first(IBW_CONG_XMIT_CC);
	unsigned vl = ibw_cong_first(IBW_CONG_VL_XMIT_TC);

	(void)state;
	assert_int_equal(ibw_cong_attr_id(IBW_CONG_SW_VL), 0x30);
	assert_int_equal(ibw_cong_attr_id(IBW_CONG_VL_XMIT_TC), 0x35);
	assert_int_equal(ibw_cong_count(IBW_CONG_VL_XMIT_TC), 15);
	assert_string_equal(ibw_cong_field_name(x), "PortXmitTimeCong");
	assert_string_equal(ibw_cong_field_name(vl + 14),
			    "PortVLXmitTimeCong14");
	assert_string_equal(
		ibw_cong_field_name(ibw_cong_first(IBW_CONG_RCV_CC) + 1),
		"PortPktRcvBECN");
	assert_int_equal(ibw_cong_attr_of(x), IBW_CONG_XMIT_CC);
	/* OptionMask bits 48..54, PortRcvConCtrl by either of its two */
	assert_true(ibw_cong_advertised(1ull << 48, IBW_CONG_SW_VL));
	assert_true(ibw_cong_advertised(1ull << 50, IBW_CONG_RCV_CC));
	assert_true(ibw_cong_advertised(1ull << 53, IBW_CONG_XMIT_CC));
	assert_false(ibw_cong_advertised(1ull << 53, IBW_CONG_VL_XMIT_TC));
	assert_false(ibw_cong_advertised(0xffffffffffffull, IBW_CONG_SW_VL));

	memset(&r, 0, sizeof(r));
	memset(d, 0, sizeof(d));
	mad_set_field(d, 0, IB_PC_XMIT_CON_CTRL_TIME_CONG_F, 1000);
	assert_int_equal(ibw_cong_decode(d, sizeof(d), IBW_CONG_XMIT_CC, &r),
			 0);
	memset(d, 0, sizeof(d));
	mad_set_field(d, 0, IB_PC_VL_XMIT_TIME_CONG0_F + 14, 77);
	assert_int_equal(ibw_cong_decode(d, sizeof(d), IBW_CONG_VL_XMIT_TC, &r),
			 0);
	assert_int_equal(r.v[x], 1000);
	assert_int_equal(r.v[vl + 14], 77);
	a = ibw_cong_fold(NULL, &r, 0);
	assert_true(a->total[x] == 1000);
	assert_int_equal(a->have,
			 1u << IBW_CONG_XMIT_CC | 1u << IBW_CONG_VL_XMIT_TC);
	/* cleared, then 30 */
	r.v[x] = 30;
	b = ibw_cong_fold(a, &r, 0);
	assert_true(b->total[x] == 1030);
	assert_int_equal(b->resets, 1);
	assert_true(b->total[vl + 14] == 77);
	ibw_cong_unref(a);
	ibw_cong_unref(b);
}

static void test_congestion_state_file(void **state)
{
	char path[] = "/tmp/ibw-cong-XXXXXX";
	struct ibw_cong_reading r;
	struct ibw_port_ctrs p, *back;
	const struct ibw_port_ctrs *pp = &p;
	unsigned n, cap, k;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	memset(&p, 0, sizeof(p));
	memset(&r, 0, sizeof(r));
	p.guid = 0x30;
	p.port = 2;
	r.have = 1u << IBW_CONG_SL_FECN | 1u << IBW_CONG_RCV_CC;
	for (k = 0; k < IBW_CONG_NFIELDS; k++)
		r.v[k] = 1000 + k;
	p.cong = ibw_cong_fold(NULL, &r, 0);
	assert_int_equal(ibw_ctr_state_save(path, &pp, 1, NULL), 0);
	assert_int_equal(ibw_ctr_state_load(path, &back, &n, &cap, NULL, NULL),
			 0);
	assert_int_equal(n, 1);
	assert_non_null(back[0].cong);
	assert_int_equal(back[0].cong->have, p.cong->have);
	for (k = 0; k < IBW_CONG_NFIELDS; k++)
		assert_true(back[0].cong->total[k] == p.cong->total[k]);
	ibw_cong_unref(back[0].cong);
	free(back);
	ibw_cong_unref(p.cong);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fc_layout),
		cmocka_unit_test(test_rs_layout),
		cmocka_unit_test(test_totals_across_reset_and_layout),
		cmocka_unit_test(test_saturation_and_our_clear),
		cmocka_unit_test(test_layout_choice),
		cmocka_unit_test(test_state_file),
		cmocka_unit_test(test_congestion),
		cmocka_unit_test(test_congestion_state_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
