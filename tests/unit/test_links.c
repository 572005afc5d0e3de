// SPDX-License-Identifier: BSD-2-Clause
/*
 * Link health on a fake clock: the rate table, the PortInfo decoding it
 * rests on, windows and their rates, width/speed, BER, flaps, down and
 * missing links, the ranking, health changes, thresholds by name and the
 * state file's lines.
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec.h"
#include "ibrate.h"
#include "links.h"
#include "linkside.h"

#define SEC 1000000ull
/* A whole hour (and so a whole 5-minute period) since the epoch. */
#define T0 (1699999200ull * SEC)

/* ---- the rate table ---- */

static void test_rate_table(void **state)
{
	static const struct {
		enum ibw_speed s;
		const char *name;
		double sig, dat;
	} want[] = {
		{ IBW_SPEED_SDR, "SDR", 2.5, 2.0 },
		{ IBW_SPEED_DDR, "DDR", 5.0, 4.0 },
		{ IBW_SPEED_QDR, "QDR", 10.0, 8.0 },
		{ IBW_SPEED_FDR10, "FDR10", 10.3125, 10.0 },
		{ IBW_SPEED_FDR, "FDR", 14.0625, 13.636363636363637 },
		{ IBW_SPEED_EDR, "EDR", 25.78125, 25.0 },
		{ IBW_SPEED_HDR, "HDR", 53.125, 50.0 },
		{ IBW_SPEED_NDR, "NDR", 106.25, 100.0 },
		{ IBW_SPEED_XDR, "XDR", 212.5, 200.0 },
	};
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct ibw_speed_info *si = ibw_speed_info(want[i].s);

		assert_non_null(si);
		assert_string_equal(si->name, want[i].name);
		assert_float_equal(si->lane_signal_gbps, want[i].sig, 1e-12);
		assert_float_equal(si->lane_data_gbps, want[i].dat, 1e-12);
	}
	assert_null(ibw_speed_info(IBW_SPEED_UNKNOWN));
	assert_null(ibw_speed_info(IBW_SPEED_MAX));
	assert_string_equal(ibw_speed_name(IBW_SPEED_MAX), "unknown");

	assert_int_equal(ibw_width_lanes(IBW_WIDTH_1X), 1);
	assert_int_equal(ibw_width_lanes(IBW_WIDTH_2X), 2);
	assert_int_equal(ibw_width_lanes(IBW_WIDTH_4X), 4);
	assert_int_equal(ibw_width_lanes(IBW_WIDTH_8X), 8);
	assert_int_equal(ibw_width_lanes(IBW_WIDTH_12X), 12);
	assert_int_equal(ibw_width_lanes(3), 0);
	/* 2x is bit 4 but narrower than 4x (bit 1). */
	assert_int_equal(ibw_width_widest(IBW_WIDTH_1X | IBW_WIDTH_2X),
			 IBW_WIDTH_2X);
	assert_int_equal(ibw_width_widest(IBW_WIDTH_2X | IBW_WIDTH_4X),
			 IBW_WIDTH_4X);
	assert_int_equal(ibw_width_widest(0), 0);

	/* Whole links, in bits per second. */
	assert_float_equal(ibw_rate_signal_bps(IBW_WIDTH_4X, IBW_SPEED_SDR),
			   10e9, 1);
	assert_float_equal(ibw_rate_data_bps(IBW_WIDTH_4X, IBW_SPEED_QDR), 32e9,
			   1);
	assert_float_equal(ibw_rate_data_bps(IBW_WIDTH_4X, IBW_SPEED_FDR10),
			   40e9, 1);
	assert_float_equal(ibw_rate_signal_bps(IBW_WIDTH_4X, IBW_SPEED_FDR),
			   56.25e9, 1);
	assert_float_equal(ibw_rate_data_bps(IBW_WIDTH_4X, IBW_SPEED_EDR),
			   100e9, 1);
	assert_float_equal(ibw_rate_data_bps(IBW_WIDTH_2X, IBW_SPEED_HDR),
			   100e9, 1);
	assert_float_equal(ibw_rate_data_bps(IBW_WIDTH_8X, IBW_SPEED_NDR),
			   800e9, 1);
	assert_float_equal(ibw_rate_signal_bps(IBW_WIDTH_12X, IBW_SPEED_QDR),
			   120e9, 1);
	assert_float_equal(ibw_rate_data_bps(IBW_WIDTH_4X, IBW_SPEED_XDR),
			   800e9, 1);
	assert_float_equal(ibw_rate_data_bps(3, IBW_SPEED_EDR), 0, 0);
	assert_float_equal(ibw_rate_data_bps(IBW_WIDTH_4X, IBW_SPEED_UNKNOWN),
			   0, 0);
	assert_int_equal(ibw_speed_fastest(IBW_SPEED_BIT(IBW_SPEED_QDR) |
					   IBW_SPEED_BIT(IBW_SPEED_FDR10)),
			 IBW_SPEED_FDR10);
	assert_int_equal(ibw_speed_fastest(0), IBW_SPEED_UNKNOWN);
}

/* ---- PortInfo on crafted bytes ---- */

static void test_portinfo_speeds(void **state)
{
	uint8_t mad[256] = { 1, 0x81, 1, 0x81 };
	uint8_t sw0[256] = { 1, 0x81, 1, 0x81 };
	uint8_t *p = mad + IB_SMP_DATA_OFFS, *p0 = sw0 + IB_SMP_DATA_OFFS;
	struct ibw_portinfo pi, cap;
	struct ibw_port_speeds sp;

	/* An external switch port: no capability mask of its own. */
	mad_set_field(p, 0, IB_PORT_STATE_F, IBW_PORT_ACTIVE);
	mad_set_field(p, 0, IB_PORT_PHYS_STATE_F, IBW_PHYS_LINKUP);
	mad_set_field(p, 0, IB_PORT_LINK_WIDTH_ENABLED_F, 3);
	mad_set_field(p, 0, IB_PORT_LINK_WIDTH_SUPPORTED_F, 19);
	mad_set_field(p, 0, IB_PORT_LINK_WIDTH_ACTIVE_F, 2);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_SUPPORTED_F, 7);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_ENABLED_F, 5);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_ACTIVE_F, 4);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F, 7);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_EXT_ENABLED_F, 3);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F, 2);
	assert_int_equal(ibw_portinfo_decode(mad, sizeof(mad), &pi), 0);
	assert_int_equal(pi.width_enabled, 3);
	assert_int_equal(pi.width_supported, 19);
	assert_int_equal(pi.width_active, 2);
	assert_int_equal(pi.speed_supported, 7);
	assert_int_equal(pi.speed_enabled, 5);
	assert_int_equal(pi.speed_active, 4);
	assert_int_equal(pi.speed_ext_supported, 7);
	assert_int_equal(pi.speed_ext_enabled, 3);
	assert_int_equal(pi.speed_ext_active, 2);
	assert_int_equal(pi.capmask, 0);
	assert_int_equal(pi.have_mlnx_ext, 0);

	/* Without a capability mask that allows them, the extended
	 * fields do not count: QDR. */
	ibw_port_speeds(&pi, NULL, &sp);
	assert_int_equal(sp.speed_active, IBW_SPEED_QDR);
	assert_int_equal(sp.speeds_supported,
			 IBW_SPEED_BIT(IBW_SPEED_SDR) |
				 IBW_SPEED_BIT(IBW_SPEED_DDR) |
				 IBW_SPEED_BIT(IBW_SPEED_QDR));
	assert_int_equal(sp.width_supported, 19);

	/* Port 0 of the switch carries IsExtendedSpeedsSupported and a
	 * CapabilityMask2. */
	mad_set_field(p0, 0, IB_PORT_CAPMASK_F,
		      IBW_CAP_EXT_SPEEDS | IBW_CAP_CAPMASK2 | 0x48);
	mad_set_field(p0, 0, IB_PORT_CAPMASK2_F, IBW_CAP2_LINK_WIDTH_2X);
	assert_int_equal(ibw_portinfo_decode(sw0, sizeof(sw0), &cap), 0);
	assert_int_equal(cap.capmask2, IBW_CAP2_LINK_WIDTH_2X);
	ibw_port_speeds(&pi, &cap, &sp);
	assert_int_equal(sp.speed_active, IBW_SPEED_EDR);
	assert_int_equal(sp.speeds_supported,
			 IBW_SPEED_BIT(IBW_SPEED_SDR) |
				 IBW_SPEED_BIT(IBW_SPEED_DDR) |
				 IBW_SPEED_BIT(IBW_SPEED_QDR) |
				 IBW_SPEED_BIT(IBW_SPEED_FDR) |
				 IBW_SPEED_BIT(IBW_SPEED_EDR) |
				 IBW_SPEED_BIT(IBW_SPEED_HDR));
	assert_int_equal(sp.speeds_enabled,
			 IBW_SPEED_BIT(IBW_SPEED_SDR) |
				 IBW_SPEED_BIT(IBW_SPEED_QDR) |
				 IBW_SPEED_BIT(IBW_SPEED_FDR) |
				 IBW_SPEED_BIT(IBW_SPEED_EDR));

	/* LinkSpeedExtEnabled 30: extended speeds disabled. */
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_EXT_ENABLED_F, 30);
	assert_int_equal(ibw_portinfo_decode(mad, sizeof(mad), &pi), 0);
	ibw_port_speeds(&pi, &cap, &sp);
	assert_int_equal(sp.speeds_enabled,
			 IBW_SPEED_BIT(IBW_SPEED_SDR) |
				 IBW_SPEED_BIT(IBW_SPEED_QDR));
	assert_int_equal(ibw_portinfo_decode(mad, 100, &pi), -EINVAL);
}

static void test_fdr10(void **state)
{
	uint8_t mad[256] = { 1, 0x81, 1, 0x81 };
	uint8_t epi[256] = { 1, 0x81, 1, 0x81 };
	uint8_t *p = mad + IB_SMP_DATA_OFFS, *e = epi + IB_SMP_DATA_OFFS;
	struct ibw_nodeinfo ni = { .vendor_id = 0x2c9, .device_id = 0x1003 };
	struct ibw_portinfo pi;
	struct ibw_port_speeds sp;

	/* FDR10 shows in PortInfo as QDR. */
	mad_set_field(p, 0, IB_PORT_STATE_F, IBW_PORT_ACTIVE);
	mad_set_field(p, 0, IB_PORT_PHYS_STATE_F, IBW_PHYS_LINKUP);
	mad_set_field(p, 0, IB_PORT_LINK_WIDTH_ACTIVE_F, 2);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_SUPPORTED_F, 7);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_ENABLED_F, 7);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_ACTIVE_F, 4);
	assert_int_equal(ibw_portinfo_decode(mad, sizeof(mad), &pi), 0);
	assert_true(ibw_mlnx_ext_portinfo_wanted(&ni, &pi, NULL));
	ni.device_id = 0x1234; /* not one that answers it */
	assert_false(ibw_mlnx_ext_portinfo_wanted(&ni, &pi, NULL));
	ni.vendor_id = 0x2c9;
	ni.device_id = 0x1b33; /* a Bull ID, but not from Bull */
	assert_false(ibw_mlnx_ext_portinfo_wanted(&ni, &pi, NULL));
	ni.vendor_id = 0x119f;
	assert_true(ibw_mlnx_ext_portinfo_wanted(&ni, &pi, NULL));

	mad_set_field(e, 0, IB_MLNX_EXT_PORT_LINK_SPEED_SUPPORTED_F, 1);
	mad_set_field(e, 0, IB_MLNX_EXT_PORT_LINK_SPEED_ENABLED_F, 1);
	mad_set_field(e, 0, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F, 1);
	assert_int_equal(ibw_mlnx_ext_portinfo_decode(epi, sizeof(epi), &pi),
			 0);
	assert_int_equal(pi.have_mlnx_ext, 1);
	assert_int_equal(pi.mlnx_speed_active, 1);
	ibw_port_speeds(&pi, NULL, &sp);
	assert_int_equal(sp.speed_active, IBW_SPEED_FDR10);
	assert_true(sp.speeds_supported & IBW_SPEED_BIT(IBW_SPEED_FDR10));
	assert_float_equal(ibw_rate_data_bps(sp.width_active,
					     (enum ibw_speed)sp.speed_active),
			   40e9, 1);

	/* At QDR with an extended speed active it is no FDR10 link. */
	mad_set_field(p, 0, IB_PORT_CAPMASK_F, IBW_CAP_EXT_SPEEDS);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F, 1);
	assert_int_equal(ibw_portinfo_decode(mad, sizeof(mad), &pi), 0);
	assert_false(ibw_mlnx_ext_portinfo_wanted(&ni, &pi, NULL));
	/* Not LinkUp: nothing to ask. */
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F, 0);
	mad_set_field(p, 0, IB_PORT_PHYS_STATE_F, IBW_PHYS_POLLING);
	assert_int_equal(ibw_portinfo_decode(mad, sizeof(mad), &pi), 0);
	assert_false(ibw_mlnx_ext_portinfo_wanted(&ni, &pi, NULL));
}

static void test_xdr(void **state)
{
#ifdef IBW_HAVE_SPEED_EXT2
	uint8_t mad[256] = { 1, 0x81, 1, 0x81 };
	uint8_t *p = mad + IB_SMP_DATA_OFFS;
	struct ibw_portinfo pi;
	struct ibw_port_speeds sp;

	assert_int_equal(ibw_codec_has_speed_ext2(), 1);
	mad_set_field(p, 0, IB_PORT_CAPMASK_F,
		      IBW_CAP_EXT_SPEEDS | IBW_CAP_CAPMASK2);
	mad_set_field(p, 0, IB_PORT_CAPMASK2_F, IBW_CAP2_EXT_SPEEDS2);
	mad_set_field(p, 0, IB_PORT_LINK_WIDTH_ACTIVE_F, 2);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F, 8);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_2_F, 1);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_EXT_SUPPORTED_2_F, 1);
	assert_int_equal(ibw_portinfo_decode(mad, sizeof(mad), &pi), 0);
	assert_int_equal(pi.speed_ext2_active, 1);
	ibw_port_speeds(&pi, NULL, &sp);
	assert_int_equal(sp.speed_active, IBW_SPEED_XDR);
#else
	/* Debian 12's libibmad (rdma-core 44) has no LinkSpeedExt2
	 * fields: nothing is decoded and XDR is never reported. */
	assert_int_equal(ibw_codec_has_speed_ext2(), 0);
	skip();
#endif
}

/* ---- links on a fake clock ---- */

/* One port: its PortInfo and what is fed for it. Not to be copied: the
 * input points into it. */
/* A round at @t with every side read at @t. */
static void round_at(struct ibw_links *l, uint64_t t, struct side *s,
		     int nlinks)
{
	int i;

	ibw_links_begin(l, t);
	for (i = 0; i < nlinks; i++) {
		s[2 * i].in.ctr_us = t;
		s[2 * i + 1].in.ctr_us = t;
		assert_int_equal(
			ibw_links_update(l, &s[2 * i].in, &s[2 * i + 1].in), 0);
	}
}

/*
 * One 4x SDR link read every minute for 90 minutes: the switch end sees 6
 * symbol errors a minute and sends at half the effective rate; the HCA
 * end sees 2 link error recoveries a minute and waits a quarter of the
 * time. The windows hold exactly what the buckets say.
 */
static void test_windows_exact(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	const struct ibw_link *k;
	const struct ibw_link_end *sw, *hca;
	struct side s[2];
	int i;

	mk(&s[0], 0x20, 3, 1, IBW_WIDTH_4X);
	mk(&s[1], 0x10, 1, 0, IBW_WIDTH_4X);
	for (i = 0; i <= 90; i++) {
		s[0].in.err[IBW_LERR_SYMBOL] = 6ull * i;
		/* 4x SDR: 8 Gb/s effective, 60 s: 6e10 bytes; half. */
		s[0].in.xmit_bytes = 30000000000ull * i;
		s[1].in.err[IBW_LERR_LINK_RECOVERY] = 2ull * i;
		/* A tick is 4 ns at SDR (Tick 0): 15 s of 60. */
		s[1].in.xmit_wait = 3750000000ull * i;
		round_at(l, T0 + 60 * SEC * i, s, 1);
	}
	v = ibw_links_view(l, T0 + 90 * 60 * SEC);
	assert_non_null(v);
	assert_int_equal(v->n, 1);
	k = &v->links[0];
	/* end[0] is the lower GUID whatever the order they came in. */
	assert_true(k->end[0].guid == 0x10);
	sw = end_by_guid(k, 0x20);
	hca = end_by_guid(k, 0x10);
	assert_string_equal(sw->name, "sw");
	assert_true(sw->sample_us == T0 + 90 * 60 * SEC);

	/* The last sweep: one minute. */
	assert_float_equal(sw->win[IBW_LWIN_SWEEP].seconds, 60, 0);
	assert_int_equal(sw->win[IBW_LWIN_SWEEP].errors[IBW_LERR_SYMBOL], 6);
	assert_float_equal(sw->win[IBW_LWIN_SWEEP].utilisation, 0.5, 1e-12);
	assert_float_equal(hca->win[IBW_LWIN_SWEEP].xmit_wait_ratio, 0.25,
			   1e-12);
	/* The hour: the 12 five-minute periods up to minute 90 are minutes
	 * 35..94, which hold the readings of minutes 35..90. */
	assert_float_equal(sw->win[IBW_LWIN_HOUR].seconds, 56 * 60, 0);
	assert_int_equal(sw->win[IBW_LWIN_HOUR].errors[IBW_LERR_SYMBOL],
			 6 * 56);
	assert_int_equal(hca->win[IBW_LWIN_HOUR].errors[IBW_LERR_LINK_RECOVERY],
			 2 * 56);
	assert_float_equal(ibw_link_win_per_hour(&hca->win[IBW_LWIN_HOUR],
						 IBW_LERR_LINK_RECOVERY),
			   120, 1e-9);
	/* 336 errors in 56 minutes of 10 Gb/s on the wire. */
	assert_float_equal(sw->win[IBW_LWIN_HOUR].ber, 1e-11, 1e-24);
	assert_float_equal(hca->win[IBW_LWIN_HOUR].ber, 0, 0);
	assert_float_equal(sw->win[IBW_LWIN_HOUR].utilisation, 0.5, 1e-12);
	assert_float_equal(hca->win[IBW_LWIN_HOUR].xmit_wait_ratio, 0.25,
			   1e-12);
	/* The day: every reading. */
	assert_float_equal(sw->win[IBW_LWIN_DAY].seconds, 90 * 60, 0);
	assert_int_equal(sw->win[IBW_LWIN_DAY].errors[IBW_LERR_SYMBOL], 6 * 90);
	assert_int_equal(hca->win[IBW_LWIN_DAY].errors[IBW_LERR_LINK_RECOVERY],
			 2 * 90);
	assert_float_equal(sw->win[IBW_LWIN_DAY].ber, -1, 0);
	assert_float_equal(ibw_link_win_per_hour(&sw->win[IBW_LWIN_DAY],
						 IBW_LERR_SYMBOL),
			   360, 1e-9);

	/* BER 1e-11: over the IBTA's 1e-12, under 1e-10: degraded, at the
	 * switch end. 180 recoveries in a day at the HCA end: over 10 a
	 * day (degraded), and 112 in the hour is over 10 (failing). */
	assert_int_equal(k->health, IBW_HEALTH_FAILING);
	assert_true(sw->reasons == IBW_LR_BIT(IBW_LR_BER));
	assert_true(hca->reasons ==
		    IBW_LR_BIT(IBW_LR_ERR + IBW_LERR_LINK_RECOVERY));
	assert_float_equal(k->ber, 1e-11, 1e-24);
	assert_float_equal(k->xmit_wait_ratio, 0.25, 1e-12);
	assert_float_equal(k->data_bps, 8e9, 1);
	assert_float_equal(k->signal_bps, 10e9, 1);
	ibw_link_view_free(v);

	/* Two hours on, no readings since: the hour is empty, the day
	 * still holds them. */
	v = ibw_links_view(l, T0 + 210 * 60 * SEC);
	k = &v->links[0];
	sw = end_by_guid(k, 0x20);
	assert_float_equal(sw->win[IBW_LWIN_HOUR].seconds, 0, 0);
	assert_float_equal(sw->win[IBW_LWIN_HOUR].ber, -1, 0);
	assert_int_equal(sw->win[IBW_LWIN_DAY].errors[IBW_LERR_SYMBOL], 6 * 90);
	assert_int_equal(k->health, IBW_HEALTH_DEGRADED);
	ibw_link_view_free(v);

	/* A day and more on: nothing left. */
	v = ibw_links_view(l, T0 + 26 * 3600 * SEC);
	sw = end_by_guid(&v->links[0], 0x20);
	assert_float_equal(sw->win[IBW_LWIN_DAY].seconds, 0, 0);
	assert_int_equal(v->links[0].health, IBW_HEALTH_OK);
	ibw_link_view_free(v);
	ibw_links_free(l);
}

/* A reading used twice counts once; totals that go back start anew. */
static void test_readings_once(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	const struct ibw_link_end *sw;
	struct side s[2];

	mk(&s[0], 0x20, 1, 1, IBW_WIDTH_4X);
	mk(&s[1], 0x10, 1, 0, IBW_WIDTH_4X);
	round_at(l, T0, s, 1);
	s[0].in.err[IBW_LERR_RCV] = 5;
	round_at(l, T0 + 10 * SEC, s, 1);
	/* A new round before the counters were read again. */
	ibw_links_begin(l, T0 + 15 * SEC);
	assert_int_equal(ibw_links_update(l, &s[1].in, &s[0].in), 0);
	/* Totals restarted from 0 (a fresh counters state): a new base. */
	s[0].in.err[IBW_LERR_RCV] = 1;
	round_at(l, T0 + 20 * SEC, s, 1);
	s[0].in.err[IBW_LERR_RCV] = 4;
	round_at(l, T0 + 30 * SEC, s, 1);
	v = ibw_links_view(l, T0 + 30 * SEC);
	sw = end_by_guid(&v->links[0], 0x20);
	assert_int_equal(sw->win[IBW_LWIN_DAY].errors[IBW_LERR_RCV], 8);
	assert_float_equal(sw->win[IBW_LWIN_DAY].seconds, 20, 0);
	assert_int_equal(sw->win[IBW_LWIN_SWEEP].errors[IBW_LERR_RCV], 3);
	ibw_link_view_free(v);
	ibw_links_free(l);
}

/* Four 4x links and one trained at 1x: that one, and only that one, is
 * degraded, for its width. */
static void test_width(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_thresholds t;
	struct ibw_link_view *v;
	struct side s[10];
	int i;

	for (i = 0; i < 5; i++) {
		mk(&s[2 * i], 0x100, (uint8_t)(i + 1), 1,
		   i == 2 ? IBW_WIDTH_1X : IBW_WIDTH_4X);
		mk(&s[2 * i + 1], 0x200 + (uint64_t)i, 1, 0,
		   i == 2 ? IBW_WIDTH_1X : IBW_WIDTH_4X);
	}
	round_at(l, T0, s, 5);
	round_at(l, T0 + 60 * SEC, s, 5);
	v = ibw_links_view(l, T0 + 60 * SEC);
	assert_int_equal(v->n, 5);
	assert_int_equal(v->count[IBW_HEALTH_DEGRADED], 1);
	assert_int_equal(v->count[IBW_HEALTH_OK], 4);
	assert_int_equal(v->links[0].health, IBW_HEALTH_DEGRADED);
	assert_true(v->links[0].reasons == IBW_LR_BIT(IBW_LR_WIDTH));
	assert_int_equal(v->links[0].end[0].port, 3);
	assert_int_equal(v->links[0].width_active, IBW_WIDTH_1X);
	assert_int_equal(v->links[0].width_best, IBW_WIDTH_4X);
	assert_float_equal(v->links[0].data_bps, 2e9, 1);
	/* Found from either end. */
	assert_ptr_equal(ibw_link_view_find(v, 0x202, 1), &v->links[0]);
	assert_ptr_equal(ibw_link_view_find(v, 0x100, 3), &v->links[0]);
	assert_null(ibw_link_view_find(v, 0x100, 9));
	ibw_link_view_free(v);

	/* Basis "enabled": a port set to 1x by its administrator is where
	 * it was told to be. */
	s[5].pi.width_enabled = IBW_WIDTH_1X;
	round_at(l, T0 + 120 * SEC, s, 5);
	v = ibw_links_view(l, T0 + 120 * SEC);
	assert_int_equal(v->count[IBW_HEALTH_DEGRADED], 1);
	ibw_link_view_free(v);
	ibw_link_thresholds_default(&t);
	t.basis = IBW_BASIS_ENABLED;
	ibw_links_set_thresholds(l, &t);
	v = ibw_links_view(l, T0 + 120 * SEC);
	assert_int_equal(v->count[IBW_HEALTH_DEGRADED], 0);
	ibw_link_view_free(v);
	ibw_links_free(l);
}

static void test_speed(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	struct side s[2];

	mk(&s[0], 0x20, 1, 1, IBW_WIDTH_4X);
	mk(&s[1], 0x10, 1, 0, IBW_WIDTH_4X);
	/* Both can do QDR; one says only SDR|DDR: DDR is the best. */
	s[0].pi.speed_supported = 7;
	s[1].pi.speed_supported = 3;
	s[0].pi.speed_active = s[1].pi.speed_active = 1;
	round_at(l, T0, s, 1);
	v = ibw_links_view(l, T0);
	assert_true(v->links[0].reasons == IBW_LR_BIT(IBW_LR_SPEED));
	assert_int_equal(v->links[0].speed_best, IBW_SPEED_DDR);
	assert_int_equal(v->links[0].speed_active, IBW_SPEED_SDR);
	ibw_link_view_free(v);
	s[0].pi.speed_active = s[1].pi.speed_active = 2;
	round_at(l, T0 + SEC, s, 1);
	v = ibw_links_view(l, T0 + SEC);
	assert_int_equal(v->links[0].health, IBW_HEALTH_OK);
	ibw_link_view_free(v);
	ibw_links_free(l);
}

/*
 * Three links, errors injected at one end of two of them: exactly those
 * links move, and the reasons sit at the end that counted them.
 */
static void test_errors_move_their_link(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	const struct ibw_link *k;
	struct side s[6];
	int i;

	for (i = 0; i < 3; i++) {
		mk(&s[2 * i], 0x100, (uint8_t)(i + 1), 1, IBW_WIDTH_4X);
		mk(&s[2 * i + 1], 0x200 + (uint64_t)i, 1, 0, IBW_WIDTH_4X);
	}
	round_at(l, T0, s, 3);
	round_at(l, T0 + 60 * SEC, s, 3);
	/* PerformanceSet SymbolErrorCounter=1000 on switch port 1, and
	 * LinkDownedCounter=11 on the HCA of switch port 2. */
	s[0].in.err[IBW_LERR_SYMBOL] = 1000;
	s[3].in.err[IBW_LERR_LINK_DOWNED] = 11;
	round_at(l, T0 + 120 * SEC, s, 3);
	v = ibw_links_view(l, T0 + 120 * SEC);
	assert_int_equal(v->count[IBW_HEALTH_FAILING], 2);
	assert_int_equal(v->count[IBW_HEALTH_OK], 1);

	/* 1000 errors in 1.2e12 bits: 8.3e-10, over 1e-10: failing. */
	k = ibw_link_view_find(v, 0x100, 1);
	assert_int_equal(k->health, IBW_HEALTH_FAILING);
	assert_true(k->reasons == IBW_LR_BIT(IBW_LR_BER));
	assert_true(end_by_guid(k, 0x100)->reasons == IBW_LR_BIT(IBW_LR_BER));
	assert_true(end_by_guid(k, 0x200)->reasons == 0);
	assert_float_equal(k->ber, 1000.0 / 1.2e12, 1e-20);

	k = ibw_link_view_find(v, 0x201, 1);
	assert_int_equal(k->health, IBW_HEALTH_FAILING);
	assert_true(k->reasons ==
		    IBW_LR_BIT(IBW_LR_ERR + IBW_LERR_LINK_DOWNED));
	assert_true(end_by_guid(k, 0x201)->reasons ==
		    IBW_LR_BIT(IBW_LR_ERR + IBW_LERR_LINK_DOWNED));
	assert_true(end_by_guid(k, 0x100)->reasons == 0);

	k = ibw_link_view_find(v, 0x202, 1);
	assert_int_equal(k->health, IBW_HEALTH_OK);
	assert_true(k->reasons == 0);
	ibw_link_view_free(v);
	ibw_links_free(l);
}

/* Down and up more than 10 times in a day but never 10 in an hour:
 * degraded; a few flaps: ok. */
static void test_flaps_over_the_day(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	struct side s[4];
	int h;

	mk(&s[0], 0x100, 1, 1, IBW_WIDTH_4X);
	mk(&s[1], 0x200, 1, 0, IBW_WIDTH_4X);
	mk(&s[2], 0x100, 2, 1, IBW_WIDTH_4X);
	mk(&s[3], 0x201, 1, 0, IBW_WIDTH_4X);
	round_at(l, T0, s, 2);
	for (h = 1; h <= 4; h++) {
		/* Both ends count a flap. */
		s[0].in.err[IBW_LERR_LINK_DOWNED] = 3ull * h;
		s[1].in.err[IBW_LERR_LINK_DOWNED] = 3ull * h;
		s[2].in.err[IBW_LERR_LINK_DOWNED] = (uint64_t)h;
		round_at(l, T0 + 3600 * SEC * h, s, 2);
	}
	v = ibw_links_view(l, T0 + 4 * 3600 * SEC);
	/* 12 in the day at each end of the first link. */
	assert_int_equal(v->links[0].health, IBW_HEALTH_DEGRADED);
	assert_int_equal(v->links[0].end[0].guid, 0x100);
	assert_int_equal(v->links[0].end[0].port, 1);
	assert_true(v->links[0].end[0].reasons ==
		    IBW_LR_BIT(IBW_LR_ERR + IBW_LERR_LINK_DOWNED));
	assert_true(v->links[0].end[1].reasons ==
		    IBW_LR_BIT(IBW_LR_ERR + IBW_LERR_LINK_DOWNED));
	assert_int_equal(v->links[1].health, IBW_HEALTH_OK);
	ibw_link_view_free(v);
	ibw_links_free(l);
}

static void test_down_missing_forgotten(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	const struct ibw_link *k;
	struct side s[4];

	mk(&s[0], 0x100, 1, 1, IBW_WIDTH_4X);
	mk(&s[1], 0x200, 1, 0, IBW_WIDTH_4X);
	mk(&s[2], 0x100, 2, 1, IBW_WIDTH_4X);
	mk(&s[3], 0x201, 1, 0, IBW_WIDTH_4X);
	s[1].pi.phys_state = IBW_PHYS_POLLING;
	s[1].pi.state = IBW_PORT_DOWN;
	s[3].pi.state = IBW_PORT_INIT;
	round_at(l, T0, s, 2);
	v = ibw_links_view(l, T0);
	assert_int_equal(v->count[IBW_HEALTH_DOWN], 2);
	k = ibw_link_view_find(v, 0x200, 1);
	assert_true(k->reasons == IBW_LR_BIT(IBW_LR_DOWN));
	assert_true(end_by_guid(k, 0x200)->reasons == IBW_LR_BIT(IBW_LR_DOWN));
	assert_true(end_by_guid(k, 0x100)->reasons == 0);
	assert_float_equal(k->data_bps, 0, 0);
	k = ibw_link_view_find(v, 0x201, 1);
	assert_true(k->reasons == IBW_LR_BIT(IBW_LR_INACTIVE));
	ibw_link_view_free(v);

	/* The next round has only the second cable, now up. */
	s[3].pi.state = IBW_PORT_ACTIVE;
	round_at(l, T0 + 60 * SEC, &s[2], 1);
	v = ibw_links_view(l, T0 + 60 * SEC);
	k = ibw_link_view_find(v, 0x200, 1);
	assert_int_equal(k->health, IBW_HEALTH_DOWN);
	assert_true(k->reasons & IBW_LR_BIT(IBW_LR_MISSING));
	assert_true(k->seen_us == T0);
	assert_int_equal(ibw_link_view_find(v, 0x201, 1)->health,
			 IBW_HEALTH_OK);
	ibw_link_view_free(v);

	/* A day after it was last seen it is forgotten. */
	round_at(l, T0 + 24 * 3600 * SEC + 2 * SEC, &s[2], 1);
	assert_int_equal(ibw_links_count(l), 1);
	v = ibw_links_view(l, T0 + 24 * 3600 * SEC + 2 * SEC);
	assert_null(ibw_link_view_find(v, 0x200, 1));
	ibw_link_view_free(v);
	ibw_links_free(l);
}

static void test_ranking(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	struct side s[10];
	int i;

	/* port 1: ok; 2: degraded, BER 2e-12; 3: down; 4: failing
	 * (receive errors); 5: degraded, BER 5e-12. */
	for (i = 0; i < 5; i++) {
		mk(&s[2 * i], 0x100, (uint8_t)(i + 1), 1, IBW_WIDTH_4X);
		mk(&s[2 * i + 1], 0x200 + (uint64_t)i, 1, 0, IBW_WIDTH_4X);
	}
	s[5].pi.phys_state = IBW_PHYS_DISABLED;
	round_at(l, T0, s, 5);
	/* 10 Gb/s for 1000 s: 1e13 bits. */
	s[3].in.err[IBW_LERR_SYMBOL] = 20;
	s[9].in.err[IBW_LERR_SYMBOL] = 50;
	s[6].in.err[IBW_LERR_RCV] = 11;
	round_at(l, T0 + 1000 * SEC, s, 5);
	v = ibw_links_view(l, T0 + 1000 * SEC);
	assert_int_equal(v->n, 5);
	assert_int_equal(v->links[0].end[0].port, 3);
	assert_int_equal(v->links[0].health, IBW_HEALTH_DOWN);
	assert_int_equal(v->links[1].end[0].port, 4);
	assert_int_equal(v->links[1].health, IBW_HEALTH_FAILING);
	assert_int_equal(v->links[2].end[0].port, 5);
	assert_float_equal(v->links[2].ber, 5e-12, 1e-25);
	assert_int_equal(v->links[3].end[0].port, 2);
	assert_int_equal(v->links[3].health, IBW_HEALTH_DEGRADED);
	assert_int_equal(v->links[4].end[0].port, 1);
	assert_int_equal(v->links[4].health, IBW_HEALTH_OK);
	ibw_link_view_free(v);
	ibw_links_free(l);
}

/* A BER threshold waits for enough bits to resolve it. */
static void test_ber_resolution(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	struct side s[2];

	mk(&s[0], 0x20, 1, 1, IBW_WIDTH_4X);
	mk(&s[1], 0x10, 1, 0, IBW_WIDTH_4X);
	round_at(l, T0, s, 1);
	/* One error in 10 s (1e11 bits): 1e-11 on paper, but 1e-12 cannot
	 * be told from 1e11 bits. */
	s[0].in.err[IBW_LERR_SYMBOL] = 1;
	round_at(l, T0 + 10 * SEC, s, 1);
	v = ibw_links_view(l, T0 + 10 * SEC);
	assert_float_equal(v->links[0].ber, 1e-11, 1e-24);
	assert_int_equal(v->links[0].health, IBW_HEALTH_OK);
	ibw_link_view_free(v);
	/* 100 s of 10 Gb/s: 1e12 bits and now 2 errors: judged. */
	s[0].in.err[IBW_LERR_SYMBOL] = 2;
	round_at(l, T0 + 100 * SEC, s, 1);
	v = ibw_links_view(l, T0 + 100 * SEC);
	assert_int_equal(v->links[0].health, IBW_HEALTH_DEGRADED);
	assert_true(v->links[0].reasons == IBW_LR_BIT(IBW_LR_BER));
	ibw_link_view_free(v);
	ibw_links_free(l);
}

/* A SymbolErrorCounter stuck at its maximum (reset-counters never)
 * counts nothing more: the windows that reach to now say unknown, not a
 * BER of 0, and the link is not called ok on their word. */
static void test_saturated_ber_unknown(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	const struct ibw_link_end *e;
	struct side s[2];

	mk(&s[0], 0x20, 1, 1, IBW_WIDTH_4X);
	mk(&s[1], 0x10, 1, 0, IBW_WIDTH_4X);
	s[0].in.err[IBW_LERR_SYMBOL] = 65535;
	round_at(l, T0, s, 1);
	s[0].in.saturated = 1u << IBW_LERR_SYMBOL;
	round_at(l, T0 + 100 * SEC, s, 1);
	v = ibw_links_view(l, T0 + 100 * SEC);
	e = end_by_guid(&v->links[0], 0x20);
	assert_true(e->win[IBW_LWIN_SWEEP].ber < 0);
	assert_true(e->win[IBW_LWIN_HOUR].ber < 0);
	assert_true(v->links[0].ber < 0);
	/* the other direction still has its own */
	e = end_by_guid(&v->links[0], 0x10);
	assert_true(e->win[IBW_LWIN_HOUR].ber == 0);
	assert_true(e->win[IBW_LWIN_HOUR].xmit_wait_ratio >= 0);
	ibw_link_view_free(v);
	/* a PortXmitWait stuck at 2^32 - 1: no wait ratio, not 0 */
	s[1].in.saturated = IBW_LINK_SAT_XMIT_WAIT;
	round_at(l, T0 + 200 * SEC, s, 1);
	v = ibw_links_view(l, T0 + 200 * SEC);
	e = end_by_guid(&v->links[0], 0x10);
	assert_true(e->win[IBW_LWIN_SWEEP].xmit_wait_ratio < 0);
	assert_true(e->win[IBW_LWIN_HOUR].xmit_wait_ratio < 0);
	assert_true(v->links[0].xmit_wait_ratio < 0);
	ibw_link_view_free(v);
	ibw_links_free(l);
}

/* PortXmitWait ticks in time: Tick from PortSamplesControl, per lane or
 * per port, and per VL. */
static void test_xmit_wait_ticks(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	const struct ibw_link_end *sw, *hca;
	struct side s[2];

	mk(&s[0], 0x20, 1, 1, IBW_WIDTH_4X);
	mk(&s[1], 0x10, 1, 0, IBW_WIDTH_4X);
	s[0].in.tick = 7; /* 8 symbol times: 32 ns at SDR */
	s[1].in.tick = 7;
	s[1].in.tick_per_port = 1; /* 8 bytes at 8 Gb/s: 8 ns */
	s[0].in.vl_mask = 0x3;
	round_at(l, T0, s, 1);
	s[0].in.xmit_wait = 100000000; /* 3.2 s */
	s[1].in.xmit_wait = 100000000; /* 0.8 s */
	s[0].in.vl_xmit_wait[0] = 50000000; /* 1.6 s */
	s[0].in.vl_xmit_wait[1] = 25000000;
	round_at(l, T0 + 10 * SEC, s, 1);
	v = ibw_links_view(l, T0 + 10 * SEC);
	sw = end_by_guid(&v->links[0], 0x20);
	hca = end_by_guid(&v->links[0], 0x10);
	assert_float_equal(sw->win[IBW_LWIN_SWEEP].xmit_wait_ratio, 0.32, 1e-9);
	assert_float_equal(hca->win[IBW_LWIN_SWEEP].xmit_wait_ratio, 0.08,
			   1e-9);
	assert_int_equal(sw->vl_mask, 0x3);
	assert_float_equal(sw->vl_xmit_wait_ratio[0], 0.16, 1e-6);
	assert_float_equal(sw->vl_xmit_wait_ratio[1], 0.08, 1e-6);
	assert_int_equal(hca->vl_mask, 0);
	assert_float_equal(v->links[0].xmit_wait_ratio, 0.32, 1e-9);
	/* The view says which Tick each end's wait was timed with. */
	assert_int_equal(sw->tick, 7);
	ibw_link_view_free(v);

	/* Tick unread (-1): one symbol time assumed, the lower bound,
	 * and the view says so. */
	s[0].in.tick = -1;
	s[0].in.xmit_wait = 200000000; /* 0.4 s at 4 ns */
	round_at(l, T0 + 20 * SEC, s, 1);
	v = ibw_links_view(l, T0 + 20 * SEC);
	sw = end_by_guid(&v->links[0], 0x20);
	assert_int_equal(sw->tick, -1);
	assert_float_equal(sw->win[IBW_LWIN_SWEEP].xmit_wait_ratio, 0.04, 1e-9);
	ibw_link_view_free(v);
	ibw_links_free(l);
}

struct seen {
	unsigned n;
	uint64_t guid;
	enum ibw_link_health from, to;
};

static void on_change(const struct ibw_link_change *c, void *arg)
{
	struct seen *s = arg;

	s->n++;
	s->guid = c->link->end[1].guid;
	s->from = c->from;
	s->to = c->link->health;
}

static void test_changes(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v1, *v2, *v3;
	struct seen seen = { 0 };
	struct side s[4];

	mk(&s[0], 0x100, 1, 1, IBW_WIDTH_4X);
	mk(&s[1], 0x200, 1, 0, IBW_WIDTH_4X);
	mk(&s[2], 0x100, 2, 1, IBW_WIDTH_4X);
	mk(&s[3], 0x201, 1, 0, IBW_WIDTH_4X);
	round_at(l, T0, s, 2);
	v1 = ibw_links_view(l, T0);
	/* All ok: from nothing, nothing changes. */
	assert_int_equal(ibw_link_view_changes(NULL, v1, on_change, &seen), 0);
	s[3].pi.width_active = IBW_WIDTH_1X;
	round_at(l, T0 + SEC, s, 2);
	v2 = ibw_links_view(l, T0 + SEC);
	assert_int_equal(ibw_link_view_changes(v1, v2, on_change, &seen), 1);
	assert_int_equal(seen.n, 1);
	assert_true(seen.guid == 0x201);
	assert_int_equal(seen.from, IBW_HEALTH_OK);
	assert_int_equal(seen.to, IBW_HEALTH_DEGRADED);
	round_at(l, T0 + 2 * SEC, s, 2);
	v3 = ibw_links_view(l, T0 + 2 * SEC);
	assert_int_equal(ibw_link_view_changes(v2, v3, NULL, NULL), 0);
	/* A first view reports its bad links. */
	assert_int_equal(ibw_link_view_changes(NULL, v3, NULL, NULL), 1);
	ibw_link_view_free(v1);
	ibw_link_view_free(v2);
	ibw_link_view_free(v3);
	ibw_links_free(l);
}

static void test_thresholds_by_name(void **state)
{
	struct ibw_link_thresholds t;

	ibw_link_thresholds_default(&t);
	assert_float_equal(t.ber_degraded, 1e-12, 0);
	assert_int_equal(t.per_day[IBW_LERR_SYMBOL], 0);
	assert_int_equal(t.per_day[IBW_LERR_LINK_DOWNED], 10);
	assert_int_equal(t.per_hour[IBW_LERR_XMIT_DISCARDS], 100);
	assert_int_equal(
		ibw_link_thresholds_set(&t, "symbol_errors_per_hour", "50"), 0);
	assert_int_equal(t.per_hour[IBW_LERR_SYMBOL], 50);
	assert_int_equal(
		ibw_link_thresholds_set(&t, "link_downed_per_day", "3"), 0);
	assert_int_equal(t.per_day[IBW_LERR_LINK_DOWNED], 3);
	assert_int_equal(ibw_link_thresholds_set(&t, "ber_failing", "1e-9"), 0);
	assert_float_equal(t.ber_failing, 1e-9, 0);
	assert_int_equal(ibw_link_thresholds_set(&t, "basis", "enabled"), 0);
	assert_int_equal(t.basis, IBW_BASIS_ENABLED);
	assert_int_equal(ibw_link_thresholds_set(&t, "basis", "best"), -EINVAL);
	assert_int_equal(ibw_link_thresholds_set(&t, "ber_failing", "-1"),
			 -EINVAL);
	assert_int_equal(ibw_link_thresholds_set(&t, "link_downed_per_day",
						 "-3"),
			 -EINVAL);
	assert_int_equal(ibw_link_thresholds_set(&t, "link_downed_per_day",
						 "3x"),
			 -EINVAL);
	assert_int_equal(t.per_day[IBW_LERR_LINK_DOWNED], 3);
	assert_int_equal(ibw_link_thresholds_set(&t, "link_downed_per_week",
						 "3"),
			 -ENOENT);
	assert_int_equal(ibw_link_thresholds_set(&t, "nonsense", "3"), -ENOENT);
}

static void test_names(void **state)
{
	char buf[128];
	uint32_t m = IBW_LR_BIT(IBW_LR_WIDTH) |
		     IBW_LR_BIT(IBW_LR_ERR + IBW_LERR_SYMBOL) |
		     IBW_LR_BIT(IBW_LR_CONGESTION);

	assert_int_equal(ibw_link_reasons_fmt(m, buf, sizeof(buf)),
			 (int)strlen("width,symbol_errors,congestion"));
	assert_string_equal(buf, "width,symbol_errors,congestion");
	/* Cut short, still terminated; the length is the whole. */
	assert_int_equal(ibw_link_reasons_fmt(m, buf, 8), (int)strlen("width,"
								      "symbol_"
								      "errors,"
								      "congesti"
								      "on"));
	assert_string_equal(buf, "width,s");
	assert_int_equal(ibw_link_reasons_fmt(0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(ibw_link_reason_lookup("transmit_discards"),
			 IBW_LR_ERR + IBW_LERR_XMIT_DISCARDS);
	assert_int_equal(ibw_link_reason_lookup("missing"), IBW_LR_MISSING);
	assert_int_equal(ibw_link_reason_lookup("bogus"), -1);
	assert_int_equal(ibw_link_health_lookup("failing"), IBW_HEALTH_FAILING);
	assert_int_equal(ibw_link_health_lookup("bad"), -1);
	assert_string_equal(ibw_link_health_str(IBW_HEALTH_DOWN), "down");
	assert_string_equal(ibw_link_err_name(IBW_LERR_RCV_REMOTE_PHYS), "PortR"
									 "cvRem"
									 "otePh"
									 "ysica"
									 "lErro"
									 "rs");
	assert_string_equal(ibw_link_err_key(IBW_LERR_LOCAL_INTEGRITY), "local_"
									"link_"
									"integr"
									"ity_"
									"error"
									"s");
}

struct lines {
	char *l[8];
	int n;
};

static int keep_line(const char *line, void *arg)
{
	struct lines *ls = arg;

	if (ls->n == 8)
		return -ENOSPC;
	ls->l[ls->n++] = strdup(line);
	return 0;
}

/* The windows survive a restart through the state file's lines. */
static void test_save_load(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL), *m;
	struct ibw_link_view *v, *w;
	struct lines ls = { { NULL }, 0 };
	struct side s[4];
	char *bad;
	int i, j, e, win;

	mk(&s[0], 0x100, 1, 1, IBW_WIDTH_4X);
	mk(&s[1], 0x200, 1, 0, IBW_WIDTH_4X);
	mk(&s[2], 0x100, 2, 1, IBW_WIDTH_4X);
	mk(&s[3], 0x201, 1, 0, IBW_WIDTH_4X);
	for (i = 0; i <= 40; i++) {
		s[0].in.err[IBW_LERR_SYMBOL] = 3ull * i;
		s[1].in.err[IBW_LERR_RCV] = (uint64_t)i;
		s[3].in.err[IBW_LERR_LINK_DOWNED] = (uint64_t)(i / 10);
		s[2].in.xmit_bytes = 1000000000ull * i;
		s[3].in.xmit_wait = 1000000ull * i;
		round_at(l, T0 + 150 * SEC * i, s, 2);
	}
	assert_int_equal(ibw_links_save(l, keep_line, &ls), 0);
	assert_int_equal(ls.n, 2);

	m = ibw_links_new(NULL);
	for (i = 0; i < ls.n; i++)
		assert_int_equal(ibw_links_load_line(m, ls.l[i]), 0);
	assert_int_equal(ibw_links_count(m), 2);
	/* The next round after the restart: same readings, so no new
	 * increments; the windows are what they were. */
	round_at(m, T0 + 150 * SEC * 40, s, 2);
	v = ibw_links_view(l, T0 + 150 * SEC * 40);
	w = ibw_links_view(m, T0 + 150 * SEC * 40);
	assert_int_equal(w->n, 2);
	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++)
			for (win = IBW_LWIN_HOUR; win <= IBW_LWIN_DAY; win++) {
				const struct ibw_link_win *a =
					&v->links[i].end[j].win[win];
				const struct ibw_link_win *b =
					&w->links[i].end[j].win[win];

				assert_float_equal(a->seconds, b->seconds, 0);
				for (e = 0; e < IBW_LERR_MAX; e++)
					assert_true(a->errors[e] ==
						    b->errors[e]);
				assert_float_equal(a->ber, b->ber, 0);
				assert_float_equal(a->xmit_wait_ratio,
						   b->xmit_wait_ratio, 0);
				assert_float_equal(a->utilisation,
						   b->utilisation, 0);
			}
	assert_int_equal(v->links[0].health, w->links[0].health);
	ibw_link_view_free(w);
	ibw_links_free(m);

	/* And the base carries over: increments made while we were away
	 * count at the next reading. */
	m = ibw_links_new(NULL);
	for (i = 0; i < ls.n; i++)
		assert_int_equal(ibw_links_load_line(m, ls.l[i]), 0);
	s[0].in.err[IBW_LERR_SYMBOL] += 7;
	round_at(m, T0 + 150 * SEC * 41, s, 2);
	w = ibw_links_view(m, T0 + 150 * SEC * 41);
	assert_int_equal(ibw_link_view_find(w, 0x200, 1)
				 ->end[0]
				 .win[IBW_LWIN_SWEEP]
				 .errors[IBW_LERR_SYMBOL],
			 7);
	ibw_link_view_free(w);
	ibw_link_view_free(v);

	/* Broken lines restore nothing. */
	assert_int_equal(ibw_links_load_line(m, "link"), -EINVAL);
	assert_int_equal(ibw_links_load_line(m, "links 1 2 3"), -EINVAL);
	bad = strdup(ls.l[0]);
	bad[strlen(bad) / 2] = '\0';
	assert_int_equal(ibw_links_load_line(m, bad), -EINVAL);
	free(bad);
	assert_int_equal(asprintf(&bad, "%s x", ls.l[0]) > 0, 1);
	assert_int_equal(ibw_links_load_line(m, bad), -EINVAL);
	free(bad);
	/* Ends out of order. */
	assert_int_equal(ibw_links_load_line(m, "link 0x200 1 0x100 1 0 0 e 0 "
						"0 0 0 0 0 0 "
						"0 0 0 0 0 e 0 0 0 0 0 0 0 0 0 "
						"0 0 0"),
			 -EINVAL);
	assert_int_equal(ibw_links_load_line(m, "link 0x100 1 0x200 1 0 0 e 0 "
						"0 0 0 0 0 0 "
						"0 0 0 0 0 e 0 0 0 0 0 0 0 0 0 "
						"0 0 0"),
			 0);
	assert_int_equal(ibw_links_count(m), 2);
	ibw_links_free(m);
	for (i = 0; i < ls.n; i++)
		free(ls.l[i]);
	ibw_links_free(l);
}

/* The windows' cached sums say what the buckets say, also when readings
 * run ahead of the rounds' clock across period boundaries: a copy made
 * through the state file's lines, which has no cached sums, agrees. */
static void test_cached_sums(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL), *m;
	struct ibw_link_view *v, *w;
	struct lines ls;
	struct side s[2];
	int i, j, e, win;

	mk(&s[0], 0x20, 1, 1, IBW_WIDTH_4X);
	mk(&s[1], 0x10, 1, 0, IBW_WIDTH_4X);
	for (i = 0; i < 200; i++) {
		uint64_t t = T0 + 97 * SEC * i;

		s[0].in.err[IBW_LERR_RCV] += (uint64_t)(i % 7);
		s[1].in.err[IBW_LERR_LINK_DOWNED] += (uint64_t)(i % 3 == 0);
		s[0].in.xmit_bytes += 1000ull * i;
		ibw_links_begin(l, t);
		s[0].in.ctr_us = s[1].in.ctr_us = t + 30 * SEC;
		assert_int_equal(ibw_links_update(l, &s[0].in, &s[1].in), 0);
		memset(&ls, 0, sizeof(ls));
		assert_int_equal(ibw_links_save(l, keep_line, &ls), 0);
		m = ibw_links_new(NULL);
		assert_int_equal(ibw_links_load_line(m, ls.l[0]), 0);
		free(ls.l[0]);
		v = ibw_links_view(l, t);
		w = ibw_links_view(m, t);
		for (j = 0; j < 2; j++)
			for (win = IBW_LWIN_HOUR; win <= IBW_LWIN_DAY; win++) {
				const struct ibw_link_win *a =
					&v->links[0].end[j].win[win];
				const struct ibw_link_win *b =
					&w->links[0].end[j].win[win];

				assert_float_equal(a->seconds, b->seconds, 0);
				for (e = 0; e < IBW_LERR_MAX; e++)
					assert_true(a->errors[e] ==
						    b->errors[e]);
				assert_true(a->xmit_bytes == b->xmit_bytes);
			}
		ibw_link_view_free(v);
		ibw_link_view_free(w);
		ibw_links_free(m);
	}
	ibw_links_free(l);
}

/* The history is the hour window bucket by bucket: its sums are the
 * view's hour window, readings sit in the bucket of their time, and a
 * cable never seen is ENOENT. */
static void test_history(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_hist *h = calloc(1, sizeof(*h));
	struct ibw_link_view *v;
	struct side s[2];
	unsigned k, filled;
	int i, j, e;

	assert_non_null(h);
	mk(&s[0], 0x20, 1, 1, IBW_WIDTH_4X);
	mk(&s[1], 0x10, 1, 0, IBW_WIDTH_4X);
	for (i = 0; i < 40; i++) { /* 40 x 97 s: past the hour */
		uint64_t t = T0 + 97 * SEC * i;

		s[0].in.err[IBW_LERR_SYMBOL] += (uint64_t)(i % 5);
		s[1].in.xmit_bytes += 5000ull * i;
		ibw_links_begin(l, t);
		s[0].in.ctr_us = s[1].in.ctr_us = t;
		assert_int_equal(ibw_links_update(l, &s[0].in, &s[1].in), 0);
	}
	v = ibw_links_view(l, T0 + 97 * SEC * 39);
	assert_int_equal(ibw_links_history(l, v->links[0].end[0].guid,
					   v->links[0].end[0].port,
					   v->links[0].end[1].guid,
					   v->links[0].end[1].port,
					   T0 + 97 * SEC * 39, h),
			 0);
	assert_true(h->start_us % (IBW_LINK_HIST_SLOT_S * SEC) == 0);
	assert_true(T0 + 97 * SEC * 39 - h->start_us <
		    IBW_LINK_HIST_N * IBW_LINK_HIST_SLOT_S * SEC);
	for (j = 0; j < 2; j++) {
		const struct ibw_link_win *w =
			&v->links[0].end[j].win[IBW_LWIN_HOUR];
		double secs = 0;
		uint64_t bytes = 0, errs[IBW_LERR_MAX] = { 0 };

		for (k = 0, filled = 0; k < IBW_LINK_HIST_N; k++) {
			secs += h->b[k][j].seconds;
			bytes += h->b[k][j].xmit_bytes;
			filled += h->b[k][j].seconds > 0;
			for (e = 0; e < IBW_LERR_MAX; e++)
				errs[e] += h->b[k][j].errors[e];
			assert_true(h->raw_ber[k][j] == -1); /* no FEC */
		}
		assert_float_equal(secs, w->seconds, 1e-6);
		assert_true(bytes == w->xmit_bytes);
		for (e = 0; e < IBW_LERR_MAX; e++)
			assert_true(errs[e] == w->errors[e]);
		assert_true(filled >= 10); /* a reading every 97 s */
	}
	assert_true(v->links[0].end[0].win[IBW_LWIN_HOUR].xmit_bytes > 0 ||
		    v->links[0].end[1].win[IBW_LWIN_HOUR].xmit_bytes > 0);
	assert_int_equal(ibw_links_history(l, 0x99, 1, 0x98, 1, T0, h),
			 -ENOENT);
	ibw_link_view_free(v);
	ibw_links_free(l);
	free(h);
	(void)state;
}

static void test_bad_input(void **state)
{
	struct ibw_links *l = ibw_links_new(NULL);
	struct ibw_link_view *v;
	struct side s[2];

	mk(&s[0], 0x100, 1, 1, IBW_WIDTH_4X);
	mk(&s[1], 0x100, 1, 1, IBW_WIDTH_4X);
	ibw_links_begin(l, T0);
	assert_int_equal(ibw_links_update(l, &s[0].in, &s[1].in), -EINVAL);
	s[1].in.port = 2;
	s[1].in.pi = NULL;
	assert_int_equal(ibw_links_update(l, &s[0].in, &s[1].in), -EINVAL);
	v = ibw_links_view(l, T0);
	assert_int_equal(v->n, 0);
	assert_null(ibw_link_view_find(v, 0x100, 1));
	ibw_link_view_free(v);
	ibw_links_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_table),
		cmocka_unit_test(test_portinfo_speeds),
		cmocka_unit_test(test_fdr10),
		cmocka_unit_test(test_xdr),
		cmocka_unit_test(test_windows_exact),
		cmocka_unit_test(test_readings_once),
		cmocka_unit_test(test_width),
		cmocka_unit_test(test_speed),
		cmocka_unit_test(test_errors_move_their_link),
		cmocka_unit_test(test_flaps_over_the_day),
		cmocka_unit_test(test_down_missing_forgotten),
		cmocka_unit_test(test_ranking),
		cmocka_unit_test(test_ber_resolution),
		cmocka_unit_test(test_saturated_ber_unknown),
		cmocka_unit_test(test_xmit_wait_ticks),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_thresholds_by_name),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_save_load),
		cmocka_unit_test(test_cached_sums),
		cmocka_unit_test(test_history),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests_name("links", tests, NULL, NULL);
}
