#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# snmpbulkwalk of the port table (IBWATCH-MIB::ibwPortTable) on the
# 3-level fat tree (2592 hosts, 14256 ports), through a real snmpd with
# ibwatchd attached as its AgentX subagent, while the agent sweeps
# (discovery and counters every 30 s): the walk's time and rows/s, three
# times, for max-repetitions 10 (snmpbulkwalk's default) and 50.
#   tests/bench/snmp.sh [BUILD_DIR]
# SNMP_BENCH_AGENT_ARGS: more ibwatchd arguments (--counter-full-speed:
# the sweeps unspread).
. "$(dirname "$0")/lib.sh"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	export MIBS="" MIBDIRS="" SNMP_PERSISTENT_DIR=$PWD/snmp
	mkdir -p snmp
	port=$((20000 + RANDOM % 20000))
	cat >snmpd.conf <<EOF
master agentx
agentXSocket $PWD/agentx.sock
rocommunity public 127.0.0.1
EOF
	snmpd -f -C -c snmpd.conf -Lf snmpd.log -p snmpd.pid "udp:127.0.0.1:$port" &
	snmpd_pid=$!
	LD_PRELOAD=$IBW_SIM_PRELOAD "$build/agent/ibwatchd" --no-state-file --no-http \
		--agentx "$PWD/agentx.sock" --discovery-interval 30 --counter-interval 30 ${SNMP_BENCH_AGENT_ARGS:-} \
		>agent.out 2>agent.log &
	agent=$!
	trap 'kill $agent $snmpd_pid 2>/dev/null' EXIT
	A=(-v2c -c public -t 10 -r 0 "127.0.0.1:$port")
	# Wait for the first counter sweep to be in (ibwCounterSweeps.0 >= 1).
	for _ in $(seq 1 600); do
		n=$(snmpget "${A[@]}" -Oqv .1.3.6.1.4.1.32473.1.1.16.0 2>/dev/null || true)
		[ -n "$n" ] && [ "$n" -ge 1 ] 2>/dev/null && break
		sleep 0.2
	done
	ports=$(snmpget "${A[@]}" -Oqv .1.3.6.1.4.1.32473.1.1.21.0)
	echo "fabric: $ports ports (and switch port 0 of each switch)"
	for reps in 10 50; do
		for run in 1 2 3; do
			t0=$(date +%s%N)
			snmpbulkwalk "${A[@]}" -Cr$reps -On -Oq .1.3.6.1.4.1.32473.1.3 >walk.txt
			t1=$(date +%s%N)
			objs=$(wc -l <walk.txt)
			rows=$(grep -c '^\.1\.3\.6\.1\.4\.1\.32473\.1\.3\.1\.6\.' walk.txt)
			ms=$(((t1 - t0) / 1000000))
			echo "max-repetitions $reps, run $run: $rows rows, $objs objects in $ms ms:" \
				"$((rows * 1000 / (ms > 0 ? ms : 1))) rows/s, $((objs * 1000 / (ms > 0 ? ms : 1))) objects/s"
		done
	done
	echo "agent RSS after: $(awk '/VmRSS/ { print $2, $3 }' /proc/$agent/status)"
	exit 0
fi

bench_net 3 2592 "$work/fattree3-2592.net"
exec "$top/tests/lib/with-fabric.sh" bench_snmp "$work/fattree3-2592.net" \
	--sm node2592 --osm-args "-s 0" --ibsim-args "$flags" --timeout 180 \
	-- "$top/tests/bench/snmp.sh" "$build"
