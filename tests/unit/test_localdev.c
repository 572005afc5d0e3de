// SPDX-License-Identifier: BSD-2-Clause
/*
 * The local device by port GUID (--port-guid, and the reopen after an
 * HCA reset, which may bring the port back under another CA name), and
 * whether a device node's mode lets a user open it (the check --user
 * makes at start: after a reset the node comes back with the mode udev
 * gives it, and the daemon reopens it as that user).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "localdev.h"

static void add_port(struct ibw_local_ca *ca, int num, uint64_t guid)
{
	struct ibw_local_port *p = &ca->ports[ca->nports++];

	memcpy(p->ca_name, ca->name, sizeof(p->ca_name));
	p->portnum = num;
	p->port_guid = guid;
}

static void test_pick_by_guid(void **state)
{
	struct ibw_local_ca cas[2];
	char ca[64];
	int port = 0;

	(void)state;
	memset(cas, 0, sizeof(cas));
	snprintf(cas[0].name, sizeof(cas[0].name), "mlx5_0");
	add_port(&cas[0], 1, 0x0002c90300000011ull);
	snprintf(cas[1].name, sizeof(cas[1].name), "mlx5_1");
	add_port(&cas[1], 1, 0x0002c90300000021ull);
	add_port(&cas[1], 2, 0x0002c90300000022ull);

	assert_int_equal(ibw_localdev_pick(cas, 2, 0x0002c90300000022ull, ca,
					   sizeof(ca), &port),
			 0);
	assert_string_equal(ca, "mlx5_1");
	assert_int_equal(port, 2);
	assert_int_equal(ibw_localdev_pick(cas, 2, 0x0002c90300000011ull, ca,
					   sizeof(ca), &port),
			 0);
	assert_string_equal(ca, "mlx5_0");
	assert_int_equal(port, 1);
	assert_int_equal(ibw_localdev_pick(cas, 2, 0x99, ca, sizeof(ca), &port),
			 -ENODEV);
	assert_int_equal(ibw_localdev_pick(cas, 2, 0, ca, sizeof(ca), &port),
			 -ENODEV);

	/* After a reset the HCA comes back as mlx5_2, ports swapped in
	 * order: the same port is found by its GUID, not by the old name
	 * and number (which now name nothing, or another port). */
	memset(cas, 0, sizeof(cas));
	snprintf(cas[0].name, sizeof(cas[0].name), "mlx5_0");
	add_port(&cas[0], 1, 0x0002c90300000011ull);
	snprintf(cas[1].name, sizeof(cas[1].name), "mlx5_2");
	add_port(&cas[1], 1, 0x0002c90300000022ull);
	add_port(&cas[1], 2, 0x0002c90300000021ull);
	assert_int_equal(ibw_localdev_pick(cas, 2, 0x0002c90300000022ull, ca,
					   sizeof(ca), &port),
			 0);
	assert_string_equal(ca, "mlx5_2");
	assert_int_equal(port, 1);
}

static void test_mode_allows(void **state)
{
	struct stat st;
	gid_t sup[2] = { 20, 777 };

	(void)state;
	memset(&st, 0, sizeof(st));
	st.st_uid = 0;
	st.st_gid = 0;
	/* what a reset leaves without a udev rule: root's alone */
	st.st_mode = S_IFCHR | 0600;
	assert_false(ibw_mode_allows_rw(&st, 65534, 65534, NULL, 0));
	assert_true(ibw_mode_allows_rw(&st, 0, 0, NULL, 0));
	/* the rule of docs/operations.md: group ibwatch, 0660 */
	st.st_gid = 777;
	st.st_mode = S_IFCHR | 0660;
	assert_false(ibw_mode_allows_rw(&st, 65534, 65534, NULL, 0));
	assert_true(ibw_mode_allows_rw(&st, 65534, 65534, sup, 2));
	assert_true(ibw_mode_allows_rw(&st, 1000, 777, NULL, 0));
	/* read alone is not enough */
	st.st_mode = S_IFCHR | 0644;
	assert_false(ibw_mode_allows_rw(&st, 65534, 777, NULL, 0));
	st.st_mode = S_IFCHR | 0666;
	assert_true(ibw_mode_allows_rw(&st, 65534, 65534, NULL, 0));
	/* the owner's bits decide for the owner, not the others' */
	st.st_uid = 65534;
	st.st_mode = S_IFCHR | 0066;
	assert_false(ibw_mode_allows_rw(&st, 65534, 65534, NULL, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick_by_guid),
		cmocka_unit_test(test_mode_allows),
	};

	return cmocka_run_group_tests_name("localdev", tests, NULL, NULL);
}
