/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading a request's query string: an argument by name, a number within
 * bounds, a GUID as 0x and up to 16 hex digits. Shared by the handlers
 * of routes.c and probes.c.
 */
#ifndef IBW_QUERY_H
#define IBW_QUERY_H

#include <stdint.h>

struct ibw_hreq;

/* The query argument @name of @r, NULL if absent (libmicrohttpd's,
 * valid as long as the request). */
const char *ibw_hreq_arg(struct ibw_hreq *r, const char *name);
/* @s as a decimal number up to @max into *@out: 0, or -1 (empty, a
 * sign, anything else, too big). */
int ibw_parse_num(const char *s, unsigned long max, unsigned long *out);
/* @s as 0x and 1 to 16 hex digits into *@g: 0, or -1. */
int ibw_parse_guid(const char *s, uint64_t *g);

#endif
