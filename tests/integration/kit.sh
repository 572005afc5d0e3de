#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The deployment kit and the installed tree: a build configured as a
# package would be (prefix /usr) installed into a DESTDIR; the tree holds
# the daemon, man pages, MIB, units, sysusers and udev files, example
# configs and kit; systemd-analyze verify passes on the unit and on an
# instance of the template unit, which differs from the unit only in
# its command lines and description; promtool
# checks the Prometheus config and rules and runs the rules' unit tests;
# every metric the rules and the Grafana dashboard use is one the
# exporter writes; the Nagios commands use plugins that exist and OIDs
# the MIB defines; the example config passes --check-config; a second
# install keeps an edited config.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib/tap.sh"
work=${IBW_TEST_WORK:-$PWD/test-work}/kit
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
export MIBS="" MIBDIRS=""

cmake -S "$top" -B build -DCMAKE_INSTALL_PREFIX=/usr -DIBW_BUILD_TESTS=OFF \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >cmake.log 2>&1 &&
	cmake --build build -j 2 --target ibwatchd >>cmake.log 2>&1
check "a package-style build (prefix /usr) of ibwatchd" test -x build/agent/ibwatchd
D=$work/dest
DESTDIR=$D cmake --install build >install.log 2>&1
check "cmake --install into a DESTDIR" test $? = 0
for f in usr/sbin/ibwatchd usr/share/man/man8/ibwatchd.8 usr/share/man/man5/ibwatch.conf.5 \
	usr/share/snmp/mibs/IBWATCH-MIB.txt usr/share/snmp/snmp.conf \
	usr/share/ibwatch/mibs/SNMPv2-SMI.txt usr/lib/systemd/system/ibwatchd.service \
	usr/lib/systemd/system/ibwatchd@.service usr/share/doc/ibwatch/examples/ibwatchd-mlx5_0-1.conf \
	usr/lib/sysusers.d/ibwatch.conf usr/lib/udev/rules.d/90-ibwatch-umad.rules \
	etc/ibwatch/ibwatch.conf usr/share/doc/ibwatch/examples/snmpd.conf.snippet \
	usr/share/doc/ibwatch/examples/prometheus.yml usr/share/doc/ibwatch/examples/ibwatch.rules.yml \
	usr/share/doc/ibwatch/examples/alertmanager.yml \
	usr/share/doc/ibwatch/examples/ibwatch-dashboard.json usr/share/doc/ibwatch/examples/ibwatch.cfg \
	usr/share/doc/ibwatch/mib.md usr/share/doc/ibwatch/operations.md; do
	[ -s "$D/$f" ] || bad "installed: /$f is missing"
done
check "the installed tree has the daemon, man pages, MIB, unit, sysusers, udev, config and kit" \
	test "$fails" = 0
check "the installed snmp.conf puts the base modules on net-snmp's MIB path" \
	grep -qx 'mibdirs +/usr/share/ibwatch/mibs' "$D/usr/share/snmp/snmp.conf"
check "the installed daemon runs" bash -c "'$D/usr/sbin/ibwatchd' --version | grep -q '^ibwatchd '"
for m in man8/ibwatchd.8 man5/ibwatch.conf.5; do
	out=$(groff -man -Tutf8 -ww -z "$D/usr/share/man/$m" 2>&1)
	check "man page $m renders without warnings${out:+ ($out)}" test -z "$out"
done
out=$("$D/usr/sbin/ibwatchd" -c "$D/etc/ibwatch/ibwatch.conf" --check-config 2>&1)
check "the installed example config passes --check-config ($out)" grep -q 'configuration OK' <<<"$out"

# The unit, with ExecStart pointing into the DESTDIR (verify runs what it
# names) and the installed man pages on MANPATH (it checks
# Documentation=).
sed "s|/usr/sbin/ibwatchd|$D/usr/sbin/ibwatchd|g" "$D/usr/lib/systemd/system/ibwatchd.service" \
	>ibwatchd.service
out=$(MANPATH=$D/usr/share/man systemd-analyze verify ./ibwatchd.service 2>&1); rc=$?
check "systemd-analyze verify ibwatchd.service${out:+ ($out)}" test $rc = 0 -a -z "$out"
check "... with the hardening the kit promises" bash -c "grep -q '^NoNewPrivileges=yes' ibwatchd.service &&
	grep -q '^ProtectSystem=strict' ibwatchd.service && grep -q '^DeviceAllow=char-infiniband_mad rw' ibwatchd.service &&
	grep -q '^StateDirectory=ibwatch' ibwatchd.service && grep -q '^Type=notify' ibwatchd.service"
# The template unit: verified as an instance (a template alone is no
# unit), and the same service as ibwatchd.service but for its
# description, command lines and comments.
sed "s|/usr/sbin/ibwatchd|$D/usr/sbin/ibwatchd|g" "$D/usr/lib/systemd/system/ibwatchd@.service" \
	>ibwatchd@.service
ln -sf ibwatchd@.service ibwatchd@mlx5_0-1.service
out=$(MANPATH=$D/usr/share/man systemd-analyze verify ./ibwatchd@mlx5_0-1.service 2>&1); rc=$?
check "systemd-analyze verify ibwatchd@mlx5_0-1.service${out:+ ($out)}" test $rc = 0 -a -z "$out"
same() { grep -v -e '^#' -e '^Description=' -e '^ExecStart' "$1"; }
out=$(diff <(same ibwatchd.service) <(same ibwatchd@.service))
check "... with the same user, hardening and Type=notify as ibwatchd.service${out:+ ($out)}" test -z "$out"
out=$("$D/usr/sbin/ibwatchd" -c "$D/usr/share/doc/ibwatch/examples/ibwatchd-mlx5_0-1.conf" --check-config 2>&1)
check "the example instance config passes --check-config ($out)" grep -q 'configuration OK' <<<"$out"
check "systemd-sysusers creates the ibwatch user from the installed file" bash -c \
	"systemd-sysusers --root='$D' >/dev/null 2>&1; grep -q '^ibwatch:' '$D/etc/passwd'"

# Prometheus.
P=$D/usr/share/doc/ibwatch/examples
out=$(cd "$P" && promtool check config prometheus.yml 2>&1); rc=$?
check "promtool check config on the kit's prometheus.yml" test $rc = 0
out=$(promtool check rules "$P/ibwatch.rules.yml" 2>&1); rc=$?
check "promtool check rules on the kit's rules ($(grep -o '[0-9]* rules found' <<<"$out"))" test $rc = 0
cp "$top/deploy/prometheus/ibwatch.rules.test.yml" "$P/"
out=$(cd "$P" && promtool test rules ibwatch.rules.test.yml 2>&1); rc=$?
check "promtool test rules: each alert fires on its series${out:+ }" test $rc = 0 || echo "$out" | sed 's/^/# /'
out=$(amtool check-config "$P/alertmanager.yml" 2>&1); rc=$?
check "amtool check-config on the kit's alertmanager.yml" test $rc = 0 || echo "$out" | sed 's/^/# /'
# Every metric name the rules and the dashboard use: literal names, and
# the names a __name__ regex stands for, must be in what the exporter
# renders (tests/fixtures/metrics.prom is the renderer's output, checked
# by unit_render) or, for series the fixture's snapshot has no rows of
# (cables, routes, the fabric), named in docs/api.md; a recording rule's
# own name (level:metric:operation) is none.
fixture=$top/tests/fixtures/metrics.prom
missing=$(python3 - "$P/ibwatch.rules.yml" "$P/ibwatch-dashboard.json" "$fixture" "$top/docs/api.md" <<'PY'
import json, re, sys
rules, dash, fixture, api = sys.argv[1:5]
have = {l.split("{")[0].split(" ")[0] for l in open(fixture) if l and not l.startswith("#")}
have |= set(re.findall(r"`((?:ibwatch|infiniband)_[a-z_]+)", open(api).read()))
exprs = re.findall(r"expr: *(.*(?:\n +.*)*)", open(rules).read())
d = json.load(open(dash))
exprs += [t["expr"] for p in d["panels"] for t in p["targets"]]
missing = set()
for e in exprs:
    for rx in re.findall(r'__name__=~"([^"]+)"', e):
        if not any(re.fullmatch(rx, h) for h in have):
            missing.add(rx)
    for name in re.findall(r"(?<![:a-z_])((?:infiniband|ibwatch)_[a-z_]+)\b", e):
        if name not in have:
            missing.add(name)
print(" ".join(sorted(missing)))
PY
)
check "every metric the rules and dashboard use is exported${missing:+ (missing: $missing)}" test -z "$missing"
check "the Grafana dashboard is JSON with a query in every panel" \
	jq -e '(.panels | length) > 5 and all(.panels[]; (.targets | length) > 0)' "$P/ibwatch-dashboard.json"

# Nagios: the plugins the commands run, and the OIDs, by the MIB.
cfg=$P/ibwatch.cfg
plugins_ok=1
for p in $(grep -o '\$USER1\$/[a-z_]*' "$cfg" | sed 's|.*/||' | sort -u); do
	[ -x "/usr/lib/nagios/plugins/$p" ] || plugins_ok=0
done
check "the Nagios commands use plugins that are installed" test $plugins_ok = 1
# numeric OIDs and names, each translated by the MIB as the installed
# tree has it (the snmp.conf it installs names the base modules' place
# under /usr, so here the directories are given)
names=""
for o in $(grep -o '\.1\.3\.6\.1\.4\.1\.32473[.0-9]*\|IBWATCH-MIB::[A-Za-z]*' "$cfg" | sed 's/\.$//' | sort -u); do
	case $o in IBWATCH-MIB::*) o=$o.1 ;; esac
	names="$names $(snmptranslate -M "$D/usr/share/snmp/mibs:$D/usr/share/ibwatch/mibs" -m IBWATCH-MIB "$o" 2>/dev/null)"
done
check "their OIDs are IBWATCH-MIB objects:$names" bash -c "grep -q 'ibwEndportState' <<<'$names' && grep -q 'ibwEndportsDown' <<<'$names' && grep -q 'ibwLinkHealth' <<<'$names'"

# A second install keeps an edited config.
echo "counter-interval = 45" >>"$D/etc/ibwatch/ibwatch.conf"
DESTDIR=$D cmake --install build >install2.log 2>&1
check "a second install keeps the edited config" grep -q '^counter-interval = 45' "$D/etc/ibwatch/ibwatch.conf"

finish
