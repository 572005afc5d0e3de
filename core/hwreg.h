/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * NVIDIA's access registers as ibwatch reads them in-band (docs/hardware.md):
 * their IDs, the bytes a Get carries to name what it asks (the index
 * fields), and decoders of the answers. Every offset is the one NVIDIA's
 * register layout database gives (mstflint's register_access_table.adb;
 * docs/hardware.md names each field as the database does); the tests
 * check them with an independent reader of that database.
 */
#ifndef IBW_HWREG_H
#define IBW_HWREG_H

#include <stddef.h>
#include <stdint.h>

enum {
	IBW_REG_MGIR = 0x9020,
	IBW_REG_MSGI = 0x9021,
	IBW_REG_MTCAP = 0x9009,
	IBW_REG_MTMP = 0x900a,
	IBW_REG_MFCR = 0x9001,
	IBW_REG_MFSM = 0x9003,
	IBW_REG_MFSL = 0x9004,
	IBW_REG_MSPS = 0x900d,
	IBW_REG_PDDR = 0x5031,
};

/* Sizes in bytes, as the database gives them. */
#define IBW_REG_MGIR_LEN 0xa0
#define IBW_REG_MSGI_LEN 0x80
#define IBW_REG_MTCAP_LEN 0x10
#define IBW_REG_MTMP_LEN 0x20
#define IBW_REG_MFCR_LEN 0x8
#define IBW_REG_MFSM_LEN 0x8
#define IBW_REG_MFSL_LEN 0xc
#define IBW_REG_MSPS_LEN 0xa0
#define IBW_REG_PDDR_LEN 0x100 /* its first 220 bytes hold what is read */
/* PDDR's pages read: the module's info and its latched flags */
#define IBW_PDDR_MODULE_INFO 3
#define IBW_PDDR_MODULE_FLAGS 9
#define IBW_MODULE_LANES 8

#define IBW_HW_TACHOS 16 /* MFCR: tacho_active (10 bits) and its msb (6) */
#define IBW_HW_SENSOR_MAP 64 /* MTCAP: sensor_map */
#define IBW_HW_PSUS 2 /* MSPS: psu0, psu1 */

/* The vendor class and its attributes (mstflint's mtcr_ib_ofed.c). */
#define IBW_CLASS_VS_A 0x0a
#define IBW_VS_ATTR_GENERAL_INFO 0x0017
#define IBW_VS_ATTR_REG_GMP 0x0051
/* GeneralInfo: CapabilityMask (0x80 into the attribute, past the 8-byte
 * VS_Key), bit 20: IsAccessRegisterSupported */
#define IBW_GI_CAPMASK_OFF (8 + 0x80)
#define IBW_GI_CAP_ACCESS_REG (1u << 20)
/* AccessRegisterGMP: the VS_Key, a dword with the block number in bits
 * 16..31, then 220 bytes of the register */
#define IBW_GMP_REG_OFF 12
#define IBW_GMP_BLOCK 220
/* its MAD status when the register is not there (mstflint's
 * translate_mad_status_to_reg_status_gmp) */
#define IBW_GMP_ST_REG_NOT_SUPP 20
#define IBW_GMP_ST_BAD_PARAM 28

struct ibw_hw_mgir {
	uint16_t device_id, hw_rev, hw_dev_id;
	uint8_t num_ports;
	uint32_t uptime_s;
	uint32_t fw_major, fw_minor, fw_sub_minor; /* the extended ones */
	char psid[3 * 16 + 1]; /* safe text (safename.h) */
};

struct ibw_hw_msgi {
	char serial[3 * 24 + 1], part[3 * 20 + 1], revision[3 * 4 + 1];
	char product[3 * 64 + 1];
};

struct ibw_hw_mtcap {
	unsigned sensor_count;
	uint64_t sensor_map; /* bit i: sensor i */
};

struct ibw_hw_mtmp {
	unsigned index;
	int16_t temp, max_temp, thr_hi, thr_lo; /* 0.125 Celsius */
	char name[3 * 8 + 1];
};

struct ibw_hw_fan {
	unsigned rpm, tach_min, tach_max;
	int have_limits;
};

/* One power supply as MSPS gives it. The database leaves psu0 and psu1
 * opaque (20 dwords each); the status bits are read as ibswinfo reads
 * them (docs/hardware.md). */
struct ibw_hw_psu {
	int present; /* the first dword's top nibble 5 */
	int dc_ok; /* its bits 4..7 are 1 */
	int fan; /* the second dword's low nibble: 2 ok, 3 none, else bad */
	unsigned watts; /* the third dword, below its 0x8 marker; 0: none */
	char serial[3 * 12 + 1], part[3 * 16 + 1];
};

/* A cable module as PDDR's module info page gives it, asked in uW
 * (module_info_ext 1), and its latched flags page. */
struct ibw_hw_modinfo {
	unsigned identifier; /* cable_identifier: 0 QSFP28, 1 QSFP+, ... */
	unsigned type; /* cable_type: 1 active, 2 optical, 3 passive, 4
		   * unplugged */
	unsigned vendor_code; /* cable_vendor */
	unsigned length_m; /* cable_length */
	char vendor[3 * 16 + 1], pn[3 * 16 + 1], sn[3 * 16 + 1];
	char rev[3 * 4 + 1];
	double temp_c; /* 1/256 C */
	double volt_v; /* 100 uV */
	unsigned rx_uw[IBW_MODULE_LANES], tx_uw[IBW_MODULE_LANES];
	double bias_ma[IBW_MODULE_LANES]; /* 2 uA */
	/* the module's alarm thresholds */
	double temp_hi_c, temp_lo_c, volt_hi_v, volt_lo_v;
	unsigned rx_hi_uw, rx_lo_uw, tx_hi_uw, tx_lo_uw;
	double bias_hi_ma, bias_lo_ma;
	unsigned wavelength_nm;
};

/* The latched flags: bit i of a lane mask is lane i; temp and vcc:
 * bit 0 high alarm, 1 low alarm, 2 high warning, 3 low warning. */
struct ibw_hw_modflags {
	unsigned temp, vcc;
	uint8_t rx_hi_al, rx_lo_al, rx_hi_war, rx_lo_war;
	uint8_t tx_hi_al, tx_lo_al, tx_hi_war, tx_lo_war;
	uint8_t bias_hi_al, bias_lo_al, bias_hi_war, bias_lo_war;
	uint8_t rx_los, tx_fault;
};

/* A Get's register bytes: @buf (@len bytes, zeroed) with the index fields
 * set. Returns the register's length. */
size_t ibw_hwreg_ask_mtmp(uint8_t *buf, size_t len, unsigned sensor);
size_t ibw_hwreg_ask_tacho(uint8_t *buf, size_t len, unsigned tacho);

/* PDDR of IB port @port (pnat 1), page @page, powers in uW */
size_t ibw_hwreg_ask_pddr(uint8_t *buf, size_t len, unsigned port,
			  unsigned page);

/* Decoders of an answer's register bytes (@r, @len of them): 0, or
 * -EINVAL when it is too short. */
int ibw_hwreg_mgir(const uint8_t *r, size_t len, struct ibw_hw_mgir *out);
int ibw_hwreg_msgi(const uint8_t *r, size_t len, struct ibw_hw_msgi *out);
int ibw_hwreg_mtcap(const uint8_t *r, size_t len, struct ibw_hw_mtcap *out);
int ibw_hwreg_mtmp(const uint8_t *r, size_t len, struct ibw_hw_mtmp *out);
/* MFCR: the active tachometers, bit i tacho i */
int ibw_hwreg_mfcr(const uint8_t *r, size_t len, uint32_t *tachos);
int ibw_hwreg_mfsm(const uint8_t *r, size_t len, unsigned *rpm);
int ibw_hwreg_mfsl(const uint8_t *r, size_t len, unsigned *min, unsigned *max);
int ibw_hwreg_msps(const uint8_t *r, size_t len,
		   struct ibw_hw_psu out[IBW_HW_PSUS]);
/* PDDR's module info page and latched flags page (the register from its
 * start, @len >= 0xb0) */
int ibw_hwreg_pddr_info(const uint8_t *r, size_t len,
			struct ibw_hw_modinfo *out);
int ibw_hwreg_pddr_flags(const uint8_t *r, size_t len,
			 struct ibw_hw_modflags *out);

#endif
