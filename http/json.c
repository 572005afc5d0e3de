#include <inttypes.h>
#include <stdio.h>

#include "json.h"

json_t *ibw_json_guid(uint64_t guid)
{
	char buf[19];

	snprintf(buf, sizeof(buf), "0x%016" PRIx64, guid);
	return json_string(buf);
}

json_t *ibw_json_engine_stats(const struct ibw_engine_stats *st)
{
	return json_pack(
		"{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
		" s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"submitted", (json_int_t)st->submitted, "sent",
		(json_int_t)st->sent, "received", (json_int_t)st->received,
		"ok", (json_int_t)st->ok, "timeouts", (json_int_t)st->timeouts,
		"try_timeouts", (json_int_t)st->try_timeouts, "retries",
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
		"inflight_high_water", (json_int_t)st->inflight_hwm, "queued",
		(json_int_t)st->queued, "queued_high_water",
		(json_int_t)st->queued_hwm);
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
	return o;
}
