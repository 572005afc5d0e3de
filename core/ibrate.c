// SPDX-License-Identifier: BSD-2-Clause
#include <stddef.h>

#include "ibrate.h"

/*
 * Per lane rates, Gb/s. Signalling: libibmad's PortInfo dumps (2.5, 5.0,
 * 10.0; LinkSpeedExt 14.0625, 25.78125, 53.125, 106.25; LinkSpeedExt2
 * 212.5) and Mellanox's 10.3125 for FDR10. Data: 8b/10b up to QDR,
 * 64b/66b for FDR10, FDR and EDR; from HDR on the IBTA's data rates (50,
 * 100, 200 per lane: 200, 400 and 800 Gb/s at 4x), which PAM4 signalling
 * reaches after RS-FEC (544,514) and 256b/257b transcoding (53.125 *
 * 514/544 * 256/257 = 50). docs/links.md has the table and the sources.
 */
static const struct ibw_speed_info speeds[IBW_SPEED_MAX] = {
	[IBW_SPEED_SDR] = { "SDR", 2.5, 2.0, "8b/10b" },
	[IBW_SPEED_DDR] = { "DDR", 5.0, 4.0, "8b/10b" },
	[IBW_SPEED_QDR] = { "QDR", 10.0, 8.0, "8b/10b" },
	[IBW_SPEED_FDR10] = { "FDR10", 10.3125, 10.3125 * 64 / 66, "64b/66b" },
	[IBW_SPEED_FDR] = { "FDR", 14.0625, 14.0625 * 64 / 66, "64b/66b" },
	[IBW_SPEED_EDR] = { "EDR", 25.78125, 25.78125 * 64 / 66, "64b/66b" },
	[IBW_SPEED_HDR] = { "HDR", 53.125, 50.0, "PAM4, RS-FEC" },
	[IBW_SPEED_NDR] = { "NDR", 106.25, 100.0, "PAM4, RS-FEC" },
	[IBW_SPEED_XDR] = { "XDR", 212.5, 200.0, "PAM4, RS-FEC" },
};

const struct ibw_speed_info *ibw_speed_info(enum ibw_speed s)
{
	if (s <= IBW_SPEED_UNKNOWN || s >= IBW_SPEED_MAX)
		return NULL;
	return &speeds[s];
}

const char *ibw_speed_name(enum ibw_speed s)
{
	const struct ibw_speed_info *i = ibw_speed_info(s);

	return i ? i->name : "unknown";
}

unsigned ibw_width_lanes(unsigned width)
{
	switch (width) {
	case IBW_WIDTH_1X:
		return 1;
	case IBW_WIDTH_2X:
		return 2;
	case IBW_WIDTH_4X:
		return 4;
	case IBW_WIDTH_8X:
		return 8;
	case IBW_WIDTH_12X:
		return 12;
	}
	return 0;
}

unsigned ibw_width_widest(unsigned mask)
{
	/* The bits are not in the order of their lanes: 2x is bit 4. */
	static const unsigned order[] = { IBW_WIDTH_12X, IBW_WIDTH_8X,
					  IBW_WIDTH_4X, IBW_WIDTH_2X,
					  IBW_WIDTH_1X };
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (mask & order[i])
			return order[i];
	return 0;
}

double ibw_rate_signal_bps(unsigned width, enum ibw_speed s)
{
	const struct ibw_speed_info *i = ibw_speed_info(s);

	return i ? i->lane_signal_gbps * 1e9 * ibw_width_lanes(width) : 0.0;
}

double ibw_rate_data_bps(unsigned width, enum ibw_speed s)
{
	const struct ibw_speed_info *i = ibw_speed_info(s);

	return i ? i->lane_data_gbps * 1e9 * ibw_width_lanes(width) : 0.0;
}

enum ibw_speed ibw_speed_fastest(unsigned set)
{
	int s;

	for (s = IBW_SPEED_MAX - 1; s > IBW_SPEED_UNKNOWN; s--)
		if (set & IBW_SPEED_BIT(s))
			return (enum ibw_speed)s;
	return IBW_SPEED_UNKNOWN;
}

/* LinkSpeed* (bit 0 SDR, 1 DDR, 2 QDR) to a set. */
static unsigned base_set(unsigned v)
{
	return (v & 1 ? IBW_SPEED_BIT(IBW_SPEED_SDR) : 0) |
	       (v & 2 ? IBW_SPEED_BIT(IBW_SPEED_DDR) : 0) |
	       (v & 4 ? IBW_SPEED_BIT(IBW_SPEED_QDR) : 0);
}

/* LinkSpeedExt* (bit 0 FDR, 1 EDR, 2 HDR, 3 NDR) to a set. */
static unsigned ext_set(unsigned v)
{
	return (v & 1 ? IBW_SPEED_BIT(IBW_SPEED_FDR) : 0) |
	       (v & 2 ? IBW_SPEED_BIT(IBW_SPEED_EDR) : 0) |
	       (v & 4 ? IBW_SPEED_BIT(IBW_SPEED_HDR) : 0) |
	       (v & 8 ? IBW_SPEED_BIT(IBW_SPEED_NDR) : 0);
}

void ibw_port_speeds(const struct ibw_portinfo *pi,
		     const struct ibw_portinfo *cap,
		     struct ibw_port_speeds *out)
{
	unsigned ena, sup, ext_ena;
	int ext, ext2;

	if (!cap)
		cap = pi;
	ext = (cap->capmask & IBW_CAP_EXT_SPEEDS) != 0;
	ext2 = ext && (cap->capmask & IBW_CAP_CAPMASK2) &&
	       (cap->capmask2 & IBW_CAP2_EXT_SPEEDS2);

	out->width_active = pi->width_active;
	out->width_enabled = pi->width_enabled;
	out->width_supported = pi->width_supported;

	sup = base_set(pi->speed_supported);
	ena = base_set(pi->speed_enabled);
	if (ext) {
		/* 30 in LinkSpeedExtEnabled: extended speeds disabled. */
		ext_ena = pi->speed_ext_enabled == 30 ? 0
						      : pi->speed_ext_enabled;
		sup |= ext_set(pi->speed_ext_supported);
		ena |= ext_set(ext_ena);
	}
	if (ext2) {
		if (pi->speed_ext2_supported & 1)
			sup |= IBW_SPEED_BIT(IBW_SPEED_XDR);
		if (pi->speed_ext2_enabled & 1)
			ena |= IBW_SPEED_BIT(IBW_SPEED_XDR);
	}
	if (pi->have_mlnx_ext) {
		if (pi->mlnx_speed_supported & 1)
			sup |= IBW_SPEED_BIT(IBW_SPEED_FDR10);
		if (pi->mlnx_speed_enabled & 1)
			ena |= IBW_SPEED_BIT(IBW_SPEED_FDR10);
	}
	out->speeds_supported = (uint16_t)sup;
	out->speeds_enabled = (uint16_t)ena;

	if (ext2 && (pi->speed_ext2_active & 1))
		out->speed_active = IBW_SPEED_XDR;
	else if (ext && ext_set(pi->speed_ext_active))
		out->speed_active =
			ibw_speed_fastest(ext_set(pi->speed_ext_active));
	else if (pi->have_mlnx_ext && (pi->mlnx_speed_active & 1))
		out->speed_active = IBW_SPEED_FDR10;
	else
		out->speed_active =
			ibw_speed_fastest(base_set(pi->speed_active));
}
