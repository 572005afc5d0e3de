#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Which fabric (docs/operations.md, "Many agents, many fabrics"): on the
# side-by-side fabric, its SM on node0008, ibwatchd (an AgentX subagent
# of a real snmpd, traps to a real snmptrapd) names the fabric by the
# subnet prefix and the master SM's port GUID, as sminfo and smpquery
# give them, in /api/v1/status, ibwatch_fabric_info and the fabric label
# of every ibwatch_* series (none on the exporter's, by default), and
# IBWATCH-MIB's ibwFabric* scalars. Then the SM's host dies (node0008
# unlinked): PortInfo names a LID no port has, and the fabric stays
# what it was, with no event. A standby takes over at node0006 (the
# opensm stopped, another started there): the identity changes to the
# new SM's port GUID at the next discovery, a fabric_changed event
# names both, snmptrapd gets one ibwFabricChange with the new identity
# and the old, and every ibwatch_* series carries the new label.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}"

if [ -z "${IBW_SIM_DIR:-}" ]; then
	exec "$here/lib/with-fabric.sh" fabric_id \
		"$here/fixtures/side-by-side.net" --sm node0008 -- "$0" "$@"
fi
trap stop_started EXIT

snmp_stack || { echo "not ok - snmpd does not start"; exit 1; }
start_agent node0001 --no-state-file --no-ping --agentx "$SOCK" \
	--discovery-interval 1 --counter-interval 2 ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P

# what the fabric's own tools say: the master SM's port GUID, the prefix
sm_guid() { at node0001 sminfo -t 300 2>/dev/null | sed -n 's/.*sm guid \(0x[0-9a-f]*\).*/\1/p'; }
prefix=$(at node0001 smpquery -t 300 -D portinfo 0 2>/dev/null | sed -n 's/^GidPrefix:\.*//p')
# (GidPrefix as smpquery prints it: 0x and 16 digits; bash's printf
# cannot take it, over 2^63)
want() { printf '%s/0x%016x' "${prefix,,}" "$(sm_guid)"; }
fid() { curl -s -m 5 "$U/api/v1/status" | jq -r '.fabric.id // empty'; }
for _ in $(seq 1 100); do [ -n "$(fid)" ] && break; sleep 0.2; done
id1=$(fid) w1=$(want)
check "/api/v1/status names the fabric as sminfo and smpquery do ($id1)" \
	test -n "$id1" -a "$id1" = "$w1" -a "${w1#*/}" != 0x0000000000000000
curl -s -m 5 "$U/api/v1/status" >st1.json
check "... with its SM's LID and node (node0008's)" \
	jq -e --arg n "$(curl -s -m 5 "$U/api/v1/nodes" | jq -r '.[] | select(.description == "node0008 HCA-1") | .guid')" \
	'.fabric.sm_lid > 0 and .fabric.sm_node_guid == $n and .fabric.id_changes == 0' st1.json
curl -s -m 5 "$U/metrics" >m1.prom
check "ibwatch_fabric_info says the same" \
	grep -qx "ibwatch_fabric_info{fabric=\"$id1\",subnet_prefix=\"${id1%/*}\",sm_guid=\"${id1#*/}\",sm_lid=\"$(jq .fabric.sm_lid st1.json)\"} 1" m1.prom
check "every ibwatch_* series carries it first ($(grep -c '^ibwatch_' m1.prom)), no infiniband_* series" \
	bash -c '[ "$(grep -c "^ibwatch_" m1.prom)" -gt 100 ] && ! grep "^ibwatch_" m1.prom | grep -qv "^ibwatch_[a-z_]*{fabric=\"$1\"" && ! grep "^infiniband_" m1.prom | grep -q "fabric="' _ "$id1"
check "promtool check metrics finds nothing" bash -c '[ -z "$(promtool check metrics <m1.prom 2>&1)" ]'
mib() { snmpget "${A[@]}" -Oqv "$ROOT.1.1.$1.0" 2>/dev/null; }
for _ in $(seq 1 50); do [ -n "$(mib 43 | tr -d '"')" ] && break; sleep 0.2; done
check "ibwFabricId, ibwFabricSubnetPrefix, ibwFabricSmGuid, ibwFabricSmLid" \
	test "$(mib 43)|$(mib 44)|$(mib 45)|$(mib 46)" = "\"$id1\"|\"${id1%/*}\"|\"${id1#*/}\"|$(jq .fabric.sm_lid st1.json)"

# The SM's host dies: until another SM takes over, PortInfo still names
# its LID, where no port is. Not another fabric.
sim 'Unlink "node0008"[1]'
d0=$(curl -s -m 5 "$U/api/v1/status" | jq .sweeps.discoveries)
for _ in $(seq 1 100); do
	[ "$(curl -s -m 5 "$U/api/v1/status" | jq .sweeps.discoveries)" -ge $((d0 + 3)) ] && break
	sleep 0.2
done
curl -s -m 5 "$U/api/v1/status" >st2.json
check "the SM's host gone: three discoveries later the same fabric, no event" \
	bash -c '[ "$(jq -r .fabric.id st2.json)" = "$1" ] && [ "$(jq .sweeps.discoveries st2.json)" -ge $(($2 + 3)) ] &&
		[ "$(curl -s -m 5 "$3/api/v1/events" | jq "[.events[] | select(.kind == \"fabric_changed\")] | length")" = 0 ]' \
	_ "$id1" "$d0" "$U"

# A standby takes over at node0006.
"$IBW_SIMFABRIC" sm-move "$IBW_SIM_DIR" node0006 >/dev/null || bad "opensm did not come up at node0006"
w2=$(want)
for _ in $(seq 1 100); do [ "$(fid)" = "$w2" ] && break; sleep 0.2; done
id2=$(fid)
check "the identity follows the SM to node0006 ($id2)" test "$id2" = "$w2" -a "$id2" != "$id1"
curl -s -m 5 "$U/api/v1/events" >ev.json
check "one fabric_changed event names both SMs" \
	jq -e --arg o "${id1#*/}" --arg n "${id2#*/}" --arg a "$id1" --arg b "$id2" \
	'[.events[] | select(.kind == "fabric_changed")] | length == 1 and (.[0] |
		.what == "master_sm" and .old_sm_guid == $o and .new_sm_guid == $n
		and (.detail | startswith("fabric \($a) -> \($b)")))' ev.json
check "... and /api/v1/status counts it" \
	bash -c '[ "$(curl -s -m 5 "$1/api/v1/status" | jq .fabric.id_changes)" = 1 ]' _ "$U"
for _ in $(seq 1 100); do grep -q "= OID: $ROOT\.0\.12	" traps.log 2>/dev/null && break; sleep 0.1; done
check "snmptrapd gets one ibwFabricChange with the new identity and the old" \
	awk -v o="OID: $ROOT.0.12	" -v n="$ROOT.1.1.43.0 = STRING: \"$id2\"" -v p="$ROOT.1.7.17.0 = STRING: \"$id1\"" \
	'index($0, o) { c++; if (index($0, n) && index($0, p)) a = 1 } END { exit !(a && c == 1) }' traps.log ||
	grep "$ROOT\.0\.12" traps.log | sed 's/^/# /'
curl -s -m 5 "$U/metrics" >m2.prom
check "every ibwatch_* series carries the new label, none the old" \
	bash -c '[ "$(grep -c "^ibwatch_" m2.prom)" -gt 100 ] && ! grep "^ibwatch_" m2.prom | grep -qv "^ibwatch_[a-z_]*{fabric=\"$1\"" && ! grep -q "$2" m2.prom' _ "$id2" "$id1"
check "the log says so" grep -q "another fabric: $id2, was $id1" "agent-$P.log"

finish
