#!/bin/bash
# Link health on an 8-host fat tree whose leaf01 port 3 - node0003 cable
# is built at 1x (ibsim's w=1) among 4x cables: that link, and only it,
# is degraded for "width" in `ibwatchd --links`, /api/v1/links (from
# either end), /api/v1/status and one link_health_changed event. Then
# symbol errors injected on a switch port and LinkDowned increments on a
# host port (PerformanceSet) move exactly the cables they belong to,
# with both ends named right, to degraded and failing.
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
# seconds (docs/links.md: the BER needs 1e12 bits, 100 s at 4x SDR).
start_agent node0001 --no-state-file --no-ping --discovery-interval 2 \
	--counter-interval 1 --link-threshold ber_degraded=0 \
	--link-threshold ber_failing=0 \
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
curl -s -m 5 "$U/metrics" >metrics.txt
lo=$(printf '%s\n%s\n' "$gl1" "$g3" | sort | head -1)
check "/metrics: one ibwatch_link_reason, width, on that cable" \
	test "$(grep -c '^ibwatch_link_reason{' metrics.txt)" = 1 -a \
	"$(grep '^ibwatch_link_reason{' metrics.txt | grep -c "guid=\"$lo\".*reason=\"width\"} 1$")" = 1
check "/metrics: 16 ibwatch_link_health, the one at 1 (degraded) that cable" \
	test "$(grep -c '^ibwatch_link_health{' metrics.txt)" = 16 -a \
	"$(grep '^ibwatch_link_health{.*} 1$' metrics.txt | grep -c "$g3")" = 1 -a \
	"$(grep -c '^ibwatch_link_health{.*} [1-3]$' metrics.txt)" = 1
check "/metrics: node0003's port runs on 1 lane of 4 supported, at SDR (1)" \
	test "$(grep "^infiniband_hca_port_width_active_lanes{guid=\"$g3\",port=\"1\"}" metrics.txt | cut -d' ' -f2)" = 1 -a \
	"$(grep "^infiniband_hca_port_width_supported_lanes{guid=\"$g3\",port=\"1\"}" metrics.txt | cut -d' ' -f2)" = 4 -a \
	"$(grep "^infiniband_hca_port_speed_active{guid=\"$g3\",port=\"1\"}" metrics.txt | cut -d' ' -f2)" = 1
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

finish
