#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# What each front end shows of each port over time, on the side-by-side
# fabric (tests/fixtures/side-by-side.net), under the kernel model:
#  1. the dual-port HCA node0004: its second port is read through its own
#     LID; its counters equal perfquery's at that LID (read before and
#     after ours) in /api/v1/ports, /metrics (named by the port's GUID, as
#     infiniband_exporter names it), IBWATCH-MIB through a real snmpd and
#     --once; its info and rate rows are there; LinkDowned at that end
#     alone makes its link, and only it, failing in the link view and
#     ibwLinkTable;
#  2. absent means absent: a host unlinked is gone from /metrics after
#     the first discovery that started after the unlink (no row with its
#     port GUID, none of the leaf's port to it); spine02's PMA silenced
#     (the model's dead-LID file, PerfMgt only): no counter sample of it
#     while its collect_timeout is 1 (JSON keeps the totals, stale); when
#     it answers again they come back and continue, with no reset;
#  3. --textfile: the exposition for node_exporter's textfile collector,
#     promtool-clean, without timestamps, with the exporter's run-once
#     collector names and last_execution, renamed into place (no
#     temporary file left), read by a real node_exporter; a run that
#     finds FILE.lock held (another run, or two started together)
#     writes nothing and exits 75.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}"

if [ -z "${IBW_SIM_DIR:-}" ]; then
	exec "$here/lib/with-fabric.sh" metrics_rows \
		"$here/fixtures/side-by-side.net" --sm node0008 -- "$0"
fi
trap stop_started EXIT
[ -n "${IBW_KM_STATE_DIR:-}" ] || { echo "not ok - the kernel model is not on (IBW_KM_STATE_DIR unset)"; exit 1; }

ROOT=.1.3.6.1.4.1.32473
MIBARGS=(-M "$here/../mib:$here/../mib/ietf" -m IBWATCH-MIB)
export MIBS="" MIBDIRS=""
export SNMP_PERSISTENT_DIR=$PWD/snmp-persist SNMPCONFPATH=$PWD/snmp-conf
mkdir -p "$SNMP_PERSISTENT_DIR" "$SNMPCONFPATH"

# The reference: ibnetdiscover's port list. node0004's ports, node0002's
# and spine02's LID and GUIDs.
at node0001 ibnetdiscover -p >netdisc.txt 2>netdisc.err
pl() { # pl NAME PORT FIELD: ibnetdiscover -p's CA line of NAME port PORT
	awk -v n="'$1 HCA-1'" -v p="$2" -v f="$3" \
		'$1 == "CA" && $3 == p && index($0, "( " n " ") { print $f; exit }' netdisc.txt
}
lid2=$(pl node0004 2 2) guid1=$(pl node0004 1 4) guid2=$(pl node0004 2 4)
guidh2=$(pl node0002 1 4)
sw() { # sw NAME FIELD: of a connected port's line of switch NAME
	awk -v n="( '$1' - " -v f="$2" '$1 == "SW" && index($0, n) { print $f; exit }' netdisc.txt
}
spine02=$(sw spine02 4) spine02_lid=$(sw spine02 2) leaf01=$(sw leaf01 4)
check "... spine02 ($spine02, LID $spine02_lid) and leaf01 ($leaf01)" \
	test -n "$spine02" -a -n "$spine02_lid" -a -n "$leaf01" -a "$spine02" != "$leaf01"
check "ibnetdiscover shows node0004's two ports, with two LIDs and GUIDs ($guid1, $guid2 at LID $lid2)" \
	test -n "$lid2" -a -n "$guid1" -a -n "$guid2" -a "$guid1" != "$guid2"
node4=$(at node0001 smpquery nodeinfo "$lid2" 2>/dev/null | awk -F'[.:]+' '$1 == "Guid" { print $NF }')
check "smpquery nodeinfo $lid2: node0004's node GUID is $node4, not a port's" \
	test -n "$node4" -a "$node4" != "$guid1" -a "$node4" != "$guid2"

# Error counters known before the agent's first reading.
sim 'PerformanceSet "node0004"[2] PortCounters.SymbolErrorCounter=7'
sim 'PerformanceSet "node0004"[2] PortCounters.PortRcvErrors=3'

# snmpd with the agent as its subagent.
SOCK=$PWD/agentx.sock
snmp_port=$(free_port)
cat >snmpd.conf <<EOF
master agentx
agentXSocket $SOCK
agentXTimeout 5
rocommunity public 127.0.0.1
EOF
start_snmpd || bad "snmpd does not start"
A=(-v2c -c public -t 2 -r 1 "127.0.0.1:$snmp_port")

: >dead-lids
IBW_KM_DEAD_FILE=$PWD/dead-lids IBW_KM_DEAD_CLASSES=pma \
	start_agent node0001 --no-state-file --agentx "$SOCK" --no-ping \
	--discovery-interval 1 --counter-interval 1 --counter-full-speed \
	--link-threshold link_downed_per_hour=10 ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
st() { curl -s -m 5 "$U/api/v1/status"; }
sweeps() { st | jq '.sweeps.counter_sweeps // 0'; }
# wait_sweeps N: until N more counter sweeps have ended (at most 30 s)
wait_sweeps() {
	local c0 i
	c0=$(sweeps)
	for i in $(seq 1 150); do
		[ "$(sweeps)" -ge $((c0 + $1)) ] && return 0
		sleep 0.2
	done
	return 1
}
wait_sweeps 2 || bad "no counter sweep in 30 s"
for _ in $(seq 1 100); do
	snmpget "${A[@]}" -Oqv "$ROOT.1.1.1.0" 2>/dev/null | grep -q . && break
	sleep 0.2
done

# 1. node0004 port 2, against perfquery at its LID before and after.
pq_field() { awk -F'[.:]+' -v f="$2" '$1 == f { print $NF }' "$1"; }
at node0001 perfquery -x "$lid2" 2 >pq1x.txt 2>&1
at node0001 perfquery "$lid2" 2 >pq1.txt 2>&1
wait_sweeps 2 || bad "no counter sweep in 30 s"
curl -s -m 5 "$U/api/v1/ports" >ports.json
curl -s -m 5 "$U/metrics" >m1.prom
idx=$(port_row "$(printf '0x%016x' $((node4)))" 2)
# ibwPortTable ($ROOT.1.3), the row of (node0004, 2)
snmpwalk "${A[@]}" -On -Oq "$ROOT.1.3" 2>/dev/null | grep "\.$idx " >mib-port2.txt
at node0001 "$IBWATCHD" --once --full --no-state-file --no-ping >once.json 2>once.err
at node0001 perfquery -x "$lid2" 2 >pq2x.txt 2>&1
at node0001 perfquery "$lid2" 2 >pq2.txt 2>&1
x1=$(( $(pq_field pq1x.txt PortXmitData) * 4 )) x2=$(( $(pq_field pq2x.txt PortXmitData) * 4 ))
r1=$(( $(pq_field pq1x.txt PortRcvPkts) )) r2=$(( $(pq_field pq2x.txt PortRcvPkts) ))
echo "# perfquery -x $lid2 2: PortXmitData bytes $x1 .. $x2, PortRcvPkts $r1 .. $r2"
p2='.[] | select(.node_guid == "'"$node4"'" and .port == 2)'
check "/api/v1/ports: node0004 port 2 at ibnetdiscover's LID $lid2, port GUID $guid2, read (not stale)" \
	jq -e "$p2 | .lid == $lid2 and .guid == \"$guid2\" and .counters.stale == false" ports.json
check "/api/v1/ports: its transmit_data_bytes and receive_packets within perfquery's before and after" \
	jq -e --argjson x1 "$x1" --argjson x2 "$x2" --argjson r1 "$r1" --argjson r2 "$r2" \
	"$p2 | .counters.totals | .transmit_data_bytes >= \$x1 and .transmit_data_bytes <= \$x2 and
		.receive_packets >= \$r1 and .receive_packets <= \$r2" ports.json
check "/api/v1/ports: its symbol_errors 7 and receive_errors 3, as perfquery says ($(pq_field pq2.txt SymbolErrorCounter), $(pq_field pq2.txt PortRcvErrors))" \
	jq -e "$p2 | .counters.totals.symbol_errors == 7 and .counters.totals.receive_errors == 3
		and $(pq_field pq2.txt SymbolErrorCounter) == 7 and $(pq_field pq2.txt PortRcvErrors) == 3" ports.json
mval() { awk -v k="$2" 'index($0, k) == 1 { print $2; exit }' "$1"; }
mx=$(mval m1.prom "infiniband_hca_port_transmit_data_bytes_total{guid=\"$guid2\",port=\"2\"} ")
check "/metrics: infiniband_hca_port_transmit_data_bytes_total{guid=\"$guid2\",port=\"2\"} $mx within perfquery's" \
	test -n "$mx" -a "${mx:-0}" -ge "$x1" -a "${mx:-0}" -le "$x2"
check "/metrics: its symbol_error_total 7 and receive_errors_total 3" \
	test "$(mval m1.prom "infiniband_hca_port_symbol_error_total{guid=\"$guid2\",port=\"2\"} ")" = 7 -a \
	"$(mval m1.prom "infiniband_hca_port_receive_errors_total{guid=\"$guid2\",port=\"2\"} ")" = 3
check "/metrics: infiniband_hca_info of each port, by its GUID and LID" \
	grep -q "^infiniband_hca_info{guid=\"$guid2\",hca=\"node0004 HCA-1\",lid=\"$lid2\"} 1$" m1.prom
check "/metrics: ... and a rate row each (4x SDR, 1e9 bytes per second)" \
	bash -c "grep -q '^infiniband_hca_rate_bytes_per_second{guid=\"$guid2\"} 1000000000$' m1.prom &&
		grep -q '^infiniband_hca_rate_bytes_per_second{guid=\"$guid1\"} 1000000000$' m1.prom"
check "/metrics: no infiniband_hca_ row names an HCA by its node GUID" \
	bash -c "! grep '^infiniband_hca_' m1.prom | grep -q 'guid=\"$node4\"'"
mibv() { awk -v c="$ROOT.1.3.1.$1.$idx" '$1 == c { print $2 }' mib-port2.txt; }
check "IBWATCH-MIB: ibwPortLid of (node0004, 2) is $lid2, ibwPortSymbolErrors 7, ibwPortRcvErrors 3" \
	test "$(mibv 4)" = "$lid2" -a "$(mibv 20)" = 7 -a "$(mibv 23)" = 3
mibx=$(mibv 34)
check "IBWATCH-MIB: ibwPortXmitDataBytes $mibx within perfquery's" \
	test -n "$mibx" -a "${mibx:-0}" -ge "$x1" -a "${mibx:-0}" -le "$x2"
check "--once: node0004 port 2 at LID $lid2 with its counters read" \
	jq -e ".ports | $p2 | .lid == $lid2 and .counters.stale == false and .counters.totals.symbol_errors == 7" once.json

# LinkDowned at port 2 alone: its link fails, node0004's other does not.
sim 'PerformanceSet "node0004"[2] PortCounters.LinkDownedCounter=20'
wait_sweeps 2 || bad "no counter sweep in 30 s"
curl -s -m 5 "$U/api/v1/links?node=node0004%20HCA-1" >links4.json
check "the link view: node0004 port 2's link failing for link_downed, its port 1's ok" \
	jq -e '[.links[] | {p: (.ends[] | select(.name == "node0004 HCA-1") | .port), h: .health, r: .reasons}]
		| sort_by(.p) == [{p: 1, h: "ok", r: []}, {p: 2, h: "failing", r: ["link_downed"]}]' links4.json
snmpwalk "${A[@]}" "${MIBARGS[@]}" -Oq IBWATCH-MIB::ibwLinkReasons >mib-links.txt 2>&1
# the cable's row: its lower end's port row
lrow=$(port_row $(jq -r '.links[] | select(.health == "failing") | "\(.ends[0].guid) \(.ends[0].port)"' links4.json))
check "ibwLinkTable: link_downed at (node0004, 2) only (row ${lrow:-none})" \
	bash -c "[ \$(grep -c link_downed mib-links.txt) = 1 ] && grep -qx 'IBWATCH-MIB::ibwLinkReasons\.$lrow link_downed' mib-links.txt"

# 2. Absent means absent. A host unlinked: gone after one discovery.
t_unlink=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
sim 'Unlink "node0002"[1]'
for _ in $(seq 1 150); do
	st >s.json
	jq -e --arg t "$t_unlink" '.sweeps.discovery.start > $t and .sweeps.discoveries > 0' s.json >/dev/null && break
	sleep 0.2
done
curl -s -m 5 "$U/metrics" >m2.prom
check "a discovery started after the unlink has ended ($(jq -r .sweeps.discovery.start s.json))" \
	jq -e --arg t "$t_unlink" '.sweeps.discovery.start > $t' s.json
check "/metrics then: no infiniband_ row names node0002's port ($guidh2)" \
	bash -c "! grep '^infiniband_' m2.prom | grep -q '$guidh2'"
check "... nor leaf01's port 2, its cable's other end" \
	bash -c "! grep '^infiniband_' m2.prom | grep -q 'guid=\"$leaf01\",port=\"2\"'"
check "... while leaf01's port 1 still has its rows" \
	grep -q "^infiniband_switch_port_transmit_data_bytes_total{guid=\"$leaf01\",port=\"1\"}" m2.prom
sim 'Relink "node0002"[1]'

# spine02's PMA silent: no samples, collect_timeout 1; back, continuing.
sp='.[] | select(.node_guid == "'"$spine02"'" and .port == 1)'
curl -s -m 5 "$U/api/v1/ports" >before.json
v0=$(jq "$sp | .counters.totals.transmit_data_bytes" before.json)
echo "$spine02_lid" >dead-lids
for _ in $(seq 1 150); do
	curl -s -m 5 "$U/metrics" >m3.prom
	grep -q "^infiniband_switch_collect_timeout{collector=\"switch\",guid=\"$spine02\"} 1$" m3.prom && break
	sleep 0.2
done
curl -s -m 5 "$U/api/v1/ports" >silent.json
check "spine02's PMA silent: its collect_timeout is 1, its collect_error 0" \
	bash -c "grep -q '^infiniband_switch_collect_timeout{collector=\"switch\",guid=\"$spine02\"} 1$' m3.prom &&
		grep -q '^infiniband_switch_collect_error{collector=\"switch\",guid=\"$spine02\"} 0$' m3.prom"
check "... it has no counter sample (neither infiniband_ nor ibwatch_)" \
	bash -c "! grep -q '_total{guid=\"$spine02\",' m3.prom"
check "... infiniband_exporter_collect_timeouts{collector=\"switch\"} counts it" \
	grep -q '^infiniband_exporter_collect_timeouts{collector="switch"} 1$' m3.prom
check "... its info, rates and uplinks stay (discovery still sees it)" \
	bash -c "grep -q '^infiniband_switch_info{guid=\"$spine02\"' m3.prom &&
		grep -q '^infiniband_switch_port_rate_bytes_per_second{guid=\"$spine02\",port=\"1\"} 2000000000$' m3.prom &&
		grep -q '^infiniband_switch_uplink_info{guid=\"$spine02\",port=\"1\"' m3.prom"
check "... JSON keeps its totals, marked stale ($v0 bytes)" \
	jq -e --argjson v "$v0" "$sp | .counters.stale == true and .counters.totals.transmit_data_bytes == \$v" silent.json
: >dead-lids
for _ in $(seq 1 150); do
	curl -s -m 5 "$U/metrics" >m4.prom
	grep -q "^infiniband_switch_collect_timeout{collector=\"switch\",guid=\"$spine02\"} 0$" m4.prom && break
	sleep 0.2
done
v1=$(mval m4.prom "infiniband_switch_port_transmit_data_bytes_total{guid=\"$spine02\",port=\"1\"} ")
check "answering again: its samples are back, continuing ($v0 -> $v1)" \
	test -n "$v1" -a "${v1:-0}" -ge "$v0"
curl -s -m 5 "$U/api/v1/ports" >after.json
check "... with no reset counted on any of its ports" \
	jq -e '[.[] | select(.node_guid == "'"$spine02"'") | .counters.resets // 0] | add == 0' after.json
curl -s -m 5 "$U/api/v1/events?limit=1000" >events.json
check "... and no counter_reset event" \
	jq -e '[.events[] | select(.kind == "counter_reset")] | length == 0' events.json

# 3. --textfile, for node_exporter's textfile collector.
mkdir -p tf
at node0001 "$IBWATCHD" --textfile "$PWD/tf/ibwatch.prom" --no-state-file --no-ping >tf.out 2>tf.err
check "--textfile exits 0 and prints nothing on stdout" test $? = 0 -a ! -s tf.out
check "... it leaves ibwatch.prom and its lock alone in the directory (no temporary file)" \
	test "$(ls tf | tr '\n' ' ')" = "ibwatch.prom ibwatch.prom.lock "
promtool check metrics <tf/ibwatch.prom >promtool.txt 2>&1
check "... promtool check metrics finds nothing" test $? = 0 -a ! -s promtool.txt
check "... the exporter's run-once collectors, each with its last_execution" \
	bash -c 'for c in ibnetdiscover switch hca; do
		grep -q "^infiniband_exporter_last_execution{collector=\"$c-runonce\"} [0-9]*$" tf/ibwatch.prom || exit 1
		grep -q "^infiniband_exporter_collect_errors{collector=\"$c-runonce\"} 0$" tf/ibwatch.prom || exit 1
	done'
check "... no sample with a timestamp (the collector refuses them)" \
	bash -c "! grep -v '^#' tf/ibwatch.prom | grep -Eq '} [^ ]+ [0-9]+$'"
check "... node0004's second port there too" \
	grep -q "^infiniband_hca_port_transmit_data_bytes_total{guid=\"$guid2\",port=\"2\"} [0-9]*$" tf/ibwatch.prom
ne_port=$(free_port)
prometheus-node-exporter --collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$PWD/tf" --web.listen-address="127.0.0.1:$ne_port" \
	>node_exporter.log 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do curl -s -m 2 "http://127.0.0.1:$ne_port/metrics" >ne.prom && break; sleep 0.2; done
check "node_exporter's textfile collector reads it without an error" \
	grep -q '^node_textfile_scrape_error 0$' ne.prom
check "... and serves its rows" \
	grep -q "^infiniband_hca_info{guid=\"$guid2\",hca=\"node0004 HCA-1\",lid=\"$lid2\"} 1$" ne.prom
ino1=$(stat -c %i tf/ibwatch.prom)
at node0001 "$IBWATCHD" --textfile "$PWD/tf/ibwatch.prom" --no-state-file --no-ping >tf2.out 2>tf2.err
check "a second run replaces the file by a rename (a new inode), nothing else left" \
	test "$(stat -c %i tf/ibwatch.prom)" != "$ino1" -a "$(ls tf | tr '\n' ' ')" = "ibwatch.prom ibwatch.prom.lock "
# Overlapping cron runs (issue 36): a run finding ibwatch.prom.lock held
# writes nothing, says who holds it and exits 75 (EX_TEMPFAIL).
ino1=$(stat -c %i tf/ibwatch.prom)
exec 9>tf/ibwatch.prom.lock
flock -n 9 && echo $$ >&9
at node0001 "$IBWATCHD" --textfile "$PWD/tf/ibwatch.prom" --no-state-file --no-ping >tf3.out 2>tf3.err 9>&-
rc=$?
exec 9>&-
check "a run while the lock is held exits 75 ($rc) and writes nothing" \
	test "$rc" = 75 -a "$(stat -c %i tf/ibwatch.prom)" = "$ino1" -a ! -s tf3.out
check "... and says which pid holds the lock ($(head -c 200 tf3.err))" \
	grep -q "another --textfile run (pid $$) holds $PWD/tf/ibwatch.prom.lock" tf3.err
# Two runs started together: one writes, the other reports the lock.
at node0001 "$IBWATCHD" --textfile "$PWD/tf/ibwatch.prom" --no-state-file --no-ping >tf4.out 2>tf4.err &
p4=$!
at node0001 "$IBWATCHD" --textfile "$PWD/tf/ibwatch.prom" --no-state-file --no-ping >tf5.out 2>tf5.err &
p5=$!
wait "$p4"; rc4=$?
wait "$p5"; rc5=$?
check "two runs at once: one exits 0, the other 75 ($rc4, $rc5)" \
	test "$(printf '%s\n' "$rc4" "$rc5" | sort -n | tr '\n' ' ')" = "0 75 "
check "... the one turned away says another run (a pid) holds the lock" \
	grep -q 'another --textfile run (pid [0-9]*) holds' tf4.err tf5.err
check "... the file was replaced once, and is whole" \
	eval 'test "$(stat -c %i tf/ibwatch.prom)" != "$ino1" && promtool check metrics <tf/ibwatch.prom >/dev/null 2>&1 &&
		test "$(ls tf | tr "\n" " ")" = "ibwatch.prom ibwatch.prom.lock "'
check "--textfile with --links is refused" \
	bash -c "! '$IBWATCHD' --textfile x.prom --links >/dev/null 2>&1"

finish
