/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The arithmetic of 64-bit running totals: one PerfMgt counter, read
 * sweep after sweep, folded into a total that never goes backwards
 * although the counter saturates (4 to 32 bits in PortCounters), is
 * cleared by us or by other tools, or is read from another attribute
 * (PortCounters or PortCountersExtended) than last time.
 *
 * Pure functions of their arguments: no engine, no I/O, no clock. The
 * sweep (counters.c) reads the fabric and calls them; every rule of the
 * totals lives here, so that tests/unit/test_ctrmath.c can hold each one.
 */
#ifndef IBW_CTR_MATH_H
#define IBW_CTR_MATH_H

#include <stdint.h>

/* One counter of one port. A port has 32 of these, kept twice while a
 * snapshot holds the old chunk of records: the flags are bits and come
 * last, and the last sweep's increase is the caller's to take (total
 * before and after), so that one takes 24 bytes, not 40 (57,024 ports:
 * 29 MB less a set of records). */
struct ibw_ctr_val {
	uint64_t total; /* running total, monotonic, in our units */
	uint64_t raw; /* last value read (raw units); PortCounters' or
			 PortCountersExtended's, see from_ext */
	uint32_t resets; /* resets by someone else, detected */
	uint8_t have_raw : 1;
	uint8_t from_ext : 1;
	uint8_t saturated : 1; /* the 32-bit-or-narrower field is at max */
	uint8_t over_threshold : 1;
	uint8_t reset_by_us : 1; /* we cleared it after the last read */
};

/* The largest value of a @bits wide field; 0 for 64 bits and more,
 * which is never reached and so never saturates. */
uint64_t ibw_ctr_max(unsigned bits);

/* A field of a counter block (FEC, congestion) read again as @v: @first
 * says it was never read, and then @v is the total; else the total grows
 * by the increase, or by all of @v when @ours says we cleared it since
 * the last reading, or when it went down (someone else's clearing:
 * *@reset is set). @raw becomes @v. Returns the increase. */
uint64_t ibw_ctr_fold32(uint32_t *raw, uint64_t *total, uint32_t v, int first,
			int ours, int *reset);

/* 1 when @raw is at the largest value @max of its field (@max 0: never). */
int ibw_ctr_saturated(uint64_t raw, uint64_t max);

/* Fold a new raw reading into @v: the first reading is the total; then
 * the total grows by the increase times @scale, or by the whole reading
 * when it went down (a foreign reset, counted in v->resets) or when
 * @ours says we cleared the counter since the last read. @max is the
 * field's largest value, for the saturation flag. Returns 1 when a
 * foreign reset was detected. */
int ibw_ctr_fold(struct ibw_ctr_val *v, uint64_t raw, uint64_t max,
		 unsigned scale, int ours);

/* What ibw_ctr_update() did with a reading. */
enum ibw_ctr_step {
	IBW_CTR_STEP_COUNTED, /* folded in (a delta, possibly 0) */
	IBW_CTR_STEP_RESET, /* folded in after a foreign reset */
	IBW_CTR_STEP_REBASED, /* another source: a new baseline only */
};

/*
 * Take a reading from PortCountersExtended (@from_ext 1) or from
 * PortCounters or a detail attribute (0). A reading from another source
 * than the last one (the node gained or lost PortCountersExtended) is a
 * new baseline: the two count from different points, so nothing is
 * counted and nothing else about @v changes. Otherwise it is folded in
 * as ibw_ctr_fold(), with v->reset_by_us as @ours.
 */
enum ibw_ctr_step ibw_ctr_update(struct ibw_ctr_val *v, uint64_t raw,
				 uint64_t max, unsigned scale, int from_ext);

/* 1 when ibw_ctr_update() would take this reading as a foreign reset:
 * the sweep asks before it updates, to check who answered first. */
int ibw_ctr_would_reset(const struct ibw_ctr_val *v, uint64_t raw,
			int from_ext);

/* 1 when a narrow counter is past three quarters of its range (@max 0:
 * a 64-bit counter, never): time to clear it before it saturates. */
int ibw_ctr_near_max(uint64_t raw, uint64_t max);

/* Compare reading @raw with the error threshold @thr (0: none) and
 * remember it in v->over_threshold. Returns 1 only when it crosses from
 * below: one event per crossing, re-armed when it falls below again. */
int ibw_ctr_threshold(struct ibw_ctr_val *v, uint64_t raw, uint64_t thr);

/* Per second: the growth of a total from @prev to @cur over @dt_us
 * microseconds (@dt_us > 0). */
double ibw_ctr_rate(uint64_t cur, uint64_t prev, uint64_t dt_us);

#endif
