/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hardware health (core/hw.h) as JSON: GET /api/v1/hardware and the
 * "hardware" member of GET /api/v1/nodes/{guid} (docs/api.md).
 */
#ifndef IBW_JSON_HW_H
#define IBW_JSON_HW_H

#include <jansson.h>

#include "snapshot.h"

/* What the last hardware sweep read of node @guid, its cable modules in
 * full: an object, or null when there was no sweep or the node is not
 * in it. */
json_t *ibw_json_hw_node(const struct ibw_snapshot *s, uint64_t guid);
/* The sweep's figures and every node of it, with its modules counted
 * (ports read, present, warning, alarm), not listed. */
json_t *ibw_json_hardware(const struct ibw_snapshot *s);

#endif
