// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>

#include "localdev.h"

int ibw_localdev_pick(const struct ibw_local_ca *cas, unsigned n,
		      uint64_t port_guid, char *ca, size_t calen, int *port)
{
	unsigned i, p;

	if (!port_guid)
		return -ENODEV;
	for (i = 0; i < n; i++)
		for (p = 0; p < cas[i].nports && p < 8; p++)
			if (cas[i].ports[p].port_guid == port_guid) {
				snprintf(ca, calen, "%s", cas[i].name);
				*port = cas[i].ports[p].portnum;
				return 0;
			}
	return -ENODEV;
}

int ibw_localdev_find(uint64_t port_guid, char *ca, size_t calen, int *port)
{
	static struct ibw_local_ca cas[16];
	int n = ibw_umad_local_cas(cas, 16);

	if (n < 0)
		return n;
	return ibw_localdev_pick(cas, (unsigned)n, port_guid, ca, calen, port);
}

int ibw_mode_allows_rw(const struct stat *st, uid_t uid, gid_t gid,
		       const gid_t *groups, int ngroups)
{
	mode_t m = st->st_mode;
	int i, in_group = st->st_gid == gid;

	if (st->st_uid == uid)
		return (m & (S_IRUSR | S_IWUSR)) == (S_IRUSR | S_IWUSR);
	for (i = 0; !in_group && i < ngroups; i++)
		in_group = groups[i] == st->st_gid;
	if (in_group)
		return (m & (S_IRGRP | S_IWGRP)) == (S_IRGRP | S_IWGRP);
	return (m & (S_IROTH | S_IWOTH)) == (S_IROTH | S_IWOTH);
}

int ibw_localdev_user_can_open(const char *ca, int port, const char *user,
			       char *err, size_t errlen)
{
	gid_t groups[256];
	int ngroups = 256;
	struct passwd *pw;
	struct stat st;
	char dev[64];

	if (ibw_umad_dev_path(ca, port, dev, sizeof(dev)) < 0) {
		snprintf(err, errlen, "no umad device for %s port %d in sysfs",
			 ca, port);
		return -1;
	}
	if (stat(dev, &st) < 0) {
		snprintf(err, errlen, "%s: %s (nothing to judge by)", dev,
			 strerror(errno));
		return -1;
	}
	pw = getpwnam(user);
	if (!pw) {
		snprintf(err, errlen, "no user '%s'", user);
		return 0;
	}
	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &ngroups) < 0)
		ngroups = 0;
	if (ibw_mode_allows_rw(&st, pw->pw_uid, pw->pw_gid, groups, ngroups))
		return 1;
	snprintf(err, errlen,
		 "%s (mode %04o, uid %u, gid %u) is not readable and "
		 "writable by %s",
		 dev, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
		 (unsigned)st.st_gid, user);
	return 0;
}
