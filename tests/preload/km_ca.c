// SPDX-License-Identifier: BSD-2-Clause
/*
 * What a real port and a real host answer where ibsim answers otherwise
 * or not at all, for the kernel and fabric model (km_int.h): PortInfo,
 * NodeDescription, FEC and counter answers, PortSamplesControl, classes
 * a CA's MAD layer does not serve; and the agent registrations the
 * processes of one node share.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "km_int.h"
#include "km_desc.h"
#include "km_fec.h"
#include "km_pc.h"
#include "km_hw.h"

/* ---- answers ibsim gets wrong or drops ---- */

#define ATTR_PORTINFO 0x0015
#define ATTR_NODEDESC 0x10
#define SMP_DATA 64 /* LID-routed and directed-route SMPs alike */
/* PortInfo byte offsets (IBA 14.2.5.6: LocalPortNum is byte 28) */
#define PI_WIDTH_SUPPORTED 30
#define PI_SPEED_SUPPORTED_STATE 32 /* supported: high nibble */
#define PI_SPEED_ACTIVE_ENABLED 35 /* enabled: low nibble */

/*
 * ibsim says every port supports 1x to 12x and SDR to QDR but enables
 * 4x (1x where the net file says w=1) and SDR, so "the best both ends
 * support" finds every simulated link narrow and slow. A real port
 * supports what its hardware does: 1x and 4x, at the speeds it is
 * enabled for. Rewriting PortInfo answers so makes a w=1 link the one
 * narrow link (docs/testing.md, "Simulator vs real host").
 */
void km_real_portinfo(struct msg *m)
{
	uint8_t *mad = m->buf + HDR;
	uint8_t *pi = mad + SMP_DATA;
	unsigned attr, en;

	if (!km.real_portinfo || m->len < HDR + SMP_DATA + 64)
		return;
	if ((mad[1] != CLS_SMI && mad[1] != CLS_DR) ||
	    mad[3] != (METHOD_RESP | 0x01))
		return;
	attr = (unsigned)mad[16] << 8 | mad[17];
	if (attr != ATTR_PORTINFO)
		return;
	if (pi[PI_WIDTH_SUPPORTED])
		pi[PI_WIDTH_SUPPORTED] = 0x03; /* 1x, 4x */
	en = pi[PI_SPEED_ACTIVE_ENABLED] & 0x0f;
	if (en && en != 0x0f) /* 15: "set to supported", not a set */
		pi[PI_SPEED_SUPPORTED_STATE] =
			(uint8_t)(en << 4 |
				  (pi[PI_SPEED_SUPPORTED_STATE] & 0x0f));
}

/* A NodeDescription answer: as root on that host set it (km_desc.h). */
void km_real_nodedesc(struct msg *m)
{
	uint8_t *mad = m->buf + HDR;

	if (m->len < HDR + SMP_DATA + 64 ||
	    (mad[1] != CLS_SMI && mad[1] != CLS_DR) ||
	    mad[3] != (METHOD_RESP | 0x01) || mad[16] != 0 ||
	    mad[17] != ATTR_NODEDESC)
		return;
	kmd_answer(mad + SMP_DATA);
}

#define ATTR_PORT_SAMPLES_CONTROL 0x0010
#define PMA_DATA 64 /* PerfMgt: 24-byte header, 40 reserved */

/* An answer from ibsim through the FEC ports of km_fec.c and the driven
 * counters of km_pc.c: a PortInfo's capability bits, a PMA
 * ClassPortInfo's IsRSFECCountersSupported, CapabilityMask2, PortCounters
 * and PortCountersExtended values. */
void km_real_fec(struct msg *m)
{
	uint8_t *mad = m->buf + HDR;
	const ib_user_mad_t *u = (const void *)m->buf;
	unsigned attr;

	if (m->len < HDR + SMP_DATA + 64 || mad[3] != (METHOD_RESP | 0x01))
		return;
	attr = (unsigned)mad[16] << 8 | mad[17];
	if ((mad[1] == CLS_SMI || mad[1] == CLS_DR) && attr == ATTR_PORTINFO)
		kmf_portinfo(mad + SMP_DATA,
			     (uint32_t)mad[20] << 24 | (uint32_t)mad[21] << 16 |
				     (uint32_t)mad[22] << 8 | mad[23]);
	else if (mad[1] == CLS_PMA && attr == 0x0001) {
		kmf_pma_cpi(mad + PMA_DATA, ntohs(u->addr.lid));
		kmp_pma_cpi(mad + PMA_DATA, ntohs(u->addr.lid));
	} else if (mad[1] == CLS_PMA)
		kmp_answer(mad + PMA_DATA, attr, ntohs(u->addr.lid));
}

/* A PerfSet the program sends: the modelled counters it clears are
 * cleared now, for every process (km_clear.h). Sent on to ibsim too,
 * which clears its own. */
void km_pma_set_sent(const uint8_t *buf)
{
	const uint8_t *mad = buf + HDR;

	if (mad[1] != CLS_PMA || mad[3] != 0x02)
		return;
	kmp_set(mad + PMA_DATA, (unsigned)mad[16] << 8 | mad[17],
		km_req_dlid(buf));
	kmf_set(mad, km_req_dlid(buf));
}

/* A Get of a FEC port's PortExtendedSpeedsCounters or PortInfoExtended
 * that ibsim handed back: its answer (km_fec.c). 1 if it was. */
int km_fec_answer(struct msg *m, const struct req *r)
{
	ib_user_mad_t *u = (ib_user_mad_t *)(void *)m->buf;
	uint16_t dlid;

	if (!r)
		return 0;
	dlid = km_req_dlid(r->buf);
	if (!kmf_answer(m->buf + HDR, (unsigned)(m->len - HDR), dlid))
		return 0;
	u->status = 0;
	u->addr.lid = htons(dlid);
	return 1;
}

/*
 * A PerfMgt Get of PortSamplesControl that ibsim handed back: ibsim has
 * no handler for the attribute, which the IBA makes mandatory for every
 * PMA, so a real port answers it. Turned into that answer, as a PMA with
 * no sampling under way gives it: everything zero (Tick 0, OpCode 0,
 * SampleStatus done) but the PortSelect asked. 1 if it was.
 */
int km_real_psc(struct msg *m)
{
	uint8_t *mad = m->buf + HDR;
	ib_user_mad_t *u = (ib_user_mad_t *)(void *)m->buf;
	unsigned attr;
	uint8_t port_select;

	if (!km.real_psc || m->len < HDR + PMA_DATA + 4 || mad[1] != CLS_PMA ||
	    mad[3] != 0x01)
		return 0;
	attr = (unsigned)mad[16] << 8 | mad[17];
	if (attr != ATTR_PORT_SAMPLES_CONTROL)
		return 0;
	port_select = mad[PMA_DATA + 1];
	memset(mad + PMA_DATA, 0, m->len - HDR - PMA_DATA);
	mad[PMA_DATA + 1] = port_select;
	mad[3] = METHOD_RESP | 0x01;
	mad[4] = mad[5] = 0; /* MAD status */
	u->status = 0;
	return 1;
}

/* ---- classes a CA's MAD layer does not serve ---- */

struct regline {
	long pid;
	unsigned agent, cls, ver, oui;
	uint8_t mask[16];
};

static int parse_regline(const char *s, struct regline *l)
{
	char hex[40];
	int i;

	if (sscanf(s, "%ld %u %x %u %x %32s", &l->pid, &l->agent, &l->cls,
		   &l->ver, &l->oui, hex) != 6 ||
	    strlen(hex) != 32)
		return -1;
	for (i = 0; i < 16; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		l->mask[i] = (uint8_t)v;
	}
	return 0;
}

static int alive(long pid)
{
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno != ESRCH);
}

/*
 * A Linux host's MAD layer answers a Get or Set of a class no agent on
 * that port registered with GetResp status 0x000C, method/attribute not
 * supported, at once (drivers/infiniband/core/mad.c,
 * generate_unmatched_resp); ibsim drops it, as if nobody were there. The
 * kernel itself serves the SMA, the PMA (the HCA's) and CM; any other
 * class (vendor classes: ibping's echo) only a process that registered
 * it. The test bed writes ca-lids into the state dir ("LID NODE" per
 * line: the CA ports the fabric reaches, tests/lib/simfabric.sh); the
 * registry of each node's agents (agents.NODE, below) says which
 * classes a process there registered methods of.
 */

/* Does an alive process on node @host have methods of class @cls
 * registered (the registry of agents.HOST)? */
static int classes_served(const char *host, unsigned cls)
{
	char path[700], line[256];
	struct regline l;
	int served = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/agents.%s", km.state_dir, host);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!served && fgets(line, sizeof(line), f))
		if (parse_regline(line, &l) == 0 && l.cls == cls &&
		    alive(l.pid))
			served = 1;
	fclose(f);
	return served;
}

static int calid_cmp(const void *a, const void *b)
{
	const struct calid *x = a, *y = b;

	return (int)x->lid - (int)y->lid;
}

static void calid_check(uint64_t now)
{
	struct calid *v = NULL, *nv;
	size_t n = 0, cap = 0;
	struct stat st;
	char line[256], name[128];
	unsigned lid;
	FILE *f;

	if (!km.calid_path[0] ||
	    (km.calid_checked && now - km.calid_checked < CALID_CHECK_US))
		return;
	km.calid_checked = now;
	if (stat(km.calid_path, &st) < 0) {
		free(km.calid);
		km.calid = NULL;
		km.ncalid = 0;
		return;
	}
	if (km.calid && st.st_mtim.tv_sec == km.calid_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == km.calid_mtime.tv_nsec &&
	    st.st_size == km.calid_size)
		return;
	f = fopen(km.calid_path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %127s", &lid, name) != 2 || !lid ||
		    lid >= 0xc000)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[n].lid = (uint16_t)lid;
		km_host_name(v[n].host, sizeof(v[n].host), name);
		n++;
	}
	fclose(f);
	qsort(v, n, sizeof(*v), calid_cmp);
	free(km.calid);
	km.calid = v;
	km.ncalid = n;
	km.calid_mtime = st.st_mtim;
	km.calid_size = st.st_size;
}

/*
 * A request of ours ibsim handed back undelivered: when it went to a CA
 * port the fabric reaches and is of a class nobody on that node serves,
 * turn it into the host's answer, GetResp status 0x000C. 1 if it was.
 */
int km_unsupported_class(struct msg *m, const struct req *r, uint64_t now)
{
	uint8_t *mad = m->buf + HDR;
	ib_user_mad_t *u = (ib_user_mad_t *)(void *)m->buf;
	struct calid key, *ca;
	uint8_t cls = mad[1];

	if (!km.real_unsupported || !r || cls == CLS_SMI || cls == CLS_DR ||
	    cls == CLS_PMA || cls == 0x07 || (mad[3] != 0x01 && mad[3] != 0x02))
		return 0;
	calid_check(now);
	/* Handed back, it carries our own LID: where it went is in the
	 * request as we sent it. */
	key.lid = km_req_dlid(r->buf);
	ca = km.ncalid ? bsearch(&key, km.calid, km.ncalid, sizeof(key),
				 calid_cmp)
		       : NULL;
	if (!ca || classes_served(ca->host, cls))
		return 0;
	mad[3] = METHOD_RESP | 0x01;
	mad[4] = 0x00; /* MAD status 0x000C */
	mad[5] = 0x0c;
	u->status = 0;
	u->addr.lid = htons(key.lid);
	return 1;
}

/*
 * The attributes ibsim never answers: PortSamplesControl,
 * PortExtendedSpeedsCounters and the congestion counters of the PMA,
 * PortInfoExtended of the SMA. ibsim drops them, or hands them to the
 * process flagged as the node's SM, which ignores them or, for a class
 * it did not register, dies of them in umad2sim (opensm).
 */
int km_never_answered(const uint8_t *mad)
{
	unsigned attr = (unsigned)mad[16] << 8 | mad[17];

	if (mad[3] != 0x01 && mad[3] != 0x02)
		return 0;
	if (mad[1] == CLS_PMA)
		return attr == ATTR_PORT_SAMPLES_CONTROL || attr == 0x001f ||
		       (attr >= 0x0030 && attr <= 0x0035);
	return mad[1] == CLS_SMI && attr == 0x0033;
}

/* Is @lid a CA port the fabric reaches (ca-lids)? */
int km_ca_reached(uint16_t lid, uint64_t now)
{
	struct calid key = { .lid = lid };

	calid_check(now);
	return km.ncalid &&
	       bsearch(&key, km.calid, km.ncalid, sizeof(key), calid_cmp);
}

/*
 * A try of @r that ibsim would not answer, to a CA port the fabric
 * reaches, is not sent: it comes back at once as ibsim hands back what it
 * drops (status 110), and classify() makes of it what it makes of those,
 * the model's answer or nothing. The same for every CA, the SM's node
 * included, whose opensm never sees it. 0 if it was so; -1: send it.
 */
int km_local_answer(struct req *r, uint64_t now)
{
	ib_user_mad_t *u;
	struct msg *m;
	uint16_t dlid = km_req_dlid(r->buf);

	if (r->len < HDR + MAD_HDR)
		return -1;
	/* an NVIDIA device's vendor MADs, switch or CA (km_hw.h), or what
	 * ibsim never answers to a CA */
	if (!kmh_claims(r->buf + HDR, dlid) &&
	    (!km_never_answered(r->buf + HDR) || !km_ca_reached(dlid, now)))
		return -1;
	if (!(m = km_msg_get()))
		return -1;
	memcpy(m->buf, r->buf, r->len);
	m->len = r->len;
	u = (ib_user_mad_t *)(void *)m->buf;
	u->status = KM_ETIMEDOUT;
	u->addr.lid = htons(dlid);
	/* the sending agent in TID bits 32..47, as umad2sim sends it */
	m->buf[HDR + 10] = (uint8_t)(r->agent >> 8);
	m->buf[HDR + 11] = (uint8_t)r->agent;
	m->next = NULL;
	if (r->kf->stail)
		r->kf->stail->next = m;
	else
		r->kf->shead = m;
	r->kf->stail = m;
	return 0;
}

/* ---- agent registrations shared by the processes of one node ---- */

static int is_vendor_oui_class(unsigned cls)
{
	return cls >= 0x30 && cls <= 0x4f;
}

static unsigned oui_of(const uint8_t *o)
{
	return (unsigned)o[0] << 16 | (unsigned)o[1] << 8 | o[2];
}

/* mad.c's method_in_use: same class, version (and OUI for the vendor
 * classes with one), overlapping methods. */
static int conflicts(unsigned cls, unsigned ver, unsigned oui,
		     const uint8_t *mask, unsigned cls2, unsigned ver2,
		     unsigned oui2, const uint8_t *mask2)
{
	int i;

	if (cls != cls2 || ver != ver2)
		return 0;
	if (is_vendor_oui_class(cls) && oui != oui2)
		return 0;
	for (i = 0; i < 16; i++)
		if (mask[i] & mask2[i])
			return 1;
	return 0;
}

int km_mask_empty(const uint8_t *mask)
{
	int i;

	for (i = 0; i < 16; i++)
		if (mask[i])
			return 0;
	return 1;
}

/* The registry file, locked: its text (NUL-terminated) in *text. */
static int reg_open(char **text)
{
	int fd;
	struct stat st;
	ssize_t n;

	*text = NULL;
	fd = n_open(km.reg_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX) < 0 || fstat(fd, &st) < 0) {
		n_close(fd);
		return -1;
	}
	*text = malloc((size_t)st.st_size + 1);
	if (!*text) {
		n_close(fd);
		return -1;
	}
	n = pread(fd, *text, (size_t)st.st_size, 0);
	(*text)[n > 0 ? n : 0] = '\0';
	return fd;
}

/* Rewrite the file without the lines of dead processes and without
 * this process's lines for the agents flagged in drop[]. */
static void reg_rewrite(int fd, const char *text, const int *drop)
{
	char *out = malloc(strlen(text) + 1), *o = out;
	const char *s = text;

	if (!out)
		return;
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s + 1) : strlen(s);
		struct regline l;
		int keep = 1;

		if (parse_regline(s, &l) < 0 || !alive(l.pid))
			keep = 0;
		else if (l.pid == (long)getpid() && l.agent < NAGENT &&
			 drop[l.agent])
			keep = 0;
		if (keep) {
			memcpy(o, s, len);
			o += len;
		}
		s += len;
	}
	if (ftruncate(fd, 0) == 0 &&
	    pwrite(fd, out, (size_t)(o - out), 0) < 0) {
		/* the registry is advisory; a lost line only loses a
		 * conflict check */
	}
	free(out);
}

void km_reg_drop(const int *drop)
{
	char *text;
	int fd;

	if (!km.reg_path[0])
		return;
	fd = reg_open(&text);
	if (fd < 0)
		return;
	reg_rewrite(fd, text, drop);
	free(text);
	n_close(fd);
}

static int conflict_mem(const struct ib_user_mad_reg_req *q)
{
	const uint8_t *mask = (const uint8_t *)q->method_mask;
	int i, a;

	for (i = 0; i < MAXFD; i++) {
		if (!km.fds[i].used || km.fds[i].dead)
			continue;
		for (a = 0; a < NAGENT; a++) {
			struct agent *ag = &km.fds[i].ag[a];

			if (ag->used &&
			    conflicts(q->mgmt_class, q->mgmt_class_version,
				      oui_of(q->oui), mask, ag->cls, ag->ver,
				      oui_of(ag->oui), ag->mask))
				return 1;
		}
	}
	return 0;
}

static int conflict_file(const char *text, const struct ib_user_mad_reg_req *q)
{
	const uint8_t *mask = (const uint8_t *)q->method_mask;
	const char *s = text;

	while (*s) {
		struct regline l;
		const char *e = strchr(s, '\n');

		if (parse_regline(s, &l) == 0 && l.pid != (long)getpid() &&
		    alive(l.pid) &&
		    conflicts(q->mgmt_class, q->mgmt_class_version,
			      oui_of(q->oui), mask, l.cls, l.ver, l.oui,
			      l.mask))
			return 1;
		if (!e)
			break;
		s = e + 1;
	}
	return 0;
}

int km_do_register(struct kfd *kf, int fd, unsigned long request,
		   struct ib_user_mad_reg_req *q)
{
	const uint8_t *mask = (const uint8_t *)q->method_mask;
	int rfd = -1, rc, i;
	char *text = NULL;
	struct agent *ag;

	if (!km_mask_empty(mask)) {
		if (conflict_mem(q)) {
			km.refused++;
			errno = EINVAL;
			return -1;
		}
		if (km.reg_path[0]) {
			/* Check and add under the file lock, so that two
			 * processes cannot both get the methods. */
			rfd = reg_open(&text);
			if (rfd >= 0 && conflict_file(text, q)) {
				free(text);
				n_close(rfd);
				km.refused++;
				errno = EINVAL;
				return -1;
			}
		}
	}
	rc = n_ioctl(fd, request, q);
	if (rc == 0 && (ag = km_agent_of(kf, q->id))) {
		ag->used = 1;
		ag->cls = q->mgmt_class;
		ag->ver = q->mgmt_class_version;
		memcpy(ag->oui, q->oui, 3);
		memcpy(ag->mask, mask, 16);
		if (rfd >= 0) {
			char line[128], *o = line;
			struct stat st;

			o += snprintf(line, sizeof(line), "%d %u %x %u %x ",
				      (int)getpid(), q->id, q->mgmt_class,
				      q->mgmt_class_version, oui_of(q->oui));
			for (i = 0; i < 16; i++)
				o += snprintf(o, 3, "%02x", mask[i]);
			*o++ = '\n';
			if (fstat(rfd, &st) == 0 &&
			    pwrite(rfd, line, (size_t)(o - line), st.st_size) <
				    0) {
				/* advisory, as above */
			}
		}
	}
	if (rfd >= 0) {
		free(text);
		n_close(rfd);
	}
	return rc;
}

/* The fd's agents go: from the registry file too. */
void km_drop_agents(struct kfd *kf)
{
	int drop[NAGENT] = { 0 }, a, any = 0;

	for (a = 0; a < NAGENT; a++)
		if (kf->ag[a].used) {
			if (!km_mask_empty(kf->ag[a].mask))
				drop[a] = any = 1;
			kf->ag[a].used = 0;
		}
	if (any)
		km_reg_drop(drop);
}
