/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Link health: one record per cable, built from both ends' PortInfo and
 * counter readings, with error rates over windows (the last sweep, 1 h,
 * 24 h), an estimated bit error rate, transmit-wait and utilisation per
 * direction, and a health state with the reasons for it. Pure: no I/O,
 * no clock of its own, no MADs. The caller feeds every cable once per
 * round and takes an immutable view. docs/links.md gives the model, the
 * thresholds and their sources, and the bounds.
 */
#ifndef IBW_LINKS_H
#define IBW_LINKS_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "ibrate.h"
#include "link_fec.h"
#include "safename.h"

/* The error counters a link is judged by. */
enum ibw_link_err {
	IBW_LERR_SYMBOL, /* SymbolErrorCounter */
	IBW_LERR_LINK_RECOVERY, /* LinkErrorRecoveryCounter */
	IBW_LERR_LINK_DOWNED, /* LinkDownedCounter */
	IBW_LERR_RCV, /* PortRcvErrors */
	IBW_LERR_RCV_REMOTE_PHYS, /* PortRcvRemotePhysicalErrors */
	IBW_LERR_LOCAL_INTEGRITY, /* LocalLinkIntegrityErrors */
	IBW_LERR_EXCESSIVE_OVERRUN, /* ExcessiveBufferOverrunErrors */
	IBW_LERR_XMIT_DISCARDS, /* PortXmitDiscards */
	IBW_LERR_MAX,
};

/* perfquery's name ("SymbolErrorCounter"), and the snake_case key core's
 * counters use ("symbol_errors"), which is also the reason's name. */
const char *ibw_link_err_name(enum ibw_link_err e);
const char *ibw_link_err_key(enum ibw_link_err e);

/* enum ibw_link_health: link_fec.h, whose judge is the lowest to use it */
const char *ibw_link_health_str(enum ibw_link_health h);
/* "ok" .. "down" to the enum, -1 if none. */
int ibw_link_health_lookup(const char *name);

/* Why a link is not ok; bits IBW_LR_BIT(r) of a reasons mask. */
enum ibw_link_reason {
	IBW_LR_DOWN, /* an end is not LinkUp, or its PortState is Down */
	IBW_LR_INACTIVE, /* LinkUp, but an end is not Active (Init, Armed) */
	IBW_LR_MISSING, /* not in the last round (discovery lost it) */
	IBW_LR_WIDTH, /* narrower than the widest both ends support */
	IBW_LR_SPEED, /* slower than the fastest both ends support */
	IBW_LR_BER, /* estimated bit error rate over its threshold */
	IBW_LR_ERR, /* + enum ibw_link_err: that counter over threshold */
	IBW_LR_CONGESTION = IBW_LR_ERR + IBW_LERR_MAX, /* xmit wait */
	IBW_LR_RAW_BER, /* pre-FEC BER (corrected) over its threshold */
	IBW_LR_EFFECTIVE_BER, /* post-FEC errors over their threshold */
	IBW_LR_MODULE_WARNING, /* a cable module's warning (core/hw.h) */
	IBW_LR_MODULE_ALARM, /* ... or its alarm */
	IBW_LR_MAX,
};

#define IBW_LR_BIT(r) (1u << (r))

/* "down", "width", "symbol_errors" ..; "unknown" out of range. */
const char *ibw_link_reason_str(enum ibw_link_reason r);
/* The name to the enum, -1 if none (for filters). */
int ibw_link_reason_lookup(const char *name);
/* The names of the reasons in @mask, comma-separated, in enum order.
 * Returns what snprintf would (the length without the NUL). */
int ibw_link_reasons_fmt(uint32_t mask, char *buf, size_t len);

struct ibw_link;

/* The lanes named as carrying a receiver's raw BER, "lane 2 at NAME port
 * 1" for each end that has one, comma-separated; "" when none. Returns
 * what snprintf would. */
int ibw_link_bad_lanes_fmt(const struct ibw_link *k, char *buf, size_t len);

/* What "the best both ends support" is taken from. */
enum ibw_link_basis {
	IBW_BASIS_SUPPORTED, /* LinkWidthSupported, LinkSpeed*Supported */
	IBW_BASIS_ENABLED, /* the same, limited to what is enabled */
};

/* docs/links.md gives each default and its source. */
struct ibw_link_thresholds {
	/* More than per_day[e] increments of counter e at one end in the
	 * 24 h window: degraded; more than per_hour[e] in the 1 h window:
	 * failing. 0: not judged. */
	uint32_t per_day[IBW_LERR_MAX];
	uint32_t per_hour[IBW_LERR_MAX];
	double ber_degraded; /* estimated BER, 1 h window; 0: off */
	double ber_failing;
	double xmit_wait_degraded; /* share of time, 1 h window; 0: off */
	enum ibw_link_basis basis;
	struct ibw_fec_thresholds fec; /* ends with FEC counters */
};

void ibw_link_thresholds_default(struct ibw_link_thresholds *t);
/*
 * Set one threshold by name, for the config file: "basis" (supported or
 * enabled), "ber_degraded", "ber_failing", "xmit_wait_degraded",
 * "raw_ber_degraded", "raw_ber_failing", "effective_ber_12m",
 * "effective_ber_125m", "bad_lane_factor", and KEY_per_day, KEY_per_hour
 * with KEY a counter's key. 0, -ENOENT for an
 * unknown name, -EINVAL for a bad value (@t unchanged).
 */
int ibw_link_thresholds_set(struct ibw_link_thresholds *t, const char *name,
			    const char *value);

/* What a cable module at one end says of itself (core/hw.h): the worst
 * of its latched warning and alarm flags and of its values against its
 * alarm thresholds. */
enum ibw_module_what {
	IBW_MOD_RX_POWER,
	IBW_MOD_TX_POWER,
	IBW_MOD_TX_BIAS,
	IBW_MOD_TEMPERATURE,
	IBW_MOD_VOLTAGE,
	IBW_MOD_TX_FAULT,
	IBW_MOD_RX_LOS,
};

struct ibw_link_module {
	uint8_t level; /* 0: none read or fine, 1: warning, 2: alarm */
	uint8_t what; /* enum ibw_module_what */
	uint8_t high; /* over its high threshold (else under its low) */
	int8_t lane; /* -1: the module as a whole */
	/* the value (dBm, mA, Celsius, volts) and the alarm threshold
	 * crossed or nearest, NaN when unknown */
	float value, threshold;
};

/* "rx_power", "tx_power", "tx_bias", "temperature", "voltage",
 * "tx_fault", "rx_los" */
const char *ibw_module_what_str(enum ibw_module_what w);
/* "lane 2 rx power -15.23 dBm under its low alarm (-14.00 dBm)" and the
 * like; returns what snprintf would. */
int ibw_link_module_fmt(const struct ibw_link_module *m, char *buf, size_t len);

/* One end of a cable as the caller knows it in a round. */
struct ibw_link_end_in {
	uint64_t guid; /* node GUID */
	uint8_t port;
	uint8_t node_type; /* enum ibw_node_type */
	uint16_t lid;
	const char *name; /* copied (64 bytes at most); NULL: "" */
	const struct ibw_portinfo *pi; /* this port's; required */
	const struct ibw_portinfo *cap; /* port 0's on a switch; NULL: pi */
	/* Counters as 64-bit running totals (core/counters) read at
	 * ctr_us (CLOCK_REALTIME). A reading is used once: the same ctr_us
	 * again adds nothing. have_ctrs 0: no reading. */
	int have_ctrs;
	uint64_t ctr_us;
	uint64_t err[IBW_LERR_MAX];
	uint64_t xmit_wait; /* PortXmitWait, ticks */
	uint64_t xmit_bytes; /* PortXmitData, in bytes */
	/* bit e: err[e]'s field is saturated; IBW_LINK_SAT_XMIT_WAIT:
	 * PortXmitWait's */
	uint32_t saturated;
	/* PortSamplesControl:Tick, -1 when not read: then taken as 0, the
	 * spec's shortest tick (one symbol time), which makes the ratio a
	 * lower bound. */
	int tick;
	/* The device counts a tick per (Tick+1) bytes at the port's rate
	 * rather than per lane (NVIDIA documents this for Quantum). */
	int tick_per_port;
	uint16_t vl_mask; /* VLs whose PortVLXmitWait total is given */
	uint64_t vl_xmit_wait[16];
	/* PortExtendedSpeedsCounters' totals read with these counters,
	 * NULL: none (the port has no FEC counters). Not kept. */
	const struct ibw_fec *fec;
	/* its cable module, as the last hardware sweep read it */
	struct ibw_link_module module;
};

/* In saturated (ends in and out): PortXmitWait is stuck at its maximum,
 * the transmit-wait ratio of the windows reaching to now unknown. */
#define IBW_LINK_SAT_XMIT_WAIT (1u << 31)

enum ibw_link_window {
	IBW_LWIN_SWEEP, /* the last reading against the one before */
	IBW_LWIN_HOUR,
	IBW_LWIN_DAY,
	IBW_LWIN_MAX,
};

/* What one end saw in one window. Errors are counted at this end (its
 * receiver, mostly); xmit_wait_ratio and utilisation are of its transmit
 * direction. -1: unknown (no reading, link down, or the day window, which
 * keeps errors only). */
struct ibw_link_win {
	double seconds; /* time the readings cover, 0: none */
	uint64_t errors[IBW_LERR_MAX];
	double ber; /* SymbolErrorCounter over bits on the wire */
	double xmit_wait_ratio; /* share of the time waiting to send */
	double utilisation; /* PortXmitData against the effective rate */
	uint64_t xmit_bytes;
	uint64_t bits; /* on the wire while up: the BER's denominator */
};

/* Increments of @e per hour in @w, 0 when it covers no time. */
static inline double ibw_link_win_per_hour(const struct ibw_link_win *w,
					   enum ibw_link_err e)
{
	return w->seconds > 0 ? (double)w->errors[e] * 3600.0 / w->seconds
			      : 0.0;
}

/* The hour window bucket by bucket (ibw_links_history()): 12 periods of
 * 5 minutes, the last the one the view's time is in. */
#define IBW_LINK_HIST_N 12
#define IBW_LINK_HIST_SLOT_S 300

struct ibw_link_hist {
	uint64_t start_us; /* the first period's start, CLOCK_REALTIME */
	/* Each period, each end (end[0] the lower (GUID, port), as in
	 * struct ibw_link), counted as the hour window counts it: the
	 * hour window of the view is their sum. */
	struct ibw_link_win b[IBW_LINK_HIST_N][2];
	/* FEC: corrected bits over bits in each period; -1 none */
	double raw_ber[IBW_LINK_HIST_N][2];
};

/*
 * What judges an end's bit errors, and why (docs/links.md, "Judged by
 * FEC or by symbol errors"): its FEC counters only when its link runs an
 * extended speed with FEC active, its SymbolErrorCounter otherwise.
 */
enum ibw_link_judge_why {
	IBW_LJ_SPEED, /* below FDR (FDR10 too): no FEC at this speed */
	IBW_LJ_MODE_OFF, /* FECModeActive 0: no FEC runs */
	IBW_LJ_MODE_ON, /* FECModeActive says FEC runs */
	IBW_LJ_SPEED_IMPLIES, /* mode unknown; HDR and faster need RS-FEC */
	IBW_LJ_SPEED_OPTIONAL, /* mode unknown; FEC optional at FDR, EDR */
	IBW_LJ_NO_READING, /* FEC runs, no FEC counters read (yet) */
	IBW_LJ_MAX,
};

/* "speed_not_extended", "fec_mode_off", "fec_mode_active",
 * "speed_implies_fec", "fec_optional_mode_unknown", "no_fec_counters" */
const char *ibw_link_judge_why_str(enum ibw_link_judge_why w);

/*
 * Whether FEC runs at an end whose link is active at @speed, with
 * PortInfoExtended's FECModeActive @mode when @mode_known: 1 it runs, 0
 * it does not, -1 unknown (FDR or EDR with no mode: taken as not). @why
 * (may be NULL) gets the reason.
 */
int ibw_link_fec_runs(enum ibw_speed speed, int mode_known, unsigned mode,
		      enum ibw_link_judge_why *why);

struct ibw_link_end {
	uint64_t guid;
	uint8_t port;
	uint8_t node_type;
	uint16_t lid;
	/* its node's name (safe, as the state has it), packed in the
	 * view's names rather than IBW_NAME_SIZE bytes an end */
	const char *name;
	uint8_t state; /* PortState */
	uint8_t phys_state;
	struct ibw_port_speeds sp;
	uint32_t reasons; /* those seen at this end */
	uint32_t saturated;
	uint64_t sample_us; /* the last reading used, 0: none */
	/* PortSamplesControl:Tick the last reading's wait was timed with,
	 * -1: not read, taken as 0 (tick_source "assumed"). */
	int16_t tick;
	struct ibw_link_win win[IBW_LWIN_MAX];
	uint16_t vl_mask; /* VLs with a ratio in the last sweep */
	float vl_xmit_wait_ratio[16];
	/* The FEC windows and their judgement (the view's), NULL when the
	 * port has had no FEC reading: then only the estimate above. */
	const struct ibw_link_fec *fec;
	/* FECModeActive as last read with the FEC counters, fec_mode_src
	 * (enum ibw_fec_mode_src) says how; UNREAD: unknown. fec_active 1
	 * FEC runs, 0 not, -1 unknown (ibw_link_fec_runs()). by_fec 1: the
	 * FEC counters judge the end (reasons raw_ber, effective_ber),
	 * 0: SymbolErrorCounter (ber); why: enum ibw_link_judge_why. */
	uint8_t fec_mode, fec_mode_src;
	int8_t fec_active;
	uint8_t by_fec, why;
	struct ibw_link_module module; /* level 0: nothing to say */
};

struct ibw_link {
	struct ibw_link_end end[2]; /* end[0]: the lower (GUID, port) */
	uint8_t width_active, width_best; /* PortInfo width bits */
	uint8_t speed_active, speed_best; /* enum ibw_speed */
	double signal_bps, data_bps; /* at the active width and speed */
	enum ibw_link_health health;
	uint32_t reasons; /* IBW_LR_BIT()s */
	double ber; /* the worse direction, 1 h window; -1: unknown */
	double xmit_wait_ratio; /* the worse direction, last sweep; -1 */
	/* From the FEC counters, the worse direction, 12 minutes; -1:
	 * unknown (no end has them, or no bits yet). */
	double raw_ber, effective_ber;
	uint64_t seen_us; /* last round that had it */
};

struct ibw_link_view {
	unsigned refs; /* ibw_link_view_ref()/_unref() */
	uint64_t taken_us;
	size_t n;
	struct ibw_link *links; /* worst first (docs/links.md, ranking) */
	unsigned count[IBW_HEALTH_MAX];
	size_t *by_end; /* private: links.c's index of the ends */
	struct ibw_link_fec *fec; /* private: what the ends' fec point at */
	char *names; /* private: what the ends' name point at */
};

struct ibw_links;

/* @t NULL: the defaults. NULL on ENOMEM. */
struct ibw_links *ibw_links_new(const struct ibw_link_thresholds *t);
void ibw_links_free(struct ibw_links *l);
void ibw_links_set_thresholds(struct ibw_links *l,
			      const struct ibw_link_thresholds *t);
size_t ibw_links_count(const struct ibw_links *l);
/* The hour window of the cable between (@ga, @pa) and (@gb, @pb), the
 * lower end first, period by period up to @now_us: 0, or -ENOENT. */
int ibw_links_history(const struct ibw_links *l, uint64_t ga, uint8_t pa,
		      uint64_t gb, uint8_t pb, uint64_t now_us,
		      struct ibw_link_hist *h);

/*
 * A round: ibw_links_begin(), then ibw_links_update() once for every
 * cable the fabric has, then ibw_links_view(). Cables not updated in a
 * round are shown missing; begin forgets those missing for 24 h.
 */
void ibw_links_begin(struct ibw_links *l, uint64_t now_us);
/* 0, -EINVAL (no PortInfo, or both ends the same port), -ENOMEM. */
int ibw_links_update(struct ibw_links *l, const struct ibw_link_end_in *a,
		     const struct ibw_link_end_in *b);
/* The view at @now_us (windows end there), with one reference; NULL on
 * ENOMEM. A view is immutable: snapshots share it by reference. */
struct ibw_link_view *ibw_links_view(const struct ibw_links *l,
				     uint64_t now_us);
struct ibw_link_view *ibw_link_view_ref(struct ibw_link_view *v);
/* Drop a reference; the last one frees the view. */
void ibw_link_view_unref(struct ibw_link_view *v);
/* The same as ibw_link_view_unref(), for a view never shared. */
void ibw_link_view_free(struct ibw_link_view *v);
/* The link with @guid/@port at either end, NULL if none. */
const struct ibw_link *ibw_link_view_find(const struct ibw_link_view *v,
					  uint64_t guid, uint8_t port);

struct ibw_link_change {
	const struct ibw_link *link; /* in the newer view */
	enum ibw_link_health from; /* ok when the link is new */
	uint32_t from_reasons;
};

/* Call @cb for every link of @cur whose health differs from @old's (a
 * link @old lacks counts as ok before; @old may be NULL). Returns the
 * number of calls. */
unsigned ibw_link_view_changes(
	const struct ibw_link_view *old, const struct ibw_link_view *cur,
	void (*cb)(const struct ibw_link_change *c, void *arg), void *arg);

/*
 * The windows as text for the state file: one line per link, without a
 * newline, given to @emit; a negative return from @emit stops and is
 * returned. ibw_links_load_line() takes one such line back: 0, -EINVAL
 * for a line it cannot read (nothing restored), -ENOMEM.
 */
int ibw_links_save(const struct ibw_links *l,
		   int (*emit)(const char *line, void *arg), void *arg);
int ibw_links_load_line(struct ibw_links *l, const char *line);
/*
 * What changed since @since_us (the state file's journal,
 * core/ctr_journal.h): the same lines with their ends' bases and only
 * the buckets of the periods of @since_us and later, never the FEC
 * windows; links neither seen nor read since then are left out.
 * ibw_links_merge_line() takes such a line back into a link that may
 * hold older buckets: the bases and the buckets it gives replace
 * theirs, the other buckets stay.
 */
int ibw_links_save_since(const struct ibw_links *l, uint64_t since_us,
			 int (*emit)(const char *line, void *arg), void *arg);
int ibw_links_merge_line(struct ibw_links *l, const char *line);
/*
 * Whether ibw_links_save() writes the FEC windows (core/link_fec.h), on
 * from ibw_links_new(). Full, they are about three times the rest of the
 * lines: ibwatchd writes them only in the state file of its stop
 * (docs/links.md, "The state file's lines").
 */
void ibw_links_save_fec(struct ibw_links *l, int on);

#endif
