// SPDX-License-Identifier: BSD-2-Clause
#include <stdio.h>
#include <string.h>

#include "madkind.h"

#define CLS_SMI 0x01
#define CLS_DR 0x81
#define CLS_SA 0x03
#define CLS_PERF 0x04

struct ibw_mad_kind *ibw_mad_kinds_get(struct ibw_mad_kinds *t,
				       const uint8_t *mad)
{
	uint8_t cls = mad[1], method = mad[3];
	uint16_t attr = (uint16_t)(mad[16] << 8 | mad[17]);
	struct ibw_mad_kind *k;
	unsigned i;

	for (i = 0; i < t->n && i < IBW_MAD_KINDS; i++) {
		k = &t->k[i];
		if (k->mgmt_class == cls && k->method == method &&
		    k->attr == attr)
			return k;
	}
	if (t->n < IBW_MAD_KINDS - 1) {
		k = &t->k[t->n++];
		k->mgmt_class = cls;
		k->method = method;
		k->attr = attr;
		return k;
	}
	/* the last slot: every kind beyond the others */
	t->n = IBW_MAD_KINDS;
	return &t->k[IBW_MAD_KINDS - 1];
}

void ibw_mad_kinds_count(struct ibw_mad_kinds *t, const uint8_t *mad,
			 int timeout, int error)
{
	struct ibw_mad_kind *k = ibw_mad_kinds_get(t, mad);

	k->requests++;
	k->timeouts += timeout != 0;
	k->errors += error != 0;
	k->answered += !timeout;
}

const char *ibw_mad_class_str(uint8_t c)
{
	switch (c) {
	case CLS_SMI:
		return "SubnMgt";
	case CLS_DR:
		return "SubnMgtDirected";
	case CLS_SA:
		return "SubnAdm";
	case CLS_PERF:
		return "PerfMgt";
	case 0x05:
		return "BaseMgt";
	case 0x06:
		return "DevMgt";
	case 0x07:
		return "ComMgt";
	case 0x21:
		return "CongestionMgt";
	}
	if (c >= 0x30 && c <= 0x4f)
		return "Vendor";
	return NULL;
}

const char *ibw_mad_method_str(uint8_t m)
{
	switch (m) {
	case 0x01:
		return "Get";
	case 0x02:
		return "Set";
	case 0x03:
		return "Send";
	case 0x12:
		return "GetTable";
	case 0x13:
		return "GetTraceTable";
	case 0x14:
		return "GetMulti";
	case 0x15:
		return "Delete";
	}
	return NULL;
}

struct name {
	uint16_t attr;
	const char *name;
};

static const struct name smp[] = {
	{ 0x0002, "Notice" },
	{ 0x0010, "NodeDescription" },
	{ 0x0011, "NodeInfo" },
	{ 0x0012, "SwitchInfo" },
	{ 0x0014, "GUIDInfo" },
	{ 0x0015, "PortInfo" },
	{ 0x0016, "P_KeyTable" },
	{ 0x0017, "SLtoVLMappingTable" },
	{ 0x0018, "VLArbitrationTable" },
	{ 0x0019, "LinearForwardingTable" },
	{ 0x001a, "RandomForwardingTable" },
	{ 0x001b, "MulticastForwardingTable" },
	{ 0x0020, "SMInfo" },
	{ 0x0030, "VendorDiag" },
	{ 0x0031, "LedInfo" },
	{ 0x0033, "PortInfoExtended" },
	{ 0xff90, "MlnxExtPortInfo" },
	{ 0, NULL },
};

static const struct name sa[] = {
	{ 0x0001, "ClassPortInfo" },
	{ 0x0011, "NodeRecord" },
	{ 0x0012, "PortInfoRecord" },
	{ 0x0015, "LinearForwardingTableRecord" },
	{ 0x0020, "LinkRecord" },
	{ 0x0035, "PathRecord" },
	{ 0, NULL },
};

static const struct name perf[] = {
	{ 0x0001, "ClassPortInfo" },
	{ 0x0010, "PortSamplesControl" },
	{ 0x0011, "PortSamplesResult" },
	{ 0x0012, "PortCounters" },
	{ 0x0015, "PortRcvErrorDetails" },
	{ 0x0016, "PortXmitDiscardDetails" },
	{ 0x0017, "PortOpRcvCounters" },
	{ 0x0018, "PortFlowCtlCounters" },
	{ 0x0019, "PortVLOpPackets" },
	{ 0x001a, "PortVLOpData" },
	{ 0x001b, "PortVLXmitFlowCtlUpdateErrors" },
	{ 0x001c, "PortVLXmitWaitCounters" },
	{ 0x001d, "PortCountersExtended" },
	{ 0x001e, "PortSamplesResultExtended" },
	{ 0x001f, "PortExtendedSpeedsCounters" },
	{ 0x0030, "SwPortVLCongestion" },
	{ 0x0031, "PortRcvConCtrl" },
	{ 0x0032, "PortSLRcvFECN" },
	{ 0x0033, "PortSLRcvBECN" },
	{ 0x0034, "PortXmitConCtrl" },
	{ 0x0035, "PortVLXmitTimeCong" },
	{ 0, NULL },
};

const char *ibw_mad_attr_str(uint8_t c, uint16_t attr)
{
	const struct name *t = c == CLS_SMI || c == CLS_DR ? smp
			       : c == CLS_SA		   ? sa
			       : c == CLS_PERF		   ? perf
							   : NULL;

	for (; t && t->name; t++)
		if (t->attr == attr)
			return t->name;
	/* every GSI class's attribute 1 */
	if (attr == 0x0001 && c != CLS_SMI && c != CLS_DR)
		return "ClassPortInfo";
	return NULL;
}

void ibw_mad_kind_names(const struct ibw_mad_kind *k, char cls[16],
			char method[16], char attr[32])
{
	const char *s;

	if (!k->mgmt_class) {
		snprintf(cls, 16, "other");
		snprintf(method, 16, "other");
		snprintf(attr, 32, "other");
		return;
	}
	s = ibw_mad_class_str(k->mgmt_class);
	if (s)
		snprintf(cls, 16, "%s", s);
	else
		snprintf(cls, 16, "0x%02x", k->mgmt_class);
	s = ibw_mad_method_str(k->method);
	if (s)
		snprintf(method, 16, "%s", s);
	else
		snprintf(method, 16, "0x%02x", k->method);
	s = ibw_mad_attr_str(k->mgmt_class, k->attr);
	if (s)
		snprintf(attr, 32, "%s", s);
	else
		snprintf(attr, 32, "0x%04x", k->attr);
}
