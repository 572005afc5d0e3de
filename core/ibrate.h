/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * InfiniBand link rates: per lane signalling and effective data rates of
 * every speed, and the width and speed a port runs at, may run at and can
 * run at, decoded from its PortInfo (and the vendor ExtendedPortInfo for
 * FDR10). docs/links.md gives the table and its sources.
 */
#ifndef IBW_IBRATE_H
#define IBW_IBRATE_H

#include <stdint.h>

#include "codec.h"

/* In the order of their data rates, so that a higher value is faster. */
enum ibw_speed {
	IBW_SPEED_UNKNOWN = 0,
	IBW_SPEED_SDR,
	IBW_SPEED_DDR,
	IBW_SPEED_QDR,
	IBW_SPEED_FDR10,
	IBW_SPEED_FDR,
	IBW_SPEED_EDR,
	IBW_SPEED_HDR,
	IBW_SPEED_NDR,
	IBW_SPEED_XDR,
	IBW_SPEED_MAX,
};

/* PortInfo:LinkWidth* bits. */
enum ibw_width {
	IBW_WIDTH_1X = 1,
	IBW_WIDTH_4X = 2,
	IBW_WIDTH_8X = 4,
	IBW_WIDTH_12X = 8,
	IBW_WIDTH_2X = 16,
};

struct ibw_speed_info {
	const char *name; /* "SDR" .. "XDR" */
	double lane_signal_gbps; /* line rate of one lane */
	double lane_data_gbps; /* after encoding (and FEC from HDR on) */
	const char *encoding;
};

/* NULL for IBW_SPEED_UNKNOWN or out of range. */
const struct ibw_speed_info *ibw_speed_info(enum ibw_speed s);
/* "SDR".."XDR", or "unknown". */
const char *ibw_speed_name(enum ibw_speed s);

/* Lanes of one PortInfo width bit (1, 2, 4, 8, 12), 0 if not one. */
unsigned ibw_width_lanes(unsigned width);
/* The widest width bit of a LinkWidth* mask, 0 if none. */
unsigned ibw_width_widest(unsigned mask);

/* Rates of a link of @width (one PortInfo bit) at @s, in bits per
 * second; 0 when either is unknown. */
double ibw_rate_signal_bps(unsigned width, enum ibw_speed s);
double ibw_rate_data_bps(unsigned width, enum ibw_speed s);

/* Sets of speeds: bit (1u << enum ibw_speed). */
#define IBW_SPEED_BIT(s) (1u << (s))
/* The fastest speed of a set, IBW_SPEED_UNKNOWN if empty. */
enum ibw_speed ibw_speed_fastest(unsigned set);

/* What one port runs at, may run at and can run at. */
struct ibw_port_speeds {
	uint8_t width_active; /* PortInfo bits, as in PortInfo */
	uint8_t width_enabled;
	uint8_t width_supported;
	uint8_t speed_active; /* enum ibw_speed */
	uint16_t speeds_enabled; /* sets of enum ibw_speed */
	uint16_t speeds_supported;
};

/*
 * Decode @pi into @out. @cap is the PortInfo whose capability masks
 * apply: port 0's for a switch port, whose own masks read 0; NULL means
 * @pi's. Extended speeds count when the capability mask says
 * IsExtendedSpeedsSupported, XDR when CapabilityMask2 says
 * IsExtendedSpeeds2Supported, FDR10 when the vendor ExtendedPortInfo was
 * read. The active speed is, in this order: XDR, the extended speed,
 * FDR10, then LinkSpeedActive.
 */
void ibw_port_speeds(const struct ibw_portinfo *pi,
		     const struct ibw_portinfo *cap,
		     struct ibw_port_speeds *out);

#endif
