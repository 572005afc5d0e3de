#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Link health on an 8-host fat tree whose leaf01 port 3 - node0003 cable
# is built at 1x (ibsim's w=1) among 4x cables: that link, and only it,
# is degraded for "width" in `ibwatchd --links`, /api/v1/links (from
# either end), /api/v1/status and one link_health_changed event. Then
# symbol errors injected on a switch port and LinkDowned increments on a
# host port (PerformanceSet) move exactly the cables they belong to,
# with both ends named right, to degraded and failing. Through snmpd,
# ibwLinkTable and ibwLinkHealthChange say the same; Nagios' check_snmp
# as deploy/nagios runs it goes OK, CRITICAL, OK and WARNING. The
# windows survive a restart (state file); SIGHUP applies new thresholds.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

if [ -z "${IBW_SIM_DIR:-}" ]; then
	work=${IBW_TEST_WORK:-$PWD/test-work}
	mkdir -p "$work"
	# w=1 on both ends' lines of the one cable
	"$IBW_FATTREE" --levels 2 --hosts 8 |
		sed -e '/^Switch.*"leaf01"/,/^$/ s/^\[3\]\t"node0003"\[1\]$/&\tw=1/' \
		    -e '/^Hca.*"node0003"/,/^$/ s/^\[1\]\t"leaf01"\[3\]$/&\tw=1/' \
		>"$work/links-8.net" || exit 1
	grep -c 'w=1' "$work/links-8.net" | grep -qx 2 || { echo "not ok - w=1 not placed"; exit 1; }
	exec "$here/lib/with-fabric.sh" links "$work/links-8.net" --sm node0008 -- "$0"
fi

trap stop_started EXIT

# 1. One cycle: the w=1 cable alone is degraded, for width.
at node0001 "$IBWATCHD" --links --no-state-file --no-ping >once.out 2>once.err
check "--links prints the link view" jq -e '.links | length == 16' once.out
check "--links: exactly one link degraded, the others ok" \
	jq -e '.counts == {"ok": 15, "degraded": 1, "failing": 0, "down": 0}' once.out
check "--links: it is leaf01 port 3 - node0003 port 1, reason width, 1x of 4x, and first" \
	jq -e '.links[0] | .health == "degraded" and .reasons == ["width"]
		and .width_active == "1x" and .width_best == "4x"
		and ([.ends[] | "\(.name)/\(.port)"] | sort) == ["leaf01/3", "node0003 HCA-1/1"]' once.out
check "--links: every other link is ok with no reason" \
	jq -e '[.links[1:][] | select(.health != "ok" or (.reasons | length) > 0)] | length == 0' once.out
check "--links: the simulator's supported sets are those of hardware (1x, 4x; SDR)" \
	jq -e '[.links[].ends[] | select(.width_supported != ["1x", "4x"] or .speed_supported != ["SDR"])] | length == 0' once.out

# 2. The daemon: JSON, events; thresholds that a test can reach in
# seconds (docs/links.md: the BER needs 1e12 bits, 100 s at 4x SDR). The
# model gives every port FEC counters, where symbol errors are effective
# errors too (link_fec_health tests those): off here.
start_agent node0001 --no-state-file --no-ping --discovery-interval 2 \
	--counter-interval 1 --link-threshold ber_degraded=0 \
	--link-threshold ber_failing=0 \
	--link-threshold effective_ber_12m=0 --link-threshold effective_ber_125m=0 \
	--link-threshold symbol_errors_per_day=100 ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/api/v1/status" | jqe '.sweeps.counter_sweeps >= 2 and .links.ok == 15' && break
	sleep 0.2
done
curl -s -m 5 "$U/api/v1/status" >status.json
check "/api/v1/status counts links by health" jq -e '.links == {"ok": 15, "degraded": 1, "failing": 0, "down": 0}' status.json
curl -s -m 5 "$U/api/v1/links?health=degraded" >deg.json
check "/api/v1/links?health=degraded: the w=1 link alone" \
	jq -e '(.links | length) == 1 and .links[0].reasons == ["width"]
		and ([.links[0].ends[] | "\(.name)/\(.port)"] | sort) == ["leaf01/3", "node0003 HCA-1/1"]' deg.json
g3=$(jq -r '.links[0].ends[] | select(.name == "node0003 HCA-1") | .guid' deg.json)
gl1=$(jq -r '.links[0].ends[] | select(.name == "leaf01") | .guid' deg.json)
check "/api/v1/links?reason=width is the same link" jq -e --arg g "$g3" \
	'(.links | length) == 1 and ([.links[0].ends[].guid] | index($g))' <(curl -s -m 5 "$U/api/v1/links?reason=width")
check "/api/v1/links/{guid}/{port} from the host end" jq -e '.health == "degraded" and .reasons == ["width"]' \
	<(curl -s -m 5 "$U/api/v1/links/$g3/1")
check "/api/v1/links/{guid}/{port} from the switch end, the same cable" jq -e --arg g "$g3" \
	'.health == "degraded" and ([.ends[].guid] | index($g))' <(curl -s -m 5 "$U/api/v1/links/$gl1/3")
check "/api/v1/links/{guid}/{port}: 404 for a port without a cable" \
	[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$U/api/v1/links/$g3/2")" = 404 ]
check "/api/v1/links?health=bad is a 400" \
	[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$U/api/v1/links?health=bad")" = 400 ]
check "/api/v1/links?node=NAME&type=ca: node0003's link" jq -e --arg g "$g3" \
	'(.links | length) == 1 and ([.links[0].ends[].guid] | index($g))' \
	<(curl -s -m 5 "$U/api/v1/links?node=node0003%20HCA-1&type=ca")
check "/api/v1/links?type=switch: the 8 leaf-spine cables" jq -e '(.links | length) == 8' \
	<(curl -s -m 5 "$U/api/v1/links?type=switch")
metrics_of "$U" >metrics.txt
lo=$(printf '%s\n%s\n' "$gl1" "$g3" | sort | head -1)
check "/metrics: one ibwatch_link_reason, width, on that cable" \
	test "$(grep -c '^ibwatch_link_reason{' metrics.txt)" = 1 -a \
	"$(grep '^ibwatch_link_reason{' metrics.txt | grep -c "guid=\"$lo\".*reason=\"width\"} 1$")" = 1
check "/metrics: 16 ibwatch_link_health, the one at 1 (degraded) that cable" \
	test "$(grep -c '^ibwatch_link_health{' metrics.txt)" = 16 -a \
	"$(grep '^ibwatch_link_health{.*} 1$' metrics.txt | grep -c "$g3")" = 1 -a \
	"$(grep -c '^ibwatch_link_health{.*} [1-3]$' metrics.txt)" = 1
check "/metrics: node0003's port runs on 1 lane of 4 supported, at SDR (1)" \
	test "$(grep "^ibwatch_hca_port_width_active_lanes{guid=\"$g3\",port=\"1\"}" metrics.txt | cut -d' ' -f2)" = 1 -a \
	"$(grep "^ibwatch_hca_port_width_supported_lanes{guid=\"$g3\",port=\"1\"}" metrics.txt | cut -d' ' -f2)" = 4 -a \
	"$(grep "^ibwatch_hca_port_speed_active{guid=\"$g3\",port=\"1\"}" metrics.txt | cut -d' ' -f2)" = 1
check "/metrics passes promtool check metrics" bash -c 'promtool check metrics <metrics.txt'
curl -s -m 5 "$U/api/v1/events" >ev.json
check "one link_health_changed event: the w=1 link, ok -> degraded for width" \
	jq -e --arg a "$gl1" --arg b "$g3" '[.events[] | select(.kind == "link_health_changed")] as $e
		| ($e | length) == 1 and $e[0].old == "ok" and $e[0].new == "degraded"
		and $e[0].reasons == ["width"]
		and ([$e[0].node_guid, $e[0].peer_guid] | sort) == ([$a, $b] | sort)' ev.json

# 3. Counters: symbol errors on a switch port (leaf02 port 2, to
# node0006), LinkDowned increments on a host port (node0007 port 1).
curl -s -m 5 "$U/api/v1/status" >s0.json
sweeps=$(jq .sweeps.counter_sweeps s0.json)
sim 'PerformanceSet "leaf02"[2] PortCounters.SymbolErrorCounter=1000'
sim 'PerformanceSet "node0007"[1] PortCounters.LinkDownedCounter=20'
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/api/v1/status" | jqe ".sweeps.counter_sweeps >= $sweeps + 2" && break
	sleep 0.2
done
curl -s -m 5 "$U/api/v1/links" >after.json
check "after the injection: 13 ok, 2 degraded, 1 failing" \
	jq -e '.counts == {"ok": 13, "degraded": 2, "failing": 1, "down": 0}' after.json
check "worst first: the link_downed link (failing) leads" \
	jq -e '.links[0].health == "failing" and .links[0].reasons == ["link_downed"]
		and ([.links[0].ends[] | "\(.name)/\(.port)"] | sort) == ["leaf02/3", "node0007 HCA-1/1"]' after.json
check "... counted at the host end (node0007), 20 in the hour" \
	jq -e '.links[0].ends[] | select(.name == "node0007 HCA-1")
		| .reasons == ["link_downed"] and .windows.hour.errors.link_downed == 20' after.json
check "... the switch end has no reason of its own" \
	jq -e '.links[0].ends[] | select(.name == "leaf02") | .reasons == []' after.json
check "the symbol errors degrade leaf02 port 2 - node0006, counted at the switch end" \
	jq -e '[.links[] | select(.reasons == ["symbol_errors"])] as $l | ($l | length) == 1
		and ([$l[0].ends[] | "\(.name)/\(.port)"] | sort) == ["leaf02/2", "node0006 HCA-1/1"]
		and $l[0].health == "degraded"
		and ($l[0].ends[] | select(.name == "leaf02") | .reasons == ["symbol_errors"]
			and .windows.day.errors.symbol_errors == 1000)' after.json
check "the w=1 link is still the only width one" \
	jq -e '[.links[] | select(.reasons | index("width"))] | length == 1' after.json
curl -s -m 5 "$U/api/v1/events" >ev2.json
check "events: each of the two links changed once, with its reason" \
	jq -e '[.events[] | select(.kind == "link_health_changed")] as $e
		| ($e | length) == 3
		and ([$e[] | select(.new == "failing" and .reasons == ["link_downed"])] | length) == 1
		and ([$e[] | select(.new == "degraded" and .reasons == ["symbol_errors"])] | length) == 1' ev2.json

# 4. SNMP: ibwLinkTable and ibwLinkHealthChange, through a real snmpd
# (AgentX) and snmptrapd on loopback ports.
snmp_stack || { echo "not ok - snmpd does not start"; exit 1; }
start_agent node0001 --no-state-file --no-ping --agentx "$SOCK" \
	--discovery-interval 2 --counter-interval 1 ||
	{ echo "not ok - the SNMP agent does not start"; exit 1; }
# The cable's row is its lower end's port row.
lop=$([ "$lo" = "$g3" ] && echo 1 || echo 3)
for _ in $(seq 1 100); do
	snmpget "${A[@]}" -Oqv "$ROOT.1.1.30.0" 2>/dev/null | grep -qx 1 && break
	sleep 0.2
done
idx=$(port_row "$lo" "$lop")
snmpwalk "${A[@]}" -On "$ROOT.1.8.1.9" >health.txt 2>&1
check "ibwLinkTable: 16 cables, one degraded(2)" \
	test "$(grep -c 'INTEGER:' health.txt)" = 16 -a "$(grep -c 'INTEGER: 2$' health.txt)" = 1
check "... the w=1 cable, by its lower end ($idx)" grep -q "^$ROOT.1.8.1.9.$idx = INTEGER: 2$" health.txt
col() { snmpget "${A[@]}" -Oqv "$ROOT.1.8.1.$1.$idx"; }
check "... reason width, 1 lane of 4, the other end named" \
	test "$(col 10)" = '"width"' -a "$(col 11)" = 1 -a "$(col 12)" = 4 -a \
	"$(col 7)" = "$([ "$lop" = 1 ] && echo '"leaf01"' || echo '"node0003 HCA-1"')"
check "ibwLinksOk.0 15, ibwLinksDegraded.0 1" \
	test "$(snmpget "${A[@]}" -Oqv $ROOT.1.1.29.0)" = 15 -a "$(snmpget "${A[@]}" -Oqv $ROOT.1.1.30.0)" = 1
for _ in $(seq 1 100); do
	grep -q "= OID: $ROOT\.0\.6	" traps.log 2>/dev/null && break
	sleep 0.1
done
check "snmptrapd gets one ibwLinkHealthChange: that cable, degraded(2), was ok(1), width" \
	awk -v o="OID: $ROOT.0.6	" -v h="$ROOT.1.8.1.9.$idx = INTEGER: 2" -v p="$ROOT.1.7.7.0 = INTEGER: 1" \
	-v r="$ROOT.1.8.1.10.$idx = STRING: \"width\"" \
	'index($0, o) { n++; if (index($0, h) && index($0, p) && index($0, r)) a = 1 } END { exit !(a && n == 1) }' traps.log
stopped_clean "$agent" || bad "the SNMP agent did not stop cleanly"

# 5. Nagios: check_snmp as deploy/nagios/ibwatch.cfg's check_ibwatch_links
# runs it, against an agent that takes the enabled widths as the best
# (so the w=1 cable is ok): OK; a spine cable unlinked: CRITICAL;
# relinked: OK; symbol errors over the daily threshold: WARNING.
chk=/usr/lib/nagios/plugins/check_snmp
read -r oids warn crit < <(sed -n 's/^ *command_line.*check_snmp .* -o \([^ ]*32473\.1\.1\.30\.0[^ ]*\) -w \([^ ]*\) -c \([^ ]*\) .*/\1 \2 \3/p' \
	"$here/../deploy/nagios/ibwatch.cfg")
nagios() { "$chk" -H 127.0.0.1 -p "$snmp_port" -P 2c -C public -o "$oids" -w "$warn" -c "$crit" -l links; }
# wait_rc RC: until the plugin exits RC (20 s at most); its output in $out
wait_rc() {
	for _ in $(seq 1 100); do
		out=$(nagios)
		rc=$?
		[ $rc = "$1" ] && return 0
		sleep 0.2
	done
	return 1
}
check "check_ibwatch_links's command is in deploy/nagios ($oids -w $warn -c $crit)" test -n "${crit:-}"
start_agent node0001 --no-state-file --no-ping --agentx "$SOCK" \
	--discovery-interval 1 --counter-interval 1 --link-threshold basis=enabled \
	--link-threshold ber_degraded=0 --link-threshold ber_failing=0 \
	--link-threshold effective_ber_12m=0 --link-threshold effective_ber_125m=0 \
	--link-threshold symbol_errors_per_day=100 ||
	{ echo "not ok - the Nagios agent does not start"; exit 1; }
for _ in $(seq 1 100); do
	snmpget "${A[@]}" -Oqv "$ROOT.1.1.29.0" 2>/dev/null | grep -qx 16 && break
	sleep 0.2
done
wait_rc 0
check "check_snmp: OK with every cable ok ($out)" [ $rc = 0 ]
sim 'Unlink "spine01"[1]'
wait_rc 2
check "check_snmp: CRITICAL with a spine cable unlinked (down) ($out)" [ $rc = 2 ]
sim 'Relink "spine01"[1]'
wait_rc 0
check "check_snmp: OK again once it is relinked and active ($out)" [ $rc = 0 ]
sim 'PerformanceSet "spine02"[1] PortCounters.SymbolErrorCounter=2000'
wait_rc 1
check "check_snmp: WARNING with symbol errors over the day's threshold ($out)" [ $rc = 1 ]
check "... for the spine02 port 1 - leaf01 port 6 cable" jq -e '.links[0].health == "degraded"
	and .links[0].reasons == ["symbol_errors"]
	and ([.links[0].ends[] | "\(.name)/\(.port)"] | sort) == ["leaf01/6", "spine02/1"]' \
	<(curl -s -m 5 "http://127.0.0.1:$P/api/v1/links")

# 6. Restarts and SIGHUP: the windows come back from the state file (a
# fresh agent's first reading is only a base, so without them the cable
# would be ok), and new thresholds by SIGHUP judge the cables at once.
g2=$(jq -r '.links[].ends[] | select(.name == "node0002 HCA-1") | .guid' once.out)
echo "link-threshold = link_downed_per_hour=10" >links.conf
st=$PWD/links.state
lstart() {
	start_agent node0001 -c links.conf --state-file "$st" --no-ping --no-snmp \
		--discovery-interval 1 --counter-interval 1
}
health2() { curl -s -m 5 "http://127.0.0.1:$P/api/v1/links/$g2/1" | jq -r .health; }
lstart || { echo "not ok - the state-file agent does not start"; exit 1; }
for _ in $(seq 1 100); do
	curl -s -m 5 "http://127.0.0.1:$P/api/v1/status" | jqe '.sweeps.counter_sweeps >= 2' && break
	sleep 0.2
done
sim 'PerformanceSet "node0002"[1] PortCounters.LinkDownedCounter=15'
for _ in $(seq 1 100); do [ "$(health2)" = failing ] && break; sleep 0.2; done
check "15 LinkDowned on node0002 make its cable failing" [ "$(health2)" = failing ]
stopped_clean "$agent" || bad "the state-file agent did not stop cleanly"
check "the state file has the 16 cables' windows" [ "$(grep -c '^l link ' "$st")" = 16 ]
lstart || { echo "not ok - the state-file agent does not start again"; exit 1; }
for _ in $(seq 1 100); do
	curl -s -m 5 "http://127.0.0.1:$P/api/v1/status" | jqe '.sweeps.discoveries >= 1 and .links.ok > 0' && break
	sleep 0.2
done
check "after a restart the cable is failing at once, its hour's 15 LinkDowned restored" \
	jq -e '.health == "failing" and ([.ends[].windows.hour.errors.link_downed] | add) == 15' \
	<(curl -s -m 5 "http://127.0.0.1:$P/api/v1/links/$g2/1")
printf '%s\n' "link-threshold = link_downed_per_hour=100" "link-threshold = link_downed_per_day=100" >links.conf
kill -HUP "$agent"
for _ in $(seq 1 100); do [ "$(health2)" = ok ] && break; sleep 0.2; done
check "SIGHUP with thresholds of 100: the cable is ok again" [ "$(health2)" = ok ]
check "... one link_health_changed event, failing -> ok, for it" jq -e --arg g "$g2" \
	'[.events[] | select(.kind == "link_health_changed" and .new == "ok"
		and ([.node_guid, .peer_guid] | index($g)))] | length == 1 and .[0].old == "failing"' \
	<(curl -s -m 5 "http://127.0.0.1:$P/api/v1/events")
check "the log says link-threshold was applied" grep -q 'link-threshold changed in .*: applied' "agent-$P.log"
# Stopped before finish, which reads its log for sanitizer reports.
check "the agent stops cleanly (SIGTERM, exit 0)" stopped_clean "$agent"

finish
