#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# What the congestion counters cost the running daemon: ibwatchd with
# everything it does (discovery, counter sweeps, pings), under the kernel
# and fabric model (IBW_KM_LATENCY=1, service times as tests/bench/once.sh)
# on the 3-level fat tree (2592 hosts, 324 switches, 14256 ports), with
#   none      no PMA advertises them (the model's empty `cong` file);
#   switches  every switch's PMA advertises all six (OptionMask bits
#             48-54) and answers them for every port;
#   all       every switch's and every host's.
# A PMA's OptionMask comes with its first PortSamplesControl, so the
# counters are read from the second sweep on; the first two sweeps are
# left out. Reported, over SWEEPS sweeps after them: the median sweep
# duration and MADs as /api/v1/status gives them, timeouts summed, the
# agent's CPU a sweep, each against `none`.
#   tests/bench/cong.sh [BUILD_DIR]
# Environment: SVC_SMA_US (50), SVC_PMA_US (100), SWEEPS (5), INTERVAL
# (counter interval, 5 s), SETTINGS ("none switches all").
. "$(dirname "$0")/lib.sh"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	: "${IBW_KM_STATE_DIR:?the kernel model is not loaded}"
	export IBW_KM_LATENCY=1
	export IBW_KM_SVC_SMA_US=${SVC_SMA_US:-50} IBW_KM_SVC_PMA_US=${SVC_PMA_US:-100}
	ticks=$(getconf CLK_TCK)
	nsweeps=${SWEEPS:-5}
	interval=${INTERVAL:-5}
	cpu_of() { awk -v t="$ticks" '{ sub(/.*\) /, ""); print ($12 + $13) / t }' "/proc/$1/stat"; }
	status() { curl -s -m 30 "http://127.0.0.1:$port/api/v1/status"; }
	median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
	agent=""
	trap '[ -n "$agent" ] && kill $agent 2>/dev/null; : >"$IBW_KM_STATE_DIR/cong"' EXIT
	# The model lists every LID it has seen a host at; a switch is any
	# other LID the SM gave out (opensm -s 0 numbers them densely).
	awk '{ print $1 }' "$IBW_KM_STATE_DIR/ca-lids" | sort -n -u >ca-lids.txt
	maxlid=$(($(wc -l <ca-lids.txt) + 324 + 16))
	seq 1 "$maxlid" | sort -n >all-lids.txt
	comm -23 <(sort all-lids.txt) <(sort ca-lids.txt) | sort -n >switch-lids.txt

	# run NAME: one line per sweep: duration_ms mads timeouts cpu_s
	run() {
		local name=$1 i n0 n s c0 c1
		port=$((20000 + RANDOM % 20000))
		LD_PRELOAD=$IBW_SIM_PRELOAD "$build/agent/ibwatchd" --no-state-file \
			--no-snmp --http "127.0.0.1:$port" --counter-interval "$interval" \
			>"agent-$name.out" 2>"agent-$name.log" &
		agent=$!
		n0=0
		for ((i = 0; i < 600; i++)); do
			n0=$(status | jq '.sweeps.counter_sweeps // 0' 2>/dev/null || echo 0)
			[ "${n0:-0}" -ge 2 ] && break
			sleep 0.5
		done
		: >"cong-$name.txt"
		c0=$(cpu_of "$agent")
		for ((n = n0 + 1; n <= n0 + nsweeps; n++)); do
			for ((i = 0; i < 600; i++)); do
				s=$(status)
				[ "$(jq '.sweeps.counter_sweeps' <<<"$s")" -ge "$n" ] &&
					! jq -e '.sweeps.counter_sweep.running' <<<"$s" >/dev/null && break
				sleep 0.2
			done
			c1=$(cpu_of "$agent")
			jq -r --arg c "$(echo "$c1 - $c0" | bc -l)" \
				'.sweeps.counters | "\(.duration_ms) \(.mads) \(.timeouts) \($c)"' \
				<<<"$s" >>"cong-$name.txt"
			c0=$c1
		done
		kill "$agent"
		wait "$agent" 2>/dev/null || true
		agent=""
	}
	med() { awk -v k="$2" '{ print $k }' "cong-$1.txt" | median; }
	printf '| advertised by | sweep (ms) | against none | MADs a sweep | timeouts | agent CPU a sweep (s) |\n'
	printf '|---|---:|---:|---:|---:|---:|\n'
	base=""
	for name in ${SETTINGS:-none switches all}; do
		case $name in
		none) : >"$IBW_KM_STATE_DIR/cong" ;;
		switches) sed 's/$/ 0/' switch-lids.txt >"$IBW_KM_STATE_DIR/cong" ;;
		all) sed 's/$/ 0/' all-lids.txt >"$IBW_KM_STATE_DIR/cong" ;;
		esac
		run "$name"
		d=$(med "$name" 1)
		[ -n "$base" ] || base=$d
		printf '| %s | %.0f | %.2fx | %s | %s | %.2f |\n' "$name" "$d" \
			"$(echo "$d / $base" | bc -l)" "$(med "$name" 2)" \
			"$(awk '{ t += $3 } END { print t + 0 }' "cong-$name.txt")" "$(med "$name" 4)"
	done
	exit 0
fi

bench_net 3 2592 "$work/fattree3-2592.net"
export IBW_KMODEL=${IBW_KMODEL:-$build/tests/libibw_kmodel.so}
[ -r "$IBW_KMODEL" ] || { echo "cong.sh: no kernel model at $IBW_KMODEL (build first)" >&2; exit 1; }
echo "# ibwatchd on node0001 of the 3-level tree of 2592 hosts, kernel model with latency, $(date -u +%F)"
exec "$top/tests/lib/with-fabric.sh" bench_cong "$work/fattree3-2592.net" \
	--sm node2592 --osm-args "-s 0" --ibsim-args "$flags" --timeout 300 \
	-- "$top/tests/bench/cong.sh" "$build"
