// SPDX-License-Identifier: BSD-2-Clause
/* The model's FEC ports: see km_fec.h. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <infiniband/mad.h>

#include "km_fec.h"

#define KMF_MAX 256 /* listed ports */
#define KMF_CHECK_NS 100000000ll /* the file looked at this often */
#define SMP_DATA 64
#define PMA_DATA 64
#define ATTR_CPI 0x0001
#define ATTR_PESC 0x001f
#define ATTR_PIE 0x0033

struct kmf_port {
	uint16_t lid;
	uint8_t port;
	uint8_t mode; /* FECModeActive: 1 Fire Code, 2 RS-FEC, 4 RS-FEC2 */
	int nset;
	struct {
		int field; /* enum MAD_FIELDS */
		uint32_t value;
	} set[64];
};

static struct {
	pthread_mutex_t lock;
	char path[600];
	struct timespec mtime;
	off_t size;
	long long checked_ns;
	struct kmf_port *v;
	unsigned n;
	int others; /* unlisted ports answer too (IBW_KM_PESC) */
} kmf = { .lock = PTHREAD_MUTEX_INITIALIZER };

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void kmf_init(const char *state_dir)
{
	const char *s = getenv("IBW_KM_PESC");

	if (state_dir && *state_dir)
		snprintf(kmf.path, sizeof(kmf.path), "%s/fec", state_dir);
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

static int parse_line(char *line, struct kmf_port *p)
{
	char mode[8], *tok, *save = NULL;
	unsigned lid, port;
	int used;

	memset(p, 0, sizeof(*p));
	if (sscanf(line, "%u %u %7s %n", &lid, &port, mode, &used) != 3 ||
	    !lid || lid >= 0xc000 || port > 254)
		return -1;
	p->lid = (uint16_t)lid;
	p->port = (uint8_t)port;
	if (!strcmp(mode, "fc"))
		p->mode = 1;
	else if (!strcmp(mode, "rs"))
		p->mode = 2;
	else if (!strcmp(mode, "rs2"))
		p->mode = 4;
	else
		return -1;
	for (tok = strtok_r(line + used, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		char *eq = strchr(tok, '=');
		int f;

		if (!eq || p->nset == 64)
			return -1;
		*eq = 0;
		f = field_by_name(tok, p->mode != 1);
		if (f < 0)
			return -1;
		p->set[p->nset].field = f;
		p->set[p->nset].value = (uint32_t)strtoul(eq + 1, NULL, 0);
		p->nset++;
	}
	return 0;
}

/* Under kmf.lock: the file read again if it changed. */
static void check(void)
{
	long long now = now_ns();
	struct kmf_port *v;
	struct stat st;
	char line[4096];
	unsigned n = 0;
	FILE *f;

	if (!kmf.path[0] ||
	    (kmf.checked_ns && now - kmf.checked_ns < KMF_CHECK_NS))
		return;
	kmf.checked_ns = now;
	if (stat(kmf.path, &st) < 0) {
		free(kmf.v);
		kmf.v = NULL;
		kmf.n = 0;
		return;
	}
	if (kmf.v && st.st_mtim.tv_sec == kmf.mtime.tv_sec &&
	    st.st_mtim.tv_nsec == kmf.mtime.tv_nsec && st.st_size == kmf.size)
		return;
	f = fopen(kmf.path, "re");
	if (!f)
		return;
	v = calloc(KMF_MAX, sizeof(*v));
	if (!v) {
		fclose(f);
		return;
	}
	while (n < KMF_MAX && fgets(line, sizeof(line), f))
		if (line[0] != '#' && parse_line(line, &v[n]) == 0)
			n++;
	fclose(f);
	free(kmf.v);
	kmf.v = v;
	kmf.n = n;
	kmf.mtime = st.st_mtim;
	kmf.size = st.st_size;
}

static const struct kmf_port *find(uint16_t lid, unsigned port)
{
	unsigned i;

	for (i = 0; i < kmf.n; i++)
		if (kmf.v[i].lid == lid && kmf.v[i].port == port)
			return &kmf.v[i];
	return NULL;
}

static int any_lid(uint16_t lid, int rs_only)
{
	unsigned i;

	for (i = 0; i < kmf.n; i++)
		if (kmf.v[i].lid == lid && (!rs_only || kmf.v[i].mode != 1))
			return 1;
	return 0;
}

void kmf_portinfo(uint8_t *pi, uint32_t attr_mod)
{
	uint16_t lid = (uint16_t)mad_get_field(pi, 0, IB_PORT_LID_F);
	unsigned port = attr_mod & 0xff;

	(void)port;
	pthread_mutex_lock(&kmf.lock);
	check();
	/* a CA port's own LID; a switch's port 0 carries the LID and the
	 * capabilities of every port */
	if (lid && any_lid(lid, 0)) {
		mad_set_field(pi, 0, IB_PORT_CAPMASK_F,
			      mad_get_field(pi, 0, IB_PORT_CAPMASK_F) |
				      (1u << 14) | (1u << 15));
		mad_set_field(pi, 0, IB_PORT_CAPMASK2_F,
			      mad_get_field(pi, 0, IB_PORT_CAPMASK2_F) |
				      0x0002);
	}
	pthread_mutex_unlock(&kmf.lock);
}

void kmf_pma_cpi(uint8_t *cpi, uint16_t lid)
{
	pthread_mutex_lock(&kmf.lock);
	check();
	if (any_lid(lid, 1)) {
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

	if (len < 256 || (mad[1] != 0x01 && mad[1] != 0x04) || mad[3] != 0x01)
		return 0;
	attr = (unsigned)mad[16] << 8 | mad[17];
	if (!((mad[1] == 0x04 && attr == ATTR_PESC) ||
	      (mad[1] == 0x01 && attr == ATTR_PIE)))
		return 0;
	pthread_mutex_lock(&kmf.lock);
	check();
	/*
	 * ibsim's PortInfo says IsExtendedSpeedsSupported for every port,
	 * and a port of a real HCA or switch that says so serves its
	 * PortExtendedSpeedsCounters: an unlisted port answers them all
	 * zero (FC-FEC form), and its PortInfoExtended "no FEC active",
	 * unless IBW_KM_PESC=0 (then they are dropped, as ibsim does).
	 */
	if (attr == ATTR_PIE) {
		port = mad_get_field(mad, 0, IB_MAD_ATTRMOD_F) & 0xff;
		p = find(dlid, port);
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
		p = find(dlid, port);
		if (p || kmf.others) {
			memset(mad + PMA_DATA, 0, len - PMA_DATA);
			mad_set_field(mad + PMA_DATA, 0, IB_PESC_PORT_SELECT_F,
				      port);
			for (i = 0; p && i < (unsigned)p->nset; i++)
				mad_set_field(mad + PMA_DATA, 0,
					      (enum MAD_FIELDS)p->set[i].field,
					      p->set[i].value);
			done = 1;
		}
	}
	pthread_mutex_unlock(&kmf.lock);
	if (done) {
		mad[3] = 0x81; /* GetResp */
		mad[4] = mad[5] = 0; /* status */
	}
	return done;
}
