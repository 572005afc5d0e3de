#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The kernel and fabric model's times (tests/preload/ibw_kmodel.c)
# against what it is configured to take, with the real infiniband-diags
# on the 16-host fat tree. The kmodel test checks the model's rules (what
# is answered, retried, reported, dropped, held back, refused) by
# counts; this measures its clock, which the suite no longer asserts:
#  - a lost MAD, 100 ms x 3 tries: reported after 300 ms (umad2sim
#    alone hands it back at once: under 50 ms);
#  - one MAD in flight at 400 ms of service time: smpquery and perfquery
#    take 400 ms more per MAD the model answered;
#  - ibnetdiscover at 2000 us per directed-route hop each way: 2 x hops
#    x 2 ms more;
#  - perfquery -t 200 to a dead LID: 200 ms more per try;
#  - 20 SMPs to one node, 4 in flight, 20 ms of service each: 400 ms;
#  - dead.<pid>: poll reports POLLERR within the model's 20 ms look.
# Times are compared within one run (a run with the modelled time
# against one without, so that process start-up cancels out), each the
# best of BEST runs (default 2; noise only ever adds time). Each line:
# what, measured, and predicted with the error in percent, or the bound
# it should stay under.
#   tests/bench/kmodel.sh [BUILD_DIR]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
work=$build/bench-work
mkdir -p "$work"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	. "$top/tests/lib/tap.sh"
	: "${IBW_KM_STATE_DIR:?the kernel model is not loaded (build/tests/libibw_kmodel.so)}"
	probe=$build/tests/ibw-kmprobe
	logf=$PWD/km.stats
	nbest=${BEST:-2}
	lid_of() { at "$1" smpquery -D portinfo 0 | sed -n 's/^Lid:\.*//p'; }
	l3=$(lid_of node0003)
	# ms CMD...: run CMD (output to last.out), print its wall time in ms.
	ms() {
		local s e
		s=$(date +%s%N)
		"$@" >last.out 2>&1
		e=$(date +%s%N)
		echo $(((e - s) / 1000000))
	}
	# best CMD...: the shortest of $nbest runs.
	best() {
		local b="" t i
		for ((i = 0; i < nbest; i++)); do
			t=$(ms "$@")
			[ -z "$b" ] || [ "$t" -lt "$b" ] && b=$t
		done
		echo "$b"
	}
	# kstat FIELD: FIELD of the last line the model logged.
	kstat() { tail -n1 "$logf" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
	# report WHAT GOT WANT: one line, with the error in percent.
	report() {
		awk -v what="$1" -v got="$2" -v want="$3" 'BEGIN {
			printf "%-58s %8.1f ms  predicted %8.1f ms  %+6.1f%%\n",
				what, got, want, want ? 100 * (got - want) / want : 0 }'
	}
	# upto WHAT GOT BOUND: one line for a time that should stay under BOUND.
	upto() {
		awk -v what="$1" -v got="$2" -v bound="$3" 'BEGIN {
			printf "%-58s %8.1f ms  at most   %8.1f ms  %s\n",
				what, got, bound, got <= bound ? "ok" : "OVER" }'
	}
	elapsed() { sed -n 's/^elapsed_ms=\([0-9.]*\).*/\1/p' <<<"$1"; }

	rm -f "$logf"
	out=$(IBW_KM_LOG=$logf at node0001 "$probe" lost 0x7000 100 3)
	report "lost MAD, 100 ms x 3 tries, reported after" "$(elapsed "$out")" 300
	out=$(IBW_KM_RULE=0 at node0001 "$probe" lost 0x7000 100 3)
	upto "... umad2sim alone hands it back after" "$(elapsed "$out")" 50

	svc=400
	for tool in "smpquery nodeinfo $l3" "perfquery $l3 1"; do
		base=$(IBW_KM_LATENCY=1 IBW_KM_SVC_SMA_US=0 IBW_KM_SVC_PMA_US=0 \
			best at node0001 $tool)
		rm -f "$logf"
		slow=$(IBW_KM_LOG=$logf IBW_KM_LATENCY=1 IBW_KM_SVC_SMA_US=$((svc * 1000)) \
			IBW_KM_SVC_PMA_US=$((svc * 1000)) best at node0001 $tool)
		n=$(kstat answered)
		report "${tool%% *}: $n MADs at $svc ms each, more by" $((slow - base)) $((n * svc))
	done

	hop=2000
	base=$(IBW_KM_LATENCY=1 IBW_KM_HOP_US=0 best at node0001 ibnetdiscover -o 1)
	rm -f "$logf"
	slow=$(IBW_KM_LOG=$logf IBW_KM_LATENCY=1 IBW_KM_HOP_US=$hop best at node0001 ibnetdiscover -o 1)
	hops=$(kstat dr_hops)
	report "ibnetdiscover -o 1: $hops DR hops at $hop us each way, more by" \
		$((slow - base)) $((2 * hops * hop / 1000))

	base=$(best at node0001 perfquery -t 200 "$l3" 1)
	rm -f "$logf"
	dead=$(IBW_KM_LOG=$logf IBW_KM_DEAD_LIDS=$l3 ms at node0001 perfquery -t 200 "$l3" 1)
	tries=$(kstat timeouts)
	report "perfquery -t 200 to a dead LID: $tries tries, more by" $((dead - base)) $((tries * 200))

	out=$(IBW_KM_FC_SMP=4 IBW_KM_SVC_SMA_US=20000 at node0001 "$probe" burst "$l3" 20)
	report "20 SMPs to one node, 4 in flight, 20 ms each" "$(elapsed "$out")" 400

	out=$(at node0001 "$probe" death)
	upto "dead.<pid> to POLLERR (looked for every 20 ms)" \
		"$(sed -n 's/^dead_poll_ms=\([0-9.]*\).*/\1/p' <<<"$out")" 20
	rm -f "$IBW_KM_STATE_DIR"/dead.*
	exit 0
fi

"$build/tests/ibw-fattree" --levels 2 --hosts 16 >"$work/kmodel-16.net"
export IBW_SIMGUARD=$build/tests/libibw_simguard.so IBW_TEST_WORK=$work
export IBW_KMODEL=$build/tests/libibw_kmodel.so
exec "$top/tests/lib/with-fabric.sh" bench_kmodel "$work/kmodel-16.net" \
	--sm node0016 -- "$top/tests/bench/kmodel.sh" "$build"
