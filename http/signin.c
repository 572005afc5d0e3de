// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "answer.h"
#include "loop.h"
#include "hreq.h"
#include "session.h"
#include "signin.h"

/*
 * No script and no style sheet: with --http-token-everywhere neither
 * could be loaded before signing in. The icon is inline (data:, which
 * the page's CSP allows) so that the browser asks for no /favicon.ico.
 * The ids are the map page's own form's (http/ui/index.html), which the
 * browser test fills in either page.
 */
static const char page_head[] =
	"<!DOCTYPE html>\n"
	"<html lang=\"en\"><head><meta charset=\"utf-8\">"
	"<meta name=\"viewport\" content=\"width=device-width, "
	"initial-scale=1\">"
	"<link rel=\"icon\" href=\"data:,\">"
	"<title>ibwatchd: sign in</title></head><body>\n"
	"<h1>ibwatchd</h1>\n"
	"<form id=\"signin\" method=\"post\" action=\"/signin\">\n"
	"<label>API token <input type=\"password\" id=\"signin-token\" "
	"name=\"token\" autocomplete=\"current-password\" required "
	"autofocus></label>\n"
	"<button type=\"submit\">Sign in</button>\n"
	"<span id=\"signin-status\" role=\"status\">";
static const char page_tail[] = "</span>\n</form>\n</body></html>\n";

void ibw_signin_page(struct ibw_hreq *r, unsigned code, const char *why)
{
	size_t n =
		sizeof(page_head) + sizeof(page_tail) + (why ? strlen(why) : 0);
	char *p = malloc(n);

	if (!p) {
		ibw_hreq_problem(r, 503, "out of memory");
		return;
	}
	/* @why is ours, never the client's: no markup to escape */
	r->len = (size_t)snprintf(p, n, "%s%s%s", page_head, why ? why : "",
				  page_tail);
	free(r->body);
	r->body = p;
	r->code = code;
	r->ctype = "text/html; charset=utf-8";
}

char *ibw_signin_form_token(const char *body, size_t len)
{
	const char *p = body, *end = body + len, *amp;
	char *v, *s;
	size_t n;

	while (p < end) {
		amp = memchr(p, '&', (size_t)(end - p));
		n = (size_t)((amp ? amp : end) - p);
		if (n >= 6 && !memcmp(p, "token=", 6)) {
			v = malloc(n - 5);
			if (!v)
				return NULL;
			memcpy(v, p + 6, n - 6);
			v[n - 6] = '\0';
			/* a form sends a space as '+'; a '+' as %2B */
			for (s = v; *s; s++)
				if (*s == '+')
					*s = ' ';
			MHD_http_unescape(v);
			return v;
		}
		p += n + 1;
	}
	return NULL;
}

int ibw_signin_same_origin(struct MHD_Connection *c)
{
	const char *site = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						       "Sec-Fetch-Site");
	const char *origin = MHD_lookup_connection_value(
		c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ORIGIN);
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_HOST);

	if (site && strcmp(site, "same-origin") && strcmp(site, "none"))
		return 0;
	if (!origin)
		return 1;
	/*
	 * The browser writes Origin's host and port as it wrote Host (the
	 * default port left out of both). The scheme is not compared: a
	 * proxy in front may end TLS, and another service on this host
	 * differs by its port, which is compared.
	 */
	if (!strncmp(origin, "https://", 8))
		origin += 8;
	else if (!strncmp(origin, "http://", 7))
		origin += 7;
	else
		return 0; /* "null": a sandboxed or opaque origin */
	return host && !strcmp(origin, host);
}

int ibw_signin_same_token(const char *token, const char *given)
{
	size_t n, i;
	unsigned diff = 0;

	if (!given)
		return 0;
	n = strlen(token);
	if (strlen(given) != n)
		return 0;
	for (i = 0; i < n; i++)
		diff |= (unsigned)(given[i] ^ token[i]);
	return diff == 0;
}

static const char *cookie_name(const struct ibw_signin *si)
{
	return si->tls ? IBW_SESSION_COOKIE_TLS : IBW_SESSION_COOKIE;
}

/*
 * The cookie counts only on requests from the agent's own pages:
 * SameSite=Strict still sends it along with the requests that the
 * pages of another service on this host name (the same site, whatever
 * its port) make the browser send.
 */
int ibw_signin_authorized(const struct ibw_signin *si, struct MHD_Connection *c)
{
	const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    "Authorization");

	if (!si->token)
		return 1;
	if (a && !strncmp(a, "Bearer ", 7))
		return ibw_signin_same_token(si->token, a + 7);
	return ibw_signin_same_origin(c) &&
	       ibw_session_valid(si->sessions,
				 MHD_lookup_connection_value(c, MHD_COOKIE_KIND,
							     cookie_name(si)),
				 ibw_now_us());
}

/* A Set-Cookie value for session @hex; "" (and Max-Age=0) ends it. */
static char *session_cookie(const struct ibw_signin *si, const char *hex)
{
	size_t n = strlen(hex) + 128;
	char *c = malloc(n);

	if (c)
		snprintf(c, n,
			 "%s=%s; Path=/; Max-Age=%u; HttpOnly; "
			 "SameSite=Strict%s",
			 cookie_name(si), hex, *hex ? IBW_SESSION_TTL_S : 0,
			 /* the browser sends it back over TLS only; and a
			  * __Host- cookie must be Secure */
			 si->tls ? "; Secure" : "");
	return c;
}

/*
 * The token comes in a form's body, never in the address, which stays
 * in the browser's history and in proxies' logs; the cookie carries a
 * session instead of the token.
 */
void ibw_signin_serve(const struct ibw_signin *si, struct ibw_hreq *r)
{
	const char *ct = MHD_lookup_connection_value(
		r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	char hex[IBW_SESSION_HEX + 1], *tok;
	int post = !strcmp(r->method, MHD_HTTP_METHOD_POST), ok, rc;

	if (!si->token) {
		ibw_signin_page(r, post ? 400 : 200,
				"No token is set: there is nothing to sign "
				"in to.");
		return;
	}
	if (!post) {
		ibw_signin_page(r, 200, NULL);
		return;
	}
	if (!ibw_signin_same_origin(r->conn)) {
		ibw_hreq_problem(r, 403, "a sign-in from another site's page");
		return;
	}
	if (!ct || strncasecmp(ct, "application/x-www-form-urlencoded", 33) ||
	    (ct[33] && ct[33] != ';' && ct[33] != ' ')) {
		ibw_hreq_problem(r, 415,
				 "the sign-in is a form: "
				 "application/x-www-form-urlencoded");
		return;
	}
	tok = r->upload ? ibw_signin_form_token(r->upload, r->uploaded) : NULL;
	ok = ibw_signin_same_token(si->token, tok);
	if (tok) {
		explicit_bzero(tok, strlen(tok));
		free(tok);
	}
	if (!ok) {
		ibw_signin_page(r, 401, "Wrong token.");
		return;
	}
	rc = ibw_session_open(si->sessions, ibw_now_us(), hex);
	if (rc < 0) {
		ibw_hreq_problem(r, 503, "no session: %s", strerror(-rc));
		return;
	}
	r->set_cookie = session_cookie(si, hex);
	explicit_bzero(hex, sizeof(hex));
	if (!r->set_cookie) {
		ibw_hreq_problem(r, 503, "out of memory");
		return;
	}
	ibw_hreq_problem(r, 303, "signed in: see /");
	r->location = "/";
}

/* The session ends here too, not only in the browser. */
void ibw_signout_serve(const struct ibw_signin *si, struct ibw_hreq *r)
{
	if (!ibw_signin_same_origin(r->conn)) {
		ibw_hreq_problem(r, 403, "a sign-out from another site's page");
		return;
	}
	if (si->sessions)
		ibw_session_close(si->sessions,
				  MHD_lookup_connection_value(r->conn,
							      MHD_COOKIE_KIND,
							      cookie_name(si)));
	r->set_cookie = session_cookie(si, "");
	ibw_hreq_problem(r, 303, "signed out: see /");
	r->location = "/";
}
