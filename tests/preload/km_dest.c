// SPDX-License-Identifier: BSD-2-Clause
/*
 * Destinations in the kernel and fabric model (km_int.h): their service
 * queues (the latency model), dead LIDs, and SMAs an M_Key protects.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "km_int.h"
#include "km_silent.h"

/* ---- per-destination service queues (latency model) ---- */

static struct dest *dest_get(uint64_t key)
{
	uint32_t i;

	if (!km.dt || km.ndest * 2 > km.dtmask) {
		uint32_t nmask = km.dt ? km.dtmask * 2 + 1 : 1023, j;
		struct dest *nt = calloc(nmask + 1, sizeof(*nt));

		if (!nt)
			return NULL;
		for (j = 0; km.dt && j <= km.dtmask; j++) {
			uint32_t k;

			if (!km.dt[j].key)
				continue;
			k = (uint32_t)(km.dt[j].key * 0x9e3779b97f4a7c15ull >>
				       40) &
			    nmask;
			while (nt[k].key)
				k = (k + 1) & nmask;
			nt[k] = km.dt[j];
		}
		free(km.dt);
		km.dt = nt;
		km.dtmask = nmask;
	}
	i = (uint32_t)(key * 0x9e3779b97f4a7c15ull >> 40) & km.dtmask;
	while (km.dt[i].key && km.dt[i].key != key)
		i = (i + 1) & km.dtmask;
	if (!km.dt[i].key) {
		km.dt[i].key = key;
		km.ndest++;
	}
	return &km.dt[i];
}

static int group_of(uint8_t cls)
{
	switch (cls) {
	case CLS_SMI:
	case CLS_DR:
		return G_SMA;
	case CLS_PMA:
		return G_PMA;
	case CLS_SA:
		return G_SA;
	default:
		return G_VENDOR;
	}
}

uint16_t km_req_dlid(const uint8_t *buf)
{
	const ib_user_mad_t *u = (const void *)buf;

	return ntohs(u->addr.lid);
}

/* A request's destination: a directed-route SMP's initial path, a
 * LID-routed MAD's DLID. */
static uint64_t req_key(const struct req *r)
{
	const uint8_t *mad = r->buf + HDR;

	if (r->cls == CLS_DR) {
		unsigned hops = mad[7], i;
		uint64_t h = 1469598103934665603ull;

		for (i = 0; i <= hops && 128 + i < MAD_MAX; i++) {
			h ^= i ? mad[128 + i] : hops;
			h *= 1099511628211ull;
		}
		return h | 1ull << 63;
	}
	return (uint64_t)km_req_dlid(r->buf) + 1;
}

/* When the answer to this send would be back: the request travels one
 * way, waits for the destination to finish the MADs of this class group
 * it got earlier, is served, and the answer travels back. */
uint64_t km_model_ready(const struct req *r, uint64_t now)
{
	const uint8_t *mad = r->buf + HDR;
	uint64_t oneway, start;
	struct dest *d;
	int g = group_of(r->cls);

	if (r->cls == CLS_DR)
		oneway = km.hop_us * mad[7];
	else
		oneway = km.wire_us;
	d = dest_get(req_key(r));
	start = now + oneway;
	if (d) {
		if (d->busy[g] > start)
			start = d->busy[g];
		d->busy[g] = start + km.svc_us[g];
	}
	return start + km.svc_us[g] + oneway;
}

/* ---- dead destinations ---- */

static void dead_file_check(uint64_t now)
{
	struct stat st;
	FILE *f;
	char *buf = NULL;
	size_t cap = 0;

	if (!km.dead_file_path[0] ||
	    (km.dead_file_checked &&
	     now - km.dead_file_checked < DEADLID_CHECK_US))
		return;
	km.dead_file_checked = now;
	if (stat(km.dead_file_path, &st) < 0) {
		if (km.dead_file_present)
			memset(km.dead_file, 0, sizeof(km.dead_file));
		km.dead_file_present = 0;
		return;
	}
	if (km.dead_file_present &&
	    st.st_mtim.tv_sec == km.dead_file_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == km.dead_file_mtime.tv_nsec &&
	    st.st_size == km.dead_file_size)
		return;
	km.dead_file_present = 1;
	km.dead_file_mtime = st.st_mtim;
	km.dead_file_size = st.st_size;
	memset(km.dead_file, 0, sizeof(km.dead_file));
	f = fopen(km.dead_file_path, "re");
	if (!f)
		return;
	if (getdelim(&buf, &cap, '\0', f) > 0 &&
	    km_parse_lids(buf, km.dead_file) < 0)
		fprintf(stderr, "ibw_kmodel: bad LID list in %s\n",
			km.dead_file_path);
	free(buf);
	fclose(f);
}

/* LID-routed requests only: a directed-route SMP walks the path it
 * names, and the model does not know which port a path ends at. */
int km_dest_dead(const uint8_t *buf, uint8_t cls, uint64_t now)
{
	const uint8_t *mad = buf + HDR;
	uint16_t lid;

	if (cls == CLS_DR)
		return 0;
	lid = km_req_dlid(buf);
	/* a kind nobody answers (km_silent.h) */
	if (kms_silent(cls, (uint16_t)(mad[16] << 8 | mad[17]), lid))
		return 1;
	if (!km_bit_get(km.dead_cls, cls))
		return 0;
	dead_file_check(now);
	return (km.any_dead_env && km_bit_get(km.dead_env, lid)) ||
	       (km.dead_file_present && km_bit_get(km.dead_file, lid));
}

/* ---- protected SMAs ---- */

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* IBW_KM_MKEY_FILE: "NODE_GUID M_KEY" per line (numbers as strtoull
 * reads them, # comments), read again when it changes. */
static void mkey_file_check(uint64_t now)
{
	struct stat st;
	FILE *f;
	char line[256];

	if (km.mkey_checked && now - km.mkey_checked < MKEY_CHECK_US)
		return;
	km.mkey_checked = now;
	if (stat(km.mkey_path, &st) < 0) {
		km.nprot = 0;
		km.mkey_size = -1;
		return;
	}
	if (st.st_mtim.tv_sec == km.mkey_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == km.mkey_mtime.tv_nsec &&
	    st.st_size == km.mkey_size)
		return;
	km.mkey_mtime = st.st_mtim;
	km.mkey_size = st.st_size;
	km.nprot = 0;
	f = fopen(km.mkey_path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && km.nprot < MKEY_MAX) {
		char *p = line, *end;
		uint64_t g, k;

		p += strspn(p, " \t");
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		g = strtoull(p, &end, 0);
		k = strtoull(end, &end, 0);
		if (!g) {
			fprintf(stderr, "ibw_kmodel: bad line in %s\n",
				km.mkey_path);
			continue;
		}
		km.prot_guid[km.nprot] = g;
		km.prot_key[km.nprot++] = k;
	}
	fclose(f);
}

/*
 * Does the SMA that sent answer @ans to @r drop @r instead? Who is at a
 * destination (a directed route, a LID) the model learns from the
 * NodeInfo answers that come from it, so a node counts as protected
 * from its first NodeInfo on (every discovery asks that first). A
 * request whose M_Key is not the node's is dropped: a Get or a Set,
 * as by a port whose M_KeyProtectBits are 2 or 3.
 */
int km_mkey_refuses(const struct req *r, const uint8_t *ans, size_t len,
		    uint64_t now)
{
	struct dest *d;
	unsigned i;

	if (!km.mkey_path[0] || (r->cls != CLS_SMI && r->cls != CLS_DR))
		return 0;
	d = dest_get(req_key(r));
	if (!d)
		return 0;
	/* NodeInfo (0x0011): NodeGUID at byte 12 of the SMP's data (64) */
	if (len >= 64 + 20 && ans[16] == 0x00 && ans[17] == 0x11)
		d->node_guid = be64(ans + 64 + 12);
	mkey_file_check(now);
	for (i = 0; i < km.nprot; i++)
		if (km.prot_guid[i] == d->node_guid)
			return be64(r->buf + HDR + 24) != km.prot_key[i];
	return 0;
}
