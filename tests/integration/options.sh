#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Options, signals and service integration no other test exercises, on
# an 8-host fat tree (14 nodes: 8 hosts, 2 leaves, 4 spines; the SM on
# node0008):
#  - --timeout-ms, --max-inflight, --max-per-dest, --scope and
#    --ping-capmask, each on one `--once` cycle whose JSON shows it
#    (slow answers from the kernel model's latency, in that run only);
#  - --ping-window, --node-name-map and its reload on SIGHUP (a broken
#    map refused, the old one kept), --reset-counters (errors cleared on
#    the port by the agent after folding them in, data leaving them),
#    sd_notify readiness and SIGINT, on a running agent;
#  - --log-target syslog (a private /dev/log in a mount namespace) and
#    "cannot become root again" (securebits that keep the capabilities
#    across setuid), which need root.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree options 8

trap stop_started EXIT

# jq -e without printing the result
jt() { jq -e "$@" >/dev/null; }
# once NAME ARGS...: ibwatchd --once on node0001, JSON in NAME.json,
# stderr in NAME.log; its exit status in $rc.
once() {
	local n=$1; shift
	at node0001 "$IBWATCHD" --once --full --no-state-file "$@" >"$n.json" 2>"$n.log"
	rc=$?
}
# per type: how many ports have counters, {"ca": N, "switch": N}
counted() {
	jq -c '[.nodes[] | .type as $t | .ports[] | select(.counters != null) | $t] |
		group_by(.) | map({(.[0]): length}) | add // {}' "$1"
}

# 1. --timeout-ms. Directed-route SMPs take 2 x 20 ms per hop here, so
# the hosts on the other leaf (4 hops) answer in 160 ms: all 14 nodes
# within 1000 ms, not even the leaf (40 ms) within 10 ms. (The default,
# 100 ms, would find the 9 nodes within 2 hops.)
IBW_KM_HOP_US=20000 once t1000 --no-ping --timeout-ms 1000
check "--timeout-ms 1000 with 160 ms answers: all 14 nodes, no timeout (exit $rc)" \
	bash -c '[ "$1" = 0 ] && jq -e "(.nodes | length) == 14 and .status.sweeps.discovery.timeouts == 0" t1000.json >/dev/null' _ $rc
IBW_KM_HOP_US=20000 once t10 --no-ping --timeout-ms 10
check "--timeout-ms 10 with 40 ms answers: the local node only, exit 1 (exit $rc, $(jq -c '[(.nodes | length), .status.sweeps.discovery.timeouts]' t10.json))" \
	bash -c '[ "$1" = 1 ] && jq -e "(.nodes | length) == 1 and .status.sweeps.discovery.timeouts >= 1" t10.json >/dev/null &&
		grep -q "the local port is active but nothing beyond it answered" t10.log' _ $rc

# 2. --max-inflight: the window's high water mark is the limit. MADs
# waited in the queue, so the window was full at some point: exactly 3.
# (Without the limit, the default 128, the same run has 60 or so out.)
# Tries that waited long leave the window (waits), so in flight in all
# may be more on a slow machine, never more than window and waits.
once mi3 --no-ping --max-inflight 3
check "--max-inflight 3: at most 3 MADs in the window, and 3 were ($(jq -c '.status.engine | [.window, .window_high_water, .inflight_high_water, .waiting_high_water]' mi3.json))" \
	jt '.status.engine | .window == 3 and .window_high_water == 3 and .queued_high_water > 3 and
		.inflight_high_water <= 3 + .waiting_high_water' mi3.json
check "... and the fabric was found ($(jq '.nodes | length' mi3.json) nodes)" jt '(.nodes | length) == 14' mi3.json
once mi64 --no-ping
check "... with the default, more than 3 ($(jq .status.engine.window_high_water mi64.json))" \
	jt '.status.engine.window_high_water > 3 and .status.engine.window_high_water <= 128' mi64.json

# 3. --max-per-dest: each PMA takes 200 ms per query here and serves one
# at a time, so every node has reads waiting; with N per destination at
# most 14 x N are in flight, and that many are once the 14 ClassPortInfo
# answers are in (each host then asks for PortCounters and the extended
# ones, each switch for its 8 ports). Tries of 2 s: N x 200 ms fit.
for n in 1 2; do
	IBW_KM_SVC_PMA_US=200000 once pd$n --no-ping --timeout-ms 2000 --max-per-dest $n
	check "--max-per-dest $n: 14 nodes x $n in flight at most, and that many were ($(jq .status.engine.inflight_high_water pd$n.json))" \
		jt --argjson n $n '.status.engine.inflight_high_water == 14 * $n and .status.engine.timeouts == 0 and (.nodes | length) == 14' pd$n.json
done

# 4. --scope: whose counters are read (48 switch ports 1-8, 8 host ports).
once all --no-ping
once sw --no-ping --scope switches
once cas --no-ping --scope cas
check "--scope all: counters of every port ($(counted all.json))" test "$(counted all.json)" = '{"ca":8,"switch":48}'
check "--scope switches: only the switches' ($(counted sw.json))" test "$(counted sw.json)" = '{"switch":48}'
check "--scope cas: only the hosts' ($(counted cas.json))" test "$(counted cas.json)" = '{"ca":8}'

# 5. --ping-capmask: IsSM (0x2) is set on the SM's port only.
once cm --ping-capmask 0x2
check "--ping-capmask 0x2: the SM's port is the one endport ($(jq -c '[.endports[].name]' cm.json))" \
	jt '[.endports[] | [.name, .state]] == [["node0008 HCA-1", "up"]]' cm.json
once cm0
check "... without it, all 8 hosts ($(jq '.endports | length' cm0.json))" jt '(.endports | length) == 8' cm0.json

# 6. A running agent from a config file: readiness through NOTIFY_SOCKET,
# the node-name map and SIGHUP, --ping-window, --reset-counters, SIGINT.
cat >dgram.py <<'EOF'
# dgram.py PATH OUT [URL]: append each datagram received on the unix
# socket PATH to OUT, one a line; with URL, READY=1 is followed at once
# by a GET of URL, whose status goes to OUT as "http STATUS".
import os, socket, sys, urllib.request
path, out = sys.argv[1], sys.argv[2]
url = sys.argv[3] if len(sys.argv) > 3 else None
if os.path.exists(path):
    os.unlink(path)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
with open(out, "a") as f:
    f.write("listening\n")
    f.flush()
    while True:
        d = s.recv(65536).decode(errors="replace")
        f.write(d.replace("\n", "\\n") + "\n")
        f.flush()
        if url and "READY=1" in d.split("\n"):
            try:
                code = urllib.request.urlopen(url, timeout=10).status
            except Exception as e:
                code = getattr(e, "code", "error")
            f.write("http %s\n" % code)
            f.flush()
EOF
listen() { # PATH OUT [URL]: a listener, in pids; waits until it listens
	python3 dgram.py "$@" &
	pids+=($!)
	for _ in $(seq 1 100); do grep -qx listening "$2" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
U() { echo "http://127.0.0.1:$P$1"; }
st() { curl -s -m 5 "$(U /api/v1/status)"; }
nodes() { curl -s -m 5 "$(U /api/v1/nodes)"; }
wait_for() { # FILTER URL-PATH: up to 20 s for the JSON there to pass FILTER
	for _ in $(seq 1 200); do curl -s -m 5 "$(U "$2")" | jqe "$1" && return 0; sleep 0.1; done
	return 1
}
l5=$(jq -r '.nodes[] | select(.name == "node0005 HCA-1") | .ports[] | select(.port == 1) | .lid' all.json)
pq5() { at node0002 perfquery "$l5" 1 | sed -n "s/^$1:\.*//p"; }

# 6a. --reset-counters data leaves a symbol error count past 3/4 of its
# 16 bits alone: three counter sweeps later the port still shows it.
sim 'PerformanceSet "node0005"[1] PortCounters.SymbolErrorCounter=60000'
start_agent node0001 --no-state-file --no-snmp --no-ping --discovery-interval 3600 --counter-interval 1 \
	--reset-counters data || bad "the agent does not start"
wait_for '.sweeps.counter_sweeps >= 3' /api/v1/status
check "--reset-counters data: SymbolErrorCounter left at 60000 after 3 sweeps ($(pq5 SymbolErrorCounter))" \
	test "$(st | jq .sweeps.counter_sweeps)" -ge 3 -a "$(pq5 SymbolErrorCounter)" = 60000
stop "$agent"

# 6b. The agent that stays: from a config file, with a node-name map.
GL1=0x0000000000200004 GL2=0x0000000000200005
printf '# leaves\n%s "rack1-leaf-a"\n%s "rack2-leaf-b"\n' $GL1 $GL2 >names.map
P=$(free_port)
cat >agent.conf <<EOF
http = 127.0.0.1:$P
no-snmp = yes
state-file = $PWD/agent.state
node-name-map = names.map
discovery-interval = 1
counter-interval = 1
ping-interval-ms = 200
ping-window = 4
reset-counters = errors
EOF
listen "$PWD/notify.sock" notify.txt "$(U /api/v1/status)" || bad "the notify listener does not start"
# A background job of a script ignores SIGINT; the agent must not.
NOTIFY_SOCKET=$PWD/notify.sock spawn node0001 env --default-signal=INT "$IBWATCHD" -c agent.conf \
	>agent.out 2>agent.log &
agent=$!
pids+=($agent)
for _ in $(seq 1 200); do grep -q '^http ' notify.txt && break; sleep 0.1; done
check "sd_notify: READY=1 on NOTIFY_SOCKET, once it serves HTTP ($(grep -v listening notify.txt | xargs))" \
	test "$(grep -v '^listening$' notify.txt | head -2 | xargs)" = "READY=1 http 200"

# --node-name-map: names in place of NodeDescriptions, also as a link's
# remote end; the description itself stays.
wait_for '.fabric.nodes == 14' /api/v1/status
names() { nodes | jq -r --arg a $GL1 --arg b $GL2 '[.[] | select(.guid == $a or .guid == $b) | "\(.name)/\(.description)"] | join(" ")'; }
check "--node-name-map: the leaves by their map names ($(names))" \
	test "$(names)" = "rack1-leaf-a/leaf01 rack2-leaf-b/leaf02"
remote() { curl -s -m 5 "$(U /api/v1/ports?type=ca)" | jq -r '.[] | select(.node_name == "node0001 HCA-1") | .remote.name'; }
check "... also as the remote end of node0001's link ($(remote))" test "$(remote)" = rack1-leaf-a
printf '%s "row9-leaf-a"\n%s "rack2-leaf-b"\n' $GL1 $GL2 >names.map
kill -HUP "$agent"
for _ in $(seq 1 100); do [ "$(names)" = "row9-leaf-a/leaf01 rack2-leaf-b/leaf02" ] && break; sleep 0.1; done
check "SIGHUP: the changed map applies ($(names))" test "$(names)" = "row9-leaf-a/leaf01 rack2-leaf-b/leaf02"
printf '%s "row9-leaf-a"\n%s "broken" trailing text\n' $GL1 $GL2 >names.map
d0=$(st | jq .sweeps.discoveries)
kill -HUP "$agent"
for _ in $(seq 1 100); do grep -q 'node-name map not reloaded' agent.log && break; sleep 0.1; done
check "SIGHUP with a broken map: refused with file:line: reason" \
	grep -q 'SIGHUP: node-name map not reloaded: names.map:2: text after the name' agent.log
wait_for ".sweeps.discoveries > $d0" /api/v1/status
check "... the old map stays, also after the next discovery ($(names))" test "$(names)" = "row9-leaf-a/leaf01 rack2-leaf-b/leaf02"

# --ping-window 4: the loss window holds the last 4 probes.
wait_for '[.[] | select(.sent >= 8)] | length == 8' /api/v1/endports
eps=$(curl -s -m 5 "$(U /api/v1/endports)")
check "--ping-window 4: after 8 or more pings each, every window holds 4 ($(jq -c '[.[].window_probes] | unique' <<<"$eps"))" \
	jt 'length == 8 and all(.[]; .sent >= 8 and .window_probes == 4)' <<<"$eps"

# --reset-counters errors: the agent folds the 60000 in and clears the
# counter on the port; the total goes on from there.
for _ in $(seq 1 100); do [ "$(pq5 SymbolErrorCounter)" = 0 ] && break; sleep 0.1; done
check "--reset-counters errors: the agent cleared SymbolErrorCounter on the port (perfquery: $(pq5 SymbolErrorCounter))" \
	test "$(pq5 SymbolErrorCounter)" = 0
p5() { curl -s -m 5 "$(U /api/v1/ports?type=ca)" | jq -c '.[] | select(.node_name == "node0005 HCA-1") | .counters'; }
check "... the total keeps the 60000, not counted as someone else's reset ($(p5 | jq -c '[.totals.symbol_errors, .resets, .discontinuity_time]'))" \
	jt '.totals.symbol_errors == 60000 and .resets == 0 and .discontinuity_time == null' <<<"$(p5)"
sim 'PerformanceSet "node0005"[1] PortCounters.SymbolErrorCounter=7'
for _ in $(seq 1 100); do p5 | jqe '.totals.symbol_errors == 60007' && break; sleep 0.1; done
check "... and counts on from it: 7 more make 60007 ($(p5 | jq .totals.symbol_errors))" \
	jt '.totals.symbol_errors == 60007 and .resets == 0' <<<"$(p5)"
check "... no counter_reset event" \
	jt '[.events[] | select(.kind == "counter_reset")] | length == 0' <<<"$(curl -s -m 5 "$(U /api/v1/events)")"

# SIGINT: stops like SIGTERM, writing the state file, exit 0.
rm -f agent.state
kill -INT "$agent"
for _ in $(seq 1 100); do [ -z "$(tr -d '\0' 2>/dev/null <"/proc/$agent/cmdline")" ] && break; sleep 0.1; done
kill -KILL "$agent" 2>/dev/null
wait "$agent"
rc=$?
check "SIGINT: the agent stops, exit 0 ($rc)" test $rc = 0
check "... logging it" grep -q 'main: signal 2: stopping' agent.log
total5() { awk '$1 == "p" && $2 == "0x0000000000100008" && $3 == 1 { split($8, a, ":"); print a[1] }' agent.state; }
check "... having written the state file: node0005's symbol errors 60007 ($(total5))" test "$(total5)" = 60007

# 7. As root only: syslog and the privilege drop.
if [ "$(id -u)" != 0 ]; then
	bad "--log-target syslog and 'cannot become root again' need root"
	finish
	exit
fi

# --log-target syslog: /dev/log in a private mount namespace is an
# overlay whose /dev/log leads to our listener.
mkdir -p devlog/upper devlog/work
ln -sfn "$PWD/syslog.sock" devlog/upper/log
listen "$PWD/syslog.sock" syslog.txt || bad "the syslog listener does not start"
P=$(free_port)
unshare -m --propagation private sh -c 'mount -t overlay ibw-devlog -o "lowerdir=/dev,upperdir=$1/devlog/upper,workdir=$1/devlog/work" /dev &&
	exec env SIM_HOST=node0003 LD_PRELOAD="$2" "$3" --log-target syslog --no-state-file --no-snmp --no-ping \
		--discovery-interval 3600 --counter-interval 3600 --http "127.0.0.1:$4"' \
	_ "$PWD" "$IBW_SIM_PRELOAD" "$IBWATCHD" "$P" >syslog-agent.out 2>syslog-agent.log &
sa=$!
pids+=($sa)
for _ in $(seq 1 100); do grep -q "http: listening on 127.0.0.1:$P" syslog.txt && break; sleep 0.1; done
check "--log-target syslog: daemon.info lines tagged ibwatchd[$sa] reach /dev/log" \
	grep -q "^<30>.* ibwatchd\[$sa\]: main: attached to ibsim0 port 1" syslog.txt
check "... the listening line too" grep -q "^<30>.* ibwatchd\[$sa\]: http: listening on 127.0.0.1:$P$" syslog.txt
stop "$sa"
for _ in $(seq 1 50); do grep -q 'signal 15: stopping' syslog.txt && break; sleep 0.1; done
check "... its stop as well, and nothing on stderr" \
	bash -c 'grep -q "^<30>.* ibwatchd\[$1\]: main: signal 15: stopping$" syslog.txt && [ ! -s syslog-agent.log ]' _ "$sa"

# --port-guid: the port with that GUID (the simulator shows one port per
# process); an unknown GUID or one that contradicts --port is refused.
g=$(jq -r '.local_port.port_guid' mi3.json)
once pg --no-ping --port-guid "$g"
check "--port-guid $g picks that port (rc $rc, $(jq -c '.local_port | [.ca, .port, .port_guid]' pg.json))" \
	jt --arg g "$g" '.local_port.port_guid == $g and .local_port.port == 1' pg.json
once pgx --no-ping --port-guid 0x00000000deadbeef
check "--port-guid of no local port: exit 1, saying so ($rc, $(cat pgx.log))" \
	bash -c '[ "$1" = 1 ] && grep -qx "ibwatchd: --port-guid 0x00000000deadbeef: no local port has it (ibstat lists them)" pgx.log' _ $rc
once pgp --no-ping --port-guid "$g" --port 2
check "--port-guid with a --port that is not its port: exit 1 ($rc, $(cat pgp.log))" \
	bash -c '[ "$1" = 1 ] && grep -q "is ibsim0 port 1, not --ca ibsim0 --port 2" pgp.log' _ $rc

# Cannot become root again: with SECBIT_NO_SETUID_FIXUP the capabilities
# survive setuid(nobody), so setuid(0) would work: ibwatchd must refuse
# to run like that. (Should it run, it is stopped after 30 s.) The
# refusal frees what it had started, so that the sanitizer build finds
# no leak in root-again.log either.
P=$(free_port)
SIM_HOST=node0004 LD_PRELOAD=$IBW_SIM_PRELOAD timeout -k 5 30 setpriv --securebits +no_setuid_fixup "$IBWATCHD" --user nobody \
	--no-state-file --no-snmp --no-ping --http "127.0.0.1:$P" >root-again.out 2>root-again.log
rc=$?
check "--user nobody where root could come back: exit 1 ($rc), 'could become root again after dropping to nobody'" \
	bash -c '[ "$1" = 1 ] && grep -qx "ibwatchd: could become root again after dropping to nobody" root-again.log' _ $rc

finish
