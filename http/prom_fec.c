// SPDX-License-Identifier: BSD-2-Clause
/*
 * The FEC counters (PortExtendedSpeedsCounters, core/fec.h) as
 * Prometheus series, for the ports the last counter sweep read them of:
 * a port whose reading failed has no samples (absent, not frozen).
 * Port-wide totals in both layouts, and one series per active lane of
 * what the lane corrected (FC-FEC: blocks, RS-FEC: symbols); docs/api.md
 * says what they cost.
 */
#include <inttypes.h>
#include <stdio.h>

#include "links.h"
#include "prom_exporter.h"
#include "prom_fec.h"

/* Lanes of the widest active width (PortInfo:LinkWidthActive). */
static unsigned lanes_of(unsigned width_active)
{
	return width_active & 8	   ? 12
	       : width_active & 4  ? 8
	       : width_active & 2  ? 4
	       : width_active & 16 ? 2
	       : width_active & 1  ? 1
				   : 0;
}

/* @f's total summed over the lanes from @first, or the port-wide field
 * @port where the layout has one (RS-FEC). */
static uint64_t sum_lanes(const struct ibw_fec *f, int first, int port)
{
	uint64_t t = 0;
	int k;

	if (port >= 0 && (f->have >> port & 1))
		return f->total[port];
	for (k = 0; k < IBW_FEC_LANES; k++)
		if (f->have >> (first + k) & 1)
			t += f->total[first + k];
	return t;
}

enum {
	FAM_CORR_BLK,
	FAM_UNCORR_BLK,
	FAM_CORR_SYM,
	FAM_SYNC,
	FAM_UNK,
	FAM_LANE,
	NFAM
};

static const struct {
	const char *name, *help;
} fams[NFAM] = {
	{ "fec_corrected_blocks_total",
	  "Blocks FEC corrected (PortExtendedSpeedsCounters: FC-FEC "
	  "FECCorrectableBlockCtr summed over lanes, RS-FEC "
	  "PortFECCorrectableBlockCtr), a 64-bit total." },
	{ "fec_uncorrectable_blocks_total",
	  "Blocks FEC could not correct (FC-FEC FECUncorrectableBlockCtr "
	  "summed over lanes, RS-FEC PortFECUncorrectableBlockCtr)." },
	{ "fec_corrected_symbols_total",
	  "Symbols RS-FEC corrected (PortFECCorrectedSymbolCtr); RS-FEC "
	  "ports only." },
	{ "fec_sync_header_errors_total",
	  "SyncHeaderErrorCounter of PortExtendedSpeedsCounters." },
	{ "fec_unknown_blocks_total",
	  "UnknownBlockCounter of PortExtendedSpeedsCounters." },
	{ "fec_lane_corrected_total",
	  "What FEC corrected on one active lane: blocks (FC-FEC, "
	  "layout=\"fc\") or symbols (RS-FEC, layout=\"rs\")." },
};

static int fec_read(const struct ibw_snapshot *s,
		    const struct ibw_snapshot_port *pv, int is_switch)
{
	const struct ibw_port_ctrs *pc = pv->ctrs;

	return pv->node->is_switch == is_switch && pc && pc->fec &&
	       !pc->stale && pc->fec_fail == IBW_CTR_FAIL_NONE &&
	       pc->updated_us >= s->started_us && !pv->node->n->gone &&
	       !pv->gone;
}

void ibw_prom_fec(struct ibw_pb *b, const struct ibw_snapshot *s)
{
	const struct ibw_snapshot_port *pv;
	int is_switch, fam;
	char name[96];

	for (is_switch = 1; is_switch >= 0; is_switch--) {
		for (fam = 0; fam < NFAM; fam++) {
			int any = 0;

			snprintf(name, sizeof(name), "ibwatch_%s_port_%s",
				 ibw_pb_kind(is_switch), fams[fam].name);
			ibw_snapshot_foreach_port(s, pv) {
				const struct ibw_fec *f;
				uint64_t guid = ibw_prom_port_guid(pv);
				unsigned port = pv->p->num, k, n;
				int rs;

				if (!fec_read(s, pv, is_switch))
					continue;
				f = pv->ctrs->fec;
				rs = f->layout == IBW_FEC_RS;
				if (fam == FAM_CORR_SYM && !rs)
					continue;
				if (!any++)
					ibw_pb_family(b, name, "counter",
						      fams[fam].help);
				switch (fam) {
				case FAM_LANE:
					n = pv->p->have_pi
						    ? lanes_of(
							      pv->p->pi.width_active)
						    : 0;
					for (k = 0; k < n; k++)
						ibw_pb_put(
							b,
							"%s{guid=\"0x%016" PRIx64
							"\",port=\"%u\","
							"lane=\"%u\",layout="
							"\"%s\"} %" PRIu64 "\n",
							name, guid, port, k,
							rs ? "rs" : "fc",
							f->total[(rs ? IBW_FEC_CORR_SYM0
								     : IBW_FEC_CORR_BLK0) +
								 k]);
					continue;
				case FAM_CORR_BLK:
					ibw_pb_put(
						b,
						"%s{guid=\"0x%016" PRIx64
						"\",port=\"%u\"} %" PRIu64 "\n",
						name, guid, port,
						sum_lanes(
							f, IBW_FEC_CORR_BLK0,
							rs ? IBW_FEC_PORT_CORR_BLK
							   : -1));
					continue;
				case FAM_UNCORR_BLK:
					ibw_pb_put(
						b,
						"%s{guid=\"0x%016" PRIx64
						"\",port=\"%u\"} %" PRIu64 "\n",
						name, guid, port,
						sum_lanes(
							f, IBW_FEC_UNCORR_BLK0,
							rs ? IBW_FEC_PORT_UNCORR_BLK
							   : -1));
					continue;
				}
				ibw_pb_put(
					b,
					"%s{guid=\"0x%016" PRIx64
					"\",port=\"%u\"} %" PRIu64 "\n",
					name, guid, port,
					f->total[fam == FAM_CORR_SYM
							 ? IBW_FEC_PORT_CORR_SYM
						 : fam == FAM_SYNC
							 ? IBW_FEC_SYNC_HDR
							 : IBW_FEC_UNK_BLOCK]);
			}
		}
	}
}

/* The windows judged and shown: the sweep window is in /api/v1/links. */
static const enum ibw_fwin shown[] = { IBW_FWIN_12M, IBW_FWIN_125M,
				       IBW_FWIN_DAY };

static void ber_family(struct ibw_pb *b, const struct ibw_link *const *by,
		       size_t n, int effective)
{
	const char *name = effective ? "ibwatch_link_effective_ber"
				     : "ibwatch_link_raw_ber";
	size_t i, w;
	int any = 0, e;

	for (i = 0; i < n; i++) {
		const struct ibw_link *k = by[i];

		if (!k->end[0].fec && !k->end[1].fec)
			continue;
		if (!any++)
			ibw_pb_family(
				b, name, "gauge",
				effective ? "Post-FEC bit error rate from "
					    "uncorrectable blocks and symbol "
					    "errors, the worse direction, by "
					    "window (docs/links.md)."
					  : "Pre-FEC bit error rate from what "
					    "FEC corrected, the worse "
					    "direction, by window "
					    "(docs/links.md).");
		for (w = 0; w < sizeof(shown) / sizeof(shown[0]); w++) {
			double worst = -1;

			for (e = 0; e < 2; e++) {
				const struct ibw_link_fec *f = k->end[e].fec;
				double v;

				if (!f)
					continue;
				if (f->saturated) {
					/* one direction unknown: the worse
					 * is unknown too */
					worst = -1;
					break;
				}
				v = effective ? f->win[shown[w]].effective_ber
					      : f->win[shown[w]].raw_ber;
				if (v > worst)
					worst = v;
			}
			if (worst < 0)
				continue;
			ibw_prom_link_labels(b, name, k);
			ibw_pb_put(b, ",window=\"%s\"} %.6g\n",
				   ibw_fwin_name(shown[w]), worst);
		}
	}
}

/* @k's end @e as the receiver of a per-direction series. */
static void receiver(struct ibw_pb *b, const char *name,
		     const struct ibw_link *k, int e)
{
	ibw_prom_link_labels(b, name, k);
	ibw_pb_put(b,
		   ",receiver_guid=\"0x%016" PRIx64 "\",receiver_port=\"%u\"",
		   k->end[e].guid, (unsigned)k->end[e].port);
}

void ibw_prom_link_fec(struct ibw_pb *b, const struct ibw_link *const *by,
		       size_t n)
{
	size_t i;
	unsigned l;
	int e, any = 0;

	ber_family(b, by, n, 0);
	ber_family(b, by, n, 1);
	/* Per lane only where the raw BER is over a threshold: a bounded
	 * number of series, there when someone needs them. */
	for (i = 0; i < n; i++)
		for (e = 0; e < 2; e++) {
			const struct ibw_link_fec *f = by[i]->end[e].fec;

			if (!f || f->raw_state == IBW_HEALTH_OK)
				continue;
			if (!any++)
				ibw_pb_family(
					b, "ibwatch_link_lane_raw_ber", "gauge",
					"Pre-FEC bit error rate of each lane "
					"over 12 minutes, at a receiver whose "
					"raw BER is over a threshold.");
			for (l = 0; l < f->lanes; l++) {
				receiver(b, "ibwatch_link_lane_raw_ber", by[i],
					 e);
				ibw_pb_put(b, ",lane=\"%u\"} %.6g\n", l,
					   ibw_link_fec_lane_ber(
						   &f->win[IBW_FWIN_12M],
						   f->lanes, l));
			}
		}
	any = 0;
	for (i = 0; i < n; i++)
		for (e = 0; e < 2; e++) {
			const struct ibw_link_fec *f = by[i]->end[e].fec;

			if (!f || f->bad_lane < 0)
				continue;
			if (!any++)
				ibw_pb_family(
					b, "ibwatch_link_bad_lane", "gauge",
					"The lane that carries a receiver's "
					"raw BER (docs/links.md), where one "
					"does.");
			receiver(b, "ibwatch_link_bad_lane", by[i], e);
			ibw_pb_put(b, "} %d\n", f->bad_lane);
		}
	/* Which judges each receiver that has FEC counters: they, or its
	 * symbol errors where FEC does not run (docs/links.md). */
	any = 0;
	for (i = 0; i < n; i++)
		for (e = 0; e < 2; e++) {
			const struct ibw_link_end *x = &by[i]->end[e];

			if (!x->fec)
				continue;
			if (!any++)
				ibw_pb_family(
					b, "ibwatch_link_judged_by_fec",
					"gauge",
					"1 where a receiver's FEC counters "
					"judge it, 0 where its symbol errors "
					"do (FEC not running); why says why "
					"(docs/links.md).");
			receiver(b, "ibwatch_link_judged_by_fec", by[i], e);
			ibw_pb_put(b, ",why=\"%s\"} %d\n",
				   ibw_link_judge_why_str(
					   (enum ibw_link_judge_why)x->why),
				   x->by_fec ? 1 : 0);
		}
}
