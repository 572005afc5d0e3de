#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# ibwatchd beside the real infiniband_exporter (treydock, built from its
# upstream source: ../shared/peers/infiniband_exporter) on one simulated
# fabric, tests/fixtures/side-by-side.net: a dual-port HCA, a 1x link,
# QDR and DDR spine links among SDR ones, unconnected switch ports. Both
# read every switch and HCA, with the receive error details (ibwatchd
# --detail-counters, the exporter's *-rcv-err collectors). Their /metrics
# are compared row by row with tests/lib/promdiff.py: every row (series
# name, label names and values) of the exporter's families on one side
# must be on the other, gauges equal, each counter between the
# exporter's readings taken just before and just after ibwatch's (whose
# samples carry that time); a difference passes only when docs/api.md's
# "Differences from infiniband_exporter" lists it. Compared three times:
# as the fabric starts, with a host unlinked and a switch's
# PortCountersExtended dropped (ibsim's Error), and after both mend.
# Skips (exit 77), saying so, where ../shared/peers is absent.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
. "$here/lib/peer.sh"
: "${IBWATCHD:?}"

if [ ! -x "$peer_exporter" ]; then
	echo "# SKIP: no infiniband_exporter at $peer_exporter (../shared/peers is absent; IBW_EXPORTER names another)"
	exit 77
fi
if [ -z "${IBW_SIM_DIR:-}" ]; then
	exec "$here/lib/with-fabric.sh" exporter \
		"$here/fixtures/side-by-side.net" --sm node0008 -- "$0"
fi
trap stop_started EXIT
api_md=$here/../docs/api.md

# The exporter runs ibnetdiscover and perfquery at node0001, like ibwatchd.
start_peer_exporter --collector.switch --collector.hca \
	--collector.switch.rcv-err-details --collector.hca.rcv-err-details
# With the reading times on its samples, to hold them between the
# exporter's two scrapes.
start_agent node0001 --no-state-file --no-snmp --no-ping --detail-counters \
	--discovery-interval 1 --counter-interval 1 --counter-full-speed \
	--metrics-timestamps yes ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
sweeps() { curl -s -m 5 "$U/api/v1/status" | jq '.sweeps.counter_sweeps // 0'; }
for _ in $(seq 1 100); do
	curl -s -m 30 "http://127.0.0.1:$X/metrics" >/dev/null && break
	sleep 0.2
done

# compare NAME: the exporter, then ibwatchd once a counter sweep that
# started after that scrape has ended, then the exporter again; every
# ibwatch counter sample must be from between the two scrapes.
compare() {
	local name=$1 c0 t1 t2 rc
	curl -s -m 60 "http://127.0.0.1:$X/metrics" >"$name-exp1.prom"
	t1=$(date +%s%3N)
	c0=$(sweeps)
	for _ in $(seq 1 150); do
		[ "$(sweeps)" -ge $((c0 + 2)) ] && break
		sleep 0.1
	done
	curl -s -m 5 "$U/metrics" >"$name-ibw.prom"
	t2=$(date +%s%3N)
	curl -s -m 60 "http://127.0.0.1:$X/metrics" >"$name-exp2.prom"
	check "$name: both answer ($(grep -c '^infiniband_' "$name-exp1.prom") and $(grep -c '^infiniband_' "$name-ibw.prom") infiniband_ rows)" \
		test "$(grep -c '^infiniband_' "$name-exp1.prom")" -gt 100 -a \
		"$(grep -c '^infiniband_' "$name-ibw.prom")" -gt 100
	check "$name: every ibwatch counter sample was read between the exporter's two scrapes" \
		awk -v a="$t1" -v b="$t2" '/^infiniband_.*_total\{/ && NF == 3 {
			n++; if ($3 < a || $3 > b) bad++ } END { exit !(n > 0 && !bad) }' "$name-ibw.prom"
	python3 "$tap_lib/promdiff.py" --allow "$api_md" "$name-exp1.prom" \
		"$name-ibw.prom" "$name-exp2.prom" >"$name-diff.txt"
	rc=$?
	check "$name: $(tail -n 1 "$name-diff.txt" | sed 's/^# //')" test "$rc" = 0 ||
		grep '^DIFF' "$name-diff.txt" | head -n 20 | sed 's/^/#   /'
	# the documented differences met, by kind and the reason's start
	grep '^allowed' "$name-diff.txt" | sed 's/: .* -- /: /' | cut -c1-72 |
		sort | uniq -c | sed 's/^ */#   /'
}

compare start
check "start: the dual-port HCA's second port, the 1x link and the DDR and QDR rates are rows both have" \
	bash -c "grep -q 'ok infiniband_hca_port_transmit_data_bytes_total{guid=\"0x0000000000100008\",port=\"2\"}' start-diff.txt &&
		grep -q 'ok infiniband_switch_port_rate_bytes_per_second{guid=\"0x0000000000200002\",port=\"3\"} 250000000' start-diff.txt &&
		grep -q 'ok infiniband_switch_port_rate_bytes_per_second{guid=\"0x0000000000200001\",port=\"1\"} 2000000000' start-diff.txt &&
		grep -q 'ok infiniband_switch_port_rate_bytes_per_second{guid=\"0x0000000000200000\",port=\"1\"} 4000000000' start-diff.txt"

sim 'Unlink "node0002"[1]'
sim 'Error "spine02" 100 29'
# both see it: ibwatch's discovery and the exporter's ibnetdiscover
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/metrics" | grep -q "^infiniband_switch_collect_timeout{collector=\"switch\",guid=\"0x0000000000200001\"} 1$" && break
	sleep 0.2
done
compare faults
check "faults: neither has a row of node0002's port (0x0000000000100003)" \
	bash -c "! grep -q '0x0000000000100003' faults-diff.txt"
check "faults: neither has a counter of spine02" \
	bash -c "! grep -q '_total{guid=\"0x0000000000200001\"' faults-diff.txt"

sim 'Relink "node0002"[1]'
sim 'Error "spine02" 0'
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/metrics" | grep -q "^infiniband_switch_collect_timeout{collector=\"switch\",guid=\"0x0000000000200001\"} 0$" && break
	sleep 0.2
done
sleep 2 # opensm brings node0002's port up again
compare mended
check "mended: spine02's counters and node0002's rows are back in both" \
	bash -c "grep -q 'ok infiniband_switch_port_transmit_data_bytes_total{guid=\"0x0000000000200001\",port=\"1\"}' mended-diff.txt &&
		grep -q 'ok infiniband_hca_info{guid=\"0x0000000000100003\"' mended-diff.txt"

finish
