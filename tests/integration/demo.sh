#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# deploy/demo.sh as a user runs it: it brings up the fabric and the agent,
# prints commands that work, and `demo.sh stop` ends exactly what it
# started.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/tap.sh"
export IBW_DEMO_DIR=${IBW_TEST_WORK:-$PWD/test-work}/demo
export IBW_BUILD_DIR=${IBW_BUILD_DIR:-$(dirname "$(dirname "${IBWATCHD:?}")")}
export IBW_DEMO_HTTP=127.0.0.1:$((20000 + RANDOM % 20000))
export IBW_DEMO_SNMP=127.0.0.1:$((20000 + RANDOM % 20000))
running() { [ -n "$(tr -d '\0' 2>/dev/null <"/proc/$1/cmdline")" ]; }

# the demo links the MIBs into ~/.snmp/mibs: a home of the test's own
export HOME=$IBW_DEMO_DIR.home
rm -rf "$HOME"
out=$IBW_DEMO_DIR.out
rm -rf "$IBW_DEMO_DIR" "$out"
"$top/deploy/demo.sh" >"$out" 2>&1 &
demo_pid=$!
trap '"$top/deploy/demo.sh" stop >/dev/null 2>&1; kill "$demo_pid" 2>/dev/null' EXIT
for _ in $(seq 1 600); do
	grep -q '^== running ==' "$out" && break
	kill -0 "$demo_pid" 2>/dev/null || break
	sleep 0.2
done
check "demo comes up" grep -q '^== running ==' "$out"
check "demo prints the agent's JSON" grep -q '"node_description": "node0001 HCA-1"' "$out"
check "demo's JSON shows the whole fabric (116 nodes)" grep -q '"nodes": 116' "$out"
pids="$(cat "$IBW_DEMO_DIR/ibwatchd.pid") $(cat "$IBW_DEMO_DIR/fabric/opensm.pid") $(cat "$IBW_DEMO_DIR/fabric/ibsim.pid") $(cat "$IBW_DEMO_DIR/snmp/snmpd.pid")"

# The first command the demo prints, run as printed.
cmd=$(sed -n '/# the agent.s one-shot view/{n;N;p}' "$out")
json=$(bash -c "$cmd" 2>/dev/null)
check "the printed --once command works" jq -e '.node_description == "node0042 HCA-1"' <<<"$json"
m=$(bash -c "$(grep -m1 'curl -s http.*/metrics' "$out")")
check "the printed metrics command works" grep -q 'infiniband_.*_port_symbol_error_total{' <<<"$m"
p=$(bash -c "$(grep -m1 'api/v1/ports' "$out")")
check "the printed ports command works" jq -e '.lid > 0 and .state == "active"' <<<"$p"
t=$(bash -c "$(grep -m1 'api/v1/trace' "$out")")
check "the printed trace between two named hosts works ($(wc -l <<<"$t") hops)" test "$(head -n1 <<<"$t")" = '[0,"node0002 HCA-1",0,1]' -a "$(tail -n1 <<<"$t" | grep -c node0090)" = 1
q=$(bash -c "$(grep -m1 'api/v1/ping' "$out")")
check "the printed ping command works" jq -e '.received == 3' <<<"$q"
# The printed snmpwalk by name: 96 endports, up (the subagent may need a
# moment to register and to see them).
w=""
for _ in $(seq 1 50); do
	w=$(bash -c "$(grep -m1 'snmpwalk .*IBWATCH-MIB' "$out")" 2>&1)
	grep -q 'ibwEndportState.* = INTEGER: up(1)' <<<"$w" && break
	sleep 0.2
done
check "the printed snmpwalk command works ($(head -n1 <<<"$w"))" \
	test "$(grep -c 'IBWATCH-MIB::ibwEndportState.* = INTEGER: up(1)$' <<<"$w")" = 4
check "... by name alone (no -M, no -m)" bash -c "grep -m1 'snmpwalk .*IBWATCH-MIB' '$out' | grep -qv -- ' -[mM] '"
t=$(bash -c "$(grep -m1 'snmptable .*ibwLinkTable' "$out")" 2>&1)
check "the printed snmptable of the cables works ($(sed -n 3p <<<"$t" | cut -c1-60))" \
	test "$(head -n1 <<<"$t")" = "SNMP table: IBWATCH-MIB::ibwLinkTable" -a "$(wc -l <<<"$t")" = 8
l=$(bash -c "$(grep -m1 'snmpget .*ibwPortLookupIndex' "$out")" 2>&1)
check "the printed look-up of node0002's port by its GUID works ($l)" \
	grep -q "^IBWATCH-MIB::ibwPortLookupIndex.'0x[0-9a-f]\{16\}'.1 = Gauge32: [0-9]" <<<"$l"
n=$(bash -c "$(grep -m1 'snmpbulkwalk ' "$out")" 2>&1)
check "the printed snmpbulkwalk of the subtree works ($n objects)" test "$n" -gt 10000
reply=$(bash -c "$(grep -m1 "cmd .*Unlink" "$out")")
check "the printed console command works" [ -n "$reply" ]
gone=0
for _ in $(seq 1 100); do
	grep -q 'event: node_gone' "$IBW_DEMO_DIR/ibwatchd.log" && { gone=1; break; }
	sleep 0.2
done
check "the agent logs the unlinked host as gone" [ $gone = 1 ]

"$top/deploy/demo.sh" stop >/dev/null
for _ in $(seq 1 100); do kill -0 "$demo_pid" 2>/dev/null || break; sleep 0.1; done
wait "$demo_pid"; rc=$?
check "demo exits 0 after stop" [ $rc = 0 ]
alive=0
for p in $pids; do running "$p" && alive=1; done
check "stop ends the agent, snmpd, opensm and ibsim" [ $alive = 0 ]
check "... and takes the MIB links away ($(ls "$HOME/.snmp/mibs" 2>/dev/null | xargs))" \
	test -z "$(ls "$HOME/.snmp/mibs" 2>/dev/null)"

finish
