/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The counter sweep's unit tests' fixture (ctr_fx.c): a one-CA fabric
 * (or a few) whose PerfMgt and SMA answers the test sets, on the
 * in-memory transport, and a rig that sweeps it. The tests are in
 * test_counters.c (the sweep, redirection, LIDs in flux, verification),
 * test_counters_state.c (the state file, the shared table) and
 * test_counters_pace.c (what a sweep asks of a PMA and how it paces).
 */
#ifndef IBW_CTR_FX_H
#define IBW_CTR_FX_H

#include <stdint.h>

#include "counters.h"
#include "events.h"
#include "links.h"
#include "transport_mem.h"

/* A test's state file: setup_path() names it /tmp/ibw-test-state.PID,
 * teardown_path() removes it. */
extern char path[64];
int setup_path(void **state);
int teardown_path(void **state);

/* A one-CA fabric, its counters answered by the test. */
struct fake {
	uint32_t capmask; /* PerfMgt ClassPortInfo; 0: 0x1200 */
	uint32_t capmask2; /* its CapabilityMask2 */
	uint64_t ext_sym; /* PortCountersExtended's SymbolErrorCounter */
	uint32_t sets; /* PerfSet(PortCounters) seen */
	uint32_t last_select;
	uint32_t sym;
	uint32_t xmit_data;
	uint64_t ext_xmit_pkts;
	int silent; /* answer nothing */
	/* the node GUID a NodeInfo at the CA's LID answers with; 0: 0x10,
	 * the CA itself (another: the LID moved to another node) */
	uint64_t lid_owner;
	/* the port a NodeInfo at the CA's LID says it came in by; 0: 1,
	 * the port read (another: the CA's ports traded LIDs) */
	unsigned owner_port;
	unsigned who; /* NodeInfo questions seen */
	/* PortVLXmitWaitCounters: the values answered, the questions
	 * seen, and a MAD status to answer with instead (0: none) */
	uint16_t vl[16];
	unsigned vl_asked;
	int vl_status;
	/* PortSamplesControl: the Tick answered, the questions seen, and
	 * a MAD status to answer with instead (0: none) */
	uint8_t tick;
	unsigned psc_asked;
	int psc_status;
	int psc_silent; /* drop PortSamplesControl, as ibsim does */
	/* NodeInfo questions by LID (up to 15), and a switch at LID 1 with
	 * this node GUID (0: none), whose every port answers alike */
	unsigned who_at[16];
	uint64_t switch_guid;
	/* if set: a NodeInfo names the node this fabric has at the LID */
	const struct ibw_fabric *fab;
	int smi_silent; /* no answer to SMPs (an M_Key we do not have) */
	/* PortInfoExtended: FECModeActive answered, questions seen, and
	 * whether it is dropped; PortExtendedSpeedsCounters asked */
	unsigned pie_mode, pie_asked, pesc_asked;
	int pie_silent;
	/* PerfMgt MADs to this LID (0: none) are dropped: how many, and
	 * the place of the first among all MADs served (seen) */
	uint16_t dead_lid;
	unsigned dead_asked, dead_first, seen;
};

extern uint16_t served_lid;

struct rig {
	struct ibw_loop *loop;
	struct ibw_transport *t;
	struct ibw_engine *e;
	struct ibw_events *ev;
	struct ibw_counters *c;
	struct ibw_fabric *f;
	int done;
};

/* The one CA, node 0x10, its port 1 active at @lid, as a discovery left
 * it, marked protected (it answered none of our SMPs) or not. */
struct ibw_fabric *one_ca(uint16_t lid, int is_protected);

void rig_init_cfg(struct rig *r, const struct ibw_counters_opts *co,
		  unsigned timeout_ms);

/* A try times out after 20 ms: tests of silent PMAs end quickly. */
void rig_init_opts(struct rig *r, const struct ibw_counters_opts *co);

void rig_init(struct rig *r);

/* --counter-check in-flux: readings checked only when they go backwards
 * or while the LIDs are in flux. */
void rig_init_in_flux(struct rig *r);

void rig_free(struct rig *r);

void swept(struct ibw_counters *c, void *arg);

uint64_t fab_guid(const struct ibw_fabric *f, uint16_t lid);

void serve(struct rig *r, struct fake *fk);

void sweep(struct rig *r, struct fake *fk);

unsigned count_events(struct rig *r, enum ibw_event_kind k);

/* Where a redirecting PMA sends us. */
struct redir {
	uint16_t lid;
	uint32_t qkey;
	uint16_t pkey;
	const char *gid; /* NULL: none */
};

extern const struct redir to9;

/* A PMA that answers ClassPortInfo with "redirect required" at its LID
 * (5) and serves at @rd's LID, QP 0x1234. Counts the MADs that went to
 * each place. */
void serve_redirect(struct rig *r, const struct redir *rd, unsigned *at_home,
		    unsigned *at_redirect);

void sweep_redirect(struct rig *r, const struct redir *rd, unsigned *home,
		    unsigned *away);

/* A switch at LID 1 with four ports, and the CA at LID 5. */
struct ibw_fabric *switch_and_ca(void);

int reopen_mem(struct ibw_transport **out, void *arg);

extern int back_calls;

void on_back(struct ibw_engine *e, void *arg);

struct lines {
	char *l[8];
	unsigned n;
};

int keep_line(const char *line, void *arg);

void free_lines(struct lines *ls);

/* A fabric of @n one-port CAs, node GUIDs from @first up. */
struct ibw_fabric *many_cas(uint64_t first, unsigned n);

void run_until_done(struct rig *r, struct fake *fk);

void assert_sorted(struct ibw_counters *c, unsigned want);

/* One CA as one_ca(5, 0) whose port advertises extended speeds and
 * PortInfoExtended: its FEC counters are read. */
struct ibw_fabric *one_fec_ca(void);

/* run_until_done(), and the most requests the engine held queued. */
unsigned run_queue_max(struct rig *r, struct fake *fk);

/* sweep() over @f */
void sweep_over(struct rig *r, const struct ibw_fabric *f, struct fake *fk);

/*
 * A dual-port CA: each active port read through its own LID, as a CA's
 * PMA answers for the port a MAD comes in by (PortSelect must name that
 * port), one NodeInfo per LID; the time each read took and the sweep's
 * busy time per kind; a port whose LID stops answering is stale, for a
 * timeout, while the other goes on.
 */
void serve_dual(struct rig *r, unsigned *per_lid, int lid6_silent);

/* test_counters_state.c */
void test_state_file_corruption(void **state);
void test_state_file_from_before(void **state);
void test_state_file_links(void **state);
void test_shared_table(void **state);

/* test_counters_pace.c */
void test_vl_xmit_wait(void **state);
void test_fec_mode_and_pie_timeout(void **state);
void test_samples_control_tick(void **state);
void test_progress_and_order(void **state);
void test_unspread_is_bounded(void **state);
void test_silent_pma_asked_early(void **state);
void test_dual_port_ca(void **state);
void test_samples_control_silent_fabric(void **state);

#endif
