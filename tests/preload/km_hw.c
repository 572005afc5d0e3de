// SPDX-License-Identifier: BSD-2-Clause
/* NVIDIA devices' vendor MADs and access registers (km_hw.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "km_hw.h"
#include "km_list.h"

#define KMH_MAX 65536
#define KMH_CHECK_NS 20000000ll /* the file looked at at most every 20 ms */
#define REG_MAX 512 /* the longest image kept, in bytes */

#define CLS_SMI 0x01
#define CLS_VS_A 0x0a
#define ATTR_GENERAL_INFO 0x0017
#define ATTR_CR_ACCESS 0x0050
#define ATTR_REG_GMP 0x0051
#define ATTR_REG_ACCESS 0xff52
#define HW_ID_ADDR 0xf0014

#define VS_DATA 32 /* after the MAD header and the VS_Key */
#define SMP_DATA 64
#define GMP_BLOCK 220 /* register bytes per AccessRegisterGMP MAD */
#define OP_TLV 16
#define REG_TLV 4

/* register status, in the Operation TLV */
#define RS_OK 0
#define RS_REG_NOT_SUPP 4
#define RS_BAD_PARAM 7
/* and as AccessRegisterGMP puts it in the MAD status */
#define GS_REG_NOT_SUPP 20
#define GS_BAD_PARAM 28

enum { KMH_DEV, KMH_REG };

struct kmh_rec {
	struct km_key key;
	int kind;
	uint32_t hwid;
	uint16_t regid;
	unsigned len;
	uint8_t mask[REG_MAX], img[REG_MAX];
};

static int parse_line(char *rest, void *rec, int arg);

static struct {
	pthread_mutex_t lock;
	long long checked_ns;
	struct km_list hw;
} kmh = { .lock = PTHREAD_MUTEX_INITIALIZER,
	  .hw = { .elem = sizeof(struct kmh_rec),
		  .max = KMH_MAX,
		  .lid0 = 1,
		  .parse = parse_line } };

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void kmh_init(const char *state_dir)
{
	if (state_dir && *state_dir)
		snprintf(kmh.hw.path, sizeof(kmh.hw.path), "%s/hw", state_dir);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

static int unhex(const char *s, uint8_t *out, unsigned max)
{
	unsigned n = 0;
	int hi, lo;

	while (s[0] && s[1]) {
		if (n == max)
			return -1;
		hi = hexval(s[0]);
		lo = hexval(s[1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	return s[0] ? -1 : (int)n;
}

static int parse_line(char *rest, void *rec, int arg)
{
	struct kmh_rec *r = rec;
	char kind[8], mask[2 * REG_MAX + 2], img[2 * REG_MAX + 2];
	unsigned regid;
	int nm, ni;

	(void)arg;
	if (sscanf(rest, "%7s", kind) != 1)
		return -1;
	if (!strcmp(kind, "dev")) {
		r->kind = KMH_DEV;
		return sscanf(rest, "%*s %i", (int *)&r->hwid) == 1 ? 0 : -1;
	}
	if (strcmp(kind, "reg") ||
	    sscanf(rest, "%*s %i %1025s %1025s", (int *)&regid, mask, img) != 3)
		return -1;
	nm = unhex(mask, r->mask, REG_MAX);
	ni = unhex(img, r->img, REG_MAX);
	if (nm < 0 || ni < 0 || nm != ni)
		return -1;
	r->kind = KMH_REG;
	r->regid = (uint16_t)regid;
	r->len = (unsigned)ni;
	return 0;
}

/* Under kmh.lock. */
static void check(void)
{
	long long now = now_ns();

	if (kmh.checked_ns && now - kmh.checked_ns < KMH_CHECK_NS)
		return;
	kmh.checked_ns = now;
	km_list_reload(&kmh.hw);
}

static const struct kmh_rec *dev_at(uint16_t lid)
{
	unsigned i = km_list_lower_bound(&kmh.hw, lid, 0);
	const struct kmh_rec *r;

	for (; i < kmh.hw.n; i++) {
		r = km_list_rec(&kmh.hw, i);
		if (r->key.lid != lid)
			break;
		if (r->kind == KMH_DEV)
			return r;
	}
	return NULL;
}

static unsigned be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static int is_ours(const uint8_t *mad)
{
	unsigned attr = be16(mad + 16);

	if (mad[3] != 0x01 && mad[3] != 0x02)
		return 0;
	if (mad[1] == CLS_VS_A)
		return attr == ATTR_GENERAL_INFO || attr == ATTR_CR_ACCESS ||
		       attr == ATTR_REG_GMP || attr == ATTR_REG_ACCESS;
	return mad[1] == CLS_SMI && attr == ATTR_REG_ACCESS;
}

int kmh_claims(const uint8_t *mad, uint16_t dlid)
{
	int yes;

	if (!is_ours(mad))
		return 0;
	pthread_mutex_lock(&kmh.lock);
	check();
	yes = dev_at(dlid) != NULL;
	pthread_mutex_unlock(&kmh.lock);
	return yes;
}

/* The register @regid at @lid whose index bits equal those of @req
 * (@n bytes of the request's register): the record, or NULL with
 * *@known saying whether @lid has the register at all. */
static const struct kmh_rec *find_reg_at(uint16_t lid, unsigned regid,
					 const uint8_t *req, unsigned n,
					 int *known)
{
	unsigned i = km_list_lower_bound(&kmh.hw, lid, 0), j;
	const struct kmh_rec *r;

	for (; i < kmh.hw.n; i++) {
		r = km_list_rec(&kmh.hw, i);
		if (r->key.lid != lid)
			break;
		if (r->kind != KMH_REG || r->regid != regid)
			continue;
		*known = 1;
		for (j = 0; j < r->len && j < n; j++)
			if ((req[j] & r->mask[j]) != (r->img[j] & r->mask[j]))
				break;
		if (j == r->len || j == n)
			return r;
	}
	return NULL;
}

/* ... or, when @lid has no such image, the image every device has (LID
 * 0's: a big fabric's devices all alike, in a file of a few lines) */
static const struct kmh_rec *find_reg(uint16_t lid, unsigned regid,
				      const uint8_t *req, unsigned n,
				      int *known)
{
	const struct kmh_rec *r;

	*known = 0;
	r = find_reg_at(lid, regid, req, n, known);
	if (!r && lid)
		r = find_reg_at(0, regid, req, n, known);
	return r;
}

/* An Operation TLV and a register TLV at @p, then @room bytes of
 * register: the register asked for, or its status. */
static void tlv_answer(uint8_t *p, unsigned room, uint16_t lid)
{
	unsigned regid = be16(p + 4), st;
	uint8_t *reg = p + OP_TLV + REG_TLV;
	const struct kmh_rec *r;
	int known;

	r = find_reg(lid, regid, reg, room, &known);
	if (r) {
		memset(reg, 0, room);
		memcpy(reg, r->img, r->len < room ? r->len : room);
		st = RS_OK;
	} else {
		st = known ? RS_BAD_PARAM : RS_REG_NOT_SUPP;
	}
	p[2] = (uint8_t)((p[2] & 0x80) | st); /* status: bits 17..23 */
	p[6] |= 0x01; /* r: a response */
}

int kmh_answer(uint8_t *mad, unsigned len, uint16_t dlid)
{
	const struct kmh_rec *d, *r;
	unsigned attr, status = 0, block, n;
	uint32_t mod, addr;
	int known;

	if (len < 256 || !is_ours(mad))
		return 0;
	attr = be16(mad + 16);
	mod = be32(mad + 20);
	pthread_mutex_lock(&kmh.lock);
	check();
	d = dev_at(dlid);
	if (!d) {
		pthread_mutex_unlock(&kmh.lock);
		return 0;
	}
	if (mad[1] == CLS_SMI) {
		tlv_answer(mad + SMP_DATA, 64 - OP_TLV - REG_TLV, dlid);
	} else if (attr == ATTR_GENERAL_INFO) {
		memset(mad + VS_DATA, 0, len - VS_DATA);
		put32(mad + VS_DATA + 0x80, 1u << 20);
	} else if (attr == ATTR_CR_ACCESS) {
		/* mode 0: address bits 0..15 and 24..31, dwords 16..21 */
		addr = (mod & 0xffff) | (mod >> 24) << 16;
		n = (mod >> 16) & 0x3f;
		memset(mad + VS_DATA, 0, len - VS_DATA);
		for (unsigned i = 0; i < n && VS_DATA + 4 * i + 4 <= len; i++)
			if (addr + 4 * i == HW_ID_ADDR)
				put32(mad + VS_DATA + 4 * i, d->hwid);
	} else if (attr == ATTR_REG_GMP) {
		block = be32(mad + VS_DATA) >> 16;
		r = find_reg(dlid, mod & 0xffff, mad + VS_DATA + 4, GMP_BLOCK,
			     &known);
		if (!r) {
			status = known ? GS_BAD_PARAM : GS_REG_NOT_SUPP;
		} else {
			memset(mad + VS_DATA + 4, 0, GMP_BLOCK);
			if (block * GMP_BLOCK < r->len) {
				n = r->len - block * GMP_BLOCK;
				memcpy(mad + VS_DATA + 4,
				       r->img + block * GMP_BLOCK,
				       n < GMP_BLOCK ? n : GMP_BLOCK);
			}
		}
	} else {
		tlv_answer(mad + VS_DATA, 256 - VS_DATA - OP_TLV - REG_TLV,
			   dlid);
	}
	pthread_mutex_unlock(&kmh.lock);
	mad[3] = 0x81; /* GetResp, to a Get or a Set */
	mad[4] = (uint8_t)(status >> 8);
	mad[5] = (uint8_t)status;
	return 1;
}
