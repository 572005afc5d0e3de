#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The rates a real Prometheus records from ibwatchd with
# infiniband_exporter's recording rules are the rates on the wire: the
# short form of tests/bench/prom_rates.sh. On the side-by-side fabric
# (tests/fixtures/side-by-side.net), steady rates are driven on three
# switch ports (PerformanceSet of PortCountersExtended 20 times a second:
# 4e9 B/s on a QDR spine link, 2e9 on a DDR one, 1e9 on the dual-port
# HCA's second SDR cable) while ibwatchd runs with a 2 s counter
# interval and its default alignment with its scrapers (issue 35), and
# two Prometheus servers scrape it at no multiple of that interval, 3 s
# and 6 s (15 s scrapes of the default 10 s interval, scaled down to fit
# the suite's time), evaluating the rules as often (rate() over 15 s
# instead of 5 min). For 40 s after a warm-up (the agent learns each
# scraper from three scrapes), every irate() and rate() sample the
# rules recorded for each driven port must be within 0.3 s of traffic
# of its rate (10% at 3 s, 5% at 6 s: on two busy cores a reading comes
# up to some 0.2 s early or late; 5% of a 15 s scrape is 0.75 s) and
# none 0, and the counter sweeps must start every 1.5 s (3 s in two
# parts no longer than 2 s), start to start. On the plain 2 s schedule
# (--counter-align interval) these fail (0.63 to 1.37 times the rate at
# 3 s, measured): a 3 s scrape finds one new reading, then two, and a
# scrape that lands as a sweep publishes finds a reading a sweep early
# or late (0.5 or 1.5 times the rate at 3 s, 0.75 or 1.25 at 6 s).
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

warm=45 span=40
rates_drive $((warm + span + 30)) 'spine01[1]=4e9' 'spine02[2]=2e9' 'leaf02[9]=1e9'
start_agent node0001 --no-state-file --no-snmp --no-ping \
	--discovery-interval 5 --counter-interval 2 "$@" ||
	{ echo "not ok - the agent does not start"; exit 1; }
rates_rules rules.yml 15s
check "promtool accepts the rules" promtool check rules rules.yml
rates_prometheus fast "127.0.0.1:$P" 3s rules.yml || bad "Prometheus (3 s) is not ready"
fast=$prom_port
rates_prometheus slow "127.0.0.1:$P" 6s rules.yml || bad "Prometheus (6 s) is not ready"
slow=$prom_port
t0=$(date +%s)
# Meanwhile, when each counter sweep started, as the status says.
while [ $(($(date +%s) - t0)) -le $((warm + span)) ]; do
	curl -s -m 5 "http://127.0.0.1:$P/api/v1/status" | jq -r '.sweeps.counter_sweep.started // empty'
	sleep 0.5
done | sort -u >starts.txt

ports=(0x0000000000200000/1=4e9 0x0000000000200001/2=2e9 0x0000000000200003/9=1e9)
for p in fast:$fast:3:0.10 slow:$slow:6:0.05; do
	IFS=: read -r name pp step tol <<<"$p"
	pct=$(awk -v t="$tol" 'BEGIN { printf "%d", t * 100 }')
	for rec in irate5m rate5m; do
		python3 "$here/lib/rates_check.py" "http://127.0.0.1:$pp" \
			$((t0 + warm)) $((t0 + warm + span)) "$step" "$tol" \
			"infiniband:switch_port_transmit_data_bytes:$rec" "${ports[@]}" \
			>"check-$name-$rec.txt" 2>&1
		rc=$?
		sed 's/^/# /' "check-$name-$rec.txt"
		check "scraped every ${step} s: each driven port's $rec within $pct% of its rate, never 0" \
			test "$rc" = 0
	done
done
# The sweeps once both scrapers are learned: 1.5 s apart, start to
# start, within the loop's latency on busy cores and the phase's
# following of the scrapes (a move between stretches is 0.75 s).
python3 -c '
import datetime, sys
t = [datetime.datetime.fromisoformat(l.strip().replace("Z", "+00:00")).timestamp()
     for l in open("starts.txt") if l.strip()]
t = [x for x in t if x >= int(sys.argv[1])]
d = [b - a for a, b in zip(t, t[1:])]
print(f"# {len(d)} periods, {min(d):.4f} to {max(d):.4f} s" if d else "# no periods")
sys.exit(not (len(d) >= 20 and all(abs(x - 1.5) < 0.1 for x in d)))' $((t0 + warm)) >periods.txt
rc=$?
cat periods.txt
check "ibwatchd's counter sweeps start every 1.5 s, start to start" test "$rc" = 0

finish
