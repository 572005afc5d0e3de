/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel and fabric model's NVIDIA devices (docs/testing.md,
 * docs/hardware.md): ibsim answers no vendor-specific class 0x0A MAD and
 * no AccessRegister SMP. Devices listed in $IBW_KM_STATE_DIR/hw answer
 * them as a switch or an HCA of NVIDIA's does, one line a record:
 *
 *   LID 0 dev HWID
 *   LID 0 reg REGID MASK IMAGE
 *
 * dev: the device at LID answers class 0x0A: ConfigSpaceAccess (0x50)
 * reads of address 0xf0014 give HWID (the hardware device ID and
 * revision, as mstflint identifies a device by; other addresses read 0)
 * and GeneralInfo (0x17) says IsAccessRegisterSupported (capability mask
 * bit 20). reg: a register image, in hex, as NVIDIA's layout database
 * lays the register out (tests/tools/adb.py encode writes these lines),
 * with MASK the bits of its index fields: an AccessRegister request for
 * REGID whose index bits equal the image's gets the image (the first
 * such line), any other "bad parameter"; a register with no line at all
 * "register not supported". Served through the three ways mstflint
 * knows: AccessRegisterGMP (class 0x0A, attribute 0x51: the register in
 * the MAD's data after the VS_Key and a block dword, the register's
 * status in the MAD status), AccessRegister over class 0x0A (attribute
 * 0xFF52) and as an SMP (class 0x01, attribute 0xFF52), the last two
 * with an Operation TLV and a register TLV ahead of the register.
 *
 * Register lines of LID 0 are every device's: a device with no image of
 * a register at its own LID is served LID 0's (a big fabric's devices
 * alike in a short file; clear an index field's bits in MASK to make
 * one image answer every value of it, every port say).
 *
 * A LID with no dev line answers none of it: its MADs go to ibsim, which
 * drops them (a switch of another vendor, or one whose firmware stays
 * silent); a host's MAD layer answers class 0x0A "not supported"
 * (km_unsupported_class). The file is read again when it changes.
 */
#ifndef IBW_KM_HW_H
#define IBW_KM_HW_H

#include <stdint.h>

/* The state directory the file is in ("" or NULL: none). */
void kmh_init(const char *state_dir);

/* Is @mad (a request) one a listed device at @dlid answers? */
int kmh_claims(const uint8_t *mad, uint16_t dlid);

/* @mad (the whole MAD, @len bytes), a request to @dlid the model kept
 * from ibsim, turned into the device's answer. 1 if it was. */
int kmh_answer(uint8_t *mad, unsigned len, uint16_t dlid);

#endif
