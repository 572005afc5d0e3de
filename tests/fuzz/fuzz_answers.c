// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz target: every MAD decoder in the context it runs in. A probe
 * (discovery, a counter sweep, an SA lookup, an echo ping, a trace, a
 * hardware sweep of NVIDIA's access registers and cable modules) runs
 * on the in-memory transport and each MAD it sends is answered at once
 * from the input: the request's header with the response bit (so the
 * engine matches it), then a status, a length and payload bytes taken
 * from the input. Answers that are short, carry odd statuses or nonsense
 * attributes must be refused cleanly, never crash or hang the probe.
 *
 * Input: byte 0 picks the probe; then per answer: 2 status bytes, 1
 * length byte (answer length = 24 + that * 232 / 255), payload.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "discover.h"
#include "engine.h"
#include "fabric.h"
#include "hw.h"
#include "loop.h"
#include "ping.h"
#include "sa.h"
#include "trace.h"
#include "transport_mem.h"

static const uint8_t *in;
static size_t left;
static int done;

static void answer_all(struct ibw_transport *t)
{
	uint8_t req[IBW_MAD_SIZE], ans[IBW_MAD_SIZE];

	while (ibw_mem_next_sent(t, req, NULL)) {
		size_t len, take;

		if (left < 3)
			continue; /* unanswered: cancelled at the end */
		memcpy(ans, req, sizeof(ans));
		ibw_mem_make_response(ans, 0);
		ans[4] = in[0];
		ans[5] = in[1];
		len = 24 + (size_t)in[2] * (IBW_MAD_SIZE - 24) / 255;
		in += 3;
		left -= 3;
		take = len - 24 < left ? len - 24 : left;
		memset(ans + 24, 0, IBW_MAD_SIZE - 24);
		memcpy(ans + 24, in, take);
		in += take;
		left -= take;
		ibw_mem_inject(t, ans, len, 0);
	}
}

/* L port 1 -- S port 1; S port 2 -- D port 1 (lids 1, 2, 3) */
static struct ibw_fabric *small_fabric(void)
{
	struct ibw_fabric *f = ibw_fabric_new();
	struct ibw_fnode *n;
	unsigned p;

	n = ibw_fabric_add_node(f, 0x100, 3);
	n->ni.node_type = IBW_NODE_SWITCH;
	n->ni.num_ports = 2;
	ibw_dest_dr_parse(&n->dr, "0,1");
	for (p = 0; p < 3; p++) {
		n->ports[p].num = (uint8_t)p;
		n->ports[p].have_pi = 1;
		n->ports[p].pi.lid = 2;
		n->ports[p].pi.state = 4;
	}
	n->ports[1].remote_guid = 0x10;
	n->ports[1].remote_port = 1;
	n->ports[2].remote_guid = 0x11;
	n->ports[2].remote_port = 1;
	for (p = 0; p < 2; p++) {
		n = ibw_fabric_add_node(f, 0x10 + p, 2);
		n->ni.node_type = IBW_NODE_CA;
		n->ni.num_ports = 1;
		ibw_dest_dr_parse(&n->dr, p ? "0,1,2" : "0");
		n->ports[1].num = 1;
		n->ports[1].have_pi = 1;
		n->ports[1].pi.lid = (uint16_t)(p ? 3 : 1);
		n->ports[1].pi.state = 4;
		n->ports[1].remote_guid = 0x100;
		n->ports[1].remote_port = (uint8_t)(p + 1);
	}
	ibw_fabric_freeze(f);
	f->local_guid = 0x10;
	return f;
}

static void on_fabric(struct ibw_fabric *f, void *arg)
{
	ibw_fabric_unref(f);
	done = 1;
}

static void on_counters(struct ibw_counters *c, void *arg)
{
	done = 1;
}

static void on_sa(const struct ibw_sa_lid *r, void *arg)
{
	done = 1;
}

static void on_ping(const struct ibw_ping_summary *s, void *arg)
{
	done = 1;
}

static void on_trace(const struct ibw_trace *t, void *arg)
{
	done = 1;
}

static void on_hw(struct ibw_hw_view *v, void *arg)
{
	done = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ibw_engine_config cfg = { .max_inflight = 8,
					 .max_per_dest = 4,
					 .timeout_ms = 1 };
	struct ibw_loop *loop;
	struct ibw_transport *t;
	struct ibw_engine *e;
	struct ibw_discover *d = NULL;
	struct ibw_counters *c = NULL;
	struct ibw_pinger *p = NULL;
	struct ibw_tracer *tr = NULL;
	struct ibw_hw *hw = NULL;
	struct ibw_hw_opts ho;
	struct ibw_fabric *f = NULL;
	struct ibw_events *ev;
	struct ibw_counters_opts co;
	struct ibw_ping_opts po;
	unsigned i;
	int rc = -1;

	if (size < 1)
		return 0;
	in = data + 1;
	left = size - 1;
	done = 0;
	loop = ibw_loop_new();
	t = ibw_mem_transport_new();
	e = ibw_engine_new(loop, t, &cfg);
	ev = ibw_events_new(64);
	switch (data[0] % 6) {
	case 0:
		d = ibw_discover_new(e, NULL);
		rc = d ? ibw_discover_start(d, on_fabric, NULL) : -1;
		break;
	case 1:
		memset(&co, 0, sizeof(co));
		co.retries = -1;
		co.details = data[0] & 0x80;
		f = small_fabric();
		c = ibw_counters_new(e, ev, &co);
		rc = c ? ibw_counters_sweep(c, f, 0, on_counters, NULL) : -1;
		break;
	case 2:
		rc = data[0] & 0x80
			     ? ibw_sa_lid_by_name(e, 1, "node0001 HCA-1", on_sa,
						  NULL)
			     : ibw_sa_lid_by_guid(e, 1, 0x10, on_sa, NULL);
		break;
	case 3:
		memset(&po, 0, sizeof(po));
		po.retries = -1;
		p = ibw_pinger_new(e, ev, &po);
		rc = p ? ibw_ping_run(
				 p, 3,
				 (enum ibw_ping_method)(1 + (data[0] >> 3) % 3),
				 (enum ibw_echo_type)((data[0] >> 5) % 4), 3, 1,
				 on_ping, NULL)
		       : -1;
		break;
	case 4:
		f = small_fabric();
		tr = ibw_tracer_new(e, 1);
		if (tr) {
			ibw_tracer_set_local_lid(tr, 1);
			if (data[0] & 0x80)
				ibw_tracer_set_fabric(tr, f);
			rc = ibw_trace_start(
				tr, 3, IBW_TRACE_REVERSE | IBW_TRACE_CONFIRM, 0,
				on_trace, NULL);
		}
		break;
	case 5:
		/* every node NVIDIA's, every port with its link up: the
		 * probe, the registers and the modules' pages */
		f = small_fabric();
		for (i = 0; i < f->nnodes; i++) {
			unsigned k;

			f->nodes[i].ni.vendor_id = IBW_HW_VENDOR_NVIDIA;
			f->nodes[i].lid = (uint16_t)(i + 1);
			for (k = 0; k < f->nodes[i].nports; k++)
				f->nodes[i].ports[k].pi.phys_state =
					IBW_PHYS_LINKUP;
		}
		memset(&ho, 0, sizeof(ho));
		hw = ibw_hw_new(e, loop, &ho, ev, on_hw, NULL);
		if (hw) {
			ibw_hw_set_fabric(hw, f);
			rc = 0;
		}
		break;
	}
	/* Answer everything sent while the input lasts; bounded. */
	for (i = 0; rc == 0 && !done && i < 512; i++) {
		ibw_loop_run_once(loop, 0);
		answer_all(t);
		if (left < 3 && !ibw_mem_sent_count(t))
			break;
	}
	/* The engine first: it cancels what is in flight. */
	ibw_engine_free(e);
	ibw_discover_free(d);
	ibw_counters_free(c);
	ibw_pinger_free(p);
	ibw_tracer_free(tr);
	ibw_hw_free(hw);
	ibw_fabric_unref(f);
	ibw_events_free(ev);
	ibw_transport_close(t);
	ibw_loop_free(loop);
	return 0;
}
