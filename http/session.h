/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The map page's sessions (docs/operations.md, "The web page's
 * session"). A session is 32 random bytes from getrandom(2), sent to the
 * browser as 64 hex digits in a cookie and kept here in memory: it
 * stands for the token without being derived from it, so whoever reads
 * the cookie (another service on the same host name: cookies are not
 * isolated by port, RFC 6265 8.5) learns nothing of the token and holds
 * nothing the API takes as a bearer token. A session ends @ttl_us after
 * sign-in, on sign-out, when the table is full and a newer one needs
 * its slot (the oldest goes), or when the daemon restarts.
 *
 * The table is read and written from libmicrohttpd's serving threads:
 * every call takes the table's own mutex. Times are the caller's
 * (ibw_now_us() in the agent), so that tests need no clock.
 */
#ifndef IBW_SESSION_H
#define IBW_SESSION_H

#include <stdint.h>

#define IBW_SESSION_BYTES 32
#define IBW_SESSION_HEX (2 * IBW_SESSION_BYTES)
/* Browsers signed in at once; the oldest goes when one more signs in. */
#define IBW_SESSION_MAX 64
/* A session's life: a working day, then the page asks again. */
#define IBW_SESSION_TTL_S (12 * 3600)

struct ibw_sessions;

/* A table of @max sessions that live @ttl_us each; NULL without memory. */
struct ibw_sessions *ibw_sessions_new(unsigned max, uint64_t ttl_us);
/* Forget (and wipe) every session. */
void ibw_sessions_free(struct ibw_sessions *ss);
/*
 * A new session from @now_us, its value written to @hex as
 * IBW_SESSION_HEX lower-case hex digits and a NUL. 0, or -errno when
 * no randomness could be had (then no session is made).
 */
int ibw_session_open(struct ibw_sessions *ss, uint64_t now_us,
		     char hex[IBW_SESSION_HEX + 1]);
/* 1 if @hex (any string, NULL too) is a session alive at @now_us. The
 * comparison takes the same time wherever the values differ. */
int ibw_session_valid(struct ibw_sessions *ss, const char *hex,
		      uint64_t now_us);
/* End the session @hex: 1 if there was one, 0 if not. */
int ibw_session_close(struct ibw_sessions *ss, const char *hex);

#endif
