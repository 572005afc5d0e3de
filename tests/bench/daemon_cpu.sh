#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# What a running ibwatchd costs, with everything it does (discovery,
# counter sweeps, the ping rounds, the route census), at each counter
# interval of INTERVALS: on the 3-level fat tree of HOSTS hosts (2592:
# 14,256 ports), after WARM seconds, over SECS seconds: the CPU the agent
# and ibsim took (share of one core), the MADs the agent sent a second
# (ibwatch_mads_sent_total) and its counter sweeps. One agent at a time,
# on one fabric, in the order given.
#   tests/bench/daemon_cpu.sh [BUILD_DIR] [SECS] [HOSTS] [INTERVALS]
# Default 60 s, 2592 hosts, intervals "10 30" (the default since issue
# 22, and the one before).
. "$(dirname "$0")/lib.sh"
secs=${2:-60}
hosts=${3:-2592}
intervals=${4:-10 30}
warm=${WARM:-30}

if [ -n "${IBW_SIM_DIR:-}" ]; then
	ticks=$(getconf CLK_TCK)
	cpu_of() { awk -v t="$ticks" '{ sub(/.*\) /, ""); print ($12 + $13) / t }' "/proc/$1/stat"; }
	sent() { curl -s -m 30 "http://127.0.0.1:$port/metrics" | awk '$1 ~ /^ibwatch_mads_sent_total($|\{)/ { print $2 }'; }
	sweeps() { curl -s -m 30 "http://127.0.0.1:$port/api/v1/status" | jq '.sweeps.counter_sweeps'; }
	sim=$(cat "$IBW_SIM_DIR/ibsim.pid")
	agent=""
	trap '[ -n "$agent" ] && kill $agent 2>/dev/null' EXIT
	printf '| counter interval | agent CPU | ibsim CPU | MADs/s | counter sweeps |\n|---|---:|---:|---:|---:|\n'
	for c in $intervals; do
		port=$((20000 + RANDOM % 20000))
		SIM_HOST=node0001 LD_PRELOAD=$IBW_SIM_PRELOAD "$build/agent/ibwatchd" --no-state-file \
			--no-snmp --http "127.0.0.1:$port" --counter-interval "$c" >agent.out 2>agent.log &
		agent=$!
		sleep "$warm"
		a0=$(cpu_of "$agent") s0=$(cpu_of "$sim") m0=$(sent) w0=$(sweeps) t0=$(date +%s.%N)
		sleep "$secs"
		a1=$(cpu_of "$agent") s1=$(cpu_of "$sim") m1=$(sent) w1=$(sweeps) t1=$(date +%s.%N)
		kill "$agent"
		wait "$agent" 2>/dev/null || true
		agent=""
		echo "$c $a0 $a1 $s0 $s1 $m0 $m1 $w0 $w1 $t0 $t1" | awk '{
			t = $11 - $10
			printf "| %d s | %.1f%% | %.1f%% | %.0f | %d |\n", $1,
				100 * ($3 - $2) / t, 100 * ($5 - $4) / t, ($7 - $6) / t, $9 - $8 }'
	done
	exit 0
fi

export IBW_SIMGUARD=$build/tests/libibw_simguard.so
export IBW_KMODEL=$build/tests/libibw_kmodel.so
net=$work/daemon-cpu-$hosts.net
"$build/tests/ibw-fattree" --levels 3 --hosts "$hosts" >"$net"
flags=$("$build/tests/ibw-fattree" --levels 3 --hosts "$hosts" --flags)
echo "# ibwatchd on node0001 of the 3-level tree of $hosts hosts, $secs s after $warm s, kernel model loaded"
IBW_TEST_WORK=$work exec "$top/tests/lib/with-fabric.sh" daemon_cpu "$net" \
	--sm "node$hosts" --osm-args "-s 0" --ibsim-args "$flags" --timeout 120 -- \
	"$top/tests/bench/daemon_cpu.sh" "$build" "$secs" "$hosts" "$intervals"
