// SPDX-License-Identifier: BSD-2-Clause
/* Hardware health as JSON (json_hw.h). */
#include <stdio.h>

#include "json_hw.h"
#include "jw.h"

static const struct {
	unsigned bit;
	const char *name;
} reg_names[] = {
	{ IBW_HWR_MGIR, "MGIR" },   { IBW_HWR_MSGI, "MSGI" },
	{ IBW_HWR_MTCAP, "MTCAP" }, { IBW_HWR_MTMP, "MTMP" },
	{ IBW_HWR_MFCR, "MFCR" },   { IBW_HWR_MFSM, "MFSM" },
	{ IBW_HWR_MFSL, "MFSL" },   { IBW_HWR_MSPS, "MSPS" },
	{ IBW_HWR_PDDR, "PDDR" },
};

static const char *psu_fan(int fan)
{
	return fan == 2 ? "ok" : fan == 3 ? "none" : "failed";
}

static json_t *sensors(const struct ibw_hw_node *n)
{
	json_t *a = json_array();
	unsigned i;

	for (i = 0; i < n->nsensors; i++) {
		const struct ibw_hw_sensor *s = &n->sensors[i];

		if (!s->have)
			continue;
		json_array_append_new(
			a,
			json_pack("{s:i, s:s, s:f, s:f, s:f, s:f, s:b}",
				  "index", (int)s->index, "name", s->name,
				  "temperature_c", s->temp_c, "max_c", s->max_c,
				  "threshold_high_c", s->hi_c,
				  "threshold_low_c", s->lo_c, "hot", s->hot));
	}
	return a;
}

static json_t *fans(const struct ibw_hw_node *n)
{
	json_t *a = json_array();
	unsigned i;

	for (i = 0; i < n->nfans; i++) {
		const struct ibw_hw_fanv *f = &n->fans[i];
		json_t *o;

		if (!f->have)
			continue;
		o = json_pack("{s:i, s:i, s:b}", "tacho", (int)f->tacho, "rpm",
			      (int)f->rpm, "failed", f->failed);

		json_object_set_new(o, "min_rpm",
				    f->have_limits ? json_integer(f->min_rpm)
						   : json_null());
		json_object_set_new(o, "max_rpm",
				    f->have_limits ? json_integer(f->max_rpm)
						   : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *psus(const struct ibw_hw_node *n)
{
	json_t *a = json_array();
	unsigned i;

	for (i = 0; n->have_psus && i < IBW_HW_PSUS; i++) {
		const struct ibw_hw_psu *p = &n->psus[i];

		json_array_append_new(
			a, json_pack("{s:i, s:b, s:b, s:s, s:i, s:s, s:s, s:b}",
				     "index", (int)i, "present", p->present,
				     "dc_ok", p->dc_ok, "fan", psu_fan(p->fan),
				     "watts", (int)p->watts, "serial_number",
				     p->serial, "part_number", p->part,
				     "failed", n->psu_failed[i]));
	}
	return a;
}

static json_t *lanes(const struct ibw_hw_modinfo *i, int what, unsigned n)
{
	json_t *a = json_array();
	unsigned l;

	for (l = 0; l < n; l++)
		json_array_append_new(
			a, json_real(what == 0	 ? ibw_hw_dbm(i->rx_uw[l])
				     : what == 1 ? ibw_hw_dbm(i->tx_uw[l])
						 : i->bias_ma[l]));
	return a;
}

static json_t *module_json(const struct ibw_hw_module *m)
{
	const struct ibw_hw_modinfo *i = &m->info;
	const struct ibw_hw_modflags *f = &m->flags;
	char text[200];
	json_t *o;

	o = json_pack("{s:i, s:b}", "port", (int)m->port, "present",
		      ibw_hw_module_present(m));
	if (!m->have_info)
		return o;
	json_object_set_new(o, "identifier", json_integer(i->identifier));
	json_object_set_new(o, "type", json_integer(i->type));
	json_object_set_new(o, "vendor", json_string(i->vendor));
	json_object_set_new(o, "part_number", json_string(i->pn));
	json_object_set_new(o, "serial_number", json_string(i->sn));
	json_object_set_new(o, "revision", json_string(i->rev));
	json_object_set_new(o, "length_m", json_integer(i->length_m));
	json_object_set_new(o, "wavelength_nm", json_integer(i->wavelength_nm));
	if (!ibw_hw_module_present(m))
		return o;
	json_object_set_new(o, "temperature_c", json_real(i->temp_c));
	json_object_set_new(o, "voltage_v", json_real(i->volt_v));
	json_object_set_new(o, "rx_power_dbm", lanes(i, 0, IBW_MODULE_LANES));
	json_object_set_new(o, "tx_power_dbm", lanes(i, 1, IBW_MODULE_LANES));
	json_object_set_new(o, "tx_bias_ma", lanes(i, 2, IBW_MODULE_LANES));
	json_object_set_new(
		o, "alarm_thresholds",
		json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
			  "temperature_high_c", i->temp_hi_c,
			  "temperature_low_c", i->temp_lo_c, "voltage_high_v",
			  i->volt_hi_v, "voltage_low_v", i->volt_lo_v,
			  "rx_power_high_dbm", ibw_hw_dbm(i->rx_hi_uw),
			  "rx_power_low_dbm", ibw_hw_dbm(i->rx_lo_uw),
			  "tx_power_high_dbm", ibw_hw_dbm(i->tx_hi_uw),
			  "tx_power_low_dbm", ibw_hw_dbm(i->tx_lo_uw),
			  "tx_bias_high_ma", i->bias_hi_ma, "tx_bias_low_ma",
			  i->bias_lo_ma));
	if (m->have_flags)
		json_object_set_new(
			o, "flags",
			json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i}",
				  "temperature", (int)f->temp, "voltage",
				  (int)f->vcc, "rx_power_low_warning",
				  f->rx_lo_war, "rx_power_low_alarm",
				  f->rx_lo_al, "rx_power_high_warning",
				  f->rx_hi_war, "rx_power_high_alarm",
				  f->rx_hi_al, "tx_fault", f->tx_fault,
				  "rx_los", f->rx_los));
	ibw_link_module_fmt(&m->judged, text, sizeof(text));
	json_object_set_new(o, "health",
			    json_string(m->judged.level == 2   ? "alarm"
					: m->judged.level == 1 ? "warning"
							       : "ok"));
	json_object_set_new(o, "reason", json_string(text));
	return o;
}

/* @full: each module in full (a node's details); else their counts (the
 * list: 57,000 modules' lanes would make it hundreds of megabytes). */
static json_t *node_json(const struct ibw_snapshot *s,
			 const struct ibw_hw_node *n, int full)
{
	const struct ibw_fnode *fn = NULL;
	const struct ibw_snapshot_node *nv = ibw_snapshot_find_node(s, n->guid);
	char v[48];
	json_t *o, *miss, *mods;
	unsigned i;

	if (nv)
		fn = nv->n;
	snprintf(v, sizeof(v), "0x%06x", n->vendor_id);
	o = json_pack("{s:o, s:s, s:i, s:s, s:s, s:s}", "guid",
		      ibw_json_guid(n->guid), "name",
		      fn ? ibw_snapshot_node_name(s, fn) : "", "lid",
		      (int)n->lid, "type", n->is_switch ? "switch" : "ca",
		      "vendor_id", v, "state", ibw_hw_state_str(n->state));
	if (n->have_mgir) {
		const struct ibw_hw_mgir *g = &n->mgir;

		snprintf(v, sizeof(v), "%u.%04u.%04u", g->fw_major, g->fw_minor,
			 g->fw_sub_minor);
		json_object_set_new(o, "firmware_version", json_string(v));
		json_object_set_new(o, "psid", json_string(g->psid));
		json_object_set_new(o, "device_id", json_integer(g->device_id));
		snprintf(v, sizeof(v), "0x%04x", g->hw_dev_id);
		json_object_set_new(o, "hw_dev_id", json_string(v));
		json_object_set_new(o, "hw_revision", json_integer(g->hw_rev));
		json_object_set_new(o, "uptime_s", json_integer(g->uptime_s));
		json_object_set_new(o, "read_at", ibw_json_time(n->mgir_us));
	}
	if (n->have_msgi) {
		json_object_set_new(o, "serial_number",
				    json_string(n->msgi.serial));
		json_object_set_new(o, "part_number",
				    json_string(n->msgi.part));
		json_object_set_new(o, "revision",
				    json_string(n->msgi.revision));
		json_object_set_new(o, "product_name",
				    json_string(n->msgi.product));
	}
	if (n->state == IBW_HW_OK) {
		json_object_set_new(o, "sensors", sensors(n));
		json_object_set_new(o, "fans", fans(n));
		json_object_set_new(o, "power_supplies", psus(n));
		json_object_set_new(o, "fans_failed",
				    json_integer(ibw_hw_node_fans_failed(n)));
		json_object_set_new(o, "power_supplies_failed",
				    json_integer(ibw_hw_node_psus_failed(n)));
		if (full) {
			mods = json_array();
			for (i = 0; i < n->nmodules; i++)
				json_array_append_new(
					mods, module_json(&n->modules[i]));
			json_object_set_new(o, "modules", mods);
		} else {
			unsigned c[4] = { 0, 0, 0, 0 };

			for (i = 0; i < n->nmodules; i++) {
				const struct ibw_hw_module *m = &n->modules[i];

				c[0] += ibw_hw_module_present(m);
				c[1 +
				  (m->judged.level > 2 ? 0 : m->judged.level)]++;
			}
			json_object_set_new(o, "modules",
					    json_pack("{s:i, s:i, s:i, s:i}",
						      "ports", (int)n->nmodules,
						      "present", (int)c[0],
						      "warning", (int)c[2],
						      "alarm", (int)c[3]));
		}
	}
	miss = json_array();
	for (i = 0; i < sizeof(reg_names) / sizeof(reg_names[0]); i++)
		if (n->missing & reg_names[i].bit)
			json_array_append_new(miss,
					      json_string(reg_names[i].name));
	json_object_set_new(o, "registers_missing", miss);
	json_object_set_new(o, "mads", ibw_json_u64(n->mads));
	json_object_set_new(o, "timeouts", ibw_json_u64(n->timeouts));
	json_object_set_new(o, "last_sweep",
			    json_pack("{s:i, s:i, s:i}", "mads",
				      (int)n->sweep_mads, "timeouts",
				      (int)n->sweep_timeouts, "errors",
				      (int)n->sweep_errors));
	return o;
}

json_t *ibw_json_hw_node(const struct ibw_snapshot *s, uint64_t guid)
{
	const struct ibw_hw_node *n = ibw_hw_view_find(s->hw, guid);

	return n ? node_json(s, n, 1) : json_null();
}

json_t *ibw_json_hardware(const struct ibw_snapshot *s)
{
	const struct ibw_hw_view *v = s->hw;
	json_t *o, *a = json_array();
	unsigned i;

	if (!v)
		return json_pack("{s:i, s:o}", "sweeps", 0, "nodes", a);
	for (i = 0; i < v->nnodes; i++)
		json_array_append_new(a, node_json(s, &v->nodes[i], 0));
	o = json_pack("{s:o, s:f, s:f, s:o, s:o, s:o, s:o, s:o}", "sweeps",
		      ibw_json_u64(v->sweeps), "interval_s",
		      (double)v->interval_us / 1e6, "duration_s",
		      (double)v->duration_us / 1e6, "mads",
		      ibw_json_u64(v->mads), "timeouts",
		      ibw_json_u64(v->timeouts), "last_sweep_mads",
		      ibw_json_u64(v->sweep_mads), "taken",
		      ibw_json_time(v->taken_us), "nodes", a);
	return o;
}
