#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Discovery and counter-sweep benchmark on the 3-level fat tree (2592
# hosts, 324 switches, 14256 ports), each against the reference tool in
# the same run: ibwatch's discovery vs `ibnetdiscover`, ibwatch's full
# counter sweep vs `ibqueryerrors`, and the counter sweep again with
# --counter-check in-flux (no NodeInfo per node). Medians of ROUNDS runs.
#   tests/bench/sweep.sh [BUILD_DIR] [ROUNDS]
. "$(dirname "$0")/lib.sh"
rounds=${2:-5}

if [ -n "${IBW_SIM_DIR:-}" ]; then
	median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
	timeit() { # seconds of one run of "$@"
		local t0 t1
		t0=$(date +%s%N)
		LD_PRELOAD=$IBW_SIM_PRELOAD "$@" >ref.out 2>ref.err ||
			{ echo "sweep.sh: $* failed: $(tail -1 ref.err)" >&2; exit 1; }
		t1=$(date +%s%N)
		echo "scale=3; ($t1 - $t0) / 1000000000" | bc
	}
	LD_PRELOAD=$IBW_SIM_PRELOAD "$build/tests/bench_sweep" --rounds "$rounds" >ours.txt
	# the counter sweep that checks readings only when the LIDs move
	LD_PRELOAD=$IBW_SIM_PRELOAD "$build/tests/bench_sweep" --rounds 1 \
		--counter-rounds "$rounds" --counter-check in-flux >ours-in-flux.txt
	for _ in $(seq 1 "$rounds"); do timeit ibnetdiscover; done >ibnd.txt
	ref_nodes=$(grep -c '^\(Switch\|Ca\)' ref.out)
	for _ in $(seq 1 "$rounds"); do timeit ibqueryerrors; done >ibqe.txt
	ref_ports=$(sed -n 's/^##  *\([0-9]*\) ports checked.*/\1/p' ref.out)
	for _ in $(seq 1 "$rounds"); do timeit ibqueryerrors --counters; done >ibqec.txt
	ref_cports=$(grep -c 'GUID 0x[0-9a-f]* port' ref.out)
	d_ours=$(awk '/^discovery/ { print $4 }' ours.txt | median)
	c_ours=$(awk '/^counters/ { print $4 }' ours.txt | median)
	c_flux=$(awk '/^counters/ { print $4 }' ours-in-flux.txt | median)
	cmads_flux=$(awk '/^counters/ { m = $6 } END { print m }' ours-in-flux.txt)
	d_ref=$(median <ibnd.txt)
	c_ref=$(median <ibqe.txt)
	cc_ref=$(median <ibqec.txt)
	nodes=$(awk '/^discovery/ { print $2; exit }' ours.txt)
	dmads=$(awk '/^discovery/ { print $6; exit }' ours.txt)
	ports=$(awk '/^counters/ { print $2; exit }' ours.txt)
	cmads=$(awk '/^counters/ { m = $6 } END { print m }' ours.txt)
	cat ours.txt
	echo
	printf '%-28s %10s %10s %8s\n' "median of $rounds" ibwatch reference speedup
	printf '%-28s %9ss %9ss %7.1fx\n' "discovery ($nodes nodes)" "$d_ours" "$d_ref" "$(echo "$d_ref / $d_ours" | bc -l)"
	printf '%-28s %9ss %9ss %7.1fx   vs ibqueryerrors\n' "counters ($ports ports)" "$c_ours" "$c_ref" "$(echo "$c_ref / $c_ours" | bc -l)"
	printf '%-28s %9ss %9ss %7.1fx   vs ibqueryerrors --counters\n' "" "$c_ours" "$cc_ref" "$(echo "$cc_ref / $c_ours" | bc -l)"
	printf '%-28s %9ss   with --counter-check in-flux\n' "" "$c_flux"
	echo "ibwatch MADs: discovery $dmads, counter sweep $cmads (the last, warm one; in-flux: $cmads_flux)"
	echo "ibnetdiscover found $ref_nodes nodes; ibqueryerrors checked $ref_ports ports;"
	echo "ibqueryerrors --counters printed $ref_cports ports"
	exit 0
fi

bench_net 3 2592 "$work/fattree3-2592.net"
exec "$top/tests/lib/with-fabric.sh" bench_sweep "$work/fattree3-2592.net" \
	--sm node2592 --osm-args "-s 0" --ibsim-args "$flags" --timeout 180 \
	-- "$top/tests/bench/sweep.sh" "$build" "$rounds"
