// SPDX-License-Identifier: BSD-2-Clause
/* The model's FEC ports: see km_fec.h. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mad.h>

#include "km_clear.h"
#include "km_fec.h"
#include "km_list.h"

#define KMF_MAX 65536 /* listed ports */
#define KMF_CHECK_NS 100000000ll /* the file looked at this often */
#define SMP_DATA 64
#define PMA_DATA 64
#define ATTR_CPI 0x0001
#define ATTR_PESC 0x001f
#define ATTR_PIE 0x0033
#define ATTR_CONG0 0x0030 /* SwPortVLCongestion .. PortVLXmitTimeCong */

struct kmf_port {
	struct km_key k;
	uint8_t mode; /* FECModeActive: 0 none (off), 1 Fire Code, 2 RS-FEC,
			 4 RS-FEC2; 0 in the congestion list */
	/* speed=: the active speed its PortInfo says, as LinkSpeedActive
	 * (4: QDR) and LinkSpeedExtActive (1 FDR .. 8 NDR) bits; 0: as
	 * ibsim says */
	uint8_t speed, speed_ext;
	int nset;
	struct {
		int field; /* enum MAD_FIELDS */
		uint32_t value;
		double rate; /* per second since t0 */
	} set[72];
};

static int parse_line(char *rest, void *rec, int cong);

#define KMF_LIST(c)                                              \
	{                                                        \
		.elem = sizeof(struct kmf_port), .max = KMF_MAX, \
		.parse = parse_line, .arg = (c)                  \
	}

static struct {
	pthread_mutex_t lock;
	long long checked_ns;
	struct km_list fec, cong;
	int others; /* unlisted ports answer too (IBW_KM_PESC) */
} kmf = { .lock = PTHREAD_MUTEX_INITIALIZER,
	  .fec = KMF_LIST(0),
	  .cong = KMF_LIST(1) };

/* The congestion attributes (0x30..0x35): libibmad's first and last
 * field of each. */
static const int cong_fields[6][2] = {
	{ IB_PC_SW_PORT_VL_CONGESTION0_F, IB_PC_SW_PORT_VL_CONGESTION_LAST_F },
	{ IB_PC_RCV_CON_CTRL_PKT_RCV_FECN_F, IB_PC_RCV_CON_CTRL_LAST_F },
	{ IB_PC_SL_RCV_FECN0_F, IB_PC_SL_RCV_FECN_LAST_F },
	{ IB_PC_SL_RCV_BECN0_F, IB_PC_SL_RCV_BECN_LAST_F },
	{ IB_PC_XMIT_CON_CTRL_TIME_CONG_F, IB_PC_XMIT_CON_CTRL_LAST_F },
	{ IB_PC_VL_XMIT_TIME_CONG0_F, IB_PC_VL_XMIT_TIME_CONG_LAST_F },
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void kmf_init(const char *state_dir)
{
	const char *s = getenv("IBW_KM_PESC");

	if (state_dir && *state_dir) {
		snprintf(kmf.fec.path, sizeof(kmf.fec.path), "%s/fec",
			 state_dir);
		snprintf(kmf.cong.path, sizeof(kmf.cong.path), "%s/cong",
			 state_dir);
	}
	kmf.others = !s || !*s || strcmp(s, "0") != 0;
}

/* libibmad's field named @name among the PortExtendedSpeedsCounters
 * fields of the form @rs (1: RS-FEC), or -1. */
static int field_by_name(const char *name, int rs)
{
	int f = rs ? IB_PESC_RSFEC_SYNC_HDR_ERR_CTR_F
		   : IB_PESC_SYNC_HDR_ERR_CTR_F;
	int last = rs ? IB_PESC_RSFEC_LAST_F : IB_PESC_LAST_F;

	for (; f < last; f++)
		if (!strcmp(mad_field_name((enum MAD_FIELDS)f), name))
			return f;
	return -1;
}

/* ... among the congestion attributes' fields */
static int cong_field_by_name(const char *name)
{
	int a, f;

	for (a = 0; a < 6; a++)
		for (f = cong_fields[a][0]; f < cong_fields[a][1]; f++)
			if (!strcmp(mad_field_name((enum MAD_FIELDS)f), name))
				return f;
	return -1;
}

/* 1 when FECModeActive @mode has the counters in the RS-FEC form */
static int mode_rs(unsigned mode)
{
	return mode == 2 || mode == 4;
}

/* speed=NAME: LinkSpeedActive and LinkSpeedExtActive bits. -1 if none. */
static int parse_speed(const char *name, struct kmf_port *p)
{
	static const char *const ext[] = { "FDR", "EDR", "HDR", "NDR" };
	unsigned i;

	if (!strcmp(name, "QDR")) {
		p->speed = 4;
		p->speed_ext = 0;
		return 0;
	}
	for (i = 0; i < 4; i++)
		if (!strcmp(name, ext[i])) {
			p->speed = 4;
			p->speed_ext = (uint8_t)(1u << i);
			return 0;
		}
	return -1;
}

/* "MODE [speed=S] FIELD=VALUE..." of the fec file (@cong 0),
 * "FIELD=VALUE..." of the cong file (@cong 1), after LID and PORT. */
static int parse_line(char *rest, void *rec, int cong)
{
	struct kmf_port *p = rec;
	char mode[8], *tok, *save = NULL, *end;
	int used = 0;

	if (!cong && sscanf(rest, "%7s %n", mode, &used) != 1)
		return -1;
	if (cong)
		p->mode = 0;
	else if (!strcmp(mode, "off"))
		p->mode = 0;
	else if (!strcmp(mode, "fc"))
		p->mode = 1;
	else if (!strcmp(mode, "rs"))
		p->mode = 2;
	else if (!strcmp(mode, "rs2"))
		p->mode = 4;
	else
		return -1;
	for (tok = strtok_r(rest + used, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		char *eq = strchr(tok, '=');
		int f;

		if (!eq || p->nset == 72)
			return -1;
		*eq = 0;
		if (km_key_word(&p->k, tok, eq + 1))
			continue;
		if (!cong && !strcmp(tok, "speed")) {
			if (parse_speed(eq + 1, p) < 0)
				return -1;
			continue;
		}
		f = cong ? cong_field_by_name(tok)
			 : field_by_name(tok, mode_rs(p->mode));
		if (f < 0)
			return -1;
		p->set[p->nset].field = f;
		p->set[p->nset].value = (uint32_t)strtoul(eq + 1, &end, 0);
		p->set[p->nset].rate = *end == '+' ? strtod(end + 1, NULL) : 0;
		p->nset++;
	}
	return 0;
}

/* Under kmf.lock: both files, at most every KMF_CHECK_NS. */
static void check(void)
{
	long long now = now_ns();

	if (kmf.checked_ns && now - kmf.checked_ns < KMF_CHECK_NS)
		return;
	kmf.checked_ns = now;
	km_list_reload(&kmf.fec);
	km_list_reload(&kmf.cong);
}

/* A FEC field's bit in the CounterSelect of its form: its place among
 * the form's counters in libibmad's order (km_clear.h). */
static unsigned fec_bit(int field)
{
	return field >= IB_PESC_RSFEC_SYNC_HDR_ERR_CTR_F
		       ? (unsigned)(field - IB_PESC_RSFEC_SYNC_HDR_ERR_CTR_F)
		       : (unsigned)(field - IB_PESC_SYNC_HDR_ERR_CTR_F);
}

/* Field @i of @p now: VALUE, plus RATE a second since the file was written
 * (the same for every process: the file's mtime, the realtime clock),
 * less its value at the port's last clear of it (@kind KMC_FEC: a FEC
 * port's field; KMC_CONG: congestion attribute @cong_attr's), saturated
 * at the field's width as a hardware counter is. */
static uint32_t value_now(const struct kmf_port *p, unsigned i, int kind,
			  unsigned cong_attr)
{
	int f = p->set[i].field;
	long long cleared =
		kind == KMC_FEC
			? kmc_last(p->k.lid, p->k.port, KMC_FEC, fec_bit(f))
		: kind == KMC_CONG
			? kmc_last(p->k.lid, p->k.port, KMC_CONG, cong_attr)
			: 0;
	uint64_t v =
		kmc_value(p->set[i].value, p->set[i].rate, &p->k.t0, cleared);
	uint32_t max = km_field_max(f);

	return v > max ? max : (uint32_t)v;
}

static int any_lid(const struct km_list *l, uint16_t lid, int rs_only)
{
	unsigned i;

	for (i = km_list_lower_bound(l, lid, 0);
	     i < l->n && km_list_key(l, i)->lid == lid; i++)
		if (!rs_only ||
		    mode_rs(((const struct kmf_port *)km_list_rec(l, i))->mode))
			return 1;
	return 0;
}

/* A listed port's speed= in its PortInfo @pi: that speed active, and
 * enabled and supported with the slower ones (an extended-speeds port
 * supports FDR at least, so a QDR one is an FDR-capable port trained at
 * QDR). */
static void set_speed(uint8_t *pi, const struct kmf_port *p)
{
	unsigned ext = p->speed_ext ? p->speed_ext : 1;
	unsigned upto = (ext << 1) - 1; /* FDR .. the one active */

	mad_set_field(pi, 0, IB_PORT_LINK_SPEED_ACTIVE_F, p->speed);
	mad_set_field(pi, 0, IB_PORT_LINK_SPEED_ENABLED_F, 7);
	mad_set_field(pi, 0, IB_PORT_LINK_SPEED_SUPPORTED_F, 7);
	mad_set_field(pi, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F, p->speed_ext);
	mad_set_field(pi, 0, IB_PORT_LINK_SPEED_EXT_ENABLED_F, upto);
	mad_set_field(pi, 0, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F, upto);
}

void kmf_portinfo(uint8_t *pi, uint32_t attr_mod)
{
	uint16_t lid = (uint16_t)mad_get_field(pi, 0, IB_PORT_LID_F);
	unsigned port = attr_mod & 0xff;
	const struct kmf_port *p;

	/* a CA answers attribute modifier 0 for the port asked through */
	if (!port)
		port = mad_get_field(pi, 0, IB_PORT_LOCAL_PORT_F);
	pthread_mutex_lock(&kmf.lock);
	check();
	/* a CA port's own LID; a switch's port 0 carries the LID and the
	 * capabilities of every port */
	if (lid && any_lid(&kmf.fec, lid, 0)) {
		mad_set_field(pi, 0, IB_PORT_CAPMASK_F,
			      mad_get_field(pi, 0, IB_PORT_CAPMASK_F) |
				      (1u << 14) | (1u << 15));
		mad_set_field(pi, 0, IB_PORT_CAPMASK2_F,
			      mad_get_field(pi, 0, IB_PORT_CAPMASK2_F) |
				      0x0002);
	}
	p = lid ? km_list_find(&kmf.fec, lid, port) : NULL;
	if (p && p->speed)
		set_speed(pi, p);
	pthread_mutex_unlock(&kmf.lock);
}

void kmf_pma_cpi(uint8_t *cpi, uint16_t lid)
{
	pthread_mutex_lock(&kmf.lock);
	check();
	if (any_lid(&kmf.fec, lid, 1)) {
		/* CapabilityMask, 16 bits big-endian at byte 2: bit 14 */
		cpi[2] |= 0x40;
	}
	pthread_mutex_unlock(&kmf.lock);
}

int kmf_answer(uint8_t *mad, unsigned len, uint16_t dlid)
{
	unsigned attr, port, i;
	const struct kmf_port *p;
	int done = 0;

	if (len < 256 || (mad[1] != 0x01 && mad[1] != 0x04))
		return 0;
	attr = (unsigned)mad[16] << 8 | mad[17];
	/* a Get; a Set of PortExtendedSpeedsCounters or of a congestion
	 * attribute (the clear, kmf_set) is answered as the PMA does, with
	 * the counters after it */
	if (mad[3] != 0x01 && (mad[3] != 0x02 || mad[1] != 0x04 ||
			       (attr != ATTR_PESC &&
				(attr < ATTR_CONG0 || attr >= ATTR_CONG0 + 6))))
		return 0;
	if (!((mad[1] == 0x04 && attr == ATTR_PESC) ||
	      (mad[1] == 0x04 && attr >= ATTR_CONG0 && attr < ATTR_CONG0 + 6) ||
	      (mad[1] == 0x01 && attr == ATTR_PIE)))
		return 0;
	pthread_mutex_lock(&kmf.lock);
	check();
	if (attr >= ATTR_CONG0 && attr < ATTR_CONG0 + 6 && mad[1] == 0x04) {
		/* a node listed in the cong file has them on every port */
		port = mad_get_field(mad + PMA_DATA, 0, IB_PC_PORT_SELECT_F);
		p = km_list_find(&kmf.cong, dlid, port);
		if (p || any_lid(&kmf.cong, dlid, 0)) {
			int lo = cong_fields[attr - ATTR_CONG0][0];
			int hi = cong_fields[attr - ATTR_CONG0][1];

			memset(mad + PMA_DATA, 0, len - PMA_DATA);
			mad_set_field(mad + PMA_DATA, 0, IB_PC_PORT_SELECT_F,
				      port);
			for (i = 0; p && i < (unsigned)p->nset; i++)
				if (p->set[i].field >= lo &&
				    p->set[i].field < hi)
					mad_set_field(
						mad + PMA_DATA, 0,
						(enum MAD_FIELDS)p->set[i].field,
						value_now(p, i, KMC_CONG,
							  attr - ATTR_CONG0));
			done = 1;
		}
		goto out;
	}
	/*
	 * ibsim's PortInfo says IsExtendedSpeedsSupported for every port,
	 * and a port of a real HCA or switch that says so serves its
	 * PortExtendedSpeedsCounters: an unlisted port answers them all
	 * zero (FC-FEC form), and its PortInfoExtended "no FEC active",
	 * unless IBW_KM_PESC=0 (then they are dropped, as ibsim does).
	 */
	if (attr == ATTR_PIE) {
		port = mad_get_field(mad, 0, IB_MAD_ATTRMOD_F) & 0xff;
		p = km_list_find(&kmf.fec, dlid, port);
		if (p || kmf.others) {
			memset(mad + SMP_DATA, 0, len - SMP_DATA);
			mad_set_field(mad + SMP_DATA, 0, IB_PORT_EXT_CAPMASK_F,
				      1); /* IsFECModeSupported */
			mad_set_field(mad + SMP_DATA, 0,
				      IB_PORT_EXT_FEC_MODE_ACTIVE_F,
				      p ? p->mode : 0);
			done = 1;
		}
	} else {
		port = mad_get_field(mad + PMA_DATA, 0, IB_PESC_PORT_SELECT_F);
		p = km_list_find(&kmf.fec, dlid, port);
		if (p || kmf.others) {
			memset(mad + PMA_DATA, 0, len - PMA_DATA);
			mad_set_field(mad + PMA_DATA, 0, IB_PESC_PORT_SELECT_F,
				      port);
			for (i = 0; p && i < (unsigned)p->nset; i++)
				mad_set_field(mad + PMA_DATA, 0,
					      (enum MAD_FIELDS)p->set[i].field,
					      value_now(p, i, KMC_FEC, 0));
			done = 1;
		}
	}
out:
	pthread_mutex_unlock(&kmf.lock);
	if (done) {
		mad[3] = 0x81; /* GetResp */
		mad[4] = mad[5] = 0; /* status */
	}
	return done;
}

void kmf_psc(uint8_t *mad, uint16_t dlid)
{
	uint64_t m;

	pthread_mutex_lock(&kmf.lock);
	check();
	if (any_lid(&kmf.cong, dlid, 0)) {
		/* OptionMask bits 48..54: all six congestion attributes */
		m = mad_get_field64(mad + PMA_DATA, 0, IB_PSC_OPTION_MASK_F);
		mad_set_field64(mad + PMA_DATA, 0, IB_PSC_OPTION_MASK_F,
				m | 0x7full << 48);
	}
	pthread_mutex_unlock(&kmf.lock);
}

void kmf_set(const uint8_t *mad, uint16_t dlid)
{
	uint8_t *pesc = (uint8_t *)mad + PMA_DATA;
	unsigned port, i, attr = (unsigned)mad[16] << 8 | mad[17];
	uint64_t sel;

	if (mad[1] != 0x04 || mad[3] != 0x02)
		return;
	if (attr >= ATTR_CONG0 && attr < ATTR_CONG0 + 6) {
		/* a node listed in the cong file has them on every port:
		 * the attribute's counters of the port start again */
		port = mad_get_field(pesc, 0, IB_PC_PORT_SELECT_F);
		pthread_mutex_lock(&kmf.lock);
		check();
		if (any_lid(&kmf.cong, dlid, 0))
			kmc_clear(dlid, port, KMC_CONG,
				  1ull << (attr - ATTR_CONG0));
		pthread_mutex_unlock(&kmf.lock);
		return;
	}
	if (attr != ATTR_PESC)
		return;
	port = mad_get_field(pesc, 0, IB_PESC_PORT_SELECT_F);
	sel = mad_get_field64(pesc, 0, IB_PESC_COUNTER_SELECT_F);
	pthread_mutex_lock(&kmf.lock);
	check();
	for (i = km_list_lower_bound(&kmf.fec, dlid, 0);
	     i < kmf.fec.n && km_list_key(&kmf.fec, i)->lid == dlid; i++) {
		unsigned pi = km_list_key(&kmf.fec, i)->port;

		if (port == 0xff || pi == port)
			kmc_clear(dlid, pi, KMC_FEC, sel);
	}
	pthread_mutex_unlock(&kmf.lock);
}
