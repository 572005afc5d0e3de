// SPDX-License-Identifier: BSD-2-Clause
/*
 * /api/v1/jobs and /api/v1/jobs/{id} (core/jobview.h): the running jobs
 * against the fabric, keys in strcmp() order. docs/api.md documents each
 * field.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobcache.h"
#include "jobsrc.h"
#include "json_jobs.h"
#include "json_links.h"

static void str_or_null(struct ibw_jw *w, const char *s)
{
	if (s && *s)
		ibw_jw_string(w, s);
	else
		ibw_jw_null(w);
}

/* The hosts of @j no HCA was found for, at most 20. */
static void missing(struct ibw_jw *w, const struct ibw_jobview_job *j)
{
	unsigned h, p, n = 0;

	ibw_jw_array(w);
	for (h = 0; h < j->job->nhosts && n < 20; h++) {
		for (p = 0; p < j->nports; p++)
			if (j->ports[p].host == j->job->hosts[h])
				break;
		if (p == j->nports) {
			ibw_jw_string(w, j->job->hosts[h]);
			n++;
		}
	}
	ibw_jw_end(w);
}

static void job_write(struct ibw_jw *w, const struct ibw_snapshot *s,
		      const struct ibw_jobview_job *j, int full)
{
	const struct ibw_job *job = j->job;
	unsigned i;

	ibw_jw_object(w);
	ibw_jw_key(w, "array_job_id");
	str_or_null(w, job->array_id);
	ibw_jw_key(w, "array_task_id");
	str_or_null(w, job->task);
	ibw_jw_key(w, "error_increments");
	ibw_jw_u64(w, j->error_increments);
	ibw_jw_key(w, "hosts");
	ibw_jw_int(w, job->nhosts);
	ibw_jw_key(w, "hosts_found");
	ibw_jw_int(w, j->hosts_found);
	ibw_jw_key(w, "hosts_missing");
	missing(w, j);
	ibw_jw_key(w, "hosts_shared");
	ibw_jw_int(w, j->hosts_shared);
	ibw_jw_key(w, "id");
	ibw_jw_string(w, job->id);
	ibw_jw_key(w, "links");
	ibw_jw_object(w);
	ibw_jw_key(w, "count");
	ibw_jw_int(w, j->nlinks);
	if (full) {
		ibw_jw_key(w, "list");
		ibw_jw_array(w);
		for (i = 0; i < j->nlinks; i++) {
			const struct ibw_jobview_link *l = &j->links[i];
			const struct ibw_link *k =
				s->links ? ibw_link_view_find(s->links, l->guid,
							      l->port)
					 : NULL;
			const struct ibw_link_end *me = NULL, *peer = NULL;

			if (k) {
				int e = k->end[0].guid == l->guid &&
					k->end[0].port == l->port;

				me = &k->end[e ? 0 : 1];
				peer = &k->end[e ? 1 : 0];
			}
			ibw_jw_object(w);
			ibw_jw_key(w, "guid");
			ibw_jw_guid(w, l->guid);
			ibw_jw_key(w, "health");
			str_or_null(w,
				    k ? ibw_link_health_str(k->health) : NULL);
			ibw_jw_key(w, "name");
			str_or_null(w, me ? me->name : NULL);
			ibw_jw_key(w, "pairs");
			ibw_jw_int(w, l->pairs);
			ibw_jw_key(w, "peer_guid");
			if (peer)
				ibw_jw_guid(w, peer->guid);
			else
				ibw_jw_null(w);
			ibw_jw_key(w, "peer_name");
			str_or_null(w, peer ? peer->name : NULL);
			ibw_jw_key(w, "peer_port");
			if (peer)
				ibw_jw_int(w, peer->port);
			else
				ibw_jw_null(w);
			ibw_jw_key(w, "port");
			ibw_jw_int(w, l->port);
			ibw_jw_key(w, "reasons");
			ibw_jw_link_reasons(w, k ? k->reasons : 0);
			ibw_jw_end(w);
		}
		ibw_jw_end(w);
	}
	ibw_jw_key(w, "pairs");
	ibw_jw_u64(w, j->pairs);
	ibw_jw_key(w, "pairs_routed");
	ibw_jw_u64(w, j->pairs_routed);
	ibw_jw_key(w, "partial");
	ibw_jw_bool(w, j->partial);
	ibw_jw_key(w, "worst_health");
	str_or_null(w, j->have_census && j->nlinks
			       ? ibw_link_health_str(j->worst)
			       : NULL);
	ibw_jw_end(w);
	ibw_jw_key(w, "nodes");
	ibw_jw_string(w, job->nodes ? job->nodes : "");
	ibw_jw_key(w, "partition");
	ibw_jw_string(w, job->partition);
	if (full) {
		ibw_jw_key(w, "ports");
		ibw_jw_array(w);
		for (i = 0; i < j->nports; i++) {
			const struct ibw_jobview_port *p = &j->ports[i];

			ibw_jw_object(w);
			ibw_jw_key(w, "guid");
			ibw_jw_guid(w, p->n->guid);
			ibw_jw_key(w, "host");
			ibw_jw_string(w, p->host);
			ibw_jw_key(w, "lid");
			ibw_jw_int(w, p->lid);
			ibw_jw_key(w, "name");
			ibw_jw_string(w, ibw_snapshot_node_name(s, p->n));
			ibw_jw_key(w, "port");
			ibw_jw_int(w, p->port);
			ibw_jw_end(w);
		}
		ibw_jw_end(w);
	}
	ibw_jw_key(w, "rates");
	ibw_jw_object(w);
	ibw_jw_key(w, "receive_bytes_per_second");
	ibw_jw_real(w, j->rcv_bytes_per_s);
	ibw_jw_key(w, "receive_packets_per_second");
	ibw_jw_real(w, j->rcv_pkts_per_s);
	ibw_jw_key(w, "transmit_bytes_per_second");
	ibw_jw_real(w, j->xmit_bytes_per_s);
	ibw_jw_key(w, "transmit_packets_per_second");
	ibw_jw_real(w, j->xmit_pkts_per_s);
	ibw_jw_end(w);
	ibw_jw_key(w, "shared");
	ibw_jw_bool(w, j->shared);
	ibw_jw_key(w, "since");
	ibw_jw_time(w, job->since_us);
	ibw_jw_key(w, "user");
	ibw_jw_string(w, job->user);
	ibw_jw_key(w, "xmit_wait_ratio");
	ibw_jw_real_or_null(w, j->xmit_wait_ratio);
	ibw_jw_end(w);
}

int ibw_json_write_jobs(struct ibw_jw *w, const struct ibw_snapshot *s)
{
	struct ibw_jobview *v;
	unsigned i;

	if (!s->jobs)
		return -ENOENT;
	v = ibw_jobcache_view(s);
	ibw_jw_object(w);
	ibw_jw_key(w, "census");
	ibw_jw_bool(w, s->census != NULL);
	ibw_jw_key(w, "count");
	ibw_jw_int(w, v ? v->n : 0);
	ibw_jw_key(w, "jobs");
	ibw_jw_array(w);
	for (i = 0; v && i < v->n; i++)
		job_write(w, s, &v->jobs[i], 0);
	ibw_jw_end(w);
	ibw_jw_key(w, "unreadable_files");
	ibw_jw_int(w, s->jobs->bad);
	ibw_jw_key(w, "squeue_check");
	if (s->jobs->check) {
		int keep = s->jobs->check - 1;

		ibw_jw_object(w);
		ibw_jw_key(w, "removes_files");
		ibw_jw_bool(w, keep == IBW_JOBS_KEEP_NONE);
		ibw_jw_key(w, "reason");
		if (keep == IBW_JOBS_KEEP_PRIVATE)
			ibw_jw_string(w, "private_data");
		else if (keep == IBW_JOBS_KEEP_UNKNOWN)
			ibw_jw_string(w, "scontrol_silent");
		else
			ibw_jw_null(w);
		ibw_jw_end(w);
	} else {
		ibw_jw_null(w);
	}
	if (s->jobcache) {
		uint64_t walked, reused;

		ibw_jobcache_stats(s->jobcache, &walked, &reused);
		ibw_jw_key(w, "route_walks");
		ibw_jw_object(w);
		ibw_jw_key(w, "made");
		ibw_jw_u64(w, walked);
		ibw_jw_key(w, "reused");
		ibw_jw_u64(w, reused);
		ibw_jw_end(w);
	}
	ibw_jw_end(w);
	ibw_jobview_unref(v);
	return 0;
}

int ibw_json_write_job(struct ibw_jw *w, const struct ibw_snapshot *s,
		       const char *id)
{
	struct ibw_jobview *v;
	const struct ibw_jobview_job *j;

	if (!s->jobs)
		return -ENOENT;
	v = ibw_jobcache_view(s);
	j = ibw_jobview_find(v, id);
	if (j)
		job_write(w, s, j, 1);
	ibw_jobview_unref(v);
	return j ? 0 : -ESRCH;
}
