#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The congestion counters (PortXmitConCtrl, PortRcvConCtrl,
# SwPortVLCongestion, PortSLRcvFECN, PortSLRcvBECN, PortVLXmitTimeCong)
# on a 16-host fat tree under the kernel and fabric model: node0003 and
# leaf01 say in PortSamplesControl:OptionMask that they have them
# (tests/preload/km_fec.h, the cong file) and serve values the test sets;
# no other node does. perfquery's options are the reference: every field
# of every port read equals them; nodes that do not advertise them are
# never asked (the sweep's MADs with and without the two nodes differ by
# exactly their ports' six reads, and no read times out); totals go on
# across a clearing and a restart; /metrics has them.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}" "${IBW_KMODEL:?}"

on_fattree congestion 16
trap stop_started EXIT

check "the model is loaded, with its state directory" \
	[ -d "${IBW_KM_STATE_DIR:-/nonexistent}" ]
congf=$IBW_KM_STATE_DIR/cong
l3=$(lid_of node0003)
lsw=$(at node0001 ibswitches | awk '/"leaf01"/ { print $(NF - 2) }')
nsw=$(at node0001 ibswitches | awk '/"leaf01"/ { print $5 }')
check "LIDs of node0003 ($l3) and leaf01 ($lsw, $nsw ports)" \
	eval '[ -n "$l3" ] && [ -n "$lsw" ] && [ -n "$nsw" ]'

# cong_file XMIT: the two nodes, node0003's PortXmitTimeCong as given
cong_file() {
	cat >"$congf.tmp" <<EOF
$l3 1 PortXmitTimeCong=$1 PortPktRcvFECN=55 PortPktRcvBECN=66 PortSLRcvFECN0=7 PortSLRcvFECN3=8 PortSLRcvBECN1=9 PortVLXmitTimeCong0=100 PortVLXmitTimeCong14=200
$lsw 1 SWPortVLCongestion0=11 SWPortVLCongestion2=22 PortXmitTimeCong=999 PortSLRcvBECN15=4
EOF
	mv "$congf.tmp" "$congf"
	sleep 0.2 # the model looks at the file every 0.1 s
}

agent_up() { # start an agent that sweeps every second; U its address
	start_agent node0001 "$@" --no-ping --no-snmp --counter-interval 1 \
		--counter-full-speed
	U=http://127.0.0.1:$P
}

# 1. Without the file: nobody advertises them, nobody is asked.
rm -f "$congf"
agent_up --no-state-file
check "an agent without congestion counters listens" [ -n "${P:-}" ]
wait_counter_sweeps 3
mads0=$(curl -s -m 5 "$U/api/v1/status" | jq '.sweeps.counters.mads')
check "no port has congestion counters" \
	eval '[ "$(curl -s -m 5 "$U/api/v1/ports" | jq "[.[] | select(.counters.congestion != null)] | length")" = 0 ]'
check "the agent stops cleanly" stopped_clean "$agent"

# 2. The two nodes advertise them.
cong_file 1234
agent_up --state-file "$PWD/cong.state"
wait_counter_sweeps 3
st=$(curl -s -m 5 "$U/api/v1/status")
mads1=$(jq '.sweeps.counters.mads' <<<"$st")
check "the sweep asks exactly six more per port of the two nodes (1 + $nsw ports): $mads0 -> $mads1" \
	[ $((mads1 - mads0)) = $((6 * (1 + nsw))) ]
check "... and none times out ($(jq -c .sweeps.counters <<<"$st"))" \
	jq -e '.sweeps.counters.timeouts == 0' <<<"$st"
curl -s -m 5 "$U/api/v1/ports" >ports.json
curl -s -m 5 "$U/api/v1/nodes" >nodes.json
# "lid port name=value ..." of ours, names sorted; a switch port is
# reached at its switch's LID
jq -r --slurpfile n nodes.json '($n[0] | map({(.guid): .lid}) | add) as $lid |
	.[] | select(.counters.congestion != null) |
	"\(if .lid > 0 then .lid else $lid[.node_guid] end) \(.port) " +
	(.counters.congestion.raw | to_entries |
	map("\(.key)=\(.value)") | sort | join(" "))' ports.json >ours.txt
check "congestion counters on node0003's port and leaf01's $nsw ports only" \
	eval "[ \$(wc -l <ours.txt) = $((1 + nsw)) ] &&
		[ \$(grep -c -v -e '^$l3 1 ' -e '^$lsw ' ours.txt) = 0 ]"
same=1
while read -r lid port vals; do
	ref=""
	for o in --xmitcc --rcvcc --slrcvfecn --slrcvbecn --vlxmittimecc --swportvlcong; do
		ref="$ref $(at node0001 perfquery $o "$lid" "$port" 2>/dev/null |
			sed -n 's/^\([A-Za-z0-9]*\):\.*\([0-9]*\)$/\1=\2/p' |
			grep -v -e '^PortSelect=' -e '^CounterSelect=' | tr '\n' ' ')"
	done
	ref=$(tr ' ' '\n' <<<"$ref" | grep . | sort | tr '\n' ' ')
	if [ "${ref% }" != "$vals" ]; then
		same=0
		echo "# lid $lid port $port: ours $vals"
		echo "#   perfquery: $ref"
	fi
done <ours.txt
check "every field equals perfquery --xmitcc, --rcvcc, --slrcvfecn, --slrcvbecn, --vlxmittimecc and --swportvlcong" \
	[ "$same" = 1 ]
check "node0003: the values set" \
	grep -q "^$l3 1 .*PortPktRcvFECN=55 .*PortSLRcvFECN3=8 .*PortVLXmitTimeCong14=200 .*PortXmitTimeCong=1234" ours.txt

# 3. Totals across a clearing, in /metrics, across a restart.
c3() { curl -s -m 5 "$U/api/v1/ports" |
	jq -c --argjson l "$l3" '.[] | select(.lid == $l and .port == 1) | .counters.congestion'; }
cong_file 1500
wait_counter_sweeps 2
check "266 more: total 1500" eval '[ "$(c3 | jq .totals.PortXmitTimeCong)" = 1500 ]'
cong_file 20
wait_counter_sweeps 2
c=$(c3)
check "cleared, then 20: total 1520, raw 20, one reset" \
	jq -e '.totals.PortXmitTimeCong == 1520 and .raw.PortXmitTimeCong == 20 and .resets == 1' <<<"$c"
# an HCA port's series are named by its port GUID (issue 36)
g3=$(jq -r --argjson l "$l3" '.[] | select(.lid == $l) | .guid' ports.json)
metrics_of "$U" >m.txt
check "/metrics: node0003's PortXmitTimeCong (1520), FECN by SL summed (15), VL time summed (300)" \
	eval "grep -qx 'ibwatch_hca_port_xmit_time_cong_total{guid=\"$g3\",port=\"1\"} 1520' m.txt &&
		grep -qx 'ibwatch_hca_port_sl_rcv_fecn_total{guid=\"$g3\",port=\"1\"} 15' m.txt &&
		grep -qx 'ibwatch_hca_port_vl_xmit_time_cong_total{guid=\"$g3\",port=\"1\"} 300' m.txt"
check "promtool check metrics takes it" \
	eval "grep -v '^ibwatch_build_info' m.txt | promtool check metrics >promtool.out 2>&1 || ! grep -qi 'error' promtool.out"
check "the agent stops cleanly" stopped_clean "$agent"
agent_up --state-file "$PWD/cong.state"
wait_counter_sweeps 3
check "after a restart node0003's PortXmitTimeCong is still 1520" \
	eval '[ "$(c3 | jq .totals.PortXmitTimeCong)" = 1520 ]'
check "the agent stops cleanly again" stopped_clean "$agent"
finish
