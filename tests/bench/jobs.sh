#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# What the job view costs (docs/jobs.md): ibwatchd with everything it
# does on the 3-level fat tree (2592 hosts, 14256 ports, the route census
# on), a jobs directory holding one of the job sets of SETS, each
# "COUNTxHOSTS" (COUNT jobs of HOSTS consecutive hosts; 1x2592 is one job
# of every host, capped at 65,536 host pairs). For each set, ROUNDS
# times: after a new snapshot, GET /api/v1/jobs twice: the first builds
# the snapshot's job view and renders it, the second renders it only.
# Reported: the medians of both and their difference (the build, which
# is also what the first /metrics scrape or link health change after a
# snapshot pays), and the agent's RSS. Each job's census walk is kept
# while the census stands (core/jobroutes.h), so these builds take the
# walks made when the jobs appeared; route_walks (made, reused) go to
# stderr.
#   tests/bench/jobs.sh [BUILD_DIR]
# Environment: SETS ("648x4 40x64 10x256 1x2592"), ROUNDS (5).
. "$(dirname "$0")/lib.sh"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	rounds=${ROUNDS:-5}
	median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
	status() { curl -s -m 30 "http://127.0.0.1:$port/api/v1/status"; }
	jobs_dir=$PWD/jobs
	mkdir -p "$jobs_dir"
	rm -f "$jobs_dir"/*
	port=$((20000 + RANDOM % 20000))
	SIM_HOST=node0001 LD_PRELOAD=$IBW_SIM_PRELOAD "$build/agent/ibwatchd" --no-state-file \
		--no-snmp --http "127.0.0.1:$port" --jobs-dir "$jobs_dir" >agent.out 2>agent.log &
	agent=$!
	trap 'kill $agent 2>/dev/null' EXIT
	for ((i = 0; i < 600; i++)); do
		curl -s -m 30 "http://127.0.0.1:$port/api/v1/routes" 2>/dev/null |
			jq -e '.summary.pairs > 0' >/dev/null 2>&1 && break
		sleep 0.5
	done
	printf '| jobs x hosts | host pairs | build + render | render | build | agent RSS |\n'
	printf '|---|---:|---:|---:|---:|---:|\n'
	for set in ${SETS:-648x4 40x64 10x256 1x2592}; do
		n=${set%x*} h=${set#*x}
		rm -f "$jobs_dir"/*
		for ((j = 0; j < n; j++)); do
			printf 'job_id=%d\nuser=bench\npartition=p\nnodes=node[%04d-%04d]\n' \
				$((1000 + j)) $((j * h + 1)) $((j * h + h)) >"$jobs_dir/.$((1000 + j))"
			mv "$jobs_dir/.$((1000 + j))" "$jobs_dir/$((1000 + j))"
		done
		for ((i = 0; i < 100; i++)); do
			[ "$(curl -s -m 30 "http://127.0.0.1:$port/api/v1/jobs" | jq '.jobs | length')" = "$n" ] && break
			sleep 0.2
		done
		: >"jobs-$set.txt"
		tries=0
		for ((r = 0; r < rounds; r++)); do
			seq0=$(status | jq .snapshot_seq)
			for ((i = 0; i < 100; i++)); do
				s1=$(status | jq .snapshot_seq)
				[ "$s1" != "$seq0" ] && break
				sleep 0.05
			done
			a=$(curl -s -m 60 -o j1.json -w '%{time_total}' "http://127.0.0.1:$port/api/v1/jobs")
			b=$(curl -s -m 60 -o j2.json -w '%{time_total}' "http://127.0.0.1:$port/api/v1/jobs")
			# the same snapshot all along, or the pair does not count
			# (at most 3 times as many tries)
			tries=$((${tries:-0} + 1))
			if [ "$(status | jq .snapshot_seq)" != "$s1" ] && [ "$tries" -lt $((3 * rounds)) ]; then
				r=$((r - 1))
				continue
			fi
			echo "$a $b" >>"jobs-$set.txt"
		done
		pairs=$(jq '[.jobs[].links.pairs] | add' j1.json)
		echo "# $set: route_walks $(jq -c .route_walks j2.json)" >&2
		rss=$(awk '/^VmRSS/ { print $2 / 1024 }' "/proc/$agent/status")
		ab=$(awk '{ print $1 * 1000 }' "jobs-$set.txt" | median)
		bb=$(awk '{ print $2 * 1000 }' "jobs-$set.txt" | median)
		printf '| %s x %s | %s | %.1f ms | %.1f ms | %.1f ms | %.0f MB |\n' "$n" "$h" "$pairs" \
			"$ab" "$bb" "$(echo "$ab - $bb" | bc -l)" "$rss"
	done
	exit 0
fi

bench_net 3 2592 "$work/fattree3-2592.net"
echo "# ibwatchd on node0001 of the 3-level tree of 2592 hosts, $(date -u '+%F %H:%M UTC')"
exec "$top/tests/lib/with-fabric.sh" bench_jobs "$work/fattree3-2592.net" \
	--sm node2592 --osm-args "-s 0" --ibsim-args "$flags" --timeout 300 \
	-- "$top/tests/bench/jobs.sh" "$build"
