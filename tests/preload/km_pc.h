/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel and fabric model's driven hardware counters
 * (docs/testing.md): ibsim's counters move only with MAD traffic and its
 * PMA has no IsAdditionalPortCountersExtendedSupported, so nothing on the
 * simulator saturates a narrow error counter or shows its 64-bit twin.
 * Ports listed in $IBW_KM_STATE_DIR/pc have counters the test drives:
 *
 *   LID PORT [x] FIELD=VALUE[+RATE] ... [t0=SECONDS]
 *
 * LID: the port's (a CA's) or its switch's; PORT: the port number; x: the
 * node's PMA says IsAdditionalPortCountersExtendedSupported
 * (ClassPortInfo CapabilityMask2 bit 1) and its PortCountersExtended
 * answers carry the error counters; FIELD: a counter by libibmad's
 * PortCounters name (SymbolErrorCounter, LinkErrorRecoveryCounter,
 * LinkDownedCounter, PortRcvErrors, PortRcvRemotePhysicalErrors,
 * PortRcvSwitchRelayErrors, PortXmitDiscards, PortXmitConstraintErrors,
 * PortRcvConstraintErrors, LocalLinkIntegrityErrors,
 * ExcessiveBufferOverrunErrors, VL15Dropped, PortXmitWait, QP1Dropped,
 * PortXmitData, PortRcvData, PortXmitPkts, PortRcvPkts); VALUE+RATE as in
 * the fec file (km_fec.h): RATE a second from t0 or the file's mtime.
 *
 * Each listed field is one hardware counter with an unbounded true
 * value. PortCounters answers (ibsim's, rewritten on their way back)
 * carry it saturated at the field's width; PortCountersExtended answers
 * the 64-bit value (the error fields on an x node, the data fields on
 * every listed port). A PerfSet of either attribute clears the selected
 * counters for every process (km_clear.h): both attributes' selects act
 * on the one counter. Fields not listed keep ibsim's values.
 */
#ifndef IBW_KM_PC_H
#define IBW_KM_PC_H

#include <stdint.h>

/* The state directory the file is in ("" or NULL: none). */
void kmp_init(const char *state_dir);

/* A PerfMgt ClassPortInfo answer's payload @cpi from @lid: a listed
 * node's capability bits. */
void kmp_pma_cpi(uint8_t *cpi, uint16_t lid);

/* A PortCounters or PortCountersExtended answer's payload @pc (@attr)
 * from @lid: the listed counters' values put in. */
void kmp_answer(uint8_t *pc, unsigned attr, uint16_t lid);

/* A PerfSet of @attr with payload @pc sent to @dlid: the listed
 * counters it selects are cleared. */
void kmp_set(const uint8_t *pc, unsigned attr, uint16_t dlid);

#endif
