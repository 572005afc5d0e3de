/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Subnet Administration queries on the engine: resolve a port GUID or a
 * node name to a LID, ask for a PathRecord, select endports by
 * capability. An answer of several MADs (RMPP) that arrives cut short
 * (as umad2sim always cuts them) is detected and reported as incomplete,
 * never taken as the whole table.
 */
#ifndef IBW_SA_H
#define IBW_SA_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "fabric.h"

#define IBW_SA_CAP_PORTINFO_CAPMASK_MATCH (1u << 13)

enum {
	IBW_SA_ATTR_CLASS_PORT_INFO = 0x01,
	IBW_SA_ATTR_NODE_RECORD = 0x11,
	IBW_SA_ATTR_PORTINFO_RECORD = 0x12,
	IBW_SA_ATTR_PATH_RECORD = 0x35,
};

struct ibw_sa_result {
	enum ibw_mad_result result;
	int status; /* MAD status, or errno */
	int complete; /* 0: RMPP said more segments follow; we lack them */
	size_t record_size; /* bytes (AttributeOffset * 8) */
	unsigned nrecords; /* whole records in @records */
	const uint8_t *records; /* valid during the callback */
	uint32_t payload_len; /* RMPP PayloadLength, if active */
};

typedef void (*ibw_sa_cb)(const struct ibw_sa_result *r, void *arg);

/* Parse an SA answer of @len bytes. Returns 0, or -EINVAL when it is too
 * short or malformed. Pure: the unit tests feed it crafted MADs. */
int ibw_sa_parse(const uint8_t *mad, size_t len, struct ibw_sa_result *r);

/* One SA request to @sm_lid. @tmpl (the record template) is copied. */
int ibw_sa_query(struct ibw_engine *e, uint16_t sm_lid, uint8_t method,
		 uint16_t attr, uint32_t attr_mod, uint64_t comp_mask,
		 const void *tmpl, size_t tmpl_len, ibw_sa_cb cb, void *arg);

/* A LID, or why not. */
struct ibw_sa_lid {
	enum ibw_mad_result result;
	int status;
	uint16_t lid; /* 0: not found */
};

typedef void (*ibw_sa_lid_cb)(const struct ibw_sa_lid *r, void *arg);

/* NodeRecord by port GUID / by NodeDescription (single record). */
int ibw_sa_lid_by_guid(struct ibw_engine *e, uint16_t sm_lid,
		       uint64_t port_guid, ibw_sa_lid_cb cb, void *arg);
int ibw_sa_lid_by_name(struct ibw_engine *e, uint16_t sm_lid,
		       const char *node_desc, ibw_sa_lid_cb cb, void *arg);
/* PathRecord from @sgid to @dgid (16 octets each, network order): its
 * DLID. */
int ibw_sa_path_dlid(struct ibw_engine *e, uint16_t sm_lid,
		     const uint8_t sgid[16], const uint8_t dgid[16],
		     ibw_sa_lid_cb cb, void *arg);

/* Endports whose PortInfo:CapabilityMask has every bit of @bits. */
struct ibw_sa_selection {
	enum { IBW_SEL_SA, IBW_SEL_DISCOVERY } source;
	int sa_supports_match; /* the SA advertises bit 13 */
	int sa_incomplete; /* the SA's table came cut: not used */
	unsigned n;
	uint16_t *lids; /* valid during the callback */
};

typedef void (*ibw_sa_select_cb)(const struct ibw_sa_selection *s, void *arg);

/*
 * Per seed 003: if the SA's ClassPortInfo has IsPortInfoCapMaskMatch-
 * Supported, one PortInfoRecord GetTable with AttributeModifier bit 31
 * and the CapabilityMask component selects the ports. If the SA does not
 * support it, fails, or its table comes cut, the ports of @f (a frozen
 * fabric the caller keeps alive until @cb) are filtered instead.
 */
int ibw_sa_select_by_capmask(struct ibw_engine *e, uint16_t sm_lid,
			     uint32_t bits, const struct ibw_fabric *f,
			     ibw_sa_select_cb cb, void *arg);

#endif
