#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# IBWATCH-MIB as a new user meets it (issue 38), on a 32-host fat tree
# with a real snmpd: net-snmp's tools load the MIB only as the installed
# package arranges it (the install, prefix /usr, laid over /usr/share in
# a private mount namespace: the host's own /etc/snmp/snmp.conf, no -M,
# no -m). snmptable prints ibwPortTable, ibwEndportTable and ibwLinkTable
# by name with its default options and with -Cb, their rows equal
# /api/v1/ports, /api/v1/endports and /api/v1/links; snmpwalk by name
# shows readable row indexes; a port found by its GUID
# (ibwPortLookupIndex) answers snmpget with its values. Every port keeps
# its row across a restart of the agent, a restart while a host is gone
# (it comes back to its old row), and a port down and up. check_snmp by
# name, as deploy/nagios/ibwatch.cfg runs it, says OK, WARNING and
# CRITICAL for one cable, and OK and CRITICAL for one endport.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}" "${IBW_BUILD_DIR:?}"

on_fattree snmp_names 32

trap stop_started EXIT

# The package's files, as it installs them.
stage=$PWD/stage
rm -rf "$stage"
DESTDIR=$stage cmake --install "$IBW_BUILD_DIR" --prefix /usr >install.log 2>&1
check "the install (prefix /usr) has the MIB, the base modules and snmp.conf" \
	test -s "$stage/usr/share/snmp/mibs/IBWATCH-MIB.txt" -a \
	-s "$stage/usr/share/ibwatch/mibs/SNMPv2-SMI.txt" -a -s "$stage/usr/share/snmp/snmp.conf"
# pkg CMD...: CMD as on a host with the package installed: /usr/share
# is the install's laid over the host's; the tools read the host's
# config (/etc/snmp) and the package's, nothing of the test's.
pkg() {
	env -u MIBS -u MIBDIRS -u SNMPCONFPATH HOME="$PWD/home" \
		unshare -m --propagation private sh -c \
		'mount -t overlay ibw-pkg -o "lowerdir=$0/usr/share:/usr/share" /usr/share && exec "$@"' \
		"$stage" "$@"
}
mkdir -p home
out=$(pkg snmptranslate -On IBWATCH-MIB::ibwLinkHealth 2>&1)
check "with it, IBWATCH-MIB loads by name alone ($out)" test "$out" = .1.3.6.1.4.1.32473.1.8.1.9
out=$(env -u MIBS -u MIBDIRS -u SNMPCONFPATH HOME="$PWD/home" snmptranslate -On IBWATCH-MIB::ibwLinkHealth 2>&1)
check "... and without it, not (the host has no MIB of its own: $out)" \
	test "$out" != .1.3.6.1.4.1.32473.1.8.1.9

snmp_stack || { echo "not ok - snmpd does not start"; exit 1; }
state=$PWD/agent.state
agent_args=(--state-file "$state" --agentx "$SOCK" --discovery-interval 1
	--counter-interval 1 --ping-interval-ms 300 --down-after 2 --up-after 2
	--ping-method pma --link-threshold basis=enabled
	--link-threshold ber_degraded=0 --link-threshold ber_failing=0
	--link-threshold symbol_errors_per_day=100)
U() { echo "http://127.0.0.1:$P$1"; }
# ready N: the agent's JSON has N endports up and snmpd answers for it
ready() {
	local i
	for i in $(seq 1 150); do
		curl -s -m 5 "$(U /api/v1/endports)" | jqe "([.[] | select(.state == \"up\")] | length) == $1" &&
			snmpget "${A[@]}" -Oqv "$ROOT.1.1.23.0" 2>/dev/null | grep -qx "$1" && return 0
		sleep 0.2
	done
	return 1
}
sim 'PerformanceSet "node0007"[1] PortCounters.SymbolErrorCounter=42'
start_agent node0001 "${agent_args[@]}" || { echo "not ok - the agent does not start"; exit 1; }
check "the agent serves 32 endports up over SNMP" ready 32

# 1. snmptable by name, default options and -Cb.
for t in ibwPortTable ibwEndportTable ibwLinkTable; do
	pkg snmptable "${A[@]}" "IBWATCH-MIB::$t" >"$t.txt" 2>"$t.err"
	rc=$?
	check "snmptable IBWATCH-MIB::$t: exit $rc, $(($(wc -l <"$t.txt") - 3)) rows$( [ -s "$t.err" ] && echo ", stderr: $(head -c 200 "$t.err")")" \
		test $rc = 0 -a ! -s "$t.err" -a "$(head -n1 "$t.txt")" = "SNMP table: IBWATCH-MIB::$t"
	pkg snmptable -Cb "${A[@]}" "IBWATCH-MIB::$t" >"$t-b.txt" 2>&1
	check "... and with -Cb (exit $?, $(sed -n 3p "$t-b.txt" | awk '{ print $1, $2, $3 }') ...)" \
		test $? = 0 -a "$(wc -l <"$t-b.txt")" = "$(wc -l <"$t.txt")"
	# the same rows, one per line with the index, to compare
	pkg snmptable -Ci -CH -Cf '|' "${A[@]}" "IBWATCH-MIB::$t" >"$t.rows" 2>&1
done
curl -s -m 20 "$(U /api/v1/ports)" >ports.json
curl -s -m 20 "$(U /api/v1/endports)" >eps.json
curl -s -m 20 "$(U /api/v1/links)" >links.json
check "ibwPortTable's rows are /api/v1/ports (GUID, port, name, LID, state, remote end, symbol errors)" \
	python3 - ibwPortTable.rows ports.json <<'PY'
import json, sys
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1]) if l.strip()]
ports = json.load(open(sys.argv[2]))
# column N of the MIB at r[N] (the index first), ibwPortIndex (52) not
# readable: ibwPortNodeName (53) last
by = {(r[1], int(r[2])): r for r in rows}
bad = 0
for p in ports:
    r = by.get((p["node_guid"], p["port"]))
    if r is None:
        print("# no row for", p["node_guid"], p["port"]); bad += 1; continue
    want = [(r[-1], p["node_name"])]
    if p.get("lid") is not None:
        want.append((r[4], str(p["lid"])))
    if p.get("state") in ("down", "init", "armed", "active"):
        want.append((r[6], p["state"]))
    if p.get("remote"):
        want += [(r[11], p["remote"]["guid"]), (r[12], str(p["remote"]["port"])),
                 (r[13], p["remote"]["name"])]
    tot = (p.get("counters") or {}).get("totals", {})
    if "symbol_errors" in tot:
        want.append((r[20], str(tot["symbol_errors"])))
    for got, exp in want:
        if got != exp:
            print("# differs", p["node_guid"], p["port"], repr(got), repr(exp)); bad += 1
            break
print("# %d rows, %d ports" % (len(rows), len(ports)))
sys.exit(1 if bad or len(rows) != len(ports) or len(ports) < 100 else 0)
PY
check "ibwEndportTable's rows are /api/v1/endports (GUID, port, port GUID, LID, name, state)" \
	python3 - ibwEndportTable.rows eps.json <<'PY'
import json, sys
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1]) if l.strip()]
eps = json.load(open(sys.argv[2]))
by = {(r[1], int(r[2])): r for r in rows}
bad = 0
for e in eps:
    r = by.get((e["node_guid"], e["port"]))
    if r is None or [r[3], r[4], r[5], r[7]] != [e["port_guid"], str(e["lid"]), e["name"], e["state"]]:
        print("# differs", e["name"], r); bad += 1
sys.exit(1 if bad or len(rows) != 32 or len(eps) != 32 else 0)
PY
check "ibwLinkTable's rows are /api/v1/links (both ends by GUID, port and name, health)" \
	python3 - ibwLinkTable.rows links.json <<'PY'
import json, sys
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1]) if l.strip()]
links = json.load(open(sys.argv[2]))["links"]
by = {(r[1], int(r[2])): r for r in rows}
bad = 0
for k in links:
    a, b = k["ends"]
    r = by.get((a["guid"], a["port"]))
    if r is None or [r[3], r[5], r[6], r[7], r[9]] != [a["name"], b["guid"], str(b["port"]), b["name"], k["health"]]:
        print("# differs", a["name"], a["port"], r); bad += 1
print("# %d rows, %d links" % (len(rows), len(links)))
sys.exit(1 if bad or len(rows) != len(links) or len(links) < 60 else 0)
PY

# 2. snmpwalk by name: rows a person can read and type.
pkg snmpwalk "${A[@]}" IBWATCH-MIB::ibwEndportName >walk-names.txt 2>&1
check "snmpwalk IBWATCH-MIB::ibwEndportName: 32 rows as ibwEndportName.N ($(head -n1 walk-names.txt))" \
	test "$(grep -cE '^IBWATCH-MIB::ibwEndportName\.[0-9]+ = STRING: node[0-9]{4} HCA-1$' walk-names.txt)" = 32
g7=$(jq -r '.[] | select(.node_name == "node0007 HCA-1") | .node_guid' ports.json)
pg7=$(jq -r '.[] | select(.name == "node0007 HCA-1") | .port_guid' eps.json)
i7=$(pkg snmpget -Oqv "${A[@]}" "IBWATCH-MIB::ibwPortLookupIndex.'$g7'.1" 2>&1)
check "ibwPortLookupIndex.'$g7'.1 finds node0007's port: row $i7" grep -qx '[0-9][0-9]*' <<<"$i7"
out=$(pkg snmpget -Oqv "${A[@]}" "IBWATCH-MIB::ibwPortLookupIndex.'$pg7'.1" 2>&1)
check "... and its port GUID $pg7 the same row ($out)" test "$out" = "$i7"
vals=$(pkg snmpget -Oqv "${A[@]}" "IBWATCH-MIB::ibwPortNodeName.$i7" "IBWATCH-MIB::ibwPortNodeGuid.$i7" \
	"IBWATCH-MIB::ibwPortLid.$i7" "IBWATCH-MIB::ibwPortSymbolErrors.$i7" 2>&1 | xargs)
want="node0007 HCA-1 $g7 $(jq -r '.[] | select(.node_name == "node0007 HCA-1") | "\(.lid) \(.counters.totals.symbol_errors)"' ports.json)"
check "snmpget of that row by name: its name, GUID, LID and symbol errors ($vals)" test "$vals" = "$want"

# 3. Rows kept: across a restart, a restart while a host is gone, a
# port down and up.
# rowmap: "GUID PORT ROW" of every port row, sorted
rowmap() {
	snmpwalk "${A[@]}" -On -Oq "$ROOT.1.3.1.1" 2>/dev/null | sed 's/^.*\.\([0-9]*\) "\(.*\)"$/\1 \2/' | sort >g.tmp
	snmpwalk "${A[@]}" -On -Oq "$ROOT.1.3.1.2" 2>/dev/null | sed 's/^.*\.\([0-9]*\) \([0-9]*\)$/\1 \2/' | sort >p.tmp
	join g.tmp p.tmp | awk '{ print $2, $3, $1 }' | sort
}
rowmap >rows1.txt
check "the row index file is kept beside the state file ($(grep -c . "$state.snmp-rows" 2>/dev/null) lines)" \
	test "$(grep -c '^p ' "$state.snmp-rows" 2>/dev/null)" -ge "$(grep -c . rows1.txt)"
check "... with every port's row ($(grep -c . rows1.txt) ports)" test "$(grep -c . rows1.txt)" -gt 100
check "the first agent stops cleanly" stopped_clean "$agent"
start_agent node0001 "${agent_args[@]}" || bad "the agent does not start again"
ready 32 || bad "the second agent does not serve 32 endports up"
rowmap >rows2.txt
check "after a restart every port has its row" cmp -s rows1.txt rows2.txt
check "... and stops cleanly" stopped_clean "$agent"
g5=$(jq -r '.[] | select(.node_name == "node0005 HCA-1") | .node_guid' ports.json)
sim 'Unlink "node0005"[1]'
start_agent node0001 "${agent_args[@]}" || bad "the agent does not start a third time"
ready 31 || bad "the third agent does not serve 31 endports up"
rowmap >rows3.txt
check "started while node0005 is gone: the others have their rows, node0005 none" \
	test "$(grep -v "^$g5 " rows1.txt)" = "$(cat rows3.txt)"
sim 'Relink "node0005"[1]'
ready 32 || bad "node0005 is not up again"
for _ in $(seq 1 50); do
	rowmap >rows4.txt
	cmp -s rows1.txt rows4.txt && break
	sleep 0.2
done
check "... relinked, node0005 comes back to its old row ($(grep "^$g5 " rows4.txt))" cmp -s rows1.txt rows4.txt
g6=$(jq -r '.[] | select(.node_name == "node0006 HCA-1") | .node_guid' ports.json)
sim 'Unlink "node0006"[1]'
ready 31 || bad "node0006 does not go down"
sim 'Relink "node0006"[1]'
ready 32 || bad "node0006 is not up again"
rowmap >rows5.txt
check "a port down and up keeps its row, and every other port its own" cmp -s rows1.txt rows5.txt

# 4. Nagios, by name: one cable and one endport, the command lines of
# deploy/nagios/ibwatch.cfg.
cfg=$top/deploy/nagios/ibwatch.cfg
nagios() { # COMMAND_NAME ROW
	local cl
	cl=$(awk -v c="$1" '$1 == "command_name" && $2 == c { f = 1 } f && $1 == "command_line" { sub(/^ *command_line */, ""); print; exit }' "$cfg")
	cl=${cl//\$USER1\$//usr/lib/nagios/plugins}
	cl=${cl//\$HOSTADDRESS\$/127.0.0.1 -p $snmp_port}
	cl=${cl//\$ARG1\$/public}
	cl=${cl//\$ARG2\$/$2}
	pkg sh -c "$cl"
}
# wait_nagios COMMAND ROW RC: until the plugin exits RC (20 s at most),
# its output in $out
wait_nagios() {
	for _ in $(seq 1 100); do
		out=$(nagios "$1" "$2")
		rc=$?
		[ $rc = "$3" ] && return 0
		sleep 0.2
	done
	return 1
}
# node0003's cable: its row is the lower end's
read -r lg lp < <(jq -r '.links[] | select(.ends[0].name == "node0003 HCA-1" or .ends[1].name == "node0003 HCA-1") | "\(.ends[0].guid) \(.ends[0].port)"' links.json)
crow=$(pkg snmpget -Oqv "${A[@]}" "IBWATCH-MIB::ibwPortLookupIndex.'$lg'.$lp" 2>&1)
g3=$(jq -r '.[] | select(.node_name == "node0003 HCA-1") | .node_guid' ports.json)
erow=$(pkg snmpget -Oqv "${A[@]}" "IBWATCH-MIB::ibwPortLookupIndex.'$g3'.1" 2>&1)
check "node0003's cable (row $crow) and endport (row $erow) found by their GUIDs" \
	grep -qx '[0-9][0-9]*' <<<"$crow$erow"
wait_nagios check_ibwatch_cable "$crow" 0
check "check_ibwatch_cable: OK while the cable is ok ($out)" [ $rc = 0 ]
wait_nagios check_ibwatch_endport "$erow" 0
check "check_ibwatch_endport: OK while it answers ($out)" [ $rc = 0 ]
sim 'PerformanceSet "node0003"[1] PortCounters.SymbolErrorCounter=2000'
wait_nagios check_ibwatch_cable "$crow" 1
check "check_ibwatch_cable: WARNING with symbol errors over the day's threshold ($out)" [ $rc = 1 ]
sim 'Unlink "node0003"[1]'
wait_nagios check_ibwatch_cable "$crow" 2
check "check_ibwatch_cable: CRITICAL once it is unlinked ($out)" [ $rc = 2 ]
wait_nagios check_ibwatch_endport "$erow" 2
check "check_ibwatch_endport: CRITICAL, the endport down ($out)" [ $rc = 2 ]
sim 'Relink "node0003"[1]'
check "the agent ran throughout and stops cleanly" stopped_clean "$agent"
finish
