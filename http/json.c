// SPDX-License-Identifier: BSD-2-Clause
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibw_version.h"
#include "json.h"
#include "json_counters.h"
#include "json_links.h"

json_t *ibw_json_engine_stats(const struct ibw_engine_stats *st)
{
	json_t *a, *kinds = json_array();
	unsigned i;

	a = json_pack(
		"{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
		" s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
		" s:I, s:I, s:I, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
		" s:I}",
		"submitted", (json_int_t)st->submitted, "sent",
		(json_int_t)st->sent, "received", (json_int_t)st->received,
		"ok", (json_int_t)st->ok, "timeouts", (json_int_t)st->timeouts,
		"try_timeouts", (json_int_t)st->try_timeouts, "kernel_timeouts",
		(json_int_t)st->kernel_timeouts, "retries",
		(json_int_t)st->retries, "status_errors",
		(json_int_t)st->status_errors, "transport_errors",
		(json_int_t)st->transport_errors, "send_errors",
		(json_int_t)st->send_errors, "returned",
		(json_int_t)st->returned, "late", (json_int_t)st->late,
		"duplicates", (json_int_t)st->duplicates, "unmatched",
		(json_int_t)st->unmatched, "mismatched",
		(json_int_t)st->mismatched, "unsolicited",
		(json_int_t)st->unsolicited, "cancelled",
		(json_int_t)st->cancelled, "inflight", (json_int_t)st->inflight,
		"inflight_high_water", (json_int_t)st->inflight_hwm, "waits",
		(json_int_t)st->waits, "waiting", (json_int_t)st->waiting,
		"waiting_high_water", (json_int_t)st->waiting_hwm, "queued",
		(json_int_t)st->queued, "queued_high_water",
		(json_int_t)st->queued_hwm, "recv_errors",
		(json_int_t)st->recv_errors, "device_lost",
		st->device_lost != 0, "device_reopens", (json_int_t)st->reopens,
		"device_reopen_failures", (json_int_t)st->reopen_tries_failed,
		"class_held", (json_int_t)st->class_held, "loop_wakeups",
		(json_int_t)st->loop_wakeups, "window", (json_int_t)st->window,
		"window_high_water", (json_int_t)st->window_hwm, "blind_waits",
		(json_int_t)st->blind_waits, "smp_limit",
		(json_int_t)st->smp_limit, "sa_limit", (json_int_t)st->sa_limit,
		"recv_queue_size", (json_int_t)st->recv_queue_size);
	/* what each kind of request came to: a timeout explained by what
	 * was asked */
	for (i = 0; i < st->kinds.n && i < IBW_MAD_KINDS; i++) {
		const struct ibw_mad_kind *k = &st->kinds.k[i];
		char cls[16], method[16], attr[32];

		ibw_mad_kind_names(k, cls, method, attr);
		json_array_append_new(
			kinds,
			json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:b}",
				  "class", cls, "method", method, "attribute",
				  attr, "requests", (json_int_t)k->requests,
				  "timeouts", (json_int_t)k->timeouts, "errors",
				  (json_int_t)k->errors, "skipped",
				  (json_int_t)k->skipped, "silent",
				  ibw_mad_kind_silent(k)));
	}
	json_object_set_new(a, "requests_by_kind", kinds);
	json_object_set_new(a, "skipped", ibw_json_u64(st->skipped));
	return a;
}

json_t *ibw_json_local_port(const struct ibw_local_port *lp,
			    const struct ibw_portinfo *pi,
			    const struct ibw_nodeinfo *ni, const char *desc)
{
	json_t *o = json_object();

	json_object_set_new(o, "ca", json_string(lp->ca_name));
	json_object_set_new(o, "port", json_integer(lp->portnum));
	json_object_set_new(o, "port_guid", ibw_json_guid(lp->port_guid));
	json_object_set_new(o, "node_guid",
			    ibw_json_guid(ni ? ni->node_guid : lp->node_guid));
	json_object_set_new(o, "link_layer", json_string(lp->link_layer));
	if (desc)
		json_object_set_new(o, "node_description", json_string(desc));
	/* Prefer what the fabric says now over the open-time snapshot. */
	json_object_set_new(o, "lid", json_integer(pi ? pi->lid : lp->lid));
	json_object_set_new(o, "lmc", json_integer(pi ? pi->lmc : lp->lmc));
	json_object_set_new(o, "sm_lid",
			    json_integer(pi ? pi->sm_lid : lp->sm_lid));
	json_object_set_new(
		o, "state",
		json_string(ibw_port_state_str(pi ? pi->state : lp->state)));
	json_object_set_new(o, "phys_state",
			    json_string(ibw_phys_state_str(
				    pi ? pi->phys_state : lp->phys_state)));
	json_object_set_new(o, "rate_gbps", json_integer(lp->rate));
	json_object_set_new(o, "capability_mask",
			    json_integer(pi ? pi->capmask : lp->capmask));
	json_object_set_new(o, "live", json_boolean(pi != NULL));
	/* a planarized HCA's pair: SMPs go out through another device */
	if (lp->smi_ca_name[0])
		json_object_set_new(o, "smi",
				    json_pack("{s:s, s:i}", "ca",
					      lp->smi_ca_name, "port",
					      lp->smi_portnum));
	return o;
}

/* Nodes whose PMA answered ClassPortInfo with "redirect required". */
static json_t *ibw_json_pma_redirects(const struct ibw_snapshot *s)
{
	json_t *a = json_array();
	unsigned i;

	for (i = 0; i < s->npma_redirects; i++) {
		const struct ibw_pma_redirect *r = &s->pma_redirects[i];
		static const uint8_t zero[16];
		char gid[INET6_ADDRSTRLEN] = "";
		json_t *o;

		if (memcmp(r->redirect_gid, zero, 16))
			inet_ntop(AF_INET6, r->redirect_gid, gid, sizeof(gid));
		o = json_pack("{s:o, s:i, s:i, s:i, s:I, s:i, s:o, s:b}",
			      "guid", ibw_json_guid(r->guid), "lid", r->lid,
			      "redirect_lid", r->redirect_lid, "redirect_qp",
			      (int)r->redirect_qp, "redirect_qkey",
			      (json_int_t)r->redirect_qkey, "redirect_pkey",
			      r->redirect_pkey, "redirect_gid",
			      gid[0] ? json_string(gid) : json_null(),
			      "followed", r->followed);
		if (!r->followed)
			json_object_set_new(
				o, "refused",
				json_string(
					ibw_redirect_refusal_str(r->refusal)));
		json_array_append_new(a, o);
	}
	return a;
}

json_t *ibw_json_sweep(const struct ibw_sweep_stats *st)
{
	json_t *o = json_object();

	json_object_set_new(o, "start", ibw_json_time(st->start_us));
	json_object_set_new(o, "duration_ms",
			    json_real((double)st->duration_us / 1000.0));
	json_object_set_new(o, "mads", ibw_json_u64(st->mads));
	json_object_set_new(o, "timeouts", ibw_json_u64(st->timeouts));
	json_object_set_new(o, "errors", ibw_json_u64(st->errors));
	return o;
}

/* Whether json_string(@s) would make a string (UTF-8). */
static int string_ok(const char *s)
{
	size_t n;
	json_t *j;

	if (ibw_jw_plain(s, &n))
		return 1;
	j = json_string(s);
	json_decref(j);
	return j != NULL;
}

/* A GUID, or null where there is none (0). */
static void guid_or_null(struct ibw_jw *w, uint64_t guid)
{
	if (guid)
		ibw_jw_guid(w, guid);
	else
		ibw_jw_null(w);
}

/* port_json(@v), written; with @nv (the flat list of /api/v1/ports)
 * also the node's GUID, name and type. */
static void port_write(struct ibw_jw *w, const struct ibw_snapshot_port *v,
		       const struct ibw_snapshot_node *nv)
{
	const struct ibw_fport *p = v->p;

	ibw_jw_object(w);
	if (p->have_pi) {
		ibw_jw_key(w, "capability_mask");
		ibw_jw_int(w, p->pi.capmask);
	}
	ibw_jw_key(w, "counters");
	if (v->ctrs)
		ibw_json_write_counters(w, v->ctrs);
	else
		ibw_jw_null(w);
	ibw_jw_key(w, "gone");
	ibw_jw_bool(w, v->gone);
	ibw_jw_key(w, "guid");
	guid_or_null(w, p->guid);
	if (p->have_pi) {
		ibw_jw_key(w, "lid");
		ibw_jw_int(w, p->pi.lid);
		ibw_jw_key(w, "lmc");
		ibw_jw_int(w, p->pi.lmc);
	}
	if (nv) {
		ibw_jw_key(w, "node_guid");
		ibw_jw_guid(w, nv->n->guid);
		ibw_jw_key(w, "node_name");
		ibw_jw_string(w, nv->name);
		ibw_jw_key(w, "node_type");
		ibw_jw_string(w, ibw_node_type_str(nv->n->ni.node_type));
	}
	ibw_jw_key(w, "peer_protected");
	ibw_jw_bool(w, p->peer_protected);
	if (p->have_pi) {
		ibw_jw_key(w, "phys_state");
		ibw_jw_string(w, ibw_phys_state_str(p->pi.phys_state));
	}
	ibw_jw_key(w, "port");
	ibw_jw_int(w, p->num);
	if (p->have_pi && v->link_up) {
		ibw_jw_key(w, "rate_gbps");
		ibw_jw_real(w, ibw_link_gbps(&p->pi));
	}
	/* json_pack() fails on a name that is not UTF-8: no "remote". */
	if (!p->remote_guid) {
		ibw_jw_key(w, "remote");
		ibw_jw_null(w);
	} else if (string_ok(v->remote_name)) {
		ibw_jw_key(w, "remote");
		ibw_jw_object(w);
		ibw_jw_key(w, "guid");
		ibw_jw_guid(w, p->remote_guid);
		ibw_jw_key(w, "name");
		ibw_jw_string(w, v->remote_name);
		ibw_jw_key(w, "port");
		ibw_jw_int(w, p->remote_port);
		ibw_jw_end(w);
	}
	if (p->have_pi && v->link_up) {
		ibw_jw_key(w, "speed");
		ibw_jw_string(w, ibw_speed_str(p->pi.speed_active,
					       p->pi.speed_ext_active));
	}
	if (p->have_pi) {
		ibw_jw_key(w, "state");
		ibw_jw_string(w, ibw_port_state_str(p->pi.state));
	}
	if (p->have_pi && v->link_up) {
		ibw_jw_key(w, "width");
		ibw_jw_string(w, ibw_width_str(p->pi.width_active));
	}
	ibw_jw_end(w);
}

/* node_json(@nv), written. */
static void node_write(struct ibw_jw *w, const struct ibw_snapshot_node *nv)
{
	const struct ibw_fnode *n = nv->n;
	const struct ibw_snapshot_port *pv;
	char dr[300];

	ibw_jw_object(w);
	ibw_jw_key(w, "description");
	ibw_jw_string(w, n->desc);
	ibw_jw_key(w, "device_id");
	ibw_jw_int(w, n->ni.device_id);
	ibw_jw_key(w, "dr_path");
	ibw_jw_string(w, ibw_dest_str(&n->dr, dr, sizeof(dr)) + 3);
	ibw_jw_key(w, "gone");
	ibw_jw_bool(w, n->gone);
	ibw_jw_key(w, "gone_since");
	ibw_jw_time(w, n->gone_since_us);
	ibw_jw_key(w, "guid");
	ibw_jw_guid(w, n->guid);
	ibw_jw_key(w, "lid");
	ibw_jw_int(w, n->lid);
	ibw_jw_key(w, "name");
	ibw_jw_string(w, nv->name);
	ibw_jw_key(w, "num_ports");
	ibw_jw_int(w, n->ni.num_ports);
	ibw_jw_key(w, "ports");
	ibw_jw_array(w);
	ibw_snapshot_foreach_node_port(nv, pv)
		port_write(w, pv, NULL);
	ibw_jw_end(w);
	ibw_jw_key(w, "protected");
	ibw_jw_bool(w, n->is_protected);
	ibw_jw_key(w, "protected_since");
	ibw_jw_time(w, n->protected_since_us);
	ibw_jw_key(w, "revision");
	ibw_jw_int(w, n->ni.revision);
	ibw_jw_key(w, "system_guid");
	ibw_jw_guid(w, n->ni.system_guid);
	ibw_jw_key(w, "type");
	ibw_jw_string(w, ibw_node_type_str(n->ni.node_type));
	ibw_jw_key(w, "vendor_id");
	ibw_jw_int(w, n->ni.vendor_id);
	ibw_jw_end(w);
}

static json_t *port_json(const struct ibw_snapshot_port *v)
{
	json_t *o = json_object();
	const struct ibw_fport *p = v->p;

	json_object_set_new(o, "port", json_integer(p->num));
	json_object_set_new(o, "guid",
			    p->guid ? ibw_json_guid(p->guid) : json_null());
	if (p->have_pi) {
		json_object_set_new(o, "lid", json_integer(p->pi.lid));
		json_object_set_new(o, "lmc", json_integer(p->pi.lmc));
		json_object_set_new(
			o, "state",
			json_string(ibw_port_state_str(p->pi.state)));
		json_object_set_new(
			o, "phys_state",
			json_string(ibw_phys_state_str(p->pi.phys_state)));
		if (v->link_up) {
			json_object_set_new(
				o, "width",
				json_string(ibw_width_str(p->pi.width_active)));
			json_object_set_new(o, "speed",
					    json_string(ibw_speed_str(
						    p->pi.speed_active,
						    p->pi.speed_ext_active)));
			json_object_set_new(o, "rate_gbps",
					    json_real(ibw_link_gbps(&p->pi)));
		}
		json_object_set_new(o, "capability_mask",
				    json_integer(p->pi.capmask));
	}
	json_object_set_new(o, "gone", json_boolean(v->gone));
	json_object_set_new(o, "peer_protected",
			    json_boolean(p->peer_protected));
	if (p->remote_guid)
		json_object_set_new(o, "remote",
				    json_pack("{s:o, s:i, s:s}", "guid",
					      ibw_json_guid(p->remote_guid),
					      "port", p->remote_port, "name",
					      v->remote_name));
	else
		json_object_set_new(o, "remote", json_null());
	json_object_set_new(o, "counters",
			    v->ctrs ? ibw_json_counters(v->ctrs) : json_null());
	return o;
}

static json_t *node_json(const struct ibw_snapshot_node *nv)
{
	json_t *o = json_object(), *ports = json_array();
	const struct ibw_fnode *n = nv->n;
	const struct ibw_snapshot_port *pv;
	char dr[300];

	json_object_set_new(o, "guid", ibw_json_guid(n->guid));
	json_object_set_new(o, "type",
			    json_string(ibw_node_type_str(n->ni.node_type)));
	json_object_set_new(o, "name", json_string(nv->name));
	json_object_set_new(o, "description", json_string(n->desc));
	json_object_set_new(o, "lid", json_integer(n->lid));
	json_object_set_new(o, "num_ports", json_integer(n->ni.num_ports));
	json_object_set_new(o, "system_guid", ibw_json_guid(n->ni.system_guid));
	json_object_set_new(o, "vendor_id", json_integer(n->ni.vendor_id));
	json_object_set_new(o, "device_id", json_integer(n->ni.device_id));
	json_object_set_new(o, "revision", json_integer(n->ni.revision));
	json_object_set_new(
		o, "dr_path",
		json_string(ibw_dest_str(&n->dr, dr, sizeof(dr)) + 3));
	json_object_set_new(o, "gone", json_boolean(n->gone));
	json_object_set_new(o, "gone_since", ibw_json_time(n->gone_since_us));
	json_object_set_new(o, "protected", json_boolean(n->is_protected));
	json_object_set_new(o, "protected_since",
			    ibw_json_time(n->protected_since_us));
	ibw_snapshot_foreach_node_port(nv, pv)
		json_array_append_new(ports, port_json(pv));
	json_object_set_new(o, "ports", ports);
	return o;
}

/*
 * A part writer's *pos: 0 before the opening, then 1 + the index of the
 * next element, then PART_DONE once the closing is written.
 */
#define PART_DONE SIZE_MAX

/* Before a part writer's loop: 1 if it is done, a negative errno if the
 * writer failed, else 0 with the opening written; *@i is the index of
 * the next element. */
static int part_start(struct ibw_jw *w, size_t *pos, size_t *i)
{
	if (*pos == PART_DONE)
		return 1;
	if (!*pos) {
		ibw_jw_array(w);
		*pos = 1;
	}
	*i = *pos - 1;
	return w->err;
}

/* In the loop, before element @i: whether the part is full. */
static int part_full(const struct ibw_jw *w, size_t *pos, size_t i,
		     size_t budget)
{
	if (!w->err && w->len < budget)
		return 0;
	*pos = i + 1;
	return 1;
}

/* After the loop: the closing. */
static int part_end(struct ibw_jw *w, size_t *pos)
{
	ibw_jw_end(w);
	*pos = PART_DONE;
	return w->err ? w->err : 1;
}

void ibw_json_write_nodes(struct ibw_jw *w, const struct ibw_snapshot *s)
{
	size_t pos = 0;

	ibw_json_write_nodes_part(w, s, &pos, SIZE_MAX);
}

/*
 * A list of @n elements of @size bytes at @base, each written by @one,
 * in parts: from *@pos on until the writer holds @budget bytes.
 */
static int list_part(struct ibw_jw *w, size_t *pos, size_t budget,
		     const void *base, size_t n, size_t size,
		     void (*one)(struct ibw_jw *w, const void *elem))
{
	size_t i;
	int rc = part_start(w, pos, &i);

	if (rc)
		return rc;
	for (; i < n; i++) {
		if (part_full(w, pos, i, budget))
			return w->err;
		one(w, (const char *)base + i * size);
	}
	return part_end(w, pos);
}

static void node_elem(struct ibw_jw *w, const void *nv)
{
	node_write(w, nv);
}

int ibw_json_write_nodes_part(struct ibw_jw *w, const struct ibw_snapshot *s,
			      size_t *pos, size_t budget)
{
	return list_part(w, pos, budget, s->node_views, s->nnode_views,
			 sizeof(s->node_views[0]), node_elem);
}

json_t *ibw_json_node(const struct ibw_snapshot *s, uint64_t guid)
{
	const struct ibw_snapshot_node *nv = ibw_snapshot_find_node(s, guid);

	return nv ? node_json(nv) : NULL;
}

void ibw_json_write_ports(struct ibw_jw *w, const struct ibw_snapshot *s,
			  const struct ibw_port_filter *f)
{
	size_t pos = 0;

	ibw_json_write_ports_part(w, s, f, &pos, SIZE_MAX);
}

int ibw_json_write_ports_part(struct ibw_jw *w, const struct ibw_snapshot *s,
			      const struct ibw_port_filter *f, size_t *pos,
			      size_t budget)
{
	size_t i;
	int rc = part_start(w, pos, &i);

	if (rc)
		return rc;
	for (; i < s->nport_views; i++) {
		const struct ibw_snapshot_port *pv = &s->port_views[i];
		const struct ibw_snapshot_node *nv = pv->node;
		const struct ibw_fport *fp = pv->p;

		if ((f->type == 1 && !nv->is_switch) ||
		    (f->type == 2 && nv->is_switch) ||
		    (f->guid && f->guid != nv->n->guid))
			continue;
		if (f->state >= 0 && (!fp->have_pi || fp->pi.state != f->state))
			continue;
		if (f->errors && (!pv->ctrs || !pv->ctrs->error_increments))
			continue;
		if (part_full(w, pos, i, budget))
			return w->err;
		port_write(w, pv, nv);
	}
	return part_end(w, pos);
}

/* The counter sweep under way, or else the last: how far it got as of
 * this snapshot, and whether its reads were spread. */
/* What writing the state file has cost (docs/operations.md), null
 * when none is kept. */
static json_t *state_file_json(const struct ibw_snapshot *s)
{
	const struct ibw_ctr_journal_stats *t = &s->state_file;

	if (!s->have_state_file)
		return json_null();
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "bytes_written", ibw_json_u64(t->bytes), "snapshots",
			 ibw_json_u64(t->snapshots), "snapshot_bytes",
			 ibw_json_u64(t->snapshot_bytes), "batches",
			 ibw_json_u64(t->batches), "batch_bytes",
			 ibw_json_u64(t->batch_bytes), "journal_bytes",
			 ibw_json_u64(t->journal_bytes), "loaded_batches",
			 ibw_json_u64(t->loaded_batches), "error",
			 s->state_err ? json_string(strerror(-s->state_err))
				      : json_null());
}

static json_t *counter_sweep_json(const struct ibw_snapshot *s)
{
	const struct ibw_counters_progress *p = &s->counter_sweep;
	json_t *o = json_object();

	json_object_set_new(o, "running", json_boolean(p->running));
	json_object_set_new(o, "reason",
			    json_string(ibw_snapshot_sweep_reason_str(
				    s->counter_sweep_reason)));
	json_object_set_new(o, "started", ibw_json_time(p->start_us));
	json_object_set_new(o, "finished", ibw_json_time(p->end_us));
	json_object_set_new(o, "spread_seconds",
			    json_real((double)p->spread_us / 1e6));
	json_object_set_new(o, "interval_seconds",
			    json_real((double)s->counter_interval_us / 1e6));
	json_object_set_new(o, "aligned_scrapers",
			    json_integer(s->counter_aligned_scrapers));
	json_object_set_new(o, "ports", json_integer(p->ports));
	json_object_set_new(o, "ports_read", json_integer(p->read));
	json_object_set_new(o, "ports_unreachable",
			    json_integer(p->unreachable));
	json_object_set_new(o, "ports_verified", json_integer(p->verified));
	json_object_set_new(o, "ports_lid_moved", json_integer(p->lid_moved));
	return o;
}

/* Which fabric (core/fabric_id.h) into @fab: null members until the
 * first discovery has found the SM. */
static void fabric_id_json(json_t *fab, const struct ibw_fabric_id *id)
{
	static const char *const keys[] = { "id",	    "subnet_prefix",
					    "sm_lid",	    "sm_guid",
					    "sm_node_guid", "id_since" };
	char buf[IBW_FABRIC_ID_LEN];
	unsigned i;

	json_object_set_new(fab, "id_changes", ibw_json_u64(id->changes));
	if (!id->known) {
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			json_object_set_new(fab, keys[i], json_null());
		return;
	}
	ibw_fabric_id_str(id, buf, sizeof(buf));
	json_object_set_new(fab, "id", json_string(buf));
	json_object_set_new(fab, "subnet_prefix",
			    ibw_json_guid(id->subnet_prefix));
	json_object_set_new(fab, "sm_lid", json_integer(id->sm_lid));
	json_object_set_new(fab, "sm_guid", ibw_json_guid(id->sm_guid));
	json_object_set_new(fab, "sm_node_guid",
			    ibw_json_guid(id->sm_node_guid));
	json_object_set_new(fab, "id_since", ibw_json_time(id->since_us));
}

json_t *ibw_json_status(const struct ibw_snapshot *s,
			const struct ibw_engine_stats *st, uint64_t now_us)
{
	json_t *o = json_object(), *fab = json_object(), *sw = json_object();
	json_t *ep = json_object();
	const struct ibw_snapshot_summary *sum = &s->sum;
	unsigned i;

	json_object_set_new(o, "version", json_string(IBW_VERSION));
	json_object_set_new(o, "started", ibw_json_time(s->started_us));
	json_object_set_new(
		o, "uptime_seconds",
		json_real(now_us > s->started_us
				  ? (double)(now_us - s->started_us) / 1e6
				  : 0.0));
	json_object_set_new(o, "snapshot_time", ibw_json_time(s->taken_us));
	json_object_set_new(o, "snapshot_seq", ibw_json_u64(s->seq));
	json_object_set_new(o, "stale",
			    json_boolean(ibw_snapshot_stale(s, now_us)));
	json_object_set_new(o, "local_port_state",
			    json_string(ibw_port_state_str(s->local_state)));
	json_object_set_new(o, "local_port_lost", json_boolean(s->local_lost));
	json_object_set_new(fab, "nodes", json_integer(sum->nodes));
	json_object_set_new(fab, "switches", json_integer(sum->switches));
	json_object_set_new(fab, "cas", json_integer(sum->cas));
	json_object_set_new(fab, "ports", json_integer(sum->ports));
	json_object_set_new(fab, "links", json_integer(sum->links));
	json_object_set_new(fab, "gone_nodes", json_integer(sum->gone_nodes));
	fabric_id_json(fab, &s->fabric_id);
	json_object_set_new(o, "fabric", fab);
	json_object_set_new(sw, "discovery", ibw_json_sweep(&s->discovery));
	json_object_set_new(sw, "counters", ibw_json_sweep(&s->counters));
	json_object_set_new(sw, "discoveries", ibw_json_u64(s->discoveries));
	json_object_set_new(sw, "counter_sweeps",
			    ibw_json_u64(s->counter_sweeps));
	/* the hardware sweep's count (its figures: /api/v1/hardware) */
	json_object_set_new(sw, "hardware_sweeps",
			    ibw_json_u64(s->hw ? s->hw->sweeps : 0));
	json_object_set_new(sw, "unreachable_ports",
			    json_integer(s->unreachable_ports));
	json_object_set_new(sw, "counter_sweep", counter_sweep_json(s));
	json_object_set_new(sw, "lids_in_flux",
			    json_boolean(s->counter_verify.lids_in_flux));
	json_object_set_new(
		sw, "counter_clears",
		json_pack("{s:I, s:I, s:I}", "port_counters",
			  (json_int_t)s->counter_clears.port_counters,
			  "ext_speeds",
			  (json_int_t)s->counter_clears.ext_speeds,
			  "congestion",
			  (json_int_t)s->counter_clears.congestion));
	json_object_set_new(o, "pma_redirects", ibw_json_pma_redirects(s));
	json_object_set_new(o, "sweeps", sw);
	json_object_set_new(o, "state_file", state_file_json(s));
	for (i = 0; i < IBW_EP_NSTATES; i++)
		json_object_set_new(ep, ibw_endport_state_str(i),
				    json_integer(sum->endports[i]));
	json_object_set_new(o, "endports", ep);
	json_object_set_new(o, "links", ibw_json_link_counts(s->links));
	if (st)
		json_object_set_new(o, "engine", ibw_json_engine_stats(st));
	return o;
}

json_t *ibw_json_local_cas(const struct ibw_local_ca *cas, unsigned n)
{
	json_t *arr = json_array();
	unsigned i, p, k;

	for (i = 0; i < n; i++) {
		const struct ibw_local_ca *c = &cas[i];
		json_t *o = json_object(), *ports = json_array();

		json_object_set_new(o, "ca", json_string(c->name));
		json_object_set_new(o, "ca_type", json_string(c->ca_type));
		json_object_set_new(o, "firmware", json_string(c->fw_ver));
		json_object_set_new(o, "node_guid",
				    ibw_json_guid(c->node_guid));
		json_object_set_new(o, "system_guid",
				    ibw_json_guid(c->system_guid));
		for (p = 0; p < c->nports; p++) {
			const struct ibw_local_port *lp = &c->ports[p];
			json_t *po = json_object(), *pk = json_array();
			char buf[8];

			json_object_set_new(po, "port",
					    json_integer(lp->portnum));
			json_object_set_new(po, "port_guid",
					    ibw_json_guid(lp->port_guid));
			json_object_set_new(
				po, "state",
				json_string(ibw_port_state_str(lp->state)));
			json_object_set_new(po, "phys_state",
					    json_string(ibw_phys_state_str(
						    lp->phys_state)));
			json_object_set_new(po, "lid", json_integer(lp->lid));
			json_object_set_new(po, "sm_lid",
					    json_integer(lp->sm_lid));
			json_object_set_new(po, "rate_gbps",
					    json_integer(lp->rate));
			json_object_set_new(po, "link_layer",
					    json_string(lp->link_layer));
			for (k = 0; k < c->npkeys[p]; k++) {
				snprintf(buf, sizeof(buf), "0x%04x",
					 c->pkeys[p][k]);
				json_array_append_new(pk, json_string(buf));
			}
			json_object_set_new(po, "pkeys", pk);
			json_array_append_new(ports, po);
		}
		json_object_set_new(o, "ports", ports);
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *us_to_ms(double us)
{
	return json_real(us / 1000.0);
}

json_t *ibw_json_endport(const struct ibw_snapshot_endport *v)
{
	json_t *o = json_object(), *rtt = json_object();
	const struct ibw_endport *ep = v->ep;

	json_object_set_new(o, "port_guid",
			    ep->port_guid ? ibw_json_guid(ep->port_guid)
					  : json_null());
	json_object_set_new(o, "node_guid",
			    ep->node_guid ? ibw_json_guid(ep->node_guid)
					  : json_null());
	json_object_set_new(o, "port", json_integer(ep->port));
	json_object_set_new(o, "lid", json_integer(ep->lid));
	json_object_set_new(o, "name", json_string(ep->name));
	if (ep->target[0])
		json_object_set_new(o, "target", json_string(ep->target));
	json_object_set_new(o, "found", json_boolean(ep->found));
	json_object_set_new(o, "state",
			    json_string(ibw_endport_state_str(ep->state)));
	json_object_set_new(o, "state_since",
			    ibw_json_time(ep->state_since_us));
	json_object_set_new(o, "reason", json_string(ep->reason));
	json_object_set_new(o, "method",
			    json_string(ibw_ping_method_str(ep->last_method)));
	json_object_set_new(o, "responder", json_boolean(ep->echo_answered));
	if (ep->responder_host[0])
		json_object_set_new(o, "responder_host",
				    json_string(ep->responder_host));
	json_object_set_new(o, "sent", ibw_json_u64(ep->sent));
	json_object_set_new(o, "received", ibw_json_u64(ep->received));
	json_object_set_new(o, "loss_percent", json_real(v->loss_pct));
	json_object_set_new(o, "window_probes", json_integer(ep->window_n));
	json_object_set_new(o, "window_loss_percent",
			    json_real(v->window_loss_pct));
	if (ep->received) {
		json_object_set_new(rtt, "last_ms",
				    us_to_ms((double)ep->rtt_last_us));
		json_object_set_new(rtt, "min_ms",
				    us_to_ms((double)ep->rtt_min_us));
		json_object_set_new(rtt, "avg_ms", us_to_ms(ep->rtt_avg_us));
		json_object_set_new(rtt, "max_ms",
				    us_to_ms((double)ep->rtt_max_us));
		json_object_set_new(rtt, "mdev_ms", us_to_ms(ep->rtt_mdev_us));
	}
	json_object_set_new(o, "rtt", rtt);
	json_object_set_new(o, "last_reply", ibw_json_time(ep->last_reply_us));
	return o;
}

/* ibw_json_endport(@v), written. */
static void endport_write(struct ibw_jw *w,
			  const struct ibw_snapshot_endport *v)
{
	const struct ibw_endport *ep = v->ep;

	ibw_jw_object(w);
	ibw_jw_key(w, "found");
	ibw_jw_bool(w, ep->found);
	ibw_jw_key(w, "last_reply");
	ibw_jw_time(w, ep->last_reply_us);
	ibw_jw_key(w, "lid");
	ibw_jw_int(w, ep->lid);
	ibw_jw_key(w, "loss_percent");
	ibw_jw_real(w, v->loss_pct);
	ibw_jw_key(w, "method");
	ibw_jw_string(w, ibw_ping_method_str(ep->last_method));
	ibw_jw_key(w, "name");
	ibw_jw_string(w, ep->name);
	ibw_jw_key(w, "node_guid");
	guid_or_null(w, ep->node_guid);
	ibw_jw_key(w, "port");
	ibw_jw_int(w, ep->port);
	ibw_jw_key(w, "port_guid");
	guid_or_null(w, ep->port_guid);
	ibw_jw_key(w, "reason");
	ibw_jw_string(w, ep->reason);
	ibw_jw_key(w, "received");
	ibw_jw_u64(w, ep->received);
	ibw_jw_key(w, "responder");
	ibw_jw_bool(w, ep->echo_answered);
	if (ep->responder_host[0]) {
		ibw_jw_key(w, "responder_host");
		ibw_jw_string(w, ep->responder_host);
	}
	ibw_jw_key(w, "rtt");
	ibw_jw_object(w);
	if (ep->received) {
		ibw_jw_key(w, "avg_ms");
		ibw_jw_real(w, ep->rtt_avg_us / 1000.0);
		ibw_jw_key(w, "last_ms");
		ibw_jw_real(w, (double)ep->rtt_last_us / 1000.0);
		ibw_jw_key(w, "max_ms");
		ibw_jw_real(w, (double)ep->rtt_max_us / 1000.0);
		ibw_jw_key(w, "mdev_ms");
		ibw_jw_real(w, ep->rtt_mdev_us / 1000.0);
		ibw_jw_key(w, "min_ms");
		ibw_jw_real(w, (double)ep->rtt_min_us / 1000.0);
	}
	ibw_jw_end(w);
	ibw_jw_key(w, "sent");
	ibw_jw_u64(w, ep->sent);
	ibw_jw_key(w, "state");
	ibw_jw_string(w, ibw_endport_state_str(ep->state));
	ibw_jw_key(w, "state_since");
	ibw_jw_time(w, ep->state_since_us);
	if (ep->target[0]) {
		ibw_jw_key(w, "target");
		ibw_jw_string(w, ep->target);
	}
	ibw_jw_key(w, "window_loss_percent");
	ibw_jw_real(w, v->window_loss_pct);
	ibw_jw_key(w, "window_probes");
	ibw_jw_int(w, ep->window_n);
	ibw_jw_end(w);
}

void ibw_json_write_endports(struct ibw_jw *w, const struct ibw_snapshot *s)
{
	size_t pos = 0;

	ibw_json_write_endports_part(w, s, &pos, SIZE_MAX);
}

static void endport_elem(struct ibw_jw *w, const void *v)
{
	endport_write(w, v);
}

int ibw_json_write_endports_part(struct ibw_jw *w, const struct ibw_snapshot *s,
				 size_t *pos, size_t budget)
{
	return list_part(w, pos, budget, s->endport_views, s->nendports,
			 sizeof(s->endport_views[0]), endport_elem);
}

json_t *ibw_json_ping_summary(const struct ibw_ping_summary *s)
{
	json_t *o = json_object(), *probes = json_array(), *rtt = json_object();
	unsigned i;

	json_object_set_new(o, "lid", json_integer(s->lid));
	json_object_set_new(o, "method",
			    json_string(ibw_ping_method_str(s->method)));
	json_object_set_new(o, "sent", json_integer(s->sent));
	json_object_set_new(o, "received", json_integer(s->received));
	json_object_set_new(o, "no_responder", json_integer(s->no_responder));
	json_object_set_new(o, "loss_percent", json_real(s->loss_pct));
	if (s->received) {
		json_object_set_new(rtt, "min_ms",
				    us_to_ms((double)s->rtt_min_us));
		json_object_set_new(rtt, "avg_ms", us_to_ms(s->rtt_avg_us));
		json_object_set_new(rtt, "max_ms",
				    us_to_ms((double)s->rtt_max_us));
		json_object_set_new(rtt, "mdev_ms", us_to_ms(s->rtt_mdev_us));
	}
	json_object_set_new(o, "rtt", rtt);
	if (s->responder_host[0])
		json_object_set_new(o, "responder_host",
				    json_string(s->responder_host));
	if (s->have_reply && s->last_reply.type == IBW_INFO_RESP) {
		json_object_set_new(o, "reply_lid",
				    json_integer(s->last_reply.lid));
		json_object_set_new(o, "reply_port_guid",
				    ibw_json_guid(s->last_reply.port_guid));
	}
	if (s->have_reply && s->last_reply.type == IBW_TS_RESP)
		json_object_set_new(
			o, "timestamps",
			json_pack("{s:I, s:I, s:I}", "originate",
				  (json_int_t)s->last_reply.ts_orig, "receive",
				  (json_int_t)s->last_reply.ts_recv, "transmit",
				  (json_int_t)s->last_reply.ts_xmit));
	for (i = 0; i < s->sent; i++) {
		const struct ibw_ping_probe *p = &s->probes[i];
		json_t *po = json_object();

		json_object_set_new(po, "seq", json_integer(p->seq));
		json_object_set_new(
			po, "result",
			json_string(p->bad_echo ? "bad echo"
				    : p->no_responder
					    ? "no responder"
					    : ibw_mad_result_str(p->result)));
		if ((p->result == IBW_MAD_OK && !p->bad_echo) ||
		    p->no_responder)
			json_object_set_new(po, "rtt_ms",
					    us_to_ms((double)p->rtt_us));
		json_array_append_new(probes, po);
	}
	json_object_set_new(o, "probes", probes);
	return o;
}

json_t *ibw_json_path(const struct ibw_path *p)
{
	json_t *o = json_object(), *hops = json_array();
	unsigned i;

	json_object_set_new(o, "status",
			    json_string(ibw_trace_status_str(p->status)));
	if (p->status != IBW_TRACE_OK) {
		json_object_set_new(o, "reason", json_string(p->reason));
		json_object_set_new(o, "failed_hop", json_integer(p->fail_hop));
	}
	for (i = 0; i < p->nhops; i++) {
		const struct ibw_hop *h = &p->hops[i];
		json_t *ho = json_object();

		json_object_set_new(ho, "hop", json_integer(i));
		json_object_set_new(ho, "node_guid",
				    ibw_json_guid(h->node_guid));
		if (h->type != IBW_NODE_SWITCH && h->port_guid)
			json_object_set_new(ho, "port_guid",
					    ibw_json_guid(h->port_guid));
		json_object_set_new(ho, "type",
				    json_string(ibw_node_type_str(h->type)));
		json_object_set_new(ho, "name", json_string(h->name));
		json_object_set_new(ho, "lid", json_integer(h->lid));
		json_object_set_new(ho, "in_port", json_integer(h->in_port));
		json_object_set_new(ho, "out_port", json_integer(h->out_port));
		if (h->out_port && h->state)
			json_object_set_new(
				ho, "link",
				json_pack("{s:s, s:s, s:s}", "state",
					  ibw_port_state_str(h->state), "width",
					  ibw_width_str(h->width), "speed",
					  ibw_speed_str(h->speed,
							h->speed_ext)));
		json_array_append_new(hops, ho);
	}
	json_object_set_new(o, "hops", hops);
	return o;
}

json_t *ibw_json_trace(const struct ibw_trace *t)
{
	json_t *o = ibw_json_path(&t->fwd);

	json_object_set_new(o, "source_lid", json_integer(t->slid));
	json_object_set_new(o, "destination_lid", json_integer(t->dlid));
	if (t->have_reverse) {
		json_object_set_new(o, "reverse", ibw_json_path(&t->rev));
		json_object_set_new(o, "paths_differ",
				    json_boolean(t->differs));
	}
	if (t->confirm != IBW_CONFIRM_NOT_TRIED) {
		json_object_set_new(o, "endport",
				    json_string(ibw_confirm_str(t->confirm)));
		if (t->confirm_guid)
			json_object_set_new(o, "endport_guid",
					    ibw_json_guid(t->confirm_guid));
	}
	json_object_set_new(o, "mads", json_integer(t->mads));
	json_object_set_new(o, "duration_ms",
			    json_real((double)t->duration_us / 1000.0));
	return o;
}

void ibw_json_write_watched(struct ibw_jw *w, const struct ibw_snapshot *s)
{
	unsigned i;

	ibw_jw_array(w);
	for (i = 0; i < s->nwatched; i++) {
		const struct ibw_watched *wt = &s->watched[i];
		json_t *o = json_object();

		json_object_set_new(o, "target", json_string(wt->target));
		json_object_set_new(o, "lid", json_integer(wt->lid));
		json_object_set_new(o, "traces", ibw_json_u64(wt->traces));
		json_object_set_new(o, "changes", ibw_json_u64(wt->changes));
		json_object_set_new(o, "last_trace",
				    ibw_json_time(wt->last_us));
		json_object_set_new(o, "last",
				    wt->have ? ibw_json_trace(&wt->last)
					     : json_null());
		ibw_jw_value(w, o);
	}
	ibw_jw_end(w);
}
