/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How the Prometheus renderers render (prom.h and each family's
 * renderer): a type alone, with no code, so that the families need not
 * include the API above them.
 */
#ifndef IBW_PROM_OPTS_H
#define IBW_PROM_OPTS_H

/*
 * How to render. The zero value is the default: the text format 0.0.4,
 * the rows infiniband_exporter gives (connected ports), samples without
 * times.
 */
struct ibw_prom_opts {
	int om; /* OpenMetrics 1.0 (counter families without _total, EOF) */
	/* counters of every switch port, connected or not */
	int all_ports;
	/* Port counter samples with the time of their reading (the
	 * default is without: docs/api.md says when to choose which). */
	int timestamps;
	/* For node_exporter's textfile collector, as the exporter's
	 * --exporter.runonce writes it: collectors named "...-runonce",
	 * infiniband_exporter_last_execution, no timestamps (the
	 * collector refuses them). */
	int runonce;
	/* the exporter's rcv-err collectors (--detail-counters) */
	int rcv_err;
	/* the live part: process_* of this process */
	int process;
	/* no ibwatch_module_* series (docs/hardware.md: about 16 a module,
	 * more than the counters on a big fabric) */
	int no_modules;
	/* Which families carry the fabric label (docs/api.md, "The
	 * fabric label"): IBW_PROM_FABRIC_*, the zero value ibwatch_*
	 * only, so that the exporter's series stay as it has them. */
	int fabric_label;
	/* The fabric label's value where it is set (fabric-name), in
	 * place of the identity: a name that stays when the SM moves. */
	const char *fabric_name;
};

enum {
	IBW_PROM_FABRIC_IBWATCH,
	IBW_PROM_FABRIC_ALL,
	IBW_PROM_FABRIC_NONE,
};

#endif
