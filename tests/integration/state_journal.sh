#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The state file's journal (issue 37, point 3) against kill -9, on the
# 16-host fat tree under the kernel model's driven counters (the `pc`
# file, docs/testing.md):
#  - node0003's PortXmitWait (32 bits) at 2.5e8/s, cleared by the agent
#    at three quarters of its range (every 13 s; full 4 s later, which
#    bounds a restart's time), its SymbolErrorCounter
#    (16 bits) at 1,000/s; node0005's 64-bit error counters ("x") with
#    SymbolErrorCounter at 8,000/s and its PortXmitData at 5e7 words/s
#    (in 32 bits it would saturate after 86 s, a change of flags)
#    (VL15Dropped, PortXmitWait and QP1Dropped listed at 0: unlisted,
#    the model's extended answers carry values in them that jump about,
#    which the agent takes for resets);
#  - the agent (1 s sweeps, state-interval 3 s) is killed with SIGKILL
#    three times at a random moment and started again from its state
#    file each time;
#  - a port whose counters only grow is never written to the journal,
#    one whose counters are cleared is;
#  - at the end every total equals what the model drove up to the time
#    of its reading (but for what counted between a reading and a
#    clear, as in counter_saturation), no clear is lost or taken for a
#    reset, and node0005's 1 h window holds every symbol error counted
#    since the first run's first reading (the journal's bases and
#    buckets agree: the time since the last batch lands in the
#    restart's bucket, nothing is lost).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}" "${IBW_KMODEL:?}"

on_fattree state_journal 16
trap stop_started EXIT

check "the model is loaded, with its state directory" \
	[ -d "${IBW_KM_STATE_DIR:-/nonexistent}" ]
pcf=$IBW_KM_STATE_DIR/pc
clrf=$IBW_KM_STATE_DIR/clears
l3=$(lid_of node0003)
l5=$(lid_of node0005)
check "LIDs of node0003 ($l3) and node0005 ($l5)" eval '[ -n "$l3" ] && [ -n "$l5" ]'

rw=250000000 rs3=1000 rs5=8000 rd=50000000
t0=$(date +%s)
cat >"$pcf.tmp" <<EOF
$l3 1 SymbolErrorCounter=0+$rs3 PortXmitWait=0+$rw t0=$t0
$l5 1 x SymbolErrorCounter=0+$rs5 PortXmitData=0+$rd VL15Dropped=0 PortXmitWait=0 QP1Dropped=0 t0=$t0
EOF
mv "$pcf.tmp" "$pcf"
sleep 0.2 # the model looks at the file every 0.1 s

state=$PWD/counters.state
ARGS=(--no-snmp --no-ping --state-file "$state" --state-interval 3
	--counter-interval 1 --counter-full-speed --counter-align interval)
port() { jq -c --argjson l "$1" '.[] | select(.lid == $l and .port == 1)' ports.json; }
start_agent node0001 "${ARGS[@]}" || { echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
check "two counter sweeps" wait_counter_sweeps 2
curl -s -m 5 "$U/api/v1/ports" >ports.json
first5=$(port "$l5" | jq '.counters.totals.symbol_errors')
check "node0005's first total ($first5)" [ -n "$first5" ]
check "a snapshot written, its journal beside it" \
	eval '[ -s "$state" ] && [ -e "$state.journal" ]'
check "the snapshot is version 4, with its generation" \
	grep -qE '^ibwatch-counters 4 [0-9a-f]{16}$' <(head -1 "$state")

# the state file keys ports by node GUID
g5=$(port "$l5" | jq -r .node_guid)
g3=$(port "$l3" | jq -r .node_guid)

restored=0
for k in 1 2 3; do
	# a random moment: 2 to 9 s into the run, sweeps and writes going on
	sleep "$((2 + RANDOM % 7)).$((RANDOM % 10))"
	kill -KILL "$agent"
	wait "$agent" 2>/dev/null
	cp "$state" "state-$k"
	cp "$state.journal" "journal-$k"
	p3n=$((${p3n:-0} + $(grep -c "^p $g3 1 " "$state.journal")))
	p5n=$((${p5n:-0} + $(grep -c "^p $g5 1 " "$state.journal")))
	echo "# kill $k: snapshot $(stat -c %s "$state") bytes, journal $(stat -c %s "$state.journal") bytes ($(grep -c '^batch ' "$state.journal") batches)"
	start_agent node0001 "${ARGS[@]}" || { echo "not ok - the agent does not start again"; exit 1; }
	U=http://127.0.0.1:$P
	grep -q "restored from $state and [0-9]* batches of its journal" "agent-$P.log" &&
		restored=$((restored + 1))
	grep "restored from" "agent-$P.log" | sed 's/^/# /'
	wait_counter_sweeps 2
done
check "each start restored the totals from the snapshot and its journal ($restored of 3)" \
	[ "$restored" = 3 ]
# past a window batch since the last start's snapshot (state-interval 3)
wait_counter_sweeps 5
curl -s -m 5 "$U/api/v1/links" >links.json
curl -s -m 5 "$U/api/v1/ports" >ports.json
curl -s -m 5 "$U/api/v1/status" >status.json
jq -c .state_file status.json | sed 's/^/# state_file: /'
check "the status counts the state file's writes (a snapshot at the start, batches since)" \
	jq -e '.state_file | .snapshots == 1 and .batches >= 1 and
		.bytes_written == .snapshot_bytes + .batch_bytes and .error == null' status.json

# truth RATE UPDATED: what the model drove up to the time of a reading
truth() { awk -v r="$1" -v s="$(date -d "$2" +%s.%N)" -v t0="$t0" 'BEGIN { printf "%.0f", r * (s - t0) }'; }
p3=$(port "$l3")
p5=$(port "$l5")
read -r u3 xw3 se3 cl3 rs3x <<<"$(jq -r '.counters | "\(.updated) \(.totals.transmit_wait) \(.totals.symbol_errors) \(.clears) \(.resets)"' <<<"$p3")"
read -r u5 se5 xd5 rs5x <<<"$(jq -r '.counters | "\(.updated) \(.totals.symbol_errors) \(.totals.transmit_data_bytes) \(.resets)"' <<<"$p5")"
tw3=$(truth $rw "$u3") ts3=$(truth $rs3 "$u3") ts5=$(truth $rs5 "$u5") td5=$(truth $((4 * rd)) "$u5")
seen=$(grep -c "^$l3 1 pc " "$clrf" 2>/dev/null || true)
echo "# resets: node0003 $rs3x, node0005 $rs5x"
echo "# node0003: PortXmitWait $xw3 of $tw3, SymbolErrorCounter $se3 of $ts3, clears $cl3 (the model saw $seen since t0)"
echo "# node0005: SymbolErrorCounter $se5 of $ts5, PortXmitData $xd5 of $td5 bytes"
# near TOTAL TRUTH RATE CLEARS: TRUTH less at most 20 ms of RATE per
# clear (counted between a reading and its clear) and the reading's own
# time, never more than TRUTH by over 20 ms of RATE
near() {
	awk -v x="$1" -v y="$2" -v r="$3" -v n="$4" \
		'BEGIN { d = y - x; exit !(d >= -r * 0.02 && d <= r * 0.02 * (n + 1)) }'
}
check "node0003: PortXmitWait's total is what was driven ($xw3 of $tw3)" \
	near "$xw3" "$tw3" $rw "$seen"
check "node0003: SymbolErrorCounter's total is what was driven ($se3 of $ts3)" \
	near "$se3" "$ts3" $rs3 "$seen"
check "node0005: SymbolErrorCounter's (64 bits) total is what was driven ($se5 of $ts5)" \
	near "$se5" "$ts5" $rs5 0
check "node0005: PortXmitData's total is what was driven ($xd5 of $td5)" \
	near "$xd5" "$td5" $((4 * rd)) 0
# A clear the journal lost would make the next reading after a restart
# lower than the one restored: a reset (and a total short by that one).
check "node0003: cleared ($seen times; $cl3 by the last run), none taken for a reset" \
	eval '[ "$seen" -ge 1 ] && [ "$rs3x" = 0 ] && [ "$rs5x" = 0 ]'
# The hour window of node0005's end: every symbol error since the first
# run's first reading (which was a base, not an increment), read up to
# the links' last sweep, which is at most one sweep (8,000) before
# the ports' total.
w5=$(jq '[.links[].ends[] | select(.name == "node0005 HCA-1") | .windows.hour.errors.symbol_errors][0]' links.json)
echo "# node0005's 1 h window: $w5 symbol errors; total $se5, $first5 after the first sweeps"
check "node0005's 1 h window lost nothing over the kills ($w5 >= $se5 - $first5 - 2 sweeps)" \
	eval '[ "$w5" != null ] && [ "$w5" -ge $((se5 - first5 - 2 * rs5)) ] && [ "$w5" -le "$se5" ]'
# Between a start's snapshot and the kill, node0005's counters only
# grew: its port line is never in the journal; node0003's clears are.
check "growing counters write no port line: node0005 $p5n times in the journals at the kills, node0003 $p3n times" \
	eval '[ "$p5n" = 0 ] && [ "$p3n" -ge 1 ]'
finish
