// SPDX-License-Identifier: BSD-2-Clause
/* The counter sweep's unit tests' fixture (ctr_fx.h). */

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

#include "ctr_fx.h"

char path[64];

int setup_path(void **state)
{
	snprintf(path, sizeof(path), "/tmp/ibw-test-state.%d", (int)getpid());
	return 0;
}

int teardown_path(void **state)
{
	unlink(path);
	return 0;
}

uint16_t served_lid;

struct ibw_fabric *one_ca(uint16_t lid, int is_protected)
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

void rig_init_cfg(struct rig *r, const struct ibw_counters_opts *co,
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

void rig_init_opts(struct rig *r, const struct ibw_counters_opts *co)
{
	rig_init_cfg(r, co, 20);
}

void rig_init(struct rig *r)
{
	rig_init_opts(r, NULL);
}

void rig_init_in_flux(struct rig *r)
{
	struct ibw_counters_opts co = { .check = IBW_CHECK_IN_FLUX,
					.retries = -1 };

	rig_init_opts(r, &co);
}

void rig_free(struct rig *r)
{
	ibw_engine_free(r->e);
	ibw_counters_free(r->c);
	ibw_events_free(r->ev);
	ibw_fabric_unref(r->f);
	ibw_transport_close(r->t);
	ibw_loop_free(r->loop);
}

void swept(struct ibw_counters *c, void *arg)
{
	((struct rig *)arg)->done = 1;
}

uint64_t fab_guid(const struct ibw_fabric *f, uint16_t lid)
{
	const struct ibw_fnode *n = ibw_fabric_find_lid(f, lid, NULL);

	return n ? n->guid : 0;
}

void serve(struct rig *r, struct fake *fk)
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

void sweep(struct rig *r, struct fake *fk)
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

unsigned count_events(struct rig *r, enum ibw_event_kind k)
{
	struct ibw_event ev[64];
	unsigned n = ibw_events_since(r->ev, 0, ev, 64), i, c = 0;

	for (i = 0; i < n; i++)
		c += ev[i].kind == k;
	return c;
}

const struct redir to9 = { 9, 0x80010000u, 0xffff, NULL };

void serve_redirect(struct rig *r, const struct redir *rd, unsigned *at_home,
		    unsigned *at_redirect)
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

void sweep_redirect(struct rig *r, const struct redir *rd, unsigned *home,
		    unsigned *away)
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

struct ibw_fabric *switch_and_ca(void)
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

int reopen_mem(struct ibw_transport **out, void *arg)
{
	struct rig *r = arg;

	*out = r->t = ibw_mem_transport_new();
	return *out ? 0 : -ENOMEM;
}

int back_calls;

void on_back(struct ibw_engine *e, void *arg)
{
	back_calls++;
}

int keep_line(const char *line, void *arg)
{
	struct lines *ls = arg;

	if (ls->n == 8)
		return -ENOSPC;
	ls->l[ls->n] = strdup(line);
	return ls->l[ls->n++] ? 0 : -ENOMEM;
}

void free_lines(struct lines *ls)
{
	unsigned i;

	for (i = 0; i < ls->n; i++)
		free(ls->l[i]);
	ls->n = 0;
}

struct ibw_fabric *many_cas(uint64_t first, unsigned n)
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

void run_until_done(struct rig *r, struct fake *fk)
{
	uint64_t end = ibw_now_us() + 30000000u;

	while (!r->done && ibw_now_us() < end) {
		serve(r, fk);
		ibw_loop_run_once(r->loop, 5000);
	}
	assert_true(r->done);
}

void assert_sorted(struct ibw_counters *c, unsigned want)
{
	unsigned n = ibw_counters_nports(c), i;

	assert_int_equal(n, want);
	for (i = 1; i < n; i++)
		assert_true(
			ibw_counters_port_cmp(ibw_counters_port_at(c, i - 1),
					      ibw_counters_port_at(c, i)) < 0);
}

struct ibw_fabric *one_fec_ca(void)
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

unsigned run_queue_max(struct rig *r, struct fake *fk)
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

void sweep_over(struct rig *r, const struct ibw_fabric *f, struct fake *fk)
{
	r->done = 0;
	assert_int_equal(ibw_counters_sweep(r->c, f, 0, swept, r), 0);
	run_until_done(r, fk);
}

void serve_dual(struct rig *r, unsigned *per_lid, int lid6_silent)
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
