/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Attribute codecs: decode the payload of an answer MAD into plain
 * structs, with libibmad's field tables doing the bit work. Every decoder
 * checks the length it is given and returns -EINVAL on a short MAD.
 */
#ifndef IBW_CODEC_H
#define IBW_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/mad.h>

#include "safename.h"

enum {
	IBW_ATTR_NODE_DESC = 0x0010,
	IBW_ATTR_NODE_INFO = 0x0011,
	IBW_ATTR_SWITCH_INFO = 0x0012,
	IBW_ATTR_PORT_INFO = 0x0015,
	IBW_ATTR_LINEAR_FWD = 0x0019,
	IBW_ATTR_CLASS_PORT_INFO = 0x0001,
	IBW_ATTR_PORT_SAMPLES_CONTROL = 0x0010,
	IBW_ATTR_PORT_COUNTERS = 0x0012,
	IBW_ATTR_PORT_COUNTERS_EXT = 0x001d,
	IBW_ATTR_PORT_VL_XMIT_WAIT = 0x001c, /* PortVLXmitWaitCounters */
	IBW_ATTR_PORT_EXT_SPEEDS = 0x001f, /* PortExtendedSpeedsCounters */
	IBW_ATTR_PORT_INFO_EXT = 0x0033, /* PortInfoExtended (SMP) */
	IBW_ATTR_MLNX_EXT_PORT_INFO = 0xff90, /* vendor SMP attribute */
};

/* PortInfo:CapabilityMask and CapabilityMask2 bits (IBA 14.2.5.6). On a
 * switch only port 0 carries them: its external ports read 0. */
enum {
	IBW_CAP_IS_SM = 1u << 1, /* IsSM: an SM runs at this port */
	IBW_CAP_EXT_SPEEDS = 1u << 14, /* IsExtendedSpeedsSupported */
	IBW_CAP_CAPMASK2 = 1u << 15, /* IsCapabilityMask2Supported */
	IBW_CAP2_PORT_INFO_EXT = 1u << 1, /* IsPortInfoExtendedSupported */
	IBW_CAP2_LINK_WIDTH_2X = 1u << 4, /* IsLinkWidth2xSupported */
	IBW_CAP2_EXT_SPEEDS2 = 1u << 11, /* IsExtendedSpeeds2Supported */
};

enum ibw_node_type {
	IBW_NODE_CA = 1,
	IBW_NODE_SWITCH = 2,
	IBW_NODE_ROUTER = 3,
};

/* PortInfo:PortState (IBA 14.2.5.6, table 155). */
enum ibw_port_state {
	IBW_PORT_NOP = 0,
	IBW_PORT_DOWN = 1,
	IBW_PORT_INIT = 2,
	IBW_PORT_ARMED = 3,
	IBW_PORT_ACTIVE = 4,
};

/* PortInfo:PortPhysicalState (IBA 14.2.5.6, table 155). */
enum ibw_phys_state {
	IBW_PHYS_NOP = 0,
	IBW_PHYS_SLEEP = 1,
	IBW_PHYS_POLLING = 2,
	IBW_PHYS_DISABLED = 3,
	IBW_PHYS_TRAINING = 4,
	IBW_PHYS_LINKUP = 5,
	IBW_PHYS_ERROR_RECOVERY = 6,
	IBW_PHYS_TEST = 7,
};

struct ibw_nodeinfo {
	unsigned base_version;
	unsigned class_version;
	enum ibw_node_type node_type;
	unsigned num_ports;
	uint64_t system_guid;
	uint64_t node_guid;
	uint64_t port_guid;
	unsigned partition_cap;
	unsigned device_id;
	unsigned revision;
	unsigned local_port;
	unsigned vendor_id;
};

struct ibw_portinfo {
	uint64_t gid_prefix;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t sm_sl; /* MasterSMSL: the SL to reach the SM (and its SA) on */
	uint32_t capmask;
	uint8_t local_port;
	uint8_t lmc;
	uint8_t state; /* enum ibw_port_state */
	uint8_t phys_state; /* enum ibw_phys_state */
	uint8_t width_active; /* bitmask: 1 1x, 2 4x, 4 8x, 8 12x, 16 2x */
	uint8_t speed_active; /* 1 SDR, 2 DDR, 4 QDR */
	uint8_t speed_ext_active; /* 0 none, 1 FDR, 2 EDR, 4 HDR, 8 NDR */
	/* What the port can do and may do. Widths as width_active.
	 * LinkSpeed*: 1 SDR, 2 DDR, 4 QDR. LinkSpeedExt*: as
	 * speed_ext_active, meaningful only when IBW_CAP_EXT_SPEEDS is set
	 * in the capability mask that applies (port 0's on a switch);
	 * speed_ext_enabled 30 means extended speeds disabled. */
	uint16_t capmask2; /* if IBW_CAP_CAPMASK2 */
	uint8_t width_enabled;
	uint8_t width_supported;
	uint8_t speed_enabled;
	uint8_t speed_supported;
	uint8_t speed_ext_enabled;
	uint8_t speed_ext_supported;
	/* LinkSpeedExt2 (1 XDR), valid with IBW_CAP2_EXT_SPEEDS2. Decoded
	 * only when the libibmad we build against has the fields
	 * (ibw_codec_has_speed_ext2()); zero otherwise. */
	uint8_t speed_ext2_active;
	uint8_t speed_ext2_enabled;
	uint8_t speed_ext2_supported;
	/* Mellanox ExtendedPortInfo LinkSpeed* (bit 0: FDR10), filled by
	 * ibw_mlnx_ext_portinfo_decode(); have_mlnx_ext says it was. */
	uint8_t have_mlnx_ext;
	uint8_t mlnx_speed_active;
	uint8_t mlnx_speed_enabled;
	uint8_t mlnx_speed_supported;
};

/* PortVLXmitWaitCounters (PerfMgt 0x1c): 16-bit tick counts per VL. */
struct ibw_vl_xmit_wait {
	unsigned port_select;
	uint16_t wait[16];
};

struct ibw_switchinfo {
	uint16_t lft_cap;
	uint16_t lft_top;
};

/* PortCounters (PerfMgt attribute 0x12), one field per counter. */
struct ibw_port_counters {
	unsigned port_select;
	uint32_t symbol_errors;
	uint32_t link_error_recovery;
	uint32_t link_downed;
	uint32_t rcv_errors;
	uint32_t rcv_remote_phys_errors;
	uint32_t rcv_switch_relay_errors;
	uint32_t xmit_discards;
	uint32_t xmit_constraint_errors;
	uint32_t rcv_constraint_errors;
	uint32_t local_link_integrity_errors;
	uint32_t excessive_buffer_overrun_errors;
	uint32_t qp1_dropped;
	uint32_t vl15_dropped;
	uint32_t xmit_data; /* 4-octet words */
	uint32_t rcv_data;
	uint32_t xmit_pkts;
	uint32_t rcv_pkts;
	uint32_t xmit_wait;
};

/* libibmad's getters take a non-const buffer but never write to it:
 * these are the one place a const is dropped for them. */
static inline uint32_t ibw_mad_get(const uint8_t *buf, int field)
{
	return mad_get_field((void *)buf, 0, (enum MAD_FIELDS)field);
}

static inline uint64_t ibw_mad_get64(const uint8_t *buf, int field)
{
	return mad_get_field64((void *)buf, 0, (enum MAD_FIELDS)field);
}

/* A field of any size (a GID) into @out, as mad_decode_field() */
static inline void ibw_mad_decode(const uint8_t *buf, int field, void *out)
{
	mad_decode_field((uint8_t *)buf, (enum MAD_FIELDS)field, out);
}

/* Offset of the attribute payload for a MAD of @mgmt_class. */
size_t ibw_mad_data_offset(uint8_t mgmt_class);

int ibw_nodeinfo_decode(const uint8_t *mad, size_t len,
			struct ibw_nodeinfo *ni);
int ibw_portinfo_decode(const uint8_t *mad, size_t len,
			struct ibw_portinfo *pi);
/* NodeDescription: 64 octets, made safe (ibw_name_sanitize) into @buf
 * of at least IBW_NAME_SIZE bytes, since any host's root sets it. */
int ibw_nodedesc_decode(const uint8_t *mad, size_t len, char *buf,
			size_t buflen);
int ibw_switchinfo_decode(const uint8_t *mad, size_t len,
			  struct ibw_switchinfo *si);
int ibw_port_counters_decode(const uint8_t *mad, size_t len,
			     struct ibw_port_counters *pc);
int ibw_vl_xmit_wait_decode(const uint8_t *mad, size_t len,
			    struct ibw_vl_xmit_wait *vw);

/*
 * Mellanox ExtendedPortInfo (SMP attribute 0xff90, attribute modifier =
 * port): sets the mlnx_speed_* fields of @pi, already decoded from the
 * same port's PortInfo, and have_mlnx_ext. FDR10 shows in PortInfo as
 * QDR; only this attribute tells them apart.
 */
int ibw_mlnx_ext_portinfo_decode(const uint8_t *mad, size_t len,
				 struct ibw_portinfo *pi);
/*
 * Whether to ask a port for ExtendedPortInfo, as infiniband-diags does:
 * the device is one known to implement it (ConnectX-3 and Connect-IB,
 * SwitchX, Switch-IB, Quantum and their Bull OEM versions), the port is
 * LinkUp at QDR and no extended speed is active. @cap is the PortInfo
 * whose capability mask applies (port 0 of a switch; NULL: @pi).
 */
int ibw_mlnx_ext_portinfo_wanted(const struct ibw_nodeinfo *ni,
				 const struct ibw_portinfo *pi,
				 const struct ibw_portinfo *cap);
/* 1 if this build decodes LinkSpeedExt2 (XDR), 0 if libibmad lacks it. */
int ibw_codec_has_speed_ext2(void);
/* One LinearForwardingTable block (attribute modifier: LID / 64): the
 * output port of each of its 64 LIDs, 0xff where there is none. */
#define IBW_LFT_BLOCK 64
int ibw_lft_block_decode(const uint8_t *mad, size_t len,
			 uint8_t ports[IBW_LFT_BLOCK]);

/* "4x", "SDR".."NDR", and the signalling rate in Gb/s. */
const char *ibw_width_str(unsigned width_active);
const char *ibw_speed_str(unsigned speed_active, unsigned speed_ext_active);
double ibw_link_gbps(const struct ibw_portinfo *pi);

/* Names for enum values, as infiniband-diags prints them. */
const char *ibw_node_type_str(enum ibw_node_type t);
const char *ibw_port_state_str(unsigned state);
const char *ibw_phys_state_str(unsigned phys);

#endif
