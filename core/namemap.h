/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * infiniband-diags node-name-map files (/etc/rdma/ib-node-name-map):
 *
 *   # comment
 *   0x0002c90300a00001 "node0001"
 *
 * One GUID and one quoted name per line.
 */
#ifndef IBW_NAMEMAP_H
#define IBW_NAMEMAP_H

#include <stddef.h>
#include <stdint.h>

struct ibw_namemap;

/* Parse @path. On a bad line returns NULL with "file:line: what" in
 * @err; a missing file is an error too (the caller decides whether a
 * map is required). */
struct ibw_namemap *ibw_namemap_load(const char *path, char *err,
				     size_t errlen);
/* Parse a map held in memory; @name is used in messages. */
struct ibw_namemap *ibw_namemap_parse(const char *text, size_t len,
				      const char *name, char *err,
				      size_t errlen);
void ibw_namemap_free(struct ibw_namemap *m);
/* The name for @guid, or NULL. */
const char *ibw_namemap_get(const struct ibw_namemap *m, uint64_t guid);
/* The name for @guid, else @dflt (@m may be NULL: no map). */
const char *ibw_namemap_name(const struct ibw_namemap *m, uint64_t guid,
			     const char *dflt);
unsigned ibw_namemap_count(const struct ibw_namemap *m);

#endif
