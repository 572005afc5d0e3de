#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# With a real snmpd (private AgentX socket, loopback port) on an 8-host
# fat tree, what no other test exercises:
#  - the counter discontinuity time: 1970-01-01 in the MIB and null in
#    the JSON until someone else resets a port's counters, then the time
#    the agent saw it, the same in ibwPortCounterDiscontinuityTime and
#    /api/v1/ports, with ibwPortCounterResets 1;
#  - ibwAgentSnapshotStale: false, true while the local port is lost,
#    false again once it is back;
#  - while the local port is lost, pings and counter reads pause (no
#    probe sent, no counter sweep) and resume when it is back;
#  - snmptrapd (through snmpd's trap2sink) gets one ibwLocalPortLost and
#    then one ibwLocalPortBack, decoded with IBWATCH-MIB loaded: the
#    local port's scalars, the state found (down), stale, and the time
#    lost, the event's lost_ms.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree mib_more 8

trap stop_started EXIT

ROOT=.1.3.6.1.4.1.32473
export MIBS="" MIBDIRS=""
export SNMP_PERSISTENT_DIR=$PWD/snmp-persist
export SNMPCONFPATH=$PWD/snmp-conf # no /etc/snmp for the tools
mkdir -p "$SNMP_PERSISTENT_DIR" "$SNMPCONFPATH"
jt() { jq -e "$@" >/dev/null; }
MIBARGS=(-M "$here/../mib:$here/../mib/ietf" -m IBWATCH-MIB)

start_snmptrapd || { echo "not ok - snmptrapd does not start"; exit 1; }

# snmpd: master agent on ./agentx.sock, SNMP on a loopback port.
SOCK=$PWD/agentx.sock
started=0
for _ in 1 2 3 4 5; do
	snmp_port=$(free_port)
	cat >snmpd.conf <<EOF
master agentx
agentXSocket $SOCK
agentXTimeout 5
rocommunity public 127.0.0.1
trap2sink 127.0.0.1:$trap_port public
EOF
	start_snmpd && { started=1; break; }
	stop "$snmpd_pid"
done
[ $started = 1 ] || { echo "not ok - snmpd does not start"; exit 1; }
A=(-v2c -c public -t 2 -r 1 "127.0.0.1:$snmp_port")
sget() { snmpget "${A[@]}" -Oqv "$@" 2>&1; }

start_agent node0001 --no-state-file --agentx "$SOCK" --log-level debug --ping-method pma \
	--discovery-interval 2 --counter-interval 1 --ping-interval-ms 200 ||
	{ echo "not ok - the agent does not start"; exit 1; }
U() { echo "http://127.0.0.1:$P$1"; }
st() { curl -s -m 5 "$(U /api/v1/status)"; }
for _ in $(seq 1 200); do st | jqe '.endports.up == 8 and .sweeps.counter_sweeps >= 1' && break; sleep 0.1; done
for _ in $(seq 1 100); do sget "$ROOT.1.1.1.0" | grep -q '^"\?0\.' && break; sleep 0.2; done
check "the agent serves: 8 endports up, counters read, IBWATCH-MIB registered (ibwFabricNodes 14) ($(sget "$ROOT.1.1.1.0"))" \
	bash -c 'jq -e ".endports.up == 8 and .stale == false" <<<"$1" >/dev/null && [ "$2" = 14 ]' _ "$(st)" "$(sget "$ROOT.1.1.18.0")"

# node0005 port 1: GUID 0x0000000000100008, its row in the port table.
G5=0x0000000000100008
IDX5=$(port_row $G5 1)
p5() { curl -s -m 5 "$(U "/api/v1/ports?guid=$G5")" | jq -c '.[] | select(.port == 1) | .counters'; }
# DateAndTime (-Ox: hex octets) of an RFC 3339 time, or of 1970 for null
dat() {
	python3 - "$1" <<'PY'
import datetime, sys
t = sys.argv[1]
if t == "null":
    d = datetime.datetime(1970, 1, 1)
else:
    d = datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ")
b = [d.year >> 8, d.year & 255, d.month, d.day, d.hour, d.minute, d.second, d.microsecond // 100000, ord("+"), 0, 0]
print(" ".join("%02X" % x for x in b))
PY
}
mib_time() { snmpget "${A[@]}" -Oqvx "$ROOT.1.3.1.17.$IDX5" 2>&1 | tr -d '"' | xargs; }

# 1. The discontinuity time: none yet.
d0=$(p5 | jq -r .discontinuity_time)
check "before any reset: discontinuity_time null in the JSON, resets 0" jt '.discontinuity_time == null and .resets == 0' <<<"$(p5)"
check "... and 1970-01-01 in ibwPortCounterDiscontinuityTime ($(mib_time))" test "$(mib_time)" = "$(dat null)"

# Someone else resets the port's symbol errors: 100, then 3.
sim "PerformanceSet \"node0005\"[1] PortCounters.SymbolErrorCounter=100"
for _ in $(seq 1 100); do p5 | jqe '.raw.SymbolErrorCounter == 100' && break; sleep 0.1; done
t0=$(date -u +%s.%N)
sim "PerformanceSet \"node0005\"[1] PortCounters.SymbolErrorCounter=3"
for _ in $(seq 1 100); do p5 | jqe '.resets == 1' && break; sleep 0.1; done
t1=$(date -u +%s.%N)
c5=$(p5)
d1=$(jq -r .discontinuity_time <<<"$c5")
echo "# discontinuity_time $d1, set between $t0 and $t1"
check "a reset by someone else: resets 1, the total goes on (103), the discontinuity time set ($d1)" \
	jt '.resets == 1 and .totals.symbol_errors == 103 and .discontinuity_time != null' <<<"$c5"
check "... to when the agent saw it: after the reset, before we saw it ($t0 <= $d1 <= $t1)" \
	python3 -c 'import datetime, sys
d = datetime.datetime.strptime(sys.argv[1], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()
sys.exit(not (float(sys.argv[2]) <= d <= float(sys.argv[3])))' "$d1" "$t0" "$t1"
check "... the MIB says the same: ibwPortCounterDiscontinuityTime $(mib_time) = $(dat "$d1")" \
	test "$(mib_time)" = "$(dat "$d1")"
check "... ibwPortCounterResets 1, ibwPortSymbolErrors 103" \
	test "$(sget "$ROOT.1.3.1.18.$IDX5") $(sget "$ROOT.1.3.1.20.$IDX5")" = "1 103"
check "... a counter_reset event" \
	jt --arg g $G5 '[.events[] | select(.kind == "counter_reset" and .node_guid == $g and .port == 1)] | length == 1' \
	<<<"$(curl -s -m 5 "$(U /api/v1/events)")"

# 2. ibwAgentSnapshotStale, and the pause while the local port is lost.
check "ibwAgentSnapshotStale is false(2) on a fresh snapshot" test "$(sget "$ROOT.1.1.10.0")" = 2
sim 'Unlink "node0001"[1]'
for _ in $(seq 1 100); do st | jqe '.local_port_lost == true' && break; sleep 0.1; done
check "local link unlinked: the JSON says stale, local port lost" jt '.stale == true and .local_port_lost == true' <<<"$(st)"
check "... and ibwAgentSnapshotStale is true(1)" test "$(sget "$ROOT.1.1.10.0")" = 1
# What pings and counter sweeps had done when the port was found lost;
# then two more looks at the port (1 s, then 2 s later: over 3 s, in
# which 15 pings per endport and 3 counter sweeps would have gone).
sent() { curl -s -m 5 "$(U /api/v1/endports)" | jq '[.[].sent] | add'; }
looks() { grep -c 'monitor: local port still down; next look in' "agent-$P.log"; }
# A sweep already under way when the port went ends (its reads fail):
# count from when none runs.
for _ in $(seq 1 100); do st | jqe '.sweeps.counter_sweep.running == false' && break; sleep 0.1; done
n0=$(looks) s0=$(sent) c0=$(st | jq .sweeps.counter_sweeps)
for _ in $(seq 1 100); do [ "$(looks)" -ge $((n0 + 2)) ] && break; sleep 0.1; done
n1=$(looks) s1=$(sent) c1=$(st | jq .sweeps.counter_sweeps)
echo "# while lost: looks $n0 -> $n1, probes sent $s0 -> $s1, counter sweeps $c0 -> $c1"
check "while it is lost (2 more looks at it), no ping is sent ($s0 -> $s1)" test "$n1" -ge $((n0 + 2)) -a "$s0" = "$s1" -a "$s0" -gt 0
check "... and no counter sweep runs ($c0 -> $c1)" test "$c0" = "$c1" -a "$c0" -ge 1
check "... no endport went down for it" jt '.endports.down == 0' <<<"$(st)"
sim 'Relink "node0001"[1]'
for _ in $(seq 1 150); do st | jqe '.stale == false' && break; sleep 0.1; done
check "relinked: fresh again in the JSON" jt '.stale == false and .local_port_lost == false' <<<"$(st)"
check "... and ibwAgentSnapshotStale is false(2)" test "$(sget "$ROOT.1.1.10.0")" = 2
curl -s -m 5 "$(U /api/v1/events)" >lp-events.json
check "... one local_port_lost event (state down) and then one local_port_back" \
	jt '[.events[] | select(.kind == "local_port_lost" or .kind == "local_port_back")] as $e |
		($e | length) == 2 and $e[0].kind == "local_port_lost" and $e[0].state == "down" and
		$e[1].kind == "local_port_back" and $e[1].lost_ms >= 3000 and $e[1].seq > $e[0].seq' <lp-events.json
# The notifications, one a line in traps.log (varbinds tab-separated):
# decode_trap N prints the first ibwatchNotifications.N's varbinds as
# "name = value", each name as IBWATCH-MIB spells it.
has_trap() { grep -q "= OID: $ROOT\.0\.$1	" traps.log; }
decode_trap() {
	grep -m1 "= OID: $ROOT\.0\.$1	" traps.log | tr '\t' '\n' | grep ' = ' |
		while IFS= read -r vb; do
			printf '%s = %s\n' "$(snmptranslate "${MIBARGS[@]}" "${vb%% = *}")" "${vb#* = }"
		done
}
for _ in $(seq 1 100); do has_trap 8 && has_trap 9 && break; sleep 0.1; done
decode_trap 8 >lost.trap
decode_trap 9 >back.trap
sed 's/^/# lost: /' lost.trap
sed 's/^/# back: /' back.trap
check "the notification OIDs are IBWATCH-MIB's ibwLocalPortLost and ibwLocalPortBack" \
	test "$(snmptranslate "${MIBARGS[@]}" "$ROOT.0.8") $(snmptranslate "${MIBARGS[@]}" "$ROOT.0.9")" = \
	"IBWATCH-MIB::ibwLocalPortLost IBWATCH-MIB::ibwLocalPortBack"
check "snmptrapd got one of each, lost first" \
	awk -v l="= OID: $ROOT.0.8	" -v b="= OID: $ROOT.0.9	" \
	'index($0, l) { nl++; if (!fl) fl = NR } index($0, b) { nb++; if (!fb) fb = NR } END { exit !(nl == 1 && nb == 1 && fl < fb) }' traps.log
ca=$(sget "$ROOT.1.1.2.0") lid=$(sget "$ROOT.1.1.5.0") guid=$(snmpget "${A[@]}" -Ov "$ROOT.1.1.4.0")
lost_ms=$(jq '[.events[] | select(.kind == "local_port_back")][0].lost_ms' lp-events.json)
# has_vb FILE NAME VALUE: the decoded FILE has IBWATCH-MIB::NAME = VALUE
has_vb() { grep -qxF "IBWATCH-MIB::$2 = $3" "$1"; }
nvb() { grep -c "^IBWATCH-MIB::$2" "$1"; }
check "ibwLocalPortLost: CA $ca, port 1, LID $lid, port GUID ($guid), state down(1), ibwAgentSnapshotStale true(1)" \
	eval 'has_vb lost.trap ibwAgentLocalCa.0 "STRING: $ca" && has_vb lost.trap ibwAgentLocalPort.0 "Gauge32: 1" &&
		has_vb lost.trap ibwAgentLocalLid.0 "Gauge32: $lid" && has_vb lost.trap ibwAgentLocalPortState.0 "INTEGER: 1" &&
		has_vb lost.trap ibwAgentSnapshotStale.0 "INTEGER: 1" && has_vb lost.trap ibwAgentLocalPortGuid.0 "$guid" &&
		[ "$(nvb lost.trap ibw)" = 6 ]'
check "ibwLocalPortBack: the same port, state active(4), ibwNotifyLostDuration $lost_ms ms, the event's lost_ms" \
	eval 'has_vb back.trap ibwAgentLocalCa.0 "STRING: $ca" && has_vb back.trap ibwAgentLocalPort.0 "Gauge32: 1" &&
		has_vb back.trap ibwAgentLocalPortState.0 "INTEGER: 4" && has_vb back.trap ibwNotifyLostDuration.0 "Gauge32: $lost_ms" &&
		[ "$lost_ms" -ge 3000 ] && [ "$(nvb back.trap ibw)" = 6 ] &&
		has_vb back.trap ibwAgentLocalPortGuid.0 "$guid"'
for _ in $(seq 1 100); do [ "$(sent)" -gt "$s1" ] && [ "$(st | jq .sweeps.counter_sweeps)" -gt "$c1" ] && break; sleep 0.1; done
check "... pings and counter sweeps resume ($s1 -> $(sent), $c1 -> $(st | jq .sweeps.counter_sweeps))" \
	test "$(sent)" -gt "$s1" -a "$(st | jq .sweeps.counter_sweeps)" -gt "$c1"

stop "$agent"
wait "$agent"
rc=$?
stop "$snmpd_pid"
wait "$snmpd_pid"
check "the agent and snmpd stop on SIGTERM, exit 0 ($rc, $?)" test "$rc $?" = "0 0"
finish
