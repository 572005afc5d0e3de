// SPDX-License-Identifier: BSD-2-Clause
/*
 * The running jobs' series (core/jobview.h): one of each family per
 * running job, labelled job, user and partition, so the series come and
 * go with the jobs (docs/api.md says what they cost). The label is job_id:
 * "job" is Prometheus' own (the scrape job), which it would rename.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobcache.h"
#include "prom_jobs.h"

/* A label value: Prometheus escapes \, " and newline. */
static void label(struct ibw_pb *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			ibw_pb_put(b, "\\%c", *s);
		else if (*s == '\n')
			ibw_pb_put(b, "\\n");
		else
			ibw_pb_put(b, "%c", *s);
	}
}

static void labels(struct ibw_pb *b, const char *name,
		   const struct ibw_jobview_job *j)
{
	/* not "job": Prometheus' own target label */
	ibw_pb_put(b, "%s{job_id=\"", name);
	label(b, j->job->id);
	ibw_pb_put(b, "\",user=\"");
	label(b, j->job->user);
	ibw_pb_put(b, "\",partition=\"");
	label(b, j->job->partition);
	ibw_pb_put(b, "\"} ");
}

enum what { TX_B, RX_B, TX_P, RX_P, ERRS, WAIT, HOSTS, SHARED, LINKS, WORST };

static const struct {
	const char *name, *help;
} fam[] = {
	[TX_B] = { "ibwatch_job_transmit_bytes_per_second",
		   "Bytes a second the job's host ports send, summed." },
	[RX_B] = { "ibwatch_job_receive_bytes_per_second",
		   "Bytes a second the job's host ports receive, summed." },
	[TX_P] = { "ibwatch_job_transmit_packets_per_second",
		   "Packets a second the job's host ports send, summed." },
	[RX_P] = { "ibwatch_job_receive_packets_per_second",
		   "Packets a second the job's host ports receive, summed." },
	[ERRS] = { "ibwatch_job_error_increments",
		   "Error counter increments of the job's host ports in the "
		   "last sweep." },
	[WAIT] = { "ibwatch_job_xmit_wait_ratio",
		   "Mean share of the last sweep the job's host ports waited "
		   "to send." },
	[HOSTS] = { "ibwatch_job_hosts", "Hosts in the job's node list." },
	[SHARED] = { "ibwatch_job_shared",
		     "1 when a host of the job is in another running job." },
	[LINKS] = { "ibwatch_job_links",
		    "Link directions the census routes the job's host pairs "
		    "over." },
	[WORST] = { "ibwatch_job_worst_link_health",
		    "The worst health among those links: 0 ok .. 3 down." },
};

void ibw_prom_jobs(struct ibw_pb *b, const struct ibw_snapshot *s)
{
	struct ibw_jobview *v = ibw_jobcache_view(s);
	unsigned f, i;

	if (!v || !v->n) {
		ibw_jobview_unref(v);
		return;
	}
	for (f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		ibw_pb_family(b, fam[f].name, "gauge", fam[f].help);
		for (i = 0; i < v->n; i++) {
			const struct ibw_jobview_job *j = &v->jobs[i];

			if ((f == WAIT && j->xmit_wait_ratio < 0) ||
			    (f == WORST && (!j->have_census || !j->nlinks)))
				continue;
			labels(b, fam[f].name, j);
			switch (f) {
			case TX_B:
				ibw_pb_put(b, "%.6g\n", j->xmit_bytes_per_s);
				break;
			case RX_B:
				ibw_pb_put(b, "%.6g\n", j->rcv_bytes_per_s);
				break;
			case TX_P:
				ibw_pb_put(b, "%.6g\n", j->xmit_pkts_per_s);
				break;
			case RX_P:
				ibw_pb_put(b, "%.6g\n", j->rcv_pkts_per_s);
				break;
			case ERRS:
				ibw_pb_put(b, "%" PRIu64 "\n",
					   j->error_increments);
				break;
			case WAIT:
				ibw_pb_put(b, "%.6g\n", j->xmit_wait_ratio);
				break;
			case HOSTS:
				ibw_pb_put(b, "%u\n", j->job->nhosts);
				break;
			case SHARED:
				ibw_pb_put(b, "%d\n", j->shared);
				break;
			case LINKS:
				ibw_pb_put(b, "%u\n", j->nlinks);
				break;
			default:
				ibw_pb_put(b, "%u\n", (unsigned)j->worst);
			}
		}
	}
	ibw_jobview_unref(v);
}

/* At most this much of a trouble series' jobs label, then ",...". */
#define TROUBLE_JOBS_MAX 200

void ibw_prom_link_trouble(struct ibw_pb *b, const struct ibw_snapshot *s,
			   const struct ibw_link *const *by, size_t n)
{
	struct ibw_jobview *v = s->jobs ? ibw_jobcache_view(s) : NULL;
	unsigned *ids = v && v->n ? malloc(v->n * sizeof(*ids)) : NULL;
	char reasons[256], jobs[TROUBLE_JOBS_MAX + 8];
	size_t i;
	int any = 0;

	for (i = 0; i < n; i++) {
		const struct ibw_link *k = by[i];
		unsigned nj = 0, j;
		size_t len = 0;

		if (k->health == IBW_HEALTH_OK)
			continue;
		if (!any++)
			ibw_pb_family(
				b, "ibwatch_link_trouble_info", "gauge",
				"1 for each cable that is not ok: its ends' "
				"names, its reasons and the running jobs whose "
				"routes cross it (jobs at most 200 characters, "
				"cut with ...).");
		ibw_link_reasons_fmt(k->reasons, reasons, sizeof(reasons));
		if (ids)
			nj = ibw_jobview_cable_jobs(v, k->end[0].guid,
						    k->end[0].port,
						    k->end[1].guid,
						    k->end[1].port, ids, v->n);
		jobs[0] = '\0';
		for (j = 0; j < nj; j++) {
			const char *id = v->jobs[ids[j]].job->id;

			/* room for this one and ",..." after it */
			if (len + strlen(id) + 1 + 4 > TROUBLE_JOBS_MAX) {
				snprintf(jobs + len, sizeof(jobs) - len, "%s",
					 j ? ",..." : "...");
				break;
			}
			len += (size_t)snprintf(jobs + len, sizeof(jobs) - len,
						"%s%s", j ? "," : "", id);
		}
		ibw_prom_link_labels(b, "ibwatch_link_trouble_info", k);
		ibw_pb_put(b, ",name=\"");
		label(b, k->end[0].name ? k->end[0].name : "");
		ibw_pb_put(b, "\",remote_name=\"");
		label(b, k->end[1].name ? k->end[1].name : "");
		ibw_pb_put(b, "\",reasons=\"%s\",jobs=\"", reasons);
		label(b, jobs);
		ibw_pb_put(b, "\"} 1\n");
	}
	free(ids);
	ibw_jobview_unref(v);
}
