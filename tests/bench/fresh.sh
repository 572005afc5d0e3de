#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# How soon a started agent serves every port's counters (issue 17), with
# the default intervals, on the 2-level fat tree of 324 hosts (1620
# ports) or, with HOSTS 2592, the 3-level one (14256 ports):
#  - start: from /healthz first answering 200 until every port has
#    counters in /metrics and in /api/v1/ports;
#  - recovery: the local link unlinked, then relinked: from the relink
#    until the agent sees its port active, and from then until every
#    port's counters in /api/v1/ports were read after the relink;
#  - progress: with --counter-interval 10, what publishing a spread
#    sweep's reads once a second costs (the agent's debug log times each
#    such publish: it copies every port's counters into a snapshot).
# Each poll is one curl every 20 ms; ROUNDS rounds of start and recovery.
#   tests/bench/fresh.sh [BUILD_DIR] [ROUNDS] [HOSTS]
. "$(dirname "$0")/lib.sh"
rounds=${2:-5}
hosts=${3:-324}

if [ -n "${IBW_SIM_DIR:-}" ]; then
	ms() { echo $(($(date +%s%N) / 1000000)); }
	# upto WHAT CMD...: poll CMD every 20 ms; give up after 120 s.
	upto() {
		local what=$1 i
		shift
		for ((i = 0; i < 6000; i++)); do "$@" && return 0; sleep 0.02; done
		echo "fresh.sh: gave up waiting for $what" >&2
		exit 1
	}
	stats() { sort -n | awk '{ a[NR] = $1 } END { printf "median %d ms, max %d ms (%d rounds)\n", a[int((NR + 1) / 2)], a[NR], NR }'; }
	sim() { "$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" "$1" >/dev/null; }
	agent=""
	trap '[ -n "$agent" ] && kill $agent 2>/dev/null' EXIT
	start() {
		port=$((20000 + RANDOM % 20000))
		SIM_HOST=node0001 LD_PRELOAD=$IBW_SIM_PRELOAD "$build/agent/ibwatchd" --no-state-file --no-snmp \
			--http "127.0.0.1:$port" "$@" >agent.out 2>agent.log &
		agent=$!
		U=http://127.0.0.1:$port
	}
	stop() { kill "$agent"; wait "$agent" 2>/dev/null || true; agent=""; }
	st() { curl -s -m 5 "$U/api/v1/status"; }
	code() { curl -s -m 5 -o /dev/null -w '%{http_code}' "$U/healthz"; }
	prom_ports() { curl -s -m 20 "$U/metrics" | grep -c '^infiniband_\(switch\|hca\)_port_transmit_data_bytes_total{'; }
	api_ports() { curl -s -m 20 "$U/api/v1/ports" | jq --arg t "$1" '[.[] | select(.counters != null and .counters.updated >= $t)] | length'; }
	healthy() { [ "$(code)" = 200 ]; }
	read_since() { [ "$(api_ports "$2")" = "$1" ]; }
	all_ports() { [ "$(prom_ports)" = "$1" ] && [ "$(api_ports "$2")" = "$1" ]; }
	# (jq 1.6 -e is true on no input at all)
	stj() { local j; j=$(st) && [ -n "$j" ] && jq -e "$1" <<<"$j" >/dev/null 2>&1; }
	: >start.txt
	: >back.txt
	: >ready.txt
	: >sweep.txt
	for r in $(seq 1 "$rounds"); do
		start
		upto "/healthz 200" healthy
		th=$(ms)
		n=$(st | jq .fabric.ports)
		upto "every port's counters" all_ports "$n" ""
		echo $(($(ms) - th)) >>start.txt
		echo "round $r: $n ports; all in /metrics and /api/v1/ports $(tail -1 start.txt) ms after /healthz said 200"
		upto "endports up" stj '.local_port_lost == false and .endports.up > 0'
		sim 'Unlink "node0001"[1]'
		upto "the local port lost" stj .local_port_lost
		t=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
		t_re=$(ms)
		sim 'Relink "node0001"[1]'
		upto "the local port back" stj '.local_port_lost == false'
		tb=$(ms)
		upto "every port read again" read_since "$n" "$t"
		tc=$(ms)
		echo $((tb - t_re)) >>back.txt
		echo $((tc - tb)) >>ready.txt
		echo "round $r: relinked; port seen active $((tb - t_re)) ms later, every port read again $((tc - tb)) ms after that"
		st | jq -r '.sweeps.counters.duration_ms' >>sweep.txt
		stop
	done
	echo "== $hosts hosts, default intervals"
	echo "start: every port in /metrics and /api/v1/ports after /healthz 200: $(stats <start.txt)"
	echo "recovery: relink to local port seen active: $(stats <back.txt)"
	echo "recovery: port seen active to every port read again: $(stats <ready.txt)"
	echo "the recovery sweeps themselves (ms): $(tr '\n' ' ' <sweep.txt)"
	start --counter-interval 10 --log-level debug
	upto "/healthz 200" healthy
	upto "the second sweep" stj '.sweeps.counter_sweeps >= 2'
	stop
	sed -n 's/.*sweep under way: \([0-9]*\) of \([0-9]*\) ports read.*published in \([0-9.]*\) ms/\3 \1 \2/p' agent.log >pub.txt
	echo "progress: $(wc -l <pub.txt) publishes during the spread sweep; each (ms, ports read, of):"
	tr '\n' ';' <pub.txt | sed 's/;/; /g'
	echo
	exit 0
fi

levels=2
[ "$hosts" -gt 648 ] && levels=3
bench_net $levels "$hosts" "$work/fresh-$hosts.net"
[ -e "$build/tests/libibw_kmodel.so" ] && export IBW_KMODEL=$build/tests/libibw_kmodel.so
exec "$top/tests/lib/with-fabric.sh" bench_fresh "$work/fresh-$hosts.net" \
	--sm "$(printf 'node%04d' "$hosts")" --ibsim-args "$flags" --timeout 180 \
	-- "$top/tests/bench/fresh.sh" "$build" "$rounds" "$hosts"
