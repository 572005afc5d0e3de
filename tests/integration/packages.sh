#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The packages, from the release tarball the build makes (`cmake --build
# BUILD --target dist`): the Debian package (`dpkg-buildpackage -b -us
# -uc` in the unpacked tarball) builds, lintian reports no error, and
# `dpkg -c` lists every file CMake's install rules installed (the
# build's install_manifest.txt; man pages and long docs compressed) with
# the files an operator needs named one by one; the RPM (`rpmbuild -tb`
# on the tarball, with Debian's rpm) builds and holds the same files.
# Every version is CMakeLists.txt's project() version, which
# `ibwatchd --version` prints.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_BUILD_DIR:?}"

work=${IBW_TEST_WORK:-$PWD/test-work}/packages
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
V=$("$IBWATCHD" --version | awk '{ print $2 }')

cmake --build "$IBW_BUILD_DIR" --target dist >dist.log 2>&1
tarball=$IBW_BUILD_DIR/ibwatch-$V.tar.gz
check "cmake --build --target dist makes ibwatch-$V.tar.gz" test -s "$tarball"
tar xzf "$tarball"
src=$work/ibwatch-$V
check "... with the RPM spec at its top, version $V ($(sed -n 's/^Version: *//p' "$src/ibwatch.spec"))" \
	test "$(sed -n 's/^Version: *//p' "$src/ibwatch.spec")" = "$V"
check "... and the Debian changelog at $V-1 ($(cd "$src" && dpkg-parsechangelog -S Version))" \
	test "$(cd "$src" && dpkg-parsechangelog -S Version)" = "$V-1"

# The Debian package, as a developer or CI builds it.
(cd "$src" && dpkg-buildpackage -b -us -uc) >deb.log 2>&1
rc=$?
deb=$work/ibwatch_${V}-1_$(dpkg --print-architecture).deb
check "dpkg-buildpackage -b -us -uc builds $(basename "$deb") (exit $rc)" test $rc = 0 -a -s "$deb" ||
	tail -n 20 deb.log | sed 's/^/# /'
check "... of version $V-1 ($(dpkg-deb -f "$deb" Version 2>&1))" test "$(dpkg-deb -f "$deb" Version 2>&1)" = "$V-1"
lintian --fail-on error "$work"/ibwatch_${V}-1_*.changes >lintian.log 2>&1
rc=$?
check "lintian: no error (exit $rc; errors and warnings: $(grep -o '^[EW]: [^ ]* [^ ]*' lintian.log | sort -u | xargs))" \
	bash -c '[ "$1" = 0 ] && ! grep -q "^E: " lintian.log' _ $rc

dpkg -c "$deb" | awk '{ print substr($6, 2) }' | sed 's|/$||' >deb-files.txt
manifest=$(ls "$src"/obj-*/install_manifest.txt 2>/dev/null | head -n1)
check "CMake's install rules installed $(grep -c . "$manifest" 2>/dev/null || echo no) files (install_manifest.txt)" \
	test -s "$manifest"
missing=""
# (its last line has no newline)
while read -r f || [ -n "$f" ]; do
	grep -qxF -e "$f" -e "$f.gz" deb-files.txt || missing="$missing $f"
done <"$manifest"
check "dpkg -c lists every one of them${missing:+ (missing:$missing)}" test -z "$missing"
named=(/usr/sbin/ibwatchd /usr/share/snmp/mibs/IBWATCH-MIB.txt
	/usr/share/snmp/snmp.conf /usr/share/ibwatch/mibs/SNMPv2-SMI.txt
	/usr/share/man/man8/ibwatchd.8.gz /usr/share/man/man5/ibwatch.conf.5.gz
	/lib/systemd/system/ibwatchd.service /lib/systemd/system/ibwatchd@.service
	/usr/lib/sysusers.d/ibwatch.conf /lib/udev/rules.d/90-ibwatch-umad.rules
	/etc/ibwatch/ibwatch.conf /usr/share/doc/ibwatch/examples/ibwatchd-mlx5_0-1.conf
	/usr/share/doc/ibwatch/copyright)
missing=""
for f in "${named[@]}"; do grep -qxF "$f" deb-files.txt || missing="$missing $f"; done
check "... the daemon, MIB (and what loads it by name), man pages, units, sysusers file, udev rule, config and examples${missing:+ (missing:$missing)}" \
	test -z "$missing"
dpkg-deb -e "$deb" control
check "... the config a conffile" grep -qx /etc/ibwatch/ibwatch.conf control/conffiles
check "... the ibwatch user made at configure (systemd-sysusers in postinst)" \
	grep -q '^ *systemd-sysusers .*ibwatch.conf' control/postinst

# The RPM, from the tarball as it is. Debian's rpm has an empty package
# database, so the build dependencies cannot be checked (--nodeps):
# they are installed as Debian packages.
rpmbuild -tb --nodeps --define "_topdir $work/rpm" "$tarball" >rpm.log 2>&1
rc=$?
rpm=$(ls "$work"/rpm/RPMS/*/ibwatch-"$V"-1*.rpm 2>/dev/null | head -n1)
check "rpmbuild -tb ibwatch-$V.tar.gz builds ${rpm:+$(basename "$rpm") }(exit $rc)" test $rc = 0 -a -n "$rpm" ||
	tail -n 20 rpm.log | sed 's/^/# /'
check "... version $V ($(rpm -qp --qf '%{VERSION}' "$rpm" 2>/dev/null))" test "$(rpm -qp --qf '%{VERSION}' "$rpm" 2>/dev/null)" = "$V"
rpm -qlp "$rpm" >rpm-files.txt 2>/dev/null
missing=""
for f in /usr/sbin/ibwatchd /usr/share/snmp/mibs/IBWATCH-MIB.txt /usr/share/man/man8/ibwatchd.8 \
	/usr/share/snmp/snmp.conf /usr/share/ibwatch/mibs/SNMPv2-TC.txt \
	/usr/share/man/man5/ibwatch.conf.5 /usr/lib/systemd/system/ibwatchd.service \
	/usr/lib/systemd/system/ibwatchd@.service /usr/lib/sysusers.d/ibwatch.conf \
	/usr/lib/udev/rules.d/90-ibwatch-umad.rules /etc/ibwatch/ibwatch.conf \
	/usr/share/doc/ibwatch/examples/ibwatchd-mlx5_0-1.conf; do
	grep -qxF "$f" rpm-files.txt || missing="$missing $f"
done
check "... with the same files (rpmbuild fails on any it does not package)${missing:+ (missing:$missing)}" \
	test -z "$missing"
check "... the config %config(noreplace)" \
	bash -c 'rpm -qp --qf "[%{FILENAMES} %{FILEFLAGS:fflags}\n]" "$1" | grep -qx "/etc/ibwatch/ibwatch.conf cn"' _ "$rpm"
finish
