#!/bin/bash
# Restarts under the agent, on the 32-host fat tree:
#  1. opensm restarted with LMC 1, so that the LIDs change: the agent
#     follows every port by GUID (its LIDs equal ibnetdiscover's), one
#     lid_changed event per port whose LID changed, counter totals stay
#     with their port (each host's SymbolErrorCounter set to its own
#     number first), no counter reset reported, all endports up again;
#  2. the simulator itself killed (SIGKILL) and started again: the
#     agent keeps running and serving, reports its local port lost, marks
#     the data stale (JSON, /metrics, /healthz 503) while keeping the last
#     fabric, and does not spin. umad2sim connects to ibsim once per
#     process, so a process that lived through an ibsim restart cannot
#     reach the new one: the agent is restarted, as its unit would
#     (Restart=on-failure), and comes back with fresh data and the totals
#     it had (state file).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree restarts 32
trap stop_started EXIT

st() { curl -s -m 5 "$U/api/v1/status"; }
cas() { curl -s -m 5 "$U/api/v1/ports?type=ca"; }
AGENT_ARGS=(--discovery-interval 1 --counter-interval 1 --ping-interval-ms 300
	--ping-method pma --down-after 2 --up-after 2)

# Each host's SymbolErrorCounter is its own number.
for i in $(seq 1 32); do
	sim "$(printf 'PerformanceSet "node%04d"[1] PortCounters.SymbolErrorCounter=%d' "$i" "$i")"
done
start_agent node0001 --no-snmp --state-file "$PWD/state.json" "${AGENT_ARGS[@]}" ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
for _ in $(seq 1 200); do
	cas | jqe 'length == 32 and all(.[]; .counters.raw.SymbolErrorCounter > 0)' &&
		st | jqe '.endports.up == 32' && break
	sleep 0.1
done
cas >ca0.json
curl -s -m 5 "$U/api/v1/ports" >ports0.json
check "the agent reads every host's counters (SymbolErrorCounter = host number)" \
	jq -e 'length == 32 and all(.[]; .counters.totals.symbol_errors == (.node_name | ltrimstr("node") | .[0:4] | tonumber))' ca0.json
ev0=$(curl -s -m 5 "$U/api/v1/events" | jq .last_seq)

# 1. opensm again, with LMC 1: LIDs that are not a multiple of 2 move.
"$IBW_SIMFABRIC" sm-restart "$IBW_SIM_DIR" "-l 1" || bad "opensm does not come back with LMC 1"
ref() { at node0001 ibnetdiscover -p 2>/dev/null | awk '$1 == "CA" { print $4, $2 }' | sort; }
ours() { cas | jq -r '.[] | "\(.guid) \(.lid)"' | sort; }
same=0
for _ in $(seq 1 100); do
	ref >lids-ref.txt
	ours >lids-ours.txt
	if [ -s lids-ref.txt ] && cmp -s lids-ref.txt lids-ours.txt; then same=1; break; fi
	sleep 0.2
done
moved=$(jq -r '.[] | "\(.guid) \(.lid)"' ca0.json | sort | comm -23 - lids-ours.txt | wc -l)
check "every host port's LID equals ibnetdiscover's after the change ($moved of 32 moved)" \
	test $same = 1 -a "$moved" -gt 0
# The switches' LIDs, which also move, are on port 0.
for _ in $(seq 1 30); do
	curl -s -m 5 "$U/api/v1/ports" >ports1.json
	sleep 0.2
	curl -s -m 5 "$U/api/v1/ports" | cmp -s - ports1.json && break
done
want=$(jq -n --slurpfile a ports0.json --slurpfile b ports1.json '
	[$a[0][] | select(.node_type == "ca" or .port == 0) | {key: "\(.guid)/\(.port)", value: .lid}] | from_entries as $old |
	[$b[0][] | select(.node_type == "ca" or .port == 0) | select($old["\(.guid)/\(.port)"] != .lid)] | length')
for _ in $(seq 1 30); do
	curl -s -m 5 "$U/api/v1/events?since=$ev0" >events1.json
	got=$(jq '[.events[] | select(.kind == "lid_changed")] | length' events1.json)
	[ "$got" = "$want" ] && break
	sleep 0.2
done
check "one lid_changed event per port whose LID changed ($got events, $want ports)" test "$got" = "$want" -a "$want" -gt 0
check "... each naming the port by GUID, with the old and the new LID" \
	jq -e --slurpfile a ports0.json '[.events[] | select(.kind == "lid_changed")] |
		all(.[]; . as $e | any($a[0][]; .node_guid == $e.node_guid and .port == $e.port and .lid == $e.old))' events1.json
sleep 2.5 # two more counter sweeps at the new LIDs
cas >ca1.json
check "counter totals stayed with their ports (each host's own number)" \
	jq -e 'length == 32 and all(.[]; .counters.totals.symbol_errors == (.node_name | ltrimstr("node") | .[0:4] | tonumber))' ca1.json
sim 'PerformanceSet "node0005"[1] PortCounters.SymbolErrorCounter=500'
g5=$(jq -r '.[] | select(.node_name == "node0005 HCA-1") | .guid' ca1.json)
for _ in $(seq 1 50); do
	cas | jqe --arg g "$g5" '.[] | select(.guid == $g) | .counters.totals.symbol_errors == 500' && break
	sleep 0.1
done
check "... and node0005's goes on counting at its new LID (5 -> 500)" \
	jqe --arg g "$g5" '.[] | select(.guid == $g) | .counters.totals.symbol_errors == 500' < <(cas)
check "no counter reset reported" \
	jq -e '[.events[] | select(.kind == "counter_reset")] | length == 0' <(curl -s -m 5 "$U/api/v1/events?since=$ev0")
for _ in $(seq 1 100); do
	st | jqe '.endports.up == 32' && break
	sleep 0.1
done
check "all 32 endports up at their new LIDs" jqe '.endports.up == 32' < <(st)

# 2. The simulator killed.
"$IBW_SIMFABRIC" kill-sim "$IBW_SIM_DIR" || bad "cannot kill the simulator"
for _ in $(seq 1 100); do
	st | jqe '.local_port_lost and .stale' && break
	sleep 0.1
done
st >lost.json
check "the agent reports its local port lost and the data stale" jq -e '.local_port_lost and .stale' lost.json
check "... keeping the last fabric (44 nodes, no node gone)" jq -e '.fabric.nodes == 44 and .fabric.gone_nodes == 0' lost.json
check "... and serving it" jqe 'length == 44' < <(curl -s -m 5 "$U/api/v1/nodes")
curl -s -m 5 "$U/metrics" >lost.prom
check "/metrics says stale and the local port not active" \
	grep -qx 'ibwatch_stale 1' lost.prom
check "... (ibwatch_local_port_active 0)" grep -qx 'ibwatch_local_port_active 0' lost.prom
check "/healthz is 503" test "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$U/healthz")" = 503
cpu() { awk '{ print $14 + $15 }' "/proc/$agent/stat"; }
c0=$(cpu)
sleep 3
c1=$(cpu)
hz=$(getconf CLK_TCK)
check "the agent does not spin while the simulator is gone ($(((c1 - c0) * 1000 / hz)) ms CPU in 3 s)" \
	test $(((c1 - c0) * 1000 / hz)) -lt 1000
check "the agent is still running" kill -0 "$agent"
"$IBW_SIMFABRIC" restart "$IBW_SIM_DIR" || bad "the simulator does not come back"
sleep 2
check "... and still serving after the simulator is back" \
	test "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$U/api/v1/status")" = 200
# umad2sim cannot reconnect a process to a new ibsim: restart the agent
# as systemd would. The simulator came back with its counters cleared;
# two ports count a few errors again before the agent reads them (below
# their old values, else a reset cannot be told from counting on).
stop "$agent"
check "the agent stops cleanly (state saved)" test -s state.json
sim 'PerformanceSet "node0005"[1] PortCounters.SymbolErrorCounter=7'
sim 'PerformanceSet "node0006"[1] PortCounters.SymbolErrorCounter=3'
start_agent node0001 --no-snmp --state-file "$PWD/state.json" "${AGENT_ARGS[@]}" ||
	bad "the agent does not start again"
U=http://127.0.0.1:$P
for _ in $(seq 1 200); do
	st | jqe '.endports.up == 32 and (.stale | not) and .sweeps.counter_sweeps >= 1' && break
	sleep 0.1
done
check "after the restart: fresh data, local port active, all endports up" \
	jqe '.endports.up == 32 and (.stale | not) and .local_port_lost == false' < <(st)
cas >ca2.json
check "totals continue across the simulator's reset (node0005 500 + 7, node0006 6 + 3, the rest as before)" \
	jq -e 'length == 32 and all(.[]; (.node_name | ltrimstr("node") | .[0:4] | tonumber) as $n |
		.counters.totals.symbol_errors == (if $n == 5 then 507 elif $n == 6 then 9 else $n end))' ca2.json
check "the agent is running" kill -0 "$agent"

finish
