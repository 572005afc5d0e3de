/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The web UI's files (http/ui/, and d3 from Debian's libjs-d3), built
 * into the daemon by cmake/embed.cmake: nothing to install beside it and
 * nothing fetched from elsewhere (docs/map.md).
 */
#ifndef IBW_UI_H
#define IBW_UI_H

#include <stddef.h>

struct ibw_ui_asset {
	const char *path; /* the URL path: "/", "/ui/map.js" */
	const char *ctype;
	const unsigned char *data;
	size_t len;
};

/* The table, ended by a NULL path. */
extern const struct ibw_ui_asset ibw_ui_assets[];

/* The asset at @path, or NULL. */
const struct ibw_ui_asset *ibw_ui_asset(const char *path);

/* The Content-Security-Policy of the UI's pages: scripts, styles and
 * requests from this agent only; no inline script. */
#define IBW_UI_CSP                                                    \
	"default-src 'none'; script-src 'self'; style-src 'self'; "   \
	"img-src 'self' data:; connect-src 'self'; base-uri 'none'; " \
	"form-action 'self'; frame-ancestors 'none'"

#endif
