#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Trace latency and MAD count on the 3-level fat tree (2592 hosts), cold
# and warm, against an `ibtracert` invocation to the same destinations:
# 20 hosts, from node0001 (paths of 5 switch hops across pods).
#   tests/bench/trace.sh [BUILD_DIR]
. "$(dirname "$0")/lib.sh"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
	pre() { LD_PRELOAD=$IBW_SIM_PRELOAD "$@"; }
	pre "$build/agent/ibwatchd" --once --full --no-state-file --no-ping >fab.json 2>/dev/null
	slid=$(jq -r '.local_port.lid' fab.json)
	lids=$(jq -r '[.nodes[] | select(.type == "ca") | .lid] | sort | .[range(100; 2592; 125)]' fab.json | tr -d '[],' | xargs)
	pre "$build/tests/bench_trace" $lids >ours.txt
	for l in $lids; do
		t0=$(date +%s%N)
		pre ibtracert "$slid" "$l" >/dev/null 2>&1
		t1=$(date +%s%N)
		echo "scale=3; ($t1 - $t0) / 1000000" | bc
	done >ref.txt
	for k in cold first warm; do
		printf '%-6s median %s ms, %s MADs, %s hops\n' "$k" \
			"$(awk -v k=$k '$1 == k { print $(NF - 1) }' ours.txt | median)" \
			"$(awk -v k=$k '$1 == k { print $(NF - 3) }' ours.txt | median)" \
			"$(awk -v k=$k '$1 == k { print $(NF - 5) }' ours.txt | median)"
	done
	printf 'ibtracert median %s ms (a whole invocation)\n' "$(median <ref.txt)"
	exit 0
fi

bench_net 3 2592 "$work/fattree3-2592.net"
exec "$top/tests/lib/with-fabric.sh" bench_trace "$work/fattree3-2592.net" \
	--sm node2592 --osm-args "-s 0" --ibsim-args "$flags" --timeout 180 \
	-- "$top/tests/bench/trace.sh" "$build"
