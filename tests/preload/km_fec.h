/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel and fabric model's FEC ports (docs/testing.md): ibsim's PMA
 * answers none of PortExtendedSpeedsCounters and its SMA no
 * PortInfoExtended, and no port of it advertises extended speeds. Ports
 * listed in $IBW_KM_STATE_DIR/fec do, as an HDR or NDR port would:
 *
 *   LID PORT MODE [FIELD=VALUE ...]
 *
 * LID: the port's (a CA's) or its switch's; PORT: the port number; MODE:
 * off (no FEC: FECModeActive 0, the FC-FEC form, all zero unless fields
 * are given), fc (Fire Code FEC active, the FC-FEC form of the
 * counters), rs (RS-FEC, FECModeActive 2) or rs2 (4), both in the RS-FEC
 * form; FIELD: a PortExtendedSpeedsCounters field by libibmad's name
 * (FECCorrectableBlockCtrLane0, PortFECCorrectedSymbolCtr, ...), which
 * is perfquery -T's. speed=QDR|FDR|EDR|HDR|NDR among the fields makes
 * the port's PortInfo say that speed active (LinkSpeedActive QDR, and
 * LinkSpeedExtActive the extended one, 0 for QDR), SDR to QDR enabled
 * and supported and the extended speeds from FDR to the active one (FDR
 * for QDR: an FDR-capable port trained at QDR); core/ibrate.c decodes
 * the extended speed first. It applies to the PortInfo answers that
 * carry the LID given (a CA port's; the attribute modifier, or for 0
 * LocalPortNum, names the port). The file is read again when it changes, so a test
 * sets and changes values while daemons run; fields not given are 0.
 * VALUE+RATE makes a field grow by RATE a second (a decimal number) from
 * the time the file was written (its mtime) or from t0=SECONDS (the
 * realtime clock's) given on the line, the same in every process that
 * reads it: a steady error rate, which a rewritten file with the same t0
 * continues.
 *
 * Their PortInfo says IsExtendedSpeedsSupported, CapabilityMask2 and
 * IsPortInfoExtendedSupported (a switch: port 0's); the PMA of a node
 * with an rs or rs2 port says IsRSFECCountersSupported in ClassPortInfo;
 * PortInfoExtended says IsFECModeSupported and the mode; and
 * PortExtendedSpeedsCounters answer with the values, encoded with
 * libibmad's field table.
 *
 * ibsim's PortInfo says IsExtendedSpeedsSupported for every port, as an
 * FDR or later port's does, and such a port serves the counters: every
 * unlisted port answers them all zero in the FC-FEC form (PortInfo
 * Extended: no FEC active), unless IBW_KM_PESC=0 drops them as ibsim
 * does.
 */
#ifndef IBW_KM_FEC_H
#define IBW_KM_FEC_H

#include <stdint.h>

/* The state directory the file is in ("" or NULL: none). */
void kmf_init(const char *state_dir);

/* A PortInfo answer's payload @pi (SMP data), for attribute modifier
 * @attr_mod: the capability bits of a listed port set. */
void kmf_portinfo(uint8_t *pi, uint32_t attr_mod);

/* A PerfMgt ClassPortInfo answer's payload @cpi from @lid. */
void kmf_pma_cpi(uint8_t *cpi, uint16_t lid);

/* A request ibsim handed back undelivered, or that the model kept from
 * it (@mad: the whole MAD, @len bytes), that went to @dlid: a Get of
 * PortExtendedSpeedsCounters (or its Set, kmf_set) or of
 * PortInfoExtended for a listed port, or of a congestion counter of a
 * node listed in the cong file (kmf_psc; or its Set), is turned into its
 * answer. 1 if it was. */
int kmf_answer(uint8_t *mad, unsigned len, uint16_t dlid);

/* A PerfSet of PortExtendedSpeedsCounters (@mad: the whole MAD) sent to
 * @dlid: the listed port's counters its CounterSelect names are cleared,
 * for every process (km_clear.h; bit i: the form's i-th counter in
 * libibmad's field order, and perfquery -T -R sends all ones). Counters
 * saturate at their field's width (16 or 32 bits), as hardware's. A
 * PerfSet of a congestion attribute to a node listed in the cong file
 * clears that attribute's counters of the port, whatever its
 * CounterSelect (perfquery -R --xmitcc and the others send 0xffff). */
void kmf_set(const uint8_t *mad, uint16_t dlid);

/* The model's PortSamplesControl answer @mad (the whole MAD) from @dlid:
 * a node listed in $IBW_KM_STATE_DIR/cong ("LID PORT FIELD=VALUE ...",
 * libibmad's names of the congestion counters' fields) says in its
 * OptionMask that it has all six congestion attributes (0x30..0x35), and
 * answers their Gets for every port, with the values given (0 else).
 * Other nodes say none, and their Gets are dropped, as by ibsim. */
void kmf_psc(uint8_t *mad, uint16_t dlid);

#endif
