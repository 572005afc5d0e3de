#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The cost of the big JSON documents on the 3-level fat tree (2592 hosts,
# 14256 ports): `ibwatchd --once` (the summary) and `--once --full` (every
# document) as whole processes (wall time, the summary's beyond discovery
# and the counter sweep, and peak RSS from /usr/bin/time -v), then a running agent's first render of
# /api/v1/ports, /api/v1/nodes, /api/v1/links and /api/v1/endports (time
# and size from curl) with its RSS when idle and its peak (VmHWM) after
# them.
#   tests/bench/render.sh [BUILD_DIR]
# HOSTS=10368 for the 57,024-port tree (ibw-fattree's host count);
# ONCE_ONLY=1 stops after the two --once runs.
# IBW_BENCH_AGENT names another ibwatchd binary (to compare builds).
# QUIET=0 fetches right after the first counter sweep, while the agent's
# start-up work (the first route census) may still run. KEEP=1 keeps
# the documents (curl writes them to files: slower, the disk's time).
# The idle RSS is the agent's right after its first counter sweep; the
# RSS once quiet includes the first route census and the next sweep.
# The renderers alone (CPU time, no fabric, the 57,024-port tree's
# shape): build/tests/bench_render. The largest trees as a whole:
# tests/bench/scale.sh.
. "$(dirname "$0")/lib.sh"
agent_bin=${IBW_BENCH_AGENT:-$build/agent/ibwatchd}

if [ -n "${IBW_SIM_DIR:-}" ]; then
	# once NAME ARGS...: --once as a whole process; its wall time, and
	# what of it was neither the discovery nor the counter sweep (the
	# summary's status says how long those took).
	once() {
		local n=$1 t0 t1 wall
		shift
		t0=$(date +%s%N)
		LD_PRELOAD=$IBW_SIM_PRELOAD /usr/bin/time -v -o "$n.time" \
			"$agent_bin" --no-state-file --no-snmp --once "$@" >"$n.json" 2>"$n.log" || true
		t1=$(date +%s%N)
		wall=$(echo "scale=3; ($t1 - $t0) / 1000000000" | bc)
		echo "--once $*: $wall s wall," \
			"$(sed -n 's/.*User time (seconds): //p' "$n.time") s user," \
			"$(sed -n 's/.*System time (seconds): //p' "$n.time") s system," \
			"peak RSS $(sed -n 's/.*Maximum resident set size (kbytes): //p' "$n.time") kB," \
			"$(stat -c %s "$n.json") bytes"
		[ "$n" = once-summary ] || return 0
		jq -r --arg w "$wall" '.status.sweeps | "  discovery \(.discovery.duration_ms / 1000) s, counter sweep \(.counters.duration_ms / 1000) s: beyond them \(($w | tonumber) - (.discovery.duration_ms + .counters.duration_ms) / 1000) s"' "$n.json"
	}
	once once-summary
	once once-full --full
	[ -z "${ONCE_ONLY:-}" ] || exit 0
	port=$((20000 + RANDOM % 20000))
	LD_PRELOAD=$IBW_SIM_PRELOAD "$agent_bin" --no-state-file --no-snmp \
		--http "127.0.0.1:$port" >agent.out 2>agent.log &
	agent=$!
	trap 'kill $agent 2>/dev/null' EXIT
	U=http://127.0.0.1:$port
	for _ in $(seq 1 600); do
		[ "$(curl -s "$U/api/v1/status" 2>/dev/null | jq -r ".sweeps.counter_sweeps // 0" 2>/dev/null)" -ge 1 ] 2>/dev/null && break
		sleep 0.2
	done
	echo "idle: $(grep -E 'VmRSS|VmHWM' /proc/$agent/status | tr -s ' \t' ' ' | tr '\n' ' ')"
	ticks=$(getconf CLK_TCK)
	cpu_of() { awk -v t="$ticks" '{ sub(/.*\) /, ""); print ($12 + $13) / t }' "/proc/$1/stat"; }
	# Then, unless QUIET=0, until the agent's own start-up work is done
	# (the first route census reads every switch's table on a big tree)
	# and it uses under a quarter of a core over a second (spread sweeps
	# go on): the renders' CPU is then theirs, not the start-up's.
	if [ "${QUIET:-1}" != 0 ]; then
		for _ in $(seq 1 120); do
			c0=$(cpu_of "$agent"); sleep 1; c1=$(cpu_of "$agent")
			[ "$(echo "$c1 - $c0 < 0.25" | bc)" = 1 ] && break
		done
		echo "quiet after $(awk '{ print int($1) }' /proc/uptime) s uptime: $(echo "$c1 - $c0" | bc) s CPU in the last second," \
			"$(grep -E 'VmRSS' /proc/$agent/status | tr -s ' \t' ' ')"
	fi
	for p in ports nodes links endports; do
		c0=$(cpu_of "$agent")
		# Into /dev/null unless KEEP=1: writing 225 MB to a file
		# costs curl 0.2-0.5 s on this machine's disk, time that is
		# not the agent's.
		if [ -n "${KEEP:-}" ]; then out=$p.json; else out=/dev/null; fi
		curl -s -o "$out" -w "first render of /api/v1/$p: %{time_total} s, %{size_download} bytes" "$U/api/v1/$p"
		# the agent's CPU meanwhile (a sweep may add to it)
		echo ", agent CPU $(echo "$(cpu_of "$agent") - $c0" | bc) s"
	done
	echo "after: $(grep -E 'VmRSS|VmHWM' /proc/$agent/status | tr -s ' \t' ' ' | tr '\n' ' ')"
	exit 0
fi

hosts=${HOSTS:-2592}
bench_net 3 "$hosts" "$work/fattree3-$hosts.net"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
exec "$top/tests/lib/with-fabric.sh" bench_render "$work/fattree3-$hosts.net" \
	--sm "node$hosts" --osm-args "-s 0" --ibsim-args "$flags" --timeout 300 \
	-- "$top/tests/bench/render.sh" "$build"
