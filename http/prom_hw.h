/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hardware health (core/hw.h) as Prometheus series (http/prom_hw.c):
 * infiniband_exporter's ibswinfo collector's families, by its names and
 * labels, for the switches, and ibwatch's own for every sensor of every
 * device (docs/api.md).
 */
#ifndef IBW_PROM_HW_H
#define IBW_PROM_HW_H

#include "prom_buf.h"
#include "prom_opts.h"
#include "snapshot.h"

/* @o->no_modules: without the ibwatch_module_* families */
void ibw_prom_hw(struct ibw_pb *b, const struct ibw_snapshot *s,
		 const struct ibw_prom_opts *o);
/* The switches the families above have (read this sweep). */
unsigned ibw_prom_hw_switches(const struct ibw_snapshot *s);
/* The exporter's infiniband_switch_collect_{error,timeout,duration_seconds}
 * (@what 0, 1, 2; family @name) rows of its ibswinfo collector: they
 * share the switch collector's families, which http/prom_exporter.c
 * opens. */
void ibw_prom_hw_collect(struct ibw_pb *b, const struct ibw_snapshot *s,
			 unsigned what, const char *name);

#endif
