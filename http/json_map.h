/* SPDX-License-Identifier: BSD-2-Clause */
/* /api/v1/map: the fabric map (core/fmap.h) as JSON (internal to http/). */
#ifndef IBW_JSON_MAP_H
#define IBW_JSON_MAP_H

#include "fmap.h"
#include "json.h"

void ibw_json_write_map(struct ibw_jw *w, const struct ibw_snapshot *s,
			const struct ibw_fmap *m);

#endif
