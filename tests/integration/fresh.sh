#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Fresh counters from the start (issue 17), on the 324-host fat tree with
# counters every 30 s, spread over 24 s (the default until issue 22):
#  1. the first counter sweep runs at full speed right after the first
#     discovery: /api/v1/status reports it unspread (reason "start",
#     spread_seconds 0) and complete, and as soon as it does, every port
#     ibnetdiscover knows (each switch port, each host port) has counters
#     in /api/v1/ports, and each one with a cable in /metrics (by its
#     port's GUID for a host, as infiniband_exporter names it);
#  2. after the local port is lost and back, the first sweep again runs
#     at full speed (reason "local_port_back") and every port's counters
#     are read again after the port came back;
#  3. a later, spread sweep (--counter-interval 10: spread over 8 s)
#     publishes what it has read while it runs: ports_read grows across
#     snapshots before the sweep ends, and each snapshot holds exactly
#     the ports its status says were read.
# No time is asserted (issue 15). The waits give up after 10 s, a third
# of the counter interval: a first sweep that waited for the interval's
# spread sweep could not be done by then. tests/bench/fresh.sh measures
# the times.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree fresh 324
trap stop_started EXIT

st() { curl -s -m 5 "$U/api/v1/status"; }
now() { date -u +%Y-%m-%dT%H:%M:%S.%6NZ; }
# Every port with counters to read, "NODE_GUID PORT", by ibnetdiscover:
# a switch's ports 1 to N (down ones too), a host's ports with a link.
at node0001 ibnetdiscover 2>/dev/null | awk '
	/^Switch/ { t = ""; g = substr($3, 4, 16); for (p = 1; p <= $2; p++) print "0x" g, p; next }
	/^Ca/ { t = "ca"; g = substr($3, 4, 16); next }
	/^$/ { t = "" }
	t == "ca" && /^\[/ { p = $1; sub(/^\[/, "", p); sub(/\].*/, "", p); print "0x" g, p }' |
	sort >ref-ports.txt
nref=$(wc -l <ref-ports.txt)
check "ibnetdiscover: 36 switches of 36 ports and 324 host ports ($nref)" test "$nref" = 1620
# ... the ports with a cable, as /metrics names them: a switch's by its
# GUID, a host's by its port's (in parentheses after the port number).
at node0001 ibnetdiscover 2>/dev/null | awk '
	/^Switch/ { t = "sw"; g = substr($3, 4, 16); next }
	/^Ca/ { t = "ca"; next }
	/^$/ { t = "" }
	t != "" && /^\[/ {
		p = $1; sub(/^\[/, "", p); sub(/\].*/, "", p)
		if (t == "ca") { g = $1; sub(/^[^(]*\(/, "", g); sub(/\).*/, "", g)
			while (length(g) < 16) g = "0" g }
		print "0x" g, p
	}' | sort >ref-cabled.txt
ncab=$(wc -l <ref-cabled.txt)
check "... of them with a cable: 648 links' ends ($ncab)" test "$ncab" = 1296
# The ports with counters in /api/v1/ports and in /metrics, the same way.
api_ports() { curl -s -m 20 "$U/api/v1/ports" >"$1.json" && jq -r '.[] | select(.counters != null) | "\(.node_guid) \(.port)"' "$1.json" | sort; }
prom_ports() {
	curl -s -m 20 "$U/metrics" | sed -n 's/^infiniband_\(switch\|hca\)_port_transmit_data_bytes_total{guid="\([^"]*\)",port="\([0-9]*\)"} .*/\2 \3/p' | sort
}

# 1. Start.
start_agent node0001 --no-state-file --no-snmp --counter-interval 30 ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
for _ in $(seq 1 100); do
	[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$U/healthz")" = 200 ] && break
	sleep 0.1
done
check "/healthz answers 200" test "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$U/healthz")" = 200
for _ in $(seq 1 100); do st | jqe '.sweeps.counter_sweeps >= 1' && break; sleep 0.1; done
st >start.json
check "the first counter sweep is done (before the 30 s interval's first sweep could be): $(jq -c .sweeps.counter_sweep start.json)" \
	jqe '.sweeps.counter_sweeps == 1' <start.json
check "... it ran at full speed after the first discovery: reason start, spread_seconds 0" \
	jqe '.sweeps.counter_sweep | .reason == "start" and .spread_seconds == 0 and .running == false' <start.json
check "... and read every port: ports_read == ports == $nref, none unreachable" \
	jqe --argjson n "$nref" '.sweeps.counter_sweep | .ports == $n and .ports_read == $n and .ports_unreachable == 0' <start.json
api_ports api1 >api1.txt
prom_ports >prom1.txt
check "every port ibnetdiscover knows has counters in /api/v1/ports ($(wc -l <api1.txt) of $nref)" cmp -s ref-ports.txt api1.txt ||
	diff ref-ports.txt api1.txt | head -5 | sed 's/^/# /'
check "... and every one with a cable in /metrics ($(wc -l <prom1.txt) of $ncab)" cmp -s ref-cabled.txt prom1.txt ||
	diff ref-cabled.txt prom1.txt | head -5 | sed 's/^/# /'

# 2. The local port lost and back. A lost ping makes the agent ask its
# own port at once; it then looks again after 1 s, 2 s, ...
sim 'Unlink "node0001"[1]'
for _ in $(seq 1 300); do st | jqe '.local_port_lost == true' && break; sleep 0.1; done
check "local link unlinked: the agent reports its local port lost" jqe '.local_port_lost == true' < <(st)
relinked=$(now)
sim 'Relink "node0001"[1]'
for _ in $(seq 1 300); do st | jqe '.local_port_lost == false' && break; sleep 0.1; done
check "relinked: the local port is back" jqe '.local_port_lost == false' < <(st)
for _ in $(seq 1 100); do
	st | jqe '.sweeps.counter_sweep | .reason == "local_port_back" and .running == false' && break
	sleep 0.1
done
st >back.json
check "a counter sweep at full speed follows: reason local_port_back, spread_seconds 0, started after the relink ($relinked): $(jq -c .sweeps.counter_sweep back.json)" \
	jqe --arg t "$relinked" '.sweeps.counter_sweep | .reason == "local_port_back" and .spread_seconds == 0 and .running == false and .started > $t' <back.json
check "... it read every port" \
	jqe --argjson n "$nref" '.sweeps.counter_sweep | .ports == $n and .ports_read == $n and .ports_unreachable == 0' <back.json
started=$(jq -r .sweeps.counter_sweep.started back.json)
api_ports api2 >api2.txt
check "every port has counters in /api/v1/ports, read after the port came back and not stale" \
	jqe --arg t "$started" --argjson n "$nref" '[.[] | select(.counters != null and .counters.updated >= $t and .counters.stale == false)] | length == $n' <api2.json
check "... the same ports as before" cmp -s ref-ports.txt api2.txt
prom_ports >prom2.txt
check "... and in /metrics" cmp -s ref-cabled.txt prom2.txt
check "the agent stops on SIGTERM" stopped_clean "$agent"

# 3. A spread sweep publishes as it goes. Its first sweep runs at full
# speed; the one 10 s later is spread over 8 s.
start_agent node0001 --no-state-file --no-snmp --counter-interval 10 ||
	{ echo "not ok - the agent does not start again"; exit 1; }
U=http://127.0.0.1:$P
for _ in $(seq 1 300); do
	st | jqe '.sweeps.counter_sweep | .running and .spread_seconds > 0' && break
	sleep 0.1
done
check "the second sweep is spread (reason interval, over 8 s): $(st | jq -c .sweeps.counter_sweep)" \
	jqe '.sweeps.counter_sweeps == 1 and (.sweeps.counter_sweep | .reason == "interval" and .spread_seconds == 8)' < <(st)
# Status, ports, status: when both statuses name the same snapshot, the
# ports are that snapshot's.
sweep0=$(st | jq -r .sweeps.counter_sweep.started)
seen=() agree=0 disagree=0
for _ in $(seq 1 200); do
	st >s1.json
	jq -e --arg s "$sweep0" '.sweeps.counter_sweep | .running and .started == $s' s1.json >/dev/null || break
	curl -s -m 20 "$U/api/v1/ports" >p.json
	st >s2.json
	q1=$(jq .snapshot_seq s1.json) q2=$(jq .snapshot_seq s2.json)
	[ "$q1" = "$q2" ] || continue
	k=$(jq .sweeps.counter_sweep.ports_read s1.json)
	m=$(jq --arg s "$sweep0" '[.[] | select(.counters != null and .counters.updated >= $s)] | length' p.json)
	if [ "$k" = "$m" ]; then agree=$((agree + 1)); else disagree=$((disagree + 1)); echo "# snapshot $q1: status says $k read, it holds $m"; fi
	[ "$k" -gt 0 ] && [ "$k" -lt "$nref" ] && [[ " ${seen[*]} " != *" $k "* ]] && seen+=("$k")
	sleep 0.2
done
echo "# while the spread sweep ran, ports_read seen: ${seen[*]}"
check "while it runs, what it has read is published: ports_read grew across snapshots (${seen[*]})" \
	test ${#seen[@]} -ge 2
check "... each snapshot holds exactly the ports its status says were read ($agree agree, $disagree not)" \
	test "$agree" -ge 2 -a "$disagree" = 0
for _ in $(seq 1 100); do st | jqe '.sweeps.counter_sweeps >= 2' && break; sleep 0.1; done
check "... and the sweep ends with every port read" \
	jqe --argjson n "$nref" '.sweeps.counter_sweeps >= 2 and .sweeps.counter_sweep.ports_read == $n' < <(st)

finish
