// SPDX-License-Identifier: BSD-2-Clause
/*
 * What each PerfMgt counter is (counters.h, enum ibw_ctr): its names,
 * where it sits in PortCounters, PortCountersExtended or a detail
 * attribute, its width and unit, its default threshold, and its
 * CounterSelect bit for a clear. The enum and these tables go together:
 * a counter is added at the end of both.
 */
#include <string.h>

#include "counters_int.h"

#define PC(f) IB_PC_##f##_F
#define EXT(f) IB_PC_EXT_##f##_F

const struct ibw_ctr_desc ibw_ctr_descs[IBW_CTR_MAX] = {
	[IBW_CTR_SYMBOL_ERRORS] = { "SymbolErrorCounter", "symbol_errors", 16,
				    PC(ERR_SYM), EXT(ERR_SYM), 1, 1, 10 },
	[IBW_CTR_LINK_ERROR_RECOVERY] = { "LinkErrorRecoveryCounter",
					  "link_error_recovery", 8,
					  PC(LINK_RECOVERS), EXT(LINK_RECOVERS),
					  1, 1, 10 },
	[IBW_CTR_LINK_DOWNED] = { "LinkDownedCounter", "link_downed", 8,
				  PC(LINK_DOWNED), EXT(LINK_DOWNED), 1, 1, 10 },
	[IBW_CTR_RCV_ERRORS] = { "PortRcvErrors", "receive_errors", 16,
				 PC(ERR_RCV), EXT(ERR_RCV), 1, 1, 10 },
	[IBW_CTR_RCV_REMOTE_PHYS_ERRORS] = { "PortRcvRemotePhysicalErrors",
					     "receive_remote_physical_errors",
					     16, PC(ERR_PHYSRCV),
					     EXT(ERR_PHYSRCV), 1, 1, 100 },
	[IBW_CTR_RCV_SWITCH_RELAY_ERRORS] = { "PortRcvSwitchRelayErrors",
					      "receive_switch_relay_errors", 16,
					      PC(ERR_SWITCH_REL),
					      EXT(ERR_SWITCH_REL), 1, 1, 100 },
	[IBW_CTR_XMIT_DISCARDS] = { "PortXmitDiscards", "transmit_discards", 16,
				    PC(XMT_DISCARDS), EXT(XMT_DISCARDS), 1, 1,
				    100 },
	[IBW_CTR_XMIT_CONSTRAINT_ERRORS] = { "PortXmitConstraintErrors",
					     "transmit_constraint_errors", 8,
					     PC(ERR_XMTCONSTR),
					     EXT(ERR_XMTCONSTR), 1, 1, 100 },
	[IBW_CTR_RCV_CONSTRAINT_ERRORS] = { "PortRcvConstraintErrors",
					    "receive_constraint_errors", 8,
					    PC(ERR_RCVCONSTR),
					    EXT(ERR_RCVCONSTR), 1, 1, 100 },
	[IBW_CTR_LOCAL_LINK_INTEGRITY_ERRORS] = { "LocalLinkIntegrityErrors",
						  "local_link_integrity_errors",
						  4, PC(ERR_LOCALINTEG),
						  EXT(ERR_LOCALINTEG), 1, 1,
						  10 },
	[IBW_CTR_EXCESSIVE_BUFFER_OVERRUN_ERRORS] = { "ExcessiveBufferOverrunErrors",
						      "excessive_buffer_overrun_errors",
						      4, PC(ERR_EXCESS_OVR),
						      EXT(ERR_EXCESS_OVR), 1, 1,
						      10 },
	[IBW_CTR_VL15_DROPPED] = { "VL15Dropped", "vl15_dropped", 16,
				   PC(VL15_DROPPED), EXT(VL15_DROPPED), 1, 1,
				   100 },
	[IBW_CTR_XMIT_WAIT] = { "PortXmitWait", "transmit_wait", 32,
				PC(XMT_WAIT), EXT(XMT_WAIT), 1, 1, 1000 },
	[IBW_CTR_QP1_DROPPED] = { "QP1Dropped", "qp1_dropped", 16, PC(QP1_DROP),
				  EXT(QP1_DROP), 1, 1, 0 },
	[IBW_CTR_XMIT_DATA] = { "PortXmitData", "transmit_data_bytes", 32,
				PC(XMT_BYTES), EXT(XMT_BYTES), 4, 0, 0 },
	[IBW_CTR_RCV_DATA] = { "PortRcvData", "receive_data_bytes", 32,
			       PC(RCV_BYTES), EXT(RCV_BYTES), 4, 0, 0 },
	[IBW_CTR_XMIT_PKTS] = { "PortXmitPkts", "transmit_packets", 32,
				PC(XMT_PKTS), EXT(XMT_PKTS), 1, 0, 0 },
	[IBW_CTR_RCV_PKTS] = { "PortRcvPkts", "receive_packets", 32,
			       PC(RCV_PKTS), EXT(RCV_PKTS), 1, 0, 0 },
	[IBW_CTR_UNICAST_XMIT_PKTS] = { "PortUnicastXmitPkts",
					"unicast_transmit_packets", 0, -1,
					EXT(XMT_UPKTS), 1, 0, 0 },
	[IBW_CTR_UNICAST_RCV_PKTS] = { "PortUnicastRcvPkts",
				       "unicast_receive_packets", 0, -1,
				       EXT(RCV_UPKTS), 1, 0, 0 },
	[IBW_CTR_MULTICAST_XMIT_PKTS] = { "PortMulticastXmitPkts",
					  "multicast_transmit_packets", 0, -1,
					  EXT(XMT_MPKTS), 1, 0, 0 },
	[IBW_CTR_MULTICAST_RCV_PKTS] = { "PortMulticastRcvPkts",
					 "multicast_receive_packets", 0, -1,
					 EXT(RCV_MPKTS), 1, 0, 0 },
#define DET(name, key, attr, f)                         \
	{                                               \
		name, key, 16, -1, -1, 1, 1, 0, attr, f \
	}
	[IBW_CTR_LOCAL_PHYSICAL_ERRORS] = DET("PortLocalPhysicalErrors",
					      "local_physical_errors", 0x15,
					      IB_PC_RCV_LOCAL_PHY_ERR_F),
	[IBW_CTR_MALFORMED_PACKET_ERRORS] = DET("PortMalformedPktErrors",
						"malformed_packet_errors", 0x15,
						IB_PC_RCV_MALFORMED_PKT_ERR_F),
	[IBW_CTR_BUFFER_OVERRUN_ERRORS] = DET("PortBufferOverrunErrors",
					      "buffer_overrun_errors", 0x15,
					      IB_PC_RCV_BUF_OVR_ERR_F),
	[IBW_CTR_DLID_MAPPING_ERRORS] = DET("PortDLIDMappingErrors",
					    "dlid_mapping_errors", 0x15,
					    IB_PC_RCV_DLID_MAP_ERR_F),
	[IBW_CTR_VL_MAPPING_ERRORS] = DET("PortVLMappingErrors",
					  "vl_mapping_errors", 0x15,
					  IB_PC_RCV_VL_MAP_ERR_F),
	[IBW_CTR_LOOPING_ERRORS] = DET("PortLoopingErrors", "looping_errors",
				       0x15, IB_PC_RCV_LOOPING_ERR_F),
	[IBW_CTR_INACTIVE_DISCARDS] = DET("PortInactiveDiscards",
					  "inactive_discards", 0x16,
					  IB_PC_XMT_INACT_DISC_F),
	[IBW_CTR_NEIGHBOR_MTU_DISCARDS] = DET("PortNeighborMTUDiscards",
					      "neighbor_mtu_discards", 0x16,
					      IB_PC_XMT_NEIGH_MTU_DISC_F),
	[IBW_CTR_SW_LIFETIME_LIMIT_DISCARDS] =
		DET("PortSwLifetimeLimitDiscards", "sw_lifetime_limit_discards",
		    0x16, IB_PC_XMT_SW_LIFE_DISC_F),
	[IBW_CTR_SW_HOQ_LIFETIME_LIMIT_DISCARDS] =
		DET("PortSwHOQLifetimeLimitDiscards",
		    "sw_hoq_lifetime_limit_discards", 0x16,
		    IB_PC_XMT_SW_HOL_DISC_F),
#undef DET
};

/* PortCounters CounterSelect bit of each counter (CounterSelect2 for the
 * ones marked 0x10000 and up). */
const uint32_t ibw_ctr_select[IBW_CTR_MAX] = {
	[IBW_CTR_SYMBOL_ERRORS] = 1u << 0,
	[IBW_CTR_LINK_ERROR_RECOVERY] = 1u << 1,
	[IBW_CTR_LINK_DOWNED] = 1u << 2,
	[IBW_CTR_RCV_ERRORS] = 1u << 3,
	[IBW_CTR_RCV_REMOTE_PHYS_ERRORS] = 1u << 4,
	[IBW_CTR_RCV_SWITCH_RELAY_ERRORS] = 1u << 5,
	[IBW_CTR_XMIT_DISCARDS] = 1u << 6,
	[IBW_CTR_XMIT_CONSTRAINT_ERRORS] = 1u << 7,
	[IBW_CTR_RCV_CONSTRAINT_ERRORS] = 1u << 8,
	[IBW_CTR_LOCAL_LINK_INTEGRITY_ERRORS] = 1u << 9,
	[IBW_CTR_EXCESSIVE_BUFFER_OVERRUN_ERRORS] = 1u << 10,
	[IBW_CTR_VL15_DROPPED] = 1u << 11,
	[IBW_CTR_XMIT_DATA] = 1u << 12,
	[IBW_CTR_RCV_DATA] = 1u << 13,
	[IBW_CTR_XMIT_PKTS] = 1u << 14,
	[IBW_CTR_RCV_PKTS] = 1u << 15,
	[IBW_CTR_XMIT_WAIT] = 1u << 16, /* CounterSelect2 bit 0 */
};

const struct ibw_ctr_desc *ibw_ctr_desc(enum ibw_ctr c)
{
	return (unsigned)c < IBW_CTR_MAX ? &ibw_ctr_descs[c] : NULL;
}

int ibw_ctr_lookup(const char *name)
{
	int i;

	for (i = 0; i < IBW_CTR_MAX; i++)
		if (!strcmp(name, ibw_ctr_descs[i].name) ||
		    !strcmp(name, ibw_ctr_descs[i].key))
			return i;
	return -1;
}
