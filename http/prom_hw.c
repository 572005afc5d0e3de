// SPDX-License-Identifier: BSD-2-Clause
/*
 * Hardware health as Prometheus series (prom_hw.h). The switches'
 * families are infiniband_exporter's ibswinfo collector's: the same
 * names, labels and values (status labels "OK" or "ERROR", value 1), so
 * its dashboards and alerts work; a device that does not serve the
 * registers, or whose read failed, has none (absent, not frozen).
 */
#include <inttypes.h>
#include <stdio.h>

#include "prom_hw.h"

#define EXP "infiniband_switch_"

static const char *ok(int good)
{
	return good ? "OK" : "ERROR";
}

static const struct ibw_hw_node *sw(const struct ibw_snapshot *s,
				    const struct ibw_snapshot_node *nv)
{
	const struct ibw_hw_node *n;

	if (!nv->is_switch || nv->n->gone)
		return NULL;
	n = ibw_hw_view_find(s->hw, nv->n->guid);
	return n && n->state == IBW_HW_OK && n->have_mgir ? n : NULL;
}

static void hardware_info(struct ibw_pb *b, const struct ibw_snapshot *s)
{
	const struct ibw_snapshot_node *nv;
	const struct ibw_hw_node *n;
	unsigned k = 0;
	char fw[40];

	ibw_snapshot_foreach_node(s, nv) {
		if (!(n = sw(s, nv)))
			continue;
		if (!k++)
			ibw_pb_family(b, EXP "hardware_info", "gauge",
				      "Infiniband switch hardware info");
		snprintf(fw, sizeof(fw), "%u.%04u.%04u", n->mgir.fw_major,
			 n->mgir.fw_minor, n->mgir.fw_sub_minor);
		ibw_pb_put(b,
			   EXP "hardware_info{guid=\"0x%016" PRIx64
			       "\",firmware_version=\"%s\",psid=\"",
			   n->guid, fw);
		ibw_pb_label(b, n->mgir.psid);
		ibw_pb_put(b, "\",part_number=\"");
		ibw_pb_label(b, n->have_msgi ? n->msgi.part : "");
		ibw_pb_put(b, "\",serial_number=\"");
		ibw_pb_label(b, n->have_msgi ? n->msgi.serial : "");
		ibw_pb_put(b, "\",switch=\"");
		ibw_pb_label(b, nv->name);
		ibw_pb_put(b, "\"} 1\n");
	}
	k = 0;
	ibw_snapshot_foreach_node(s, nv) {
		if (!(n = sw(s, nv)))
			continue;
		if (!k++)
			ibw_pb_family(b, EXP "uptime_seconds", "gauge",
				      "Infiniband switch uptime in seconds");
		ibw_pb_put(b,
			   EXP "uptime_seconds{guid=\"0x%016" PRIx64 "\"} %u\n",
			   n->guid, n->mgir.uptime_s);
	}
}

static void psu_families(struct ibw_pb *b, const struct ibw_snapshot *s)
{
	static const struct {
		const char *name, *help;
	} f[] = {
		{ EXP "power_supply_status_info",
		  "Infiniband switch power supply status" },
		{ EXP "power_supply_dc_power_status_info",
		  "Infiniband switch power supply DC power status" },
		{ EXP "power_supply_fan_status_info",
		  "Infiniband switch power supply fan status" },
		{ EXP "power_supply_watts",
		  "Infiniband switch power supply watts" },
	};
	const struct ibw_snapshot_node *nv;
	const struct ibw_hw_node *n;
	unsigned i, j, k;

	for (j = 0; j < sizeof(f) / sizeof(f[0]); j++) {
		k = 0;
		ibw_snapshot_foreach_node(s, nv) {
			if (!(n = sw(s, nv)) || !n->have_psus)
				continue;
			for (i = 0; i < IBW_HW_PSUS; i++) {
				const struct ibw_hw_psu *p = &n->psus[i];
				const char *st;

				/* as ibswinfo: no fan status where the
				 * supply has no fan, no watts when 0 */
				if ((j == 2 && p->fan == 3) ||
				    (j == 3 && !p->watts))
					continue;
				if (!k++)
					ibw_pb_family(b, f[j].name, "gauge",
						      f[j].help);
				if (j == 3) {
					ibw_pb_put(b,
						   "%s{guid=\"0x%016" PRIx64
						   "\",psu=\"%u\"} %u\n",
						   f[j].name, n->guid, i,
						   p->watts);
					continue;
				}
				st = j == 0   ? ok(p->present)
				     : j == 1 ? ok(p->dc_ok)
					      : ok(p->fan == 2);
				ibw_pb_put(b,
					   "%s{guid=\"0x%016" PRIx64
					   "\",psu=\"%u\",status=\"%s\"} 1\n",
					   f[j].name, n->guid, i, st);
			}
		}
	}
}

/* The exporter's one temperature per switch is ibswinfo's: MTMP sensor
 * 0, the ASIC's (ibswinfo truncates it to whole degrees; this is the
 * register's 0.125 C). */
static void temp_fan_families(struct ibw_pb *b, const struct ibw_snapshot *s)
{
	const struct ibw_snapshot_node *nv;
	const struct ibw_hw_node *n;
	unsigned i, k = 0;

	ibw_snapshot_foreach_node(s, nv) {
		if (!(n = sw(s, nv)) || !n->nsensors ||
		    n->sensors[0].index != 0 || !n->sensors[0].have)
			continue;
		if (!k++)
			ibw_pb_family(b, EXP "temperature_celsius", "gauge",
				      "Infiniband switch temperature celsius");
		ibw_pb_put(b,
			   EXP "temperature_celsius{guid=\"0x%016" PRIx64
			       "\"} %.3f\n",
			   n->guid, n->sensors[0].temp_c);
	}
	k = 0;
	ibw_snapshot_foreach_node(s, nv) {
		if (!(n = sw(s, nv)) || !n->nfans)
			continue;
		if (!k++)
			ibw_pb_family(b, EXP "fan_status_info", "gauge",
				      "Infiniband switch fan status");
		ibw_pb_put(b,
			   EXP "fan_status_info{guid=\"0x%016" PRIx64
			       "\",status=\"%s\"} 1\n",
			   n->guid, ok(!ibw_hw_node_fans_failed(n)));
	}
	k = 0;
	ibw_snapshot_foreach_node(s, nv) {
		if (!(n = sw(s, nv)))
			continue;
		for (i = 0; i < n->nfans; i++) {
			if (!n->fans[i].have)
				continue;
			if (!k++)
				ibw_pb_family(b, EXP "fan_rpm", "gauge",
					      "Infiniband switch fan RPM");
			ibw_pb_put(b,
				   EXP "fan_rpm{guid=\"0x%016" PRIx64
				       "\",fan=\"%u\"} %u\n",
				   n->guid, n->fans[i].tacho, n->fans[i].rpm);
		}
	}
}

unsigned ibw_prom_hw_switches(const struct ibw_snapshot *s)
{
	const struct ibw_snapshot_node *nv;
	unsigned k = 0;

	if (!s->hw)
		return 0;
	ibw_snapshot_foreach_node(s, nv)
		k += sw(s, nv) != NULL;
	return k;
}

/* The exporter's per-switch collection figures, with the collector
 * "ibswinfo": how long the switch's part of the last sweep took, and
 * whether it failed or timed out. */
void ibw_prom_hw_collect(struct ibw_pb *b, const struct ibw_snapshot *s,
			 unsigned what, const char *name)
{
	const struct ibw_snapshot_node *nv;
	const struct ibw_hw_node *n;

	if (!s->hw)
		return;
	ibw_snapshot_foreach_node(s, nv) {
		if (!(n = sw(s, nv)))
			continue;
		ibw_pb_put(b,
			   "%s{collector=\"ibswinfo\",guid=\"0x%016" PRIx64
			   "\"} ",
			   name, n->guid);
		if (what == 2)
			ibw_pb_put(b, "%.6f\n", (double)n->sweep_us / 1e6);
		else
			ibw_pb_put(b, "%d\n",
				   what == 0 ? n->sweep_errors != 0
					     : n->sweep_timeouts != 0);
	}
}

/* ibwatch's own: every sensor of every device that serves them, with
 * its high threshold, and every asked device's state. */
static void own_families(struct ibw_pb *b, const struct ibw_snapshot *s)
{
	static const char *const fam[2][2] = {
		{ "ibwatch_hw_temperature_celsius",
		  "A device's temperature sensor (MTMP), in Celsius." },
		{ "ibwatch_hw_temperature_threshold_celsius",
		  "A sensor's high (warning) threshold (MTMP "
		  "temperature_threshold_hi), in Celsius; absent when the "
		  "device gives none." },
	};
	const struct ibw_hw_view *v = s->hw;
	unsigned i, j, k, m;

	for (j = 0; j < 2; j++) {
		k = 0;
		for (i = 0; v && i < v->nnodes; i++) {
			const struct ibw_hw_node *n = &v->nodes[i];

			if (n->state != IBW_HW_OK)
				continue;
			for (m = 0; m < n->nsensors; m++) {
				const struct ibw_hw_sensor *t = &n->sensors[m];

				if (!t->have || (j == 1 && t->hi_c <= 0))
					continue;
				if (!k++)
					ibw_pb_family(b, fam[j][0], "gauge",
						      fam[j][1]);
				ibw_pb_put(
					b,
					"%s{guid=\"0x%016" PRIx64
					"\",type=\"%s\",sensor=\"%u\",name=\"",
					fam[j][0], n->guid,
					ibw_pb_kind(n->is_switch), t->index);
				ibw_pb_label(b, t->name);
				ibw_pb_put(b, "\"} %.3f\n",
					   j ? t->hi_c : t->temp_c);
			}
		}
	}
	k = 0;
	for (i = 0; v && i < v->nnodes; i++) {
		const struct ibw_hw_node *n = &v->nodes[i];

		if (n->state == IBW_HW_VENDOR)
			continue;
		if (!k++)
			ibw_pb_family(b, "ibwatch_hw_device_info", "gauge",
				      "A device asked for its hardware health "
				      "and what it said: ok, refused, silent "
				      "or new (not asked yet).");
		ibw_pb_put(b,
			   "ibwatch_hw_device_info{guid=\"0x%016" PRIx64
			   "\",type=\"%s\",state=\"%s\"} 1\n",
			   n->guid, ibw_pb_kind(n->is_switch),
			   ibw_hw_state_str(n->state));
	}
}

/* A module lane that exists: the first four always, the others when
 * the module reports anything on them. */
static int lane_used(const struct ibw_hw_modinfo *i, unsigned l)
{
	return l < 4 || i->rx_uw[l] || i->tx_uw[l] || i->bias_ma[l] > 0;
}

/* Every cable module read, by its node GUID and port (docs/api.md). */
static void module_families(struct ibw_pb *b, const struct ibw_snapshot *s)
{
	static const char *const fam[7][2] = {
		{ "ibwatch_module_info",
		  "A cable module plugged in at a port: its vendor, part and "
		  "serial number and revision (PDDR module info)." },
		{ "ibwatch_module_temperature_celsius",
		  "The module's temperature." },
		{ "ibwatch_module_voltage_volts",
		  "The module's supply voltage." },
		{ "ibwatch_module_rx_power_dbm",
		  "Optical power a lane of the module receives." },
		{ "ibwatch_module_tx_power_dbm",
		  "Optical power a lane of the module transmits." },
		{ "ibwatch_module_tx_bias_amperes",
		  "A lane's transmitter bias current." },
		{ "ibwatch_module_health",
		  "What the module says of itself: 0 ok, 1 a warning, 2 an "
		  "alarm (its latched flags, its values against its alarm "
		  "thresholds)." },
	};
	const struct ibw_hw_view *v = s->hw;
	unsigned j, i, m, l, k;

	for (j = 0; j < 7; j++) {
		k = 0;
		for (i = 0; v && i < v->nnodes; i++) {
			const struct ibw_hw_node *n = &v->nodes[i];

			for (m = 0; n->state == IBW_HW_OK && m < n->nmodules;
			     m++) {
				const struct ibw_hw_module *x = &n->modules[m];
				const struct ibw_hw_modinfo *in = &x->info;

				if (!ibw_hw_module_present(x))
					continue;
				if (!k++)
					ibw_pb_family(b, fam[j][0], "gauge",
						      fam[j][1]);
				if (j >= 3 && j <= 5) {
					for (l = 0; l < IBW_MODULE_LANES; l++) {
						double val;

						if (!lane_used(in, l))
							continue;
						val = j == 3 ? ibw_hw_dbm(
								       in->rx_uw[l])
						      : j == 4
							      ? ibw_hw_dbm(
									in->tx_uw[l])
							      : in->bias_ma[l] /
									1000.0;
						ibw_pb_put(
							b,
							"%s{guid=\"0x%016" PRIx64
							"\",port=\"%u\",lane="
							"\"%u\"} %.6g\n",
							fam[j][0], n->guid,
							x->port, l, val);
					}
					continue;
				}
				ibw_pb_put(b,
					   "%s{guid=\"0x%016" PRIx64
					   "\",port=\"%u\"",
					   fam[j][0], n->guid, x->port);
				if (j == 0) {
					ibw_pb_put(b, ",vendor=\"");
					ibw_pb_label(b, in->vendor);
					ibw_pb_put(b, "\",part_number=\"");
					ibw_pb_label(b, in->pn);
					ibw_pb_put(b, "\",serial_number=\"");
					ibw_pb_label(b, in->sn);
					ibw_pb_put(b, "\",revision=\"");
					ibw_pb_label(b, in->rev);
					ibw_pb_put(b, "\"} 1\n");
				} else if (j == 1) {
					ibw_pb_put(b, "} %.6g\n", in->temp_c);
				} else if (j == 2) {
					ibw_pb_put(b, "} %.6g\n", in->volt_v);
				} else {
					ibw_pb_put(b, "} %u\n",
						   (unsigned)x->judged.level);
				}
			}
		}
	}
}

void ibw_prom_hw(struct ibw_pb *b, const struct ibw_snapshot *s,
		 const struct ibw_prom_opts *o)
{
	if (!s->hw)
		return;
	hardware_info(b, s);
	psu_families(b, s);
	temp_fan_families(b, s);
	own_families(b, s);
	if (!o->no_modules)
		module_families(b, s);
}
