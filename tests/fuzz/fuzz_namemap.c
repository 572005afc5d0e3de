// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target: the infiniband-diags node-name-map parser (a file an
 * operator edits: any bytes, any length).
 */
#include <stdint.h>
#include <stdlib.h>

#include "namemap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct ibw_namemap *m = ibw_namemap_parse((const char *)data, size,
						  "fuzz", err, sizeof(err));

	if (m) {
		(void)ibw_namemap_get(m, 0x0002c90300000001ull);
		(void)ibw_namemap_count(m);
		ibw_namemap_free(m);
	}
	return 0;
}
