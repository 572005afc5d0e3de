/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Link health from the FEC counters (docs/links.md, "Raw and effective
 * BER"): per end of a cable, what forward error correction corrected
 * (the raw, pre-FEC errors) and what it could not (with
 * SymbolErrorCounter, the effective, post-FEC errors), per lane and per
 * port, over four windows: the last sweep, 12 minutes, 125 minutes and
 * 24 hours. Pure, as core/links: no I/O, no clock, no MADs; core/links
 * feeds it each end's FEC totals with the reading's time and rate.
 */
#ifndef IBW_LINK_FEC_H
#define IBW_LINK_FEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fec.h"

/* A cable's health, ordered: a higher value is worse (links.h names
 * them). */
enum ibw_link_health {
	IBW_HEALTH_OK,
	IBW_HEALTH_DEGRADED,
	IBW_HEALTH_FAILING,
	IBW_HEALTH_DOWN,
	IBW_HEALTH_MAX,
};

enum ibw_fwin {
	IBW_FWIN_SWEEP, /* the last reading against the one before */
	IBW_FWIN_12M,
	IBW_FWIN_125M,
	IBW_FWIN_DAY,
	IBW_FWIN_MAX,
};

/* "sweep", "12m", "125m", "24h" */
const char *ibw_fwin_name(enum ibw_fwin w);

/* docs/links.md gives each default and its source; 0 turns one off. */
struct ibw_fec_thresholds {
	double raw_ber_degraded; /* raw BER over 12 minutes */
	double raw_ber_failing;
	double effective_ber_12m; /* effective BER over 12 minutes */
	double effective_ber_125m; /* ... over 125 minutes */
	/* A lane is named when its corrections are this many times those
	 * of the next worst lane (and the raw BER is over a threshold). */
	double bad_lane_factor;
};

void ibw_fec_thresholds_default(struct ibw_fec_thresholds *t);

/* One end in one window: counts at this end's receiver, the direction
 * into it. */
struct ibw_link_fec_win {
	double seconds; /* time the readings cover */
	double bits; /* on the wire while the link was up */
	/* RS-FEC: corrected symbols; FC-FEC: corrected blocks. */
	double corrected;
	double lane[IBW_FEC_LANES]; /* corrected, per lane */
	uint64_t uncorrectable; /* blocks */
	/* post-FEC errors: per reading, the larger of the uncorrectable
	 * blocks and SymbolErrorCounter's increments */
	uint64_t effective;
	double raw_ber, effective_ber; /* -1: no bits yet */
};

/* One end's FEC view. */
struct ibw_link_fec {
	uint8_t layout; /* enum ibw_fec_layout of the last reading */
	uint8_t lanes; /* lanes counted: the active width's */
	int8_t bad_lane; /* the lane named, -1: none */
	uint8_t raw_state, effective_state; /* enum ibw_link_health */
	/* The last reading had a counter stuck at its maximum: every
	 * window's BER is unknown (-1), and so is the link's. */
	uint8_t saturated;
	struct ibw_link_fec_win win[IBW_FWIN_MAX];
};

/* The raw BER of @lane in @w (its share of the bits), -1 if unknown. */
double ibw_link_fec_lane_ber(const struct ibw_link_fec_win *w, unsigned lanes,
			     unsigned lane);

/*
 * Judge @x at a link with @data_bps (0: down): raw_state from the 12-minute
 * raw BER against raw_ber_degraded/_failing (once the window holds
 * 1/threshold bits), effective_state degraded when the effective errors
 * of the 12 (125) minutes exceed effective_ber_12m (_125m) times the bits
 * the data rate carries in 12 (125) minutes, as UFM's PDR plugin counts
 * them; bad_lane when the raw BER is over a threshold and one lane
 * carries it.
 */
void ibw_link_fec_judge(struct ibw_link_fec *x, double data_bps,
			const struct ibw_fec_thresholds *t);

/* ---- the state, for core/links ---- */

struct ibw_lfec;

/*
 * One reading of end @end (0 or 1) at @us: @fec the port's totals (NULL or
 * no layout: nothing), @sig_bps the link's signalling rate when it was up
 * through the sample (0 otherwise), @lanes its active lanes, @sym_delta
 * SymbolErrorCounter's increment since the last reading. *@pf is made at
 * the first reading. 0, or -ENOMEM with nothing taken.
 */
int ibw_lfec_take(struct ibw_lfec **pf, int end, const struct ibw_fec *fec,
		  uint64_t us, double sig_bps, unsigned lanes,
		  uint64_t sym_delta);
/* End @end's windows at @now_us in @out (not judged). 0 when the end has
 * had no FEC reading (@out zeroed), 1 when it has. */
int ibw_lfec_view(const struct ibw_lfec *f, int end, uint64_t now_us,
		  struct ibw_link_fec *out);
void ibw_lfec_free(struct ibw_lfec *f);
/* The raw BER of end @end in each of the @n 5-minute periods ending with
 * the one @now_us is in, oldest first (the 125-minute window's buckets):
 * corrected bits over bits, -1 where nothing was read (or the counters
 * are stuck at their maximum). @n at most 25. */
void ibw_lfec_raw_ber_5m(const struct ibw_lfec *f, int end, uint64_t now_us,
			 unsigned n, double *out);

/* ---- the state file's words (core/links_state.c) ---- */

/*
 * Append @f to @out, an end with a base at a time, as
 *   " f END LAYOUT LANES BASE_US BASE_CORR BASE_UNC BASE_LANE*12"
 * then each of its buckets in use as
 *   " fb END SLOT IDX MS BITS CORR UNC EFF LANE*LANES"
 * (floats to 9 digits: a float's exact value).
 */
void ibw_lfec_print(const struct ibw_lfec *f, FILE *out);

/* An end's base as saved ("f"). */
struct ibw_lfec_base {
	unsigned layout, lanes;
	uint64_t us, corr, unc;
	uint64_t lane[IBW_FEC_LANES];
};

/* A bucket as saved ("fb"). */
struct ibw_lfec_bucket {
	unsigned slot;
	uint32_t idx, ms, unc, eff;
	float bits, corr;
	float lane[IBW_FEC_LANES];
};

/* Give end @end of *@pf (made if NULL) the base @b, its windows empty.
 * 0; -EINVAL for a layout or lane count out of range; -ENOMEM. */
int ibw_lfec_restore_base(struct ibw_lfec **pf, int end,
			  const struct ibw_lfec_base *b);
/* Put @b into end @end's ring (after its base). 0; -EINVAL for an end
 * without a base, a slot out of range or an index that does not fall
 * in that slot. */
int ibw_lfec_restore_bucket(struct ibw_lfec *f, int end,
			    const struct ibw_lfec_bucket *b);
/* The lanes end @end counts (0: none), as restore_base set them. */
unsigned ibw_lfec_lanes(const struct ibw_lfec *f, int end);
/* Bytes @f holds (for the memory bound). */
size_t ibw_lfec_bytes(const struct ibw_lfec *f);

#endif
