#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# ibwatchd as systemd runs it, on an 8-host fat tree (the SM on
# node0008), without systemd itself:
#  - two instances of the template unit ibwatchd@.service, their command
#    lines taken from the installed unit file (ExecStartPre and ExecStart,
#    %i replaced, /etc and /var/lib moved under ./root), side by side:
#    each its own config, HTTP port, state file and SNMP context under one
#    real snmpd, which a community per context reads (and the default
#    context has no IBWATCH-MIB rows); the Prometheus job docs/operations.md
#    shows for a dual-rail host, run by a real Prometheus on both;
#  - Type=notify: READY=1 and STOPPING=1 on $NOTIFY_SOCKET, a path for
#    one instance and an abstract name (@...) for the other, from a
#    binary that does not link libsystemd;
#  - the journal: with $JOURNAL_STREAM naming stderr, every line starts
#    with its priority (<3> a config error, <4> the warning that the
#    AgentX master is not there yet, <6> info, net-snmp's own lines
#    too); without it, the plain lines.
#
# umad2sim attaches every process to port 1 (the first port) of its
# SIM_HOST's CA, always called ibsim0, even when the net file gives the
# CA two ports: one host with two ports cannot be simulated. The two
# "ports" are therefore node0001's and node0002's, one fabric, as a
# dual-rail host would see them if both rails were cabled to it; the
# instances are named after them (node0001-1, node0002-1).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}" "${IBW_UNIT_DIR:?}"

on_fattree units 8

trap stop_started EXIT
export MIBS="" MIBDIRS=""
export SNMP_PERSISTENT_DIR=$PWD/snmp-persist
export SNMPCONFPATH=$PWD/snmp-conf # no /etc/snmp for the tools
mkdir -p "$SNMP_PERSISTENT_DIR" "$SNMPCONFPATH"
ROOT=.1.3.6.1.4.1.32473
unit=$IBW_UNIT_DIR/ibwatchd@.service

# unit_cmd KEY INSTANCE: the unit's KEY= command line for INSTANCE, one
# word a line: %i replaced, our ibwatchd for the installed one, and each
# absolute path moved under ./root.
unit_cmd() {
	python3 - "$unit" "$1" "$2" "$PWD/root" "$IBWATCHD" <<'PY'
import shlex, sys
unit, key, inst, root, exe = sys.argv[1:]
vals = [l.split("=", 1)[1] for l in open(unit).read().splitlines()
        if l.startswith(key + "=")]
if len(vals) != 1:
    sys.exit("%s= %d times in %s" % (key, len(vals), unit))
words = shlex.split(vals[0].replace("%i", inst))
if any("%" in w or "$" in w for w in words) or not words[0].endswith("/ibwatchd"):
    sys.exit("%s=: specifiers or variables this test does not know: %s" % (key, vals[0]))
print("\n".join([exe] + [root + w if w.startswith("/") else w for w in words[1:]]))
PY
}
# arg_of OPTION WORDS...: the word after OPTION
arg_of() { local o=$1; shift; while [ $# -gt 1 ]; do [ "$1" = "$o" ] && { echo "$2"; return; }; shift; done; }

IA=node0001-1 IB=node0002-1
mapfile -t preA < <(unit_cmd ExecStartPre $IA)
mapfile -t cmdA < <(unit_cmd ExecStart $IA)
mapfile -t cmdB < <(unit_cmd ExecStart $IB)
check "the template unit's command line, for $IA: ${cmdA[*]#$PWD/}" test ${#cmdA[@]} -gt 2
check "... ExecStartPre is ExecStart with --check-config" \
	test "${preA[*]}" = "${cmdA[*]} --check-config"
confA=$(arg_of -c "${cmdA[@]}") confB=$(arg_of -c "${cmdB[@]}")
stateA=$(arg_of --state-file "${cmdA[@]}") stateB=$(arg_of --state-file "${cmdB[@]}")
check "... each instance its own config ($confA, $confB)" \
	test -n "$confA" -a -n "$confB" -a "$confA" != "$confB"
check "... its own state file ($stateA, $stateB)" \
	test -n "$stateA" -a -n "$stateB" -a "$stateA" != "$stateB"
check "... and its own SNMP context (--snmp-context $(arg_of --snmp-context "${cmdA[@]}"))" \
	test "$(arg_of --snmp-context "${cmdA[@]}")" = $IA -a "$(arg_of --snmp-context "${cmdB[@]}")" = $IB
mkdir -p "$(dirname "$confA")" "$(dirname "$stateA")"
needed=$(readelf -d "$IBWATCHD" | grep NEEDED)
check "ibwatchd does not link libsystemd" bash -c '! grep -q libsystemd <<<"$1" && grep -q libibumad <<<"$1"' _ "$needed"

# snmpd: master agent on ./agentx.sock, SNMP on a loopback port; the
# community ctx-INSTANCE reads INSTANCE's context, public the default
# one (docs/mib.md, "Several instances on one host").
SOCK=$PWD/agentx.sock
snmp_port=$(free_port)
cat >snmpd.conf <<EOF
master agentx
agentXSocket $SOCK
agentXTimeout 5
view all included .1
rocommunity public 127.0.0.1
com2sec -Cn $IA sec-a 127.0.0.1 ctx-$IA
com2sec -Cn $IB sec-b 127.0.0.1 ctx-$IB
group rails v2c sec-a
group rails v2c sec-b
access rails "" v2c noauth prefix all none none
EOF

# Notify listeners: each datagram a line of OUT.
cat >dgram.py <<'EOF'
# dgram.py ADDR OUT: append each datagram received on the unix datagram
# socket ADDR (a path, or @name: abstract) to OUT, one a line.
import os, socket, sys
addr, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
if addr.startswith("@"):
    s.bind("\0" + addr[1:])
else:
    if os.path.exists(addr):
        os.unlink(addr)
    s.bind(addr)
with open(out, "a") as f:
    f.write("listening\n")
    f.flush()
    while True:
        f.write(s.recv(65536).decode(errors="replace").replace("\n", "\\n") + "\n")
        f.flush()
EOF
listen() { # ADDR OUT: a listener, in pids; waits until it listens
	python3 dgram.py "$@" &
	pids+=($!)
	for _ in $(seq 1 100); do grep -qx listening "$2" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
nsA=$PWD/notify-a.sock nsB=@ibw-units-$$-b
listen "$nsA" notify-a.txt && listen "$nsB" notify-b.txt || bad "the notify listeners do not start"

# The journal: a stderr file whose device and inode are in JOURNAL_STREAM.
stream_of() { stat -c '%d:%i' "$1"; }

# --check-config as ExecStartPre runs it: a broken config under the
# journal is err (<3>) line by line.
mapfile -t preX < <(unit_cmd ExecStartPre broken-1)
printf 'port = 1\ncounter-interval = often\nno-such-option = 1\n' >"$(arg_of -c "${preX[@]}")"
: >pre-broken.log
JOURNAL_STREAM=$(stream_of pre-broken.log) "${preX[@]}" >pre-broken.out 2>>pre-broken.log
rc=$?
check "ExecStartPre on a broken config: exit $rc, every line at priority err ($(head -c 200 pre-broken.log | tr '\n' '|'))" \
	bash -c '[ "$1" != 0 ] && [ "$(wc -l <pre-broken.log)" -ge 2 ] && ! grep -qv "^<3>" pre-broken.log &&
		grep -q "^<3>.*ibwatchd-broken-1.conf:2: counter-interval" pre-broken.log' _ $rc

# The two configs: CA and port, HTTP address; the rest is shared.
PA=$(free_port)
PB=$((PA + 1))
for i in A B; do
	conf=conf$i port=P$i
	cat >"${!conf}" <<EOF
# ibwatchd@ instance: the CA and port it watches from, its HTTP address
ca = ibsim0
port = 1
http = 127.0.0.1:${!port}
agentx = $SOCK
agentx-ping-interval = 1
discovery-interval = 2
counter-interval = 1
EOF
done
for i in A B; do
	cmd=cmd$i
	mapfile -t pre < <(unit_cmd ExecStartPre $(eval echo \$I$i))
	out=$("${pre[@]}" 2>&1)
	check "ExecStartPre of instance $i: $out" grep -q 'configuration OK' <<<"$out"
done

# Instance A under the journal, started before snmpd (it warns that
# there is no master yet); B with plain stderr.
: >a.log
NOTIFY_SOCKET=$nsA JOURNAL_STREAM=$(stream_of a.log) spawn node0001 "${cmdA[@]}" >a.out 2>>a.log &
pidA=$!
pids+=($pidA)
for _ in $(seq 1 100); do grep -q 'snmp: AgentX master .*: connect:' a.log && break; sleep 0.1; done
start_snmpd || bad "snmpd does not start"
NOTIFY_SOCKET=$nsB spawn node0002 "${cmdB[@]}" >b.out 2>b.log &
pidB=$!
pids+=($pidB)
for _ in $(seq 1 200); do grep -qx READY=1 notify-a.txt && grep -qx READY=1 notify-b.txt && break; sleep 0.1; done
check "READY=1 on the path socket (A: $(grep -v '^listening$' notify-a.txt | xargs))" grep -qx READY=1 notify-a.txt
check "READY=1 on the abstract socket $nsB (B: $(grep -v '^listening$' notify-b.txt | xargs))" grep -qx READY=1 notify-b.txt

# HTTP: each on its port, each tracing from its own port. Port GUIDs
# by ibstat on the node.
guidA=$(at node0001 ibstat -p) guidB=$(at node0002 ibstat -p)
target=$(at node0005 ibstat -p)
src() { curl -s -m 10 "http://127.0.0.1:$1/api/v1/trace?target=$target" | jq -r '.hops[0].port_guid // empty'; }
for _ in $(seq 1 100); do [ -n "$(src $PA)" ] && [ -n "$(src $PB)" ] && break; sleep 0.1; done
check "HTTP: A on :$PA traces from node0001's port ($(src $PA) = $guidA)" test "$(src $PA)" = "$guidA"
check "... B on :$PB from node0002's ($(src $PB) = $guidB)" test "$(src $PB)" = "$guidB"

# SNMP: ibwAgentLocalPortGuid.0 in each context is that instance's port;
# the default context has no IBWATCH-MIB.
sguid() { # COMMUNITY: the GUID as 0x%016x, or snmpget's complaint
	snmpget -v2c -c "$1" -t 2 -r 1 -Oqv "127.0.0.1:$snmp_port" "$ROOT.1.1.4.0" 2>&1 |
		python3 -c 'import sys
t = sys.stdin.read().strip().strip("\"").split()
print("0x" + "".join(t).lower() if len(t) == 8 else " ".join(t))'
}
for _ in $(seq 1 100); do
	[ "$(sguid ctx-$IA)" = "$guidA" ] && [ "$(sguid ctx-$IB)" = "$guidB" ] && break
	sleep 0.1
done
check "SNMP: context $IA has A's rows (ibwAgentLocalPortGuid $(sguid ctx-$IA))" test "$(sguid ctx-$IA)" = "$guidA"
check "... context $IB has B's ($(sguid ctx-$IB))" test "$(sguid ctx-$IB)" = "$guidB"
check "... the default context none ($(sguid public))" bash -c '[[ "$1" == *"No Such Object"* ]]' _ "$(sguid public)"
walked() { snmpwalk -v2c -c "ctx-$1" -t 2 -r 1 -On "127.0.0.1:$snmp_port" "$ROOT.1" 2>/dev/null | grep -c "^$ROOT\.1\."; }
check "... and the whole module in each: $(walked $IA) and $(walked $IB) objects" \
	test "$(walked $IA)" -gt 100 -a "$(walked $IB)" -gt 100

# The journal: A's lines carry their priorities, B's are plain.
check "journal: A's info lines are <6> (<6>main: attached to ibsim0 port 1 ...)" \
	grep -q '^<6>main: attached to ibsim0 port 1' a.log
check "... the warning without a master is <4>" grep -q '^<4>snmp: AgentX master .*: connect:' a.log
check "... and net-snmp's own lines carry theirs (<6>)" grep -q '^<6>snmp: net-snmp: ' a.log
check "... every line has one, none the plain prefix" bash -c '! grep -qv "^<[0-7]>[a-z]*: " a.log'
check "without the journal, plain lines (B)" grep -q '^ibwatchd\[info\] main: attached to ibsim0 port 1' b.log

# The dual-rail Prometheus job of docs/operations.md, as written there
# but for the two addresses and 1 s intervals, on both instances.
python3 - "$top/docs/operations.md" "127.0.0.1:$PA" "127.0.0.1:$PB" >prometheus.yml <<'PY'
import re, sys
doc, a, b = sys.argv[1:]
m = re.search(r"<!-- dual-rail job -->\s*```yaml\n(.*?)```", open(doc).read(), re.S)
if not m:
    sys.exit("no dual-rail job in " + doc)
y = m.group(1)
targets = re.findall(r"targets: \['([^']+)'\]", y)
if len(targets) != 2:
    sys.exit("the job has %d targets" % len(targets))
y = y.replace(targets[0], a).replace(targets[1], b)
y = re.sub(r"(scrape_interval|scrape_timeout): \S+", r"\1: 1s", y)
print("global:\n  evaluation_interval: 1s\n" + y)
PY
check "docs/operations.md has the dual-rail Prometheus job" test -s prometheus.yml
for try in 1 2 3; do
	pp=$(free_port)
	prometheus --config.file=prometheus.yml --storage.tsdb.path="$PWD/tsdb" \
		--web.listen-address="127.0.0.1:$pp" >prometheus.log 2>&1 &
	prom=$!
	pids+=("$prom")
	for _ in $(seq 1 100); do
		curl -s "http://127.0.0.1:$pp/-/ready" | grep -q Ready && break 2
		kill -0 "$prom" 2>/dev/null || break
		sleep 0.1
	done
done
pq() { curl -s "http://127.0.0.1:$pp/api/v1/query" --data-urlencode "query=$1" |
	jq -c '[.data.result[] | [.metric.rail, .value[1]]] | sort'; }
q='max by (rail) (ibwatch_local_port_active)'
for _ in $(seq 1 100); do [ "$(pq "$q" | jq length)" = 2 ] && break; sleep 0.2; done
check "Prometheus scrapes both with the documented job: $q = $(pq "$q")" \
	test "$(pq "$q" | jq -c '[.[][1]]')" = '["1","1"]'
check "... each under its own rail label" test "$(pq 'up{job="ibwatch"}' | jq -c '[.[][0]] | unique | length')" = 2

# SIGTERM, as systemctl stop sends it: exit 0, STOPPING=1, each state
# file where its unit says.
rm -f "$stateA" "$stateB"
stopped_clean "$pidA"
rcA=$?
stopped_clean "$pidB"
rcB=$?
check "both instances stop on SIGTERM with exit 0 ($rcA, $rcB)" test "$rcA$rcB" = 00
for _ in $(seq 1 50); do grep -qx STOPPING=1 notify-b.txt && break; sleep 0.1; done
check "STOPPING=1 from both (A: $(grep -v '^listening$' notify-a.txt | xargs); B: $(grep -v '^listening$' notify-b.txt | xargs))" \
	bash -c 'grep -qx STOPPING=1 notify-a.txt && grep -qx STOPPING=1 notify-b.txt'
check "each wrote its own state file (${stateA#$PWD/}, ${stateB#$PWD/})" \
	bash -c '[ -s "$1" ] && [ -s "$2" ]' _ "$stateA" "$stateB"
check "... and none the default one" test ! -e "$(dirname "$stateA")/counters.state"

finish
