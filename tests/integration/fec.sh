#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# PortExtendedSpeedsCounters on a 16-host fat tree under the kernel and
# fabric model, whose FEC ports (tests/preload/km_fec.h) serve them: a
# host port in the FC-FEC form, a host port with RS-FEC and a switch port
# with RS-FEC2 active, with values the test sets and changes; every other
# port (ibsim says IsExtendedSpeedsSupported everywhere) answers zeros.
# perfquery -T is the reference: every field of every port equals it, in
# the layout it chooses; totals go on across a reset and a restart (the
# state file); /metrics has the port totals and one series per active
# lane; a PMA that drops the attribute (IBW_KM_PESC=0, as ibsim) is asked
# in three sweeps and then no more.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}" "${IBW_KMODEL:?}"

on_fattree fec 16
trap stop_started EXIT

check "the model is loaded, with its state directory" \
	[ -d "${IBW_KM_STATE_DIR:-/nonexistent}" ]
fecf=$IBW_KM_STATE_DIR/fec
l3=$(lid_of node0003)
l5=$(lid_of node0005)
lsw=$(at node0001 ibswitches | awk '/"leaf01"/ { print $(NF - 2) }')
check "LIDs of node0003 ($l3), node0005 ($l5) and leaf01 ($lsw)" \
	eval '[ -n "$l3" ] && [ -n "$l5" ] && [ -n "$lsw" ]'

# fec_file LANE0_BLOCKS: the three ports, node0003's lane 0 corrected
# blocks as given
fec_file() {
	cat >"$fecf.tmp" <<EOF
$l3 1 fc SyncHeaderErrorCounter=3 UnknownBlockCounter=4 ErrorDetectionCounterLane0=5 FECCorrectableBlockCtrLane0=$1 FECCorrectableBlockCtrLane3=77 FECUncorrectableBlockCtrLane1=2
$l5 1 rs FECCorrectableSymbolCtrLane0=12345 FECCorrectableSymbolCtrLane2=9 PortFECCorrectableBlockCtr=500 PortFECUncorrectableBlockCtr=1 PortFECCorrectedSymbolCtr=12354
$lsw 1 rs2 FECCorrectableSymbolCtrLane1=42 PortFECCorrectedSymbolCtr=42
EOF
	mv "$fecf.tmp" "$fecf"
	sleep 0.2 # the model looks at the file every 0.1 s
}
fec_file 1000

# 1. --once: every port that has FEC counters, against perfquery -T.
at node0001 "$IBWATCHD" --once --full --no-state-file --no-ping >a.json 2>a.err
check "--once runs" [ -s a.json ]
# "lid port layout name=value ..." of ours, names sorted
jq -r '.nodes[] | . as $n | .ports[] | select(.counters.fec != null) |
	"\(if $n.type == "switch" then $n.lid else .lid end) \(.port) \(.counters.fec.layout) " +
	(.counters.fec.raw | to_entries | map("\(.key)=\(.value)") | sort | join(" "))' \
	a.json >ours.txt
nports=$(wc -l <ours.txt)
check "FEC counters on every port with its link up ($nports)" [ "$nports" -ge 40 ]
same=1
while read -r lid port layout vals; do
	out=$(at node0001 perfquery -T "$lid" "$port")
	ref=$(sed -n 's/^\([A-Za-z0-9]*\):\.*\([0-9]*\)$/\1=\2/p' <<<"$out" |
		grep -v -e '^PortSelect=' -e '^CounterSelect=' | sort | tr '\n' ' ')
	rl=fc
	grep -q 'RS-FEC Active' <<<"$out" && rl=rs
	if [ "${ref% }" != "$vals" ] || [ "$rl" != "$layout" ]; then
		same=0
		echo "# lid $lid port $port: ours $layout $vals"
		echo "#   perfquery -T: $rl $ref"
	fi
done <ours.txt
check "every field of all $nports ports equals perfquery -T, in its layout" [ "$same" = 1 ]
check "node0003: the FC-FEC form with the values set" \
	grep -q "^$l3 1 fc .*FECCorrectableBlockCtrLane0=1000 .*FECCorrectableBlockCtrLane3=77 .*FECUncorrectableBlockCtrLane1=2 " ours.txt
check "node0005: the RS-FEC form with the values set" \
	grep -q "^$l5 1 rs .*PortFECCorrectedSymbolCtr=12354 PortFECUncorrectableBlockCtr=1 " ours.txt
check "leaf01 port 1: RS-FEC2 read in the RS-FEC form" \
	grep -q "^$lsw 1 rs .*FECCorrectableSymbolCtrLane1=42 " ours.txt
check "the other ports: all zero, FC-FEC" \
	eval "[ \$(grep -v -e '^$l3 1 ' -e '^$l5 1 ' -e '^$lsw 1 ' ours.txt | grep -c '=[1-9]') = 0 ]"
check "the sweep had no timeouts" jq -e '.status.sweeps.counters.timeouts == 0' a.json

# 2. A running agent: totals across a reset, and /metrics.
start_agent node0001 --state-file "$PWD/fec.state" --no-ping --no-snmp \
	--counter-interval 1 --counter-full-speed
check "the agent listens" [ -n "${P:-}" ]
U=http://127.0.0.1:$P
fec3() { # node0003 port 1's "fec" object
	curl -s -m 5 "$U/api/v1/ports" |
		jq -c --argjson l "$l3" '.[] | select(.lid == $l and .port == 1) | .counters.fec'
}
check "two counter sweeps" wait_counter_sweeps 2
check "node0003 lane 0: total 1000, as read" \
	eval '[ "$(fec3 | jq .totals.FECCorrectableBlockCtrLane0)" = 1000 ]'
fec_file 1500
wait_counter_sweeps 2
check "500 more: total 1500" \
	eval '[ "$(fec3 | jq .totals.FECCorrectableBlockCtrLane0)" = 1500 ]'
fec_file 20 # cleared, and 20 since
wait_counter_sweeps 2
f=$(fec3)
check "cleared, then 20 more: total 1520, raw 20, one reset ($f)" \
	jq -e '.totals.FECCorrectableBlockCtrLane0 == 1520 and
		.raw.FECCorrectableBlockCtrLane0 == 20 and .resets == 1' <<<"$f"
check "... and raw equals perfquery -T now" \
	eval "at node0001 perfquery -T $l3 1 | grep -qx 'FECCorrectableBlockCtrLane0:\.*20'"
# an HCA port's series are named by its port GUID (issue 36)
g3=$(curl -s -m 5 "$U/api/v1/ports" | jq -r --argjson l "$l3" '.[] | select(.lid == $l) | .guid')
metrics_of "$U" >m.txt
check "/metrics: node0003's corrected blocks over its lanes (1520 + 77)" \
	grep -qx "ibwatch_hca_port_fec_corrected_blocks_total{guid=\"$g3\",port=\"1\"} 1597" m.txt
check "... its uncorrectable blocks (2)" \
	grep -qx "ibwatch_hca_port_fec_uncorrectable_blocks_total{guid=\"$g3\",port=\"1\"} 2" m.txt
check "... one series per active lane (4x: lanes 0-3), lane 0 1520" \
	eval "[ \$(grep -c '^ibwatch_hca_port_fec_lane_corrected_total{guid=\"$g3\",port=\"1\",' m.txt) = 4 ] &&
		grep -qx 'ibwatch_hca_port_fec_lane_corrected_total{guid=\"$g3\",port=\"1\",lane=\"0\",layout=\"fc\"} 1520' m.txt"
check "... RS-FEC corrected symbols of node0005 (12354) and leaf01 port 1 (42)" \
	eval "grep -q '^ibwatch_hca_port_fec_corrected_symbols_total{.*,port=\"1\"} 12354\$' m.txt &&
		grep -q '^ibwatch_switch_port_fec_corrected_symbols_total{.*,port=\"1\"} 42\$' m.txt"
# on(guid,port) with infiniband_hca_uplink_info keeps every HCA FEC row
join_fec() {
	awk 'function key(l, g, p) {
		g = l; sub(/^[^{]*\{guid="/, "", g); sub(/".*/, "", g)
		p = l; sub(/.*[{,]port="/, "", p); sub(/".*/, "", p)
		return g " " p
	}
	/^infiniband_hca_uplink_info\{/ { up[key($0)] = 1; next }
	/^ibwatch_hca_port_fec_/ { fec[++n] = $0 }
	END {
		for (i = 1; i <= n; i++)
			if (!(key(fec[i]) in up)) { print "no uplink: " fec[i]; bad++ }
		exit !(n > 0 && !bad)
	}' m.txt
}
check "... every HCA FEC row's guid/port is in infiniband_hca_uplink_info" join_fec
check "promtool check metrics takes it" \
	eval "grep -v '^ibwatch_build_info' m.txt | promtool check metrics >promtool.out 2>&1 || ! grep -qi 'error' promtool.out"
check "the agent stops cleanly" stopped_clean "$agent"

# 3. The totals survive a restart (the state file).
start_agent node0001 --state-file "$PWD/fec.state" --no-ping --no-snmp \
	--counter-interval 1 --counter-full-speed
U=http://127.0.0.1:$P
wait_counter_sweeps 2
check "after a restart node0003 lane 0 is still 1520" \
	eval '[ "$(fec3 | jq .totals.FECCorrectableBlockCtrLane0)" = 1520 ]'
check "the agent stops cleanly again" stopped_clean "$agent"

# 4. A PMA that advertises the attribute and drops it, as ibsim's does:
# asked in three sweeps, then no more; the listed ports still answer.
export IBW_KM_PESC=0
start_agent node0001 --no-state-file --no-ping --no-snmp \
	--counter-interval 1 --counter-full-speed
unset IBW_KM_PESC
U=http://127.0.0.1:$P
wait_counter_sweeps 5
st=$(curl -s -m 5 "$U/api/v1/status")
check "IBW_KM_PESC=0: after three sweeps no more timeouts ($(jq -c .sweeps.counters <<<"$st"))" \
	jq -e '.sweeps.counters.timeouts == 0' <<<"$st"
check "... and node0003's counters are still read" \
	eval '[ "$(fec3 | jq .totals.FECCorrectableBlockCtrLane0)" = 20 ]'
check "the agent stops cleanly at the end" stopped_clean "$agent"
finish
