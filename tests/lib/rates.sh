# SPDX-License-Identifier: BSD-2-Clause
# Sourced by tests/integration/prom_rates.sh and tests/bench/prom_rates.sh
# (after tap.sh, on the side-by-side fabric): steady rates driven on
# ports through ibsim's console, real Prometheus servers scraping an
# exporter (ibwatchd or infiniband_exporter) with infiniband_exporter's
# recording rules, and what they recorded checked against the rates.

rates_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exporter_rules=${IBW_EXPORTER_RULES:-$rates_lib/../../../shared/peers/infiniband_exporter/infiniband.rules}

# rates_rules FILE WINDOW: the exporter's recording rules into FILE, each
# rate() over WINDOW instead of 5m (irate() takes the last two samples
# in its range whatever it is); where ../shared/peers is absent, the two
# data rules of it with the same names and expressions, written here.
rates_rules() {
	local out=$1 win=$2
	if [ -r "$exporter_rules" ]; then
		sed "s/\([^i]\)rate(\([^)]*\)\[5m\])/\1rate(\2[$win])/" "$exporter_rules" >"$out"
		echo "# rules: $exporter_rules, rate() over $win"
		return
	fi
	echo "# rules: $exporter_rules is absent; its data rules, written here, rate() over $win"
	cat >"$out" <<YML
groups:
- name: infiniband-record
  rules:
  - record: infiniband:switch_port_transmit_data_bytes:irate5m
    expr: irate(infiniband_switch_port_transmit_data_bytes_total[5m]) * on(guid,port) group_left(switch, host, uplink, uplink_port) infiniband_switch_uplink_info
  - record: infiniband:switch_port_transmit_data_bytes:rate5m
    expr: rate(infiniband_switch_port_transmit_data_bytes_total[$win]) * on(guid,port) group_left(switch, host, uplink, uplink_port) infiniband_switch_uplink_info
YML
}

# rates_prometheus NAME TARGET INTERVAL RULES: a Prometheus on a free
# loopback port scraping TARGET (host:port) every INTERVAL and evaluating
# RULES as often, its data in ./NAME; sets prom_port and adds its PID to
# pids. 1 when it is not ready within 30 s.
rates_prometheus() {
	local name=$1 target=$2 interval=$3 rules=$4 pp
	mkdir -p "$name"
	cat >"$name/prometheus.yml" <<YML
global:
  scrape_interval: $interval
  evaluation_interval: $interval
rule_files: ['$PWD/$rules']
scrape_configs:
  - job_name: $name
    scrape_timeout: $interval
    static_configs:
      - targets: ['$target']
YML
	pp=$(free_port)
	prometheus --config.file="$name/prometheus.yml" --storage.tsdb.path="$PWD/$name/tsdb" \
		--web.listen-address="127.0.0.1:$pp" >"$name/prometheus.log" 2>&1 &
	pids+=($!)
	prom_port=$pp
	for _ in $(seq 1 150); do
		curl -s -m 2 "http://127.0.0.1:$pp/-/ready" | grep -q Ready && return 0
		sleep 0.2
	done
	return 1
}

# rates_drive SECONDS NODE[PORT]=BYTES_PER_S...: from each port's
# counters now (perfquery -x at node0001, plus a margin, so that the
# counters never go back), drive every port at its rate for SECONDS in
# the background (tests/lib/drive_rate.py, one a rate); adds the PIDs to
# pids.
rates_drive() {
	local secs=$1 spec node port rate lid x r
	shift
	for spec in "$@"; do
		node=${spec%%[*} port=${spec#*[} rate=${spec#*=}
		port=${port%%]*}
		lid=$(at node0001 ibnetdiscover -p 2>/dev/null |
			awk -v n="( '$node' - " '$1 == "SW" && index($0, n) { print $2; exit }')
		at node0001 perfquery -x "$lid" "$port" >"pq-$node-$port.txt" 2>&1
		x=$(awk -F'[.:]+' '$1 == "PortXmitData" { print $NF }' "pq-$node-$port.txt")
		r=$(awk -F'[.:]+' '$1 == "PortRcvData" { print $NF }' "pq-$node-$port.txt")
		python3 "$rates_lib/drive_rate.py" "$IBW_SIM_DIR/console" "$secs" "$rate" \
			"$node[$port]=$((x + 1000000)),$((r + 1000000))" >"drive-$node-$port.out" 2>&1 &
		pids+=($!)
	done
}
