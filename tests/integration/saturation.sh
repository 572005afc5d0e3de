#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Counters past their maximum, as months of a real fabric drive them, on
# a 16-host fat tree under the kernel and fabric model (tests/preload:
# km_pc.h drives PortCounters, km_fec.h the FEC counters, km_clear.h
# shares every PerfSet clear between processes). The judges are perfquery
# at the same LID and the model's own clock.
#
# 1. With the defaults (reset-counters all) and 1 s sweeps, for 55 s:
#    node0003's SymbolErrorCounter (16 bits) at 8,000/s and PortXmitWait
#    (32 bits) at 4e8/s, node0007's PortFECCorrectedSymbolCtr (32 bits,
#    RS-FEC at HDR) at 4e8/s: each driven past five times its range. The
#    64-bit totals equal what was driven, but for what the counter counted
#    between a reading and its clear (measured and printed: a clear is not
#    atomic with the read, on hardware either); every clear the model saw
#    is counted by the agent and none is taken for someone else's reset;
#    the FEC link's raw BER reads above 0 in every window at every look.
#    node0013's PortXmitTimeCong (a congestion counter, 32 bits) at
#    4e8/s likewise. node0005's PMA has 64-bit error counters
#    (CapabilityMask2 bit 1): no clear is ever sent to it, and its
#    totals equal perfquery -x.
#    The SM's node (node0016) has FEC and congestion counters in JSON and
#    /metrics, and --once reads its congestion counters.
# 2. reset-counters never: node0009's SymbolErrorCounter and PortXmitWait
#    and node0011's FEC counter stuck at their maximum while errors flow:
#    nothing is cleared, all are listed as saturated, every window that reaches
#    to now says unknown (null), never 0.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}" "${IBW_KMODEL:?}"

on_fattree saturation 16
trap stop_started EXIT

check "the model is loaded, with its state directory" \
	[ -d "${IBW_KM_STATE_DIR:-/nonexistent}" ]
pcf=$IBW_KM_STATE_DIR/pc
fecf=$IBW_KM_STATE_DIR/fec
congf=$IBW_KM_STATE_DIR/cong
clrf=$IBW_KM_STATE_DIR/clears
l3=$(lid_of node0003)
l5=$(lid_of node0005)
l7=$(lid_of node0007)
l9=$(lid_of node0009)
l11=$(lid_of node0011)
l13=$(lid_of node0013)
lsm=$(lid_of "$IBW_SIM_SM")
check "LIDs of node0003 ($l3), 0005 ($l5), 0007 ($l7), 0009 ($l9), 0011 ($l11), the SM's ($lsm)" \
	eval '[ -n "$l3" ] && [ -n "$l5" ] && [ -n "$l7" ] && [ -n "$l9" ] &&
		[ -n "$l11" ] && [ -n "$l13" ] && [ -n "$lsm" ]'

# pq HOST ARGS...: FIELD=VALUE lines of perfquery's answer; val FIELD
pq() {
	local h=$1
	shift
	at "$h" perfquery "$@" | sed -n 's/^\([A-Za-z0-9]*\):\.*\([0-9x]*\)$/\1=\2/p'
}
val() { sed -n "s/^$1=//p"; }
# port LID: the port record at LID, port 1, from ports.json
port() { jq -c --argjson l "$1" '.[] | select(.lid == $l and .port == 1)' ports.json; }
# clears_seen LID KIND: the clears the model saw go out to LID
clears_seen() { grep -c "^$1 1 $2 " "$clrf" 2>/dev/null || true; }

rs=8000 rw=400000000 rf=400000000 drive=55
t0=$(date +%s)
cat >"$pcf.tmp" <<EOF
$l3 1 SymbolErrorCounter=0+$rs PortXmitWait=0+$rw t0=$t0
$l5 1 x SymbolErrorCounter=0+$rs PortXmitWait=0+$rw t0=$t0
EOF
mv "$pcf.tmp" "$pcf"
cat >"$fecf.tmp" <<EOF
$l7 1 rs speed=HDR PortFECCorrectedSymbolCtr=0+$rf t0=$t0
$lsm 1 rs PortFECCorrectedSymbolCtr=1000+10 t0=$t0
EOF
mv "$fecf.tmp" "$fecf"
cat >"$congf.tmp" <<EOF
$lsm 1 PortXmitTimeCong=777 PortPktRcvFECN=5
$l13 1 PortXmitTimeCong=0+$rf t0=$t0
EOF
mv "$congf.tmp" "$congf"
sleep 0.2 # the model looks at the files every 0.1 s

# --once reads the SM node's congestion and FEC counters in its one
# sweep (PortSamplesControl's OptionMask comes before the ports).
at node0001 "$IBWATCHD" --once --full --no-state-file --no-ping >once.json 2>once.err
check "--once: the SM node's congestion counters (PortXmitTimeCong 777)" \
	jq -e --argjson l "$lsm" '[.nodes[].ports[] | select(.lid == $l and .port == 1) |
		.counters.congestion.raw.PortXmitTimeCong] == [777]' once.json
check "--once: the SM node's FEC counters" \
	jq -e --argjson l "$lsm" '[.nodes[].ports[] | select(.lid == $l and .port == 1) |
		.counters.fec.raw.PortFECCorrectedSymbolCtr >= 1000] == [true]' once.json

start_agent node0001 --no-state-file --no-ping --no-snmp \
	--counter-interval 1 --counter-full-speed
check "the agent listens (reset-counters: the default)" [ -n "${P:-}" ]
U=http://127.0.0.1:$P
check "two counter sweeps" wait_counter_sweeps 2

# While the counters run: the FEC link's raw BER is above 0 in every
# window of node0007's end, every 2 s (after its second reading).
zero=0 looks=0
end=$((t0 + drive))
while [ "$(date +%s)" -lt "$end" ]; do
	sleep 2
	curl -s -m 5 "$U/api/v1/links" >links.json || continue
	e=$(jq -c '.links[].ends[] | select(.name == "node0007 HCA-1") | .fec' links.json)
	looks=$((looks + 1))
	jq -e '[.windows[] | .raw_ber] | length == 4 and all(. != null and . > 0)' \
		<<<"$e" >/dev/null || { zero=$((zero + 1)); echo "# look $looks: $e"; }
done
check "node0007's raw BER above 0 in all four windows at all $looks looks" \
	eval '[ "$looks" -ge 20 ] && [ "$zero" = 0 ]'
jq -c '.links[].ends[] | select(.name == "node0007 HCA-1") |
	{judged_by, fec: .fec.windows["12m"] | {raw_ber, seconds}}' links.json | sed 's/^/# /'

# Freeze node0005's counters (never cleared: a new value is the counter's
# value) and let two sweeps read everything.
sed -i "s/^$l5 1 x .*/$l5 1 x SymbolErrorCounter=987654321 PortXmitWait=98765432109876/" "$pcf"
sleep 0.2
wait_counter_sweeps 2
curl -s -m 5 "$U/api/v1/ports" >ports.json
metrics_of "$U" >m.txt

# node0003: totals against the truth at the time of its reading.
p3=$(port "$l3")
read -r u3 se xw cl rsx <<<"$(jq -r '"\(.counters.updated) \(.counters.totals.symbol_errors) \(.counters.totals.transmit_wait) \(.counters.clears) \(.counters.resets)"' <<<"$p3")"
t=$(awk -v s="$(date -d "$u3" +%s.%N)" -v t0="$t0" 'BEGIN { printf "%.6f", s - t0 }')
truth_s=$(awk -v r=$rs -v t="$t" 'BEGIN { printf "%.0f", r * t }')
truth_w=$(awk -v r=$rw -v t="$t" 'BEGIN { printf "%.0f", r * t }')
seen=$(clears_seen "$l3" pc)
echo "# node0003 read at t0 + ${t}s: SymbolErrorCounter $se of $truth_s driven, PortXmitWait $xw of $truth_w; $cl clears ($seen seen by the model)"
# lost: what counted between a reading and its clear, <= 20 ms a clear,
# and the reading's own time (its answer came before `updated`)
ok_total() { # TOTAL TRUTH RATE
	awk -v x="$1" -v y="$2" -v r="$3" -v n="$cl" \
		'BEGIN { d = y - x; exit !(d >= -r * 0.02 && d <= r * 0.02 * (n + 1)) }'
}
check "node0003: SymbolErrorCounter driven past 5 x 65535 ($truth_s), total $se" \
	eval '[ "$truth_s" -ge $((5 * 65535)) ] && ok_total "$se" "$truth_s" $rs'
check "node0003: PortXmitWait driven past 5 x (2^32 - 1) ($truth_w), total $xw" \
	eval '[ "$truth_w" -ge $((5 * 4294967295)) ] && ok_total "$xw" "$truth_w" $rw'
echo "# lost between a reading and its clear: $((truth_s - se)) symbol errors ($(awk -v a=$((truth_s - se)) -v b="$truth_s" 'BEGIN { printf "%.4f%%", 100 * a / b }')), $((truth_w - xw)) wait ticks ($(awk -v a=$((truth_w - xw)) -v b="$truth_w" 'BEGIN { printf "%.4f%%", 100 * a / b }'))"
check "node0003: every clear the model saw is counted ($cl = $seen, at least 6)" \
	eval '[ "$cl" = "$seen" ] && [ "$cl" -ge 6 ]'
check "node0003: none taken for someone else's reset" [ "$rsx" = 0 ]
check "node0003: neither counter is saturated now" \
	jq -e '.counters.saturated | index("symbol_errors") == null and index("transmit_wait") == null' <<<"$p3"

# node0005: 64-bit error counters, never cleared, equal to perfquery -x.
p5=$(port "$l5")
x=$(pq node0002 -x "$l5" 1)
check "node0005: no clear ever sent to it (the model saw none)" \
	eval '[ "$(clears_seen "$l5" pc)" = 0 ] && jq -e ".counters.clears == 0" <<<"$p5"'
check "node0005: SymbolErrorCounter total = perfquery -x = 987654321" \
	eval '[ "$(jq .counters.totals.symbol_errors <<<"$p5")" = 987654321 ] &&
		[ "$(val SymbolErrorCounter <<<"$x")" = 987654321 ]'
check "node0005: PortXmitWait total = perfquery -x = 98765432109876" \
	eval '[ "$(jq .counters.totals.transmit_wait <<<"$p5")" = 98765432109876 ] &&
		[ "$(val PortXmitWait <<<"$x")" = 98765432109876 ]'
check "... while perfquery (PortCounters) shows them stuck at 65535 and 2^32 - 1" \
	eval '[ "$(pq node0002 "$l5" 1 | grep -e ^SymbolErrorCounter= -e ^PortXmitWait= | tr "\n" " ")" = "SymbolErrorCounter=65535 PortXmitWait=4294967295 " ]'

# node0007: the FEC counter likewise.
f7=$(port "$l7" | jq -c .counters)
read -r fu ft fcl frs <<<"$(jq -r '"\(.updated) \(.fec.totals.PortFECCorrectedSymbolCtr) \(.fec.clears) \(.fec.resets)"' <<<"$f7")"
fs=$(date -d "$fu" +%s.%N)
truth_f=$(awk -v r=$rf -v s="$fs" -v t0="$t0" 'BEGIN { printf "%.0f", r * (s - t0) }')
fseen=$(clears_seen "$l7" fec)
echo "# node0007 PortFECCorrectedSymbolCtr $ft of $truth_f driven; $fcl clears ($fseen seen by the model)"
check "node0007: PortFECCorrectedSymbolCtr driven past 5 x (2^32 - 1), total $ft" \
	eval '[ "$truth_f" -ge $((5 * 4294967295)) ] && cl=$fcl ok_total "$ft" "$truth_f" $rf'
check "node0007: every FEC clear counted ($fcl = $fseen, at least 6), no reset" \
	eval '[ "$fcl" = "$fseen" ] && [ "$fcl" -ge 6 ] && [ "$frs" = 0 ]'

# node0013: a congestion counter (PortXmitTimeCong, 32 bits) likewise.
c13=$(port "$l13" | jq -c .counters)
read -r cu ct ccl crs <<<"$(jq -r '"\(.updated) \(.congestion.totals.PortXmitTimeCong) \(.congestion.clears) \(.congestion.resets)"' <<<"$c13")"
truth_c=$(awk -v r=$rf -v s="$(date -d "$cu" +%s.%N)" -v t0="$t0" 'BEGIN { printf "%.0f", r * (s - t0) }')
cseen=$(clears_seen "$l13" cong)
echo "# node0013 PortXmitTimeCong $ct of $truth_c driven; $ccl clears ($cseen seen by the model)"
check "node0013: PortXmitTimeCong driven past 5 x (2^32 - 1), total $ct" \
	eval '[ "$truth_c" -ge $((5 * 4294967295)) ] && cl=$ccl ok_total "$ct" "$truth_c" $rf'
check "node0013: every congestion clear counted ($ccl = $cseen, at least 6), no reset" \
	eval '[ "$ccl" = "$cseen" ] && [ "$ccl" -ge 6 ] && [ "$crs" = 0 ]'

# The clears in all.
st=$(curl -s -m 5 "$U/api/v1/status")
check "/api/v1/status counts the clears ($(jq -c .sweeps.counter_clears <<<"$st"))" \
	jq -e --argjson a "$cl" --argjson b "$fcl" --argjson c "$ccl" \
		'.sweeps.counter_clears.port_counters >= $a and .sweeps.counter_clears.ext_speeds >= $b and
		.sweeps.counter_clears.congestion >= $c' <<<"$st"
check "/metrics: ibwatch_pma_clears_total for both attributes" \
	eval 'grep -q "^ibwatch_pma_clears_total{attribute=\"PortCounters\"} [1-9]" m.txt &&
		grep -q "^ibwatch_pma_clears_total{attribute=\"PortExtendedSpeedsCounters\"} [1-9]" m.txt'

# The SM's node: FEC and congestion counters, in JSON and /metrics.
psm=$(port "$lsm")
gsm=$(jq -r .guid <<<"$psm")
check "the SM node's port: FEC counters read (no error)" \
	jq -e '.counters.fec.error == null and .counters.fec.raw.PortFECCorrectedSymbolCtr >= 1000' <<<"$psm"
check "... and congestion counters (PortXmitTimeCong 777)" \
	jq -e '.counters.congestion.raw.PortXmitTimeCong == 777' <<<"$psm"
check "/metrics: the SM node's FEC and congestion series" \
	eval 'grep -q "^ibwatch_hca_port_fec_corrected_symbols_total{guid=\"0x[0-9a-f]*\",port=\"1\"} [1-9]" m.txt &&
		grep -q "^ibwatch_hca_port_xmit_time_cong_total{guid=\"0x[0-9a-f]*\",port=\"1\"} 777" m.txt'
echo "# SM node port GUID $gsm"
check "opensm still answers (sminfo)" at node0001 sminfo
stop "$agent"
pids=() # the only process it started so far, stopped

# 2. reset-counters never: counters stuck at their maximum.
t1=$(date +%s)
cat >"$pcf.tmp" <<EOF
$l9 1 SymbolErrorCounter=70000+100 PortXmitWait=4294967295+1000 t0=$t1
EOF
mv "$pcf.tmp" "$pcf"
cat >"$fecf.tmp" <<EOF
$l11 1 rs speed=HDR PortFECCorrectedSymbolCtr=4294967295+1000 t0=$t1
EOF
mv "$fecf.tmp" "$fecf"
sleep 0.2
before=$(wc -l <"$clrf" 2>/dev/null || echo 0)
start_agent node0001 --no-state-file --no-ping --no-snmp --reset-counters never \
	--counter-interval 1 --counter-full-speed
check "an agent with reset-counters never listens" [ -n "${P:-}" ]
U=http://127.0.0.1:$P
check "four counter sweeps" wait_counter_sweeps 4
curl -s -m 5 "$U/api/v1/ports" >ports.json
curl -s -m 5 "$U/api/v1/links" >links.json
check "nothing was cleared" \
	eval '[ "$(wc -l <"$clrf" 2>/dev/null || echo 0)" = "$before" ]'
check "node0009: SymbolErrorCounter saturated (65535)" \
	eval 'port "$l9" | jq -e ".counters.saturated | index(\"symbol_errors\") != null" &&
		[ "$(pq node0002 "$l9" 1 | val SymbolErrorCounter)" = 65535 ]'
e9=$(jq -c '.links[] | select(any(.ends[]; .name == "node0009 HCA-1"))' links.json)
echo "# node0009's link: $(jq -c '{ber, health, e: [.ends[] | {name, hour: .windows.hour.ber, sweep: .windows.sweep.ber}]}' <<<"$e9")"
check "node0009's end: the sweep and hour BER unknown (null), and the link's" \
	jq -e '.ber == null and (.ends[] | select(.name == "node0009 HCA-1") |
		.windows.hour.ber == null and .windows.sweep.ber == null)' <<<"$e9"
check "... its PortXmitWait stuck too: no wait ratio (null), the link's neither" \
	jq -e '.xmit_wait_ratio == null and (.ends[] | select(.name == "node0009 HCA-1") |
		(.saturated | index("transmit_wait") != null) and
		.windows.hour.xmit_wait_ratio == null and .windows.sweep.xmit_wait_ratio == null)' <<<"$e9"
check "node0011: PortFECCorrectedSymbolCtr saturated" \
	eval 'port "$l11" | jq -e ".counters.fec.saturated | index(\"PortFECCorrectedSymbolCtr\") != null"'
e11=$(jq -c '.links[].ends[] | select(.name == "node0011 HCA-1") | .fec' links.json)
echo "# node0011's FEC windows: $(jq -c '[.windows | to_entries[] | {(.key): .value.raw_ber}] | add' <<<"$e11")"
check "node0011's end: raw and effective BER unknown (null) in every window" \
	jq -e '[.windows[] | .raw_ber, .effective_ber] | length == 8 and all(. == null)' <<<"$e11"
check "... and its link's raw and effective BER (the worse direction) too" \
	jq -e '.links[] | select(any(.ends[]; .name == "node0011 HCA-1")) |
		.raw_ber == null and .effective_ber == null' links.json
metrics_of "$U" >m2.txt
g11=$(port "$l11" | jq -r .node_guid)
check "... and /metrics has no raw BER series for it ($g11)" \
	eval '! grep "^ibwatch_link_raw_ber{" m2.txt | grep -q "$g11"'
finish
