#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The counter sweep against the simulator's ceiling, on the 3-level fat
# tree (2592 hosts, 324 switches, 14256 ports), with no modelled latency
# (issue 37, point 4). In one fabric:
#   ceiling   bench_engine: PortCounters to every port with the engine's
#             default window (128 in flight, 4 per destination) and with
#             64 per destination; median of 5 rounds of 3 passes
#   sweep     bench_sweep: RUNS warm counter sweeps (after a cold one),
#             each its MADs a second, against the ceiling, its CPU and
#             ibsim's in the same time (--peer-pid)
#   daemon    ibwatchd as it runs (pings on, the counter sweep at full
#             speed every 2 s): the sweeps after the first, MADs a second
#             from its debug log, ibsim's CPU over the run
#   tests/bench/ceiling.sh [BUILD_DIR]          (RUNS=5)
. "$(dirname "$0")/lib.sh"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	runs=${RUNS:-5}
	sim=$(cat "$IBW_SIM_DIR/ibsim.pid")
	pre() { LD_PRELOAD=$IBW_SIM_PRELOAD "$@"; }
	median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
	cpu_of() { awk '{ printf "%.2f\n", ($14 + $15) / 100 }' "/proc/$1/stat"; }
	echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
	timeout 300 "$top/tests/lib/preloaded.sh" "$build/tests/bench_engine" \
		--windows 128 --per-dest 4 --rounds 5 --repeat 3 >engine4.txt
	timeout 300 "$top/tests/lib/preloaded.sh" "$build/tests/bench_engine" \
		--windows 128 --per-dest 64 --rounds 5 --repeat 3 >engine64.txt
	ceil4=$(awk '$1 == 128 { print $4 }' engine4.txt)
	ceil64=$(awk '$1 == 128 { print $4 }' engine64.txt)
	echo "ceiling (PortCounters to every port, 128 in flight): $ceil4 MAD/s at 4 per destination, $ceil64 at 64"
	timeout 600 env LD_PRELOAD="$IBW_SIM_PRELOAD" "$build/tests/bench_sweep" \
		--rounds 1 --counter-rounds $((runs + 1)) --peer-pid "$sim" >sweep.txt
	echo
	printf '%-8s %8s %8s %10s %9s %9s %9s\n' sweep MADs seconds "MAD/s" "x ceil." "CPU s" "ibsim s"
	awk -v c="$ceil4" '$1 == "counters" { n++; if (n == 1) next
		printf "%-8s %8d %8.3f %10.0f %9.2f %9.3f %9.3f\n", "warm " n - 1, $6, $4, $6 / $4, $6 / $4 / c, $13, $19 }' sweep.txt

	# The daemon as it runs.
	. "$top/tests/lib/bench_daemon.sh"
	s0=$(cpu_of "$sim")
	bench_daemon daemon.err $((runs + 1)) --
	a=$bench_daemon_cpu
	s1=$(cpu_of "$sim")
	echo
	echo "the daemon's sweeps after the first (agent CPU $a s, ibsim $(echo "$s1 - $s0" | bc) s over the whole run):"
	grep 'counters: sweep:' daemon.err | sed 1d |
		sed -n 's/.*sweep: \([0-9]*\) MADs, .* \([0-9.]*\) s$/\1 \2/p' |
		awk -v c="$ceil4" '{ printf "%-8s %8d %8.3f %10.0f %9.2f\n", "daemon " NR, $1, $2, $1 / $2, $1 / $2 / c }'
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	exit 0
fi

bench_net 3 2592 "$work/fattree3-2592.net"
exec "$top/tests/lib/with-fabric.sh" bench_ceiling "$work/fattree3-2592.net" \
	--sm node2592 --osm-args "-s 0" --ibsim-args "$flags" --timeout 900 \
	-- "$top/tests/bench/ceiling.sh" "$build"
