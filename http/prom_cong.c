// SPDX-License-Identifier: BSD-2-Clause
/*
 * The congestion counters (core/cong.h) as Prometheus series, for the
 * ports whose PMA has them and the last counter sweep read them: one
 * series per port and attribute, the per-VL and per-SL counters summed
 * (docs/api.md); a port whose read failed has none (absent, not frozen).
 */
#include <inttypes.h>
#include <stdio.h>

#include "prom_cong.h"
#include "prom_exporter.h"

static const struct {
	enum ibw_cong_attr a;
	int field; /* -1: all the attribute's fields, summed */
	const char *name, *help;
} fams[] = {
	{ IBW_CONG_XMIT_CC, 0, "xmit_time_cong_total",
	  "PortXmitConCtrl:PortXmitTimeCong, the time the port spent in "
	  "congestion control as a 64-bit total." },
	{ IBW_CONG_RCV_CC, 0, "rcv_fecn_total",
	  "PortRcvConCtrl:PortPktRcvFECN, packets received marked FECN." },
	{ IBW_CONG_RCV_CC, 1, "rcv_becn_total",
	  "PortRcvConCtrl:PortPktRcvBECN, packets received marked BECN." },
	{ IBW_CONG_SL_FECN, -1, "sl_rcv_fecn_total",
	  "PortSLRcvFECN, summed over the 16 SLs." },
	{ IBW_CONG_SL_BECN, -1, "sl_rcv_becn_total",
	  "PortSLRcvBECN, summed over the 16 SLs." },
	{ IBW_CONG_VL_XMIT_TC, -1, "vl_xmit_time_cong_total",
	  "PortVLXmitTimeCong, summed over VLs 0 to 14." },
	{ IBW_CONG_SW_VL, -1, "vl_congestion_total",
	  "SwPortVLCongestion, summed over the 16 VLs (switch ports)." },
};

static int cong_read(const struct ibw_snapshot *s,
		     const struct ibw_snapshot_port *pv, int is_switch)
{
	const struct ibw_port_ctrs *pc = pv->ctrs;

	return pv->node->is_switch == is_switch && pc && pc->cong &&
	       !pc->stale && pc->cong_fail == IBW_CTR_FAIL_NONE &&
	       pc->updated_us >= s->started_us && !pv->node->n->gone &&
	       !pv->gone;
}

void ibw_prom_cong(struct ibw_pb *b, const struct ibw_snapshot *s)
{
	const struct ibw_snapshot_port *pv;
	unsigned f, k;
	int is_switch;
	char name[96];

	for (is_switch = 1; is_switch >= 0; is_switch--) {
		for (f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
			unsigned first = ibw_cong_first(fams[f].a);
			int any = 0;

			snprintf(name, sizeof(name), "ibwatch_%s_port_%s",
				 ibw_pb_kind(is_switch), fams[f].name);
			ibw_snapshot_foreach_port(s, pv) {
				const struct ibw_cong *g;
				uint64_t v = 0;

				if (!cong_read(s, pv, is_switch))
					continue;
				g = pv->ctrs->cong;
				if (!(g->have >> fams[f].a & 1))
					continue;
				if (fams[f].field >= 0)
					v = g->total[first +
						     (unsigned)fams[f].field];
				else
					for (k = 0;
					     k < ibw_cong_count(fams[f].a); k++)
						v += g->total[first + k];
				if (!any++)
					ibw_pb_family(b, name, "counter",
						      fams[f].help);
				ibw_pb_put(b,
					   "%s{guid=\"0x%016" PRIx64
					   "\",port=\"%u\"} %" PRIu64 "\n",
					   name, ibw_prom_port_guid(pv),
					   (unsigned)pv->p->num, v);
			}
		}
	}
}
