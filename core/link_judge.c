// SPDX-License-Identifier: BSD-2-Clause
/*
 * A link's health (links.h): the names of counters, healths and
 * reasons, the thresholds by name, and the judgement of one link from
 * its windows: which counters judge each end (FEC where FEC runs,
 * symbol errors elsewhere) and what they say. Pure: links.c fills a
 * link and calls ibw_link_judge().
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "links_int.h"

static const struct {
	const char *name, *key;
	uint32_t diags; /* infiniband-diags' error_thresholds */
} errs[NERR] = {
	[IBW_LERR_SYMBOL] = { "SymbolErrorCounter", "symbol_errors", 10 },
	[IBW_LERR_LINK_RECOVERY] = { "LinkErrorRecoveryCounter",
				     "link_error_recovery", 10 },
	[IBW_LERR_LINK_DOWNED] = { "LinkDownedCounter", "link_downed", 10 },
	[IBW_LERR_RCV] = { "PortRcvErrors", "receive_errors", 10 },
	[IBW_LERR_RCV_REMOTE_PHYS] = { "PortRcvRemotePhysicalErrors",
				       "receive_remote_physical_errors", 100 },
	[IBW_LERR_LOCAL_INTEGRITY] = { "LocalLinkIntegrityErrors",
				       "local_link_integrity_errors", 10 },
	[IBW_LERR_EXCESSIVE_OVERRUN] = { "ExcessiveBufferOverrunErrors",
					 "excessive_buffer_overrun_errors",
					 10 },
	[IBW_LERR_XMIT_DISCARDS] = { "PortXmitDiscards", "transmit_discards",
				     100 },
};

const char *ibw_link_err_name(enum ibw_link_err e)
{
	return (unsigned)e < NERR ? errs[e].name : "unknown";
}

const char *ibw_link_err_key(enum ibw_link_err e)
{
	return (unsigned)e < NERR ? errs[e].key : "unknown";
}

static const char *const health_names[IBW_HEALTH_MAX] = { "ok", "degraded",
							  "failing", "down" };

const char *ibw_link_health_str(enum ibw_link_health h)
{
	return (unsigned)h < IBW_HEALTH_MAX ? health_names[h] : "unknown";
}

int ibw_link_health_lookup(const char *name)
{
	int h;

	for (h = 0; h < IBW_HEALTH_MAX; h++)
		if (!strcmp(name, health_names[h]))
			return h;
	return -1;
}

const char *ibw_link_reason_str(enum ibw_link_reason r)
{
	static const char *const names[] = { "down",  "inactive", "missing",
					     "width", "speed",	  "ber" };

	if ((unsigned)r < IBW_LR_ERR)
		return names[r];
	if (r < IBW_LR_CONGESTION)
		return errs[r - IBW_LR_ERR].key;
	if (r == IBW_LR_CONGESTION)
		return "congestion";
	if (r == IBW_LR_RAW_BER)
		return "raw_ber";
	if (r == IBW_LR_EFFECTIVE_BER)
		return "effective_ber";
	if (r == IBW_LR_MODULE_WARNING)
		return "module_warning";
	if (r == IBW_LR_MODULE_ALARM)
		return "module_alarm";
	return "unknown";
}

const char *ibw_link_judge_why_str(enum ibw_link_judge_why w)
{
	static const char *const names[IBW_LJ_MAX] = {
		"speed_not_extended",	     "fec_mode_off",
		"fec_mode_active",	     "speed_implies_fec",
		"fec_optional_mode_unknown", "no_fec_counters",
	};

	return (unsigned)w < IBW_LJ_MAX ? names[w] : "unknown";
}

/*
 * FEC at the speeds that have it (IBA 1.3, PortInfoExtended; IEEE
 * 802.3): FDR's Fire Code FEC and EDR's RS-FEC are optional (an EDR link
 * on short copper commonly runs without), so there only FECModeActive
 * can say; from HDR on the lanes are PAM4, which works only with
 * RS(544,514) FEC, so with no mode read FEC is taken to run. A mode read
 * is the port's own word and wins. Below FDR (and at FDR10, 64b/66b
 * without FEC) there is none.
 */
int ibw_link_fec_runs(enum ibw_speed speed, int mode_known, unsigned mode,
		      enum ibw_link_judge_why *why)
{
	enum ibw_link_judge_why w;
	int r;

	if (speed < IBW_SPEED_FDR || speed >= IBW_SPEED_MAX) {
		w = IBW_LJ_SPEED;
		r = 0;
	} else if (mode_known) {
		w = mode ? IBW_LJ_MODE_ON : IBW_LJ_MODE_OFF;
		r = mode != 0;
	} else if (speed >= IBW_SPEED_HDR) {
		w = IBW_LJ_SPEED_IMPLIES;
		r = 1;
	} else {
		w = IBW_LJ_SPEED_OPTIONAL;
		r = -1;
	}
	if (why)
		*why = w;
	return r;
}

int ibw_link_reason_lookup(const char *name)
{
	int r;

	for (r = 0; r < IBW_LR_MAX; r++)
		if (!strcmp(name, ibw_link_reason_str((enum ibw_link_reason)r)))
			return r;
	return -1;
}

int ibw_link_reasons_fmt(uint32_t mask, char *buf, size_t len)
{
	size_t n = 0;
	int r, w;

	if (len)
		buf[0] = '\0';
	for (r = 0; r < IBW_LR_MAX; r++) {
		if (!(mask & IBW_LR_BIT(r)))
			continue;
		w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0,
			     "%s%s", n ? "," : "",
			     ibw_link_reason_str((enum ibw_link_reason)r));
		if (w < 0)
			return w;
		n += (size_t)w;
	}
	return (int)n;
}

int ibw_link_bad_lanes_fmt(const struct ibw_link *k, char *buf, size_t len)
{
	size_t n = 0;
	int i, r;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < 2; i++) {
		const struct ibw_link_end *x = &k->end[i];

		if (!x->fec || x->fec->bad_lane < 0)
			continue;
		r = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0,
			     "%slane %d at %s port %u", n ? ", " : "",
			     x->fec->bad_lane, x->name, x->port);
		if (r < 0)
			return r;
		n += (size_t)r;
	}
	/* a cable module's own warning or alarm, its lane named */
	for (i = 0; i < 2; i++) {
		const struct ibw_link_end *x = &k->end[i];
		char what[160];

		if (!x->module.level)
			continue;
		ibw_link_module_fmt(&x->module, what, sizeof(what));
		r = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0,
			     "%s%s at %s port %u", n ? ", " : "", what, x->name,
			     x->port);
		if (r < 0)
			return r;
		n += (size_t)r;
	}
	return (int)n;
}

void ibw_link_thresholds_default(struct ibw_link_thresholds *t)
{
	int e;

	memset(t, 0, sizeof(*t));
	for (e = 0; e < NERR; e++)
		t->per_day[e] = t->per_hour[e] = errs[e].diags;
	/* Symbol errors are judged by the BER, which knows the link's
	 * rate; remote physical errors are packets an upstream link had
	 * already marked bad (docs/links.md). */
	t->per_day[IBW_LERR_SYMBOL] = t->per_hour[IBW_LERR_SYMBOL] = 0;
	t->per_day[IBW_LERR_RCV_REMOTE_PHYS] = 0;
	t->per_hour[IBW_LERR_RCV_REMOTE_PHYS] = 0;
	t->ber_degraded = 1e-12;
	t->ber_failing = 1e-10;
	t->xmit_wait_degraded = 0;
	t->basis = IBW_BASIS_SUPPORTED;
	ibw_fec_thresholds_default(&t->fec);
}

static int parse_u32(const char *s, uint32_t *v)
{
	unsigned long long x;
	char *end;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end || x > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

static int parse_ratio(const char *s, double *v)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(x) || x < 0)
		return -EINVAL;
	*v = x;
	return 0;
}

int ibw_link_thresholds_set(struct ibw_link_thresholds *t, const char *name,
			    const char *value)
{
	size_t kl;
	int e;

	if (!strcmp(name, "basis")) {
		if (!strcmp(value, "supported"))
			t->basis = IBW_BASIS_SUPPORTED;
		else if (!strcmp(value, "enabled"))
			t->basis = IBW_BASIS_ENABLED;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcmp(name, "ber_degraded"))
		return parse_ratio(value, &t->ber_degraded);
	if (!strcmp(name, "ber_failing"))
		return parse_ratio(value, &t->ber_failing);
	if (!strcmp(name, "xmit_wait_degraded"))
		return parse_ratio(value, &t->xmit_wait_degraded);
	if (!strcmp(name, "raw_ber_degraded"))
		return parse_ratio(value, &t->fec.raw_ber_degraded);
	if (!strcmp(name, "raw_ber_failing"))
		return parse_ratio(value, &t->fec.raw_ber_failing);
	if (!strcmp(name, "effective_ber_12m"))
		return parse_ratio(value, &t->fec.effective_ber_12m);
	if (!strcmp(name, "effective_ber_125m"))
		return parse_ratio(value, &t->fec.effective_ber_125m);
	if (!strcmp(name, "bad_lane_factor"))
		return parse_ratio(value, &t->fec.bad_lane_factor);
	for (e = 0; e < NERR; e++) {
		kl = strlen(errs[e].key);
		if (strncmp(name, errs[e].key, kl))
			continue;
		if (!strcmp(name + kl, "_per_day"))
			return parse_u32(value, &t->per_day[e]);
		if (!strcmp(name + kl, "_per_hour"))
			return parse_u32(value, &t->per_hour[e]);
	}
	return -ENOENT;
}

/* The severity one reason found at one end stands for. */
static void flag(struct ibw_link *k, int end, enum ibw_link_reason r,
		 enum ibw_link_health h)
{
	k->reasons |= IBW_LR_BIT(r);
	if (end >= 0)
		k->end[end].reasons |= IBW_LR_BIT(r);
	if (h > k->health)
		k->health = h;
}

/*
 * A BER threshold is applied only once the window holds enough bits to
 * resolve it (1/threshold): before that one error would exceed it.
 */
static int ber_over(const struct ibw_link_end *e, double thr)
{
	const struct ibw_link_win *w = &e->win[IBW_LWIN_HOUR];

	if (thr <= 0 || w->ber < 0)
		return 0;
	return (double)w->bits >= 1.0 / thr && w->ber > thr;
}

/* The FEC's judgement of end @i (its windows in @fx): its reasons, and the
 * link's worse raw and effective BER. */
static void judge_fec(struct ibw_link *k, int i, struct ibw_link_fec *fx,
		      const struct ibw_link_thresholds *t)
{
	const struct ibw_link_fec_win *w = &fx->win[IBW_FWIN_12M];

	ibw_link_fec_judge(fx, k->data_bps, &t->fec);
	if (fx->raw_state != IBW_HEALTH_OK)
		flag(k, i, IBW_LR_RAW_BER, (enum ibw_link_health)fx->raw_state);
	if (fx->effective_state != IBW_HEALTH_OK)
		flag(k, i, IBW_LR_EFFECTIVE_BER,
		     (enum ibw_link_health)fx->effective_state);
	if (w->raw_ber > k->raw_ber)
		k->raw_ber = w->raw_ber;
	if (w->effective_ber > k->effective_ber)
		k->effective_ber = w->effective_ber;
}

/* Whether end @x is judged by its FEC counters (@fx, NULL: none):
 * only where its link runs an extended speed with FEC active; sets its
 * fec_active, by_fec and why. */
static int judged_by_fec(struct ibw_link_end *x, const struct ibw_link_fec *fx)
{
	enum ibw_link_judge_why why;
	int runs = ibw_link_fec_runs((enum ibw_speed)x->sp.speed_active,
				     ibw_fec_mode_known(x->fec_mode_src),
				     x->fec_mode, &why);

	x->fec_active = (int8_t)runs;
	x->by_fec = runs > 0 && fx && fx->win[IBW_FWIN_12M].bits > 0;
	x->why = (uint8_t)(runs > 0 && !x->by_fec ? IBW_LJ_NO_READING : why);
	return x->by_fec;
}

/* @fx: the ends' FEC windows, NULL for an end without. */
void ibw_link_judge(struct ibw_link *k, const struct ibw_link_thresholds *t,
		    int missing, struct ibw_link_fec *const fx[2])
{
	const struct ibw_port_speeds *a = &k->end[0].sp, *b = &k->end[1].sp;
	unsigned wa, wb, sa, sb, lanes;
	int i, e, down = 0;

	for (i = 0; i < 2; i++) {
		const struct ibw_link_end *x = &k->end[i];

		if (x->phys_state != IBW_PHYS_LINKUP ||
		    x->state == IBW_PORT_DOWN) {
			flag(k, i, IBW_LR_DOWN, IBW_HEALTH_DOWN);
			down = 1;
		} else if (x->state != IBW_PORT_ACTIVE) {
			flag(k, i, IBW_LR_INACTIVE, IBW_HEALTH_DOWN);
			down = 1;
		}
	}
	if (missing) {
		flag(k, -1, IBW_LR_MISSING, IBW_HEALTH_DOWN);
		down = 1;
	}

	wa = a->width_supported;
	wb = b->width_supported;
	sa = a->speeds_supported;
	sb = b->speeds_supported;
	if (t->basis == IBW_BASIS_ENABLED) {
		/* A port that reports nothing enabled is taken at its
		 * word for what it supports. */
		wa &= a->width_enabled ? a->width_enabled : wa;
		wb &= b->width_enabled ? b->width_enabled : wb;
		sa &= a->speeds_enabled ? a->speeds_enabled : sa;
		sb &= b->speeds_enabled ? b->speeds_enabled : sb;
	}
	k->width_best = (uint8_t)ibw_width_widest(wa & wb);
	k->speed_best = (uint8_t)ibw_speed_fastest(sa & sb);
	lanes = ibw_width_lanes(a->width_active);
	k->width_active = a->width_active;
	if (ibw_width_lanes(b->width_active) < lanes) {
		k->width_active = b->width_active;
		lanes = ibw_width_lanes(b->width_active);
	}
	k->speed_active = a->speed_active < b->speed_active ? a->speed_active
							    : b->speed_active;
	if (!down) {
		k->signal_bps = ibw_rate_signal_bps(
			k->width_active, (enum ibw_speed)k->speed_active);
		k->data_bps = ibw_rate_data_bps(
			k->width_active, (enum ibw_speed)k->speed_active);
		if (lanes && k->width_best &&
		    lanes < ibw_width_lanes(k->width_best))
			flag(k, -1, IBW_LR_WIDTH, IBW_HEALTH_DEGRADED);
		if (k->speed_active != IBW_SPEED_UNKNOWN &&
		    k->speed_active < k->speed_best)
			flag(k, -1, IBW_LR_SPEED, IBW_HEALTH_DEGRADED);
	}

	k->ber = k->xmit_wait_ratio = k->raw_ber = k->effective_ber = -1;
	for (i = 0; i < 2; i++) {
		const struct ibw_link_end *x = &k->end[i];
		const struct ibw_link_win *h = &x->win[IBW_LWIN_HOUR];
		const struct ibw_link_win *d = &x->win[IBW_LWIN_DAY];
		const struct ibw_link_win *s = &x->win[IBW_LWIN_SWEEP];

		for (e = 0; e < NERR; e++) {
			enum ibw_link_reason r =
				(enum ibw_link_reason)(IBW_LR_ERR + e);

			if (t->per_day[e] && d->errors[e] > t->per_day[e])
				flag(k, i, r, IBW_HEALTH_DEGRADED);
			if (t->per_hour[e] && h->errors[e] > t->per_hour[e])
				flag(k, i, r, IBW_HEALTH_FAILING);
		}
		/* Where FEC runs and its counters are read, the symbol
		 * errors count in the effective BER instead; elsewhere the
		 * estimate judges (docs/links.md). */
		if (judged_by_fec(&k->end[i], fx[i]))
			judge_fec(k, i, fx[i], t);
		else if (ber_over(x, t->ber_failing))
			flag(k, i, IBW_LR_BER, IBW_HEALTH_FAILING);
		else if (ber_over(x, t->ber_degraded))
			flag(k, i, IBW_LR_BER, IBW_HEALTH_DEGRADED);
		if (t->xmit_wait_degraded > 0 &&
		    h->xmit_wait_ratio > t->xmit_wait_degraded)
			flag(k, i, IBW_LR_CONGESTION, IBW_HEALTH_DEGRADED);
		/* what the cable module says of itself (core/hw.h) */
		if (x->module.level == 2)
			flag(k, i, IBW_LR_MODULE_ALARM, IBW_HEALTH_FAILING);
		else if (x->module.level == 1)
			flag(k, i, IBW_LR_MODULE_WARNING, IBW_HEALTH_DEGRADED);
		if (h->ber > k->ber)
			k->ber = h->ber;
		if (s->xmit_wait_ratio > k->xmit_wait_ratio)
			k->xmit_wait_ratio = s->xmit_wait_ratio;
	}
	/* The worse direction of a link one of whose directions is
	 * unknown (a saturated SymbolErrorCounter, PortXmitWait or FEC
	 * counter) is unknown too. */
	for (i = 0; i < 2; i++) {
		if (k->end[i].saturated & (1u << IBW_LERR_SYMBOL))
			k->ber = -1;
		if (k->end[i].saturated & IBW_LINK_SAT_XMIT_WAIT)
			k->xmit_wait_ratio = -1;
		if (fx[i] && fx[i]->saturated)
			k->raw_ber = k->effective_ber = -1;
	}
}

const char *ibw_module_what_str(enum ibw_module_what w)
{
	static const char *const n[] = { "rx_power",	"tx_power", "tx_bias",
					 "temperature", "voltage",  "tx_fault",
					 "rx_los" };

	return (unsigned)w < sizeof(n) / sizeof(n[0]) ? n[w] : "unknown";
}

int ibw_link_module_fmt(const struct ibw_link_module *m, char *buf, size_t len)
{
	static const char *const label[] = { "rx power",	 "tx power",
					     "tx bias",		 "temperature",
					     "voltage",		 "tx fault",
					     "rx loss of signal" };
	static const char *const unit[] = {
		"dBm", "dBm", "mA", "C", "V", "", ""
	};
	const char *lvl = m->level == 2 ? "alarm" : "warning";
	char lane[16] = "module";
	unsigned w = m->what < 7 ? m->what : 0;
	int n;

	if (!m->level)
		return snprintf(buf, len, "%s", "");
	if (m->lane >= 0)
		snprintf(lane, sizeof(lane), "lane %d", m->lane);
	if (m->what == IBW_MOD_TX_FAULT || m->what == IBW_MOD_RX_LOS)
		return snprintf(buf, len, "%s %s", lane, label[w]);
	n = snprintf(buf, len, "%s %s %.2f %s %s its %s %s", lane, label[w],
		     (double)m->value, unit[w], m->high ? "over" : "under",
		     m->high ? "high" : "low", lvl);
	if (!isnan(m->threshold) && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " (alarm at %.2f %s)",
			      (double)m->threshold, unit[w]);
	return n;
}
