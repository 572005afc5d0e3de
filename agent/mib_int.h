/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What agent/mib.c (indexing, requests, registration, notifications) and
 * agent/mib_tables.c (values and each table's rows) share.
 */
#ifndef IBW_MIB_INT_H
#define IBW_MIB_INT_H

#include "mib.h"

#define OBJECTS IBW_MIB_ROOT, 1
#define NOTIFS IBW_MIB_ROOT, 0

/* Node table: ibwNodeIndex is column 12, not readable */
enum {
	NODE_COL_GUID = 1,
	NODE_COL_TYPE,
	NODE_COL_NAME,
	NODE_COL_DESC,
	NODE_COL_LID,
	NODE_COL_NPORTS,
	NODE_COL_SYSGUID,
	NODE_COL_VENDOR,
	NODE_COL_DEVICE,
	NODE_COL_REVISION,
	NODE_COL_GONE,
};

/* Port table: the columns before the counters; the counters' columns
 * from PORT_COL_CTR0 on are core/ctr_desc.c's (mib_col); after them
 * ibwPortIndex (not readable) and the node's name. */
enum {
	PORT_COL_NODE_GUID = 1,
	PORT_COL_NUM,
	PORT_COL_GUID,
	PORT_COL_LID,
	PORT_COL_LMC,
	PORT_COL_STATE,
	PORT_COL_PHYS,
	PORT_COL_WIDTH,
	PORT_COL_SPEED,
	PORT_COL_RATE,
	PORT_COL_RGUID,
	PORT_COL_RPORT,
	PORT_COL_RNAME,
	PORT_COL_GONE,
	PORT_COL_STALE,
	PORT_COL_UPDATED,
	PORT_COL_DISCONT,
	PORT_COL_RESETS,
	PORT_COL_EXT,
	PORT_COL_CTR0,
};
/* the columns after the first 32 counters' (a 33rd counter's is 54) */
#define PORT_COL_INDEX 52
#define PORT_COL_NODE_NAME 53
_Static_assert(IBW_CTR_MAX == 32,
	       "a new counter needs its column in mib/IBWATCH-MIB.txt, in "
	       "core/ctr_desc.c and in mib_tables.c's port table range");

/* Endport table (index: ibwPortIndex) */
enum {
	EP_COL_NODE_GUID = 1,
	EP_COL_PORT_NUM,
	EP_COL_PORT_GUID,
	EP_COL_LID,
	EP_COL_NAME,
	EP_COL_TARGET,
	EP_COL_STATE,
	EP_COL_STATE_SINCE,
	EP_COL_REASON,
	EP_COL_METHOD,
	EP_COL_SENT,
	EP_COL_RECEIVED,
	EP_COL_WINDOW_PROBES,
	EP_COL_WINDOW_LOSS,
	EP_COL_RTT_LAST,
	EP_COL_RTT_MIN,
	EP_COL_RTT_AVG,
	EP_COL_RTT_MAX,
	EP_COL_RTT_MDEV,
	EP_COL_LAST_REPLY,
	EP_COL_RESPONDER_HOST,
};

struct val {
	u_char type;
	long l;
	struct counter64 c64;
	const void *str;
	size_t len;
	u_char buf[16];
	char text[256]; /* a string made for this value (v_strcpy) */
};

struct hrow {
	unsigned path; /* from 1 */
	unsigned dir; /* 1 forward, 2 reverse */
	unsigned hop; /* from 1 */
	const struct ibw_hop *h;
};

/* ibwLinkTable's columns (index: the lower end's ibwPortIndex) */
enum {
	LINK_COL_NODE_GUID = 1,
	LINK_COL_PORT,
	LINK_COL_NAME,
	LINK_COL_LID,
	LINK_COL_REMOTE_GUID,
	LINK_COL_REMOTE_PORT,
	LINK_COL_REMOTE_NAME,
	LINK_COL_REMOTE_LID,
	LINK_COL_HEALTH,
	LINK_COL_REASONS,
	LINK_COL_WIDTH_ACTIVE,
	LINK_COL_WIDTH_BEST,
	LINK_COL_SPEED_ACTIVE,
	LINK_COL_SPEED_BEST,
	LINK_COL_BER,
	LINK_COL_XMIT_WAIT,
	LINK_COL_RAW_BER,
	LINK_COL_EFFECTIVE_BER,
	LINK_COL_BAD_LANE,
	LINK_COL_REMOTE_INDEX,
};

/* ibwPortLookupTable: (GUID string, port) to ibwPortIndex */
#define LOOKUP_COL_INDEX 3
#define GUID_STR_LEN 18 /* "0x" and 16 hex digits */

struct ibw_mib;
struct mib_rows;
struct mib_hw;

/* A row of a table indexed by a row index: @p the node view, port view,
 * endport view or link; @peer a link's other end's port index. */
struct irow {
	uint32_t idx;
	uint32_t peer;
	const void *p;
};

/* A row of ibwPortLookupTable */
struct lrow {
	uint64_t guid;
	uint32_t port;
	uint32_t idx;
};

struct table {
	const char *name;
	oid arc; /* under ibwatchObjects */
	int scalars; /* the agent group: instance .0, no entry arc */
	unsigned first_col, max_col;
	unsigned nidx; /* index sub-identifiers, fixed per table */
	unsigned (*nrows)(struct ibw_mib *m);
	void (*index)(struct ibw_mib *m, unsigned row, oid *out);
	/* 0: the object exists, @v set; -1: no such instance */
	int (*get)(struct ibw_mib *m, unsigned row, unsigned col,
		   struct val *v);
	unsigned hidden_col; /* the index column inside the range, or 0 */
};

struct ibw_mib {
	ibw_mib_snapshot_fn snapshot;
	void *snapshot_arg;
	const struct ibw_local_port *lp;
	const struct ibw_localport_query *lq;
	const struct ibw_mib_stats *stats;
	struct ibw_snapshot *snap;
	struct mib_rows *rows; /* the row indexes, kept across restarts */
	/* Each table's rows in index order: nodes, ports, endports with a
	 * port (resolved), the link view's cables by their lower end. */
	struct irow *nodes, *ports, *eps, *links;
	unsigned nnodes, nports, neps, nlinks;
	struct lrow *lookups; /* by (GUID, port) */
	unsigned nlookups;
	struct hrow *hops;
	unsigned nhops;
	struct mib_hw *hw; /* the hardware tables' rows (mib_hw.c) */
};

/* The readable groups under ibwatchObjects, in OID order. */
extern const struct table mib_tables[];
extern const unsigned mib_ntables;

/* Values (mib_tables.c) */
/* @guid as IbwGuidString ("0x" and 16 lower-case hex digits) into the
 * 19 bytes at @buf, NUL-terminated; and as an index of
 * ibwPortLookupTable, its 18 characters' codes (no length: the size is
 * fixed) into @out. */
void ibw_mib_guid_str(uint64_t guid, char *buf);
size_t ibw_mib_guid_index(uint64_t guid, oid *out);
void mib_v_int(struct val *v, long l);
void mib_v_gauge(struct val *v, uint64_t u);
void mib_v_unsigned(struct val *v, uint64_t u);
void mib_v_counter32(struct val *v, uint32_t u);
void mib_v_c64(struct val *v, uint64_t u);
void mib_v_str(struct val *v, const char *s);
void mib_v_strcpy(struct val *v, const char *s);
/* A GUID as IbwGuidString: "0x" and 16 lower-case hex digits */
void mib_v_guid(struct val *v, uint64_t g);
void mib_v_bool(struct val *v, int b);
void mib_v_time(struct val *v, uint64_t us);
long mib_link_state(unsigned s);
long mib_phys_state(unsigned s);
long mib_width_enum(unsigned w);
long mib_speed_enum(unsigned speed, unsigned ext);
long mib_liveness(enum ibw_endport_state s);
long mib_health_enum(unsigned h);
const char *mib_name_of(struct ibw_mib *m, uint64_t guid);

/* The agent scalars' column @col, as a GET of ibwAgent.@col.0 reads it. */
int mib_agent_get(struct ibw_mib *m, unsigned row, unsigned col, struct val *v);
/* ibwRoutesPairs .. ibwRoutesTablesStale of @s's census. */
void mib_route_scalar(const struct ibw_snapshot *s, unsigned col,
		      struct val *v);

#endif
