/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The service manager's notification protocol (sd_notify(3)), without
 * libsystemd: one datagram of newline-separated "NAME=value" lines to
 * the AF_UNIX socket that $NOTIFY_SOCKET names, a path or, when it
 * starts with '@', an abstract name. The protocol is systemd's stable
 * interface; its documentation invites exactly this.
 */
#ifndef IBW_SDNOTIFY_H
#define IBW_SDNOTIFY_H

/*
 * Send @state ("READY=1", "STOPPING=1", ...) to $NOTIFY_SOCKET. Returns
 * 1 when sent, 0 when $NOTIFY_SOCKET is not set (not started by a
 * service manager that listens), or a negative errno: -EAFNOSUPPORT for
 * an address other than a path or an abstract name (a "vsock:" one),
 * -ENAMETOOLONG, or what socket() and sendto() failed with.
 */
int ibw_sd_notify(const char *state);

#endif
