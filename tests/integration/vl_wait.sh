#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# PortVLXmitWaitCounters on an 8-host fat tree against perfquery
# --vlxmitcounters: ibsim's PMAs advertise PortXmitWait (PerfMgt
# ClassPortInfo bit 12) on every node, so every port's sixteen per-VL
# values are read; non-zero values set with PerformanceSet on a switch
# port and a host port (VLs 0, 3, 15 and 1, 7), and the zeros of every
# other port, equal perfquery's, read right after; and the link view
# of a running agent turns them into per-VL wait ratios. Nodes that do not
# advertise the bit, and nodes that answer with a status error, are in
# tests/unit/test_counters.c (a fake PMA that counts what it is asked).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree vl_wait 8
trap stop_started EXIT

pre() { LD_PRELOAD=$IBW_SIM_PRELOAD "$@"; }

sim 'PerformanceSet "leaf01"[3] PortVLXmitWaitCounters.PortVLXmitWaitCounters0=1234'
sim 'PerformanceSet "leaf01"[3] PortVLXmitWaitCounters.PortVLXmitWaitCounters3=40000'
sim 'PerformanceSet "leaf01"[3] PortVLXmitWaitCounters.PortVLXmitWaitCounters15=65535'
sim 'PerformanceSet "node0005"[1] PortVLXmitWaitCounters.PortVLXmitWaitCounters1=77'
sim 'PerformanceSet "node0005"[1] PortVLXmitWaitCounters.PortVLXmitWaitCounters7=9'

pre "$IBWATCHD" --once --full --no-state-file --no-ping >a.json 2>a.err
check "--once runs" [ -s a.json ]

# "name lid port v0 .. v15" for every port that has counters
jq -r '.nodes[] | . as $n | .ports[] | select(.counters != null) |
	"\($n.name | gsub(" "; "_")) \($n.lid) \(.port) " +
	([range(16) as $k | .counters.raw["PortVLXmitWait\($k)"] // "none"] |
	 map(tostring) | join(" "))' a.json >ours.txt
nports=$(wc -l <ours.txt)
check "every port of the tree has counters ($nports)" [ "$nports" -ge 40 ]
check "every port has its sixteen per-VL values" \
	eval '! grep -q none ours.txt'

same=1 nonzero=0
while read -r name lid port vals; do
	ref=$(pre perfquery --vlxmitcounters "$lid" "$port" |
		sed -n 's/^PortVLXmitWait\([0-9]*\):\.*\([0-9]*\)$/\1 \2/p' |
		sort -n | awk '{printf "%s%s", sep, $2; sep = " "}')
	if [ "$ref" != "$vals" ]; then
		same=0
		echo "# $name port $port: ours $vals, perfquery $ref"
	fi
	[ "$vals" != "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0" ] &&
		nonzero=$((nonzero + 1))
done <ours.txt
check "per-VL values equal perfquery --vlxmitcounters on all $nports ports" \
	[ "$same" = 1 ]
check "the two ports set are the only non-zero ones" [ "$nonzero" = 2 ]
check "leaf01 port 3: VL0 1234, VL3 40000, VL15 65535" \
	grep -qx 'leaf01 [0-9]* 3 1234 0 0 40000 0 0 0 0 0 0 0 0 0 0 0 65535' ours.txt
check "node0005 port 1: VL1 77, VL7 9" \
	grep -qx 'node0005_HCA-1 [0-9]* 1 0 77 0 0 0 0 0 9 0 0 0 0 0 0 0 0' ours.txt
check "totals equal the first reading" \
	jq -e '[.nodes[] | select(.name == "leaf01") | .ports[] |
		select(.port == 3) | .counters.vl_xmit_wait] ==
		[[1234,0,0,40000,0,0,0,0,0,0,0,0,0,0,0,65535]]' a.json

# 2. Into the link view: an agent sweeping every second gives per-VL
# wait ratios from its second reading on; 50,000 more ticks on VL0 of
# leaf01 port 3 show there alone, in the sweep that read them.
start_agent node0001 --no-state-file --no-ping --no-snmp --counter-interval 1
check "the agent listens" [ -n "${P:-}" ]
U=http://127.0.0.1:$P
check "two counter sweeps" wait_counter_sweeps 2
sim 'PerformanceSet "leaf01"[3] PortVLXmitWaitCounters.PortVLXmitWaitCounters0=51234'
# The ratio is the last sweep's: look after each sweep, five at most
# (the one under way may have read leaf01 before the change).
gl=$(jq -r '.nodes[] | select(.name == "leaf01") | .guid' a.json)
for _ in 1 2 3 4 5; do
	wait_counter_sweeps 1 || break
	curl -s -m 5 "$U/api/v1/links/$gl/3" >l3.json
	jq -e '.ends[] | select(.name == "leaf01") | .vl_xmit_wait_ratio."0" > 0' l3.json >/dev/null 2>&1 && break
done
end_vl() { jq -c --arg n "$1" '.ends[] | select(.name == $n) | .vl_xmit_wait_ratio' l3.json; }
check "leaf01's end of its port 3 link: VL0 waited (ratio $(end_vl leaf01 | jq '."0"')), the 14 other VLs not, and VL15 (stuck at 65535) has no ratio" \
	jq -e '.ends[] | select(.name == "leaf01") | .vl_xmit_wait_ratio |
		length == 15 and (has("15") | not) and ."0" > 0 and ."0" < 1 and
		([to_entries[] | select(.key != "0") | .value] | all(. == 0))' l3.json
check "the other end's ratios are all 0" \
	jq -e '.ends[] | select(.name != "leaf01") | .vl_xmit_wait_ratio |
		length == 16 and all(.[]; . == 0)' l3.json

# 3. The tick: ibsim has no PortSamplesControl, which the IBA makes
# mandatory for a PMA; the kernel model answers it as a PMA with no
# sampling under way does (Tick 0; docs/testing.md), so perfquery -c
# works and every end's wait is timed with the Tick read, the SM's node
# (node0008) too: the model answers for it before ibsim would hand the
# request to opensm, as its PMA would on hardware. A non-zero Tick is in
# tests/unit/test_counters.c.
check "perfquery -c (PortSamplesControl) answers under the model" \
	eval 'pre perfquery -c "$(jq -r '"'"'.nodes[] | select(.name == "leaf01") | .lid'"'"' a.json)" 1 >psc.out 2>&1'
for _ in $(seq 1 50); do
	curl -s -m 5 "$U/api/v1/links" >all.json
	jq -e '[.links[].ends[]] | all(.tick_source == "read")' all.json \
		>/dev/null && break
	sleep 0.2
done
check "every end, the SM node's (node0008) too: tick_source read, tick 0" \
	jq -e '[.links[].ends[]] | length > 0 and
		any(.name | startswith("node0008")) and
		all(.tick_source == "read" and .tick == 0)' all.json
check "opensm still answers (sminfo)" pre sminfo

finish
