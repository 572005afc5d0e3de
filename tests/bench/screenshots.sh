#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Regenerate the fabric map's screenshots in docs/img/ (docs/map.md) on
# the 324-host 2-level fat tree under the kernel model (realistic
# supported widths): a host cable trained at 1x, a leaf-spine cable with
# symbol errors, one host unlinked; then a trace between two hosts.
#   tests/bench/screenshots.sh [BUILD_DIR]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
work=$build/bench-work
mkdir -p "$work" "$top/docs/img"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	sim() { "$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" "$1" >/dev/null; }
	port=$((20000 + RANDOM % 20000))
	LD_PRELOAD=$IBW_SIM_PRELOAD "$build/agent/ibwatchd" --no-state-file \
		--no-snmp --http "127.0.0.1:$port" --counter-interval 1 \
		--counter-full-speed --ping-interval-ms 1000 \
		--link-threshold symbol_errors_per_day=100 >agent.out 2>agent.log &
	agent=$!
	trap 'kill $agent 2>/dev/null' EXIT
	U=http://127.0.0.1:$port
	for _ in $(seq 1 600); do
		[ "$(curl -s "$U/api/v1/status" 2>/dev/null | jq -r ".sweeps.counter_sweeps // 0" 2>/dev/null)" -ge 2 ] 2>/dev/null && break
		sleep 0.2
	done
	sim 'PerformanceSet "spine03"[2] PortCounters.SymbolErrorCounter=2000'
	sim 'Unlink "leaf05"[4]'
	sleep 6
	/usr/bin/python3 "$top/tests/integration/browser.py" "$U" shots.json \
		--screenshot "$top/docs/img/map-324.png" \
		--trace "node0002 HCA-1" "node0300 HCA-1" \
		--trace-screenshot "$top/docs/img/map-324-trace.png" --size 1600x900
	jq -c '{load_s, marked: .first.marked, down: .first.down_tiles, path: .traced.path}' shots.json
	exit 0
fi

"$build/tests/ibw-fattree" --levels 2 --hosts 324 |
	sed -e '/^Switch.*"leaf01"/,/^$/ s/^\[3\]\t"node0003"\[1\]$/&\tw=1/' \
	    -e '/^Hca.*"node0003"/,/^$/ s/^\[1\]\t"leaf01"\[3\]$/&\tw=1/' >"$work/shots-324.net"
export IBW_SIMGUARD=$build/tests/libibw_simguard.so IBW_TEST_WORK=$work
export IBW_KMODEL=${IBW_KMODEL:-$build/tests/libibw_kmodel.so}
exec "$top/tests/lib/with-fabric.sh" shots "$work/shots-324.net" \
	--sm node0324 -- "$top/tests/bench/screenshots.sh" "$build"
