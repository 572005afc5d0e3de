#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The CPU ibwatchd takes while it has nothing to do, on the 32-host fat
# tree under the kernel model, discovery and counters every second and
# pings every 300 ms (the hardware and restarts tests assert that its
# loop wakes only for its timers and requests, by counts; this measures
# what that costs in time, which the suite no longer asserts):
#  - sweeping: the agent at work, for comparison;
#  - device lost: its umad device failed for good (the model's
#    dead.<pid>), the last fabric served stale;
#  - simulator gone: ibsim killed under it (its local port lost, the
#    device still open, every MAD unanswered).
# Each over SECS seconds of wall time (default 10): the process's user
# plus system CPU (/proc/PID/stat, all threads, in clock ticks), and its
# loop's wakeups (/api/v1/status engine.loop_wakeups), read once at each
# end (two HTTP requests, a few wakeups of their own).
#   tests/bench/idle_cpu.sh [BUILD_DIR]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
work=$build/bench-work
mkdir -p "$work"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	. "$top/tests/lib/tap.sh"
	export IBWATCHD=$build/agent/ibwatchd
	trap stop_started EXIT
	secs=${SECS:-10}
	hz=$(getconf CLK_TCK)
	st() { curl -s -m 5 "$U/api/v1/status"; }
	ticks() { awk '{ print $14 + $15 }' "/proc/$agent/stat"; }
	# measure WHAT: CPU and wakeups of $agent over $secs s of wall time
	measure() {
		local t0 t1 w0 w1 s0 s1
		w0=$(st | jq .engine.loop_wakeups) t0=$(ticks) s0=$(date +%s%N)
		sleep "$secs"
		t1=$(ticks) s1=$(date +%s%N) w1=$(st | jq .engine.loop_wakeups)
		awk -v what="$1" -v t=$((t1 - t0)) -v hz="$hz" -v ns=$((s1 - s0)) -v w=$((w1 - w0)) 'BEGIN {
			s = ns / 1e9
			printf "%s: %.0f ms CPU in %.1f s (%.2f%%), %d loop wakeups (%.1f/s)\n",
				what, t * 1000 / hz, s, 100 * t / hz / s, w, w / s }'
	}
	start() {
		start_agent node0001 --no-state-file --no-snmp --discovery-interval 1 \
			--counter-interval 1 --ping-interval-ms 300 --ping-method pma || exit 1
		U=http://127.0.0.1:$P
		for _ in $(seq 1 200); do st | jqe '.sweeps.counter_sweeps >= 2' && break; sleep 0.1; done
	}

	start
	measure "sweeping"
	if [ -n "${IBW_KM_STATE_DIR:-}" ]; then
		touch "$IBW_KM_STATE_DIR/dead.$agent"
		for _ in $(seq 1 100); do st | jqe '.engine.device_lost' && break; sleep 0.1; done
		measure "device lost"
		rm -f "$IBW_KM_STATE_DIR/dead.$agent"
	else
		echo "device lost: not measured (no kernel model: build/tests/libibw_kmodel.so)"
	fi
	stop "$agent"

	start
	"$IBW_SIMFABRIC" kill-sim "$IBW_SIM_DIR" || exit 1
	for _ in $(seq 1 100); do st | jqe '.local_port_lost' && break; sleep 0.1; done
	measure "simulator gone"
	stop "$agent"
	"$IBW_SIMFABRIC" restart "$IBW_SIM_DIR"
	exit 0
fi

"$build/tests/ibw-fattree" --levels 2 --hosts 32 >"$work/idle-32.net"
export IBW_SIMGUARD=$build/tests/libibw_simguard.so IBW_TEST_WORK=$work
[ -e "$build/tests/libibw_kmodel.so" ] && export IBW_KMODEL=$build/tests/libibw_kmodel.so
exec "$top/tests/lib/with-fabric.sh" bench_idle_cpu "$work/idle-32.net" \
	--sm node0032 -- "$top/tests/bench/idle_cpu.sh" "$build"
