#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The route census in the daemon on the 324-host fat tree (opensm without
# periodic sweeps, so that a change made by hand stays): /api/v1/routes
# counts every pair routed and equals the census tool's tables; a few
# /api/v1/routes/{src}/{dst} paths equal ibtracert's hop by hop; the
# census metrics are there and promtool-clean; after a hole made with a
# directed-route Set (one LFT entry 0xff, as routes_vs_diags makes it),
# the next read of the tables shows the broken pairs in the summary and
# ?broken=1, and a routes_lost event names the switch; put back, a
# routes_restored event. SNMP, with a real snmpd and snmptrapd: the
# ibwRoutes* scalars equal the JSON's counts, and the hole raises one
# ibwRoutesBroken notification naming the switch.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
. "$here/lib/canon.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}" "${ROUTES_FABRIC:?}"

on_fattree routes_daemon 324 --osm-args "-s 0"

trap stop_started EXIT

ROOT=.1.3.6.1.4.1.32473
export MIBS="" MIBDIRS=""
export SNMP_PERSISTENT_DIR=$PWD/snmp-persist
export SNMPCONFPATH=$PWD/snmp-conf # no /etc/snmp for the tools
mkdir -p "$SNMP_PERSISTENT_DIR" "$SNMPCONFPATH"
start_snmptrapd
check "snmptrapd listens on 127.0.0.1:$trap_port" bash -c "ss -Hlun 'sport = :$trap_port' | grep -q ."
SOCK=$PWD/agentx.sock
snmp_port=$(free_port)
cat >snmpd.conf <<EOF
master agentx
agentXSocket $SOCK
agentXTimeout 5
rocommunity public 127.0.0.1
trap2sink 127.0.0.1:$trap_port public
EOF
start_snmpd || { echo "not ok - snmpd does not start"; exit 1; }
A=(-v2c -c public -t 2 -r 1 "127.0.0.1:$snmp_port")

start_agent node0001 --no-state-file --agentx "$SOCK" --no-ping \
	--discovery-interval 5 --counter-interval 60 --lft-interval 1 ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
get() { curl -s -m 20 -o body.json -w '%{http_code}' "$@"; }
for _ in $(seq 1 300); do
	[ "$(get "$U/api/v1/routes")" = 200 ] && break
	sleep 0.1
done
pairs=$((324 * 323))
check "/api/v1/routes answers once the tables are read" test "$(get "$U/api/v1/routes")" = 200
cp body.json routes1.json
check "324 sources, 324 destination LIDs, $pairs pairs, all routed and minimal" \
	jq -e --argjson p $pairs '.summary | .sources == 324 and .dlids == 324 and
		.pairs == $p and .routed == $p and .unreachable == 0 and
		.looping == 0 and .non_minimal == 0 and .by_status.ok == $p' routes1.json
check "36 switch tables read, none stale or missing" \
	jq -e '.tables | .switches == 36 and .fresh == 36 and .stale == 0 and .missing == 0' routes1.json
check "routes of 2 hops within a leaf (324 x 17), 4 across" \
	jq -e '.summary.hops == [[2, 324 * 17], [4, 324 * 323 - 324 * 17]] and .summary.max_hops == 4' routes1.json
check "the leaves' uplinks are even (max/mean 1)" \
	jq -e '.tiers[0].tier == 0 and .tiers[0].max_mean == 1 and .tiers[0].switches == 18' routes1.json
top=$(jq -r '.top_links[0] | "\(.node_guid)/\(.port) \(.routes)"' routes1.json)
check "the most loaded links first, ten of them" \
	jq -e '(.top_links | length) == 10 and ([.top_links[].routes] | . == (sort | reverse))' routes1.json
r=$(get "$U/api/v1/routes?link=${top% *}")
check "?link=${top% *}: its ${top#* } routes" \
	jq -e --arg n "${top#* }" '.link.routes == ($n | tonumber)' body.json
check "?link= of no link is 404, a bad one 400" \
	test "$(get "$U/api/v1/routes?link=0x0000000000000001/1") $(get "$U/api/v1/routes?link=x")" = "404 400"

# The census tool reads the same tables: the same counts, and makes the
# hole below.
coproc RF { at node0001 "$ROUTES_FABRIC" 2>rf.err; }
pids+=("$RF_PID")
rf_in=${RF[1]} rf_out=${RF[0]}
rf() {
	local l
	out=""
	echo "$*" >&"$rf_in"
	while IFS= read -r -t 300 l <&"$rf_out"; do
		[ "$l" = . ] && return 0
		out+="$l"$'\n'
	done
	return 1
}
val() { awk -v k="$1" '$1 == k { print $2 }' <<<"$out"; }
rf census
check "the census tool counts as many routed pairs" test "$(val routed)" = $pairs

# A few pairs against ibtracert, hop by hop, in routes_vs_diags' terms
# (canon_tracert, tests/lib/canon.sh).
canon_api() {
	jq -r '.path.hops as $h | [range(0; $h | length) as $i | $h[$i] |
		if $i == 0 then "\(.node_guid)/\(if .type == "switch" then 0 else .out_port end)"
		else "\($h[$i - 1].out_port)>\(if .type == "switch" then .node_guid else .port_guid end)/\(.in_port)" end] +
		[$h[-1] | "\(.node_guid)/\(if .type == "switch" then 0 else .in_port end)"] | join(" ")'
}
lid_of() { at "$1" ibaddr 2>/dev/null | sed -n 's/.*LID start \(0x[0-9a-f]*\).*/\1/p'; }
same=0 tried=0
for pr in "node0002 node0200" "node0100 node0003" "node0324 node0001" "node0150 node0151" "node0007 node0300"; do
	set -- $pr
	tried=$((tried + 1))
	a=$(curl -s -m 20 "$U/api/v1/routes/$1%20HCA-1/$2%20HCA-1")
	ls=$(($(lid_of "$1"))) ld=$(($(lid_of "$2")))
	t=$(at node0200 ibtracert -n "$ls" "$ld" 2>>tracert.err | canon_tracert)
	c=$(canon_api <<<"$a")
	if [ -n "$t" ] && [ "$c" = "$t" ] &&
		jq -e --argjson s "$ls" --argjson d "$ld" '.status == "ok" and .minimal and .slid == $s and .dlid == $d' <<<"$a" >/dev/null; then
		same=$((same + 1))
	else
		echo "# $1 -> $2: api '$c', ibtracert '$t'" >&2
	fi
done
check "/api/v1/routes/{src}/{dst} by name: $same of $tried paths equal ibtracert's" test $same = $tried
l2=$(($(lid_of node0002))) l200=$(($(lid_of node0200)))
g200=$(curl -s -m 20 "$U/api/v1/routes/node0002%20HCA-1/node0200%20HCA-1" | jq -r '.path.hops[-1].port_guid')
check "... by LID and by port GUID the same route" \
	test "$(curl -s -m 20 "$U/api/v1/routes/$l2/$g200" | canon_api)" = \
	"$(curl -s -m 20 "$U/api/v1/routes/node0002%20HCA-1/node0200%20HCA-1" | canon_api)"
check "an unknown end is 404, a missing one 400" \
	test "$(get "$U/api/v1/routes/nosuchnode/node0002%20HCA-1") $(get "$U/api/v1/routes/node0002%20HCA-1")" = "404 400"

# Metrics: the census counts and a load per link direction.
metrics_of "$U" >metrics.txt
out=$(promtool check metrics <metrics.txt 2>&1); rc=$?
check "promtool check metrics reports nothing" test $rc = 0 -a -z "$out"
check "ibwatch_routes_pairs{status=\"ok\"} $pairs, none broken" \
	test "$(grep -c "^ibwatch_routes_pairs{status=\"ok\"} $pairs\$" metrics.txt) $(grep '^ibwatch_routes_pairs{status="[a-z_]*"} [1-9]' metrics.txt | grep -vc 'status="ok"')" = "1 0"
check "ibwatch_route_load: one series per link direction (2 x 648)" \
	test "$(grep -c '^ibwatch_route_load{' metrics.txt)" = 1296
# SNMP: ibwRoutesPairs .. ibwRoutesTablesStale (.34 to .40), as in JSON.
for _ in $(seq 1 100); do
	snmpget "${A[@]}" -Oqv "$ROOT.1.1.34.0" 2>/dev/null | grep -qx $pairs && break
	sleep 0.2
done
sc=$(for c in 34 35 36 37 38 39 40; do snmpget "${A[@]}" -Oqv "$ROOT.1.1.$c.0"; done | paste -sd' ')
check "SNMP ibwRoutesPairs .. ibwRoutesTablesStale: $sc" test "$sc" = "$pairs $pairs 0 0 0 0 0"
check "ibwRoutesTime is the year of the tables' read" \
	test "$(snmpget "${A[@]}" -Ov "$ROOT.1.1.33.0" | sed -n 's/^Hex-STRING: \(..\) \(..\).*/0x\1\2/p')" = \
	"$(printf '0x%04X' "$(date -u +%Y)")"
check "... the most loaded link's equals the API's" \
	grep -q "^ibwatch_route_load{guid=\"${top%%/*}\",port=\"$(t=${top#*/}; echo "${t% *}")\",.*} ${top#* }\$" metrics.txt

# A hole: node0001's leaf forgets node0100. The agent reads the tables
# every second; opensm does not sweep, so the hole stays.
l1=$(($(lid_of node0001))) l100=$(($(lid_of node0100)))
path=$(at node0200 ibtracert -n "$l1" "$l100" 2>>tracert.err)
leaf=$(sed -n '2s/^\[[0-9]*\] -> {\(0x[0-9a-f]*\)}.*/\1/p' <<<"$path")
orig=$(curl -s -m 20 "$U/api/v1/routes/$l1/$l100" | jq -r '.path.hops[1].out_port')
leaf_name=$(curl -s -m 20 "$U/api/v1/nodes/$leaf" | jq -r '.name')
check "node0001's leaf $leaf_name routes lid $l100 by port $orig" test -n "$leaf" -a "$orig" -gt 0
seq0=$(curl -s -m 20 "$U/api/v1/events" | jq .last_seq)
rf "setlft $leaf $l100 255"
check "the entry is set to 0xff by a directed-route Set" grep -q "entry $l100 now 255" <<<"$out"
for _ in $(seq 1 100); do
	get "$U/api/v1/routes" >/dev/null
	jq -e '.summary.unreachable > 0' body.json >/dev/null && break
	sleep 0.2
done
cp body.json routes2.json
nb=$(jq .summary.unreachable routes2.json)
check "the summary shows the hole: $nb pairs with no entry, all others routed" \
	jq -e --argjson p $pairs '.summary | .unreachable > 0 and .by_status.no_entry == .unreachable and
		.routed == $p - .unreachable' routes2.json
r=$(get "$U/api/v1/routes?broken=1&limit=1000")
check "?broken=1: the $nb pairs, all to lid $l100, breaking at $leaf_name" \
	jq -e --argjson n "$nb" --argjson d "$l100" --arg g "$leaf" \
		'.total == $n and (.pairs | length) == $n and
		 all(.pairs[]; .dlid == $d and .status == "no_entry" and .break.node_guid == $g)' body.json
r=$(get "$U/api/v1/routes?broken=1&limit=2&offset=1")
check "... paged: limit=2&offset=1" jq -e --argjson n "$nb" '.total == $n and (.pairs | length) == 2 and .offset == 1' body.json
r=$(get "$U/api/v1/routes/$l1/$l100")
check "/api/v1/routes/{src}/{dst} names the break" \
	jq -e --arg g "$leaf" '.status == "no_entry" and .break.node_guid == $g' body.json
curl -s -m 20 "$U/api/v1/events?since=$seq0" >events.json
check "a routes_lost event names $leaf_name" \
	jq -e --arg g "$leaf" --argjson n "$nb" --arg nm "no entry at $leaf_name" \
		'any(.events[]; .kind == "routes_lost" and .node_guid == $g and .new == $n and (.detail | contains($nm)))' events.json
check "... and it is logged" grep -q "routes_lost: .*no entry at $leaf_name" "agent-$P.log"
for _ in $(seq 1 50); do
	grep -q "= OID: $ROOT\.0\.7	" traps.log 2>/dev/null && break
	sleep 0.2
done
trapline=$(grep "= OID: $ROOT\.0\.7	" traps.log | head -n 1)
check "one ibwRoutesBroken notification: $nb pairs, no entry at $leaf_name" \
	test "$(grep -c "= OID: $ROOT\.0\.7	" traps.log)" = 1 -a \
	-n "$(grep "$ROOT\.1\.1\.36\.0 = Gauge32: $nb	" <<<"$trapline")" -a \
	-n "$(grep "$ROOT\.1\.7\.8\.0 = Gauge32: $nb	" <<<"$trapline")" -a \
	-n "$(grep "$ROOT\.1\.7\.9\.0 = STRING: \".*no entry at $leaf_name" <<<"$trapline")"
check "the metrics count them" \
	bash -c "curl -s -m 20 $U/metrics | grep -qxE 'ibwatch_routes_pairs\\{(fabric=\"[^\"]*\",)?status=\"no_entry\"\\} $nb'"

rf "setlft $leaf $l100 $orig"
for _ in $(seq 1 100); do
	get "$U/api/v1/routes" >/dev/null
	jq -e '.summary.unreachable == 0' body.json >/dev/null && break
	sleep 0.2
done
check "put back: every pair routed again" jq -e --argjson p $pairs '.summary.routed == $p' body.json
check "... a routes_restored event" \
	bash -c "curl -s -m 20 '$U/api/v1/events?since=$seq0' | jq -e 'any(.events[]; .kind == \"routes_restored\" and .new == $nb)' >/dev/null"

echo quit >&"$rf_in"
rfpid=$RF_PID
wait "$rfpid"
check "the census tool exits cleanly" test $? = 0
check "the agent stops cleanly" stopped_clean "$agent"
finish
