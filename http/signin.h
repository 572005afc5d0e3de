/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Who may use the API: the bearer token, or the map page's session
 * (session.h) in a cookie, got by POSTing the token from a form to
 * /signin (docs/operations.md, "The web page's session"). server.c
 * owns the token and the sessions and hands them over in a struct
 * ibw_signin, set before its first listener starts and only read after;
 * the sessions lock themselves. Every function here runs on
 * libmicrohttpd's serving threads.
 */
#ifndef IBW_SIGNIN_H
#define IBW_SIGNIN_H

#include <stddef.h>

struct MHD_Connection;
struct ibw_hreq;
struct ibw_sessions;

struct ibw_signin {
	const char *token; /* NULL: none set, nobody signs in */
	struct ibw_sessions *sessions; /* with a token */
	int tls; /* served over HTTPS */
};

/* The session cookie's name: under TLS with the __Host- prefix, which
 * a browser keeps only if Secure, Path=/ and without a Domain, so that
 * no other host of the domain can set or replace it (RFC 6265bis). */
#define IBW_SESSION_COOKIE "ibwatch_session"
#define IBW_SESSION_COOKIE_TLS "__Host-ibwatch_session"

/* Whether @given is @token; how long it takes says nothing of where
 * they differ. NULL @given: no. */
int ibw_signin_same_token(const char *token, const char *given);
/*
 * Whether @c carries the bearer token, or, from one of the agent's own
 * pages (ibw_signin_same_origin), the cookie of a live session.
 */
int ibw_signin_authorized(const struct ibw_signin *si,
			  struct MHD_Connection *c);
/* Answer @r, a request for /signin (GET: the form; POST: a session for
 * the right token, in a cookie, and 303 to /) or for /signout (POST:
 * the session ends, the cookie is cleared, 303 to /). */
void ibw_signin_serve(const struct ibw_signin *si, struct ibw_hreq *r);
void ibw_signout_serve(const struct ibw_signin *si, struct ibw_hreq *r);

/* Answer @r with the sign-in page (a form that POSTs the token to
 * /signin, no script) and status @code; @why, if any, says what went
 * wrong. */
void ibw_signin_page(struct ibw_hreq *r, unsigned code, const char *why);
/*
 * The "token" field of an application/x-www-form-urlencoded @body of
 * @len bytes, decoded, in a new string (the caller wipes and frees it);
 * NULL when there is none or no memory.
 */
char *ibw_signin_form_token(const char *body, size_t len);
/*
 * Whether a browser says that @c comes from a page of this agent (or
 * from the person: typed, a bookmark): Sec-Fetch-Site same-origin or
 * none, and an Origin, if sent, of this host and port (its Host). A client
 * that sends neither header (curl, or a browser over plain HTTP to a
 * host it does not trust, which omits Sec-Fetch-*) passes: the check
 * stops another site's page from making the browser act for it, and
 * only a browser does that.
 */
int ibw_signin_same_origin(struct MHD_Connection *c);

#endif
