// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <string.h>

#include <infiniband/mad.h>

#include "codec.h"
#include "safename.h"

#define MAD_MIN 256
#define IBW_NODE_DESC_LEN 64

size_t ibw_mad_data_offset(uint8_t mgmt_class)
{
	switch (mgmt_class) {
	case 0x01:
	case 0x81:
		return IB_SMP_DATA_OFFS;
	case 0x03:
		return IB_SA_DATA_OFFS;
	case 0x04:
		return IB_PC_DATA_OFFS;
	default:
		if (mgmt_class >= 0x30 && mgmt_class <= 0x4f)
			return IB_VENDOR_RANGE2_DATA_OFFS;
		return IB_VENDOR_RANGE1_DATA_OFFS;
	}
}

static const uint8_t *payload(const uint8_t *mad, size_t len)
{
	if (!mad || len < MAD_MIN)
		return NULL;
	return mad + ibw_mad_data_offset(mad[1]);
}

#define GET(p, f) ibw_mad_get((p), (f))
#define GET64(p, f) ibw_mad_get64((p), (f))

int ibw_nodeinfo_decode(const uint8_t *mad, size_t len, struct ibw_nodeinfo *ni)
{
	const uint8_t *p = payload(mad, len);

	if (!p)
		return -EINVAL;
	memset(ni, 0, sizeof(*ni));
	ni->base_version = GET(p, IB_NODE_BASE_VERS_F);
	ni->class_version = GET(p, IB_NODE_CLASS_VERS_F);
	ni->node_type = (enum ibw_node_type)GET(p, IB_NODE_TYPE_F);
	ni->num_ports = GET(p, IB_NODE_NPORTS_F);
	ni->system_guid = GET64(p, IB_NODE_SYSTEM_GUID_F);
	ni->node_guid = GET64(p, IB_NODE_GUID_F);
	ni->port_guid = GET64(p, IB_NODE_PORT_GUID_F);
	ni->partition_cap = GET(p, IB_NODE_PARTITION_CAP_F);
	ni->device_id = GET(p, IB_NODE_DEVID_F);
	ni->revision = GET(p, IB_NODE_REVISION_F);
	ni->local_port = GET(p, IB_NODE_LOCAL_PORT_F);
	ni->vendor_id = GET(p, IB_NODE_VENDORID_F);
	return 0;
}

int ibw_portinfo_decode(const uint8_t *mad, size_t len, struct ibw_portinfo *pi)
{
	const uint8_t *p = payload(mad, len);

	if (!p)
		return -EINVAL;
	memset(pi, 0, sizeof(*pi));
	pi->gid_prefix = GET64(p, IB_PORT_GID_PREFIX_F);
	pi->lid = GET(p, IB_PORT_LID_F);
	pi->sm_lid = GET(p, IB_PORT_SMLID_F);
	pi->sm_sl = (uint8_t)GET(p, IB_PORT_SMSL_F);
	pi->capmask = GET(p, IB_PORT_CAPMASK_F);
	pi->local_port = GET(p, IB_PORT_LOCAL_PORT_F);
	pi->lmc = GET(p, IB_PORT_LMC_F);
	pi->state = GET(p, IB_PORT_STATE_F);
	pi->phys_state = GET(p, IB_PORT_PHYS_STATE_F);
	pi->width_active = GET(p, IB_PORT_LINK_WIDTH_ACTIVE_F);
	pi->speed_active = GET(p, IB_PORT_LINK_SPEED_ACTIVE_F);
	pi->speed_ext_active = GET(p, IB_PORT_LINK_SPEED_EXT_ACTIVE_F);
	pi->capmask2 = GET(p, IB_PORT_CAPMASK2_F);
	pi->width_enabled = GET(p, IB_PORT_LINK_WIDTH_ENABLED_F);
	pi->width_supported = GET(p, IB_PORT_LINK_WIDTH_SUPPORTED_F);
	pi->speed_enabled = GET(p, IB_PORT_LINK_SPEED_ENABLED_F);
	pi->speed_supported = GET(p, IB_PORT_LINK_SPEED_SUPPORTED_F);
	pi->speed_ext_enabled = GET(p, IB_PORT_LINK_SPEED_EXT_ENABLED_F);
	pi->speed_ext_supported = GET(p, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F);
#ifdef IBW_HAVE_SPEED_EXT2
	pi->speed_ext2_active = GET(p, IB_PORT_LINK_SPEED_EXT_ACTIVE_2_F);
	pi->speed_ext2_enabled = GET(p, IB_PORT_LINK_SPEED_EXT_ENABLED_2_F);
	pi->speed_ext2_supported = GET(p, IB_PORT_LINK_SPEED_EXT_SUPPORTED_2_F);
#endif
	return 0;
}

int ibw_codec_has_speed_ext2(void)
{
#ifdef IBW_HAVE_SPEED_EXT2
	return 1;
#else
	return 0;
#endif
}

int ibw_mlnx_ext_portinfo_decode(const uint8_t *mad, size_t len,
				 struct ibw_portinfo *pi)
{
	const uint8_t *p = payload(mad, len);

	if (!p)
		return -EINVAL;
	pi->mlnx_speed_active = GET(p, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F);
	pi->mlnx_speed_enabled = GET(p, IB_MLNX_EXT_PORT_LINK_SPEED_ENABLED_F);
	pi->mlnx_speed_supported =
		GET(p, IB_MLNX_EXT_PORT_LINK_SPEED_SUPPORTED_F);
	pi->have_mlnx_ext = 1;
	return 0;
}

/*
 * Devices that answer ExtendedPortInfo: the list infiniband-diags keeps
 * (libibnetdisc). Mellanox device IDs are matched whatever the VendorID
 * (OEM boards carry other OUIs); Bull's own IDs only with Bull's.
 */
static const struct {
	uint32_t vendor; /* 0: any */
	uint16_t lo, hi;
} mlnx_epi_devs[] = {
	{ 0, 0xc738, 0xc73b }, /* SwitchX */
	{ 0, 0xc839, 0xc839 },
	{ 0, 0xcb20, 0xcb20 }, /* Switch-IB */
	{ 0, 0xcf08, 0xcf09 }, /* Switch-IB 2 */
	{ 0, 0xd2f0, 0xd2f0 }, /* Quantum */
	{ 0, 0x1003, 0x101b }, /* ConnectX-3 to ConnectX-6 era HCAs */
	{ 0, 0xa2d2, 0xa2d2 }, /* BlueField */
	{ 0x119f, 0x1b02, 0x1b02 }, /* Bull SwitchX */
	{ 0x119f, 0x1b50, 0x1b50 },
	{ 0x119f, 0x1ba0, 0x1ba0 }, /* Bull Switch-IB, Switch-IB 2 */
	{ 0x119f, 0x1bd0, 0x1bd5 },
	{ 0x119f, 0x1bf0, 0x1bf0 }, /* Bull Quantum */
	{ 0x119f, 0x1b33, 0x1b33 }, /* Bull ConnectX-3 */
	{ 0x119f, 0x1b73, 0x1b73 },
	{ 0x119f, 0x1b40, 0x1b41 },
	{ 0x119f, 0x1b60, 0x1b61 },
	{ 0x119f, 0x1b83, 0x1b83 }, /* Bull Connect-IB */
	{ 0x119f, 0x1b93, 0x1b94 },
	{ 0x119f, 0x1bb4, 0x1bb5 }, /* Bull ConnectX-4, Sequana HDR */
	{ 0x119f, 0x1bc4, 0x1bc6 },
};

int ibw_mlnx_ext_portinfo_wanted(const struct ibw_nodeinfo *ni,
				 const struct ibw_portinfo *pi,
				 const struct ibw_portinfo *cap)
{
	size_t i;
	int dev = 0;

	if (!cap)
		cap = pi;
	for (i = 0; i < sizeof(mlnx_epi_devs) / sizeof(mlnx_epi_devs[0]); i++)
		if ((!mlnx_epi_devs[i].vendor ||
		     mlnx_epi_devs[i].vendor == ni->vendor_id) &&
		    ni->device_id >= mlnx_epi_devs[i].lo &&
		    ni->device_id <= mlnx_epi_devs[i].hi)
			dev = 1;
	if (!dev || pi->phys_state != IBW_PHYS_LINKUP || pi->speed_active != 4)
		return 0;
	/* An active extended speed outranks QDR: then it is no FDR10. */
	return !((cap->capmask & IBW_CAP_EXT_SPEEDS) && pi->speed_ext_active);
}

int ibw_nodedesc_decode(const uint8_t *mad, size_t len, char *buf,
			size_t buflen)
{
	const uint8_t *p = payload(mad, len);
	size_t n = IBW_NODE_DESC_LEN;

	if (!p || buflen < IBW_NAME_SIZE)
		return -EINVAL;
	/* NUL pads the field; a NUL before other bytes is a control
	 * character like any other. */
	while (n && !p[n - 1])
		n--;
	ibw_name_sanitize(buf, buflen, p, n);
	return 0;
}

int ibw_switchinfo_decode(const uint8_t *mad, size_t len,
			  struct ibw_switchinfo *si)
{
	const uint8_t *p = payload(mad, len);

	if (!p)
		return -EINVAL;
	si->lft_cap = (uint16_t)GET(p, IB_SW_LINEAR_FDB_CAP_F);
	si->lft_top = (uint16_t)GET(p, IB_SW_LINEAR_FDB_TOP_F);
	return 0;
}

int ibw_lft_block_decode(const uint8_t *mad, size_t len,
			 uint8_t ports[IBW_LFT_BLOCK])
{
	const uint8_t *p = payload(mad, len);

	if (!p)
		return -EINVAL;
	/* A block is 64 one-octet port numbers, nothing else: no field
	 * table needed. */
	memcpy(ports, p, IBW_LFT_BLOCK);
	return 0;
}

int ibw_port_counters_decode(const uint8_t *mad, size_t len,
			     struct ibw_port_counters *pc)
{
	const uint8_t *p = payload(mad, len);

	if (!p)
		return -EINVAL;
	memset(pc, 0, sizeof(*pc));
	pc->port_select = GET(p, IB_PC_PORT_SELECT_F);
	pc->symbol_errors = GET(p, IB_PC_ERR_SYM_F);
	pc->link_error_recovery = GET(p, IB_PC_LINK_RECOVERS_F);
	pc->link_downed = GET(p, IB_PC_LINK_DOWNED_F);
	pc->rcv_errors = GET(p, IB_PC_ERR_RCV_F);
	pc->rcv_remote_phys_errors = GET(p, IB_PC_ERR_PHYSRCV_F);
	pc->rcv_switch_relay_errors = GET(p, IB_PC_ERR_SWITCH_REL_F);
	pc->xmit_discards = GET(p, IB_PC_XMT_DISCARDS_F);
	pc->xmit_constraint_errors = GET(p, IB_PC_ERR_XMTCONSTR_F);
	pc->rcv_constraint_errors = GET(p, IB_PC_ERR_RCVCONSTR_F);
	pc->local_link_integrity_errors = GET(p, IB_PC_ERR_LOCALINTEG_F);
	pc->excessive_buffer_overrun_errors = GET(p, IB_PC_ERR_EXCESS_OVR_F);
	pc->vl15_dropped = GET(p, IB_PC_VL15_DROPPED_F);
	pc->xmit_data = GET(p, IB_PC_XMT_BYTES_F);
	pc->rcv_data = GET(p, IB_PC_RCV_BYTES_F);
	pc->xmit_pkts = GET(p, IB_PC_XMT_PKTS_F);
	pc->rcv_pkts = GET(p, IB_PC_RCV_PKTS_F);
	pc->xmit_wait = GET(p, IB_PC_XMT_WAIT_F);
	pc->qp1_dropped = GET(p, IB_PC_QP1_DROP_F);
	return 0;
}

int ibw_vl_xmit_wait_decode(const uint8_t *mad, size_t len,
			    struct ibw_vl_xmit_wait *vw)
{
	const uint8_t *p = payload(mad, len);
	int i;

	if (!p)
		return -EINVAL;
	memset(vw, 0, sizeof(*vw));
	vw->port_select = GET(p, IB_PC_PORT_SELECT_F);
	for (i = 0; i < 16; i++)
		vw->wait[i] = (uint16_t)GET(p, IB_PC_PORT_VL_XMIT_WAIT0_F + i);
	return 0;
}

const char *ibw_node_type_str(enum ibw_node_type t)
{
	switch (t) {
	case IBW_NODE_CA:
		return "ca";
	case IBW_NODE_SWITCH:
		return "switch";
	case IBW_NODE_ROUTER:
		return "router";
	}
	return "unknown";
}

const char *ibw_port_state_str(unsigned state)
{
	static const char *const names[] = { "nochange", "down", "init",
					     "armed", "active" };

	return state < 5 ? names[state] : "unknown";
}

const char *ibw_phys_state_str(unsigned phys)
{
	static const char *const names[] = {
		"nochange",
		"sleep",
		"polling",
		"disabled",
		"portconfigurationtraining",
		"linkup",
		"linkerrorrecovery",
		"phytest",
	};

	return phys < 8 ? names[phys] : "unknown";
}

const char *ibw_width_str(unsigned w)
{
	switch (w) {
	case 1:
		return "1x";
	case 2:
		return "4x";
	case 4:
		return "8x";
	case 8:
		return "12x";
	case 16:
		return "2x";
	}
	return "unknown";
}

static unsigned width_lanes(unsigned w)
{
	switch (w) {
	case 1:
		return 1;
	case 2:
		return 4;
	case 4:
		return 8;
	case 8:
		return 12;
	case 16:
		return 2;
	}
	return 0;
}

const char *ibw_speed_str(unsigned speed, unsigned ext)
{
	switch (ext) {
	case 1:
		return "FDR";
	case 2:
		return "EDR";
	case 4:
		return "HDR";
	case 8:
		return "NDR";
	}
	switch (speed) {
	case 1:
		return "SDR";
	case 2:
		return "DDR";
	case 4:
		return "QDR";
	}
	return "unknown";
}

double ibw_link_gbps(const struct ibw_portinfo *pi)
{
	double lane;

	switch (pi->speed_ext_active) {
	case 1:
		lane = 14.0625;
		break;
	case 2:
		lane = 25.78125;
		break;
	case 4:
		lane = 53.125;
		break;
	case 8:
		lane = 106.25;
		break;
	default:
		lane = pi->speed_active == 4   ? 10.0
		       : pi->speed_active == 2 ? 5.0
		       : pi->speed_active == 1 ? 2.5
					       : 0.0;
	}
	return lane * width_lanes(pi->width_active);
}
