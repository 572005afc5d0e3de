// SPDX-License-Identifier: BSD-2-Clause
/* Attribute decoders on MADs built with libibmad's field setters. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "codec.h"

static void test_nodeinfo(void **state)
{
	uint8_t mad[256] = { 1, 0x81, 1, 0x81 };
	uint8_t *p = mad + IB_SMP_DATA_OFFS;
	struct ibw_nodeinfo ni;

	mad_set_field(p, 0, IB_NODE_TYPE_F, 2);
	mad_set_field(p, 0, IB_NODE_NPORTS_F, 36);
	mad_set_field64(p, 0, IB_NODE_GUID_F, 0x0002c90300a00001ull);
	mad_set_field64(p, 0, IB_NODE_PORT_GUID_F, 0x0002c90300a00001ull);
	mad_set_field(p, 0, IB_NODE_LOCAL_PORT_F, 17);
	mad_set_field(p, 0, IB_NODE_VENDORID_F, 0x2c9);
	assert_int_equal(ibw_nodeinfo_decode(mad, sizeof(mad), &ni), 0);
	assert_int_equal(ni.node_type, IBW_NODE_SWITCH);
	assert_int_equal(ni.num_ports, 36);
	assert_true(ni.node_guid == 0x0002c90300a00001ull);
	assert_int_equal(ni.local_port, 17);
	assert_int_equal(ni.vendor_id, 0x2c9);
	assert_string_equal(ibw_node_type_str(ni.node_type), "switch");
	assert_int_equal(ibw_nodeinfo_decode(mad, 100, &ni), -EINVAL);
	assert_int_equal(ibw_nodeinfo_decode(NULL, 256, &ni), -EINVAL);
}

static void test_portinfo(void **state)
{
	uint8_t mad[256] = { 1, 0x01, 1, 0x81 };
	uint8_t *p = mad + IB_SMP_DATA_OFFS;
	struct ibw_portinfo pi;

	mad_set_field(p, 0, IB_PORT_LID_F, 0xbfff);
	mad_set_field(p, 0, IB_PORT_SMLID_F, 1);
	mad_set_field(p, 0, IB_PORT_STATE_F, 4);
	mad_set_field(p, 0, IB_PORT_PHYS_STATE_F, 5);
	mad_set_field(p, 0, IB_PORT_LMC_F, 2);
	mad_set_field(p, 0, IB_PORT_LINK_WIDTH_ACTIVE_F, 2);
	mad_set_field(p, 0, IB_PORT_CAPMASK_F, 0x0250c04a);
	assert_int_equal(ibw_portinfo_decode(mad, sizeof(mad), &pi), 0);
	assert_int_equal(pi.lid, 0xbfff);
	assert_int_equal(pi.sm_lid, 1);
	assert_int_equal(pi.lmc, 2);
	assert_int_equal(pi.width_active, 2);
	assert_int_equal(pi.capmask, 0x0250c04a);
	assert_string_equal(ibw_port_state_str(pi.state), "active");
	assert_string_equal(ibw_phys_state_str(pi.phys_state), "linkup");
	assert_string_equal(ibw_port_state_str(77), "unknown");
}

static void test_port_counters(void **state)
{
	uint8_t mad[256] = { 1, 0x04, 1, 0x81 };
	uint8_t *p = mad + IB_PC_DATA_OFFS;
	struct ibw_port_counters pc;

	mad_set_field(p, 0, IB_PC_PORT_SELECT_F, 3);
	mad_set_field(p, 0, IB_PC_ERR_SYM_F, 1000);
	mad_set_field(p, 0, IB_PC_LINK_DOWNED_F, 255);
	mad_set_field(p, 0, IB_PC_XMT_BYTES_F, 4294967295u);
	mad_set_field(p, 0, IB_PC_RCV_PKTS_F, 12345);
	mad_set_field(p, 0, IB_PC_VL15_DROPPED_F, 7);
	assert_int_equal(ibw_port_counters_decode(mad, sizeof(mad), &pc), 0);
	assert_int_equal(pc.port_select, 3);
	assert_int_equal(pc.symbol_errors, 1000);
	assert_int_equal(pc.link_downed, 255);
	assert_true(pc.xmit_data == 4294967295u);
	assert_int_equal(pc.rcv_pkts, 12345);
	assert_int_equal(pc.vl15_dropped, 7);
}

static void test_nodedesc_is_sanitised(void **state)
{
	uint8_t mad[256] = { 1, 0x81, 1, 0x81 };
	char buf[IBW_NAME_SIZE];

	memcpy(mad + IB_SMP_DATA_OFFS, "node0001 HCA-1\n\x01", 16);
	assert_int_equal(
		ibw_nodedesc_decode(mad, sizeof(mad), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "node0001 HCA-1??");
	/* 64 octets, no NUL: still terminated */
	memset(mad + IB_SMP_DATA_OFFS, 'x', 64);
	assert_int_equal(
		ibw_nodedesc_decode(mad, sizeof(mad), buf, sizeof(buf)), 0);
	assert_int_equal(strlen(buf), 64);
	assert_int_equal(ibw_nodedesc_decode(mad, sizeof(mad), buf, 10),
			 -EINVAL);
}

/* What the link view needs of PortInfo: enabled and supported widths
 * and speeds, CapabilityMask2; and the Mellanox ExtendedPortInfo. */
static void test_portinfo_link_fields(void **state)
{
	uint8_t mad[256] = { 1, 0x81, 1, 0x81 };
	uint8_t *p = mad + IB_SMP_DATA_OFFS;
	struct ibw_portinfo pi;

	mad_set_field(p, 0, IB_PORT_LINK_WIDTH_ENABLED_F, 3);
	mad_set_field(p, 0, IB_PORT_LINK_WIDTH_SUPPORTED_F, 19);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_SUPPORTED_F, 7);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_ENABLED_F, 5);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F, 15);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_EXT_ENABLED_F, 30);
	mad_set_field(p, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F, 4);
	mad_set_field(p, 0, IB_PORT_CAPMASK2_F, 0x0830);
	assert_int_equal(ibw_portinfo_decode(mad, sizeof(mad), &pi), 0);
	assert_int_equal(pi.width_enabled, 3);
	assert_int_equal(pi.width_supported, 19);
	assert_int_equal(pi.speed_supported, 7);
	assert_int_equal(pi.speed_enabled, 5);
	assert_int_equal(pi.speed_ext_supported, 15);
	assert_int_equal(pi.speed_ext_enabled, 30);
	assert_int_equal(pi.speed_ext_active, 4);
	assert_int_equal(pi.capmask2, 0x0830);
	assert_int_equal(pi.have_mlnx_ext, 0);
	/* Debian 12's libibmad has no LinkSpeedExt2 fields. */
	if (!ibw_codec_has_speed_ext2())
		assert_int_equal(pi.speed_ext2_active, 0);

	memset(mad + IB_SMP_DATA_OFFS, 0, 64);
	mad_set_field(p, 0, IB_MLNX_EXT_PORT_LINK_SPEED_SUPPORTED_F, 1);
	mad_set_field(p, 0, IB_MLNX_EXT_PORT_LINK_SPEED_ENABLED_F, 1);
	mad_set_field(p, 0, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F, 0);
	assert_int_equal(ibw_mlnx_ext_portinfo_decode(mad, sizeof(mad), &pi),
			 0);
	assert_int_equal(pi.have_mlnx_ext, 1);
	assert_int_equal(pi.mlnx_speed_supported, 1);
	assert_int_equal(pi.mlnx_speed_enabled, 1);
	assert_int_equal(pi.mlnx_speed_active, 0);
	/* It keeps what PortInfo said. */
	assert_int_equal(pi.width_supported, 19);
	assert_int_equal(ibw_mlnx_ext_portinfo_decode(mad, 200, &pi), -EINVAL);
}

static void test_vl_xmit_wait(void **state)
{
	uint8_t mad[256] = { 1, 0x04, 1, 0x81 };
	uint8_t *p = mad + IB_PC_DATA_OFFS;
	struct ibw_vl_xmit_wait vw;
	int i;

	mad_set_field(p, 0, IB_PC_PORT_SELECT_F, 7);
	for (i = 0; i < 16; i++)
		mad_set_field(p, 0, IB_PC_PORT_VL_XMIT_WAIT0_F + i,
			      (uint32_t)(i * 1000 + 1));
	mad_set_field(p, 0, IB_PC_PORT_VL_XMIT_WAIT15_F, 65535);
	assert_int_equal(ibw_vl_xmit_wait_decode(mad, sizeof(mad), &vw), 0);
	assert_int_equal(vw.port_select, 7);
	assert_int_equal(vw.wait[0], 1);
	assert_int_equal(vw.wait[7], 7001);
	assert_int_equal(vw.wait[15], 65535);
	assert_int_equal(ibw_vl_xmit_wait_decode(mad, 10, &vw), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodeinfo),
		cmocka_unit_test(test_portinfo),
		cmocka_unit_test(test_port_counters),
		cmocka_unit_test(test_nodedesc_is_sanitised),
		cmocka_unit_test(test_portinfo_link_fields),
		cmocka_unit_test(test_vl_xmit_wait),
	};

	return cmocka_run_group_tests_name("codec", tests, NULL, NULL);
}
