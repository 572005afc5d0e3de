#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# What a pair of agents on one fabric costs (docs/operations.md, "Many
# agents, many fabrics"): two ibwatchd with the defaults (counter sweeps
# every 10 s, discovery every 60 s, pings of every endport every 10 s,
# the route census) and metrics-fabric-label all, attached at node0001
# and node0002 of the 3-level fat tree of HOSTS hosts (2592: 14,256
# ports; 10368: 57,024), after WARM seconds, over SECS seconds:
# - the fabric: the MADs each agent sent a second (ibwatch_mads_sent_total);
# - the store: a real Prometheus scraping both every 30 s (the shipped
#   job's interval) with the shipped rules, writing to a real
#   VictoriaMetrics with the pair's infiniband_* series merged (as
#   docs/operations.md sets it up, -dedup.minScrapeInterval=30s): the
#   series each agent serves, the samples Prometheus appends a second
#   (its own head, both agents and the rules), and the series and rows a
#   second the store takes in.
#   tests/bench/pair.sh [BUILD_DIR] [SECS] [HOSTS]
# Default 120 s, 2592 hosts. STORE=0: no Prometheus and no store (on the
# 57,024-port tree their millions of series need more memory than the
# agents, the simulator and a 2-core machine leave): the store's figures
# are then the agents' series, and those over 30 s.
. "$(dirname "$0")/lib.sh"
secs=${2:-120}
hosts=${3:-2592}
warm=${WARM:-60}

if [ -n "${IBW_SIM_DIR:-}" ]; then
	. "$top/tests/lib/tap.sh"
	. "$top/tests/lib/store.sh"
	trap stop_started EXIT
	IBWATCHD=$build/agent/ibwatchd
	sent() { curl -s -m 60 "http://127.0.0.1:$1/metrics" | awk '$1 ~ /^ibwatch_mads_sent_total($|\{)/ { print $2 }'; }
	nseries() { curl -s -m 60 "http://127.0.0.1:$1/metrics" | grep -vc '^#'; }
	# own NAME PORT: the sum of a server's own counter or gauge NAME
	own() { curl -s -m 30 "http://127.0.0.1:$2/metrics" | awk -v n="$1" '$1 == n || index($1, n "{") == 1 { s += $2 } END { printf "%.0f", s }'; }
	start_agent node0001 --no-state-file --no-snmp --metrics-fabric-label all || exit 1
	pa=$P
	start_agent node0002 --no-state-file --no-snmp --metrics-fabric-label all || exit 1
	pb=$P
	store_write_relabel="      - source_labels: [__name__, fabric]
        regex: 'infiniband_.+;(.+)'
        target_label: instance
        replacement: '\$1'"
	if [ "${STORE:-1}" != 0 ]; then
		vm_start vm -dedup.minScrapeInterval=30s || exit 1
		store_prometheus prom 30s "$top/deploy/prometheus/ibwatch.rules.yml" -- \
			"127.0.0.1:$pa" "127.0.0.1:$pb" || exit 1
	fi
	sleep "$warm"
	a0=$(sent "$pa") b0=$(sent "$pb") t0=$(date +%s.%N)
	p0=0 p1=0 v0=0 v1=0 ph=0 vs=0
	[ "${STORE:-1}" != 0 ] && p0=$(own prometheus_tsdb_head_samples_appended_total "$prom_port") &&
		v0=$(own vm_rows_inserted_total "$vm_port")
	sleep "$secs"
	a1=$(sent "$pa") b1=$(sent "$pb") t1=$(date +%s.%N)
	if [ "${STORE:-1}" != 0 ]; then
		p1=$(own prometheus_tsdb_head_samples_appended_total "$prom_port")
		v1=$(own vm_rows_inserted_total "$vm_port")
		ph=$(own prometheus_tsdb_head_series "$prom_port")
		vm_flush
		vs=$(curl -s -m 120 "http://127.0.0.1:$vm_port/api/v1/series/count" | jq -r '.data[0] // "nan"')
	fi
	sa=$(nseries "$pa") sb=$(nseries "$pb")
	pw=$(awk -v a="$p0" -v b="$p1" -v t0="$t0" -v t1="$t1" 'BEGIN { print (b - a) / (t1 - t0) }')
	vr=$(awk -v a="$v0" -v b="$v1" -v t0="$t0" -v t1="$t1" 'BEGIN { print (b - a) / (t1 - t0) }')
	printf '| hosts | MADs/s, agent A / B | series, A / B | Prometheus: head series, samples/s | store: series, rows/s |\n|---:|---:|---:|---:|---:|\n'
	awk -v h="$hosts" -v a0="$a0" -v a1="$a1" -v b0="$b0" -v b1="$b1" -v t0="$t0" -v t1="$t1" \
		-v sa="$sa" -v sb="$sb" -v ph="$ph" -v pw="$pw" -v vs="$vs" -v vr="$vr" 'BEGIN {
		t = t1 - t0
		printf "| %d | %.0f / %.0f | %d / %d | %d, %.0f | %d, %.0f |\n", h,
			(a1 - a0) / t, (b1 - b0) / t, sa, sb, ph, pw, vs, vr }'
	exit 0
fi

export IBW_SIMGUARD=$build/tests/libibw_simguard.so
export IBW_KMODEL=$build/tests/libibw_kmodel.so
net=$work/pair-$hosts.net
"$build/tests/ibw-fattree" --levels 3 --hosts "$hosts" >"$net"
flags=$("$build/tests/ibw-fattree" --levels 3 --hosts "$hosts" --flags)
echo "# a pair of ibwatchd at node0001 and node0002 of the 3-level tree of $hosts hosts, $secs s after $warm s, kernel model loaded"
IBW_TEST_WORK=$work exec "$top/tests/lib/with-fabric.sh" pair "$net" \
	--sm "$(printf 'node%04d' "$hosts")" --osm-args "-s 0" --ibsim-args "$flags" --timeout 300 -- \
	"$top/tests/bench/pair.sh" "$build" "$secs" "$hosts"
