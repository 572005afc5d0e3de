// SPDX-License-Identifier: BSD-2-Clause
#include <string.h>

#include "ui.h"

const struct ibw_ui_asset *ibw_ui_asset(const char *path)
{
	const struct ibw_ui_asset *a;

	for (a = ibw_ui_assets; a->path; a++)
		if (!strcmp(a->path, path))
			return a;
	return NULL;
}
