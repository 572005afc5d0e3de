/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A port's counters as JSON (json_counters.c): the `counters` member of
 * /api/v1/ports and a node's ports, as a jansson tree and the same
 * written element by element.
 */
#ifndef IBW_JSON_COUNTERS_H
#define IBW_JSON_COUNTERS_H

#include <jansson.h>

#include "counters.h"
#include "jw.h"

json_t *ibw_json_counters(const struct ibw_port_ctrs *pc);
void ibw_json_write_counters(struct ibw_jw *w, const struct ibw_port_ctrs *pc);

#endif
