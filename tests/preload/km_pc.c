// SPDX-License-Identifier: BSD-2-Clause
/* The model's driven hardware counters: see km_pc.h. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mad.h>

#include "km_clear.h"
#include "km_list.h"
#include "km_pc.h"

#define KMP_MAX 65536 /* listed ports */
#define KMP_CHECK_NS 100000000ll /* the file looked at this often */
#define ATTR_PC 0x0012
#define ATTR_PCE 0x001d
#define ALL_PORTS 0xff

/*
 * One hardware counter and where it shows: its PortCounters field and
 * that attribute's select bit (CounterSelect bits 0-15, CounterSelect2
 * bits from 16), its PortCountersExtended field and select bit
 * (CounterSelect 0-15, CounterSelect2 from 16), as libibmad's
 * performance_reset_via() and perfquery -R / -x -R set them.
 */
static const struct {
	int pc, pce;
	unsigned pc_bit, pce_bit;
} ctrs[] = {
	{ IB_PC_ERR_SYM_F, IB_PC_EXT_ERR_SYM_F, 0, 16 },
	{ IB_PC_LINK_RECOVERS_F, IB_PC_EXT_LINK_RECOVERS_F, 1, 17 },
	{ IB_PC_LINK_DOWNED_F, IB_PC_EXT_LINK_DOWNED_F, 2, 18 },
	{ IB_PC_ERR_RCV_F, IB_PC_EXT_ERR_RCV_F, 3, 19 },
	{ IB_PC_ERR_PHYSRCV_F, IB_PC_EXT_ERR_PHYSRCV_F, 4, 20 },
	{ IB_PC_ERR_SWITCH_REL_F, IB_PC_EXT_ERR_SWITCH_REL_F, 5, 21 },
	{ IB_PC_XMT_DISCARDS_F, IB_PC_EXT_XMT_DISCARDS_F, 6, 22 },
	{ IB_PC_ERR_XMTCONSTR_F, IB_PC_EXT_ERR_XMTCONSTR_F, 7, 23 },
	{ IB_PC_ERR_RCVCONSTR_F, IB_PC_EXT_ERR_RCVCONSTR_F, 8, 24 },
	{ IB_PC_ERR_LOCALINTEG_F, IB_PC_EXT_ERR_LOCALINTEG_F, 9, 25 },
	{ IB_PC_ERR_EXCESS_OVR_F, IB_PC_EXT_ERR_EXCESS_OVR_F, 10, 26 },
	{ IB_PC_VL15_DROPPED_F, IB_PC_EXT_VL15_DROPPED_F, 11, 27 },
	{ IB_PC_XMT_WAIT_F, IB_PC_EXT_XMT_WAIT_F, 16, 28 },
	{ IB_PC_QP1_DROP_F, IB_PC_EXT_QP1_DROP_F, 17, 29 },
	{ IB_PC_XMT_BYTES_F, IB_PC_EXT_XMT_BYTES_F, 12, 0 },
	{ IB_PC_RCV_BYTES_F, IB_PC_EXT_RCV_BYTES_F, 13, 1 },
	{ IB_PC_XMT_PKTS_F, IB_PC_EXT_XMT_PKTS_F, 14, 2 },
	{ IB_PC_RCV_PKTS_F, IB_PC_EXT_RCV_PKTS_F, 15, 3 },
};

#define NCTR (sizeof(ctrs) / sizeof(ctrs[0]))
#define CTR_QP1 13 /* QP1Dropped's index */

struct kmp_port {
	struct km_key k;
	uint8_t x; /* the x flag */
	uint32_t have; /* bit i: ctrs[i] listed */
	uint64_t value[NCTR];
	double rate[NCTR];
};

static int parse_line(char *rest, void *rec, int arg);

static struct {
	pthread_mutex_t lock;
	long long checked_ns;
	struct km_list l;
} kmp = { .lock = PTHREAD_MUTEX_INITIALIZER,
	  .l = { .elem = sizeof(struct kmp_port),
		 .max = KMP_MAX,
		 .parse = parse_line } };

void kmp_init(const char *state_dir)
{
	if (state_dir && *state_dir)
		snprintf(kmp.l.path, sizeof(kmp.l.path), "%s/pc", state_dir);
}

static int ctr_by_name(const char *name)
{
	unsigned i;

	for (i = 0; i < NCTR; i++)
		if (!strcmp(mad_field_name((enum MAD_FIELDS)ctrs[i].pc), name))
			return (int)i;
	return -1;
}

/* "[x] FIELD=VALUE[+RATE] ... [t0=SECONDS]" after LID and PORT */
static int parse_line(char *rest, void *rec, int arg)
{
	struct kmp_port *p = rec;
	char *tok, *save = NULL, *end;
	int i;

	(void)arg;
	for (tok = strtok_r(rest, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		char *eq = strchr(tok, '=');

		if (!strcmp(tok, "x")) {
			p->x = 1;
			continue;
		}
		if (!eq)
			return -1;
		*eq = 0;
		if (km_key_word(&p->k, tok, eq + 1))
			continue;
		i = ctr_by_name(tok);
		if (i < 0)
			return -1;
		p->have |= 1u << i;
		p->value[i] = strtoull(eq + 1, &end, 0);
		p->rate[i] = *end == '+' ? strtod(end + 1, NULL) : 0;
	}
	return 0;
}

/* Under kmp.lock: the file read again if it changed, at most every
 * KMP_CHECK_NS. */
static void check(void)
{
	struct timespec now;
	long long t;

	clock_gettime(CLOCK_MONOTONIC, &now);
	t = now.tv_sec * 1000000000ll + now.tv_nsec;
	if (kmp.checked_ns && t - kmp.checked_ns < KMP_CHECK_NS)
		return;
	kmp.checked_ns = t;
	km_list_reload(&kmp.l);
}

static const struct kmp_port *port_at(unsigned i)
{
	return km_list_rec(&kmp.l, i);
}

/* What the node at @lid has: 1 listed, 2 an x line, 4 QP1Dropped. */
static unsigned node_flags(uint16_t lid)
{
	unsigned i, fl = 0;

	for (i = km_list_lower_bound(&kmp.l, lid, 0);
	     i < kmp.l.n && port_at(i)->k.lid == lid; i++)
		fl |= 1 | (port_at(i)->x ? 2 : 0) |
		      (port_at(i)->have >> CTR_QP1 & 1 ? 4 : 0);
	return fl;
}

void kmp_pma_cpi(uint8_t *cpi, uint16_t lid)
{
	unsigned fl;

	pthread_mutex_lock(&kmp.lock);
	check();
	fl = node_flags(lid);
	if (fl) {
		/* CapabilityMask (16 bits): PortXmitWait counted (12), as
		 * on any current HCA and switch (ibsim says so too);
		 * QP1Dropped (15) where a port lists it, so that
		 * perfquery -R clears it */
		uint32_t m = mad_get_field(cpi, 0, IB_CPI_CAPMASK_F);

		m |= 1u << 12 | (fl & 4 ? 1u << 15 : 0);
		mad_set_field(cpi, 0, IB_CPI_CAPMASK_F, m);
	}
	if (fl & 2) /* IsAdditionalPortCountersExtendedSupported */
		mad_set_field(cpi, 0, IB_CPI_CAPMASK2_F,
			      mad_get_field(cpi, 0, IB_CPI_CAPMASK2_F) | 2);
	pthread_mutex_unlock(&kmp.lock);
}

/* Counter @i of @p now: its true value since its last clear. */
static uint64_t value_now(const struct kmp_port *p, unsigned i)
{
	return kmc_value(p->value[i], p->rate[i], &p->k.t0,
			 kmc_last(p->k.lid, p->k.port, KMC_PC, i));
}

void kmp_answer(uint8_t *pc, unsigned attr, uint16_t lid)
{
	const struct kmp_port *p;
	unsigned port, i, x;

	if (attr != ATTR_PC && attr != ATTR_PCE)
		return;
	/* PortSelect: the same byte in both */
	port = mad_get_field(pc, 0, IB_PC_PORT_SELECT_F);
	pthread_mutex_lock(&kmp.lock);
	check();
	p = port == ALL_PORTS ? NULL : km_list_find(&kmp.l, lid, port);
	x = p ? node_flags(lid) & 2 : 0;
	for (i = 0; p && i < NCTR; i++) {
		uint64_t v;

		if (!(p->have >> i & 1))
			continue;
		v = value_now(p, i);
		if (attr == ATTR_PC) {
			/* saturated at the field's width, as hardware's */
			uint32_t max = km_field_max(ctrs[i].pc);

			mad_set_field(pc, 0, (enum MAD_FIELDS)ctrs[i].pc,
				      v > max ? max : (uint32_t)v);
		} else if (ctrs[i].pce_bit < 16 || x) {
			mad_set_field64(pc, 0, (enum MAD_FIELDS)ctrs[i].pce, v);
		}
	}
	pthread_mutex_unlock(&kmp.lock);
}

/* Under kmp.lock: clear the counters of @p that @sel (the attribute's
 * selects, CounterSelect2 from bit 16) names. */
static void clear_port(const struct kmp_port *p, unsigned attr, uint64_t sel,
		       unsigned x)
{
	uint64_t mask = 0;
	unsigned i, bit;

	for (i = 0; i < NCTR; i++) {
		bit = attr == ATTR_PC ? ctrs[i].pc_bit : ctrs[i].pce_bit;
		/* CounterSelect2 of PortCountersExtended is reserved
		 * where the PMA does not have the error counters there */
		if (attr == ATTR_PCE && bit >= 16 && !x)
			continue;
		if (p->have >> i & 1 && sel >> bit & 1)
			mask |= 1ull << i;
	}
	kmc_clear(p->k.lid, p->k.port, KMC_PC, mask);
}

void kmp_set(const uint8_t *pc, unsigned attr, uint16_t dlid)
{
	uint8_t *b = (uint8_t *)pc; /* libibmad's getters take no const */
	unsigned port, i, x;
	uint64_t sel;

	if (attr == ATTR_PC)
		sel = mad_get_field(b, 0, IB_PC_COUNTER_SELECT_F) |
		      (uint64_t)mad_get_field(b, 0, IB_PC_COUNTER_SELECT2_F)
			      << 16;
	else if (attr == ATTR_PCE)
		sel = mad_get_field(b, 0, IB_PC_EXT_COUNTER_SELECT_F) |
		      (uint64_t)mad_get_field(b, 0, IB_PC_EXT_COUNTER_SELECT2_F)
			      << 16;
	else
		return;
	port = mad_get_field(b, 0, IB_PC_PORT_SELECT_F);
	pthread_mutex_lock(&kmp.lock);
	check();
	x = node_flags(dlid) & 2;
	for (i = km_list_lower_bound(&kmp.l, dlid, 0);
	     i < kmp.l.n && port_at(i)->k.lid == dlid; i++)
		if (port == ALL_PORTS || port_at(i)->k.port == port)
			clear_port(port_at(i), attr, sel, x);
	pthread_mutex_unlock(&kmp.lock);
}
