// SPDX-License-Identifier: BSD-2-Clause
/*
 * The fixture snapshot of the renderer and MIB unit tests: a switch and
 * two hosts, counters, two endports.
 */
#include <stdio.h>
#include <stdlib.h>

#include "snapfixture.h"

struct ibw_snapshot *ibw_test_snapshot(void)
{
	struct ibw_snapshot *s = ibw_snapshot_new();
	struct ibw_fabric *f = ibw_fabric_new();
	struct ibw_fnode *n;
	unsigned i, p;

	n = ibw_fabric_add_node(f, 0x0002c90300000001ull, 4);
	n->ni.node_type = IBW_NODE_SWITCH;
	n->ni.num_ports = 3;
	n->ni.vendor_id = 0x2c9;
	n->lid = 1;
	snprintf(n->desc, sizeof(n->desc), "leaf \"A\" \\ 1");
	ibw_dest_dr_parse(&n->dr, "0,1");
	for (p = 0; p < 4; p++) {
		n->ports[p].have_pi = 1;
		n->ports[p].guid = n->guid;
		n->ports[p].pi.lid = 1;
		n->ports[p].pi.state = p == 3 ? 1 : 4;
		n->ports[p].pi.phys_state = p == 3 ? 2 : 5;
		n->ports[p].pi.width_active = 2;
		n->ports[p].pi.speed_active = 4;
		/* a QDR switch: 1x and 4x, SDR to QDR */
		n->ports[p].pi.width_enabled = 3;
		n->ports[p].pi.width_supported = 3;
		n->ports[p].pi.speed_enabled = 7;
		n->ports[p].pi.speed_supported = 7;
	}
	for (i = 0; i < 2; i++) {
		n = &f->nodes[0];
		n->ports[i + 1].remote_guid = 0x0002c90300000010ull + i;
		n->ports[i + 1].remote_port = 1;
		n = ibw_fabric_add_node(f, 0x0002c90300000010ull + i, 2);
		n->ni.node_type = IBW_NODE_CA;
		n->ni.num_ports = 1;
		n->lid = (uint16_t)(2 + i);
		snprintf(n->desc, sizeof(n->desc), "node%04u HCA-1", i + 1);
		ibw_dest_dr_parse(&n->dr, i ? "0,1,2" : "0");
		n->ports[1].have_pi = 1;
		n->ports[1].guid = 0x0002c90300000020ull + i;
		n->ports[1].pi.lid = (uint16_t)(2 + i);
		n->ports[1].pi.state = 4;
		n->ports[1].pi.phys_state = 5;
		n->ports[1].pi.width_active = 2;
		n->ports[1].pi.speed_active = 4;
		n->ports[1].pi.width_enabled = 3;
		n->ports[1].pi.width_supported = 3;
		n->ports[1].pi.speed_enabled = 7;
		n->ports[1].pi.speed_supported = 7;
		n->ports[1].remote_guid = 0x0002c90300000001ull;
		n->ports[1].remote_port = (uint8_t)(i + 1);
	}
	ibw_fabric_freeze(f);
	f->local_guid = 0x0002c90300000010ull;
	s->fabric = f;
	s->taken_us = T0;
	s->started_us = T0 - 60000000ull;
	s->fresh_until_us = T0 + 90000000ull;
	s->local_state = 4;
	s->discoveries = 2;
	s->counter_sweeps = 3;
	s->have_state_file = 1;
	s->state_file.snapshots = 1;
	s->state_file.snapshot_bytes = 53883;
	s->state_file.batches = 2;
	s->state_file.batch_bytes = 21436;
	s->state_file.bytes = 53883 + 21436;
	s->state_file.journal_bytes = 21436;
	s->state_file.loaded_batches = 2;
	s->discovery.start_us = T0 - 1000;
	s->discovery.duration_us = 812;
	s->discovery.mads = 17;
	s->counters.start_us = T0 - 500;
	s->counters.duration_us = 430;
	s->counters.mads = 12;
	s->counters.timeouts = 1;
	/* reading the CAs took 0.21 ms, the switch 0.38 ms */
	s->counters_busy_us[0] = 210;
	s->counters_busy_us[1] = 380;
	s->unreachable_ports = 1;
	/* the last counter sweep: spread, done, one port unanswered */
	s->counter_sweep.start_us = T0 - 500;
	s->counter_sweep.end_us = T0 - 70;
	s->counter_sweep.spread_us = 24000000;
	s->counter_sweep.ports = 5;
	s->counter_sweep.read = 4;
	s->counter_sweep.unreachable = 1;
	/* ... read with the LIDs in flux: every reading checked, the one
	 * unread another node's */
	s->counter_sweep.verified = 5;
	s->counter_sweep.lid_moved = 1;
	s->counter_sweep_reason = IBW_SWEEP_INTERVAL;
	s->counter_interval_us = 30000000;
	s->counter_verify.lids_in_flux = 1;
	s->counter_verify.nodeinfos = 4;
	s->counter_verify.verified = 9;
	s->counter_verify.lid_moved = 1;
	/* counters: switch ports 1-3 and the hosts' ports, sorted */
	s->nports = 5;
	s->ports = calloc(5, sizeof(*s->ports));
	for (i = 0; i < 5; i++) {
		struct ibw_port_ctrs *pc = &s->ports[i];
		int c;

		pc->guid = i < 3 ? 0x0002c90300000001ull
				 : 0x0002c90300000010ull + (i - 3);
		pc->port = (uint8_t)(i < 3 ? i + 1 : 1);
		pc->is_switch = i < 3;
		pc->have_ext = 1;
		pc->updated_us = T0 - 200;
		pc->read_dur_us = 150 + (uint32_t)i;
		for (c = 0; c < IBW_CTR_MAX; c++) {
			struct ibw_ctr_val *v = ibw_ctr_val_w(pc, c);

			if (!v)
				abort();
			v->have_raw = 1;
			v->total = (uint64_t)(i * 100 + c);
			v->raw = v->total;
		}
	}
	s->ports[1].v[IBW_CTR_SYMBOL_ERRORS].total = 1000;
	s->ports[1].v[IBW_CTR_SYMBOL_ERRORS].raw = 1000;
	s->ports[1].v[IBW_CTR_SYMBOL_ERRORS].over_threshold = 1;
	s->ports[1].error_increments = 7;
	s->ports[2].stale = 1;
	s->ports[2].unreachable = 2;
	/* node0001's port: FEC counters read in the RS-FEC form */
	{
		struct ibw_fec *fec = calloc(1, sizeof(*fec));
		int c;

		fec->refs = 1;
		fec->layout = IBW_FEC_RS;
		for (c = IBW_FEC_SYNC_HDR; c < IBW_FEC_ERR_DET0; c++)
			fec->have |= 1ull << c;
		for (c = IBW_FEC_CORR_SYM0; c < IBW_FEC_NFIELDS; c++)
			fec->have |= 1ull << c;
		fec->raw[IBW_FEC_CORR_SYM0] = 12345;
		fec->total[IBW_FEC_CORR_SYM0] = 112345;
		fec->raw[IBW_FEC_PORT_CORR_SYM] = 12354;
		fec->total[IBW_FEC_PORT_CORR_SYM] = 112354;
		fec->raw[IBW_FEC_PORT_UNCORR_BLK] = 1;
		fec->total[IBW_FEC_PORT_UNCORR_BLK] = 3;
		fec->resets = 1;
		s->ports[3].fec = fec;
	}
	/* a 64-bit total past INT64_MAX, exactly */
	s->ports[4].v[IBW_CTR_XMIT_PKTS].total = 18446744073709551606ull;
	s->ports[4].v[IBW_CTR_XMIT_PKTS].raw = 18446744073709551606ull;
	s->nendports = 2;
	s->endports = calloc(2, sizeof(*s->endports));
	for (i = 0; i < 2; i++) {
		struct ibw_endport *e = &s->endports[i];

		e->port_guid = 0x0002c90300000020ull + i;
		e->node_guid = 0x0002c90300000010ull + i;
		e->port = 1;
		e->lid = (uint16_t)(2 + i);
		e->found = 1;
		snprintf(e->name, sizeof(e->name), "node%04u HCA-1", i + 1);
		e->state = i ? IBW_EP_DOWN : IBW_EP_UP;
		e->state_since_us = T0 - 5000000;
		e->sent = 10;
		e->received = i ? 4 : 10;
		e->window_n = 10;
		e->window_lost = i ? 6 : 0;
		e->rtt_last_us = e->rtt_min_us = e->rtt_max_us = 25;
		e->rtt_avg_us = 25.0;
		e->last_method = IBW_PING_PMA;
		e->last_reply_us = T0 - 1000000;
	}
	if (ibw_snapshot_seal(s) < 0) {
		ibw_snapshot_unref(s);
		return NULL;
	}
	return s;
}
