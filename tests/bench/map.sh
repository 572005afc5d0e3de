#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The fabric map in headless Chromium on the 3-level fat tree (2,592 hosts,
# 14,256 ports; HOSTS=10368 for the 57,024-port tree): a running agent
# after its first counter sweep, then the page loaded ROUNDS times
# (tests/integration/browser.py): seconds from navigation to the map drawn
# and clickable (the canvas' summary is set once the first /api/v1/map is
# drawn and its handlers are live), the page's JavaScript heap (Chromium's
# Performance.getMetrics, JSHeapTotalSize), the renderer process' RSS
# (the largest Chromium --type=renderer process) and /api/v1/map's size and
# time. SHOT=FILE saves a screenshot of the last load.
#   tests/bench/map.sh [BUILD_DIR] [ROUNDS]
. "$(dirname "$0")/lib.sh"
rounds=${2:-3}

if [ -n "${IBW_SIM_DIR:-}" ]; then
	port=$((20000 + RANDOM % 20000))
	LD_PRELOAD=$IBW_SIM_PRELOAD "$build/agent/ibwatchd" --no-state-file \
		--no-snmp --http "127.0.0.1:$port" >agent.out 2>agent.log &
	agent=$!
	trap 'kill $agent 2>/dev/null' EXIT
	U=http://127.0.0.1:$port
	for _ in $(seq 1 900); do
		[ "$(curl -s "$U/api/v1/status" 2>/dev/null | jq -r ".sweeps.counter_sweeps // 0" 2>/dev/null)" -ge 1 ] 2>/dev/null && break
		sleep 0.2
	done
	curl -s -o map.json -w '/api/v1/map: %{size_download} bytes in %{time_total} s (first)\n' "$U/api/v1/map"
	curl -s -o /dev/null -w '/api/v1/map: %{size_download} bytes in %{time_total} s (cached)\n' "$U/api/v1/map"
	jq -c .counts map.json
	for r in $(seq 1 "$rounds"); do
		shot=()
		[ "$r" = "$rounds" ] && [ -n "${SHOT:-}" ] && shot=(--screenshot "$SHOT")
		/usr/bin/python3 "$top/tests/integration/browser.py" "$U" "b$r.json" "${shot[@]}" >/dev/null 2>&1 || true
		jq -r --argjson r "$r" '"load \($r): drawn after \(.load_s * 1000 | floor) ms (page: \(.first.drawn_ms | floor) ms after its script started), JS heap \(.js_heap_bytes / 1048576 | floor) MB, renderer RSS \(.renderer_rss_kb / 1024 | floor) MB, \([.console[] | select(.level == "SEVERE")] | length) console errors"' "b$r.json"
	done
	exit 0
fi

hosts=${HOSTS:-2592}
bench_net 3 "$hosts" "$work/fattree3-$hosts.net"
exec "$top/tests/lib/with-fabric.sh" bench_map "$work/fattree3-$hosts.net" \
	--sm "node$hosts" --osm-args "-s 0" --ibsim-args "$flags" --timeout 600 \
	-- "$top/tests/bench/map.sh" "$build" "$rounds"
