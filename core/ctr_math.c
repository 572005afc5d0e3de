// SPDX-License-Identifier: BSD-2-Clause
#include "ctr_math.h"

uint64_t ibw_ctr_max(unsigned bits)
{
	return bits >= 64 ? 0 : (1ull << bits) - 1;
}

uint64_t ibw_ctr_fold32(uint32_t *raw, uint64_t *total, uint32_t v, int first,
			int ours, int *reset)
{
	uint64_t d;

	if (first) {
		*total = v;
		d = 0;
	} else if (ours) {
		/* all of it is new, whether or not it went down */
		d = v;
	} else if (v >= *raw) {
		d = v - *raw;
	} else {
		d = v;
		*reset = 1;
	}
	*total += d;
	*raw = v;
	return d;
}

int ibw_ctr_saturated(uint64_t raw, uint64_t max)
{
	return max && raw >= max;
}

int ibw_ctr_fold(struct ibw_ctr_val *v, uint64_t raw, uint64_t max,
		 unsigned scale, int ours)
{
	int reset = 0;
	uint64_t d;

	if (!v->have_raw) {
		/* First reading ever: the counter's value is all we know. */
		v->total = raw * scale;
		d = 0;
	} else if (ours) {
		/* We cleared it after the last read, which was folded in. */
		d = raw * scale;
	} else if (raw >= v->raw) {
		d = (raw - v->raw) * scale;
	} else {
		/* Went backwards: someone else reset it. What it shows now
		 * was counted since then. */
		reset = 1;
		v->resets++;
		d = raw * scale;
	}
	v->total += d;
	v->raw = raw;
	v->have_raw = 1;
	v->reset_by_us = 0;
	v->saturated = (uint8_t)ibw_ctr_saturated(raw, max);
	return reset;
}

enum ibw_ctr_step ibw_ctr_update(struct ibw_ctr_val *v, uint64_t raw,
				 uint64_t max, unsigned scale, int from_ext)
{
	if (v->have_raw && v->from_ext != from_ext) {
		v->raw = raw;
		v->from_ext = (uint8_t)from_ext;
		return IBW_CTR_STEP_REBASED;
	}
	v->from_ext = (uint8_t)from_ext;
	return ibw_ctr_fold(v, raw, max, scale, v->reset_by_us)
		       ? IBW_CTR_STEP_RESET
		       : IBW_CTR_STEP_COUNTED;
}

int ibw_ctr_would_reset(const struct ibw_ctr_val *v, uint64_t raw, int from_ext)
{
	/* as ibw_ctr_update() and ibw_ctr_fold() decide it */
	return v->have_raw && !v->reset_by_us && v->from_ext == from_ext &&
	       raw < v->raw;
}

int ibw_ctr_near_max(uint64_t raw, uint64_t max)
{
	return max && raw >= max - max / 4;
}

int ibw_ctr_threshold(struct ibw_ctr_val *v, uint64_t raw, uint64_t thr)
{
	int over = thr && raw >= thr;
	int crossed = over && !v->over_threshold;

	v->over_threshold = (uint8_t)over;
	return crossed;
}

double ibw_ctr_rate(uint64_t cur, uint64_t prev, uint64_t dt_us)
{
	return (double)(cur - prev) / ((double)dt_us / 1e6);
}
