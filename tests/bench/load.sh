#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# HTTP load on the 2048-host 2-level fat tree while the agent sweeps
# (discovery and counters every 5 s, pings every 10 s): wrk with 200
# connections for 30 s against /metrics (gzip, as Prometheus asks), then
# against /api/v1/ports. Prints wrk's figures, the errors (socket errors
# and non-2xx answers), the agent's RSS before, after and 10 s later,
# and whether the sweeps went on.
#   tests/bench/load.sh [BUILD_DIR] [SECONDS] [CONNECTIONS]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
secs=${2:-30}
conns=${3:-200}
work=$build/bench-work
mkdir -p "$work"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	port=$((20000 + RANDOM % 20000))
	LD_PRELOAD=$IBW_SIM_PRELOAD "$build/agent/ibwatchd" --no-state-file --no-snmp \
		--http "127.0.0.1:$port" --discovery-interval 5 --counter-interval 5 \
		--ping-interval-ms 10000 --http-max-per-address 64 >agent.out 2>agent.log &
	agent=$!
	trap 'kill $agent 2>/dev/null' EXIT
	U=http://127.0.0.1:$port
	for _ in $(seq 1 600); do
		st=$(curl -s -m 5 "$U/api/v1/status" 2>/dev/null) || true
		# (jq 1.6 -e exits 0 on empty input: check there is some.)
		[ -n "$st" ] && jq -e '.sweeps.counter_sweeps >= 1 and .endports.up == 2048' \
			<<<"$st" >/dev/null 2>&1 && break
		sleep 0.2
	done
	rss() { awk '/^VmRSS/ { print $2 }' "/proc/$agent/status"; }
	hwm() { awk '/^VmHWM/ { print $2 }' "/proc/$agent/status"; }
	st0=$(curl -s -m 5 "$U/api/v1/status")
	echo "fabric: $(jq -c '.fabric | {nodes, ports}' <<<"$st0"), endports up: $(jq .endports.up <<<"$st0")"
	curl -s -o ports.json -w "one /api/v1/ports: %{time_total} s, %{size_download} bytes\n" "$U/api/v1/ports"
	curl -s -H 'Accept-Encoding: gzip' -o /dev/null -w "one /metrics (gzip): %{time_total} s, %{size_download} bytes\n" "$U/metrics"
	echo "RSS before: $(rss) kB (peak so far $(hwm) kB)"
	run() { # name wrk-args...
		local name=$1 out; shift
		echo "== $name: wrk -t 2 -c $conns -d ${secs}s"
		out=$(wrk -t 2 -c "$conns" -d "${secs}s" --timeout 10s --latency "$@")
		echo "$out"
		# wrk prints these lines only when there were some.
		sock=$(sed -n 's/.*Socket errors: //p' <<<"$out")
		non2xx=$(sed -n 's/.*Non-2xx or 3xx responses: //p' <<<"$out")
		echo "$name errors: socket ${sock:-none}, non-2xx ${non2xx:-0}"
		echo "RSS after $name: $(rss) kB (peak $(hwm) kB)"
	}
	run /metrics -H 'Accept-Encoding: gzip' "$U/metrics"
	run /api/v1/ports "$U/api/v1/ports"
	sleep 10
	st1=$(curl -s -m 5 "$U/api/v1/status")
	echo "RSS 10 s later: $(rss) kB (peak $(hwm) kB)"
	echo "sweeps during the runs: discoveries $(jq .sweeps.discoveries <<<"$st0") -> $(jq .sweeps.discoveries <<<"$st1")," \
		"counter sweeps $(jq .sweeps.counter_sweeps <<<"$st0") -> $(jq .sweeps.counter_sweeps <<<"$st1")" \
		"(last took $(jq .sweeps.counters.duration_ms <<<"$st1") ms)," \
		"endports up $(jq .endports.up <<<"$st1")"
	kill -0 "$agent" && echo "agent still running"
	exit 0
fi

"$build/tests/ibw-fattree" --levels 2 --hosts 2048 >"$work/fattree-2048.net"
flags=$("$build/tests/ibw-fattree" --levels 2 --hosts 2048 --flags)
export IBW_SIMGUARD=$build/tests/libibw_simguard.so IBW_TEST_WORK=$work
exec "$top/tests/lib/with-fabric.sh" bench_load "$work/fattree-2048.net" \
	--sm node2048 --osm-args "-s 0" --ibsim-args "$flags" --timeout 180 \
	-- "$top/tests/bench/load.sh" "$build" "$secs" "$conns"
