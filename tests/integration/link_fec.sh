#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Link health from the FEC counters on a 16-host fat tree under the
# kernel and fabric model, whose FEC ports (tests/preload/km_fec.h) count
# corrected symbols at a steady rate the test sets:
# - node0003's receiver corrects 1.5x the raw-BER threshold's worth, all
#   on lane 2: its cable reports the raw BER that rate implies (within
#   1%), is degraded for raw_ber and names lane 2;
# - node0005's corrects 0.5x, spread over its four lanes: the raw BER
#   that rate implies, and ok;
# - one uncorrectable block at node0005 makes that cable degraded for
#   effective_ber;
# - restarted from its state file, the agent has the windows at once;
# - FEC judges an end only where FEC runs: node0007 at EDR with FEC off
#   and node0009, FDR-capable, trained at QDR are judged by their symbol
#   errors and reach failing; node0011 at HDR with RS-FEC is judged by
#   FEC (its symbol errors as effective errors).
# Each is checked in /api/v1/links, /metrics (promtool), ibwLinkTable
# through snmpd, ibwLinkHealthChange at snmptrapd, the events, Nagios'
# check_snmp and `ibwatchd --links`.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}" "${IBW_KMODEL:?}"

on_fattree link_fec 16
trap stop_started EXIT

check "the model is loaded, with its state directory" \
	[ -d "${IBW_KM_STATE_DIR:-/nonexistent}" ]
fecf=$IBW_KM_STATE_DIR/fec
l3=$(lid_of node0003)
l5=$(lid_of node0005)
l7=$(lid_of node0007)
l9=$(lid_of node0009)
l11=$(lid_of node0011)
check "LIDs of node0003 ($l3), node0005 ($l5), node0007 ($l7), node0009 ($l9), node0011 ($l11)" \
	eval '[ -n "$l3" ] && [ -n "$l5" ] && [ -n "$l7" ] && [ -n "$l9" ] && [ -n "$l11" ]'

# The links' signalling rate, from a first look (ibsim: 4x SDR).
at node0001 "$IBWATCHD" --links --no-state-file --no-ping >once.json 2>once.err
sig=$(jq -r '[.links[] | select(any(.ends[]; .name == "node0003 HCA-1"))][0].signal_bps' once.json)
check "--links: node0003's cable runs at 10 Gb/s signalling ($sig)" \
	jq -e -n "$sig == 1e10"
check "--links: every port answers FEC counters (the model), yet at SDR no end is judged by them" \
	jq -e '([.links[] | .ber_basis] | unique == ["symbol_errors"]) and
		([.links[].ends[] | [.judged_by, .judged_why]] | unique ==
			[["symbol_errors", "speed_not_extended"]]) and
		([.links[].ends[] | select(.fec != null)] | length > 0)' once.json

# node0003 and node0005 run 4x HDR (212.5 Gb/s signalling) with RS-FEC,
# their switch ends SDR. Rates a second: the default raw_ber_degraded is
# 1e-6.
r3=318750  # 1.5e-6 at 2.125e11 b/s, all on lane 2
r5=26562.5 # each of 4 lanes: 5e-7 in all
t0=$(date +%s)
fec_file() { # UNCORRECTABLE at node0005
	cat >"$fecf.tmp" <<EOF
$l3 1 rs speed=HDR t0=$t0 FECCorrectableSymbolCtrLane2=0+$r3 PortFECCorrectedSymbolCtr=0+$r3
$l5 1 rs speed=HDR t0=$t0 FECCorrectableSymbolCtrLane0=0+$r5 FECCorrectableSymbolCtrLane1=0+$r5 FECCorrectableSymbolCtrLane2=0+$r5 FECCorrectableSymbolCtrLane3=0+$r5 PortFECCorrectedSymbolCtr=0+106250 PortFECUncorrectableBlockCtr=$1
$l7 1 off speed=EDR
$l9 1 off speed=QDR
$l11 1 rs speed=HDR
EOF
	mv "$fecf.tmp" "$fecf"
	sleep 0.2 # the model looks at the file every 0.1 s
}
fec_file 0
a=$(at node0001 perfquery -T "$l3" 1 | sed -n 's/^PortFECCorrectedSymbolCtr:\.*//p')
sleep 1
b=$(at node0001 perfquery -T "$l3" 1 | sed -n 's/^PortFECCorrectedSymbolCtr:\.*//p')
check "perfquery -T sees node0003's corrected symbols grow ($a, then $b)" \
	eval '[ -n "$a" ] && [ "$b" -gt "$a" ]'

# The SNMP side: snmptrapd, snmpd with the agent over AgentX.
snmp_stack || { echo "not ok - snmpd does not start"; exit 1; }

start_agent node0001 --state-file "$PWD/fec.state" --no-ping --agentx "$SOCK" \
	--counter-interval 1 --counter-full-speed
check "the agent listens" [ -n "${P:-}" ]
U=http://127.0.0.1:$P
check "eight counter sweeps" wait_counter_sweeps 8
curl -s -m 5 "$U/api/v1/links" >l1.json
link_of() { jq -c --arg n "$1 HCA-1" '[.links[] | select(any(.ends[]; .name == $n))][0]' "$2"; }
k3=$(link_of node0003 l1.json)
k5=$(link_of node0005 l1.json)
e3=$(jq -c '.ends[] | select(.name == "node0003 HCA-1")' <<<"$k3")
e5=$(jq -c '.ends[] | select(.name == "node0005 HCA-1")' <<<"$k5")
w3=$(jq -c '.fec.windows["12m"]' <<<"$e3")
w5=$(jq -c '.fec.windows["12m"]' <<<"$e5")
echo "# node0003 12m: $(jq -c '{seconds, raw_ber, corrected, bits}' <<<"$w3")"
echo "# node0005 12m: $(jq -c '{seconds, raw_ber, corrected, bits}' <<<"$w5")"
within() { jq -e -n --argjson v "$1" --argjson w "$2" '($v - $w) / $w | fabs < 0.01'; }
check "node0003: raw BER $(jq .raw_ber <<<"$w3") = 1.5e-6 within 1% (12 minutes)" \
	within "$(jq .raw_ber <<<"$w3")" 1.5e-6
check "... over the sweep, 125 minutes and the day as well" \
	eval 'for w in sweep 125m 24h; do within "$(jq --arg w $w ".fec.windows[\$w].raw_ber" <<<"$e3")" 1.5e-6 || exit 1; done'
check "... lane 2 at 6e-6 (a quarter of the bits), the other lanes 0" \
	eval 'within "$(jq ".lane_raw_ber[2]" <<<"$w3")" 6e-6 &&
		jq -e "[.lane_raw_ber[0,1,3]] == [0,0,0]" <<<"$w3"'
check "... degraded for raw_ber, at node0003's end (HDR, RS-FEC read), lane 2 named" \
	jq -e '.health == "degraded" and .reasons == ["raw_ber"] and
		(.ends[] | select(.name == "node0003 HCA-1") |
			.speed_active == "HDR" and .judged_by == "fec" and
			.judged_why == "fec_mode_active" and .fec_active == true and
			.fec_mode == "rs" and .fec_mode_source == "read" and
			.reasons == ["raw_ber"] and .fec.bad_lane == 2 and
			.fec.raw_state == "degraded" and .fec.layout == "rs")' <<<"$k3"
check "... the link's raw_ber is node0003's, basis fec" \
	eval 'within "$(jq .raw_ber <<<"$k3")" 1.5e-6 && jq -e ".ber_basis == \"fec\"" <<<"$k3"'
check "node0005: raw BER $(jq .raw_ber <<<"$w5") = 5e-7 within 1%, spread: no lane named, ok" \
	eval 'within "$(jq .raw_ber <<<"$w5")" 5e-7 &&
		jq -e ".health == \"ok\" and .reasons == []" <<<"$k5" &&
		jq -e ".fec.bad_lane == null and .fec.raw_state == \"ok\"" <<<"$e5"'
check "every other cable ok" \
	jq -e '[.links[] | select(.health != "ok")] | length == 1' l1.json

# The same in /metrics, MIB, events and traps.
g3=$(jq -r '.guid' <<<"$e3")
metrics_of "$U" >m1.txt
check "/metrics: ibwatch_link_raw_ber of node0003's cable, 12m, 1.5e-6 within 1%" \
	eval 'within "$(grep "^ibwatch_link_raw_ber{.*guid=\"$g3\".*window=\"12m\"}" m1.txt | awk "{ print \$2 }")" 1.5e-6'
check "... ibwatch_link_bad_lane 2 for node0003's receiver, and only it" \
	eval '[ "$(grep -c "^ibwatch_link_bad_lane{" m1.txt)" = 1 ] &&
		grep -q "^ibwatch_link_bad_lane{.*receiver_guid=\"$g3\",receiver_port=\"1\"} 2\$" m1.txt'
check "... four lane series for node0003's receiver (raw BER over threshold), none else" \
	eval '[ "$(grep -c "^ibwatch_link_lane_raw_ber{" m1.txt)" = 4 ] &&
		[ "$(grep -c "^ibwatch_link_lane_raw_ber{.*receiver_guid=\"$g3\"" m1.txt)" = 4 ]'
check "... ibwatch_link_reason raw_ber" \
	grep -q "^ibwatch_link_reason{.*guid=\"$g3\".*reason=\"raw_ber\"} 1\$" m1.txt
check "promtool check metrics takes it" \
	eval "grep -v '^ibwatch_build_info' m1.txt | promtool check metrics >promtool.out 2>&1 || ! grep -qi 'error' promtool.out"

# The cable's row: its lower end's port row.
idx_of() { port_row "$(jq -r '.ends[0].guid' <<<"$1")" "$(jq -r '.ends[0].port' <<<"$1")"; }
i3=$(idx_of "$k3")
i5=$(idx_of "$k5")
col() { snmpget "${A[@]}" -Oqv "$ROOT.1.8.1.$1.$2" 2>&1; }
for _ in $(seq 1 100); do
	[ "$(col 9 "$i3")" = 2 ] && break
	sleep 0.2
done
check "ibwLinkTable: node0003's cable degraded(2), reasons raw_ber ($(col 10 "$i3"))" \
	test "$(col 9 "$i3")" = 2 -a "$(col 10 "$i3")" = '"raw_ber"'
check "... ibwLinkRawBer 1.5e-6 within 1% ($(col 17 "$i3")), ibwLinkEffectiveBer 0" \
	eval 'within "$(col 17 "$i3" | tr -d \")" 1.5e-6 && [ "$(col 18 "$i3")" = "\"0\"" ]'
check "... ibwLinkBadLane names lane 2 at node0003 port 1 ($(col 19 "$i3"))" \
	test "$(col 19 "$i3")" = '"lane 2 at node0003 HCA-1 port 1"'
check "... node0005's cable: ok(1), no lane named" \
	test "$(col 9 "$i5")" = 1 -a "$(col 19 "$i5")" = '""'
for _ in $(seq 1 100); do
	grep -q "$ROOT.1.8.1.19.$i3 = STRING: \"lane 2" traps.log 2>/dev/null && break
	sleep 0.1
done
check "snmptrapd: ibwLinkHealthChange for it, degraded, raw_ber, lane 2" \
	awk -v o="OID: $ROOT.0.6	" -v h="$ROOT.1.8.1.9.$i3 = INTEGER: 2" \
	-v r="$ROOT.1.8.1.10.$i3 = STRING: \"raw_ber\"" \
	-v l="$ROOT.1.8.1.19.$i3 = STRING: \"lane 2 at node0003 HCA-1 port 1\"" \
	'index($0, o) && index($0, h) && index($0, r) && index($0, l) { a = 1 } END { exit !a }' traps.log
curl -s -m 5 "$U/api/v1/events" >ev1.json
check "the event: ok -> degraded, raw_ber, lane 2 at node0003 port 1" \
	jq -e --arg g "$g3" '[.events[] | select(.kind == "link_health_changed" and
		.reasons == ["raw_ber"] and .bad_lanes == "lane 2 at node0003 HCA-1 port 1")] | length == 1' ev1.json

# Nagios: check_snmp as deploy/nagios runs check_ibwatch_links: WARNING.
chk=/usr/lib/nagios/plugins/check_snmp
read -r oids warn crit < <(sed -n 's/^ *command_line.*check_snmp .* -o \([^ ]*32473\.1\.1\.30\.0[^ ]*\) -w \([^ ]*\) -c \([^ ]*\) .*/\1 \2 \3/p' \
	"$here/../deploy/nagios/ibwatch.cfg")
out=$("$chk" -H 127.0.0.1 -p "$snmp_port" -P 2c -C public -o "$oids" -w "$warn" -c "$crit" -l links)
check "check_snmp (check_ibwatch_links): WARNING for the raw-BER cable ($out)" [ $? = 1 ]

# One uncorrectable block at node0005: effective_ber.
fec_file 1
wait_counter_sweeps 2
curl -s -m 5 "$U/api/v1/links" >l2.json
k5=$(link_of node0005 l2.json)
check "node0005's cable: degraded for effective_ber, 1 uncorrectable block in 12 minutes" \
	jq -e '.health == "degraded" and .reasons == ["effective_ber"] and
		(.ends[] | select(.name == "node0005 HCA-1") | .fec.effective_state == "degraded" and
			.fec.windows["12m"].uncorrectable == 1 and .fec.windows["12m"].effective == 1)' <<<"$k5"
check "... its raw BER still 5e-7 within 1% (the rewritten file went on from t0)" \
	within "$(jq '.ends[] | select(.name == "node0005 HCA-1") | .fec.windows["12m"].raw_ber' <<<"$k5")" 5e-7
check "... ibwLinkTable: degraded(2), effective_ber, ibwLinkEffectiveBer set" \
	eval '[ "$(col 9 "$i5")" = 2 ] && [ "$(col 10 "$i5")" = "\"effective_ber\"" ] &&
		jq -e -n "$(col 18 "$i5" | tr -d \") > 0"'
metrics_of "$U" >m2.txt
g5=$(jq -r '.ends[] | select(.name == "node0005 HCA-1") | .guid' <<<"$k5")
check "... /metrics: ibwatch_link_reason effective_ber and a non-zero effective BER" \
	eval 'grep -q "^ibwatch_link_reason{.*reason=\"effective_ber\"} 1\$" m2.txt &&
		grep "^ibwatch_link_effective_ber{.*window=\"12m\"}" m2.txt | awk "\$2 > 0 { n++ } END { exit n != 1 }"'
curl -s -m 5 "$U/api/v1/events" >ev2.json
check "... the event: ok -> degraded, effective_ber" \
	jq -e '[.events[] | select(.kind == "link_health_changed" and .reasons == ["effective_ber"])] | length == 1' ev2.json
for _ in $(seq 1 100); do
	grep -q "$ROOT.1.8.1.10.$i5 = STRING: \"effective_ber\"" traps.log 2>/dev/null && break
	sleep 0.1
done
check "... and its trap" grep -q "$ROOT.1.8.1.10.$i5 = STRING: \"effective_ber\"" traps.log
check "the agent stops cleanly" stopped_clean "$agent"

# The windows are in the state file: restarted, the agent judges at its
# first sweep, over the time before the restart.
start_agent node0001 --state-file "$PWD/fec.state" --no-ping --no-snmp \
	--counter-interval 1 --counter-full-speed
U=http://127.0.0.1:$P
wait_counter_sweeps 1
curl -s -m 5 "$U/api/v1/status" >st3.json
k3=$(link_of node0003 <(curl -s -m 5 "$U/api/v1/links"))
up=$(jq .uptime_seconds st3.json)
s12=$(jq '.ends[] | select(.name == "node0003 HCA-1") | .fec.windows["12m"].seconds' <<<"$k3")
check "restarted from its state file: node0003's 12-minute window spans $s12 s, the agent has run $up s" \
	jq -e -n "$s12 > $up + 5"
check "... degraded for raw_ber with lane 2 named at its first sweep, the raw BER 1.5e-6 within 1%" \
	eval 'jq -e "(.reasons | index(\"raw_ber\")) and
		(.ends[] | select(.name == \"node0003 HCA-1\") | .fec.bad_lane == 2)" <<<"$k3" >/dev/null &&
		within "$(jq .raw_ber <<<"$k3")" 1.5e-6'
check "the restarted agent stops cleanly" stopped_clean "$agent"

# The raw-BER threshold decides: at 2e-6, node0003's 1.5e-6 is ok.
start_agent node0001 --no-state-file --no-ping --no-snmp \
	--counter-interval 1 --counter-full-speed --link-threshold raw_ber_degraded=2e-6
U=http://127.0.0.1:$P
wait_counter_sweeps 4
k3=$(link_of node0003 <(curl -s -m 5 "$U/api/v1/links"))
check "raw_ber_degraded=2e-6: node0003's cable at 1.5e-6 is not degraded for raw_ber, no lane named" \
	jq -e '(.reasons | index("raw_ber") | not) and
		(.ends[] | select(.name == "node0003 HCA-1") | .fec.bad_lane == null)' <<<"$k3"
check "... and its raw BER is still measured (1.5e-6 within 1%)" within "$(jq .raw_ber <<<"$k3")" 1.5e-6

# FEC judges only where it runs. 60,000 symbol errors at each of three
# receivers whose FEC counters all read zero: node0007 (EDR, FEC off)
# and node0009 (FDR-capable, at QDR) are judged by them, a BER far over
# ber_failing; node0011 (HDR, RS-FEC) by FEC, as effective errors.
for n in node0007 node0009 node0011; do
	sim "PerformanceSet \"$n\"[1] PortCounters.SymbolErrorCounter=60000"
done
wait_counter_sweeps 3
curl -s -m 5 "$U/api/v1/links" >l4.json
end_of() { jq -c --arg n "$1 HCA-1" '.ends[] | select(.name == $n)' <<<"$2"; }
k7=$(link_of node0007 l4.json)
k9=$(link_of node0009 l4.json)
k11=$(link_of node0011 l4.json)
e7=$(end_of node0007 "$k7")
e9=$(end_of node0009 "$k9")
e11=$(end_of node0011 "$k11")
echo "# node0007: $(jq -c '{health, reasons, ber, ber_basis}' <<<"$k7") $(jq -c '{speed_active, judged_by, judged_why, fec_mode, fec_mode_source}' <<<"$e7")"
echo "# node0009: $(jq -c '{health, reasons, ber, ber_basis}' <<<"$k9") $(jq -c '{speed_active, judged_by, judged_why, fec_mode, fec_mode_source}' <<<"$e9")"
echo "# node0011: $(jq -c '{health, reasons, ber, ber_basis}' <<<"$k11") $(jq -c '{speed_active, judged_by, judged_why, fec_mode, fec_mode_source}' <<<"$e11")"
check "node0007 (EDR, FECModeActive 0): judged by symbol errors, fec_mode_off, its FEC counters still read" \
	jq -e '.speed_active == "EDR" and .judged_by == "symbol_errors" and
		.judged_why == "fec_mode_off" and .fec_active == false and
		.fec_mode == "none" and .fec_mode_source == "read" and
		.fec.layout == "fc" and .reasons == ["ber"]' <<<"$e7"
check "... its cable failing for ber, basis symbol_errors" \
	jq -e '.health == "failing" and .reasons == ["ber"] and .ber_basis == "symbol_errors"' <<<"$k7"
check "node0009 (FDR-capable, at QDR): judged by symbol errors, speed_not_extended" \
	jq -e '.speed_active == "QDR" and (.speed_supported | index("FDR")) and
		.judged_by == "symbol_errors" and .judged_why == "speed_not_extended" and
		.fec_active == false and .fec != null and .reasons == ["ber"]' <<<"$e9"
check "... its cable failing for ber" \
	jq -e '.health == "failing" and .reasons == ["ber"]' <<<"$k9"
check "node0011 (HDR, RS-FEC): judged by FEC, the symbol errors as effective errors" \
	jq -e '.speed_active == "HDR" and .judged_by == "fec" and
		.judged_why == "fec_mode_active" and .fec_active == true and
		.fec_mode == "rs" and .reasons == ["effective_ber"] and
		.fec.windows["12m"].effective >= 60000' <<<"$e11"
check "... its cable degraded for effective_ber, not ber; basis fec" \
	jq -e '.health == "degraded" and .reasons == ["effective_ber"] and .ber_basis == "fec"' <<<"$k11"
metrics_of "$U" >m4.txt
g7=$(jq -r .guid <<<"$e7")
g9=$(jq -r .guid <<<"$e9")
g11=$(jq -r .guid <<<"$e11")
check "/metrics: ibwatch_link_judged_by_fec 0 for node0007 (fec_mode_off) and node0009 (speed_not_extended), 1 for node0011" \
	eval 'grep -q "^ibwatch_link_judged_by_fec{.*receiver_guid=\"$g7\",receiver_port=\"1\",why=\"fec_mode_off\"} 0\$" m4.txt &&
		grep -q "^ibwatch_link_judged_by_fec{.*receiver_guid=\"$g9\",receiver_port=\"1\",why=\"speed_not_extended\"} 0\$" m4.txt &&
		grep -q "^ibwatch_link_judged_by_fec{.*receiver_guid=\"$g11\",receiver_port=\"1\",why=\"fec_mode_active\"} 1\$" m4.txt'
check "the agent stops cleanly at the end" stopped_clean "$agent"
finish
