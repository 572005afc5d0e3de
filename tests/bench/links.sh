#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The link view's cost against the counter sweep's (issue 18, acceptance
# 5) on the 3-level fat tree (2592 hosts, 324 switches, 14256 ports,
# 7128 cables): one discovery, then ROUNDS counter sweeps, each followed
# by a link-view round built from it as the monitor does per snapshot
# (bench_sweep --links). Prints each round and the medians.
#   tests/bench/links.sh [BUILD_DIR] [ROUNDS]
. "$(dirname "$0")/lib.sh"
rounds=${2:-5}

if [ -n "${IBW_SIM_DIR:-}" ]; then
	median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
	LD_PRELOAD=$IBW_SIM_PRELOAD "$build/tests/bench_sweep" --rounds 1 \
		--counter-rounds "$rounds" --links >links.txt
	cat links.txt
	echo
	# the first sweep and view are cold (ClassPortInfo, new records)
	warm() { tail -n +2 | median; }
	echo "median of the warm rounds (2..$rounds):"
	echo "  counter sweep: $(awk '/^counters/ { print $4 }' links.txt | warm) s," \
		"cpu $(awk '/^counters/ { print $(NF - 7) }' links.txt | warm) s"
	echo "  link view: update $(awk '/^links/ { print $5 }' links.txt | warm) ms," \
		"view $(awk '/^links/ { print $8 }' links.txt | warm) ms," \
		"$(awk '/^links/ { print $14 }' links.txt | warm) of the sweep's cpu," \
		"$(awk '/^links/ { print $19 }' links.txt | warm) of its time"
	exit 0
fi

bench_net 3 2592 "$work/fattree3-2592.net"
exec "$top/tests/lib/with-fabric.sh" bench_links "$work/fattree3-2592.net" \
	--sm node2592 --osm-args "-s 0" --ibsim-args "$flags" --timeout 180 \
	-- "$top/tests/bench/links.sh" "$build" "$rounds"
