/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Prometheus text format 0.0.4 from a snapshot. Port counters carry the
 * names of the most used InfiniBand exporter
 * (infiniband_{switch,hca}_port_*_total{guid,port}) so that dashboards
 * and alert rules keep working; ibwatch's own series use ibwatch_.
 */
#ifndef IBW_PROM_H
#define IBW_PROM_H

#include <stddef.h>

#include "agentx_status.h"
#include "engine.h"
#include "prom_opts.h"
#include "snapshot.h"

/* Render @s (and the engine's counters, if @st) into a new buffer the
 * caller frees; *@len gets its length. @now_us: CLOCK_REALTIME. @o NULL:
 * the defaults. */
char *ibw_prom_render(const struct ibw_snapshot *s,
		      const struct ibw_engine_stats *st, uint64_t now_us,
		      const struct ibw_prom_opts *o, size_t *len);
/* The two parts of it: what depends only on the snapshot (cached by the
 * server per snapshot), and what changes with every scrape (ages, the
 * engine's counters, the AgentX subagent's state if @ax, process_*; with
 * OpenMetrics, the "# EOF" too). */
char *ibw_prom_render_snapshot(const struct ibw_snapshot *s,
			       const struct ibw_prom_opts *o, size_t *len);
/*
 * The snapshot's part again, handed to @sink a piece at a time as it is
 * written (pieces of about @hold bytes, so that rendering holds that
 * much, not the document). 0, or -ENOMEM (also when @sink returned
 * a negative number).
 */
int ibw_prom_render_snapshot_to(const struct ibw_snapshot *s,
				const struct ibw_prom_opts *o, size_t hold,
				int (*sink)(void *arg, const char *p, size_t n),
				void *arg);
char *ibw_prom_render_live(const struct ibw_snapshot *s,
			   const struct ibw_engine_stats *st,
			   const struct ibw_agentx_status *ax, uint64_t now_us,
			   const struct ibw_prom_opts *o, size_t *len);

/*
 * The labels of ibwatch_build_info{version,revision}: the build's own
 * (the project version, the git revision built or "unknown") unless set
 * here, as a test does to render a fixture that does not change with
 * every commit. The strings must outlive every rendering.
 */
void ibw_prom_set_build_info(const char *version, const char *revision);

#endif
