// SPDX-License-Identifier: BSD-2-Clause
/*
 * The counter sweep on a fake fabric: totals, thresholds, stale ports,
 * resets, PMA redirection, and the state file. The arithmetic of the
 * totals alone is tested in test_ctrmath.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "counters.h"
#include "events.h"
#include "hash.h"
#include "links.h"
#include "transport_mem.h"

static void test_descriptor_lookup(void **state)
{
	assert_int_equal(ibw_ctr_lookup("SymbolErrorCounter"),
			 IBW_CTR_SYMBOL_ERRORS);
	assert_int_equal(ibw_ctr_lookup("symbol_errors"),
			 IBW_CTR_SYMBOL_ERRORS);
	assert_int_equal(ibw_ctr_lookup("nonsense"), -1);
	/* infiniband-diags' default thresholds */
	assert_int_equal(ibw_ctr_desc(IBW_CTR_SYMBOL_ERRORS)->threshold, 10);
	assert_int_equal(ibw_ctr_desc(IBW_CTR_XMIT_DISCARDS)->threshold, 100);
	assert_int_equal(ibw_ctr_desc(IBW_CTR_XMIT_DATA)->scale, 4);
}

static char path[64];

static int setup_path(void **state)
{
	snprintf(path, sizeof(path), "/tmp/ibw-test-state.%d", (int)getpid());
	return 0;
}

static int teardown_path(void **state)
{
	unlink(path);
	return 0;
}

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

/* where the last MAD served went */
static uint16_t served_lid;

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
static struct ibw_fabric *one_ca(uint16_t lid, int is_protected)
{
	struct ibw_fabric *f = ibw_fabric_new();
	struct ibw_fnode *n = ibw_fabric_add_node(f, 0x10, 2);

	n->ni.node_type = IBW_NODE_CA;
	n->ni.num_ports = 1;
	n->ports[1].have_pi = 1;
	n->ports[1].pi.state = 4;
	n->ports[1].pi.lid = lid;
	n->lid = lid;
	n->is_protected = (uint8_t)is_protected;
	ibw_fabric_freeze(f);
	return f;
}

static void rig_init_cfg(struct rig *r, const struct ibw_counters_opts *co,
			 unsigned timeout_ms)
{
	struct ibw_engine_config cfg = { .max_inflight = 64,
					 .max_per_dest = 8,
					 .timeout_ms = timeout_ms };

	memset(r, 0, sizeof(*r));
	r->loop = ibw_loop_new();
	r->t = ibw_mem_transport_new();
	r->e = ibw_engine_new(r->loop, r->t, &cfg);
	r->ev = ibw_events_new(64);
	r->c = ibw_counters_new(r->e, r->ev, co);
	r->f = one_ca(5, 0);
}

/* A try times out after 20 ms: tests of silent PMAs end quickly. */
static void rig_init_opts(struct rig *r, const struct ibw_counters_opts *co)
{
	rig_init_cfg(r, co, 20);
}

static void rig_init(struct rig *r)
{
	rig_init_opts(r, NULL);
}

/* --counter-check in-flux: readings checked only when they go backwards
 * or while the LIDs are in flux. */
static void rig_init_in_flux(struct rig *r)
{
	struct ibw_counters_opts co = { .check = IBW_CHECK_IN_FLUX,
					.retries = -1 };

	rig_init_opts(r, &co);
}

static void rig_free(struct rig *r)
{
	ibw_engine_free(r->e);
	ibw_counters_free(r->c);
	ibw_events_free(r->ev);
	ibw_fabric_unref(r->f);
	ibw_transport_close(r->t);
	ibw_loop_free(r->loop);
}

static void swept(struct ibw_counters *c, void *arg)
{
	((struct rig *)arg)->done = 1;
}

static uint64_t fab_guid(const struct ibw_fabric *f, uint16_t lid)
{
	const struct ibw_fnode *n = ibw_fabric_find_lid(f, lid, NULL);

	return n ? n->guid : 0;
}

static void serve(struct rig *r, struct fake *fk)
{
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;

	while (ibw_mem_next_sent(r->t, m, &to)) {
		unsigned attr = ibw_mad_get(m, IB_MAD_ATTRID_F);
		uint8_t *d = m + IB_PC_DATA_OFFS;

		fk->seen++;
		if (fk->dead_lid && to.lid == fk->dead_lid &&
		    m[1] == IBW_CLASS_PERF) {
			if (!fk->dead_asked++)
				fk->dead_first = fk->seen;
			continue;
		}
		if (fk->silent)
			continue;
		served_lid = to.lid;
		if (m[1] == IBW_CLASS_SMI && attr == IBW_ATTR_PORT_INFO_EXT) {
			uint8_t *pie = m + IB_SMP_DATA_OFFS;

			fk->pie_asked++;
			if (fk->pie_silent)
				continue;
			mad_set_field(pie, 0, IB_PORT_EXT_CAPMASK_F, 1);
			mad_set_field(pie, 0, IB_PORT_EXT_FEC_MODE_ACTIVE_F,
				      fk->pie_mode);
			ibw_mem_make_response(m, 0);
			ibw_mem_inject(r->t, m, IBW_MAD_SIZE, 0);
			continue;
		}
		if (m[1] == IBW_CLASS_SMI) {
			/* a reading went backwards: who is at this LID? */
			assert_int_equal(attr, IBW_ATTR_NODE_INFO);
			fk->who++;
			if (fk->smi_silent)
				continue;
			if (to.lid < 16)
				fk->who_at[to.lid]++;
			mad_set_field64(m + IB_SMP_DATA_OFFS, 0, IB_NODE_GUID_F,
					fk->lid_owner ? fk->lid_owner
					: fk->fab ? fab_guid(fk->fab, to.lid)
					: to.lid == 1 ? fk->switch_guid
						      : 0x10);
			mad_set_field(
				m + IB_SMP_DATA_OFFS, 0, IB_NODE_LOCAL_PORT_F,
				to.lid == 1 && fk->switch_guid && !fk->lid_owner
					? 0
				: fk->owner_port ? fk->owner_port
						 : 1);
			ibw_mem_make_response(m, 0);
			ibw_mem_inject(r->t, m, IBW_MAD_SIZE, 0);
			continue;
		}
		assert_int_equal(m[1], IBW_CLASS_PERF);
		if (m[3] == IBW_METHOD_SET) {
			fk->sets++;
			fk->last_select =
				ibw_mad_get(d, IB_PC_COUNTER_SELECT_F);
		} else if (attr == IBW_ATTR_CLASS_PORT_INFO) {
			mad_set_field(d, 0, IB_CPI_CAPMASK_F,
				      fk->capmask ? fk->capmask : 0x1200);
			mad_set_field(d, 0, IB_CPI_CAPMASK2_F, fk->capmask2);
		} else if (attr == IBW_ATTR_PORT_COUNTERS) {
			if (!fk->switch_guid)
				assert_int_equal(
					ibw_mad_get(d, IB_PC_PORT_SELECT_F), 1);
			mad_set_field(d, 0, IB_PC_ERR_SYM_F, fk->sym);
			mad_set_field(d, 0, IB_PC_XMT_BYTES_F, fk->xmit_data);
		} else if (attr == IBW_ATTR_PORT_COUNTERS_EXT) {
			mad_set_field64(d, 0, IB_PC_EXT_XMT_PKTS_F,
					fk->ext_xmit_pkts);
			mad_set_field64(d, 0, IB_PC_EXT_XMT_BYTES_F, 100);
			mad_set_field64(d, 0, IB_PC_EXT_ERR_SYM_F, fk->ext_sym);
		} else if (attr == IBW_ATTR_PORT_EXT_SPEEDS) {
			fk->pesc_asked++;
		} else if (attr == IBW_ATTR_PORT_SAMPLES_CONTROL) {
			fk->psc_asked++;
			if (fk->psc_silent)
				continue;
			mad_set_field(d, 0, IB_PSC_TICK_F, fk->tick);
			/* CounterWidth 32 bits: a field next to Tick */
			mad_set_field(d, 0, IB_PSC_COUNTER_WIDTH_F, 4);
			if (fk->psc_status) {
				ibw_mem_make_response(m, fk->psc_status);
				ibw_mem_inject(r->t, m, IBW_MAD_SIZE, 0);
				continue;
			}
		} else if (attr == IBW_ATTR_PORT_VL_XMIT_WAIT) {
			int k;

			fk->vl_asked++;
			if (!fk->switch_guid)
				assert_int_equal(
					ibw_mad_get(d, IB_PC_PORT_SELECT_F), 1);
			for (k = 0; k < 16; k++)
				mad_set_field(d, 0,
					      IB_PC_PORT_VL_XMIT_WAIT0_F + k,
					      fk->vl[k]);
			if (fk->vl_status) {
				ibw_mem_make_response(m, fk->vl_status);
				ibw_mem_inject(r->t, m, IBW_MAD_SIZE, 0);
				continue;
			}
		}
		ibw_mem_make_response(m, 0);
		ibw_mem_inject(r->t, m, IBW_MAD_SIZE, 0);
	}
}

static void sweep(struct rig *r, struct fake *fk)
{
	uint64_t end = ibw_now_us() + 2000000u;

	r->done = 0;
	assert_int_equal(ibw_counters_sweep(r->c, r->f, 0, swept, r), 0);
	while (!r->done && ibw_now_us() < end) {
		serve(r, fk);
		ibw_loop_run_once(r->loop, 5000);
	}
	assert_true(r->done);
}

static unsigned count_events(struct rig *r, enum ibw_event_kind k)
{
	struct ibw_event ev[64];
	unsigned n = ibw_events_since(r->ev, 0, ev, 64), i, c = 0;

	for (i = 0; i < n; i++)
		c += ev[i].kind == k;
	return c;
}

static void test_sweep_threshold_stale_and_state(void **state)
{
	struct rig r, r2;
	struct fake fk = { .sym = 5,
			   .xmit_data = 1000,
			   .ext_xmit_pkts = 18446744073709551606ull };
	const struct ibw_port_ctrs *p;

	rig_init(&r);
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_non_null(p);
	assert_true(p->have_ext);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 5);
	assert_true(p->v[IBW_CTR_XMIT_PKTS].total == 18446744073709551606ull);
	assert_true(p->v[IBW_CTR_XMIT_DATA].total == 400); /* ext words */
	assert_int_equal(count_events(&r, IBW_EVT_THRESHOLD_CROSSED), 0);

	/* Crossing SymbolErrorCounter's default threshold (10): one event,
	 * and not another while it stays above. */
	fk.sym = 1000;
	sweep(&r, &fk);
	fk.sym = 1003;
	sweep(&r, &fk);
	assert_int_equal(count_events(&r, IBW_EVT_THRESHOLD_CROSSED), 1);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 1003);

	/* Saturated 32-bit PortXmitData is flagged. */
	fk.xmit_data = 0xffffffffu;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_XMIT_DATA].saturated);

	/* No answer: stale, values kept, never zeroed. */
	fk.silent = 1;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->stale);
	assert_int_equal(p->unreachable, 1);
	assert_int_equal(ibw_counters_unreachable(r.c), 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 1003);

	/* The state file carries totals to a new instance. */
	assert_int_equal(ibw_counters_save(r.c, path, NULL), 0);
	rig_init(&r2);
	assert_int_equal(ibw_counters_load(r2.c, path, NULL, NULL), 0);
	p = ibw_counters_find(r2.c, 0x10, 1);
	assert_non_null(p);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 1003);
	assert_true(p->v[IBW_CTR_XMIT_PKTS].total == 18446744073709551606ull);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].over_threshold);
	/* ... and a reset while we were down is seen as one. */
	fk.silent = 0;
	fk.sym = 2;
	sweep(&r2, &fk);
	p = ibw_counters_find(r2.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 1005);
	assert_int_equal(p->v[IBW_CTR_SYMBOL_ERRORS].resets, 1);
	assert_int_equal(count_events(&r2, IBW_EVT_COUNTER_RESET), 1);
	/* back under the threshold: re-armed, no new crossing event */
	assert_int_equal(count_events(&r2, IBW_EVT_THRESHOLD_CROSSED), 0);
	rig_free(&r);
	rig_free(&r2);
}

/* Where a redirecting PMA sends us. */
struct redir {
	uint16_t lid;
	uint32_t qkey;
	uint16_t pkey;
	const char *gid; /* NULL: none */
};

/* the usual: LID 9, QP 0x1234 with the GSI Q_Key, default partition */
static const struct redir to9 = { 9, 0x80010000u, 0xffff, NULL };

/* A PMA that answers ClassPortInfo with "redirect required" at its LID
 * (5) and serves at @rd's LID, QP 0x1234. Counts the MADs that went to
 * each place. */
static void serve_redirect(struct rig *r, const struct redir *rd,
			   unsigned *at_home, unsigned *at_redirect)
{
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;

	while (ibw_mem_next_sent(r->t, m, &to)) {
		unsigned attr = ibw_mad_get(m, IB_MAD_ATTRID_F);
		uint8_t *d = m + IB_PC_DATA_OFFS;
		int status = 0;

		if (m[1] == IBW_CLASS_SMI) {
			/* the check of the readings: SMPs are not redirected */
			assert_int_equal(to.lid, 5);
			assert_int_equal(attr, IBW_ATTR_NODE_INFO);
			mad_set_field64(m + IB_SMP_DATA_OFFS, 0, IB_NODE_GUID_F,
					0x10);
			mad_set_field(m + IB_SMP_DATA_OFFS, 0,
				      IB_NODE_LOCAL_PORT_F, 1);
		} else if (to.lid == 5 && to.qpn == 1) {
			(*at_home)++;
			assert_int_equal(attr, IBW_ATTR_CLASS_PORT_INFO);
			mad_set_field(d, 0, IB_CPI_REDIRECT_LID_F, rd->lid);
			mad_set_field(d, 0, IB_CPI_REDIRECT_QP_F, 0x1234);
			mad_set_field(d, 0, IB_CPI_REDIRECT_QKEY_F, rd->qkey);
			mad_set_field(d, 0, IB_CPI_REDIRECT_PKEY_F, rd->pkey);
			if (rd->gid) {
				uint8_t g[16];

				assert_int_equal(
					inet_pton(AF_INET6, rd->gid, g), 1);
				mad_encode_field(d, IB_CPI_REDIRECT_GID_F, g);
			}
			status = IB_MAD_STS_REDIRECT;
		} else {
			assert_int_equal(to.lid, rd->lid);
			assert_int_equal(to.qpn, 0x1234);
			(*at_redirect)++;
			if (attr == IBW_ATTR_CLASS_PORT_INFO)
				mad_set_field(d, 0, IB_CPI_CAPMASK_F, 0x1200);
			else if (attr == IBW_ATTR_PORT_COUNTERS)
				mad_set_field(d, 0, IB_PC_ERR_SYM_F, 7);
		}
		ibw_mem_make_response(m, status);
		ibw_mem_inject(r->t, m, IBW_MAD_SIZE, 0);
	}
}

static void sweep_redirect(struct rig *r, const struct redir *rd,
			   unsigned *home, unsigned *away)
{
	uint64_t end = ibw_now_us() + 2000000u;

	r->done = 0;
	assert_int_equal(ibw_counters_sweep(r->c, r->f, 0, swept, r), 0);
	while (!r->done && ibw_now_us() < end) {
		serve_redirect(r, rd, home, away);
		ibw_loop_run_once(r->loop, 5000);
	}
	assert_true(r->done);
}

/* PMA redirection (ClassPortInfo status "redirect required") is followed
 * within the default partition: ClassPortInfo and the counters are read
 * where it points, and the node is reported as redirecting. */
static void test_pma_redirect_followed(void **state)
{
	struct rig r;
	struct ibw_pma_redirect rd;
	const struct ibw_port_ctrs *p;
	unsigned home = 0, away = 0;

	rig_init(&r);
	sweep_redirect(&r, &to9, &home, &away);
	assert_int_equal(home, 1);
	/* ClassPortInfo, PortSamplesControl, PortCounters, ext,
	 * PortVLXmitWaitCounters */
	assert_int_equal(away, 5);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_non_null(p);
	assert_false(p->stale);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 7);
	assert_int_equal(ibw_counters_redirects(r.c, &rd, 1), 1);
	assert_true(rd.guid == 0x10);
	assert_int_equal(rd.lid, 5);
	assert_int_equal(rd.redirect_lid, 9);
	assert_int_equal(rd.redirect_qp, 0x1234);
	assert_int_equal(rd.followed, 1);
	assert_int_equal(rd.refusal, IBW_REDIRECT_OK);
	/* the next sweep goes straight to where it was sent */
	home = away = 0;
	sweep_redirect(&r, &to9, &home, &away);
	assert_int_equal(home, 0);
	assert_int_equal(away, 3); /* PortCounters, ext, VL */
	rig_free(&r);
}

/* Outside the default partition it is reported, not followed, and the
 * port is unreachable rather than read at the wrong place. */
static void test_pma_redirect_other_partition(void **state)
{
	static const struct redir other = { 9, 0x80010000u, 0x8001, NULL };
	struct rig r;
	struct ibw_pma_redirect rd;
	unsigned home = 0, away = 0;

	rig_init(&r);
	sweep_redirect(&r, &other, &home, &away);
	assert_int_equal(home, 1);
	assert_int_equal(away, 0);
	assert_int_equal(ibw_counters_unreachable(r.c), 1);
	assert_int_equal(ibw_counters_redirects(r.c, &rd, 1), 1);
	assert_int_equal(rd.followed, 0);
	assert_int_equal(rd.refusal, IBW_REDIRECT_PARTITION);
	assert_int_equal(rd.redirect_pkey, 0x8001);
	rig_free(&r);
}

/*
 * The kernel sends every umad MAD with QP1's own Q_Key, whatever the
 * sender sets: a redirect to a QP with another Q_Key cannot be reached
 * and is reported so, not "followed" into timeouts. RedirectLID 0 means
 * RedirectGID alone: reported as a GID redirect, not taken for the same
 * LID. A GID beside a LID is reported and the LID followed.
 */
static void test_pma_redirect_qkey_and_gid(void **state)
{
	static const struct redir foreign = { 9, 0x5678, 0xffff, NULL };
	static const struct redir gid_only = { 0, 0x80010000u, 0xffff,
					       "fe80::2:c903:0:99" };
	static const struct redir gid_lid = { 9, 0x80010000u, 0xffff,
					      "fe80::2:c903:0:99" };
	struct ibw_pma_redirect rd;
	unsigned home = 0, away = 0;
	struct rig r;
	uint8_t g[16];

	assert_int_equal(inet_pton(AF_INET6, "fe80::2:c903:0:99", g), 1);
	rig_init(&r);
	sweep_redirect(&r, &foreign, &home, &away);
	assert_int_equal(home, 1);
	assert_int_equal(away, 0);
	assert_int_equal(ibw_counters_unreachable(r.c), 1);
	assert_int_equal(ibw_counters_redirects(r.c, &rd, 1), 1);
	assert_int_equal(rd.followed, 0);
	assert_int_equal(rd.refusal, IBW_REDIRECT_QKEY);
	assert_int_equal(rd.redirect_qkey, 0x5678);
	assert_string_equal(ibw_redirect_refusal_str(rd.refusal), "q_key");
	rig_free(&r);

	home = away = 0;
	rig_init(&r);
	sweep_redirect(&r, &gid_only, &home, &away);
	assert_int_equal(home, 1);
	assert_int_equal(away, 0);
	assert_int_equal(ibw_counters_unreachable(r.c), 1);
	assert_int_equal(ibw_counters_redirects(r.c, &rd, 1), 1);
	assert_int_equal(rd.followed, 0);
	assert_int_equal(rd.refusal, IBW_REDIRECT_GID);
	assert_int_equal(rd.redirect_lid, 0);
	assert_memory_equal(rd.redirect_gid, g, 16);
	assert_string_equal(ibw_redirect_refusal_str(rd.refusal), "gid");
	rig_free(&r);

	home = away = 0;
	rig_init(&r);
	sweep_redirect(&r, &gid_lid, &home, &away);
	assert_int_equal(home, 1);
	assert_int_equal(away, 5);
	assert_int_equal(ibw_counters_unreachable(r.c), 0);
	assert_int_equal(ibw_counters_redirects(r.c, &rd, 1), 1);
	assert_int_equal(rd.followed, 1);
	assert_memory_equal(rd.redirect_gid, g, 16);
	rig_free(&r);
}

/* A counter below its last reading is checked before it counts as a
 * reset: a LID the SM gave to another node (between its move and our
 * next discovery) answers with that node's counters, which must not land
 * in this port's totals. */
static void test_moved_lid_is_not_a_reset(void **state)
{
	struct rig r;
	struct fake fk = { .sym = 8, .xmit_data = 1000, .ext_xmit_pkts = 7 };
	const struct ibw_port_ctrs *p;

	rig_init_in_flux(&r);
	sweep(&r, &fk);
	/* Another node now at LID 5, its counter lower. */
	fk.sym = 3;
	fk.lid_owner = 0x77;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_int_equal(fk.who, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 8);
	assert_int_equal(p->v[IBW_CTR_SYMBOL_ERRORS].resets, 0);
	assert_true(p->stale);
	assert_int_equal(count_events(&r, IBW_EVT_COUNTER_RESET), 0);
	/* Another node at a LID is a sign of LIDs in flux. */
	assert_true(ibw_counters_verify_stats(r.c).lids_in_flux);
	assert_true(ibw_counters_verify_stats(r.c).lid_moved == 1);
	/* Our node again, counting on: no reset, the total goes on; read
	 * in flux, it is checked too. */
	fk.sym = 9;
	fk.lid_owner = 0;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_int_equal(fk.who, 2);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 9);
	assert_false(p->stale);
	/* A discovery finds the LIDs settled; the sweep after it ends the
	 * mode. */
	ibw_counters_lids_settled(r.c, ibw_counters_lid_signs(r.c));
	sweep(&r, &fk);
	assert_int_equal(fk.who, 3);
	assert_false(ibw_counters_verify_stats(r.c).lids_in_flux);
	/* A real reset, confirmed by the node itself, counts. */
	fk.sym = 2;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_int_equal(fk.who, 4);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 11);
	assert_int_equal(p->v[IBW_CTR_SYMBOL_ERRORS].resets, 1);
	assert_int_equal(count_events(&r, IBW_EVT_COUNTER_RESET), 1);
	rig_free(&r);
}

static void run_until_done(struct rig *r, struct fake *fk);

/*
 * LIDs in flux: every reading is checked, so a reading of another node
 * whose counters are higher is dropped too (outside the mode it lands in
 * the port's totals, and the node's own lower reading after it is taken
 * for a reset nobody made). Outside the mode a reading that did not go
 * backwards costs no NodeInfo.
 */
static void test_lids_in_flux_higher_reading(void **state)
{
	struct fake fk = { 0 };
	const struct ibw_port_ctrs *p;
	struct ibw_counters_progress pr;
	uint64_t warm;
	struct rig r;

	(void)state;
	/* Outside the mode: the window this mode closes. */
	fk.sym = 8;
	rig_init_in_flux(&r);
	sweep(&r, &fk);
	sweep(&r, &fk);
	warm = ibw_counters_last_sweep(r.c).mads;
	assert_int_equal(fk.who, 0);
	assert_false(ibw_counters_verify_stats(r.c).lids_in_flux);
	fk.sym = 50;
	fk.lid_owner = 0x77;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 0);
	assert_true(ibw_counters_last_sweep(r.c).mads == warm);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 50);
	rig_free(&r);

	/* In the mode. */
	memset(&fk, 0, sizeof(fk));
	fk.sym = 8;
	rig_init_in_flux(&r);
	sweep(&r, &fk);
	sweep(&r, &fk);
	assert_int_equal(fk.who, 0);
	ibw_counters_lids_moved(r.c, "a test");
	assert_true(ibw_counters_verify_stats(r.c).lids_in_flux);
	fk.sym = 50;
	fk.lid_owner = 0x77;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 1);
	assert_true(ibw_counters_last_sweep(r.c).mads == warm + 1);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 8);
	assert_true(p->stale);
	pr = ibw_counters_progress(r.c);
	assert_int_equal(pr.verified, 1);
	assert_int_equal(pr.lid_moved, 1);
	assert_int_equal(pr.unreachable, 1);
	assert_int_equal(pr.read, 0);
	/* The node itself again, lower than the other's: no reset. */
	fk.sym = 9;
	fk.lid_owner = 0;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 2);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 9);
	assert_int_equal(p->v[IBW_CTR_SYMBOL_ERRORS].resets, 0);
	assert_false(p->stale);
	assert_int_equal(count_events(&r, IBW_EVT_COUNTER_RESET), 0);
	pr = ibw_counters_progress(r.c);
	assert_int_equal(pr.verified, 1);
	assert_int_equal(pr.lid_moved, 0);
	assert_int_equal(pr.read, 1);
	assert_true(ibw_counters_verify_stats(r.c).nodeinfos == 2);
	assert_true(ibw_counters_verify_stats(r.c).verified == 2);
	assert_true(ibw_counters_verify_stats(r.c).lid_moved == 1);
	/* The CA itself, but by another of its ports (they traded LIDs):
	 * that port's counters, dropped too. */
	fk.sym = 70;
	fk.owner_port = 2;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 9);
	assert_true(p->stale);
	assert_true(ibw_counters_verify_stats(r.c).lid_moved == 2);
	rig_free(&r);
}

/* A switch at LID 1 with four ports, and the CA at LID 5. */
static struct ibw_fabric *switch_and_ca(void)
{
	struct ibw_fabric *f = ibw_fabric_new();
	struct ibw_fnode *n;

	n = ibw_fabric_add_node(f, 0x20, 5);
	n->ni.node_type = IBW_NODE_SWITCH;
	n->ni.num_ports = 4;
	n->lid = 1;
	n = ibw_fabric_add_node(f, 0x10, 2);
	n->ni.node_type = IBW_NODE_CA;
	n->ni.num_ports = 1;
	n->ports[1].have_pi = 1;
	n->ports[1].pi.state = 4;
	n->ports[1].pi.lid = 5;
	n->lid = 5;
	ibw_fabric_freeze(f);
	return f;
}

/* In the mode, one NodeInfo per LID and sweep: a switch's ports share
 * one, sent once all their readings are in. */
static void test_lids_in_flux_one_nodeinfo_per_lid(void **state)
{
	struct fake fk = { 0 };
	const struct ibw_port_ctrs *p;
	struct ibw_counters_progress pr;
	struct rig r;
	unsigned k;

	(void)state;
	rig_init_in_flux(&r);
	ibw_fabric_unref(r.f);
	r.f = switch_and_ca();
	fk.switch_guid = 0x20;
	fk.sym = 4;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 0);
	ibw_counters_lids_moved(r.c, "a test");
	fk.sym = 6;
	sweep(&r, &fk);
	assert_int_equal(fk.who_at[1], 1);
	assert_int_equal(fk.who_at[5], 1);
	assert_int_equal(fk.who, 2);
	pr = ibw_counters_progress(r.c);
	assert_int_equal(pr.verified, 5);
	assert_int_equal(pr.read, 5);
	for (k = 1; k <= 4; k++) {
		p = ibw_counters_find(r.c, 0x20, (uint8_t)k);
		assert_non_null(p);
		assert_false(p->stale);
		assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 6);
	}
	/* Both LIDs another node's now: every reading dropped, still one
	 * question each. */
	fk.lid_owner = 0x77;
	fk.sym = 40;
	sweep(&r, &fk);
	assert_int_equal(fk.who_at[1], 2);
	assert_int_equal(fk.who_at[5], 2);
	pr = ibw_counters_progress(r.c);
	assert_int_equal(pr.verified, 5);
	assert_int_equal(pr.lid_moved, 5);
	assert_int_equal(pr.read, 0);
	for (k = 1; k <= 4; k++) {
		p = ibw_counters_find(r.c, 0x20, (uint8_t)k);
		assert_true(p->stale);
		assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 6);
	}
	rig_free(&r);
}

/*
 * --counter-check always (the default): every reading is checked, one
 * NodeInfo per node and sweep, with no sign of LIDs in flux. A LID that
 * reaches another node before anything told us (the SM moved it, or
 * with an LMC the old LID of a port that moved now reaches the port
 * whose base LID is next to it) gives that node's higher counters: they
 * are dropped, not folded, and the node's own lower reading after them
 * is no reset nobody made.
 */
static void test_always_checked(void **state)
{
	struct fake fk = { .sym = 8 };
	const struct ibw_port_ctrs *p;
	struct ibw_counters_progress pr;
	uint64_t cold, warm;
	struct rig r;
	unsigned k;

	(void)state;
	rig_init(&r);
	sweep(&r, &fk);
	cold = ibw_counters_last_sweep(r.c).mads;
	assert_int_equal(fk.who, 1);
	sweep(&r, &fk);
	warm = ibw_counters_last_sweep(r.c).mads;
	/* PortCounters, ext, VL waits, and the NodeInfo */
	assert_int_equal(warm, 4);
	assert_true(cold > warm);
	assert_int_equal(fk.who, 2);
	assert_false(ibw_counters_verify_stats(r.c).lids_in_flux);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_false(p->stale);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 8);

	/* No sign, and another node at the LID, its counters higher. */
	fk.sym = 50;
	fk.lid_owner = 0x77;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 3);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 8);
	assert_true(p->stale);
	pr = ibw_counters_progress(r.c);
	assert_int_equal(pr.lid_moved, 1);
	assert_int_equal(pr.read, 0);
	/* that is a sign: the mode is on, for the log and the status */
	assert_true(ibw_counters_verify_stats(r.c).lids_in_flux);

	/* The node itself again, lower than the other's: no reset. */
	fk.sym = 9;
	fk.lid_owner = 0;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 9);
	assert_int_equal(p->v[IBW_CTR_SYMBOL_ERRORS].resets, 0);
	assert_false(p->stale);
	assert_int_equal(count_events(&r, IBW_EVT_COUNTER_RESET), 0);

	/* After the LIDs settle the readings are still checked. */
	ibw_counters_lids_settled(r.c, ibw_counters_lid_signs(r.c));
	sweep(&r, &fk);
	sweep(&r, &fk);
	assert_false(ibw_counters_verify_stats(r.c).lids_in_flux);
	assert_int_equal(fk.who, 6);
	rig_free(&r);

	/* A switch's four ports share one question; the CA has its own. */
	memset(&fk, 0, sizeof(fk));
	rig_init(&r);
	ibw_fabric_unref(r.f);
	r.f = switch_and_ca();
	fk.switch_guid = 0x20;
	fk.sym = 4;
	sweep(&r, &fk);
	assert_int_equal(fk.who_at[1], 1);
	assert_int_equal(fk.who_at[5], 1);
	assert_int_equal(fk.who, 2);
	for (k = 1; k <= 4; k++) {
		p = ibw_counters_find(r.c, 0x20, (uint8_t)k);
		assert_non_null(p);
		assert_false(p->stale);
		assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 4);
	}
	rig_free(&r);
}

/*
 * A node that answers none of our SMPs (its SM protects it with an M_Key
 * we do not have) still answers PerfMgt: with always, a NodeInfo could
 * only time out, so a node discovery marked protected is checked as with
 * in-flux and its counters go on; one not marked loses its readings.
 */
static void test_always_protected_node(void **state)
{
	struct fake fk = { .sym = 8, .smi_silent = 1 };
	const struct ibw_port_ctrs *p;
	struct rig r;

	(void)state;
	rig_init(&r);
	ibw_fabric_unref(r.f);
	r.f = one_ca(5, 1);
	sweep(&r, &fk);
	fk.sym = 12;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 0);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_false(p->stale);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 12);
	/* Gone backwards, it is asked, and with no answer not counted. */
	fk.sym = 2;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 1);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->stale);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 12);
	rig_free(&r);

	/* Not marked: each reading waits for a NodeInfo that never comes. */
	memset(&fk, 0, sizeof(fk));
	fk.sym = 8;
	fk.smi_silent = 1;
	rig_init(&r);
	ibw_fabric_unref(r.f);
	r.f = one_ca(5, 0);
	sweep(&r, &fk);
	assert_int_equal(fk.who, 1);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_non_null(p);
	assert_true(p->stale);
	rig_free(&r);
}

/*
 * The mode ends after a discovery that started after the last sign and
 * found no LID changed, once the counter sweep after it has run checked;
 * a discovery that started before a sign, or a sign during that sweep,
 * keeps it on.
 */
static void test_lids_in_flux_turns_off(void **state)
{
	struct fake fk = { 0 };
	uint64_t before;
	struct rig r;

	(void)state;
	fk.sym = 3;
	rig_init_in_flux(&r);
	sweep(&r, &fk);
	before = ibw_counters_lid_signs(r.c);
	ibw_counters_lids_moved(r.c, "a test");
	/* a discovery that started before the sign: not settled */
	ibw_counters_lids_settled(r.c, before);
	sweep(&r, &fk);
	assert_int_equal(fk.who, 1);
	assert_true(ibw_counters_verify_stats(r.c).lids_in_flux);

	/* Settled, but another sign while the next sweep runs. */
	ibw_counters_lids_settled(r.c, ibw_counters_lid_signs(r.c));
	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, r.f, 0, swept, &r), 0);
	ibw_counters_lids_moved(r.c, "another test");
	run_until_done(&r, &fk);
	assert_int_equal(fk.who, 2);
	assert_true(ibw_counters_verify_stats(r.c).lids_in_flux);

	/* A sweep that started before the settled discovery ended does not
	 * end the mode either: it read the old discovery's LIDs. */
	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, r.f, 0, swept, &r), 0);
	ibw_counters_lids_settled(r.c, ibw_counters_lid_signs(r.c));
	run_until_done(&r, &fk);
	assert_int_equal(fk.who, 3);
	assert_true(ibw_counters_verify_stats(r.c).lids_in_flux);

	/* The sweep after it, checked, ends the mode ... */
	sweep(&r, &fk);
	assert_int_equal(fk.who, 4);
	assert_false(ibw_counters_verify_stats(r.c).lids_in_flux);
	/* ... and the next costs no NodeInfo. */
	fk.sym = 5;
	sweep(&r, &fk);
	assert_int_equal(fk.who, 4);
	assert_true(ibw_counters_find(r.c, 0x10, 1)
			    ->v[IBW_CTR_SYMBOL_ERRORS]
			    .total == 5);
	rig_free(&r);
}

static int reopen_mem(struct ibw_transport **out, void *arg)
{
	struct rig *r = arg;

	*out = r->t = ibw_mem_transport_new();
	return *out ? 0 : -ENOMEM;
}

static int back_calls;

static void on_back(struct ibw_engine *e, void *arg)
{
	back_calls++;
}

/* The device goes away in the middle of a sweep and comes back reset,
 * its port at a new LID: the sweep ends with the port unreachable and
 * its totals kept; after the reopen a sweep of the new discovery reads
 * it at its new LID, and the counter that restarted from zero is a
 * reset, confirmed by the node and counted, not a loss. */
static void test_device_lost_mid_sweep(void **state)
{
	struct fake fk = { .sym = 8, .xmit_data = 1000, .ext_xmit_pkts = 7 };
	const struct ibw_port_ctrs *p;
	uint64_t end;
	struct rig r;

	rig_init(&r);
	ibw_engine_set_reopen(r.e, reopen_mem, on_back, &r, 1000, 4000);
	back_calls = 0;
	sweep(&r, &fk);
	assert_int_equal(served_lid, 5);

	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, r.f, 0, swept, &r), 0);
	ibw_loop_run_once(r.loop, 0);
	assert_true(ibw_mem_sent_count(r.t) > 0);
	ibw_mem_kill(r.t);
	end = ibw_now_us() + 2000000u;
	while (!r.done && ibw_now_us() < end)
		ibw_loop_run_once(r.loop, 5000);
	assert_true(r.done);
	assert_true(ibw_engine_lost(r.e) != 0);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->stale);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 8);

	end = ibw_now_us() + 2000000u;
	while (!back_calls && ibw_now_us() < end)
		ibw_loop_run_once(r.loop, 5000);
	assert_int_equal(back_calls, 1);
	assert_int_equal(ibw_engine_lost(r.e), 0);
	assert_ptr_equal(ibw_engine_transport(r.e), r.t);

	/* The new discovery: the CA at LID 7, its counters from zero. */
	ibw_fabric_unref(r.f);
	r.f = one_ca(7, 0);
	fk.sym = 3;
	fk.who = 0;
	sweep(&r, &fk);
	assert_int_equal(served_lid, 7);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_false(p->stale);
	assert_int_equal(fk.who, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 11);
	assert_int_equal(p->v[IBW_CTR_SYMBOL_ERRORS].resets, 1);
	assert_int_equal(count_events(&r, IBW_EVT_COUNTER_RESET), 1);
	rig_free(&r);
}

/* Off unless asked (ibwatchd asks by default: reset-counters all); with
 * --reset-counters data a 32-bit data counter past
 * three quarters of its range is cleared after it was counted, and the
 * next reading is not taken for someone else's reset. */
static void test_reset_before_saturation(void **state)
{
	struct ibw_counters_opts co;
	struct rig r;
	struct fake fk = { 0 };
	const struct ibw_port_ctrs *p;

	fk.capmask = 0x100; /* no PortCountersExtended */
	fk.xmit_data = 0xf0000000u;
	rig_init(&r);
	sweep(&r, &fk);
	assert_int_equal(fk.sets, 0); /* never unless asked */
	rig_free(&r);

	memset(&co, 0, sizeof(co));
	co.retries = -1;
	co.reset_data = 1;
	rig_init_opts(&r, &co);
	sweep(&r, &fk);
	assert_int_equal(fk.sets, 1);
	assert_int_equal(fk.last_select, 1u << 12); /* PortXmitData only */
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_XMIT_DATA].total == 0xf0000000ull * 4);
	fk.xmit_data = 100; /* counting again from zero */
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_XMIT_DATA].total == (0xf0000000ull + 100) * 4);
	assert_int_equal(p->v[IBW_CTR_XMIT_DATA].resets, 0);
	assert_int_equal(p->resets, 0);
	rig_free(&r);
}

/*
 * A PMA whose CapabilityMask2 says IsAdditionalPortCountersExtended
 * Supported: the error counters come from PortCountersExtended in 64
 * bits, so a SymbolErrorCounter past 16 bits counts on (PortCounters'
 * is stuck at 65535) and nothing is cleared, errors asked or not. Where
 * the bit is not set, those fields are reserved: the narrow counter is
 * read, and cleared at three quarters of its range.
 */
static void test_ext_error_counters(void **state)
{
	struct ibw_counters_opts co;
	struct rig r;
	struct fake fk = { 0 };
	const struct ibw_port_ctrs *p;

	memset(&co, 0, sizeof(co));
	co.retries = -1;
	co.reset_data = co.reset_errors = 1;
	fk.capmask = 0x1200;
	fk.capmask2 = 1u << 1;
	fk.sym = 65535;
	fk.ext_sym = 100000;
	rig_init_opts(&r, &co);
	sweep(&r, &fk);
	fk.ext_sym = 300000;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 300000);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].from_ext);
	assert_false(p->v[IBW_CTR_SYMBOL_ERRORS].saturated);
	assert_int_equal(fk.sets, 0);
	assert_int_equal(p->clears, 0);
	rig_free(&r);

	/* the same answers from a PMA without the bit */
	fk.capmask2 = 0;
	fk.sym = 60000;
	rig_init_opts(&r, &co);
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 60000);
	assert_false(p->v[IBW_CTR_SYMBOL_ERRORS].from_ext);
	assert_int_equal(fk.sets, 1);
	assert_int_equal(fk.last_select, 1u << 0); /* SymbolErrorCounter */
	assert_int_equal(p->clears, 1);
	assert_true(ibw_counters_clears(r.c).port_counters == 1);
	fk.sym = 5; /* cleared, and counting again */
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 60005);
	assert_int_equal(p->resets, 0);
	rig_free(&r);
}

static void test_state_file_corruption(void **state)
{
	struct rig r;
	FILE *f;
	char buf[8192];
	size_t len;

	struct rig r2;
	struct fake fk = { .sym = 5, .xmit_data = 1000, .ext_xmit_pkts = 7 };
	const struct ibw_port_ctrs *p;
	char *line;

	rig_init(&r);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "ibwatch-counters 1\n");
	fclose(f);
	assert_int_equal(ibw_counters_load(r.c, path, NULL, NULL),
			 -EBADMSG); /* torn */
	assert_int_equal(ibw_counters_load(r.c, "/nonexistent/x", NULL, NULL),
			 -ENOENT);
	/* A file with a port line, read back whole. */
	sweep(&r, &fk);
	assert_int_equal(ibw_counters_save(r.c, path, NULL), 0);
	rig_init(&r2);
	assert_int_equal(ibw_counters_load(r2.c, path, NULL, NULL), 0);
	p = ibw_counters_find(r2.c, 0x10, 1);
	assert_non_null(p);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 5);
	rig_free(&r2);
	/* One changed byte in the port line that still parses (port 1
	 * becomes port 2): only the checksum can tell, and it refuses. */
	f = fopen(path, "r+");
	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = '\0';
	line = strstr(buf, "\np 0x0000000000000010 1 ");
	assert_non_null(line);
	line[22] = '2';
	rewind(f);
	fwrite(buf, 1, len, f);
	fclose(f);
	rig_init(&r2);
	assert_int_equal(ibw_counters_load(r2.c, path, NULL, NULL), -EBADMSG);
	assert_null(ibw_counters_find(r2.c, 0x10, 2));
	assert_null(ibw_counters_find(r2.c, 0x10, 1));
	rig_free(&r2);
	rig_free(&r);
}

/* A state file as ibwatchd wrote it before the counter code was split
 * (saved by test_sweep_threshold_stale_and_state above; format 1, before
 * the link lines): it loads, and saved again its port line comes out
 * byte for byte the same, in a format 2 file. */
static void test_state_file_from_before(void **state)
{
	struct rig r;
	const struct ibw_port_ctrs *p;
	char want[4096], got[4096];
	size_t nwant, ngot;
	FILE *f;

	rig_init(&r);
	assert_int_equal(ibw_counters_load(r.c, FIXTURES "/counters-v1.state",
					   NULL, NULL),
			 0);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_non_null(p);
	assert_false(p->is_switch);
	assert_true(p->updated_us == 1795445122163045ull);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 1003);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].over_threshold);
	assert_true(p->v[IBW_CTR_XMIT_DATA].total == 400);
	assert_true(p->v[IBW_CTR_XMIT_DATA].raw == 100);
	assert_true(p->v[IBW_CTR_XMIT_DATA].from_ext);
	assert_true(p->v[IBW_CTR_XMIT_DATA].saturated);
	assert_true(p->v[IBW_CTR_XMIT_PKTS].total == 18446744073709551606ull);
	assert_false(ibw_ctr_val(p, IBW_CTR_LOCAL_PHYSICAL_ERRORS)->have_raw);

	assert_int_equal(ibw_counters_save(r.c, path, NULL), 0);
	f = fopen(FIXTURES "/counters-v1.state", "r");
	assert_non_null(f);
	nwant = fread(want, 1, sizeof(want), f);
	fclose(f);
	f = fopen(path, "r");
	assert_non_null(f);
	ngot = fread(got, 1, sizeof(got), f);
	fclose(f);
	assert_true(nwant > 0 && nwant < sizeof(want));
	assert_true(ngot > 0 && ngot < sizeof(got));
	want[nwant] = got[ngot] = '\0';
	assert_true(!strncmp(want, "ibwatch-counters 1\np ", 21));
	/* version 4: the generation (0 here) on the first line */
	assert_true(
		!strncmp(got, "ibwatch-counters 4 0000000000000000\np ", 38));
	/* the port lines, up to the end line */
	assert_non_null(strstr(want, "\nend 1 "));
	assert_non_null(strstr(got, "\nend 1 0 "));
	assert_int_equal(strstr(got, "\nend ") - got - 17,
			 strstr(want, "\nend ") - want);
	assert_memory_equal(got + 36, want + 19,
			    (size_t)(strstr(want, "\nend ") - want) - 19);
	rig_free(&r);
}

struct lines {
	char *l[8];
	unsigned n;
};

static int keep_line(const char *line, void *arg)
{
	struct lines *ls = arg;

	if (ls->n == 8)
		return -ENOSPC;
	ls->l[ls->n] = strdup(line);
	return ls->l[ls->n++] ? 0 : -ENOMEM;
}

static void free_lines(struct lines *ls)
{
	unsigned i;

	for (i = 0; i < ls->n; i++)
		free(ls->l[i]);
	ls->n = 0;
}

/* Format 2 carries the link windows: saved with the counters, read back
 * into another link set the same; a link line this version cannot read
 * costs that link only. */
static void test_state_file_links(void **state)
{
	static const char line[] = "link 0x0000000000000100 1 "
				   "0x0000000000000200 3 1700000000000000 1 "
				   "e 1699999990000000 1 7 0 2 0 0 0 0 0 9 11 "
				   "e 1699999990000000 1 0 0 0 0 0 0 0 4 0 5";
	struct fake fk = { .sym = 5, .xmit_data = 1000, .ext_xmit_pkts = 7 };
	struct lines a = { { NULL }, 0 }, b = { { NULL }, 0 };
	struct ibw_links *l = ibw_links_new(NULL), *m = ibw_links_new(NULL);
	struct rig r, r2;
	unsigned bad = 99;
	uint64_t h = IBW_FNV1A64_INIT;
	char text[256];
	FILE *f;

	assert_non_null(l);
	assert_non_null(m);
	assert_int_equal(ibw_links_load_line(l, line), 0);
	rig_init(&r);
	sweep(&r, &fk);
	assert_int_equal(ibw_counters_save(r.c, path, l), 0);
	rig_init(&r2);
	assert_int_equal(ibw_counters_load(r2.c, path, m, &bad), 0);
	assert_int_equal(bad, 0);
	assert_non_null(ibw_counters_find(r2.c, 0x10, 1));
	assert_int_equal(ibw_links_count(m), 1);
	assert_int_equal(ibw_links_save(l, keep_line, &a), 0);
	assert_int_equal(ibw_links_save(m, keep_line, &b), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(b.n, 1);
	assert_string_equal(a.l[0], b.l[0]);
	free_lines(&a);
	free_lines(&b);
	rig_free(&r2);

	/* Whole (the hash holds) but with a link line from elsewhere. */
	snprintf(text, sizeof(text), "ibwatch-counters 2\nl link 0x1 x\n");
	h = ibw_fnv1a64(h, text, strlen(text));
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%send 0 1 %016llx\n", text, (unsigned long long)h);
	fclose(f);
	ibw_links_free(m);
	m = ibw_links_new(NULL);
	rig_init(&r2);
	assert_int_equal(ibw_counters_load(r2.c, path, m, &bad), 0);
	assert_int_equal(bad, 1);
	assert_int_equal(ibw_links_count(m), 0);
	rig_free(&r2);
	/* The count of link lines is checked like the ports'. */
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%send 0 2 %016llx\n", text, (unsigned long long)h);
	fclose(f);
	rig_init(&r2);
	assert_int_equal(ibw_counters_load(r2.c, path, m, &bad), -EBADMSG);
	rig_free(&r2);

	rig_free(&r);
	ibw_links_free(l);
	ibw_links_free(m);
}

/* A fabric of @n one-port CAs, node GUIDs from @first up. */
static struct ibw_fabric *many_cas(uint64_t first, unsigned n)
{
	struct ibw_fabric *f = ibw_fabric_new();
	struct ibw_fnode *nd;
	unsigned i;

	for (i = 0; i < n; i++) {
		nd = ibw_fabric_add_node(f, first + i, 2);
		nd->ni.node_type = IBW_NODE_CA;
		nd->ni.num_ports = 1;
		nd->ports[1].have_pi = 1;
		nd->ports[1].pi.state = 4;
		nd->ports[1].pi.lid = (uint16_t)(1 + i);
		nd->lid = (uint16_t)(1 + i);
	}
	ibw_fabric_freeze(f);
	return f;
}

static void run_until_done(struct rig *r, struct fake *fk)
{
	uint64_t end = ibw_now_us() + 30000000u;

	while (!r->done && ibw_now_us() < end) {
		serve(r, fk);
		ibw_loop_run_once(r->loop, 5000);
	}
	assert_true(r->done);
}

static void assert_sorted(struct ibw_counters *c, unsigned want)
{
	unsigned n = ibw_counters_nports(c), i;

	assert_int_equal(n, want);
	for (i = 1; i < n; i++)
		assert_true(
			ibw_counters_port_cmp(ibw_counters_port_at(c, i - 1),
					      ibw_counters_port_at(c, i)) < 0);
}

/*
 * The shared table a snapshot holds: the counters' own records, not a
 * copy, while no sweep writes; a sweep writing while it is held leaves
 * it as it was (the writes go to a copy); once its last holder let go
 * the records are the counters' again without a copy; it outlives the
 * counters.
 */
static void test_shared_table(void **state)
{
	struct rig r;
	struct fake fk;
	struct ibw_ctr_table *t1, *t2, *t3;
	const struct ibw_port_ctrs *tp, *own;
	unsigned n, m;

	(void)state;
	memset(&fk, 0, sizeof(fk));
	fk.sym = 3;
	rig_init(&r);
	sweep(&r, &fk);
	t1 = ibw_counters_table(r.c);
	assert_non_null(t1);
	n = ibw_ctr_table_n(t1);
	tp = ibw_ctr_table_at(t1, 0);
	m = ibw_counters_nports(r.c);
	own = ibw_counters_port_at(r.c, 0);
	assert_int_equal(n, 1);
	assert_int_equal(m, 1);
	assert_ptr_equal(tp, own);
	t2 = ibw_counters_table(r.c);
	assert_ptr_equal(t2, t1);
	ibw_ctr_table_unref(t2);

	fk.sym = 10;
	sweep(&r, &fk);
	own = ibw_counters_port_at(r.c, 0);
	assert_ptr_not_equal(own, tp);
	assert_true(own[0].v[IBW_CTR_SYMBOL_ERRORS].total == 10);
	assert_true(tp[0].v[IBW_CTR_SYMBOL_ERRORS].total == 3);
	ibw_ctr_table_unref(t1);

	/* Nobody holds the table any more: the sweep writes in place. */
	t3 = ibw_counters_table(r.c);
	tp = ibw_ctr_table_at(t3, 0);
	ibw_ctr_table_unref(t3);
	fk.sym = 12;
	sweep(&r, &fk);
	own = ibw_counters_port_at(r.c, 0);
	assert_ptr_equal(own, tp);
	assert_true(own[0].v[IBW_CTR_SYMBOL_ERRORS].total == 12);

	t3 = ibw_counters_table(r.c);
	rig_free(&r);
	n = ibw_ctr_table_n(t3);
	tp = ibw_ctr_table_at(t3, 0);
	assert_int_equal(n, 1);
	assert_true(tp[0].guid == 0x10 && tp[0].port == 1);
	ibw_ctr_table_unref(t3);
}

/* How far a sweep got (ports, read, unreachable, spread, running), and
 * the port records, sorted also while a sweep adds ports out of order,
 * each port once however many sweeps ran. */
/*
 * PortVLXmitWaitCounters: read where ClassPortInfo advertises PortXmitWait
 * (bit 12), non-zero values decoded into the right VLs and folded into
 * totals across a reset and the 16-bit maximum; never asked of a node
 * without the bit; a status error stops the asking and keeps the port's
 * other counters.
 */
static void test_vl_xmit_wait(void **state)
{
	struct rig r;
	struct fake fk;
	const struct ibw_port_ctrs *p;
	int k;

	memset(&fk, 0, sizeof(fk));
	fk.capmask = 0x1200;
	for (k = 0; k < 16; k++)
		fk.vl[k] = (uint16_t)(1000 * k + 7);
	fk.vl[15] = 65535;
	rig_init(&r);
	sweep(&r, &fk);
	assert_int_equal(fk.vl_asked, 1);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_non_null(p);
	assert_true(p->have_vl);
	for (k = 0; k < 15; k++) {
		assert_int_equal(p->vl_raw[k], 1000 * k + 7);
		assert_true(p->vl_xmit_wait[k] == (uint64_t)(1000 * k + 7));
	}
	assert_int_equal(p->vl_raw[15], 65535);
	/* VL0 grows by 100; VL1 went down (cleared by someone): counted
	 * whole; VL15 stays at its maximum. */
	fk.vl[0] = 107;
	fk.vl[1] = 3;
	sweep(&r, &fk);
	assert_int_equal(fk.vl_asked, 2);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(p->vl_xmit_wait[0] == 107);
	assert_true(p->vl_xmit_wait[1] == 1007 + 3);
	assert_true(p->vl_xmit_wait[15] == 65535);
	/* A status error: the port keeps its counters, and the node is not
	 * asked again. */
	fk.vl_status = 0x0c; /* attribute not supported */
	fk.sym = 9;
	sweep(&r, &fk);
	assert_int_equal(fk.vl_asked, 3);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_false(p->stale);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 9);
	sweep(&r, &fk);
	assert_int_equal(fk.vl_asked, 3);
	rig_free(&r);

	/* A node without IsPortCountersXmitWaitSupported: never asked. */
	memset(&fk, 0, sizeof(fk));
	fk.capmask = 0x0200;
	fk.sym = 4;
	rig_init(&r);
	sweep(&r, &fk);
	sweep(&r, &fk);
	assert_int_equal(fk.vl_asked, 0);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_false(p->have_vl);
	assert_true(p->v[IBW_CTR_SYMBOL_ERRORS].total == 4);
	rig_free(&r);
}

/* One CA as one_ca(5, 0) whose port advertises extended speeds and
 * PortInfoExtended: its FEC counters are read. */
static struct ibw_fabric *one_fec_ca(void)
{
	struct ibw_fabric *f = ibw_fabric_new();
	struct ibw_fnode *n = ibw_fabric_add_node(f, 0x10, 2);

	n->ni.node_type = IBW_NODE_CA;
	n->ni.num_ports = 1;
	n->ports[1].have_pi = 1;
	n->ports[1].pi.state = 4;
	n->ports[1].pi.lid = 5;
	n->ports[1].pi.capmask = IBW_CAP_EXT_SPEEDS | IBW_CAP_CAPMASK2;
	n->ports[1].pi.capmask2 = IBW_CAP2_PORT_INFO_EXT;
	n->lid = 5;
	ibw_fabric_freeze(f);
	return f;
}

/*
 * FECModeActive travels with the FEC counters; a PortInfoExtended that
 * goes unanswered costs them nothing: they are read in the form of the
 * last mode read ("last_known"), or, with none known, in the FC-FEC
 * form ("fc_fallback"). The mode is asked where PortInfoExtended is,
 * whether or not the PMA counts in the RS-FEC form.
 */
static void test_fec_mode_and_pie_timeout(void **state)
{
	struct fake fk = { 0 };
	const struct ibw_port_ctrs *p;
	struct rig r;

	(void)state;
	rig_init(&r);
	ibw_fabric_unref(r.f);
	r.f = one_fec_ca();
	fk.capmask = 0x1200 | 1u << 14; /* IsRSFECCountersSupported */
	fk.pie_mode = 2;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_non_null(p);
	assert_non_null(p->fec);
	assert_int_equal(fk.pie_asked, 1);
	assert_int_equal(fk.pesc_asked, 1);
	assert_int_equal(p->fec->layout, IBW_FEC_RS);
	assert_int_equal(p->fec->mode, 2);
	assert_int_equal(p->fec->mode_src, IBW_FEC_MODE_READ);

	fk.pie_silent = 1;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(fk.pie_asked >= 2);
	assert_int_equal(fk.pesc_asked, 2);
	assert_int_equal(p->fec_fail, IBW_CTR_FAIL_NONE);
	assert_int_equal(p->fec->layout, IBW_FEC_RS);
	assert_int_equal(p->fec->mode, 2);
	assert_int_equal(p->fec->mode_src, IBW_FEC_MODE_LAST);
	assert_int_equal(p->fec_lost, 0);
	rig_free(&r);

	/* no mode known: the FC-FEC form; a PMA without the RS-FEC form
	 * still has the mode asked */
	rig_init(&r);
	ibw_fabric_unref(r.f);
	r.f = one_fec_ca();
	memset(&fk, 0, sizeof(fk));
	fk.pie_silent = 1;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_true(fk.pie_asked >= 1);
	assert_int_equal(fk.pesc_asked, 1);
	assert_non_null(p->fec);
	assert_int_equal(p->fec_fail, IBW_CTR_FAIL_NONE);
	assert_int_equal(p->fec->layout, IBW_FEC_FC);
	assert_int_equal(p->fec->mode_src, IBW_FEC_MODE_FALLBACK);
	fk.pie_silent = 0;
	fk.pie_mode = 0;
	sweep(&r, &fk);
	p = ibw_counters_find(r.c, 0x10, 1);
	assert_int_equal(p->fec->layout, IBW_FEC_FC);
	assert_int_equal(p->fec->mode, 0);
	assert_int_equal(p->fec->mode_src, IBW_FEC_MODE_READ);
	assert_string_equal(ibw_fec_mode_src_name(IBW_FEC_MODE_LAST),
			    "last_known");
	assert_string_equal(ibw_fec_mode_name(0), "none");
	rig_free(&r);
}

/*
 * PortSamplesControl:Tick is read once per PMA (it is mandatory)
 * and kept: a crafted Tick comes back as it was answered; a PMA that
 * answers with a status error (as ibsim does) is not asked again and
 * its tick stays unknown; one without PortXmitWait is asked all the same.
 */
static void test_samples_control_tick(void **state)
{
	struct fake fk = { 0 };
	struct rig r;
	int i;

	rig_init(&r);
	assert_int_equal(ibw_counters_tick(r.c, 0x10), -1);
	fk.tick = 31; /* Switch-IB's, per ibdiagnet's manual */
	sweep(&r, &fk);
	assert_int_equal(fk.psc_asked, 1);
	assert_int_equal(ibw_counters_tick(r.c, 0x10), 31);
	fk.tick = 7;
	sweep(&r, &fk);
	assert_int_equal(fk.psc_asked, 1); /* kept, not asked again */
	assert_int_equal(ibw_counters_tick(r.c, 0x10), 31);
	assert_int_equal(ibw_counters_tick(r.c, 0x11), -1);
	rig_free(&r);

	rig_init(&r);
	memset(&fk, 0, sizeof(fk));
	fk.psc_status = 0x0c; /* unsupported method/attribute */
	sweep(&r, &fk);
	sweep(&r, &fk);
	assert_int_equal(fk.psc_asked, 1);
	assert_int_equal(ibw_counters_tick(r.c, 0x10), -1);
	assert_false(ibw_counters_find(r.c, 0x10, 1)->stale);
	rig_free(&r);

	/* Dropped (ibsim): asked in three sweeps, one try each, then no
	 * more; the counters are read all the same, and each sweep that
	 * asked counts its timeout, as every MAD of a sweep's is. */
	rig_init(&r);
	memset(&fk, 0, sizeof(fk));
	fk.psc_silent = 1;
	for (i = 0; i < 5; i++) {
		sweep(&r, &fk);
		assert_false(ibw_counters_find(r.c, 0x10, 1)->stale);
		assert_int_equal(ibw_counters_last_sweep(r.c).timeouts,
				 i < 3 ? 1 : 0);
	}
	assert_int_equal(fk.psc_asked, 3);
	assert_int_equal(ibw_counters_tick(r.c, 0x10), -1);
	rig_free(&r);

	/* A port where an SM runs (IsSM) is asked like any other: on
	 * hardware its PMA answers, and the test bed's model answers for
	 * the SM's node before ibsim would hand the MAD to opensm. */
	rig_init(&r);
	memset(&fk, 0, sizeof(fk));
	ibw_fabric_unref(r.f);
	r.f = ibw_fabric_new();
	{
		struct ibw_fnode *n = ibw_fabric_add_node(r.f, 0x10, 2);

		n->ni.node_type = IBW_NODE_CA;
		n->ni.num_ports = 1;
		n->ports[1].have_pi = 1;
		n->ports[1].pi.state = 4;
		n->ports[1].pi.lid = 5;
		n->ports[1].pi.capmask = IBW_CAP_IS_SM;
		n->lid = 5;
		ibw_fabric_freeze(r.f);
	}
	sweep(&r, &fk);
	assert_int_equal(fk.psc_asked, 1);
	assert_false(ibw_counters_find(r.c, 0x10, 1)->stale);
	rig_free(&r);

	rig_init(&r);
	memset(&fk, 0, sizeof(fk));
	/* PortSamplesControl is mandatory: asked of a PMA without
	 * IsPortCountersXmitWaitSupported too (its OptionMask names the
	 * congestion counters), once, before the ports are read */
	fk.capmask = 0x0200;
	fk.tick = 7;
	sweep(&r, &fk);
	sweep(&r, &fk);
	assert_int_equal(fk.psc_asked, 1);
	assert_int_equal(ibw_counters_tick(r.c, 0x10), 7);
	rig_free(&r);
}

static void test_progress_and_order(void **state)
{
	struct ibw_fabric *f1 = many_cas(0x1000, 600);
	struct ibw_fabric *f2 = many_cas(0x0ffe, 602);
	struct ibw_counters_progress p;
	struct fake fk = { 0 };
	uint64_t end;
	struct rig r;

	/* Tries of 200 ms: what is tested is the order and the progress,
	 * and on a loaded machine a loop turn of 600 nodes' answers
	 * (ClassPortInfo, PortSamplesControl, then the ports) took longer
	 * than 20 ms tries; the silent sweep at the end then takes a few
	 * seconds. */
	rig_init_cfg(&r, NULL, 200);
	fk.fab = f1;
	p = ibw_counters_progress(r.c);
	assert_false(p.running);
	assert_true(p.start_us == 0);
	/* A full-speed sweep: every port read. */
	assert_int_equal(ibw_counters_sweep(r.c, f1, 0, swept, &r), 0);
	p = ibw_counters_progress(r.c);
	assert_true(p.running);
	assert_int_equal(p.ports, 600);
	assert_true(p.spread_us == 0 && p.start_us && !p.end_us);
	run_until_done(&r, &fk);
	p = ibw_counters_progress(r.c);
	assert_false(p.running);
	assert_int_equal(p.read, 600);
	assert_int_equal(p.unreachable, 0);
	assert_true(p.end_us >= p.start_us);
	assert_sorted(r.c, 600);
	/* Again: the same 600 records, found, not added. */
	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, f1, 0, swept, &r), 0);
	run_until_done(&r, &fk);
	assert_sorted(r.c, 600);

	/* Spread over 0.6 s: two new nodes below the others, read in its
	 * first tick (after their ClassPortInfo), added at the end. */
	r.done = 0;
	fk.fab = f2;
	assert_int_equal(ibw_counters_sweep(r.c, f2, 600000, swept, &r), 0);
	end = ibw_now_us() + 5000000u;
	while ((!ibw_counters_find(r.c, 0x0ffe, 1) ||
		!ibw_counters_find(r.c, 0x0fff, 1)) &&
	       ibw_now_us() < end) {
		serve(&r, &fk);
		ibw_loop_run_once(r.loop, 5000);
	}
	p = ibw_counters_progress(r.c);
	assert_true(p.running);
	assert_true(p.spread_us == 600000);
	assert_int_equal(p.ports, 602);
	assert_true(p.read >= 2 && p.read < 602);
	assert_sorted(r.c, 602);
	run_until_done(&r, &fk);
	p = ibw_counters_progress(r.c);
	assert_int_equal(p.read, 602);
	assert_sorted(r.c, 602);

	/* Nobody answers: every port unreachable, none read. */
	fk.silent = 1;
	fk.fab = f1;
	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, f1, 0, swept, &r), 0);
	run_until_done(&r, &fk);
	p = ibw_counters_progress(r.c);
	assert_int_equal(p.read, 0);
	assert_int_equal(p.unreachable, 600);
	assert_sorted(r.c, 602);
	ibw_fabric_unref(f1);
	ibw_fabric_unref(f2);
	rig_free(&r);
}

/* run_until_done(), and the most requests the engine held queued. */
static unsigned run_queue_max(struct rig *r, struct fake *fk)
{
	uint64_t end = ibw_now_us() + 30000000u;
	struct ibw_engine_stats st;
	unsigned most = 0;

	while (!r->done && ibw_now_us() < end) {
		serve(r, fk);
		ibw_loop_run_once(r->loop, 5000);
		ibw_engine_get_stats(r->e, &st);
		if (st.queued > most)
			most = st.queued;
	}
	assert_true(r->done);
	return most;
}

/*
 * An unspread sweep keeps about 1,024 MADs queued or in flight, not one
 * per MAD of the fabric: warm, that alone; cold, beside it one
 * ClassPortInfo per PMA whose mask is not known, all sent at the start
 * (a silent PMA then waits out its deadline beside the others' reads).
 * A respread in the middle takes over the rest.
 */
static void test_unspread_is_bounded(void **state)
{
	struct ibw_fabric *f = many_cas(0x1000, 3000);
	struct ibw_counters_progress p;
	struct ibw_engine_stats st;
	struct fake fk = { 0 };
	unsigned warm_max = 0;
	uint64_t end;
	struct rig r;

	/* The fake answers from this thread between loop turns: on a busy
	 * machine a turn can take longer than 20 ms, and a try timed out
	 * here would be a port not read, which this test is not about. */
	rig_init_cfg(&r, NULL, 5000);
	fk.fab = f;
	assert_int_equal(ibw_counters_sweep(r.c, f, 0, swept, &r), 0);
	run_until_done(&r, &fk);
	assert_int_equal(ibw_counters_progress(r.c).read, 3000);
	ibw_engine_get_stats(r.e, &st);
	assert_true(st.queued_hwm >= 3000);
	assert_true(st.queued_hwm <= 3000 + 1024 + 2);
	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, f, 0, swept, &r), 0);
	warm_max = run_queue_max(&r, &fk);
	p = ibw_counters_progress(r.c);
	assert_int_equal(p.read, 3000);
	assert_true(warm_max > 0);
	assert_true(warm_max <= 1024 + 2);
	ibw_engine_get_stats(r.e, &st);
	/* 3,000 ClassPortInfo and PortSamplesControl (once per PMA, for
	 * its Tick), then 18,000 counter reads: PortCounters,
	 * PortCountersExtended and PortVLXmitWaitCounters (the fake PMA
	 * advertises PortXmitWait) per port, twice, and the NodeInfo that
	 * checks each node's readings, twice */
	assert_int_equal(st.submitted, 2 * 3000 + 2 * 3 * 3000 + 2 * 3000);

	/* A respread (a SIGHUP) once some are read only ever hurries a
	 * sweep: a full-speed one is not spread over the new interval. */
	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, f, 0, swept, &r), 0);
	end = ibw_now_us() + 5000000u;
	while (ibw_counters_progress(r.c).read < 100 && ibw_now_us() < end) {
		serve(&r, &fk);
		ibw_loop_run_once(r.loop, 5000);
	}
	ibw_counters_respread(r.c, 60000000u);
	run_until_done(&r, &fk);
	assert_true(r.done);
	assert_int_equal(ibw_counters_progress(r.c).read, 3000);

	/* A spread one is hurried: over a minute, then the rest at once. */
	r.done = 0;
	assert_int_equal(ibw_counters_sweep(r.c, f, 60000000u, swept, &r), 0);
	end = ibw_now_us() + 5000000u;
	while (ibw_counters_progress(r.c).read < 10 && ibw_now_us() < end) {
		serve(&r, &fk);
		ibw_loop_run_once(r.loop, 5000);
	}
	p = ibw_counters_progress(r.c);
	assert_false(r.done);
	assert_true(p.read < 3000);
	ibw_counters_respread(r.c, 0);
	assert_true(run_queue_max(&r, &fk) <= 1024 + 2);
	assert_int_equal(ibw_counters_progress(r.c).read, 3000);
	ibw_fabric_unref(f);
	rig_free(&r);
}

/* sweep() over @f */
static void sweep_over(struct rig *r, const struct ibw_fabric *f,
		       struct fake *fk)
{
	r->done = 0;
	assert_int_equal(ibw_counters_sweep(r->c, f, 0, swept, r), 0);
	run_until_done(r, fk);
}

/*
 * A PMA that never answers: its ClassPortInfo goes out at the sweep's
 * start, not at its node's turn, so it waits out its deadline beside the
 * others' reads; the next sweep asks it with one try; once it answers it
 * is read again. A node known to answer that falls silent costs its
 * reads' tries once, then one ClassPortInfo try a sweep.
 */
static void test_silent_pma_asked_early(void **state)
{
	struct ibw_fabric *f = many_cas(0x1000, 40);
	const struct ibw_port_ctrs *p;
	struct fake fk = { .dead_lid = 40 };
	struct ibw_counters_opts co = { .retries = 2 };
	struct rig r;
	int i;

	(void)state;
	rig_init_opts(&r, &co);
	fk.fab = f;
	for (i = 0; i < 2; i++) {
		fk.dead_asked = fk.seen = 0;
		r.done = 0;
		assert_int_equal(ibw_counters_sweep(r.c, f, 0, swept, &r), 0);
		run_until_done(&r, &fk);
		/* the last node in order, asked among the first 40 MADs */
		assert_true(fk.dead_first >= 1 && fk.dead_first <= 40);
		/* three tries at first, then one */
		assert_int_equal(fk.dead_asked, i == 0 ? 3 : 1);
		p = ibw_counters_find(r.c, 0x1000 + 39, 1);
		assert_non_null(p);
		assert_true(p->stale);
		assert_int_equal(p->fail, IBW_CTR_FAIL_TIMEOUT);
		assert_int_equal(p->unreachable, i + 1);
		assert_int_equal(ibw_counters_progress(r.c).read, 39);
		assert_int_equal(ibw_counters_last_sweep(r.c).timeouts, 1);
	}
	/* it answers again: read, and known */
	fk.dead_lid = 0;
	sweep_over(&r, f, &fk);
	p = ibw_counters_find(r.c, 0x1000 + 39, 1);
	assert_false(p->stale);
	assert_int_equal(ibw_counters_progress(r.c).read, 40);
	/* known, then silent: its reads wait out their tries once... */
	fk.dead_lid = 40;
	fk.dead_asked = 0;
	sweep_over(&r, f, &fk);
	assert_true(fk.dead_asked >= 2 * 3);
	p = ibw_counters_find(r.c, 0x1000 + 39, 1);
	assert_true(p->stale);
	/* ... then it is one ClassPortInfo try a sweep */
	fk.dead_asked = 0;
	sweep_over(&r, f, &fk);
	assert_int_equal(fk.dead_asked, 1);
	assert_int_equal(ibw_counters_progress(r.c).read, 39);
	fk.dead_lid = 0;
	sweep_over(&r, f, &fk);
	assert_int_equal(ibw_counters_progress(r.c).read, 40);
	ibw_fabric_unref(f);
	rig_free(&r);
}

/*
 * A dual-port CA: each active port read through its own LID, as a CA's
 * PMA answers for the port a MAD comes in by (PortSelect must name that
 * port), one NodeInfo per LID; the time each read took and the sweep's
 * busy time per kind; a port whose LID stops answering is stale, for a
 * timeout, while the other goes on.
 */
static void serve_dual(struct rig *r, unsigned *per_lid, int lid6_silent)
{
	uint8_t m[IBW_MAD_SIZE];
	struct ibw_mad_addr to;

	while (ibw_mem_next_sent(r->t, m, &to)) {
		unsigned attr = ibw_mad_get(m, IB_MAD_ATTRID_F);
		unsigned port = to.lid == 5 ? 1 : 2;
		uint8_t *d = m + IB_PC_DATA_OFFS;

		assert_true(to.lid == 5 || to.lid == 6);
		per_lid[to.lid - 5]++;
		if (to.lid == 6 && lid6_silent)
			continue;
		if (m[1] == IBW_CLASS_SMI) {
			assert_int_equal(attr, IBW_ATTR_NODE_INFO);
			mad_set_field64(m + IB_SMP_DATA_OFFS, 0, IB_NODE_GUID_F,
					0x10);
			mad_set_field(m + IB_SMP_DATA_OFFS, 0,
				      IB_NODE_LOCAL_PORT_F, port);
		} else if (attr == IBW_ATTR_CLASS_PORT_INFO) {
			mad_set_field(d, 0, IB_CPI_CAPMASK_F, 0x0200);
		} else {
			assert_int_equal(ibw_mad_get(d, IB_PC_PORT_SELECT_F),
					 port);
			if (attr == IBW_ATTR_PORT_COUNTERS_EXT)
				mad_set_field64(d, 0, IB_PC_EXT_XMT_BYTES_F,
						1000 * port);
		}
		ibw_mem_make_response(m, 0);
		ibw_mem_inject(r->t, m, IBW_MAD_SIZE, 0);
	}
}

static void test_dual_port_ca(void **state)
{
	struct ibw_fabric *f = ibw_fabric_new();
	struct ibw_fnode *n = ibw_fabric_add_node(f, 0x10, 3);
	const struct ibw_port_ctrs *p1, *p2;
	unsigned per_lid[2] = { 0, 0 }, k;
	uint64_t busy[2], end;
	struct rig r;

	n->ni.node_type = IBW_NODE_CA;
	n->ni.num_ports = 2;
	for (k = 1; k <= 2; k++) {
		n->ports[k].have_pi = 1;
		n->ports[k].pi.state = 4;
		n->ports[k].pi.lid = (uint16_t)(4 + k);
	}
	n->lid = 5;
	ibw_fabric_freeze(f);
	rig_init(&r);
	for (k = 0; k < 2; k++) {
		r.done = 0;
		assert_int_equal(ibw_counters_sweep(r.c, f, 0, swept, &r), 0);
		end = ibw_now_us() + 2000000u;
		while (!r.done && ibw_now_us() < end) {
			serve_dual(&r, per_lid, k == 1);
			ibw_loop_run_once(r.loop, 5000);
		}
		assert_true(r.done);
		assert_int_equal(ibw_counters_progress(r.c).ports, 2);
		p1 = ibw_counters_find(r.c, 0x10, 1);
		p2 = ibw_counters_find(r.c, 0x10, 2);
		assert_non_null(p1);
		assert_non_null(p2);
		assert_false(p1->stale);
		assert_int_equal(p1->lid, 5);
		assert_int_equal(p1->v[IBW_CTR_XMIT_DATA].total, 4000);
		assert_true(p1->read_dur_us > 0);
		ibw_counters_last_busy(r.c, busy);
		assert_true(busy[0] > 0);
		assert_int_equal(busy[1], 0);
		if (k == 0) {
			/* ClassPortInfo, PortCounters, the extended ones and
			 * the NodeInfo, at each LID; PortSamplesControl once
			 * for the node (mandatory, whatever its mask), at the
			 * LID that first answered ClassPortInfo */
			assert_int_equal(per_lid[0] + per_lid[1], 9);
			assert_true(per_lid[0] >= 4 && per_lid[1] >= 4);
			assert_false(p2->stale);
			assert_int_equal(p2->lid, 6);
			assert_int_equal(p2->v[IBW_CTR_XMIT_DATA].total, 8000);
			assert_int_equal(p2->fail, IBW_CTR_FAIL_NONE);
		} else {
			/* LID 6 went silent: its port alone is stale, its
			 * totals kept, for a timeout */
			assert_true(p2->stale);
			assert_int_equal(p2->fail, IBW_CTR_FAIL_TIMEOUT);
			assert_int_equal(p2->v[IBW_CTR_XMIT_DATA].total, 8000);
			assert_int_equal(ibw_counters_unreachable(r.c), 1);
		}
	}
	ibw_fabric_unref(f);
	rig_free(&r);
}

/*
 * A fabric whose PMAs drop PortSamplesControl (ibsim): once 16 in a row
 * went unanswered, the sweep asks no more PMA for it, so a spread sweep
 * of 40 CAs asks the first few, not every one; the next sweep asks
 * again. The counters are read throughout.
 */
static void test_samples_control_silent_fabric(void **state)
{
	struct ibw_fabric *f = many_cas(0x1000, 40);
	struct fake fk = { 0 };
	uint64_t end;
	unsigned first;
	struct rig r;
	int k;

	rig_init(&r);
	fk.fab = f;
	fk.psc_silent = 1;
	for (k = 0; k < 2; k++) {
		r.done = 0;
		/* a job every 25 ms, each PortSamplesControl a 20 ms try */
		assert_int_equal(
			ibw_counters_sweep(r.c, f, 1000000u, swept, &r), 0);
		end = ibw_now_us() + 5000000u;
		while (!r.done && ibw_now_us() < end) {
			serve(&r, &fk);
			ibw_loop_run_once(r.loop, 5000);
		}
		assert_true(r.done);
		assert_int_equal(ibw_counters_progress(r.c).read, 40);
		/* Until a PMA answers it, 16 at once; 16 timeouts in a
		 * row end the asking for the sweep: 16 a sweep, each
		 * counted as the sweep's timeout. On a loaded machine a
		 * timeout can fire after the next job has asked: one or
		 * two more, never the 40. */
		if (k == 0) {
			first = fk.psc_asked;
			assert_in_range(first, 16, 18);
			assert_int_equal(ibw_counters_last_sweep(r.c).timeouts,
					 first);
		} else {
			assert_in_range(fk.psc_asked - first, 16, 18);
		}
	}
	ibw_fabric_unref(f);
	rig_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_descriptor_lookup),
		cmocka_unit_test_setup_teardown(
			test_sweep_threshold_stale_and_state, setup_path,
			teardown_path),
		cmocka_unit_test(test_reset_before_saturation),
		cmocka_unit_test(test_ext_error_counters),
		cmocka_unit_test(test_moved_lid_is_not_a_reset),
		cmocka_unit_test(test_lids_in_flux_higher_reading),
		cmocka_unit_test(test_lids_in_flux_one_nodeinfo_per_lid),
		cmocka_unit_test(test_lids_in_flux_turns_off),
		cmocka_unit_test(test_always_checked),
		cmocka_unit_test(test_always_protected_node),
		cmocka_unit_test(test_pma_redirect_followed),
		cmocka_unit_test(test_pma_redirect_other_partition),
		cmocka_unit_test(test_pma_redirect_qkey_and_gid),
		cmocka_unit_test_setup_teardown(test_state_file_corruption,
						setup_path, teardown_path),
		cmocka_unit_test_setup_teardown(test_state_file_links,
						setup_path, teardown_path),
		cmocka_unit_test_setup_teardown(test_state_file_from_before,
						setup_path, teardown_path),
		cmocka_unit_test(test_progress_and_order),
		cmocka_unit_test(test_device_lost_mid_sweep),
		cmocka_unit_test(test_vl_xmit_wait),
		cmocka_unit_test(test_samples_control_tick),
		cmocka_unit_test(test_fec_mode_and_pie_timeout),
		cmocka_unit_test(test_shared_table),
		cmocka_unit_test(test_unspread_is_bounded),
		cmocka_unit_test(test_dual_port_ca),
		cmocka_unit_test(test_silent_pma_asked_early),
		cmocka_unit_test(test_samples_control_silent_fabric),
	};

	return cmocka_run_group_tests_name("counters", tests, NULL, NULL);
}
