#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The route census on the 3-level fat tree (2592 hosts, 324 switches,
# 14256 ports): the MADs and time to read every switch's table, the CPU
# and memory of the census (2592 x 2592 pairs), the time of a path lookup
# from it; then 500 pairs compared with ibtracert hop by hop (issue 21,
# acceptance 2), ibtracert timed on them and extrapolated to all pairs.
#   tests/bench/routes.sh [BUILD_DIR]
. "$(dirname "$0")/lib.sh"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	pre() { SIM_HOST=node0001 LD_PRELOAD=$IBW_SIM_PRELOAD "$@"; }
	# opensm is busy for a while after SUBNET UP: let it settle
	sleep 20
	pre "$build/tests/routes_fabric" >census.txt 2>census.err <<-EOF
		census
		census
		tiers
		lookups 100000
		sample 500 pairs.txt
		paths pairs.txt paths.txt
		quit
	EOF
	val() { awk -v k="$1" '$1 == k { v = $2 } END { print v }' census.txt; }
	# ibtracert, one at a time, timed; its hops in the tool's terms
	t0=$(date +%s%N)
	while read -r s d; do
		echo "$s $d $(pre ibtracert -n "$s" "$d" 2>/dev/null | sed -n \
			-e 's/^From {\(0x[0-9a-f]*\)}\[\([0-9]*\)\] *$/\1\/\2/p' \
			-e 's/^\[\([0-9]*\)\] -> {\(0x[0-9a-f]*\)}\[\([0-9]*\)\] *$/\1>\2\/\3/p' \
			-e 's/^To {\(0x[0-9a-f]*\)}\[\([0-9]*\)\] *$/\1\/\2/p' | paste -sd' ')"
	done <pairs.txt >tracert.txt
	t1=$(date +%s%N)
	n=$(wc -l <pairs.txt)
	differ=$(comm -3 <(awk '{ if ($3 != "ok") print $1, $2, "census:", $3; else {
			$3 = $4 = ""; print } }' paths.txt | tr -s ' ' | sort -u) \
		<(tr -s ' ' <tracert.txt | sed 's/ $//' | sort -u) | grep -c . || true)
	per_ms=$(echo "scale=3; ($t1 - $t0) / 1000000 / $n" | bc)
	pairs=$(val pairs)
	echo "fabric: $(val sources) CA ports, $(val switches) switches, $pairs pairs"
	echo "discovery: $(val discover_ms) ms"
	echo "tables: $(val lft_mads) MADs ($(val lft_blocks) blocks), $(val lft_ms) ms, $(val lft_memory) bytes"
	echo "census: $(val compute_cpu_us) us CPU, $(val memory_bytes) bytes; routed $(val routed), unreachable $(val unreachable), looping $(val looping), non-minimal $(val non_minimal), max hops $(val max_hops), mean $(val mean_hops)"
	echo "diff of two censuses: $(val diff_cpu_us) us CPU"
	echo "process: max RSS $(val maxrss_kb) kB"
	grep '^lookups' census.txt
	grep '^tier' census.txt
	echo "ibtracert: $n pairs, $differ differ from the census hop by hop"
	echo "ibtracert: $per_ms ms a pair (a whole invocation, one at a time)"
	echo "ibtracert for all $pairs pairs: $(echo "scale=1; $per_ms * $pairs / 1000 / 3600" | bc) hours (extrapolated)"
	[ "$differ" = 0 ] && [ "$n" = 500 ]
	exit
fi

bench_net 3 2592 "$work/fattree3-2592.net"
exec "$top/tests/lib/with-fabric.sh" bench_routes "$work/fattree3-2592.net" \
	--sm node2592 --osm-args "-s 0" --ibsim-args "$flags" --timeout 180 \
	-- "$top/tests/bench/routes.sh" "$build"
