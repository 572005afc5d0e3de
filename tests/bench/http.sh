#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# /metrics under load on the 3-level fat tree (2592 hosts, 14256 ports)
# while the agent sweeps (discovery and counters every 5 s, pings every
# 10 s): wrk with 20 connections for 20 s, with gzip (as Prometheus
# asks) and without, the body's size, and one scrape timed alone.
#   tests/bench/http.sh [BUILD_DIR]
. "$(dirname "$0")/lib.sh"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	port=$((20000 + RANDOM % 20000))
	LD_PRELOAD=$IBW_SIM_PRELOAD "$build/agent/ibwatchd" --no-state-file \
		--http "127.0.0.1:$port" --discovery-interval 5 --counter-interval 5 \
		>agent.out 2>agent.log &
	agent=$!
	trap 'kill $agent 2>/dev/null' EXIT
	U=http://127.0.0.1:$port
	for _ in $(seq 1 300); do
		[ "$(curl -s "$U/api/v1/status" 2>/dev/null | jq -r ".sweeps.counter_sweeps // 0" 2>/dev/null)" -ge 1 ] 2>/dev/null && break
		sleep 0.2
	done
	curl -s -o metrics.txt -w 'one scrape: %{time_total} s, %{size_download} bytes\n' "$U/metrics"
	echo "series: $(grep -vc '^#' metrics.txt), ports in the fabric: $(curl -s "$U/api/v1/status" | jq .fabric.ports)"
	curl -s -H 'Accept-Encoding: gzip' -o metrics.gz -w 'one gzip scrape: %{time_total} s, %{size_download} bytes\n' "$U/metrics"
	echo "== 20 scrapers asking for gzip, as Prometheus does"
	wrk -t 2 -c 20 -d 20s --latency -H 'Accept-Encoding: gzip' "$U/metrics"
	echo "== 20 scrapers asking for plain text"
	wrk -t 2 -c 20 -d 20s --latency "$U/metrics"
	echo "sweeps during the run: $(curl -s "$U/api/v1/status" | jq -c '{discoveries: .sweeps.discoveries, counter_sweeps: .sweeps.counter_sweeps}')"
	exit 0
fi

bench_net 3 2592 "$work/fattree3-2592.net"
exec "$top/tests/lib/with-fabric.sh" bench_http "$work/fattree3-2592.net" \
	--sm node2592 --osm-args "-s 0" --ibsim-args "$flags" --timeout 180 \
	-- "$top/tests/bench/http.sh" "$build"
