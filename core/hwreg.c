// SPDX-License-Identifier: BSD-2-Clause
/*
 * NVIDIA's access registers (hwreg.h). Offsets are the register layout
 * database's: "byte N, bits B.." of a big-endian dword, B counted from
 * its least significant bit (docs/hardware.md has the field names).
 */
#include <errno.h>
#include <string.h>

#include "hwreg.h"
#include "safename.h"

static uint32_t dw(const uint8_t *r, size_t off)
{
	return (uint32_t)r[off] << 24 | (uint32_t)r[off + 1] << 16 |
	       (uint32_t)r[off + 2] << 8 | r[off + 3];
}

static void put_dw(uint8_t *r, size_t off, uint32_t v)
{
	r[off] = (uint8_t)(v >> 24);
	r[off + 1] = (uint8_t)(v >> 16);
	r[off + 2] = (uint8_t)(v >> 8);
	r[off + 3] = (uint8_t)v;
}

/* A string field of @n bytes: the device's bytes up to the first NUL,
 * made safe text. */
static void text(char *dst, size_t dstlen, const uint8_t *src, size_t n)
{
	size_t len = strnlen((const char *)src, n);

	ibw_name_sanitize(dst, dstlen, src, len);
}

size_t ibw_hwreg_ask_mtmp(uint8_t *buf, size_t len, unsigned sensor)
{
	memset(buf, 0, len);
	if (len >= IBW_REG_MTMP_LEN)
		put_dw(buf, 0, sensor & 0xfff); /* sensor_index: 0x0.0, 12 */
	return IBW_REG_MTMP_LEN;
}

size_t ibw_hwreg_ask_tacho(uint8_t *buf, size_t len, unsigned tacho)
{
	memset(buf, 0, len);
	if (len >= IBW_REG_MFSL_LEN)
		put_dw(buf, 0, (tacho & 0xf) << 24); /* tacho: 0x0.24, 4 */
	return IBW_REG_MFSL_LEN;
}

int ibw_hwreg_mgir(const uint8_t *r, size_t len, struct ibw_hw_mgir *o)
{
	if (len < IBW_REG_MGIR_LEN)
		return -EINVAL;
	memset(o, 0, sizeof(*o));
	/* hw_info at 0x0 */
	o->device_id = (uint16_t)dw(r, 0x0); /* device_id: 0x0.0, 16 */
	o->hw_rev = (uint16_t)(dw(r, 0x0) >> 16); /* device_hw_revision */
	o->num_ports = (uint8_t)(dw(r, 0x4) >> 16); /* num_ports: 0x4.16 */
	o->hw_dev_id = (uint16_t)dw(r, 0x8); /* hw_dev_id: 0x8.0, 16 */
	o->uptime_s = dw(r, 0x1c); /* uptime: 0x1C.0, 32 */
	/* fw_info at 0x20 */
	text(o->psid, sizeof(o->psid), r + 0x20 + 0x10, 16); /* psid */
	o->fw_major = dw(r, 0x20 + 0x24); /* extended_major */
	o->fw_minor = dw(r, 0x20 + 0x28); /* extended_minor */
	o->fw_sub_minor = dw(r, 0x20 + 0x2c); /* extended_sub_minor */
	return 0;
}

int ibw_hwreg_msgi(const uint8_t *r, size_t len, struct ibw_hw_msgi *o)
{
	if (len < IBW_REG_MSGI_LEN)
		return -EINVAL;
	text(o->serial, sizeof(o->serial), r + 0x0, 24); /* serial_number */
	text(o->part, sizeof(o->part), r + 0x20, 20); /* part_number */
	text(o->revision, sizeof(o->revision), r + 0x38, 4); /* revision */
	text(o->product, sizeof(o->product), r + 0x40, 64); /* product_name */
	return 0;
}

int ibw_hwreg_mtcap(const uint8_t *r, size_t len, struct ibw_hw_mtcap *o)
{
	if (len < IBW_REG_MTCAP_LEN)
		return -EINVAL;
	o->sensor_count = dw(r, 0x0) & 0x7f; /* sensor_count: 0x0.0, 7 */
	/* sensor_map: 0x8, hi then lo */
	o->sensor_map = (uint64_t)dw(r, 0x8) << 32 | dw(r, 0xc);
	return 0;
}

int ibw_hwreg_mtmp(const uint8_t *r, size_t len, struct ibw_hw_mtmp *o)
{
	if (len < IBW_REG_MTMP_LEN)
		return -EINVAL;
	o->index = dw(r, 0x0) & 0xfff; /* sensor_index: 0x0.0, 12 */
	o->temp = (int16_t)(uint16_t)dw(r, 0x4); /* temperature */
	o->max_temp = (int16_t)(uint16_t)dw(r, 0x8); /* max_temperature */
	/* temperature_threshold_hi: 0xC.0, 16; _lo: 0x10.0, 16 */
	o->thr_hi = (int16_t)(uint16_t)dw(r, 0xc);
	o->thr_lo = (int16_t)(uint16_t)dw(r, 0x10);
	/* sensor_name_hi, sensor_name_lo: 0x18, 0x1C, ASCII */
	text(o->name, sizeof(o->name), r + 0x18, 8);
	return 0;
}

int ibw_hwreg_mfcr(const uint8_t *r, size_t len, uint32_t *tachos)
{
	uint32_t d;

	if (len < IBW_REG_MFCR_LEN)
		return -EINVAL;
	d = dw(r, 0x4);
	/* tacho_active: 0x4.16, 10 bits; tacho_active_msb: 0x4.26, 6 */
	*tachos = (d >> 16) & 0x3ff;
	*tachos |= ((d >> 26) & 0x3f) << 10;
	return 0;
}

int ibw_hwreg_mfsm(const uint8_t *r, size_t len, unsigned *rpm)
{
	if (len < IBW_REG_MFSM_LEN)
		return -EINVAL;
	*rpm = dw(r, 0x4) & 0xffff; /* rpm: 0x4.0, 16 */
	return 0;
}

int ibw_hwreg_mfsl(const uint8_t *r, size_t len, unsigned *min, unsigned *max)
{
	if (len < IBW_REG_MFSL_LEN)
		return -EINVAL;
	*min = dw(r, 0x4) & 0xffff; /* tach_min: 0x4.0, 16 */
	*max = dw(r, 0x8) & 0xffff; /* tach_max: 0x8.0, 16 */
	return 0;
}

int ibw_hwreg_msps(const uint8_t *r, size_t len,
		   struct ibw_hw_psu out[IBW_HW_PSUS])
{
	unsigned i;

	if (len < IBW_REG_MSPS_LEN)
		return -EINVAL;
	for (i = 0; i < IBW_HW_PSUS; i++) {
		const uint8_t *p = r + 0x50 * i; /* psu0: 0x0, psu1: 0x50 */
		uint32_t d0 = dw(p, 0), d1 = dw(p, 4), d2 = dw(p, 8);
		struct ibw_hw_psu *o = &out[i];

		memset(o, 0, sizeof(*o));
		o->present = d0 >> 28 == 5;
		o->dc_ok = (d0 >> 4 & 0xf) == 1;
		o->fan = (int)(d1 & 0xf);
		o->watts = d2 >> 28 == 8 ? d2 & 0x0fffffff : 0;
		text(o->serial, sizeof(o->serial), p + 4 * 4, 12);
		text(o->part, sizeof(o->part), p + 12 * 4, 16);
	}
	return 0;
}
