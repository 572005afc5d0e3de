#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Fabrics whose SM protects the ports' management with an M_Key (issue
# 20, point 5), on an 8-host fat tree. ibsim checks no M_Key, and it
# answers every SMP itself (it hands a process only the requests it has
# no answer for), so no responder of ours can stand in for a protected
# SMA; the kernel model does (IBW_KM_MKEY_FILE: an SMP to a node listed
# there that carries another key gets no answer, as from a port whose
# M_KeyProtectBits are 2). The model is held to infiniband-diags first:
# smpquery without the key times out, with --m_key it is answered.
#  1. an agent without the key, protection switched on while it runs:
#     the host stays, "protected", with its link (not gone, no event),
#     the rest of the fabric is discovered as before, pings go on; then
#     its leaf switch as well: protected too, and looked past (the
#     links it had are probed through it), so the hosts behind it stay
#     discovered;
#  2. an agent without the key from the start: the leaf's port says
#     its peer refuses us (peer_protected), no node is made up;
#  3. an agent with --mkey-file: every SMP carries the key (discovery,
#     LID-routed SMP pings), the host and its leaf are read like any other,
#     the model drops nothing, and the key is in no log line, HTTP
#     answer or metric;
#  4. a key file its group or others may read is refused, by
#     --check-config and at start, without quoting the key.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree mkey 8
trap stop_started EXIT
[ -n "${IBW_KM_STATE_DIR:-}" ] || { echo "not ok - the kernel model is not on (IBW_KM_STATE_DIR unset)"; exit 1; }

key=0x0123456789abcdef
key_dec=81985529216486895
prot=$PWD/protected-smas
rm -f "$prot"
export IBW_KM_MKEY_FILE=$prot IBW_KM_LOG=$PWD/kmodel.log

at node0001 ibnetdiscover -p >net.txt 2>/dev/null
lid5=$(awk '$1 == "CA" && /node0005/ { print $2; exit }' net.txt)
lid6=$(awk '$1 == "CA" && /node0006/ { print $2; exit }' net.txt)
g5=$(at node0001 smpquery nodeinfo "$lid5" | sed -n 's/^Guid:\.*//p')
pg5=$(at node0001 smpquery nodeinfo "$lid5" | sed -n 's/^PortGuid:\.*//p')
leaf=$(awk '$1 == "CA" && /node0005/ { print $9; exit }' net.txt)
gleaf=$(at node0001 smpquery nodeinfo "$leaf" | sed -n 's/^Guid:\.*//p')
nodes=$(awk '$1 ~ /^(CA|SW)$/ { print $4 } $8 ~ /^(CA|SW)$/ && $11 ~ /^0x/ { print $11 }' net.txt | sort -u | wc -l)
check "node0005 (LID $lid5, node GUID $g5), its leaf ($gleaf) and the fabric's $nodes nodes, by ibnetdiscover and smpquery" \
	test -n "$lid5" -a -n "$lid6" -a -n "$g5" -a -n "$gleaf" -a "$nodes" -gt 8

echo "$g5 $key" >"$prot"
check "the model as infiniband-diags sees it: smpquery NodeInfo to node0005 without the key gets no answer" \
	eval '! at node0001 smpquery -t 100 nodeinfo "$lid5" >/dev/null 2>&1'
check "... with --m_key it is answered" \
	eval 'at node0001 smpquery -t 100 --m_key "$key" nodeinfo "$lid5" | grep -q "^Guid:\.*$g5\$"'
check "... while node0006 answers without one" \
	eval 'at node0001 smpquery -t 100 nodeinfo "$lid6" >/dev/null 2>&1'
rm -f "$prot"

nodes_json() { curl -s -m 5 "$U/api/v1/nodes"; }
st() { curl -s -m 5 "$U/api/v1/status"; }
disc() { st | jq '.sweeps.discoveries'; }
wait_discoveries() { # N: until N more discoveries than now
	local d0
	d0=$(disc)
	for _ in $(seq 1 100); do
		[ "$(disc)" -ge $((d0 + $1)) ] && return 0
		sleep 0.1
	done
	return 1
}
kmline() { grep "^pid=$1 " kmodel.log | sed -n 's/.* mkey_dropped=\([0-9]*\).*/\1/p'; }
ARGS=(--no-snmp --no-state-file --discovery-interval 1 --counter-interval 1
	--ping-interval-ms 300 --ping-method pma --down-after 2 --up-after 2)

# 1. Protection switched on under a running agent without the key.
start_agent node0001 "${ARGS[@]}" || { echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
for _ in $(seq 1 200); do
	st | jqe --argjson n "$nodes" '.fabric.nodes == $n and .endports.up == 8' && break
	sleep 0.1
done
check "without protection the agent sees all $nodes nodes and 8 endports up" \
	jqe --argjson n "$nodes" '.fabric.nodes == $n and .endports.up == 8' < <(st)
ev0=$(curl -s -m 5 "$U/api/v1/events" | jq .last_seq)
echo "$g5 $key" >"$prot"
wait_discoveries 3
nodes_json >nodes1.json
check "node0005, refusing our SMPs now, is protected, not gone" \
	jq -e --arg g "$g5" '.[] | select(.guid == $g) | .protected and (.gone | not) and .protected_since != null' nodes1.json
check "... its leaf's port says its peer refuses us, with the link kept both ways" \
	jq -e --arg g "$g5" '([.[] | .ports[] | select(.remote != null and .remote.guid == $g and .peer_protected)] | length == 1)
		and ([.[] | select(.guid == $g) | .ports[] | select(.remote != null)] | length == 1)' nodes1.json
check "... every other node discovered as before (none gone, none protected)" \
	jq -e --arg g "$g5" --argjson n "$nodes" 'length == $n and all(.[] | select(.guid != $g); (.gone | not) and (.protected | not))' nodes1.json
check "... the status counts $nodes nodes, none gone" \
	jqe --argjson n "$nodes" '.fabric.nodes == $n and .fabric.gone_nodes == 0' < <(st)
curl -s -m 5 "$U/api/v1/events?since=$ev0" >events1.json
check "... no node_gone, link_down or endport_state event" \
	jq -e '[.events[] | select(.kind == "node_gone" or .kind == "link_down" or .kind == "endport_state")] | length == 0' events1.json
check "... and node0005's endport still up (PerfMgt pings carry no M_Key)" \
	jqe --arg g "$pg5" '.[] | select(.port_guid == $g) | .state == "up"' < <(curl -s -m 5 "$U/api/v1/endports")
ping1=$(curl -s -m 10 "$U/api/v1/ping?target=$lid5&count=2&method=smp&timeout_ms=100")
# Its leaf switch too: the sweep looks past it through the links it had
# (only an SMP's destination checks the M_Key), to the hosts behind it.
links() { jq --arg g "$gleaf" '[.[] | select(.guid == $g) | .ports[] | select(.remote != null)] | length' "$1"; }
printf '%s %s\n%s %s\n' "$g5" "$key" "$gleaf" "$key" >"$prot"
wait_discoveries 3
nodes_json >nodes1b.json
check "its leaf switch refusing us as well is protected, with its $(links nodes1.json) links kept" \
	jq -e --arg g "$gleaf" --argjson l "$(links nodes1.json)" '.[] | select(.guid == $g) | .protected and (.gone | not) and ([.ports[] | select(.remote != null)] | length == $l)' nodes1b.json
check "... the hosts behind it are still discovered (through it), none gone, none else protected" \
	jq -e --arg g "$g5" --arg s "$gleaf" --argjson n "$nodes" 'length == $n and all(.[] | select(.guid != $g and .guid != $s); (.gone | not) and (.protected | not)) and ([.[] | select(.protected)] | length == 2)' nodes1b.json
check "... node0006 linked to it as before" \
	jq -e --arg s "$gleaf" '.[] | select(.name == "node0006 HCA-1") | .ports[0].remote.guid == $s' nodes1b.json
# Counters are PerfMgt MADs, which carry no M_Key: they go on. A node
# marked protected answers no NodeInfo, so none is asked to vouch for
# its readings (docs/architecture.md, Counters).
sim 'PerformanceSet "node0005"[1] PortCounters.SymbolErrorCounter=77'
ports_of() { curl -s -m 5 "$U/api/v1/ports" | jq -c --arg g "$1" '[.[] | select(.node_guid == $g)]'; }
for _ in $(seq 1 100); do
	ports_of "$g5" | jqe 'length == 1 and .[0].counters.totals.symbol_errors == 77 and (.[0].counters.stale | not)' && break
	sleep 0.1
done
check "... node0005's counters go on while it is protected (SymbolErrorCounter set to 77 read, not stale)" \
	jqe 'length == 1 and .[0].counters.totals.symbol_errors == 77 and (.[0].counters.stale | not)' < <(ports_of "$g5")
wait_discoveries 2
check "... and so do its leaf switch's (every port read, none stale)" \
	jqe '[.[] | select(.counters != null)] | length > 1 and all(.[]; .counters.stale | not)' < <(ports_of "$gleaf") ||
	ports_of "$gleaf" | jq -c '.[] | {port, c: (.counters | if . then {stale, unreachable_sweeps} else null end)}' | sed 's/^/# /'
curl -s -m 5 "$U/api/v1/events?since=$ev0" >events1b.json
check "... still no node_gone, link_down or endport_state event" \
	jq -e '[.events[] | select(.kind == "node_gone" or .kind == "link_down" or .kind == "endport_state")] | length == 0' events1b.json
check "... while LID-routed SMP pings to it go unanswered (504)" jqe '.status == 504 and .ping.received == 0 and .ping.sent == 2' <<<"$ping1" ||
	jq -c . <<<"$ping1" | sed "s/^/# /"
a1=$agent
check "the agent stops cleanly" stopped_clean "$a1"
check "... the model dropped its SMPs to node0005 ($(kmline "$a1") dropped)" test "$(kmline "$a1")" -gt 0

# 2. Protected from the start: never seen, only the refusing port.
echo "$g5 $key" >"$prot"
start_agent node0001 "${ARGS[@]}" || { echo "not ok - the agent does not start again"; exit 1; }
U=http://127.0.0.1:$P
for _ in $(seq 1 200); do
	[ "$(disc)" -ge 2 ] && break
	sleep 0.1
done
nodes_json >nodes2.json
check "protected from the start: node0005 is not in the picture, no node made up or gone" \
	jq -e --arg g "$g5" --argjson n "$nodes" 'length == $n - 1 and all(.[]; .guid != $g and (.gone | not) and (.protected | not))' nodes2.json
check "... one port, active, says its peer refuses us, with no peer known" \
	jq -e '[.[] | .ports[] | select(.peer_protected)] | length == 1 and .[0].remote == null and .[0].state == "active"' nodes2.json
check "the agent stops cleanly" stopped_clean "$agent"

# 3. With the key (node0005 and its leaf protected).
printf '%s %s\n%s %s\n' "$g5" "$key" "$gleaf" "$key" >"$prot"
printf '# the M_Key of the SM\n%s\n' "$key" >mkey
chmod 600 mkey
start_agent node0001 "${ARGS[@]}" --mkey-file "$PWD/mkey" ||
	{ echo "not ok - the agent with --mkey-file does not start"; exit 1; }
U=http://127.0.0.1:$P
for _ in $(seq 1 200); do
	st | jqe --argjson n "$nodes" '.fabric.nodes == $n and .endports.up == 8 and .sweeps.discoveries >= 2' && break
	sleep 0.1
done
nodes_json >nodes3.json
check "with --mkey-file every node is read, node0005 like the rest" \
	jq -e --arg g "$g5" --argjson n "$nodes" 'length == $n and all(.[]; (.gone | not) and (.protected | not)) and (.[] | select(.guid == $g) | any(.ports[]; .lid > 0))' nodes3.json
check "... no port refuses us" jq -e '[.[] | .ports[] | select(.peer_protected)] | length == 0' nodes3.json
curl -s -m 10 "$U/api/v1/trace?target=$lid5" >trace3.json
check "... a trace reaches node0005" jq -e '.status == "ok"' trace3.json ||
	sed 's/^/# /' trace3.json
ping3=$(curl -s -m 10 "$U/api/v1/ping?target=$lid5&count=2&method=smp&timeout_ms=100")
check "... LID-routed SMP pings to it are answered" jqe '.received == 2' <<<"$ping3"
check "... the log says where the key came from" grep -q "SMPs carry the M_Key from $PWD/mkey" "agent-$P.log"
{
	for e in status nodes ports endports events traces; do curl -s -m 5 "$U/api/v1/$e"; done
	curl -s -m 5 "$U/metrics"
	echo "$ping3"
	cat trace3.json
} >served.txt
a3=$agent P3=$P
check "the agent stops cleanly" stopped_clean "$a3"
check "... the model dropped nothing of it ($(kmline "$a3") dropped)" test "$(kmline "$a3")" = 0
check "the key is in no log line, answer or metric (hex or decimal)" \
	eval '! grep -qiE "123456789abcdef|$key_dec" served.txt agent-$P3.log agent-$P3.out'

# 4. A key file others may read is refused.
cp mkey mkey-open
chmod 640 mkey-open
out=$("$IBWATCHD" -c /dev/null --check-config --mkey-file "$PWD/mkey-open" 2>&1); rc=$?
check "--check-config refuses a group-readable key file ($rc): $(head -n1 <<<"$out")" \
	eval '[ $rc != 0 ] && grep -q "mode 0640 lets its group or others" <<<"$out"'
out=$(at node0001 "$IBWATCHD" --no-snmp --no-http --once --mkey-file "$PWD/mkey-open" 2>&1); rc=$?
check "... and so does the agent at start, before touching the fabric ($rc)" \
	eval '[ $rc != 0 ] && grep -q "mode 0640" <<<"$out" && ! grep -q "\"nodes\"" <<<"$out"'
check "... quoting no key" eval '! grep -qiE "123456789abcdef|$key_dec" <<<"$out"'
chmod 604 mkey-open
check "... nor one others may read (0604)" \
	eval '! "$IBWATCHD" -c /dev/null --check-config --mkey-file "$PWD/mkey-open" >/dev/null 2>&1'
check "--check-config takes the 0600 file" eval '"$IBWATCHD" -c /dev/null --check-config --mkey-file "$PWD/mkey" >/dev/null'


finish
