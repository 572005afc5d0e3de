# SPDX-License-Identifier: BSD-2-Clause
# Installed by install(SCRIPT): net-snmp's tools read snmp.conf from
# DATADIR/snmp as well as /etc/snmp, so this one line, written with the
# prefix of this install (cmake --install --prefix included), puts the
# SMIv2 base modules IBWATCH-MIB imports on every tool's MIB path.
# IBW_DATADIR and IBW_SNMP_CONF_SRC are set by the install(CODE) before.
set(dir "${CMAKE_INSTALL_PREFIX}/${IBW_DATADIR}")
file(WRITE "${IBW_SNMP_CONF_SRC}"
	"# ibwatch: the SMIv2 base modules IBWATCH-MIB imports (RFC 2578-2580),\n"
	"# which Debian ships only in non-free snmp-mibs-downloader.\n"
	"mibdirs +${dir}/ibwatch/mibs\n")
file(INSTALL "${IBW_SNMP_CONF_SRC}" DESTINATION "${dir}/snmp")
