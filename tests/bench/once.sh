#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The counter sweep as the daemon runs it: inside `ibwatchd --once`, with
# the ping round and every probe beside it, under the kernel and fabric
# model (IBW_KM_LATENCY=1, docs/testing.md) on the 3-level fat tree (2592
# hosts, 324 switches, 14256 ports). Settings as tests/bench/latency.sh:
#   (a) nothing dead;
#   (b) 1% of CA ports dead (SMA, PMA and echo silent; fixed seed);
#   (c) the same CA ports' PMAs silent, their SMAs answering (a whole
#       class silent on those nodes: IBW_KM_SILENT=pma@LIDS).
# In each, ROUNDS runs of:
#   sweep alone   --once --no-ping, PMAs answer PortSamplesControl
#   with pings    --once (auto pings: echo first, a host without a
#                 responder answers "not supported")
#   PSC silent    --once with IBW_KM_PSC=0 (no PMA answers
#                 PortSamplesControl, as ibsim)
#   echo silent   --once with IBW_KM_UNSUPPORTED=0 (no host answers the
#                 echo class at all, as ibsim: every first echo waits
#                 out its timeout)
#   PESC silent   --once with IBW_KM_PESC=0 (no PMA answers
#                 PortExtendedSpeedsCounters, as ibsim, though every
#                 port says it has extended speeds)
# and, beside them, the sweep alone in one process (bench_sweep's warm
# sweeps, the isolated figure of docs/benchmarks.md), and a running
# daemon's later sweeps (`--counter-full-speed`, pings on: sweeps 2 to
# DAEMON_SWEEPS, from its debug log). Reported: medians
# of the counter sweep's duration and its timeouts as the sweep counts
# them, the engine's timeouts and waits, the whole --once's wall time,
# and each against the sweep alone; under (a) also one run of
# `ibqueryerrors --counters` (the whole command) beside the sweep with
# pings.
#   tests/bench/once.sh [BUILD_DIR]
# Environment: SVC_SMA_US (50), SVC_PMA_US (100), ROUNDS (5), DEAD_PERCENT
# (1), SEED (7), SETTINGS ("a b"; c as well: "a b c"), SKIP_REF=1 (no
# ibqueryerrors), DAEMON_SWEEPS (6; 0: no daemon runs).
. "$(dirname "$0")/lib.sh"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	: "${IBW_KM_STATE_DIR:?the kernel model is not loaded}"
	export IBW_KM_LATENCY=1
	export IBW_KM_SVC_SMA_US=${SVC_SMA_US:-50} IBW_KM_SVC_PMA_US=${SVC_PMA_US:-100}
	pre() { LD_PRELOAD=$IBW_SIM_PRELOAD "$@"; }
	rounds=${ROUNDS:-5}
	median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
	awk '{ print $1 }' "$IBW_KM_STATE_DIR/ca-lids" | sort -n -u >ca-lids.txt
	ncas=$(wc -l <ca-lids.txt)
	ndead=$(( (ncas * ${DEAD_PERCENT:-1} + 50) / 100 ))
	awk -v seed="${SEED:-7}" 'BEGIN { srand(seed) } { print rand(), $1 }' ca-lids.txt |
		sort -n | head -n "$ndead" | awk '{ print $2 }' | sort -n >dead-lids.txt

	# once NAME [ENV...] -- [ARGS...]: ROUNDS runs; one line per run:
	# sweep_ms sweep_timeouts engine_timeouts waits wall_s sweep_mads
	once() {
		local name=$1 i t0 t1 envs=()
		shift
		while [ "$1" != -- ]; do envs+=("$1"); shift; done
		shift
		: >"once-$name.txt"
		for ((i = 0; i < rounds; i++)); do
			t0=$(date +%s%N)
			env "${envs[@]}" LD_PRELOAD="$IBW_SIM_PRELOAD" \
				timeout -k 5 120 "$build/agent/ibwatchd" --once --no-state-file "$@" \
				>"once-$name.json" 2>"once-$name.err" || true
			t1=$(date +%s%N)
			jq -r --arg w "$(echo "scale=3; ($t1 - $t0) / 1000000000" | bc)" \
				'[.status.sweeps.counters.duration_ms, .status.sweeps.counters.timeouts,
				  .status.engine.timeouts, .status.engine.waits, $w,
				  .status.sweeps.counters.mads] | @tsv' \
				"once-$name.json" >>"once-$name.txt"
		done
	}
	med() { awk -v c="$2" '{ print $c }' "once-$1.txt" | median; }
	# daemon NAME [ENV...] -- [ARGS...]: a running agent's counter
	# sweeps (tests/lib/bench_daemon.sh); the sweeps 2 to DAEMON_SWEEPS
	# in ms, into daemon-NAME.txt.
	. "$top/tests/lib/bench_daemon.sh"
	daemon() {
		local name=$1
		shift
		bench_daemon "daemon-$name.err" "${DAEMON_SWEEPS:-6}" "$@"
		grep 'counters: sweep:' "daemon-$name.err" |
			sed -n 's/.* timeouts, .* \([0-9.]*\) s$/\1/p' | sed 1d |
			awk '{ print $1 * 1000 }' >"daemon-$name.txt"
	}
	run_setting() {
		local name=$1 base iso k
		echo "== setting $name: SMA ${IBW_KM_SVC_SMA_US} us, PMA ${IBW_KM_SVC_PMA_US} us per MAD per node;" \
			"dead CA ports: $(wc -w <"$IBW_KM_DEAD_FILE") of $ncas${IBW_KM_SILENT:+; silent: ${IBW_KM_SILENT%%@*} at $(wc -l <dead-lids.txt) CA LIDs}; medians of $rounds =="
		echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
		pre "$build/tests/bench_sweep" --rounds 3 >"iso-$name.txt"
		iso=$(awk '$1 == "counters" { n++; if (n > 1) print $4 }' "iso-$name.txt" | median)
		once "$name-alone" -- --no-ping
		once "$name-pings" --
		once "$name-psc0" IBW_KM_PSC=0 --
		once "$name-echo0" IBW_KM_UNSUPPORTED=0 --
		once "$name-pesc0" IBW_KM_PESC=0 --
		if [ "${DAEMON_SWEEPS:-6}" -gt 1 ]; then
			daemon "$name" --
			daemon "$name-pesc0" IBW_KM_PESC=0 --
		fi
		base=$(med "$name-alone" 1)
		ref=-
		if [ "$name" = a ] && [ -z "${SKIP_REF:-}" ]; then
			local t0 t1
			t0=$(date +%s%N)
			pre ibqueryerrors --counters >ref.out 2>ref.err || true
			t1=$(date +%s%N)
			ref=$(echo "scale=3; ($t1 - $t0) / 1000000000" | bc)
		fi
		printf '%-14s %10s %9s %9s %8s %8s %9s %8s\n' run "sweep ms" "x alone" \
			"sweep to" "eng. to" waits "--once s" "MADs"
		printf '%-14s %10.1f %9s %9s %8s %8s %9s %8s\n' "isolated" \
			"$(echo "$iso * 1000" | bc -l)" "$(printf '%.2f' "$(echo "$iso * 1000 / $base" | bc -l)")" - - - - -
		for k in alone pings psc0 echo0 pesc0; do
			printf '%-14s %10.1f %9.2f %9s %8s %8s %9s %8s\n' "$k" \
				"$(med "$name-$k" 1)" "$(echo "$(med "$name-$k" 1) / $base" | bc -l)" \
				"$(med "$name-$k" 2)" "$(med "$name-$k" 3)" "$(med "$name-$k" 4)" \
				"$(med "$name-$k" 5)" "$(med "$name-$k" 6)"
		done
		if [ -s "daemon-$name.txt" ]; then
			local d da dp
			d=$(median <"daemon-$name.txt")
			da=$(median <daemon-a.txt 2>/dev/null || echo "$d")
			dp=$(median <"daemon-$name-pesc0.txt")
			printf 'daemon, later sweeps (%s, with pings): %.1f ms, %.2fx setting a'"'"'s; PESC silent: %.1f ms, %.2fx\n' \
				"$(wc -l <"daemon-$name.txt")" "$d" "$(echo "$d / $da" | bc -l)" \
				"$dp" "$(echo "$dp / $da" | bc -l)"
		fi
		if [ "$ref" != - ]; then
			printf 'ibqueryerrors --counters (one run, whole command): %s s; against the sweep with pings: %.1fx\n' \
				"$ref" "$(echo "$ref * 1000 / $(med "$name-pings" 1)" | bc -l)"
		fi
		echo
	}
	: >none.txt
	for s in ${SETTINGS:-a b}; do
		case $s in
		a) export IBW_KM_DEAD_FILE=$PWD/none.txt IBW_KM_SILENT= ;;
		b) export IBW_KM_DEAD_FILE=$PWD/dead-lids.txt IBW_KM_DEAD_CLASSES=pma,sma,vendor ;;
		c) export IBW_KM_DEAD_FILE=$PWD/none.txt IBW_KM_SILENT="pma@$(paste -sd, dead-lids.txt)" ;;
		esac
		run_setting "$s"
	done
	exit 0
fi

bench_net 3 2592 "$work/fattree3-2592.net"
export IBW_KMODEL=${IBW_KMODEL:-$build/tests/libibw_kmodel.so}
[ -r "$IBW_KMODEL" ] || { echo "once.sh: no kernel model at $IBW_KMODEL (build first)" >&2; exit 1; }
exec "$top/tests/lib/with-fabric.sh" bench_once "$work/fattree3-2592.net" \
	--sm node2592 --osm-args "-s 0" --ibsim-args "$flags" --timeout 300 \
	-- "$top/tests/bench/once.sh" "$build"
