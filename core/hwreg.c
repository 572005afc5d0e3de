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

size_t ibw_hwreg_ask_pddr(uint8_t *buf, size_t len, unsigned port,
			  unsigned page)
{
	memset(buf, 0, len);
	if (len >= 8) {
		/* pnat: 0x0.14, 2 bits, 1: the IB port number; local_port:
		 * 0x0.16, 8 */
		put_dw(buf, 0, 1u << 14 | (port & 0xff) << 16);
		/* page_select: 0x4.0, 8; module_info_ext: 0x4.29, 2, 1: uW */
		put_dw(buf, 4, (page & 0xff) | 1u << 29);
	}
	return IBW_REG_PDDR_LEN;
}

static int16_t s16(uint32_t v)
{
	return (int16_t)(uint16_t)v;
}

/* page_data starts at 0x8; offsets below are the register's */
int ibw_hwreg_pddr_info(const uint8_t *r, size_t len, struct ibw_hw_modinfo *o)
{
	unsigned i;
	uint32_t d;

	if (len < 0xb0)
		return -EINVAL;
	memset(o, 0, sizeof(*o));
	d = dw(r, 0xc); /* cable_type 0x4.28, cable_vendor 0x4.24,
			 * cable_length 0x4.16, cable_identifier 0x4.8 */
	o->type = d >> 28;
	o->vendor_code = d >> 24 & 0xf;
	o->length_m = d >> 16 & 0xff;
	o->identifier = d >> 8 & 0xff;
	text(o->vendor, sizeof(o->vendor), r + 0x1c, 16); /* vendor_name */
	text(o->pn, sizeof(o->pn), r + 0x2c, 16); /* vendor_pn */
	text(o->rev, sizeof(o->rev), r + 0x3c, 4); /* vendor_rev */
	text(o->sn, sizeof(o->sn), r + 0x44, 16); /* vendor_sn */
	d = dw(r, 0x54); /* temperature 0x4C.16, voltage 0x4C.0 */
	o->temp_c = s16(d >> 16) / 256.0;
	o->volt_v = (d & 0xffff) / 10000.0;
	for (i = 0; i < IBW_MODULE_LANES; i++) {
		/* lane 2k in the high half of a dword, 2k+1 in the low */
		unsigned sh = i & 1 ? 0 : 16;

		o->rx_uw[i] = dw(r, 0x58 + 4 * (i / 2)) >> sh & 0xffff;
		o->tx_uw[i] = dw(r, 0x68 + 4 * (i / 2)) >> sh & 0xffff;
		o->bias_ma[i] =
			(dw(r, 0x78 + 4 * (i / 2)) >> sh & 0xffff) / 500.0;
	}
	/* the alarm thresholds: high in the high half, low in the low */
	d = dw(r, 0x88);
	o->temp_hi_c = s16(d >> 16) / 256.0;
	o->temp_lo_c = s16(d) / 256.0;
	d = dw(r, 0x8c);
	o->volt_hi_v = (d >> 16) / 10000.0;
	o->volt_lo_v = (d & 0xffff) / 10000.0;
	d = dw(r, 0x90);
	o->rx_hi_uw = d >> 16;
	o->rx_lo_uw = d & 0xffff;
	d = dw(r, 0x94);
	o->tx_hi_uw = d >> 16;
	o->tx_lo_uw = d & 0xffff;
	d = dw(r, 0x98);
	o->bias_hi_ma = (d >> 16) / 500.0;
	o->bias_lo_ma = (d & 0xffff) / 500.0;
	o->wavelength_nm = dw(r, 0x9c) & 0xffff; /* wavelength 0x94.0 */
	return 0;
}

int ibw_hwreg_pddr_flags(const uint8_t *r, size_t len,
			 struct ibw_hw_modflags *o)
{
	uint32_t d;

	if (len < 0x24)
		return -EINVAL;
	memset(o, 0, sizeof(*o));
	d = dw(r, 0x8); /* temp_flags 0x0.28, vcc_flags 0x0.24 */
	o->temp = d >> 28;
	o->vcc = d >> 24 & 0xf;
	o->tx_fault = (uint8_t)(dw(r, 0xc) >> 24); /* tx_fault 0x4.24 */
	/* each dword: hi_al 24, lo_al 16, hi_war 8, lo_war 0 */
	d = dw(r, 0x10); /* tx_power_* 0x8 */
	o->tx_hi_al = (uint8_t)(d >> 24);
	o->tx_lo_al = (uint8_t)(d >> 16);
	o->tx_hi_war = (uint8_t)(d >> 8);
	o->tx_lo_war = (uint8_t)d;
	d = dw(r, 0x14); /* tx_bias_* 0xC */
	o->bias_hi_al = (uint8_t)(d >> 24);
	o->bias_lo_al = (uint8_t)(d >> 16);
	o->bias_hi_war = (uint8_t)(d >> 8);
	o->bias_lo_war = (uint8_t)d;
	o->rx_los = (uint8_t)(dw(r, 0x18) >> 24); /* rx_los 0x10.24 */
	d = dw(r, 0x1c); /* rx_power_* 0x14 */
	o->rx_hi_al = (uint8_t)(d >> 24);
	o->rx_lo_al = (uint8_t)(d >> 16);
	o->rx_hi_war = (uint8_t)(d >> 8);
	o->rx_lo_war = (uint8_t)d;
	return 0;
}
