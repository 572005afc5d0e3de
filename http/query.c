// SPDX-License-Identifier: BSD-2-Clause
/* A request's query (query.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "query.h"
#include "hreq.h"

const char *ibw_hreq_arg(struct ibw_hreq *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND,
					   name);
}

int ibw_parse_num(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

int ibw_parse_guid(const char *s, uint64_t *g)
{
	char *end;

	if (!s || strncmp(s, "0x", 2) || strlen(s) > 18 || strlen(s) < 3)
		return -1;
	errno = 0;
	*g = strtoull(s, &end, 16);
	return errno || *end ? -1 : 0;
}
