#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The fabric map in a real browser (headless Chromium through
# chromium-driver and python3-selenium, tests/integration/browser.py) on
# a 16-host fat tree whose leaf01 - node0003 cable trains at 1x and whose
# spine02 port 1 - leaf01 cable counts symbol errors: the switches drawn
# per level and the bundles and cables between levels equal
# ibnetdiscover's topology; leaf01's host tile (the 1x cable) and the
# spine02 - leaf01 bundle (the errors) are marked, nothing else; a trace
# between two named hosts highlights exactly the switches ibtracert
# prints; unlinking a host shows its leaf's tile down within a sweep or
# two; the page follows a daemon restart without reloading; the console
# has no errors and every request went to the agent.
# With --http-token-file alone, the map's Trace (a 401 at first) asks
# for the token once, in the page, and then traces. With
# --http-token-everywhere the page and every file it loads need the
# token; the agent's sign-in form at / signs in and the map is drawn.
# Neither puts the token in an address; ?token= signs nothing in.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ] ||
	! /usr/bin/python3 -c 'import selenium' 2>/dev/null; then
	echo "not ok - chromium, chromium-driver and python3-selenium are needed (tests/run.sh installs them)"
	exit 1
fi
if [ -z "${IBW_SIM_DIR:-}" ]; then
	work=${IBW_TEST_WORK:-$PWD/test-work}
	mkdir -p "$work"
	"$IBW_FATTREE" --levels 2 --hosts 16 |
		sed -e '/^Switch.*"leaf01"/,/^$/ s/^\[3\]\t"node0003"\[1\]$/&\tw=1/' \
		    -e '/^Hca.*"node0003"/,/^$/ s/^\[1\]\t"leaf01"\[3\]$/&\tw=1/' \
		>"$work/browser-16.net" || exit 1
	grep -c 'w=1' "$work/browser-16.net" | grep -qx 2 || { echo "not ok - w=1 not placed"; exit 1; }
	exec "$here/lib/with-fabric.sh" browser "$work/browser-16.net" --sm node0016 -- "$0"
fi
trap stop_started EXIT

# The reference: ibnetdiscover's switches (leaves: those with hosts),
# the switch pairs and cables between them; ibtracert's switches.
at node0001 ibnetdiscover >topo.txt 2>topo.err
read -r leaves spines pairs cables < <(awk '
/^Switch/ { g = $0; sub(/.*"S-/, "", g); sub(/".*/, "", g); cur = g; sw[cur] = 1; insw = 1; next }
/^(Ca|Hca)/ { insw = 0; next }
insw && /^\[[0-9]+\]/ {
	r = $0; sub(/^[^"]*"/, "", r); t = substr(r, 1, 1); g = r; sub(/^.-/, "", g); sub(/".*/, "", g)
	if (t == "H") hosts[cur]++
	else if (t == "S" && cur < g) { pair[cur " " g] = 1; c++ }
}
END { for (s in sw) if (hosts[s]) l++; else p++; for (x in pair) n++; print l, p, n, c }' topo.txt)
check "ibnetdiscover: $leaves leaves, $spines spines, $pairs switch pairs, $cables cables" \
	[ "${leaves:-0}" -gt 0 ]
at node0001 ibtracert "$(lid_of node0002)" "$(lid_of node0007)" >tracert.txt 2>&1
ref_path=$(sed -n 's/.*-> switch port .*"\([^"]*\)"$/\1/p' tracert.txt | paste -sd, -)
check "ibtracert node0002 -> node0007 crosses switches ($ref_path)" [ -n "$ref_path" ]

start_agent node0001 --no-state-file --counter-interval 1 --counter-full-speed \
	--ping-interval-ms 500 --discovery-interval 2 \
	--link-threshold symbol_errors_per_day=100
check "the agent listens" [ -n "${P:-}" ]
U=http://127.0.0.1:$P
sim 'PerformanceSet "spine02"[1] PortCounters.SymbolErrorCounter=2000'
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/api/v1/map" | jq -e '[.bundles[] | select(.health != "ok")] | length == 1' >/dev/null && break
	sleep 0.2
done
check "/api/v1/map: one bundle not ok (the symbol errors)" \
	eval 'curl -s -m 5 "$U/api/v1/map" | jq -e "[.bundles[] | select(.health != \"ok\")] | length == 1"'
hdr=$(curl -s -m 5 -D - -o page.html "$U/")
check "/ is the map's page, with a Content-Security-Policy without inline script" \
	eval 'grep -qi "^Content-Security-Policy: .*script-src '"'"'self'"'"';" <<<"$hdr" &&
		! grep -qi "unsafe-inline" <<<"$hdr" && grep -q "<canvas id=\"map\"" page.html &&
		! grep -q "<script>" page.html'
check "/api lists the endpoints (the old landing page)" \
	eval 'curl -s -m 5 "$U/api" | grep -q "/api/v1/map"'

# Details on click and the census overlay, while nothing changes.
/usr/bin/python3 "$here/integration/browser.py" "$U" b0.json --click leaf01 --census >browser0.out 2>&1
curl -s -m 5 "$U/api/v1/map" >mapc.json
unlink_cmd="\"$IBW_SIMFABRIC\" cmd \"$IBW_SIM_DIR\" 'Unlink \"leaf02\"[2]' >/dev/null"
rm -f unlinked restarted
/usr/bin/python3 "$here/integration/browser.py" "$U" b1.json \
	--trace "node0002 HCA-1" "node0007 HCA-1" \
	--then "$unlink_cmd" 's.down_tiles.length > 0' \
	--signal unlinked --pause restarted >browser.out 2>&1 &
browser=$!
for _ in $(seq 1 600); do
	[ -e unlinked ] && break
	kill -0 $browser 2>/dev/null || break
	sleep 0.1
done
# The daemon restarts on the same port while the page is open.
check "the agent stops cleanly (a restart under the open page)" stopped_clean "$agent"
spawn node0001 "$IBWATCHD" --http "127.0.0.1:$P" --no-state-file --counter-interval 1 \
	--counter-full-speed --ping-interval-ms 500 --discovery-interval 2 \
	--link-threshold symbol_errors_per_day=100 >agent-r.out 2>agent-r.log &
agent=$!
pids+=("$agent")
touch restarted
wait $browser
check "the browser ran ($(tail -c 300 browser.out | tr '\n' ' '))" jq -e '.ok and .first != null' b1.json
echo "# first drawn after $(jq .load_s b1.json) s; the unlinked host shown down after $(jq .then_s b1.json) s"
check "switches drawn per level: $leaves leaves at 1, $spines spines at 2" \
	jq -e --argjson l "$leaves" --argjson s "$spines" '.first.levels == {"1": $l, "2": $s}' b1.json
check "bundles and cables drawn between levels 1 and 2: $pairs and $cables" \
	jq -e --argjson p "$pairs" --argjson c "$cables" '.first.bundles == {"1-2": $p} and .first.cables == {"1-2": $c}' b1.json
check "16 hosts in the tiles" jq -e '.first.hosts == 16' b1.json
check "marked: leaf01's host tile (the 1x cable), and no other tile" \
	jq -e '.first.marked.tiles == ["leaf01"]' b1.json
check "marked: the leaf01 - spine02 bundle (the symbol errors), and no other bundle" \
	jq -e '.first.marked.bundles == [["leaf01", "spine02"]]' b1.json
check "clicking leaf01 opens its facts: name, GUID, its 8 ports, events" \
	jq -e --arg g "$(curl -s -m 5 "$U/api/v1/map" | jq -r '.switches[] | select(.name == "leaf01") | .guid')" \
	'(.details | contains("leaf01") and contains($g) and contains("Events")) and .details_ports == 8' b0.json
check "leaf01's first port charted on a click, the same chart still there two polls later ($(jq -c '[.port_chart.ends[0].name, .port_chart_later.ends[0].name]' b0.json))" \
	jq -e '.port_chart != null and (.port_chart.seconds[0] | length) == 12 and
		.port_chart_later.ends == .port_chart.ends' b0.json
check "the census overlay marks the switch bundles with the most routes ($(jq -r .census_status b0.json))" \
	jq -e --slurpfile m mapc.json '
		($m[0].switches | map({(.guid): .name}) | add) as $n |
		([$m[0].bundles[] | select(.routes > 0) | .routes] | sort | reverse) as $r |
		($r[([9, ($r | length) - 1] | min)]) as $floor |
		(.census.overlay.busy | sort) ==
		([$m[0].bundles[] | select(.routes >= $floor) | [$n[.a], $n[.b]] | sort] | sort) and
		(.census.overlay.busy | length) >= 10' b0.json
check "the trace node0002 -> node0007 highlights $ref_path, as ibtracert" \
	jq -e --arg p "$ref_path" '(.traced.path | join(",")) == $p' b1.json
check "node0006 unlinked: leaf02's tile shown down" \
	jq -e '.then.down_tiles == ["leaf02"]' b1.json
check "... within 10 s (sweeps every second; $(jq .then_s b1.json) s)" \
	jq -e '.then_s < 10' b1.json
# (a poll that meets the restarting agent's closed port is the network's
# "connection refused", logged by the browser itself)
check "the console has no errors ($(jq -c '[.console[] | select(.level == "SEVERE")][0:2]' b1.json))" \
	jq -e '[.console[] | select(.level == "SEVERE" and (.message | contains("ERR_CONNECTION_REFUSED") | not))] | length == 0' b1.json
check "every request went to the agent ($(jq '.requests | length' b1.json) requests)" \
	jq -e --arg u "$U/" '(.requests | length) > 3 and all(.requests[]; startswith($u))' b1.json
check "the page says how old its data is ($(jq -r .age_text b1.json))" \
	jq -e '.age_text | test("^data [0-9]+ s old")' b1.json
check "through the restart the page went on with the new agent's maps, without reloading ($(jq .restart_s b1.json) s)" \
	jq -e '.after_restart != null and (.age_after_restart | test("^data [0-9]+ s old$"))' b1.json
check "the restarted agent stops cleanly" stopped_clean "$agent"

# Trouble first (docs/map.md): a fresh agent (node0006 stays unlinked,
# unknown to it), then node0010 unlinked and spine02 port 1's symbol
# errors risen while it runs; the page drawn grouped (?group=1000: any
# fabric, blocks below 1000 px a switch), its trouble list clicked.
start_agent node0001 --no-state-file --counter-interval 1 --counter-full-speed \
	--ping-interval-ms 500 --discovery-interval 2 \
	--link-threshold symbol_errors_per_day=100
U=http://127.0.0.1:$P
wait_counter_sweeps 2
sim 'Unlink "leaf03"[2]'
sim 'PerformanceSet "spine02"[1] PortCounters.SymbolErrorCounter=6000'
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/api/v1/links?health=down" | jq -e '.links | length == 1' >/dev/null &&
		curl -s -m 5 "$U/api/v1/links?reason=symbol_errors" | jq -e '.links | length == 1' >/dev/null && break
	sleep 0.2
done
/usr/bin/python3 "$here/integration/browser.py" "$U" b4.json --query group=1000 \
	--trouble 3 >browser4.out 2>&1
curl -s -m 5 "$U/api/v1/links?health=down" >down.json
curl -s -m 5 "$U/api/v1/links?reason=symbol_errors" >errs.json
curl -s -m 5 "$U/api/v1/links?health=degraded" >degraded.json
check "the page ran, drawn as blocks at first ($(jq -c '[.ok, .first.grouped, .first.blocks]' b4.json))" \
	jq -e '.ok and .first.grouped and .first.blocks > 0' b4.json
check "the canvas shows the down and the degraded colours as loaded ($(jq -c .colours b4.json))" \
	jq -e '.colours.down >= 50 and .colours.degraded >= 50' b4.json
check "the trouble list, worst first: node0010's cable down, then the symbol errors, then the 1x cable ($(jq -c '[.summary.trouble[] | .text]' b4.json))" \
	jq -e '[.summary.trouble[] | select(.kind == "cable") | .text] as $t |
		($t[0] | test("^down: node0010 HCA-1 \\[1\\] .* leaf03 \\[2\\]")) and
		($t | any(test("spine02 \\[1\\] .* leaf01 .*symbol_errors"))) and
		($t | any(test("^degraded: node0003 HCA-1 \\[1\\] .* leaf01 \\[3\\] \\(width\\)"))) and
		([.summary.trouble[] | select(.kind == "endport") | .text] | any(test("node0010")))' b4.json
check "the title counts them ($(jq -r .title b4.json))" \
	jq -e '.title == "(\(.summary.trouble | map(select(.kind != "hot")) | length)) ibwatchd: fabric map"' b4.json
check "a click on each centres it and rings it ($(jq -c '[.trouble.clicked[] | .focus | [(.x | floor), (.y | floor)]]' b4.json))" \
	jq -e '[.trouble.clicked[] | .focus as $f | ($f != null) and
		(($f.x - $f.width / 2) | fabs) < $f.width * 0.05 and
		(($f.y - $f.height / 2) | fabs) < $f.height * 0.05 and .summary_focus == .text] |
		length == 3 and all' b4.json
# The last hour charted for the cables clicked equals their windows.
# (the time within a minute: the page drew them seconds before LINKS.json
# was asked, and a live cable's hour grows by a second a second)
hour_check() { # ITEM LINKS.json: the chart's sums against the hour window
	jq -e --slurpfile l "$2" --argjson i "$1" '
		.trouble.clicked[$i].history as $h | $l[0].links[0] as $k |
		[range(0; 2) as $e | $h.ends[$e] as $en |
		 ($k.ends[] | select(.guid == $en.guid and .port == $en.port) | .windows.hour) as $w |
		 (($h.errors[$e] | add) == ([$w.errors[]] | add)) and
		 ((($h.seconds[$e] | add) - $w.seconds) | fabs) < 60] | length == 2 and all' b4.json
}
check "the down cable's charts: 12 buckets, each end's errors and time summing to its hour window" \
	hour_check 0 down.json
check "the symbol-error cable's charts: the same, its symbol errors in them ($(jq -c '[.trouble.clicked[1].history.errors[] | add]' b4.json))" \
	eval 'hour_check 1 errs.json && jq -e "[.trouble.clicked[1].history.errors[] | add] | max >= 4000" b4.json'
g=$(jq -r '.links[0].ends[0].guid' errs.json)
pt=$(jq -r '.links[0].ends[0].port' errs.json)
curl -s -m 5 "$U/api/v1/history/$g/$pt" >hist.json
curl -s -m 5 "$U/api/v1/links/$g/$pt" >link.json
check "/api/v1/history/$g/$pt: 12 buckets of 300 s summing to /api/v1/links' hour window (errors, bytes; time within a sweep)" \
	jq -e --slurpfile k link.json '(.buckets | length) == 12 and .bucket_seconds == 300 and
		([range(0; 2) as $e | .ends[$e] as $en | [.buckets[].ends[$e]] as $b |
		 ($k[0].ends[] | select(.guid == $en.guid and .port == $en.port) | .windows.hour) as $w |
		 ([$b[].errors[]] | add) == ([$w.errors[]] | add) and
		 (([$b[].seconds] | add) - $w.seconds | fabs) <= 2.5] | all)' hist.json
check "... 404 for a port with no cable, 400 for a bad path" \
	eval '[ "$(curl -s -o /dev/null -w "%{http_code}" -m 5 "$U/api/v1/history/$g/30")" = 404 ] &&
		[ "$(curl -s -o /dev/null -w "%{http_code}" -m 5 "$U/api/v1/history/nope")" = 400 ]'
curl -s -m 5 "$U/api/v1/links?limit=2" >lim.json
curl -s -m 5 "$U/api/v1/links" >all.json
check "/api/v1/links?limit=2: the first two of the list, the whole view's counts" \
	jq -e --slurpfile a all.json 'def id: [.[] | [.health, .ends[0].guid, .ends[0].port]];
		(.links | length) == 2 and (.links | id) == ($a[0].links[0:2] | id) and
		.counts == $a[0].counts' lim.json
check "... limit=0 is a 400 problem" \
	eval '[ "$(curl -s -o /dev/null -w "%{http_code}" -m 5 "$U/api/v1/links?limit=0")" = 400 ]'
check "no console errors on the trouble page" \
	jq -e '[.console[] | select(.level == "SEVERE")] | length == 0' b4.json
check "the agent stops cleanly" stopped_clean "$agent"

# The token alone (issue 36, Found 7): / is open, trace is not. The
# page's Trace gets 401, asks for the token once, and then traces.
printf 'map-test-token-%s\n' "$RANDOM$RANDOM" >token
tok=$(cat token)
start_agent node0001 --no-state-file --no-ping --counter-interval 1 \
	--http-token-file "$PWD/token"
U=http://127.0.0.1:$P
/usr/bin/python3 "$here/integration/browser.py" "$U" b3.json --token "$tok" \
	--trace "node0002 HCA-1" "node0007 HCA-1" >browser3.out 2>&1
check "--http-token-file alone: the page asks for the token once ($(jq -c '[.signins, .trace_status]' b3.json))" \
	jq -e '.ok and .first != null and .signins == 1' b3.json
check "... and then the trace node0002 -> node0007 highlights $ref_path, as ibtracert" \
	jq -e --arg p "$ref_path" '(.traced.path | join(",")) == $p' b3.json
check "... no console errors after signing in, every request to the agent, none with the token" \
	jq -e --arg u "$U/" --arg t "$tok" '([.console[] | select(.level == "SEVERE")] | length == 0) and
		all(.requests[]; startswith($u) and (contains($t) | not))' b3.json
check "the agent stops cleanly" stopped_clean "$agent"

# The token everywhere: the page and its files need it; the agent's own
# form at / signs in.
start_agent node0001 --no-state-file --no-ping --counter-interval 1 \
	--http-token-file "$PWD/token" --http-token-everywhere
U=http://127.0.0.1:$P
codes=""
for path in / /ui/map.js /ui/map.css /ui/d3.min.js /api/v1/map; do
	codes="$codes $(curl -s -o /dev/null -w '%{http_code}' -m 5 "$U$path")"
done
check "without the token: 401 for the page and everything it loads ($codes)" \
	[ "$codes" = " 401 401 401 401 401" ]
check "... with the bearer token: 200" \
	eval '[ "$(curl -s -o /dev/null -w "%{http_code}" -m 5 -H "Authorization: Bearer $tok" "$U/ui/map.js")" = 200 ]'
check "... /?token= with the right token: 400, no cookie (no sign-in by address)" \
	eval '[ "$(curl -s -D h.txt -o /dev/null -w "%{http_code}" -m 5 "$U/?token=$tok")" = 400 ] && ! grep -qi "^set-cookie" h.txt'
/usr/bin/python3 "$here/integration/browser.py" "$U" b2.json --token "$tok" >browser2.out 2>&1
check "signed in with the form at /: the map is drawn ($(tail -c 200 browser2.out | tr '\n' ' '))" \
	jq -e '.ok and .first != null and .first.levels["1"] > 0 and .signins == 1' b2.json
check "... at /, and no console errors after signing in" \
	jq -e --arg u "$U/" '.url_after_load == $u and ([.console[] | select(.level == "SEVERE")] | length == 0)' b2.json
check "... every request went to the agent, none with the token" \
	jq -e --arg u "$U/" --arg t "$tok" 'all(.requests[]; startswith($u) and (contains($t) | not))' b2.json
check "the agent stops cleanly again" stopped_clean "$agent"
finish
