# SPDX-License-Identifier: BSD-2-Clause
# Sourced by benchmarks inside a fabric (with-fabric.sh): a running
# ibwatchd's counter sweeps at full speed, 2 s apart, with its debug log.
#
#   bench_daemon ERRFILE SWEEPS [ENV=VALUE...] -- [ARGS...]
#
# runs $build/agent/ibwatchd (no state file, SNMP or HTTP; pings on) until
# its log has SWEEPS "counters: sweep:" lines, 300 s at most, and stops
# it: SIGTERM, then SIGKILL after 10 s (a wedged simulator link ignores
# SIGTERM, docs/testing.md). Its CPU seconds just before the stop are
# left in $bench_daemon_cpu.
bench_daemon() {
	local err=$1 want=$2 pid end envs=()
	shift 2
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	: >"$err"
	env "${envs[@]}" LD_PRELOAD="$IBW_SIM_PRELOAD" \
		"$build/agent/ibwatchd" --no-state-file --no-snmp --no-http \
		--counter-full-speed --counter-interval 2 --log-level debug "$@" \
		>/dev/null 2>"$err" &
	pid=$!
	end=$((SECONDS + 300))
	while [ "$(grep -c 'counters: sweep:' "$err")" -lt "$want" ] &&
		[ $SECONDS -lt $end ] && kill -0 "$pid" 2>/dev/null; do
		sleep 1
	done
	bench_daemon_cpu=$(awk '{ printf "%.2f\n", ($14 + $15) / 100 }' "/proc/$pid/stat" 2>/dev/null || echo 0)
	kill "$pid" 2>/dev/null || true
	end=$((SECONDS + 10))
	while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 1; done
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
