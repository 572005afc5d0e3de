/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel and fabric model's counter clears (docs/testing.md): a PMA
 * has one set of counters, whichever process reads or clears them, while
 * the model lives in each requester process. A PerfSet that clears a
 * modelled counter (PortCounters, PortCountersExtended or
 * PortExtendedSpeedsCounters with a CounterSelect) is appended to
 * $IBW_KM_STATE_DIR/clears, one line a clear, in one write with
 * O_APPEND so that lines of processes clearing together do not mix:
 *
 *   LID PORT KIND MASK NS
 *
 * KIND: pc (the counters of the pc file: bit i of MASK is counter i of
 * km_pc.c's table) or fec (a PortExtendedSpeedsCounters form: bit i its
 * i-th counter in libibmad's field order); NS: the realtime clock's
 * nanoseconds when the Set went out. Every process reads the file again
 * when it grows, so all of them report true(now) - true(clear).
 */
#ifndef IBW_KM_CLEAR_H
#define IBW_KM_CLEAR_H

#include <stdint.h>
#include <time.h>

/* pc: a counter's index (km_pc.c); fec: a field's CounterSelect bit;
 * cong: a congestion attribute's index (0x30 + i), all its fields */
enum { KMC_PC, KMC_FEC, KMC_CONG };

/* The state directory the file is in ("" or NULL: none). */
void kmc_init(const char *state_dir);

/* Counters @mask of kind @kind of port @port at @lid are cleared now. */
void kmc_clear(uint16_t lid, unsigned port, int kind, uint64_t mask);

/* When counter @bit of that kind at @lid/@port was last cleared
 * (realtime ns), 0 if never. */
long long kmc_last(uint16_t lid, unsigned port, int kind, unsigned bit);

/*
 * A driven counter's value now: VALUE plus RATE a second since @t0 (the
 * realtime clock), less what it was at its last clear @clear_ns (0:
 * none; a clear before @t0 is void: the line restated the counter
 * since). Unbounded; the caller saturates it at its field's width.
 */
uint64_t kmc_value(uint64_t value, double rate, const struct timespec *t0,
		   long long clear_ns);

#endif
