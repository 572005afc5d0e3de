/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which local umad device is ours, and whether it can be opened again:
 * a port chosen by its GUID (--port-guid), found again by that GUID
 * after an HCA reset (it may come back under another name), and whether
 * the user the daemon drops to may open the device node.
 */
#ifndef IBW_LOCALDEV_H
#define IBW_LOCALDEV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "umad.h"

/* The CA and port among @cas whose port GUID is @port_guid: 0, or
 * -ENODEV when none has it. */
int ibw_localdev_pick(const struct ibw_local_ca *cas, unsigned n,
		      uint64_t port_guid, char *ca, size_t calen, int *port);

/* The same over the host's CAs as they are now. */
int ibw_localdev_find(uint64_t port_guid, char *ca, size_t calen, int *port);

/* Does a file of @st's owner, group and mode give @uid (primary group
 * @gid, supplementary @groups) read and write access? 1 or 0; root is
 * not special here (the question is about users who are not). */
int ibw_mode_allows_rw(const struct stat *st, uid_t uid, gid_t gid,
		       const gid_t *groups, int ngroups);

/*
 * Can @user open the umad device of @ca port @port (its node in
 * /dev/infiniband, as it is now)? 1 yes; 0 no, with the reason in @err;
 * -1 when there is no device node to judge by (no such node: the
 * simulator), with a note in @err.
 */
int ibw_localdev_user_can_open(const char *ca, int port, const char *user,
			       char *err, size_t errlen);

#endif
