#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The fabric map's trouble on the 57,024-port tree (3 levels, 10,368
# hosts, 1,296 switches; HOSTS=N for another), in headless Chromium
# through chromium-driver (tests/integration/browser.py), as a new user
# meets it: one host unlinked and one host cable's SymbolErrorCounter at
# 5,000 (over symbol_errors_per_day=100). Checks, TAP-like, and exits 1
# if one fails:
#   - the page is drawn grouped (blocks), its title counts the trouble;
#   - the canvas has pixels of the down and the degraded colours (the
#     legend is outside the canvas);
#   - the trouble list names both cables, worst first;
#   - a click on each centres it (its ring within 5% of the canvas'
#     centre) and rings it, and its details chart its last hour;
# and prints the times. Screenshots (docs/map.md): docs/img/map-57k.png
# (as loaded) and map-57k-trouble.png (after the last click), in
# $MAP_SHOTS instead when set (ctest's fabric_map_big, label big).
#   tests/bench/map_trouble.sh [BUILD_DIR]
. "$(dirname "$0")/lib.sh"
# realistic supported widths and speeds (docs/testing.md): else every
# cable of ibsim is narrower than both ends support
export IBW_KMODEL=${IBW_KMODEL:-$build/tests/libibw_kmodel.so}

if [ -n "${IBW_SIM_DIR:-}" ]; then
	# ibsim, busy with the first sweeps of 57,024 ports (or a loaded
	# machine), may not answer its control socket at once: again, a few
	# times
	sim() {
		local i
		for i in 1 2 3 4 5; do
			"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" "$1" >/dev/null && return 0
			sleep 2
		done
		return 1
	}
	port=$((20000 + RANDOM % 20000))
	LD_PRELOAD=$IBW_SIM_PRELOAD "$build/agent/ibwatchd" --no-state-file \
		--no-snmp --http "127.0.0.1:$port" --counter-interval 5 \
		--link-threshold symbol_errors_per_day=100 >agent.out 2>agent.log &
	agent=$!
	trap 'kill $agent 2>/dev/null' EXIT
	U=http://127.0.0.1:$port
	for _ in $(seq 1 1500); do
		[ "$(curl -s "$U/api/v1/status" 2>/dev/null | jq -r ".sweeps.counter_sweeps // 0" 2>/dev/null)" -ge 1 ] 2>/dev/null && break
		sleep 0.2
	done
	# a host of the first pod's first leaf (the agent is node0001's),
	# and one of a leaf in the middle
	# (a command that got no answer may still have been done: the wait
	# below and the checks say whether the faults are there)
	sim 'Unlink "p1-leaf01"[3]' || echo "# Unlink not acknowledged"
	sim 'PerformanceSet "p17-leaf09"[5] PortCounters.SymbolErrorCounter=5000' ||
		echo "# PerformanceSet not acknowledged"
	for _ in $(seq 1 600); do
		curl -s "$U/api/v1/links?health=down" | jq -e '.links | length > 0' >/dev/null 2>&1 &&
			curl -s "$U/api/v1/links?health=degraded" | jq -e '.links | length > 0' >/dev/null 2>&1 &&
			break
		sleep 0.2
	done
	curl -s -o /dev/null -w '/api/v1/map: %{size_download} bytes in %{time_total} s\n' "$U/api/v1/map"
	shots=${MAP_SHOTS:-$top/docs/img}
	mkdir -p "$shots"
	/usr/bin/python3 "$top/tests/integration/browser.py" "$U" trouble.json \
		--size 1600x1000 --trouble 2 --colours \
		--screenshot "$shots/map-57k.png" \
		--trouble-screenshot "$shots/map-57k-trouble.png" >browser.out 2>&1 || true
	fails=0
	check() {
		if jq -e "$2" trouble.json >/dev/null 2>&1; then
			echo "ok - $1"
		else
			echo "not ok - $1"
			fails=$((fails + 1))
		fi
	}
	jq -r '"drawn and clickable \(.load_s * 1000 | floor) ms after navigation, renderer RSS \(.renderer_rss_kb / 1024 | floor) MB, JS heap \(.js_heap_bytes / 1048576 | floor) MB"' trouble.json
	check "drawn grouped: $(jq -c '[.first.grouped, .first.blocks]' trouble.json)" \
		'.first.grouped == true and .first.blocks > 0'
	check "the title counts the trouble: $(jq -r .title trouble.json)" \
		'.title | test("^\\([0-9]+\\) ")'
	check "the canvas shows the down colour and the erroring cable's (degraded or failing): $(jq -c .colours trouble.json)" \
		'.colours.down >= 50 and .colours.degraded + .colours.failing >= 50'
	check "the trouble list, worst first: $(jq -c '[.trouble.summary.trouble[0:3][] | .text]' trouble.json)" \
		'(.trouble.summary.trouble[0].health == "down") and
		 ([.trouble.summary.trouble[] | select(.kind == "cable") | .text] |
		  any(test("p1-leaf01 \\[3\\]")) and any(test("p17-leaf09 \\[5\\].*symbol_errors")))'
	check "a click on each centres it and rings it: $(jq -c '[.trouble.clicked[] | .focus | [(.x | floor), (.y | floor), .width, (.height | floor)]]' trouble.json)" \
		'[.trouble.clicked[] | .focus as $f | ($f != null) and
		  (($f.x - $f.width / 2) | fabs) < $f.width * 0.05 and
		  (($f.y - $f.height / 2) | fabs) < $f.height * 0.05 and
		  .summary_focus == .text] | all'
	check "each cable's details chart its last hour" \
		'[.trouble.clicked[] | .history != null and (.history.seconds[0] | length) == 12] | all'
	check "no console errors" '[.console[] | select(.level == "SEVERE")] | length == 0'
	exit $((fails > 0))
fi

hosts=${HOSTS:-10368}
bench_net 3 "$hosts" "$work/fattree3-$hosts.net"
exec "$top/tests/lib/with-fabric.sh" bench_map_trouble "$work/fattree3-$hosts.net" \
	--sm "node$hosts" --osm-args "-s 0" --ibsim-args "$flags" --timeout 900 \
	-- "$top/tests/bench/map_trouble.sh" "$build"
