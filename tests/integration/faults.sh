#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Faults on the 32-host fat tree while the agent sweeps every second,
# pings every 300 ms and traces a watched path every second:
#  - a host link flapping (Unlink/Relink, three times) and a spine link
#    on the watched path flapping: no crash, the engine empty (nothing in
#    flight or queued) once the flaps are over, one down and one up
#    event per flap, the path changed away from the link and back to
#    the original one on each flap, sweeps and traces going on;
#  - 50% MAD loss on a port (ibsim's Error): timeouts and retries
#    counted, counter sweeps going on, the other ports read every sweep.
# How long a sweep takes under loss is a measurement, not asserted here
# (a loaded 2-core machine makes any bound flaky): tests/bench/timing.sh
# measures it.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree faults 32
trap stop_started EXIT

start_agent node0001 --no-state-file --no-snmp \
	--discovery-interval 1 --counter-interval 1 --ping-interval-ms 300 --ping-method pma \
	--down-after 2 --up-after 2 --watch-path "node0020 HCA-1" --trace-interval 1 ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
st() { curl -s -m 5 "$U/api/v1/status"; }
for _ in $(seq 1 200); do
	st | jqe '.sweeps.counter_sweeps >= 2 and .endports.up == 32' && break
	sleep 0.1
done
st >start.json
check "the agent sweeps, pings and traces ($(jq -c '{c: .sweeps.counter_sweeps, up: .endports.up}' start.json))" \
	jq -e '.sweeps.counter_sweeps >= 2 and .endports.up == 32' start.json
g5=$(curl -s -m 5 "$U/api/v1/endports" | jq -r '.[] | select(.name == "node0005 HCA-1") | .port_guid')
n9=$(curl -s -m 5 "$U/api/v1/endports" | jq -r '.[] | select(.name == "node0009 HCA-1") | .node_guid')

# A host link flapping three times, each state held long enough to be
# seen (down after two lost pings, up after two answered).
for flap in 1 2 3; do
	sim 'Unlink "node0005"[1]'
	for _ in $(seq 1 50); do
		curl -s -m 5 "$U/api/v1/endports" | jqe --arg g "$g5" '.[] | select(.port_guid == $g) | .state == "down"' && break
		sleep 0.1
	done
	sim 'Relink "node0005"[1]'
	for _ in $(seq 1 80); do
		curl -s -m 5 "$U/api/v1/endports" | jqe --arg g "$g5" '.[] | select(.port_guid == $g) | .state == "up"' && break
		sleep 0.1
	done
done
# A spine link on the watched path, twice: after the Unlink the path
# goes around it, after the Relink (opensm routes again) it comes back.
curl -s -m 5 "$U/api/v1/traces" >trace0.json
spine=$(jq -r '.[0].last.hops[2].name' trace0.json)
sport=$(jq -r '.[0].last.hops[2].in_port' trace0.json)
path() { jq -r '.[0].last | "\(.status) " + ([.hops[] | "\(.node_guid)[\(.in_port)>\(.out_port)]"] | join(" "))'; }
path0=$(path <trace0.json)
on_path() { [ "$(curl -s -m 5 "$U/api/v1/traces" | path)" = "$path0" ]; }
around=0 back=0
for flap in 1 2; do
	sim "Unlink \"$spine\"[$sport]"
	for _ in $(seq 1 100); do
		p=$(curl -s -m 5 "$U/api/v1/traces" | path)
		[ "${p%% *}" = ok ] && [ "$p" != "$path0" ] && { around=$((around + 1)); break; }
		sleep 0.1
	done
	sim "Relink \"$spine\"[$sport]"
	for _ in $(seq 1 150); do on_path && { back=$((back + 1)); break; }; sleep 0.1; done
done
curl -s -m 5 "$U/api/v1/events?since=0" >events.json
downs=$(jq --arg g "$g5" '[.events[] | select(.kind == "endport_state" and .port_guid == $g and .new == "down")] | length' events.json)
ups=$(jq --arg g "$g5" '[.events[] | select(.kind == "endport_state" and .port_guid == $g and .new == "up")] | length' events.json)
check "three flaps of node0005's link: three down and three up events ($downs, $ups)" test "$downs" = 3 -a "$ups" = 3
changes=$(jq '[.events[] | select(.kind == "path_changed")] | length' events.json)
check "each spine flap moves the watched path around the link and back ($around and $back of 2)" \
	test $around = 2 -a $back = 2
check "... one path_changed event each way: 4 ($changes)" test "$changes" = 4
check "the agent is still running" kill -0 "$agent"
# The engine's figures are live: between sweeps, pings and traces (each
# a few milliseconds here) it holds nothing. A request stuck after the
# flaps would keep it from ever being empty.
idle=0
for _ in $(seq 1 50); do
	st >after.json
	jq -e '.engine.queued == 0 and .engine.inflight == 0' after.json >/dev/null && { idle=1; break; }
	sleep 0.1
done
check "no request stuck: the engine is empty between rounds ($(jq -c '{inflight: .engine.inflight, queued: .engine.queued, cancelled: .engine.cancelled}' after.json))" test $idle = 1
check "sweeps and traces went on through the flaps ($(jq .sweeps.counter_sweeps start.json) -> $(jq .sweeps.counter_sweeps after.json) counter sweeps)" \
	test "$(jq .sweeps.counter_sweeps after.json)" -ge $(($(jq .sweeps.counter_sweeps start.json) + 8))
check "all 32 endports up again" jq -e '.endports.up == 32' after.json

# 50% of the MADs to node0009's port dropped.
# ibsim hands a dropped MAD back to the sender (a transport error) or
# lets it time out; either is a failed try, retried.
failed() { jq '.engine.try_timeouts + .engine.transport_errors' "$1"; }
t0=$(failed after.json) r0=$(jq '.engine.retries' after.json) s0=$(jq '.sweeps.counter_sweeps' after.json)
sim 'Error "node0009"[1] 50'
# Until three counter sweeps have run under the loss (each reads the
# port at least once: a try lost with probability 1/2 each time).
for _ in $(seq 1 150); do
	st | jqe --argjson s "$s0" '.sweeps.counter_sweeps >= $s + 4' && break
	sleep 0.1
done
st >loss.json
curl -s -m 5 "$U/api/v1/ports" >ports-loss.json
sim 'Error "node0009"[1] 0'
check "50% loss: counter sweeps go on ($s0 -> $(jq .sweeps.counter_sweeps loss.json))" \
	test "$(jq .sweeps.counter_sweeps loss.json)" -ge $((s0 + 4))
check "... failed tries counted ($t0 -> $(failed loss.json))" test "$(failed loss.json)" -gt "$t0"
check "... and retries ($r0 -> $(jq .engine.retries loss.json))" test "$(jq .engine.retries loss.json)" -gt "$r0"
echo "# a counter sweep under loss took $(jq .sweeps.counters.duration_ms loss.json) ms (not asserted)"
others=$(jq --arg n "$n9" '[.[] | select(.node_guid != $n and .counters != null and .counters.stale)] | length' ports-loss.json)
check "... the other ports are read every sweep ($others stale)" test "$others" = 0
check "the agent is still running" kill -0 "$agent"

finish
