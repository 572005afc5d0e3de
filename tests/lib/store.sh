# SPDX-License-Identifier: BSD-2-Clause
# Sourced by the shell tests (after tap.sh) that need the stores an
# ibwatch site runs beside Prometheus: a real VictoriaMetrics (Debian's
# victoria-metrics, 1.79) and a real Alertmanager (Debian's
# prometheus-alertmanager, 0.25), each a throwaway process of the test's
# on a free loopback port with its data in the scratch directory, and a
# Prometheus scraping ibwatch agents that remote-writes into the one and
# sends its alerts to the other. Every PID goes into pids
# (stop_started).

# store_serve WHAT LOG READY CMD...: CMD in the background, logging to
# LOG, @PORT@ in its arguments a free loopback port, until `READY PORT`
# succeeds (30 s at most); sets store_port ("" when it never did) and
# adds its PID to pids. Another port is tried (3 at most) when it exits,
# as when the port was taken between free_port and its bind.
store_serve() {
	local what=$1 log=$2 ready=$3 p pid a args
	shift 3
	store_port=""
	for _ in 1 2 3; do
		p=$(free_port)
		args=()
		for a in "$@"; do args+=("${a//@PORT@/$p}"); done
		"${args[@]}" >>"$log" 2>&1 &
		pid=$!
		for _ in $(seq 1 150); do
			if "$ready" "$p"; then
				pids+=("$pid")
				store_port=$p
				return 0
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		# gone before the next try: a silent one would hold its port
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	echo "# $what did not come up:"
	tail -n 5 "$log" | sed 's/^/#   /'
	return 1
}

# vm_start NAME [FLAG...]: a VictoriaMetrics on a free loopback port
# (with the FLAGs besides those below), its data in
# ./NAME/data and its log in ./NAME/victoria-metrics.log; sets vm_port
# and adds its PID to pids. Up once /health answers OK; another port is
# tried (3 at most) when it exits because the port was taken. 1 when it
# is not up within 30 s.
# -search.latencyOffset=0s: by default a query does not see the samples
# of the last 30 s (VictoriaMetrics takes them for incomplete): a test
# reading back what it just wrote would wait some 20 s (measured).
# -retentionPeriod=1d: the least it accepts. -search.disableCache: every
# answer from the samples themselves, none from the rollup cache. Even
# so a query finds a new series only up to 10 s after its first sample
# arrived (measured; later ones in a second): vm_flush.
vm_start() {
	local name=$1
	shift
	mkdir -p "$name"
	store_serve VictoriaMetrics "$name/victoria-metrics.log" vm_ready \
		victoria-metrics -storageDataPath="$PWD/$name/data" \
		-httpListenAddr=127.0.0.1:@PORT@ -retentionPeriod=1d \
		-search.latencyOffset=0s -search.disableCache "$@"
	vm_port=$store_port
	[ -n "$vm_port" ]
}
vm_ready() { [ "$(curl -s -m 2 "http://127.0.0.1:$1/health")" = OK ]; }

# vm_flush: the VictoriaMetrics at vm_port makes what it has received
# searchable now (/internal/force_flush), new series included; an
# instant query still finds a sample only about a second after its
# timestamp (measured, 1.79), /api/v1/series at once.
vm_flush() { curl -s -m 5 -o /dev/null -f "http://127.0.0.1:$vm_port/internal/force_flush"; }

# am_start NAME CONFIG_FILE: an Alertmanager on a free loopback port with
# CONFIG_FILE, its data in ./NAME/data and its log in
# ./NAME/alertmanager.log; sets am_port and adds its PID to pids. Up
# once /-/ready answers; another port is tried (3 at most) when it exits
# because the port was taken. 1 when it is not up within 30 s.
# --cluster.listen-address= (empty) turns off its gossip cluster, which
# would otherwise listen on 0.0.0.0:9094, TCP and UDP, and hold
# notifications back until its peers settled.
am_start() {
	local name=$1 conf=$2
	mkdir -p "$name"
	case $conf in /*) ;; *) conf=$PWD/$conf ;; esac
	store_serve Alertmanager "$name/alertmanager.log" am_ready \
		prometheus-alertmanager --config.file="$conf" \
		--storage.path="$PWD/$name/data" \
		--web.listen-address=127.0.0.1:@PORT@ --cluster.listen-address=
	am_port=$store_port
	[ -n "$am_port" ]
}
am_ready() { curl -s -f -m 2 -o /dev/null "http://127.0.0.1:$1/-/ready"; }

# store_prometheus NAME INTERVAL [RULES...] -- TARGET...: a Prometheus
# on a free loopback port scraping every TARGET (host:port) in one job,
# ibwatch, every INTERVAL and evaluating the rule files RULES as often,
# its data in ./NAME; remote-writes to the VictoriaMetrics at vm_port
# when vm_port is set, and sends alerts to the Alertmanager at am_port
# when am_port is set. Sets prom_port and adds its PID to pids; another
# port is tried (3 at most) when it exits because the port was taken. 1
# when it is not ready within 30 s. store_write_relabel, when set, is the
# remote write's write_relabel_configs (YAML, a list, indented by 6).
# Prometheus 2.42 hands its targets over 5 s after it starts: the first
# scrape, and the first alert sent, come that late whatever INTERVAL is.
# batch_send_deadline: 1s (5 s by default) sends a part-filled batch of
# samples after a second. --storage.remote.flush-deadline=1s: on SIGTERM
# it tries to send what it holds for a minute by default, longer than
# stop waits, when the VictoriaMetrics is already gone.
# --rules.alert.resend-delay=INTERVAL (1m by default): a firing alert is
# sent again every evaluation, as a test's short Alertmanager timings
# expect (the alert's endsAt is 4 such delays ahead).
prom_ready() { curl -s -m 2 "http://127.0.0.1:$1/-/ready" | grep -q Ready; }
store_prometheus() {
	local name=$1 interval=$2 f rules="" targets=""
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		case $1 in /*) f=$1 ;; *) f=$PWD/$1 ;; esac
		rules="$rules${rules:+, }'$f'"
		shift
	done
	[ "${1:-}" = -- ] && shift
	for f in "$@"; do targets="$targets${targets:+, }'$f'"; done
	mkdir -p "$name"
	{
		cat <<YML
global:
  scrape_interval: $interval
  evaluation_interval: $interval
rule_files: [$rules]
scrape_configs:
  - job_name: ibwatch
    scrape_timeout: $interval
    static_configs:
      - targets: [$targets]
YML
		if [ -n "${vm_port:-}" ]; then
			cat <<YML
remote_write:
  - url: http://127.0.0.1:$vm_port/api/v1/write
    queue_config:
      batch_send_deadline: 1s
YML
			[ -n "${store_write_relabel:-}" ] &&
				printf '    write_relabel_configs:\n%s\n' "$store_write_relabel"
		fi
		if [ -n "${am_port:-}" ]; then
			cat <<YML
alerting:
  alertmanagers:
    - static_configs:
        - targets: ['127.0.0.1:$am_port']
YML
		fi
	} >"$name/prometheus.yml"
	store_serve Prometheus "$name/prometheus.log" prom_ready \
		prometheus --config.file="$name/prometheus.yml" --storage.tsdb.path="$PWD/$name/tsdb" \
		--web.listen-address=127.0.0.1:@PORT@ --storage.remote.flush-deadline=1s \
		--rules.alert.resend-delay="$interval"
	prom_port=$store_port
	[ -n "$prom_port" ]
}

# store_wait URL QUERY [SECONDS]: until the Prometheus-compatible server
# at URL (http://127.0.0.1:PORT) answers the instant query QUERY with at
# least one series, SECONDS (30) at most, asked every 0.2 s; 1 then.
store_wait() {
	local url=$1 q=$2 i
	for ((i = 0; i < ${3:-30} * 5; i++)); do
		curl -s -m 2 "$url/api/v1/query" --data-urlencode "query=$q" |
			jqe '.status == "success" and (.data.result | length) > 0' && return 0
		sleep 0.2
	done
	return 1
}
