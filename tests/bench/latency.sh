#!/bin/bash
# ibwatch against the reference tools under modelled hardware latency
# (the test bed's kernel and fabric model, IBW_KM_LATENCY=1: service
# times per node and class, per-hop delays for directed routes, see
# docs/testing.md), on the 3-level fat tree (2592 hosts, 324 switches,
# 14256 ports), same run, two settings:
#   (a) realistic service times, nothing dead;
#   (b) the same with 1% of CA ports dead (their SMA and PMA never
#       answer; chosen with a fixed seed).
# Each reports: discovery vs `ibnetdiscover`; the counter sweep vs
# `ibqueryerrors` and `ibqueryerrors --counters`; a ping round of every
# CA port; cold and warm traces vs `ibtracert`.
#   tests/bench/latency.sh [BUILD_DIR]
# Environment: SVC_SMA_US (default 50), SVC_PMA_US (100), HOP_US (the
# model's default), DEAD_PERCENT (1), SEED (7), SKIP_SLOW=1 (skip the
# reference counter sweeps under (b), which take minutes), WINDOWS="64/8
# 256/4 ..." (also time discovery and the counter sweep with each global
# window / per-destination window: the tuning table of
# docs/benchmarks.md), ONLY_WINDOWS=1 (just that table).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
work=${BENCH_WORK:-$build/bench-work}
mkdir -p "$work"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	: "${IBW_KM_STATE_DIR:?the kernel model is not loaded}"
	export IBW_KM_LATENCY=1
	export IBW_KM_SVC_SMA_US=${SVC_SMA_US:-50} IBW_KM_SVC_PMA_US=${SVC_PMA_US:-100}
	[ -n "${HOP_US:-}" ] && export IBW_KM_HOP_US=$HOP_US
	pre() { LD_PRELOAD=$IBW_SIM_PRELOAD "$@"; }
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
		local w
		for w in ${WINDOWS:-}; do
			pre "$build/tests/bench_sweep" --rounds 1 --window "${w%/*}" \
				--per-dest "${w#*/}" >"win-$1.txt"
			printf 'window %-8s discovery %7ss  counters %7ss  (%s)\n' "$w" \
				"$(awk '/^discovery/ { print $4 }' "win-$1.txt")" \
				"$(awk '/^counters/ { print $4 }' "win-$1.txt")" "setting $1"
		done
	}
	run_setting() { # NAME
		local name=$1
		echo "== setting $name: SMA ${IBW_KM_SVC_SMA_US} us, PMA ${IBW_KM_SVC_PMA_US} us per MAD per node;" \
			"dead CA ports: $(wc -w <"$IBW_KM_DEAD_FILE") of $ncas =="
		run_windows "$name"
		[ -n "${ONLY_WINDOWS:-}" ] && return 0
		pre "$build/tests/bench_sweep" --rounds 1 >"ours-$name.txt"
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
		done | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }' >tr-ref.txt
		d_ours=$(awk '/^discovery/ { print $4 }' "ours-$name.txt")
		c_ours=$(awk '/^counters/ { print $4 }' "ours-$name.txt")
		ratio() { [ "$2" = skipped ] && echo "-" || printf '%.1fx' "$(echo "$2 / $1" | bc -l)"; }
		cat "ours-$name.txt" "ping-$name.txt"
		printf '%-34s %9s %12s %9s\n' "" ibwatch reference speedup
		printf '%-34s %8ss %11ss %9s\n' "discovery vs ibnetdiscover" "$d_ours" "$d_ref" "$(ratio "$d_ours" "$d_ref")"
		printf '%-34s %8ss %11ss %9s\n' "counters vs ibqueryerrors" "$c_ours" "$c_ref" "$(ratio "$c_ours" "$c_ref")"
		printf '%-34s %8ss %11ss %9s\n' "counters vs ibqueryerrors --counters" "$c_ours" "$cc_ref" "$(ratio "$c_ours" "$cc_ref")"
		for k in cold warm; do
			printf 'trace %-5s median %s ms, %s MADs\n' "$k" \
				"$(awk -v k=$k '$1 == k { print $(NF - 1) }' "trace-$name.txt" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')" \
				"$(awk -v k=$k '$1 == k { print $(NF - 3) }' "trace-$name.txt" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
		done
		echo "ibtracert median $(cat tr-ref.txt) s (a whole invocation)"
		echo
	}
	: >none.txt
	export IBW_KM_DEAD_FILE=$PWD/none.txt
	run_setting a
	export IBW_KM_DEAD_FILE=$PWD/dead-lids.txt IBW_KM_DEAD_CLASSES=pma,sma,vendor
	run_setting b
	exit 0
fi

"$build/tests/ibw-fattree" --levels 3 --hosts 2592 >"$work/fattree3-2592.net"
flags=$("$build/tests/ibw-fattree" --levels 3 --hosts 2592 --flags)
export IBW_SIMGUARD=$build/tests/libibw_simguard.so IBW_TEST_WORK=$work
export IBW_KMODEL=${IBW_KMODEL:-$build/tests/libibw_kmodel.so}
[ -r "$IBW_KMODEL" ] || { echo "latency.sh: no kernel model at $IBW_KMODEL (build first)" >&2; exit 1; }
exec "$top/tests/lib/with-fabric.sh" bench_latency "$work/fattree3-2592.net" \
	--sm node2592 --osm-args "-s 0" --ibsim-args "$flags" --timeout 300 \
	-- "$top/tests/bench/latency.sh" "$build"
