// SPDX-License-Identifier: BSD-2-Clause
/* IBWATCH-MIB's hardware tables (mib_hw.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "mib_hw.h"
#include "mib_rows.h"

enum { T_DEV, T_SENSOR, T_FAN, T_PSU, T_N };

/* A row: the node's ibwNodeIndex and the item's index (from 1; 0 for a
 * device row), the device and which of its items. */
struct hwrow {
	uint32_t node, sub;
	const struct ibw_hw_node *n;
	unsigned i;
};

struct mib_hw {
	struct hwrow *r[T_N];
	unsigned n[T_N];
};

static int cmp_hwrow(const void *a, const void *b)
{
	const struct hwrow *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->sub < y->sub ? -1 : x->sub > y->sub;
}

void mib_hw_drop(struct ibw_mib *m)
{
	unsigned t;

	if (!m->hw)
		return;
	for (t = 0; t < T_N; t++) {
		free(m->hw->r[t]);
		m->hw->r[t] = NULL;
		m->hw->n[t] = 0;
	}
}

void mib_hw_free(struct ibw_mib *m)
{
	mib_hw_drop(m);
	free(m->hw);
	m->hw = NULL;
}

static void add(struct mib_hw *hw, unsigned t, uint32_t node, uint32_t sub,
		const struct ibw_hw_node *n, unsigned i)
{
	struct hwrow *r = &hw->r[t][hw->n[t]++];

	r->node = node;
	r->sub = sub;
	r->n = n;
	r->i = i;
}

int mib_hw_index(struct ibw_mib *m)
{
	const struct ibw_hw_view *v = m->snap->hw;
	unsigned i, k, cnt[T_N] = { 0 };
	struct mib_hw *hw;
	uint32_t idx;

	mib_hw_drop(m);
	if (!v)
		return 0;
	if (!m->hw && !(m->hw = calloc(1, sizeof(*m->hw))))
		return -ENOMEM;
	hw = m->hw;
	for (i = 0; i < v->nnodes; i++) {
		cnt[T_DEV]++;
		cnt[T_SENSOR] += v->nodes[i].nsensors;
		cnt[T_FAN] += v->nodes[i].nfans;
		cnt[T_PSU] += v->nodes[i].have_psus ? IBW_HW_PSUS : 0;
	}
	for (k = 0; k < T_N; k++)
		if (!(hw->r[k] = calloc(cnt[k] + 1, sizeof(*hw->r[k]))))
			return -ENOMEM;
	for (i = 0; i < v->nnodes; i++) {
		const struct ibw_hw_node *n = &v->nodes[i];

		/* only nodes the snapshot has rows for */
		if (!ibw_snapshot_find_node(m->snap, n->guid))
			continue;
		if (!(idx = mib_rows_node(m->rows, n->guid)))
			return -ENOMEM;
		add(hw, T_DEV, idx, 0, n, 0);
		for (k = 0; k < n->nsensors; k++)
			if (n->sensors[k].have)
				add(hw, T_SENSOR, idx, n->sensors[k].index + 1,
				    n, k);
		for (k = 0; k < n->nfans; k++)
			if (n->fans[k].have)
				add(hw, T_FAN, idx, n->fans[k].tacho + 1, n, k);
		for (k = 0; n->have_psus && k < IBW_HW_PSUS; k++)
			add(hw, T_PSU, idx, k + 1, n, k);
	}
	for (k = 0; k < T_N; k++)
		qsort(hw->r[k], hw->n[k], sizeof(*hw->r[k]), cmp_hwrow);
	return 0;
}

static long state_enum(enum ibw_hw_state s)
{
	return (long)s + 1; /* new(1) .. otherVendor(5) */
}

static unsigned mib_hw_dev_rows(struct ibw_mib *m)
{
	return m->hw ? m->hw->n[T_DEV] : 0;
}

static void mib_hw_dev_index(struct ibw_mib *m, unsigned row, oid *out)
{
	out[0] = m->hw->r[T_DEV][row].node;
}

static int mib_hw_dev_get(struct ibw_mib *m, unsigned row, unsigned col,
			  struct val *v)
{
	const struct ibw_hw_node *n = m->hw->r[T_DEV][row].n;
	char fw[40];

	switch (col) {
	case HW_COL_NODE_GUID:
		mib_v_guid(v, n->guid);
		break;
	case HW_COL_STATE:
		mib_v_int(v, state_enum(n->state));
		break;
	case HW_COL_FIRMWARE:
		fw[0] = 0;
		if (n->have_mgir)
			snprintf(fw, sizeof(fw), "%u.%04u.%04u",
				 n->mgir.fw_major, n->mgir.fw_minor,
				 n->mgir.fw_sub_minor);
		mib_v_strcpy(v, fw);
		break;
	case HW_COL_PSID:
		mib_v_str(v, n->have_mgir ? n->mgir.psid : "");
		break;
	case HW_COL_SERIAL:
		mib_v_str(v, n->have_msgi ? n->msgi.serial : "");
		break;
	case HW_COL_PART:
		mib_v_str(v, n->have_msgi ? n->msgi.part : "");
		break;
	case HW_COL_UPTIME:
		mib_v_unsigned(v, n->have_mgir ? n->mgir.uptime_s : 0);
		break;
	case HW_COL_FANS_FAILED:
		mib_v_gauge(v, ibw_hw_node_fans_failed(n));
		break;
	case HW_COL_PSUS_FAILED:
		mib_v_gauge(v, ibw_hw_node_psus_failed(n));
		break;
	case HW_COL_NODE_NAME:
		mib_v_str(v, mib_name_of(m, n->guid));
		break;
	default:
		return -1;
	}
	return 0;
}

static long milli(double c)
{
	return (long)(c * 1000.0 + (c < 0 ? -0.5 : 0.5));
}

static unsigned mib_hw_sensor_rows(struct ibw_mib *m)
{
	return m->hw ? m->hw->n[T_SENSOR] : 0;
}

static void mib_hw_sensor_index(struct ibw_mib *m, unsigned row, oid *out)
{
	out[0] = m->hw->r[T_SENSOR][row].node;
	out[1] = m->hw->r[T_SENSOR][row].sub;
}

static int mib_hw_sensor_get(struct ibw_mib *m, unsigned row, unsigned col,
			     struct val *v)
{
	const struct hwrow *r = &m->hw->r[T_SENSOR][row];
	const struct ibw_hw_sensor *s = &r->n->sensors[r->i];

	switch (col) {
	case 2:
		mib_v_str(v, s->name);
		break;
	case 3:
		mib_v_int(v, milli(s->temp_c));
		break;
	case 4:
		mib_v_int(v, milli(s->max_c));
		break;
	case 5:
		mib_v_int(v, milli(s->hi_c));
		break;
	case 6:
		mib_v_int(v, milli(s->lo_c));
		break;
	case 7:
		mib_v_bool(v, s->hot);
		break;
	case 8:
		mib_v_guid(v, r->n->guid);
		break;
	default:
		return -1;
	}
	return 0;
}

static unsigned mib_hw_fan_rows(struct ibw_mib *m)
{
	return m->hw ? m->hw->n[T_FAN] : 0;
}

static void mib_hw_fan_index(struct ibw_mib *m, unsigned row, oid *out)
{
	out[0] = m->hw->r[T_FAN][row].node;
	out[1] = m->hw->r[T_FAN][row].sub;
}

static int mib_hw_fan_get(struct ibw_mib *m, unsigned row, unsigned col,
			  struct val *v)
{
	const struct hwrow *r = &m->hw->r[T_FAN][row];
	const struct ibw_hw_fanv *f = &r->n->fans[r->i];

	switch (col) {
	case 2:
		mib_v_gauge(v, f->rpm);
		break;
	case 3:
		mib_v_gauge(v, f->have_limits ? f->min_rpm : 0);
		break;
	case 4:
		mib_v_gauge(v, f->have_limits ? f->max_rpm : 0);
		break;
	case 5:
		mib_v_bool(v, f->failed);
		break;
	case 6:
		mib_v_guid(v, r->n->guid);
		break;
	default:
		return -1;
	}
	return 0;
}

static unsigned mib_hw_psu_rows(struct ibw_mib *m)
{
	return m->hw ? m->hw->n[T_PSU] : 0;
}

static void mib_hw_psu_index(struct ibw_mib *m, unsigned row, oid *out)
{
	out[0] = m->hw->r[T_PSU][row].node;
	out[1] = m->hw->r[T_PSU][row].sub;
}

static int mib_hw_psu_get(struct ibw_mib *m, unsigned row, unsigned col,
			  struct val *v)
{
	const struct hwrow *r = &m->hw->r[T_PSU][row];
	const struct ibw_hw_psu *p = &r->n->psus[r->i];

	switch (col) {
	case 2:
		mib_v_bool(v, p->present);
		break;
	case 3:
		mib_v_bool(v, p->dc_ok);
		break;
	case 4:
		mib_v_int(v, p->fan == 2 ? 1 : p->fan == 3 ? 2 : 3);
		break;
	case 5:
		mib_v_gauge(v, p->watts);
		break;
	case 6:
		mib_v_bool(v, r->n->psu_failed[r->i]);
		break;
	case 7:
		mib_v_guid(v, r->n->guid);
		break;
	default:
		return -1;
	}
	return 0;
}

const struct table mib_hw_tables[] = {
	{ "ibwHwDeviceTable", 10, 0, HW_COL_NODE_GUID, HW_COL_NODE_NAME, 1,
	  mib_hw_dev_rows, mib_hw_dev_index, mib_hw_dev_get, 0 },
	{ "ibwHwSensorTable", 11, 0, 2, 8, 2, mib_hw_sensor_rows,
	  mib_hw_sensor_index, mib_hw_sensor_get, 0 },
	{ "ibwHwFanTable", 12, 0, 2, 6, 2, mib_hw_fan_rows, mib_hw_fan_index,
	  mib_hw_fan_get, 0 },
	{ "ibwHwPsuTable", 13, 0, 2, 7, 2, mib_hw_psu_rows, mib_hw_psu_index,
	  mib_hw_psu_get, 0 },
};
const unsigned mib_hw_ntables =
	sizeof(mib_hw_tables) / sizeof(mib_hw_tables[0]);
