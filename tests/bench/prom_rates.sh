#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Rates in Prometheus, ibwatchd beside infiniband_exporter (issues 22,
# 35): on the side-by-side fabric (tests/fixtures/side-by-side.net),
# steady rates driven on three switch ports (4e9 B/s on a QDR spine
# link, 2e9 on a DDR one, 1e9 on an SDR cable to a host; PerformanceSet
# 20 times a second), each program scraped by real Prometheus servers,
# one every 10, 15, 30 and 60 s (SCRAPES, e.g. SCRAPES="10 30"), all at
# once, evaluating infiniband_exporter's own recording rules
# (../shared/peers/infiniband_exporter/infiniband.rules) as often. After
# WARM seconds (the rate5m rules need 5 minutes of data), every irate5m
# and rate5m sample of each driven port over SPAN seconds, as a share of
# the driven rate: lowest, highest, zeros. ibwatchd runs with its
# defaults and ARGS; the exporter, where ../shared/peers has it, with
# --collector.switch (and --collector.hca).
#   tests/bench/prom_rates.sh [BUILD_DIR] [SPAN] [WARM] [-- IBWATCHD ARGS]
# Default SPAN 300 s (five 60 s samples at least), WARM 330 s: about 11
# minutes. On a loaded machine: run `stress-ng --cpu 2` beside it. Its
# work in BENCH_WORK (default BUILD_DIR/bench-work), so that two can run.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
span=${2:-300}
warm=${3:-330}
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = -- ] && shift
scrapes=${SCRAPES:-10 15 30 60}
work=${BENCH_WORK:-$build/bench-work}
mkdir -p "$work"

if [ -z "${IBW_SIM_DIR:-}" ]; then
	export IBW_SIMGUARD=$build/tests/libibw_simguard.so
	export IBW_KMODEL=$build/tests/libibw_kmodel.so
	export IBWATCHD=$build/agent/ibwatchd IBW_TEST_WORK=$work
	exec "$top/tests/lib/with-fabric.sh" prom_rates "$top/tests/fixtures/side-by-side.net" \
		--sm node0008 -- "$top/tests/bench/prom_rates.sh" "$build" "$span" "$warm" -- "$@"
fi
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/rates.sh"
. "$top/tests/lib/peer.sh"
trap stop_started EXIT

rates_drive $((warm + span + 60)) 'spine01[1]=4e9' 'spine02[2]=2e9' 'leaf02[9]=1e9'
start_agent node0001 --no-state-file --no-snmp --no-ping "$@" ||
	{ echo "prom_rates.sh: the agent does not start" >&2; exit 1; }
targets=("ibwatchd:127.0.0.1:$P")
if [ -x "$peer_exporter" ]; then
	start_peer_exporter --collector.switch --collector.hca
	targets+=("infiniband_exporter:127.0.0.1:$X")
else
	echo "# no infiniband_exporter at $peer_exporter: ibwatchd alone"
fi
rates_rules rules.yml 5m
declare -A at_port
for t in "${targets[@]}"; do
	name=${t%%:*} target=${t#*:}
	for s in $scrapes; do
		rates_prometheus "$name-$s" "$target" "${s}s" rules.yml ||
			{ echo "prom_rates.sh: Prometheus for $name every $s s is not ready" >&2; exit 1; }
		at_port[$name-$s]=$prom_port
	done
done
t0=$(date +%s)
echo "# ibwatchd $* ; driving for $((warm + span)) s, measuring the last $span s"
sleep $((warm + span + 2))
curl -s -m 5 "http://127.0.0.1:$P/api/v1/status" |
	jq -r '.sweeps.counter_sweep | "# ibwatchd: counter sweeps every \(.interval_seconds) s, aligned with \(.aligned_scrapers) scrapers"'

ports=(0x0000000000200000/1=4e9 0x0000000000200001/2=2e9 0x0000000000200003/9=1e9)
printf '| program | scrape | rule | samples | lowest | highest | zeros |\n|---|---|---|---|---|---|---|\n'
for t in "${targets[@]}"; do
	name=${t%%:*}
	for s in $scrapes; do
		for rec in irate5m rate5m; do
			python3 "$top/tests/lib/rates_check.py" "http://127.0.0.1:${at_port[$name-$s]}" \
				$((t0 + warm)) $((t0 + warm + span)) "$s" 0.05 \
				"infiniband:switch_port_transmit_data_bytes:$rec" "${ports[@]}" >"check-$name-$s-$rec.txt"
			awk -v p="$name" -v s="$s" -v r="$rec" '
				{ n += $3; lo = (NR == 1 || $5 + 0 < lo) ? $5 + 0 : lo;
				  hi = (NR == 1 || $7 + 0 > hi) ? $7 + 0 : hi; z += $(NF - 1) }
				END { printf "| %s | %s s | %s | %d | %.4f | %.4f | %d |\n", p, s, r, n, lo, hi, z }' \
				"check-$name-$s-$rec.txt"
		done
	done
done
