#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Restarts under the agent, on the 32-host fat tree:
#  1. opensm restarted with LMC 1, so that the LIDs change: the agent
#     follows every port by GUID (its LIDs equal ibnetdiscover's), one
#     lid_changed event per port whose LID changed, counter totals stay
#     with their port (each host's SymbolErrorCounter set to its own
#     number first), no counter reset reported, all endports up again,
#     and none reported down in between (a lost ping is confirmed by
#     the SA or a directed route before the endport goes down); a
#     second agent that discovers only once follows every port whose
#     old LID nobody has any more by those confirmations alone (one
#     endport_moved event each, and one ibwEndportMoved notification
#     each through its snmpd to snmptrapd, with the same GUID and LIDs
#     as the event, found by their IBWATCH-MIB names); a third agent
#     that discovers once and does not ping reads counters at the old
#     LIDs, where another host answers (LMC 1: an old odd LID reaches
#     the host at the even one below it): every such reading is dropped
#     and every host's total stays its own;
#  2. the simulator itself killed (SIGKILL) and started again: the
#     agent keeps running and serving, reports its local port lost, marks
#     the data stale (JSON, /metrics, /healthz 503) while keeping the last
#     fabric, and does not spin (its loop wakes only for its timers and
#     our requests; tests/bench/idle_cpu.sh measures the CPU). umad2sim
#     connects to ibsim once per process, so a process that lived
#     through an ibsim restart cannot reach the new one: the agent is
#     restarted, as its unit would (Restart=on-failure), and comes back
#     with fresh data and the totals it had (state file).
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
# Every node's LID as ibnetdiscover sees it, "GUID LID": the port GUID
# for a CA, the node GUID for a switch (its LID is port 0's). Both ends
# of each link line, so that every node is there once.
ref_all() {
	at node0001 ibnetdiscover -p 2>/dev/null |
		awk '$1 ~ /^(CA|SW)$/ { print $4, $2 } $8 ~ /^(CA|SW)$/ && $11 ~ /^0x/ { print $11, $9 }' | sort -u
}
ref_all >lids0-all.txt
check "ibnetdiscover sees all 44 nodes before the change" test "$(wc -l <lids0-all.txt)" = 44
# A second agent that discovers once only: whatever LID changes it
# follows, it follows by confirming lost pings (the SA, else a directed
# route to the port), never by a discovery.
# It is a subagent of an snmpd (private AgentX socket) that sends its
# notifications to snmptrapd, both on loopback ports.
ROOT=.1.3.6.1.4.1.32473
MIBARGS=(-M "$here/../mib:$here/../mib/ietf" -m IBWATCH-MIB)
export MIBS="" MIBDIRS=""
export SNMP_PERSISTENT_DIR=$PWD/snmp-persist SNMPCONFPATH=$PWD/snmp-conf
mkdir -p "$SNMP_PERSISTENT_DIR" "$SNMPCONFPATH"
start_snmptrapd || { echo "not ok - snmptrapd does not start"; exit 1; }
SOCK=$PWD/agentx.sock
snmp_port=$(free_port)
printf '%s\n' "master agentx" "agentXSocket $SOCK" "agentXTimeout 5" \
	"rocommunity public 127.0.0.1" "trap2sink 127.0.0.1:$trap_port public" >snmpd.conf
start_snmpd || { echo "not ok - snmpd does not start"; exit 1; }
A=(-v2c -c public -t 2 -r 1 "127.0.0.1:$snmp_port")
agentA=$agent
start_agent node0002 --agentx "$SOCK" --no-state-file --discovery-interval 3600 \
	--counter-interval 3600 --ping-interval-ms 300 --ping-method pma \
	--down-after 2 --up-after 2 ||
	{ echo "not ok - the second agent does not start"; exit 1; }
agentB=$agent UB=http://127.0.0.1:$P agent=$agentA
for _ in $(seq 1 200); do
	curl -s -m 5 "$UB/api/v1/status" | jqe '.endports.up == 32' && break
	sleep 0.1
done
check "the second agent has all 32 endports up" jqe '.endports.up == 32' < <(curl -s -m 5 "$UB/api/v1/status")
for _ in $(seq 1 100); do
	[ "$(snmpget "${A[@]}" -Oqv "$ROOT.1.1.18.0" 2>/dev/null)" = 44 ] && break
	sleep 0.2
done
check "... and serves IBWATCH-MIB through snmpd (ibwFabricNodes.0 44)" \
	test "$(snmpget "${A[@]}" -Oqv "$ROOT.1.1.18.0" 2>&1)" = 44
evB=$(curl -s -m 5 "$UB/api/v1/events" | jq .last_seq)
# A third agent that discovers once and does not ping, reading counters
# every second: after the LID change it reads at the old LIDs, and
# nothing tells it of the move until its own port's LID changes (read
# every 10 s). With LMC 1 an old odd LID reaches the host whose base
# LID is the even one below it; every reading is checked by default
# (--counter-check always), so that host's counters never land in the
# moved host's totals.
start_agent node0003 --no-snmp --no-state-file --no-ping --discovery-interval 3600 \
	--counter-interval 1 ||
	{ echo "not ok - the third agent does not start"; exit 1; }
agentC=$agent UC=http://127.0.0.1:$P agent=$agentA
for _ in $(seq 1 200); do
	curl -s -m 5 "$UC/api/v1/ports?type=ca" |
		jqe 'length == 32 and all(.[]; .counters.totals.symbol_errors > 0)' && break
	sleep 0.1
done

# 1. opensm again, with LMC 1: LIDs that are not a multiple of 2 move.
"$IBW_SIMFABRIC" sm-restart "$IBW_SIM_DIR" "-l 1" || bad "opensm does not come back with LMC 1"
nC=$(curl -s -m 5 "$UC/api/v1/status" | jq '.sweeps.counter_sweeps')
ref() { at node0001 ibnetdiscover -p 2>/dev/null | awk '$1 == "CA" { print $4, $2 }' | sort; }
ours() { cas | jq -r '.[] | "\(.guid) \(.lid)"' | sort; }
same=0
for _ in $(seq 1 100); do
	ref >lids-ref.txt
	ours >lids-ours.txt
	if [ -s lids-ref.txt ] && cmp -s lids-ref.txt lids-ours.txt; then same=1; break; fi
	sleep 0.2
done
# What moved, from ibnetdiscover before and after (not from our own
# answers): "GUID old new" for each node whose LID changed.
ref_all >lids1-all.txt
join lids0-all.txt lids1-all.txt | awk '$2 != $3' >moved-ref.txt
moved=$(cut -d' ' -f1 moved-ref.txt | grep -c -x -F -f <(cut -d' ' -f1 lids-ref.txt))
check "every host port's LID equals ibnetdiscover's after the change ($moved of 32 moved, by ibnetdiscover)" \
	test $same = 1 -a "$(wc -l <lids1-all.txt)" = 44 -a "$moved" -gt 0
# Our events in the same form: a switch's LID is on port 0, named by its
# node GUID; a CA port by its port GUID (from the listing before).
ours_moved() {
	jq -r --slurpfile a ports0.json '.events[] | select(.kind == "lid_changed") | . as $e |
		($a[0][] | select(.node_guid == $e.node_guid and .port == $e.port) |
			if .node_type == "switch" then .node_guid else .guid end) + " \($e.old) \($e.new)"' events1.json | sort
}
want=$(wc -l <moved-ref.txt)
for _ in $(seq 1 50); do
	curl -s -m 5 "$U/api/v1/events?since=$ev0" >events1.json
	got=$(jq '[.events[] | select(.kind == "lid_changed")] | length' events1.json)
	[ "$got" -ge "$want" ] && break
	sleep 0.2
done
ours_moved >moved-ours.txt
check "one lid_changed event per node whose LID ibnetdiscover saw change ($got events, $want nodes)" \
	test "$got" = "$want" -a "$want" -gt 0
check "... each naming the port by GUID with ibnetdiscover's old and new LID" cmp -s moved-ref.txt moved-ours.txt ||
	diff moved-ref.txt moved-ours.txt | sed 's/^/# /'
# Two more counter sweeps at the new LIDs.
n=$(st | jq '.sweeps.counter_sweeps')
for _ in $(seq 1 100); do
	st | jqe --argjson n "$n" '.sweeps.counter_sweeps >= $n + 2' && break
	sleep 0.1
done
cas >ca1.json
check "counter totals stayed with their ports (each host's own number)" \
	jq -e 'length == 32 and all(.[]; .counters.totals.symbol_errors == (.node_name | ltrimstr("node") | .[0:4] | tonumber))' ca1.json
for _ in $(seq 1 300); do
	curl -s -m 5 "$UC/api/v1/status" | jqe --argjson n "$nC" '.sweeps.counter_sweeps >= $n + 5' && break
	sleep 0.1
done
curl -s -m 5 "$UC/api/v1/ports?type=ca" >caC.json
metrics_of "$UC" | awk '$1 == "ibwatch_pma_readings_lid_moved_total" { print $2 }' >lid-moved-C.txt
check "the agent that discovered once read at the old LIDs ($(cat lid-moved-C.txt) readings another node answered, dropped)" \
	test "$(cat lid-moved-C.txt)" -gt 0
check "... and every host's total is still its own number" \
	jq -e 'length == 32 and all(.[]; .counters.totals.symbol_errors == (.node_name | ltrimstr("node") | .[0:4] | tonumber))' caC.json ||
	jq -c '.[] | select(.counters.totals.symbol_errors != (.node_name | ltrimstr("node") | .[0:4] | tonumber)) | {node_name, lid, t: .counters.totals.symbol_errors}' caC.json | sed 's/^/# /'
check "... with no counter reset reported" \
	jq -e '[.events[] | select(.kind == "counter_reset")] | length == 0' <(curl -s -m 5 "$UC/api/v1/events")
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
# The LID change put the counters in "LIDs in flux" until a discovery
# found the LIDs settled and the sweep after it had run; every reading
# was checked with a NodeInfo to its LID (one per node and sweep).
metric() { metrics_of "$U" | awk -v n="$1" '$1 == n { print $2 }'; }
check "the LID change put the counters in LIDs in flux (the agent's log)" \
	grep -q "LIDs in flux (" "agent-${U##*:}.log"
settled=0
for _ in $(seq 1 300); do
	st | jqe '.sweeps.lids_in_flux == false' && { settled=1; break; }
	sleep 0.1
done
checks=$(metric ibwatch_lid_checks_total)
checked=$(metric ibwatch_pma_readings_checked_total)
check "the LID change had every counter reading checked ($checks NodeInfo checks for $checked readings: one per node, not per port)" \
	test "${checks:-0}" -gt 0 -a "${checked:-0}" -gt "${checks:-0}"
check "... until the LIDs settled (lids_in_flux false again)" test $settled = 1
for _ in $(seq 1 100); do
	st | jqe '.endports.up == 32' && break
	sleep 0.1
done
check "all 32 endports up at their new LIDs" jqe '.endports.up == 32' < <(st)
# No port went down: the SM only gave LIDs anew. An endport whose pings
# went to its old LID is looked for (the SA, else a directed route)
# before it may go down, and followed to its new LID.
curl -s -m 5 "$U/api/v1/events?since=$ev0" >events2.json
downs=$(jq '[.events[] | select(.kind == "endport_state" and .new == "down")] | length' events2.json)
check "no endport reported down through the LID change ($downs down events)" test "$downs" = 0 ||
	jq -c '.events[] | select(.kind == "endport_state")' events2.json | sed 's/^/# /'
# Those that moved before a discovery saw it: at the LID ibnetdiscover
# gives their port now.
jq -r '.events[] | select(.kind == "endport_moved") | "\(.port_guid) \(.new)"' events2.json | sort -u >moves.txt
check "each endport_moved event names the port's new LID by ibnetdiscover ($(wc -l <moves.txt) moved before a discovery)" \
	bash -c 'join moves.txt lids-ref.txt | awk "\$2 != \$3 { bad = 1 } END { exit bad }" && test "$(join moves.txt lids-ref.txt | wc -l)" = "$(wc -l <moves.txt)"'
# The second agent saw no discovery since its first. A ping to an old
# LID that another port's new LID range now covers (LMC 1: base and
# base + 1) is answered by that port, so the pinger cannot tell it from
# its own; every host port whose old LID nobody has any more was
# followed by confirming, each once, at ibnetdiscover's new LID.
check "the second agent saw no discovery since its first" \
	jqe '.sweeps.discoveries == 1' < <(curl -s -m 5 "$UB/api/v1/status")
# lids-ref.txt: host ports, base LIDs; lids1-all.txt: every node's.
{ cut -d' ' -f2 lids1-all.txt; awk '{ print $2 + 1 }' lids-ref.txt; } | sort -u >covered.txt
join lids0-all.txt lids-ref.txt | awk 'NR == FNR { c[$1] = 1; next } !($2 in c) { print $1, $2, $3 }' covered.txt - >orphaned.txt
for _ in $(seq 1 100); do
	curl -s -m 5 "$UB/api/v1/events?since=$evB" >eventsB.json
	[ "$(jq '[.events[] | select(.kind == "endport_moved")] | length' eventsB.json)" -ge "$(wc -l <orphaned.txt)" ] && break
	sleep 0.2
done
jq -r '.events[] | select(.kind == "endport_moved") | "\(.port_guid) \(.old) \(.new)"' eventsB.json | sort >movesB.txt
check "... one endport_moved event per host port whose old LID nobody has now, with its old and new LID by ibnetdiscover ($(wc -l <movesB.txt) events, $(wc -l <orphaned.txt) such ports)" \
	test -s orphaned.txt -a "$(cat orphaned.txt)" = "$(cat movesB.txt)" ||
	diff orphaned.txt movesB.txt | sed 's/^/# /'
curl -s -m 5 "$UB/api/v1/endports" | jq -r '.[] | "\(.port_guid) \(.lid)"' | sort >lids-B.txt
check "... pinging those at their new LIDs" \
	test "$(join lids-B.txt orphaned.txt | awk '$2 == $4' | wc -l)" = "$(wc -l <orphaned.txt)"
# Those moves (and its own port's new LID, read every 10 s) are signs
# of LIDs in flux to its counters, and with no discovery since, nothing
# says the LIDs have settled.
for _ in $(seq 1 50); do
	curl -s -m 5 "$UB/api/v1/status" | jqe '.sweeps.lids_in_flux == true' && break
	sleep 0.1
done
check "... which put its counters in LIDs in flux (no discovery since to settle them)" \
	jqe '.sweeps.lids_in_flux == true' < <(curl -s -m 5 "$UB/api/v1/status")
# The same moves as notifications: one ibwEndportMoved each, with the
# port GUID, the old and the new LID, its objects found by their
# IBWATCH-MIB names (snmptrapd logs one notification a line, varbinds
# tab-separated, numeric).
oid_of() { snmptranslate -On "${MIBARGS[@]}" "IBWATCH-MIB::$1"; }
tmoved="= OID: $(oid_of ibwEndportMoved)	"
for _ in $(seq 1 50); do
	[ "$(grep -c -F "$tmoved" traps.log)" -ge "$(wc -l <movesB.txt)" ] && break
	sleep 0.2
done
: >movesB-traps.txt
: >movesB-why.txt
awk -v t="$tmoved" -v g="$(oid_of ibwEndportPortGuid)." -v l="$(oid_of ibwEndportLid)." \
	-v p="$(oid_of ibwNotifyPrevLid).0 = " -v r="$(oid_of ibwNotifyMoveReason).0 = " '
	index($0, t) {
		n = split($0, f, "\t"); guid = lid = prev = why = "-"
		for (i = 1; i <= n; i++) {
			v = f[i]; sub(/^[^=]* = [^:]*: /, "", v)
			if (index(f[i], g) == 1) { gsub(/"/, "", v); guid = v }
			else if (index(f[i], l) == 1) lid = v
			else if (index(f[i], p) == 1) prev = v
			else if (index(f[i], r) == 1) why = v
		}
		print guid, prev, lid >"movesB-traps.txt"; print why >"movesB-why.txt"
	}' traps.log
sort -o movesB-traps.txt movesB-traps.txt
check "snmptrapd got one ibwEndportMoved per endport_moved event, with its port GUID, old and new LID ($(wc -l <movesB-traps.txt) notifications)" \
	cmp -s movesB.txt movesB-traps.txt || diff movesB.txt movesB-traps.txt | sed 's/^/# /'
check "... each with ibwNotifyMoveReason 'found by ...' ($(sort -u movesB-why.txt | tr '\n' ' '))" \
	awk '!/^"found by (the SA|a directed route|its port, silent there yet)"$/ { bad = 1 } END { exit bad || !NR }' movesB-why.txt
downsB=$(jq '[.events[] | select(.kind == "endport_state" and .new == "down")] | length' eventsB.json)
check "... and no endport down ($downsB down events)" test "$downsB" = 0 ||
	jq -c '.events[] | select(.kind == "endport_state")' eventsB.json | sed 's/^/# /'
check "the second agent stops on SIGTERM with exit status 0" stopped_clean "$agentB"
check "the third agent stops on SIGTERM with exit status 0" stopped_clean "$agentC"

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
metrics_of "$U" >lost.prom
check "/metrics says stale and the local port not active" \
	grep -qx 'ibwatch_stale 1' lost.prom
check "... (ibwatch_local_port_active 0)" grep -qx 'ibwatch_local_port_active 0' lost.prom
check "/healthz is 503" test "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$U/healthz")" = 503
# No spin: its loop wakes only for its timers and our requests, over 20
# snapshots (tap.sh, idle_loop).
idle=$(wakeups_over 20)
check "the agent does not spin while the simulator is gone: $(printf '%s loop wakeups for %s snapshots, %s requests and %s MADs sent' $idle)" idle_loop $idle
check "the agent is still running" kill -0 "$agent"
"$IBW_SIMFABRIC" restart "$IBW_SIM_DIR" || bad "the simulator does not come back"
# While its port is lost the agent looks again every 1-2 s and publishes
# every ping interval: two more snapshots show its loop went on with
# the new simulator there.
q=$(st | jq '.snapshot_seq')
for _ in $(seq 1 100); do
	st | jqe --argjson q "${q:-0}" '.snapshot_seq >= $q + 2' && break
	sleep 0.1
done
check "... and still serving after the simulator is back (snapshot $q -> $(st | jq .snapshot_seq))" \
	jqe --argjson q "${q:-0}" '.snapshot_seq >= $q + 2' < <(st)
# umad2sim cannot reconnect a process to a new ibsim: restart the agent
# as systemd would. The simulator came back with its counters cleared;
# two ports count a few errors again before the agent reads them (below
# their old values, else a reset cannot be told from counting on).
# No counter sweep runs while the port is lost, so the state file is
# written only at exit: removed first, it must be there again after the
# SIGTERM, with the totals the agent had.
mv state.json state-before.json
check "the agent stops on SIGTERM with exit status 0" stopped_clean "$agent"
check "... writing its state file at exit, with node0005's total 500" bash -c '
	g=$(jq -r ".[] | select(.node_name == \"node0005 HCA-1\") | .node_guid" ca1.json)
	[ -s state.json ] && awk -v g="$g" '\''$1 == "p" && $2 == g && $3 == 1 { split($8, f, ":"); print f[1] }'\'' state.json | grep -qx 500'
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
