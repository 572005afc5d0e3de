#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Liveness and sweeps under modelled hardware latency (the kernel and
# fabric model with IBW_KM_LATENCY=1: every node serves one management
# MAD at a time, SMA 50 us, PMA 100 us, directed routes pay per hop) and
# with ports that stop answering (their LIDs written into the model's
# dead-LID file while the agent runs):
#  - a port that stops answering is declared down after `down-after`
#    lost pings, plus at most the one in flight when it died;
#  - counter sweeps with dead ports go on, one after the other (each
#    starts after the one before ended, by the agent's own account),
#    each with exactly the dead ports unreachable, their reads timed out
#    once and then their ClassPortInfo with one try, every other port read (how long such a sweep takes against
#    its interval is measured by tests/bench/timing.sh, not asserted);
#  - when it answers again it comes back up.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree latency_faults 32
trap stop_started EXIT
[ -n "${IBW_KM_STATE_DIR:-}" ] || { echo "not ok - the kernel model is not on (IBW_KM_STATE_DIR unset)"; exit 1; }
export IBW_KM_LATENCY=1 IBW_KM_SVC_SMA_US=50 IBW_KM_SVC_PMA_US=100
export IBW_KM_DEAD_FILE=$PWD/dead-lids IBW_KM_DEAD_CLASSES=pma,sma,vendor
: >"$IBW_KM_DEAD_FILE"

down_after=2
start_agent node0001 --no-state-file --no-snmp --discovery-interval 5 \
	--counter-interval 5 --ping-interval-ms 300 --ping-method pma \
	--ping-timeout-ms 200 --down-after $down_after --up-after 2 ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
st() { curl -s -m 5 "$U/api/v1/status"; }
eps() { curl -s -m 5 "$U/api/v1/endports"; }
for _ in $(seq 1 200); do
	st | jqe '.sweeps.counter_sweeps >= 1 and .endports.up == 32' && break
	sleep 0.1
done
st >start.json
check "under latency every endport is up and counters are read ($(jq -c '{c: .sweeps.counter_sweeps, up: .endports.up}' start.json))" \
	jq -e '.sweeps.counter_sweeps >= 1 and .endports.up == 32 and .sweeps.unreachable_ports == 0' start.json

# Three hosts stop answering.
eps >eps0.json
dead_names='["node0005 HCA-1","node0012 HCA-1","node0027 HCA-1"]'
jq -r --argjson d "$dead_names" '.[] | select(.name as $n | $d | index($n)) | .lid' eps0.json >"$IBW_KM_DEAD_FILE"
check "three LIDs to kill ($(xargs <"$IBW_KM_DEAD_FILE"))" test "$(wc -l <"$IBW_KM_DEAD_FILE")" = 3
# What each had sent and received when it died.
jq --argjson d "$dead_names" '[.[] | select(.name as $n | $d | index($n)) | {name, sent, received}]' eps0.json >before.json
for _ in $(seq 1 100); do
	eps | jqe --argjson d "$dead_names" '[.[] | select(.name as $n | $d | index($n)) | select(.state == "down")] | length == 3' && break
	sleep 0.1
done
eps >eps1.json
check "the three dead ports are declared down" \
	jq -e --argjson d "$dead_names" '[.[] | select(.name as $n | $d | index($n)) | select(.state == "down")] | length == 3' eps1.json
# Lost pings when it went down: down-after, plus at most the one that
# was in flight when it died (answered or not). The events carry when.
curl -s -m 5 "$U/api/v1/events?since=0" >events.json
for n in node0005 node0012 node0027; do
	g=$(jq -r --arg n "$n HCA-1" '.[] | select(.name == $n) | .port_guid' eps1.json)
	s0=$(jq -r --arg n "$n HCA-1" '.[] | select(.name == $n) | .sent - .received' before.json)
	s1=$(jq -r --arg n "$n HCA-1" '.[] | select(.name == $n) | .sent - .received' eps1.json)
	downs=$(jq --arg g "$g" '[.events[] | select(.kind == "endport_state" and .port_guid == $g and .new == "down")] | length' events.json)
	check "$n: one down event ($downs)" test "$downs" = 1
	# The state flips on the down-after'th loss; the poll above may
	# see it one ping interval later (one more loss).
	check "$n: down after $((s1 - s0)) lost pings (down-after $down_after, + 1 in flight, + 1 while we looked)" \
		test $((s1 - s0)) -ge $down_after -a $((s1 - s0)) -le $((down_after + 2))
done
check "every other endport stays up" jq -e '[.[] | select(.state == "up")] | length == 29' eps1.json

# Sweeps with dead ports: the two after the next (the next may have
# begun before the ports died), each caught while it is the last one (a
# sweep is spread over 4 s of its 5 s interval, the status read every
# 0.1 s).
c0=$(st | jq '.sweeps.counter_sweeps')
for n in 1 2; do
	for _ in $(seq 1 300); do
		st >swept$n.json
		jq -e --argjson c $((c0 + 1 + n)) '.sweeps.counter_sweeps >= $c' swept$n.json >/dev/null && break
		sleep 0.1
	done
done
check "counter sweeps go on with dead ports, two seen one by one ($c0 -> $(jq '.sweeps.counter_sweeps' swept1.json) -> $(jq '.sweeps.counter_sweeps' swept2.json))" \
	test "$(jq '.sweeps.counter_sweeps' swept1.json)" = $((c0 + 2)) -a "$(jq '.sweeps.counter_sweeps' swept2.json)" = $((c0 + 3))
# RFC 3339 with microseconds (json.c) to microseconds since the epoch.
us() { jq -r "$1"' | (.[0:19] + "Z" | fromdateiso8601) * 1000000 + (.[20:26] | tonumber)' "$2"; }
end1=$(($(us .sweeps.counters.start swept1.json) + $(jq '.sweeps.counters.duration_ms * 1000 | floor' swept1.json)))
start2=$(us .sweeps.counters.start swept2.json)
check "... the second starts after the first ended: no overlap (by the agent's start and duration, $((start2 - end1)) us apart)" \
	test "$start2" -ge "$end1"
# ClassPortInfo is known from the first sweep: in the first sweep that
# finds a port dead, what times out is its PortCounters,
# PortCountersExtended and PortVLXmitWaitCounters (ibsim's PMA
# advertises PortXmitWait), 3 timeouts; none of its reads answered, so
# its ClassPortInfo is asked again from the next sweep on, at the
# sweep's start and with one try: 1 timeout (issue 37). The sweep after
# the next may be either for a port (the next may have read it before it
# died); the one after that is the second for every one.
check "... sweep 1: the three dead ports unreachable, no other, 3 timeouts each at first, 1 after ($(jq -c '[.sweeps.unreachable_ports, .sweeps.counters.timeouts, .sweeps.counters.errors]' swept1.json))" \
	jq -e '.sweeps.unreachable_ports == 3 and .sweeps.counters.timeouts >= 3 and .sweeps.counters.timeouts <= 9 and .sweeps.counters.errors == 0' swept1.json
check "... sweep 2: each asked once, its ClassPortInfo with one try ($(jq -c '[.sweeps.unreachable_ports, .sweeps.counters.timeouts, .sweeps.counters.errors]' swept2.json))" \
	jq -e '.sweeps.unreachable_ports == 3 and .sweeps.counters.timeouts == 3 and .sweeps.counters.errors == 0' swept2.json

# The engine says what timed out, by kind (class, method, attribute):
# the dead ports' three reads once each, then their ClassPortInfo.
check "timeouts by kind: PortCounters, PortCountersExtended, PortVLXmitWaitCounters and ClassPortInfo Gets, 3 or more each ($(jq -c '[.engine.requests_by_kind[] | select(.timeouts > 0) | "\(.class) \(.method) \(.attribute) \(.timeouts)/\(.requests)"]' swept2.json))" \
	jq -e '[.engine.requests_by_kind[] | select(.class == "PerfMgt" and .method == "Get" and .timeouts >= 3) | .attribute] as $a
		| ["PortCounters", "PortCountersExtended", "PortVLXmitWaitCounters", "ClassPortInfo"] - $a == []' swept2.json
metrics_of "$U" >kinds.prom
check "... and on /metrics, by the same labels" \
	grep -qE '^ibwatch_mad_request_timeouts_total\{class="PerfMgt",method="Get",attribute="ClassPortInfo"\} ([3-9]|[1-9][0-9]+)$' kinds.prom

# They answer again.
: >"$IBW_KM_DEAD_FILE"
for _ in $(seq 1 100); do
	eps | jqe '[.[] | select(.state == "up")] | length == 32' && break
	sleep 0.1
done
check "when they answer again all 32 are up" bash -c "curl -s -m 5 $U/api/v1/endports | jq -e '[.[] | select(.state == \"up\")] | length == 32' >/dev/null"

# Silence learned once (issue 37): with no PMA answering
# PortExtendedSpeedsCounters (IBW_KM_PESC=0, as ibsim, though every port
# says it has extended speeds), --once pays the deadline for the tries
# out before the kind is known silent, then sends one at a time and ends
# the rest at once; every port's PortCounters are read all the same.
IBW_KM_PESC=0 at node0002 "$IBWATCHD" --once --no-state-file --no-ping \
	>pesc0.json 2>pesc0.err
pesc() { jq -c '.status.engine.requests_by_kind[] | select(.attribute == "PortExtendedSpeedsCounters")' pesc0.json; }
check "PESC silent everywhere: the kind is silent, most of its reads skipped ($(pesc))" \
	jq -e '.status.engine.requests_by_kind[] | select(.attribute == "PortExtendedSpeedsCounters")
		| .silent and .skipped > 0 and .timeouts >= 16
		  and .requests == .timeouts + .skipped and .errors == 0' pesc0.json
check "... every port's counters read all the same ($(jq -c '[.status.sweeps.unreachable_ports, .status.sweeps.counters.mads]' pesc0.json))" \
	jq -e '.status.sweeps.unreachable_ports == 0 and
		(.status.engine.requests_by_kind[] | select(.attribute == "PortCounters") | .timeouts == 0 and .requests > 0)' pesc0.json
finish
