#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# ibwatch against the reference tools under modelled hardware latency
# (the test bed's kernel and fabric model, IBW_KM_LATENCY=1: service
# times per node and class, per-hop delays for directed routes, see
# docs/testing.md), on the 3-level fat tree (2592 hosts, 324 switches,
# 14256 ports), same run, two settings:
#   (a) realistic service times, nothing dead;
#   (b) the same with 1% of CA ports dead (their SMA and PMA never
#       answer; chosen with a fixed seed).
# Each reports: discovery vs `ibnetdiscover`; the counter sweep, cold
# (ClassPortInfo read first, as the reference tools always start) and
# warm (as the daemon sweeps once it knows each PMA), vs `ibqueryerrors`
# and `ibqueryerrors --counters`; a ping round of every CA port; cold and
# warm traces vs `ibtracert`. Also the CPU time per MAD of ibwatch's
# process (all threads, umad2sim's among them) and of ibsim, and the
# machine's load average: the simulator's ceiling is CPU on a machine
# others share (docs/benchmarks.md).
#   tests/bench/latency.sh [BUILD_DIR]
# Environment: SVC_SMA_US (default 50), SVC_PMA_US (100), HOP_US (the
# model's default), DEAD_PERCENT (1), SEED (7), ROUNDS (3: ibwatch's
# discoveries and counter sweeps per setting; the medians are reported,
# the first sweep as the cold one), SKIP_SLOW=1 (skip the reference
# counter sweeps under (b), which take minutes), WINDOWS="64/8 256/4 ..."
# (also time discovery and the counter sweep with each global window /
# per-destination window: the tuning table of docs/benchmarks.md),
# ONLY_WINDOWS=1 (just that table).
. "$(dirname "$0")/lib.sh"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	: "${IBW_KM_STATE_DIR:?the kernel model is not loaded}"
	export IBW_KM_LATENCY=1
	export IBW_KM_SVC_SMA_US=${SVC_SMA_US:-50} IBW_KM_SVC_PMA_US=${SVC_PMA_US:-100}
	[ -n "${HOP_US:-}" ] && export IBW_KM_HOP_US=$HOP_US
	pre() { LD_PRELOAD=$IBW_SIM_PRELOAD "$@"; }
	rounds=${ROUNDS:-3}
	median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
	# ibsim's CPU time so far, in clock ticks (utime + stime).
	ibsim_ticks() { awk '{ print $14 + $15 }' "/proc/$(cat "$IBW_SIM_DIR/ibsim.pid")/stat"; }
	# From bench_sweep's lines for $1 (discovery or counters) in file $2,
	# rounds $3..$4: median seconds, MADs, CPU microseconds per MAD.
	col() {
		awk -v k="$1" -v a="$3" -v b="$4" '$1 == k { n++; if (n >= a && n <= b) {
			for (i = 1; i < NF; i++) if ($i == "cpu") c = $(i + 1)
			print $4, $6, c * 1e6 / $6 } }' "$2" | sort -n |
			awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }'
	}
	secs() { # seconds one run of "$@" takes; output in ref.out
		local t0 t1
		t0=$(date +%s%N)
		pre "$@" >ref.out 2>ref.err || true
		t1=$(date +%s%N)
		echo "scale=3; ($t1 - $t0) / 1000000000" | bc
	}
	# The CA ports and their LIDs, from the reference (no latency yet
	# matters for this).
	pre ibnetdiscover >fabric.net
	awk '/^Ca/ { ca = 1; next } /^Switch/ { ca = 0 } ca && /lid/ {
		for (i = 1; i <= NF; i++) if ($i == "lid") { print $(i + 1); break } }' \
		fabric.net | sort -n -u >ca-lids.txt
	ncas=$(wc -l <ca-lids.txt)
	ndead=$(( (ncas * ${DEAD_PERCENT:-1} + 50) / 100 ))
	awk -v seed="${SEED:-7}" 'BEGIN { srand(seed) } { print rand(), $1 }' ca-lids.txt |
		sort -n | head -n "$ndead" | awk '{ print $2 }' | sort -n >dead-lids.txt
	slid=$(pre "$build/agent/ibwatchd" --once --no-state-file --no-ping 2>/dev/null |
		jq -r '.local_port.lid')
	tlids=$(awk 'NR % 290 == 17' ca-lids.txt | grep -vxF -f dead-lids.txt | head -n 8 | xargs)

	run_windows() { # NAME
		local w f d c k
		for w in ${WINDOWS:-}; do
			f=win-$1-${w%/*}-${w#*/}.txt
			pre "$build/tests/bench_sweep" --rounds "$rounds" --window "${w%/*}" \
				--per-dest "${w#*/}" >"$f"
			read -r d _ dc <<<"$(col discovery "$f" 1 "$rounds")"
			read -r c _ <<<"$(col counters "$f" 1 1)"
			read -r k _ kc <<<"$(col counters "$f" 2 "$rounds")"
			printf 'window %-8s discovery %ss  counters cold %ss warm %ss  CPU per MAD %.1f / %.1f us  (%s; medians of %s)\n' \
				"$w" "$d" "$c" "${k:--}" "$dc" "${kc:-0}" "setting $1" "$rounds"
		done
	}
	run_setting() { # NAME
		local name=$1
		local t0 t1 mads
		echo "== setting $name: SMA ${IBW_KM_SVC_SMA_US} us, PMA ${IBW_KM_SVC_PMA_US} us per MAD per node;" \
			"dead CA ports: $(wc -w <"$IBW_KM_DEAD_FILE") of $ncas =="
		echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
		run_windows "$name"
		[ -n "${ONLY_WINDOWS:-}" ] && return 0
		t0=$(ibsim_ticks)
		pre "$build/tests/bench_sweep" --rounds "$rounds" >"ours-$name.txt"
		t1=$(ibsim_ticks)
		pre "$build/tests/bench_ping" --rounds 1 --method pma >"ping-$name.txt"
		pre "$build/tests/bench_trace" $tlids >"trace-$name.txt"
		d_ref=$(secs ibnetdiscover)
		if [ "$name" = b ] && [ -n "${SKIP_SLOW:-}" ]; then
			c_ref=skipped cc_ref=skipped
		else
			c_ref=$(secs ibqueryerrors)
			cc_ref=$(secs ibqueryerrors --counters)
		fi
		for l in $tlids; do
			secs ibtracert "$slid" "$l"
		done | median >tr-ref.txt
		read -r d_ours _ d_cpu <<<"$(col discovery "ours-$name.txt" 1 "$rounds")"
		read -r c_ours _ c_cpu <<<"$(col counters "ours-$name.txt" 1 1)"
		read -r w_ours _ w_cpu <<<"$(col counters "ours-$name.txt" 2 "$rounds")"
		mads=$(awk '{ s += $6 } END { print s }' "ours-$name.txt")
		ratio() { [ "$2" = skipped ] || [ -z "$1" ] && echo "-" || printf '%.1fx' "$(echo "$2 / $1" | bc -l)"; }
		f1() { [ -n "$1" ] && printf %.1f "$1" || echo -; }
		sec() { [ "$1" = skipped ] && echo skipped || printf '%.3fs' "${1:-0}"; }
		cat "ours-$name.txt" "ping-$name.txt"
		printf '%-44s %9s %10s %8s\n' "(ibwatch: medians of $rounds)" ibwatch reference speedup
		row() { printf '%-44s %9s %10s %8s\n' "$1" "$(sec "$2")" "$(sec "$3")" "$(ratio "$2" "$3")"; }
		row "discovery vs ibnetdiscover" "$d_ours" "$d_ref"
		row "counters (cold) vs ibqueryerrors" "$c_ours" "$c_ref"
		row "counters (cold) vs ibqueryerrors --counters" "$c_ours" "$cc_ref"
		if [ -n "$w_ours" ]; then
			row "counters (warm) vs ibqueryerrors" "$w_ours" "$c_ref"
			row "counters (warm) vs ibqueryerrors --counters" "$w_ours" "$cc_ref"
		fi
		printf 'CPU per MAD: ibwatch %s us discovery, %s us cold sweep, %s us warm sweep; ibsim %s us (over all %s MADs)\n' \
			"$(f1 "$d_cpu")" "$(f1 "$c_cpu")" "$(f1 "$w_cpu")" \
			"$(f1 "$(echo "($t1 - $t0) * 1000000 / $(getconf CLK_TCK) / $mads" | bc -l)")" "$mads"
		for k in cold warm; do
			printf 'trace %-5s median %s ms, %s MADs\n' "$k" \
				"$(awk -v k=$k '$1 == k { print $(NF - 1) }' "trace-$name.txt" | median)" \
				"$(awk -v k=$k '$1 == k { print $(NF - 3) }' "trace-$name.txt" | median)"
		done
		echo "ibtracert median $(sec "$(cat tr-ref.txt)") (a whole invocation)"
		echo
	}
	: >none.txt
	export IBW_KM_DEAD_FILE=$PWD/none.txt
	run_setting a
	export IBW_KM_DEAD_FILE=$PWD/dead-lids.txt IBW_KM_DEAD_CLASSES=pma,sma,vendor
	run_setting b
	exit 0
fi

bench_net 3 2592 "$work/fattree3-2592.net"
export IBW_KMODEL=${IBW_KMODEL:-$build/tests/libibw_kmodel.so}
[ -r "$IBW_KMODEL" ] || { echo "latency.sh: no kernel model at $IBW_KMODEL (build first)" >&2; exit 1; }
exec "$top/tests/lib/with-fabric.sh" bench_latency "$work/fattree3-2592.net" \
	--sm node2592 --osm-args "-s 0" --ibsim-args "$flags" --timeout 300 \
	-- "$top/tests/bench/latency.sh" "$build"
