# SPDX-License-Identifier: BSD-2-Clause
# Sourced by the shell tests: "ok"/"not ok" lines and the closing count,
# "N passed, N failed", which ctest's log and CI read.
fails=0 passes=0
tap_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ok() { passes=$((passes + 1)); echo "ok - $*"; }
bad() { fails=$((fails + 1)); echo "not ok - $*"; }
# check "what it shows" command args...: ok when the command succeeds.
# Returns the command's status, so `check ... || show_why` works. A
# condition of several commands goes into one function or `bash -c`:
# in `check "x" test a && grep b`, the grep is no part of the check.
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; return 1; fi; }
# the closing line; the exit status says whether all passed. Under the
# sanitizer build a report lands in the stderr of the process that had
# it, not in the test's exit status: whatever a process the test started
# wrote its stderr or output to (daemons' agent-*.log, d.err, CLI runs'
# *.err, captured output in *.out or *.txt) is in the scratch directory
# and its subdirectories, and any report there fails the test.
finish() {
	local f
	while IFS= read -r -d '' f; do
		bad "sanitizer report in $f: $(grep -m1 -E 'Sanitizer|runtime error:' "$f")"
	done < <(find . \( -name '*.log' -o -name '*.out' -o -name '*.err' -o -name '*.txt' \) -type f \
		-exec grep -l -Z -E 'ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:' {} + 2>/dev/null)
	echo "$passes passed, $fails failed"
	[ "$fails" = 0 ]
}
# jq -e fails when it produced no result at all, as jq 1.7 does (exit
# 4). jq 1.6 exits 0 there, so `check "..." jq -e COND file.json` passed
# whenever curl had written nothing to file.json: a test that could not
# fail when the agent did not answer.
jq() {
	local a e=0 out rc
	for a in "$@"; do
		case $a in
		--exit-status) e=1 ;;
		--*) ;;
		-*e*) e=1 ;;
		esac
	done
	[ $e = 1 ] || { command jq "$@"; return; }
	out=$(command jq "$@")
	rc=$?
	[ -n "$out" ] || return 4
	printf '%s\n' "$out"
	return $rc
}
# jqe FILTER...: jq -e on standard input, failing when the input is
# empty (jq 1.6 exits 0 on no input: a wait loop on `curl | jq -e` would
# stop at once while the daemon is not listening yet).
jqe() { local in; in=$(cat); [ -n "$in" ] && jq -e "$@" <<<"$in" >/dev/null 2>&1; }
# spawn NODE CMD...: run CMD on the simulated NODE, in the background
# only (`spawn node0002 cmd &`): the exec makes $! the command's own PID,
# so the test stops exactly that process.
spawn() { local h=$1; shift; SIM_HOST=$h LD_PRELOAD=$IBW_SIM_PRELOAD exec "$@"; }
# at NODE CMD...: run CMD on the simulated NODE, in the foreground.
at() { local h=$1; shift; SIM_HOST=$h LD_PRELOAD=$IBW_SIM_PRELOAD "$@"; }
# sim 'COMMAND': a command on the fabric's ibsim console, reply dropped.
sim() { "$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" "$1" >/dev/null; }
# free_port: a loopback port that nothing has bound, TCP or UDP, taken at
# random below the kernel's ephemeral range (ip_local_port_range: 32768
# and up on Debian), so no outgoing connection of this machine can be
# using it or take it later (a connect to a free ephemeral port on
# 127.0.0.1 can even connect to itself). Another test may still take it
# between now and its use.
free_port() {
	python3 -c '
import random, socket
try:
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError, IndexError):
    low = 32768
top = low - 1 if low > 21000 else 65535
bottom = 20000 if low > 21000 else 61000
for _ in range(200):
    p = random.randint(bottom, top)
    try:
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
            with socket.socket(socket.AF_INET, kind) as s:
                s.bind(("127.0.0.1", p))
    except OSError:
        continue
    print(p)
    break
else:
    raise SystemExit("free_port: no free port in 200 tries")
'
}
# snmptrapd on a free loopback port, logging every notification it gets
# to traps.log, one a line; sets trap_port and adds its PID to pids.
# Up once its UDP port is bound and it said so; another port is tried
# (5 at most) when it exits because the port was taken.
start_snmptrapd() {
	local tp
	trap_port=""
	echo "disableAuthorization yes" >snmptrapd.conf
	for _ in 1 2 3 4 5; do
		trap_port=$(free_port)
		snmptrapd -f -C -c snmptrapd.conf -On -Lf traps.log -p snmptrapd.pid \
			"udp:127.0.0.1:$trap_port" >/dev/null 2>&1 &
		tp=$!
		for _ in $(seq 1 100); do
			kill -0 $tp 2>/dev/null || break
			ss -Hlun "sport = :$trap_port" | grep -q . && grep -q 'NET-SNMP version' traps.log 2>/dev/null && break
			sleep 0.1
		done
		kill -0 $tp 2>/dev/null && { pids+=($tp); return 0; }
	done
	return 1
}
# start_snmpd [LOG]: snmpd, the master agent, with ./snmpd.conf, on
# loopback UDP port $snmp_port (the caller's), logging to LOG
# (snmpd.log); sets snmpd_pid and adds it to pids. Up once it answers an
# snmpget; 1 when it exits or stays silent for 10 s.
start_snmpd() {
	local out0
	out0=$(stat -c %s snmpd.out 2>/dev/null || echo 0)
	snmpd -f -C -c snmpd.conf -Lf "${1:-snmpd.log}" -p snmpd.pid -I -ifTable,ipAddressTable,ipv6 \
		"udp:127.0.0.1:$snmp_port" >>snmpd.out 2>&1 &
	snmpd_pid=$!
	pids+=("$snmpd_pid")
	for _ in $(seq 1 100); do
		snmpget -v2c -c public -t 0.2 -r 0 "127.0.0.1:$snmp_port" .1.3.6.1.2.1.1.3.0 >/dev/null 2>&1 && return 0
		kill -0 "$snmpd_pid" 2>/dev/null || break
		sleep 0.1
	done
	# why not, in the test's output: this snmpd's own last words; one
	# that still runs silent is stopped, so that it holds no socket
	kill "$snmpd_pid" 2>/dev/null && wait "$snmpd_pid" 2>/dev/null
	echo "# snmpd on udp:127.0.0.1:$snmp_port did not answer:"
	{ tail -c +$((out0 + 1)) snmpd.out | tail -n 5; tail -n 5 "${1:-snmpd.log}"; } 2>/dev/null | sed 's/^/#   /'
	return 1
}
# snmp_stack: snmptrapd, then snmpd as the AgentX master on $PWD/agentx.sock
# sending its traps there, no MIBs loaded: sets ROOT (IBWATCH-MIB's
# arc), SOCK, snmp_port, trap_port and A (snmpget/snmpwalk's arguments);
# 1 when snmpd does not start.
snmp_stack() {
	ROOT=.1.3.6.1.4.1.32473
	export MIBS="" MIBDIRS=""
	export SNMP_PERSISTENT_DIR=$PWD/snmp-persist SNMPCONFPATH=$PWD/snmp-conf
	mkdir -p "$SNMP_PERSISTENT_DIR" "$SNMPCONFPATH"
	start_snmptrapd
	SOCK=$PWD/agentx.sock
	snmp_port=$(free_port)
	printf '%s\n' "master agentx" "agentXSocket $SOCK" "agentXTimeout 5" \
		"rocommunity public 127.0.0.1" "trap2sink 127.0.0.1:$trap_port public" >snmpd.conf
	A=(-v2c -c public -t 2 -r 1 "127.0.0.1:$snmp_port")
	start_snmpd
}
# port_row GUID PORT: the port's IBWATCH-MIB row (ibwPortIndex), read
# from ibwPortLookupIndex by number (no MIB loaded), with snmp_stack's
# A and ROOT; empty when snmpd has none.
port_row() {
	local codes
	codes=$(printf '%s' "$1" | od -An -tu1 | xargs | tr ' ' '.')
	snmpget "${A[@]}" -Oqv "$ROOT.1.9.1.3.$codes.$2" 2>/dev/null | grep -x '[0-9][0-9]*'
}
# lid_of NODE: NODE's LID (a CA's: the port its tools use), from its own
# PortInfo by a directed-route smpquery run there.
lid_of() { at "$1" smpquery -D portinfo 0 | sed -n 's/^Lid:\.*//p'; }
# Processes a test starts go into pids; `trap stop_started EXIT` stops
# exactly those when the test ends.
pids=()
stop_started() { [ ${#pids[@]} -gt 0 ] && stop "${pids[@]}"; wait 2>/dev/null || true; }
# metrics_of URL [CURL OPTIONS]: URL's /metrics with the fabric label
# (docs/api.md, "The fabric label"; tests/integration/fabrics.sh checks
# it) taken out, so that series read as these tests write them:
# `name{labels} value`, `name value`.
metrics_of() {
	local u=$1
	shift
	curl -s -m 20 "$@" "$u/metrics" | sed -E 's/\{fabric="[^"]*"\}//; s/\{fabric="[^"]*",/{/'
}
# start_agent NODE ARGS...: ibwatchd on NODE serving HTTP on a free
# loopback port, with ARGS; up to five ports are tried. Sets P (the
# port) and agent (its PID, also added to pids); it logs to agent-$P.log
# and agent-$P.out. Returns 1 when it never listened. With agent_port
# set, on that port (an agent started again where its scrapers look),
# the logs of the one before kept as agent-$P.log.1 and .out.1.
start_agent() {
	local node=$1 try; shift
	for try in 1 2 3 4 5; do
		P=${agent_port:-$(free_port)}
		if [ -n "${agent_port:-}" ]; then
			[ "$try" -gt 1 ] && sleep 1
			[ -e "agent-$P.log" ] && mv -f "agent-$P.log" "agent-$P.log.1"
			[ -e "agent-$P.out" ] && mv -f "agent-$P.out" "agent-$P.out.1"
		fi
		spawn "$node" "$IBWATCHD" --http "127.0.0.1:$P" "$@" \
			>"agent-$P.out" 2>"agent-$P.log" &
		agent=$!
		# An agent that runs is starting, however slowly (TLS under
		# TSan takes seconds); one that exited (a port taken) is
		# tried again. 60 s at most.
		for _ in $(seq 1 600); do
			grep -q "listening on 127.0.0.1:$P" "agent-$P.log" && { pids+=("$agent"); return 0; }
			kill -0 "$agent" 2>/dev/null || break
			sleep 0.1
		done
		# gone before the next try, so that it holds no port of the
		# caller's (a fixed --http address) when that one starts
		kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	done
	return 1
}
# on_fattree NAME HOSTS [with-fabric.sh options]: unless the test already
# runs on a fabric, run it again on a fresh 2-level fat tree of HOSTS
# hosts, the SM on the last one, and end with its status.
on_fattree() {
	local name=$1 hosts=$2 work=${IBW_TEST_WORK:-$PWD/test-work}
	shift 2
	[ -n "${IBW_SIM_DIR:-}" ] && return 0
	mkdir -p "$work"
	"$IBW_FATTREE" --levels 2 --hosts "$hosts" >"$work/$name-$hosts.net" || exit 1
	exec "$tap_lib/with-fabric.sh" "$name" "$work/$name-$hosts.net" \
		--sm "$(printf 'node%04d' "$hosts")" "$@" -- "$0"
}
# counter_sweeps: the agent at $U's counter sweeps so far (0 if it does
# not answer); wait_counter_sweeps N: until it has done N more, 30 s at
# most (false then).
counter_sweeps() { curl -s -m 5 "$U/api/v1/status" | jq -r '.sweeps.counter_sweeps // 0'; }
wait_counter_sweeps() {
	local want=$(($(counter_sweeps) + $1)) i
	for ((i = 0; i < 300; i++)); do
		[ "$(counter_sweeps)" -ge "$want" ] && return 0
		sleep 0.1
	done
	return 1
}
# wakeups_over N: while the agent at $U publishes N more snapshots,
# asked for its status every 0.3 s (100 times at most), how often its
# loop woke (engine.loop_wakeups); prints "WAKEUPS SNAPSHOTS REQUESTS
# MADS": the snapshots published, our requests, the MADs it sent.
wakeups_over() {
	local a b r=0
	a=$(curl -s -m 5 "$U/api/v1/status")
	for _ in $(seq 1 100); do
		b=$(curl -s -m 5 "$U/api/v1/status")
		r=$((r + 1))
		jq -e --argjson q "$(jq .snapshot_seq <<<"$a")" \
			".snapshot_seq >= \$q + $1" <<<"$b" >/dev/null && break
		sleep 0.3
	done
	jq -r --argjson a "$a" --arg r "$r" \
		'"\(.engine.loop_wakeups - $a.engine.loop_wakeups) \(.snapshot_seq - $a.snapshot_seq) \($r) \(.engine.sent - $a.engine.sent)"' <<<"$b"
}
# idle_loop WAKEUPS SNAPSHOTS REQUESTS MADS (wakeups_over's line): true
# when 20 snapshots or more were published and the wakeups are what
# they, our requests and the MADs sent account for. A timer wakeup of
# an idle agent publishes (the ping interval's timer, a look for a lost
# port) or is a timer that fires no more often than those (the counter
# timer): 2 a publish at most. An HTTP request wakes it for the
# connection, the request, the answer and the close: 4 (3.4 measured).
# A MAD sent wakes it for its answer or its timeout report and for its
# deadline: 2. 3, 6 and 3 leave room, while a loop that spins on a
# ready fd or a zero timer wakes thousands of times in the seconds
# twenty snapshots take.
idle_loop() { [ "$2" -ge 20 ] && [ "$1" -le $((3 * $2 + 6 * $3 + 3 * $4)) ]; }
# stop PID...: SIGTERM, then SIGKILL whatever is still there after 5 s
# (under the simulator a process can hang in libumad2sim's own exit
# handler after ibwatchd itself has finished). A zombie counts as gone.
# Returns 1 when it had to SIGKILL: a test that claims a clean stop
# checks this (and the exit status, with stopped_clean).
stop() {
	local p i alive
	kill -TERM "$@" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		alive=0
		for p in "$@"; do
			[ -n "$(tr -d '\0' 2>/dev/null <"/proc/$p/cmdline")" ] && alive=1
		done
		[ $alive = 0 ] && return 0
		sleep 0.1
	done
	kill -KILL "$@" 2>/dev/null
	echo "# stop: SIGKILL after 5 s for $*" >&2
	return 1
}
# stopped_clean PID: stop PID, a child of this shell, and wait for it:
# true only when SIGTERM alone ended it and it exited 0 (an exit after a
# sanitizer report is not 0). Also takes PID out of pids.
stopped_clean() {
	local rc p keep=()
	for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	pids=("${keep[@]}")
	stop "$1" || { wait "$1" 2>/dev/null; return 1; }
	wait "$1"
	rc=$?
	[ $rc = 0 ] || echo "# pid $1 exited with status $rc" >&2
	return $rc
}
