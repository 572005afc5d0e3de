#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The AgentX session under masters that do not answer (issue 20, 3):
# the loop keeps probing while the subagent tries again with a backoff,
# /api/v1/status and /metrics say what it does, and a real snmpd that
# then starts at that address gets our MIB. (1) a master that accepts
# TCP and never answers; (2) one whose accept queue is full, so SYNs go
# unanswered; (3) snmpd restarted: the subagent reconnects.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree agentx 4

trap stop_started EXIT

ROOT=.1.3.6.1.4.1.32473
export MIBS="" MIBDIRS=""
export SNMP_PERSISTENT_DIR=$PWD/snmp-persist
export SNMPCONFPATH=$PWD/snmp-conf
mkdir -p "$SNMP_PERSISTENT_DIR" "$SNMPCONFPATH"
U() { echo "http://127.0.0.1:$P$1"; }
status() { curl -s -m 5 "$(U /api/v1/status)"; }

# mute PORT MODE: a TCP listener on 127.0.0.1:PORT that reads nothing.
# MODE accept: it accepts every connection and keeps it; full: it
# accepts none and fills its own accept queue (backlog 0), so the
# kernel drops further SYNs. Sets mute_pid.
mute() {
	python3 -c '
import socket, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", port))
l.listen(0)
held = []
if mode == "full":
    for _ in range(3):
        c = socket.socket()
        c.setblocking(False)
        c.connect_ex(("127.0.0.1", port))
        held.append(c)
print("ready", flush=True)
while True:
    if mode == "accept":
        held.append(l.accept()[0])
    else:
        time.sleep(3600)
' "$1" "$2" >"mute-$1.out" 2>&1 &
	mute_pid=$!
	pids+=("$mute_pid")
	for _ in $(seq 1 50); do
		grep -q ready "mute-$1.out" && return 0
		sleep 0.1
	done
	return 1
}
stop_pid() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# snmpd_at PORT: snmpd with its AgentX master socket on TCP PORT.
snmpd_at() {
	cat >snmpd.conf <<CONF
master agentx
agentXSocket tcp:127.0.0.1:$1
rocommunity public 127.0.0.1
CONF
	start_snmpd "snmpd-$1.log"
}
walk_ok() {
	snmpwalk -v2c -c public -t 2 -r 1 -On "127.0.0.1:$snmp_port" "$ROOT" 2>/dev/null | grep -q "^$ROOT\."
}
# until_status FILTER: /api/v1/status passes the jq FILTER (60 s at most).
until_status() {
	for _ in $(seq 1 200); do
		status >st.json
		jq -e "$1" st.json >/dev/null 2>&1 && return 0
		sleep 0.3
	done
	return 1
}

# run_case PORT MODE WHAT: an agent whose master at PORT does not answer
# (MODE, as mute's), then a real snmpd there.
run_case() {
	local port=$1 mode=$2 what=$3 a0 s0
	check "$what: a listener that does not answer" mute "$port" "$mode"
	start_agent node0001 --no-state-file --agentx "tcp:127.0.0.1:$port" \
		--agentx-timeout 300 --agentx-ping-interval 2 \
		--discovery-interval 3600 --counter-interval 1 ||
		{ bad "$what: the agent does not start"; return 1; }
	check "$what: /api/v1/status says the subagent is not connected and why, after 3 attempts" \
		until_status '.agentx.attempts >= 3 and (.agentx.state == "connecting" or .agentx.state == "waiting") and (.agentx.last_error | type == "string") and .agentx.connects == 0'
	a0=$(jq .agentx.attempts st.json)
	s0=$(jq '.sweeps.counter_sweeps + .engine.loop_wakeups' st.json)
	check "$what: counter sweeps and the loop go on, and the attempts keep coming" \
		until_status ".sweeps.counter_sweeps + .engine.loop_wakeups > $s0 + 2 and .agentx.attempts > $a0"
	check "$what: a waiting subagent names its next attempt" \
		until_status '.agentx.state == "waiting" and (.agentx.next_attempt | type == "string")'
	check "$what: /metrics says not connected" \
		bash -c "curl -s -m 5 '$(U /metrics)' | grep -qxE 'ibwatch_agentx_connected(\\{fabric=\"[^\"]*\"\\})? 0'"
	stop_pid "$mute_pid"
	snmp_port=$(free_port)
	check "$what: snmpd starts at that address" snmpd_at "$port"
	check "$what: the subagent connects to it" until_status '.agentx.state == "connected" and .agentx.connects == 1 and .agentx.attempts == 0'
	check "$what: snmpwalk sees IBWATCH-MIB" walk_ok
	check "$what: /metrics says connected" \
		bash -c "curl -s -m 5 '$(U /metrics)' | grep -qxE 'ibwatch_agentx_connected(\\{fabric=\"[^\"]*\"\\})? 1'"
}

# 1. accepts, never answers: each Open times out (300 ms)
port1=$(free_port)
run_case "$port1" accept "accepting master"
stop_pid "$snmpd_pid"
stop_pid "$agent"

# 2. accept queue full: each connect times out (300 ms)
port2=$(free_port)
while [ "$port2" = "$port1" ]; do port2=$(free_port); done
run_case "$port2" full "SYN-dropping master"

# 3. snmpd restarted under the second agent: a reconnect
stop_pid "$snmpd_pid"
check "restart: the subagent notices the master is gone" \
	until_status '.agentx.state != "connected" and .agentx.last_error == "the session was lost"'
check "restart: snmpd starts again" snmpd_at "$port2"
check "restart: the subagent is back, one reconnect counted" \
	until_status '.agentx.state == "connected" and .agentx.reconnects == 1 and .agentx.connects == 2'
check "restart: snmpwalk sees IBWATCH-MIB again" walk_ok
check "restart: /metrics counts the reconnect" \
	bash -c "curl -s -m 5 '$(U /metrics)' | grep -qxE 'ibwatch_agentx_reconnects_total(\\{fabric=\"[^\"]*\"\\})? 1'"

finish
