// SPDX-License-Identifier: BSD-2-Clause
/*
 * Events as JSON (/api/v1/events, the event stream, a link's events): a
 * tree (ibw_json_event) and the same written by the streaming writer.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "json_events.h"
#include "json_links.h"
#include "json_routes.h"

json_t *ibw_json_event(const struct ibw_event *e)
{
	json_t *o = json_object();

	json_object_set_new(o, "seq", ibw_json_u64(e->seq));
	json_object_set_new(o, "time", ibw_json_time(e->time_us));
	json_object_set_new(o, "kind",
			    json_string(ibw_event_kind_str(e->kind)));
	json_object_set_new(o, "node_guid", ibw_json_guid(e->node_guid));
	json_object_set_new(o, "name",
			    e->name[0] ? json_string(e->name) : json_null());
	json_object_set_new(o, "port", json_integer(e->port));
	switch (e->kind) {
	case IBW_EVT_ENDPORT_STATE:
		json_object_set_new(o, "port_guid",
				    ibw_json_guid(e->peer_guid));
		json_object_set_new(
			o, "old",
			json_string(ibw_endport_state_str(e->old_value)));
		json_object_set_new(
			o, "new",
			json_string(ibw_endport_state_str(e->new_value)));
		json_object_set_new(o, "reason", json_string(e->what));
		break;
	case IBW_EVT_PATH_CHANGED:
		json_object_set_new(o, "target", json_string(e->what));
		json_object_set_new(o, "paths", json_string(e->detail));
		break;
	case IBW_EVT_PORT_STATE_CHANGED:
		json_object_set_new(
			o, "old",
			json_string(ibw_port_state_str(e->old_value)));
		json_object_set_new(
			o, "new",
			json_string(ibw_port_state_str(e->new_value)));
		break;
	case IBW_EVT_LINK_HEALTH_CHANGED:
		ibw_json_link_event(o, e);
		break;
	case IBW_EVT_LOCAL_PORT_LOST:
		json_object_set_new(o, "state", json_string(e->what));
		break;
	case IBW_EVT_LOCAL_PORT_BACK:
		json_object_set_new(o, "lost_ms", ibw_json_u64(e->new_value));
		break;
	case IBW_EVT_HW_HEALTH:
		json_object_set_new(o, "what", json_string(e->what));
		json_object_set_new(o, "bad", json_integer(e->new_value != 0));
		json_object_set_new(o, "detail", json_string(e->detail));
		break;
	case IBW_EVT_FABRIC_CHANGED:
		json_object_set_new(o, "what", json_string(e->what));
		json_object_set_new(o, "old_sm_guid",
				    ibw_json_guid(e->old_value));
		json_object_set_new(o, "new_sm_guid",
				    ibw_json_guid(e->new_value));
		json_object_set_new(o, "detail", json_string(e->detail));
		break;
	case IBW_EVT_ENDPORT_MOVED:
		/* old and new are LIDs */
		json_object_set_new(o, "port_guid",
				    ibw_json_guid(e->peer_guid));
		json_object_set_new(o, "old",
				    json_integer((json_int_t)e->old_value));
		json_object_set_new(o, "new",
				    json_integer((json_int_t)e->new_value));
		json_object_set_new(o, "reason", json_string(e->what));
		break;
	case IBW_EVT_ROUTES_LOST:
	case IBW_EVT_ROUTES_RESTORED:
	case IBW_EVT_ROUTE_LOOPS:
	case IBW_EVT_ROUTE_BALANCE:
	case IBW_EVT_ROUTE_LOAD:
		ibw_json_route_event(o, e);
		break;
	default:
		if (e->peer_guid) {
			json_object_set_new(o, "peer_guid",
					    ibw_json_guid(e->peer_guid));
			json_object_set_new(o, "peer_port",
					    json_integer(e->peer_port));
		}
		if (e->what[0])
			json_object_set_new(o, "counter", json_string(e->what));
		json_object_set_new(o, "old", ibw_json_u64(e->old_value));
		json_object_set_new(o, "new", ibw_json_u64(e->new_value));
	}
	return o;
}

/* A member of an event being written: the members differ by kind, so
 * they are gathered, then sorted as JSON_SORT_KEYS would. */
enum ev_type { EV_INT, EV_U64, EV_STR, EV_GUID, EV_TIME, EV_REASONS, EV_IDS };

struct ev_member {
	const char *key;
	enum ev_type type;
	uint64_t v;
	const char *s;
};

struct ev_members {
	struct ev_member m[16];
	unsigned n;
};

static void ev_add(struct ev_members *e, const char *key, enum ev_type type,
		   uint64_t v, const char *s)
{
	struct ev_member *m = &e->m[e->n++];

	m->key = key;
	m->type = type;
	m->v = v;
	m->s = s;
}

/* ibw_json_event(@e), written. */
static void event_write(struct ibw_jw *w, const struct ibw_event *e)
{
	struct ev_members m = { .n = 0 };
	const char *lanes;
	struct ev_member t;
	unsigned i, j;

	ev_add(&m, "seq", EV_U64, e->seq, NULL);
	ev_add(&m, "time", EV_TIME, e->time_us, NULL);
	ev_add(&m, "kind", EV_STR, 0, ibw_event_kind_str(e->kind));
	ev_add(&m, "node_guid", EV_GUID, e->node_guid, NULL);
	ev_add(&m, "name", EV_STR, 0, e->name[0] ? e->name : NULL);
	ev_add(&m, "port", EV_INT, e->port, NULL);
	switch (e->kind) {
	case IBW_EVT_ENDPORT_STATE:
		ev_add(&m, "port_guid", EV_GUID, e->peer_guid, NULL);
		ev_add(&m, "old", EV_STR, 0,
		       ibw_endport_state_str((int)e->old_value));
		ev_add(&m, "new", EV_STR, 0,
		       ibw_endport_state_str((int)e->new_value));
		ev_add(&m, "reason", EV_STR, 0, e->what);
		break;
	case IBW_EVT_PATH_CHANGED:
		ev_add(&m, "target", EV_STR, 0, e->what);
		ev_add(&m, "paths", EV_STR, 0, e->detail);
		break;
	case IBW_EVT_PORT_STATE_CHANGED:
		ev_add(&m, "old", EV_STR, 0,
		       ibw_port_state_str((int)e->old_value));
		ev_add(&m, "new", EV_STR, 0,
		       ibw_port_state_str((int)e->new_value));
		break;
	case IBW_EVT_LINK_HEALTH_CHANGED:
		/* ibw_json_link_event()'s members */
		ev_add(&m, "peer_guid", EV_GUID, e->peer_guid, NULL);
		ev_add(&m, "peer_port", EV_INT, e->peer_port, NULL);
		ev_add(&m, "old", EV_STR, 0,
		       ibw_link_health_str((enum ibw_link_health)e->old_value));
		ev_add(&m, "new", EV_STR, 0,
		       ibw_link_health_str((enum ibw_link_health)e->new_value));
		ev_add(&m, "old_reasons", EV_REASONS, e->old_reasons, NULL);
		ev_add(&m, "reasons", EV_REASONS, e->reasons, NULL);
		lanes = strstr(e->detail, "; ");
		ev_add(&m, "bad_lanes", EV_STR, 0, lanes ? lanes + 2 : NULL);
		ev_add(&m, "affects", EV_IDS, 0, e->affects);
		break;
	case IBW_EVT_LOCAL_PORT_LOST:
		ev_add(&m, "state", EV_STR, 0, e->what);
		break;
	case IBW_EVT_LOCAL_PORT_BACK:
		ev_add(&m, "lost_ms", EV_U64, e->new_value, NULL);
		break;
	case IBW_EVT_HW_HEALTH:
		ev_add(&m, "what", EV_STR, 0, e->what);
		ev_add(&m, "bad", EV_INT, e->new_value != 0, NULL);
		ev_add(&m, "detail", EV_STR, 0, e->detail);
		break;
	case IBW_EVT_FABRIC_CHANGED:
		ev_add(&m, "what", EV_STR, 0, e->what);
		ev_add(&m, "old_sm_guid", EV_GUID, e->old_value, NULL);
		ev_add(&m, "new_sm_guid", EV_GUID, e->new_value, NULL);
		ev_add(&m, "detail", EV_STR, 0, e->detail);
		break;
	case IBW_EVT_ENDPORT_MOVED:
		ev_add(&m, "port_guid", EV_GUID, e->peer_guid, NULL);
		ev_add(&m, "old", EV_INT, e->old_value, NULL);
		ev_add(&m, "new", EV_INT, e->new_value, NULL);
		ev_add(&m, "reason", EV_STR, 0, e->what);
		break;
	case IBW_EVT_ROUTES_LOST:
	case IBW_EVT_ROUTES_RESTORED:
	case IBW_EVT_ROUTE_LOOPS:
	case IBW_EVT_ROUTE_BALANCE:
	case IBW_EVT_ROUTE_LOAD:
		/* ibw_json_route_event()'s members */
		ev_add(&m, "old", EV_U64, e->old_value, NULL);
		ev_add(&m, "new", EV_U64, e->new_value, NULL);
		ev_add(&m, "detail", EV_STR, 0, e->detail);
		break;
	default:
		if (e->peer_guid) {
			ev_add(&m, "peer_guid", EV_GUID, e->peer_guid, NULL);
			ev_add(&m, "peer_port", EV_INT, e->peer_port, NULL);
		}
		if (e->what[0])
			ev_add(&m, "counter", EV_STR, 0, e->what);
		ev_add(&m, "old", EV_U64, e->old_value, NULL);
		ev_add(&m, "new", EV_U64, e->new_value, NULL);
	}
	for (i = 1; i < m.n; i++)
		for (j = i; j > 0 && strcmp(m.m[j].key, m.m[j - 1].key) < 0;
		     j--) {
			t = m.m[j];
			m.m[j] = m.m[j - 1];
			m.m[j - 1] = t;
		}
	ibw_jw_object(w);
	for (i = 0; i < m.n; i++) {
		const struct ev_member *x = &m.m[i];

		ibw_jw_key(w, x->key);
		switch (x->type) {
		case EV_INT:
			/* json_integer() of what json_int_t holds */
			ibw_jw_int(w, (int64_t)x->v);
			break;
		case EV_U64:
			ibw_jw_u64(w, x->v);
			break;
		case EV_STR:
			/* NULL: null */
			if (x->s)
				ibw_jw_string(w, x->s);
			else
				ibw_jw_null(w);
			break;
		case EV_GUID:
			ibw_jw_guid(w, x->v);
			break;
		case EV_TIME:
			ibw_jw_time(w, x->v);
			break;
		case EV_REASONS:
			ibw_jw_link_reasons(w, (uint32_t)x->v);
			break;
		case EV_IDS:
			ibw_jw_value(w, ibw_json_id_list(x->s));
			break;
		}
	}
	ibw_jw_end(w);
}

void ibw_json_write_events_doc(struct ibw_jw *w, uint64_t last_seq,
			       const struct ibw_event *ev, unsigned n)
{
	unsigned i;

	ibw_jw_object(w);
	ibw_jw_key(w, "events");
	ibw_jw_array(w);
	for (i = 0; i < n; i++)
		event_write(w, &ev[i]);
	ibw_jw_end(w);
	ibw_jw_key(w, "last_seq");
	ibw_jw_value(w, ibw_json_u64(last_seq));
	ibw_jw_end(w);
}
