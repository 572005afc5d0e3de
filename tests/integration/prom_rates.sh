#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The rates a real Prometheus records from ibwatchd with
# infiniband_exporter's recording rules are the rates on the wire: the
# short form of tests/bench/prom_rates.sh. On the side-by-side fabric
# (tests/fixtures/side-by-side.net), steady rates are driven on three
# switch ports (PerformanceSet of PortCountersExtended 20 times a second:
# 4e9 B/s on a QDR spine link, 2e9 on a DDR one, 1e9 on the dual-port
# HCA's second SDR cable) while ibwatchd sweeps every 2 s with its
# default spread, and two Prometheus servers scrape it as docs/api.md
# says to, at the counter interval and at twice it (2 s and 4 s),
# evaluating the rules as often (rate() over 10 s instead of 5 min).
# For 40 s after a warm-up, every irate() and rate() sample the rules
# recorded for each driven port must be within 5% of its rate and none
# 0. Swept on a period that stretches (as before issue 22: the next
# sweep an interval after the last one ended), or on one that creeps,
# these fail: a scrape that finds the reading it found before is an
# irate of 0, the next one double.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
. "$here/lib/rates.sh"
: "${IBWATCHD:?}"

if [ -z "${IBW_SIM_DIR:-}" ]; then
	exec "$here/lib/with-fabric.sh" prom_rates \
		"$here/fixtures/side-by-side.net" --sm node0008 -- "$0" "$@"
fi
trap stop_started EXIT

warm=20 span=40
rates_drive $((warm + span + 30)) 'spine01[1]=4e9' 'spine02[2]=2e9' 'leaf02[9]=1e9'
start_agent node0001 --no-state-file --no-snmp --no-ping \
	--discovery-interval 5 --counter-interval 2 "$@" ||
	{ echo "not ok - the agent does not start"; exit 1; }
rates_rules rules.yml 10s
check "promtool accepts the rules" promtool check rules rules.yml
rates_prometheus fast "127.0.0.1:$P" 2s rules.yml || bad "Prometheus (2 s) is not ready"
fast=$prom_port
rates_prometheus slow "127.0.0.1:$P" 4s rules.yml || bad "Prometheus (4 s) is not ready"
slow=$prom_port
t0=$(date +%s)
# Meanwhile, when each counter sweep started, as the status says.
while [ $(($(date +%s) - t0)) -le $((warm + span)) ]; do
	curl -s -m 5 "http://127.0.0.1:$P/api/v1/status" | jq -r '.sweeps.counter_sweep.started // empty'
	sleep 0.5
done | sort -u >starts.txt

ports=(0x0000000000200000/1=4e9 0x0000000000200001/2=2e9 0x0000000000200003/9=1e9)
for p in fast:$fast:2 slow:$slow:4; do
	IFS=: read -r name pp step <<<"$p"
	for rec in irate5m rate5m; do
		python3 "$here/lib/rates_check.py" "http://127.0.0.1:$pp" \
			$((t0 + warm)) $((t0 + warm + span)) "$step" 0.05 \
			"infiniband:switch_port_transmit_data_bytes:$rec" "${ports[@]}" \
			>"check-$name-$rec.txt" 2>&1
		rc=$?
		sed 's/^/# /' "check-$name-$rec.txt"
		check "scraped every ${step} s: each driven port's $rec within 5% of its rate, never 0" \
			test "$rc" = 0
	done
done
# The periodic sweeps after the first: 2 s apart, start to start, within
# the loop's latency (the sweep itself takes some 1.6 s, spread).
python3 -c '
import datetime, sys
t = [datetime.datetime.fromisoformat(l.strip().replace("Z", "+00:00")).timestamp()
     for l in open("starts.txt") if l.strip()]
d = [b - a for a, b in zip(t[1:], t[2:])]
print(f"# {len(d)} periods, {min(d):.4f} to {max(d):.4f} s" if d else "# no periods")
sys.exit(not (len(d) >= 20 and all(abs(x - 2) < 0.05 for x in d)))' >periods.txt
rc=$?
cat periods.txt
check "ibwatchd's counter sweeps start every 2 s, start to start" test "$rc" = 0

finish
