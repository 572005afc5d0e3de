#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# HTTP load while the agent sweeps: issue 17's acceptance 3 ("under 200
# connections the counter sweep's duration stays within 1.5x of its idle
# duration, and p99 of /metrics (gzip) stays under 100 ms on the
# 14,256-port tree").
#
# The agent runs on a fresh simulated fabric with discovery and counters
# every 5 s, pings every 10 s, and --counter-full-speed: every counter
# sweep reads at full speed, so its duration is the probe loop's work
# for the sweep, not the spacing of its reads (a spread sweep lasts 80%
# of its interval whatever the load). Each sweep's duration comes from
# the agent's debug log. First SECONDS with no clients (the idle
# sweeps), then wrk with CONNECTIONS connections for SECONDS against
# /metrics (asking for gzip, as Prometheus does), then against
# /api/v1/ports. Prints wrk's figures (p99 from --latency), the errors
# (socket errors and non-2xx answers), the agent's RSS, the sweeps of
# each phase (count, median and longest) and the load average.
#
#   tests/bench/load.sh [BUILD_DIR] [SECONDS] [CONNECTIONS]
#
# Environment: TREE=14256 (default: the 3-level tree of 2592 hosts,
# 14,256 ports) or TREE=8192 (the 2-level tree of 2048 hosts, 8,192
# ports, which this script ran before).
. "$(dirname "$0")/lib.sh"
secs=${2:-30}
conns=${3:-200}

if [ -n "${IBW_SIM_DIR:-}" ]; then
	ticks=$(getconf CLK_TCK)
	cpu_of() { # user+system seconds of PID so far
		awk -v t="$ticks" '{ sub(/.*\) /, ""); print ($12 + $13) / t }' "/proc/$1/stat"
	}
	# opensm keeps working for a while after SUBNET UP (SIMULATOR.md):
	# wait until it used under 5% of a core for 2 s, at most 90 s.
	osmpid=$(cat "$IBW_SIM_DIR/opensm.pid")
	for _ in $(seq 1 45); do
		c0=$(cpu_of "$osmpid")
		sleep 2
		c1=$(cpu_of "$osmpid")
		[ "$(echo "($c1 - $c0) < 0.1" | bc)" = 1 ] && break
	done
	port=$((20000 + RANDOM % 20000))
	LD_PRELOAD=$IBW_SIM_PRELOAD "$build/agent/ibwatchd" --no-state-file --no-snmp \
		--http "127.0.0.1:$port" --discovery-interval 5 --counter-interval 5 \
		--counter-full-speed --ping-interval-ms 10000 \
		--http-max-per-address 64 --http-nice 19 --log-level debug >agent.out 2>agent.log &
	agent=$!
	trap 'kill $agent 2>/dev/null' EXIT
	U=http://127.0.0.1:$port
	for _ in $(seq 1 900); do
		st=$(curl -s -m 5 "$U/api/v1/status" 2>/dev/null) || true
		# (jq 1.6 -e exits 0 on empty input: check there is some.)
		[ -n "$st" ] && jq -e --argjson n "$LOAD_HOSTS" \
			'.sweeps.counter_sweeps >= 1 and .endports.up == $n' \
			<<<"$st" >/dev/null 2>&1 && break
		kill -0 "$agent" || { echo "ibwatchd died: $(tail -n 1 agent.log)"; exit 1; }
		sleep 0.2
	done
	rss() { awk '/^VmRSS/ { print $2 }' "/proc/$agent/status"; }
	hwm() { awk '/^VmHWM/ { print $2 }' "/proc/$agent/status"; }
	load() { cut -d' ' -f1-3 /proc/loadavg; }
	mark() { wc -l <agent.log; }
	# The counter sweeps that ended between two marks: count, median
	# and longest duration, in seconds.
	sweeps() {
		sed -n "$(($1 + 1)),$2p" agent.log |
			sed -n 's/.*counters: sweep: .*, \([0-9.]*\) s$/\1/p' | sort -n |
			awk '{ a[NR] = $1 } END { if (NR) printf "%d sweeps, median %.3f s, longest %.3f s\n", NR, a[int((NR + 1) / 2)], a[NR]; else print "no sweep" }'
	}
	median_of() { sed 's/.*median \([0-9.]*\) s.*/\1/'; }
	st0=$(curl -s -m 5 "$U/api/v1/status")
	echo "fabric: $(jq -c '.fabric | {nodes, ports}' <<<"$st0"), endports up: $(jq .endports.up <<<"$st0")"
	curl -s -o ports.json -w "one /api/v1/ports: %{time_total} s, %{size_download} bytes\n" "$U/api/v1/ports"
	curl -s -H 'Accept-Encoding: gzip' -o /dev/null -w "one /metrics (gzip): %{time_total} s, %{size_download} bytes\n" "$U/metrics"
	echo "RSS before: $(rss) kB (peak so far $(hwm) kB)"
	echo "== idle: ${secs}s with no clients (load average $(load))"
	m0=$(mark)
	sleep "$secs"
	m1=$(mark)
	idle=$(sweeps "$m0" "$m1")
	echo "idle: $idle (load average $(load))"
	run() { # name wrk-args...
		local name=$1 out a b; shift
		echo "== $name: wrk -t 2 -c $conns -d ${secs}s (load average $(load))"
		a=$(mark)
		out=$(wrk -t 2 -c "$conns" -d "${secs}s" --timeout 10s --latency "$@")
		b=$(mark)
		echo "$out"
		# wrk prints these lines only when there were some.
		sock=$(sed -n 's/.*Socket errors: //p' <<<"$out")
		non2xx=$(sed -n 's/.*Non-2xx or 3xx responses: //p' <<<"$out")
		echo "$name errors: socket ${sock:-none}, non-2xx ${non2xx:-0}"
		echo "$name p99: $(awk '$1 == "99%" { print $2 }' <<<"$out")"
		echo "RSS after $name: $(rss) kB (peak $(hwm) kB)"
		s=$(sweeps "$a" "$b")
		echo "$name sweeps under load: $s (load average $(load))"
		if [[ $idle == *median* && $s == *median* ]]; then
			echo "$name sweep median / idle median: $(echo "scale=2; $(median_of <<<"$s") / $(median_of <<<"$idle")" | bc)"
		fi
	}
	run /metrics -H 'Accept-Encoding: gzip' "$U/metrics"
	run /api/v1/ports "$U/api/v1/ports"
	sleep 10
	st1=$(curl -s -m 5 "$U/api/v1/status")
	echo "RSS 10 s later: $(rss) kB (peak $(hwm) kB)"
	echo "sweeps during the runs: discoveries $(jq .sweeps.discoveries <<<"$st0") -> $(jq .sweeps.discoveries <<<"$st1")," \
		"counter sweeps $(jq .sweeps.counter_sweeps <<<"$st0") -> $(jq .sweeps.counter_sweeps <<<"$st1")," \
		"endports up $(jq .endports.up <<<"$st1")"
	kill -0 "$agent" && echo "agent still running"
	exit 0
fi

case ${TREE:-14256} in
14256 | 2592) levels=3 hosts=2592 ;;
8192 | 2048) levels=2 hosts=2048 ;;
*) echo "load.sh: unknown TREE $TREE (14256 or 8192)" >&2; exit 2 ;;
esac
net=$work/fattree$levels-$hosts.net
bench_net $levels $hosts "$net"
export LOAD_HOSTS=$hosts
exec "$top/tests/lib/with-fabric.sh" "bench_load_$hosts" "$net" \
	--sm "node$hosts" --osm-args "-s 0" --ibsim-args "$flags" --timeout 300 \
	-- "$top/tests/bench/load.sh" "$build" "$secs" "$conns"
