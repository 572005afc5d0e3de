#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# ibwatchd under the kernel's MAD rules (the test bed's kernel model,
# tests/preload/ibw_kmodel.c, is on for every process of the fabric):
#  - it sees the whole fabric (answers reach it only because every
#    request goes out with a umad timeout), as ibnetdiscover does;
#  - a port whose PMA never answers costs one timeout per try, each try
#    counted once, as a timeout (the kernel's ETIMEDOUT report), never as
#    a transport error;
#  - `--responder` started after `ibping -S` on the same node keeps
#    running, says why it does not answer, and indeed does not;
#  - the umad device dying under a sweeping agent leaves it serving the
#    last fabric marked stale, and idle: the device's fd leaves the
#    loop's epoll set and the loop wakes only for its timers and our
#    requests (its own count of wakeups, against what those account
#    for). The CPU it then takes is measured, not asserted, by
#    tests/bench/idle_cpu.sh;
#  - it tries to reopen the device with a backoff, refused while the
#    device is away; once it is back (dead.<pid> removed: a fresh open
#    works) it reopens it in place and rediscovers, every total kept: a
#    host's counter that went on, and its own port's, cleared meanwhile
#    as an HCA reset clears it, counted as one reset; and again after
#    seven more deaths.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree hardware 8
trap stop_started EXIT
[ -n "${IBW_KM_STATE_DIR:-}" ] || { echo "not ok - the kernel model is not on (IBW_KM_STATE_DIR unset)"; exit 1; }

# The reference: what ibnetdiscover sees, under the same rules.
at node0001 ibnetdiscover >ref.net 2>ref.err
nref=$(grep -cE '^(Switch|Ca)[[:space:]]' ref.net)
check "ibnetdiscover sees the fabric under the kernel rule ($nref nodes)" \
	test "$nref" -ge 9

at node0001 "$IBWATCHD" --once --full --no-state-file --no-ping >once.json 2>once.err
rc=$?
check "ibwatchd --once exits 0 (exit $rc)" test "$rc" = 0
check "ibwatchd --once sees as many nodes as ibnetdiscover ($nref)" \
	jq -e --argjson n "$nref" '(.nodes | length) == $n' once.json
check "... and reads every port's counters" \
	jq -e '.status.sweeps.counters.timeouts == 0 and .status.sweeps.unreachable_ports == 0' once.json
check "... with no try timed out and no answer dropped as late" \
	jq -e '.status.engine.try_timeouts == 0 and .status.engine.late == 0' once.json

# A host whose PMA never answers (the model drops what is sent to its
# LID). With --no-ping the only MAD to it is the counter sweep's
# ClassPortInfo: one request, 1 + 2 tries, each reported by the kernel.
lid3=$(awk '/^Ca/ && /node0003/ { f = 1 } f && /lid/ { for (i = 1; i <= NF; i++) if ($i == "lid") { print $(i + 1); exit } }' ref.net)
check "the reference names node0003's LID ($lid3)" test -n "$lid3"
IBW_KM_DEAD_LIDS=$lid3 IBW_KM_DEAD_CLASSES=pma \
	at node0001 "$IBWATCHD" --once --no-state-file --no-ping \
	--timeout-ms 50 --retries 2 >dead.json 2>dead.err
check "with a dead PMA: one sweep timeout, one port unreachable" \
	jq -e '.status.sweeps.counters.timeouts == 1 and .status.sweeps.unreachable_ports == 1' dead.json
check "... one request timed out after 3 tries, each try counted once" \
	jq -e '.status.engine | .timeouts == 1 and .try_timeouts == 3 and .retries == 2' dead.json
check "... each try's timeout reported by the kernel, none by our own deadline" \
	jq -e '.status.engine.kernel_timeouts == 3' dead.json
check "... not as a transport error, and nothing late" \
	jq -e '.status.engine | .transport_errors == 0 and .returned == 0 and .late == 0' dead.json

# ibping -S serves the echo methods on node0004 (as the node's SM-flagged
# process, so that ibsim hands it the requests); then ibwatchd
# --responder on the same node.
SIM_SET_ISSM=1 spawn node0004 ibping -S >ibping-server.log 2>&1 &
pids+=($!)
server=$!
lid4=$(awk '/^Ca/ && /node0004/ { f = 1 } f && /lid/ { for (i = 1; i <= NF; i++) if ($i == "lid") { print $(i + 1); exit } }' ref.net)
for _ in $(seq 1 50); do
	at node0002 ibping -c 1 -L "$lid4" 2>/dev/null | grep -q '1 received' && break
	sleep 0.1
done
check "ibping -S answers on node0004 (LID $lid4)" \
	bash -c "SIM_HOST=node0002 LD_PRELOAD=\$IBW_SIM_PRELOAD ibping -c 1 -L $lid4 | grep -q '1 received'"
start_agent node0004 --responder --no-state-file --no-snmp --discovery-interval 1 \
	--counter-interval 1
started=$?
check "ibwatchd --responder starts beside ibping -S" test "$started" = 0
resp=$agent
for _ in $(seq 1 50); do
	curl -s -m 5 "http://127.0.0.1:$P/api/v1/status" | jqe '.sweeps.counter_sweeps >= 1' && break
	sleep 0.1
done
check "... keeps running through its sweeps" kill -0 "$resp"
check "... and says why it does not answer" \
	grep -q 'not answering echo pings: another agent' "agent-$P.log"
stop "$server"
check "ibping -S exited" bash -c "! kill -0 $server 2>/dev/null"
out=$(at node0002 ibping -c 2 -t 100 -L "$lid4" 2>&1)
check "... and with it gone nobody answers: ibwatchd did not serve" \
	grep -q '2 packets transmitted, 0 received' <<<"$out"
check "ibwatchd --responder is still running" kill -0 "$resp"
stop "$resp"

# The device dies under a sweeping agent.
start_agent node0001 --no-state-file --no-snmp --discovery-interval 1 \
	--counter-interval 1 --ping-interval-ms 300 ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/api/v1/status" | jqe '.sweeps.counter_sweeps >= 2' && break
	sleep 0.1
done
check "the agent sweeps" bash -c "curl -s -m 5 $U/api/v1/status | jq -e '.sweeps.counter_sweeps >= 2' >/dev/null"
# Totals across the device's loss: node0005's SymbolErrorCounter counts
# on (30, then 35 while the device is away), and the agent's own port's
# is reset meanwhile (perfquery -R from another node, as an HCA reset
# clears it: 20, then 0, then 4): 35 and 24 after, one reset counted.
sym() { curl -s -m 5 "$U/api/v1/ports?type=ca" |
	jq -r --arg n "$1" '.[] | select(.node_name | startswith($n)) | .counters.totals.symbol_errors'; }
lid1=$(awk '/^Ca/ && /node0001/ { f = 1 } f && /lid/ { for (i = 1; i <= NF; i++) if ($i == "lid") { print $(i + 1); exit } }' ref.net)
lid5=$(awk '/^Ca/ && /node0005/ { f = 1 } f && /lid/ { for (i = 1; i <= NF; i++) if ($i == "lid") { print $(i + 1); exit } }' ref.net)
pq_sym() { at node0002 perfquery "$1" 1 | awk -F'[.:]+' '/^SymbolErrorCounter/ { print $NF }'; }
sim 'PerformanceSet "node0005"[1] PortCounters.SymbolErrorCounter=30'
sim 'PerformanceSet "node0001"[1] PortCounters.SymbolErrorCounter=20'
for _ in $(seq 1 100); do
	[ "$(sym node0005)" = 30 ] && [ "$(sym node0001)" = 20 ] && break
	sleep 0.1
done
s5=$(sym node0005) s1=$(sym node0001)
check "the agent counts node0005's 30 and its own port's 20 symbol errors ($s5, $s1)" \
	test "$s5:$s1" = 30:20
pq0=$(pq_sym "$lid5")
# The fds in the loop's epoll set (the one that holds its timerfd), as
# the kernel lists them in fdinfo: what they are, one a line, sorted.
loop_set() {
	local f t set
	for f in /proc/"$1"/fd/*; do
		[ "$(readlink "$f")" = 'anon_inode:[eventpoll]' ] || continue
		set=$(awk '/^tfd:/ { print $2 }' "/proc/$1/fdinfo/${f##*/}" |
			while read -r t; do readlink "/proc/$1/fd/$t"; done | sort)
		grep -qx 'anon_inode:\[timerfd\]' <<<"$set" && { echo "$set"; return; }
	done
}
# Under the simulator the device's fd is the eventfd its bridge thread
# signals (core/umad.c); the HTTP server's threads hand work over
# through the other eventfd of the loop's set (http/server.c).
loop_set "$agent" >set-before.txt
check "the loop watches the device: two eventfds under the simulator, the device's and the HTTP hand-over's ($(xargs <set-before.txt))" \
	test "$(grep -cx 'anon_inode:\[eventfd\]' set-before.txt)" = 2
touch "$IBW_KM_STATE_DIR/dead.$agent"
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/api/v1/status" | jqe '.engine.device_lost and .stale' && break
	sleep 0.1
done
curl -s -m 5 "$U/api/v1/status" >lost.json
check "the device dies: the agent says so and goes stale" \
	jq -e '.engine.device_lost == true and .stale == true and .local_port_lost == true' lost.json
check "... keeps the fabric it had" jq -e --argjson n "$nref" '.fabric.nodes == $n' lost.json
check "... and logs it" grep -q 'the umad device failed' "agent-$P.log"
loop_set "$agent" >set-after.txt
check "... its fd has left the loop's epoll set, nothing else has ($(xargs <set-after.txt))" \
	bash -c 'sed "0,/^anon_inode:\[eventfd\]\$/{//d}" set-before.txt | cmp -s - set-after.txt'
# Idle: its loop wakes only for its timers and our requests, over 20
# snapshots (tap.sh, idle_loop).
idle=$(wakeups_over 20)
check "... and is idle: $(printf '%s loop wakeups for %s snapshots, %s requests and %s MADs sent' $idle)" idle_loop $idle
check "... still serving HTTP" bash -c "curl -s -m 5 $U/healthz -o /dev/null -w '%{http_code}' | grep -q 503"
check "the agent is still running" kill -0 "$agent"
# It tries to open the device again, 1 s after the loss, then 2 s
# later...: the kernel model refuses opens while dead.<pid> is there.
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/api/v1/status" | jqe '.engine.device_reopen_failures >= 2' && break
	sleep 0.1
done
check "... tries to reopen the device, refused while it is away" \
	jqe '.engine.device_reopen_failures >= 2 and .engine.device_lost and .stale' < <(curl -s -m 5 "$U/api/v1/status")
check "... a refused reopen is a warning, once for its reason ($(grep -c 'warn\] main: cannot open the device again' "agent-$P.log"))" \
	test "$(grep -c 'warn\] main: cannot open the device again' "agent-$P.log")" = 1
sim 'PerformanceSet "node0005"[1] PortCounters.SymbolErrorCounter=35'
check "the agent's port's counters are reset while its device is away" \
	at node0002 perfquery -R "$lid1" 1
sim 'PerformanceSet "node0001"[1] PortCounters.SymbolErrorCounter=4'
sweeps0=$(curl -s -m 5 "$U/api/v1/status" | jq .sweeps.counter_sweeps)
ev0=$(curl -s -m 5 "$U/api/v1/events" | jq .last_seq)
# The driver is back: a fresh open of the device works again.
rm -f "$IBW_KM_STATE_DIR/dead.$agent"
for _ in $(seq 1 200); do
	curl -s -m 5 "$U/api/v1/status" |
		jqe --argjson s "$sweeps0" '.engine.device_reopens == 1 and (.stale | not) and .sweeps.counter_sweeps > $s' &&
		break
	sleep 0.1
done
curl -s -m 5 "$U/api/v1/status" >back.json
check "the device back: the agent reopens it, fresh again without a restart" \
	jq -e --argjson s "$sweeps0" '.engine.device_reopens == 1 and .engine.device_lost == false and .stale == false and .local_port_lost == false and .sweeps.counter_sweeps > $s' back.json
check "... with the whole fabric ($nref nodes), none gone" \
	jq -e --argjson n "$nref" '.fabric.nodes == $n' back.json
check "... logged" grep -q 'the umad device is open again' "agent-$P.log"
loop_set "$agent" >set-back.txt
check "... its device watched by the loop again, beside the HTTP hand-over's ($(xargs <set-back.txt))" \
	test "$(grep -cx 'anon_inode:\[eventfd\]' set-back.txt)" = 2
for _ in $(seq 1 100); do
	[ "$(sym node0005)" = 35 ] && [ "$(sym node0001)" = 24 ] && break
	sleep 0.1
done
s5=$(sym node0005) s1=$(sym node0001) pq1=$(pq_sym "$lid5")
check "... totals kept: node0005's grew by perfquery's delta ($pq0 to $pq1; $s5), its own port 20 + 4 after the reset ($s1)" \
	test "$((s5 - 30)):$s1" = "$((pq1 - pq0)):24" -a "$pq1" = 35
curl -s -m 5 "$U/api/v1/events?since=$ev0" >ev-back.json
check "... the reset of its own port counted, as an event" \
	jq -e --arg g "$(jq -r '.[] | select(.node_name | startswith("node0001")) | .node_guid' < <(curl -s -m 5 "$U/api/v1/ports?type=ca"))" \
	'[.events[] | select(.kind == "counter_reset" and .node_guid == $g)] | length >= 1' ev-back.json
check "... and no node reported gone" \
	jq -e '[.events[] | select(.kind == "node_gone")] | length == 0' < <(curl -s -m 5 "$U/api/v1/events")
# Seven more deaths: the device comes back every time (the chaos run's
# agent could not reopen after its 8th, when the model left a dead
# file's agents registered in umad2sim, which has 32 a device).
for i in $(seq 2 8); do
	touch "$IBW_KM_STATE_DIR/dead.$agent"
	for _ in $(seq 1 100); do
		curl -s -m 5 "$U/api/v1/status" | jqe '.engine.device_lost' && break
		sleep 0.1
	done
	rm -f "$IBW_KM_STATE_DIR/dead.$agent"
	for _ in $(seq 1 200); do
		curl -s -m 5 "$U/api/v1/status" |
			jqe --argjson n "$i" '.engine.device_reopens == $n and (.engine.device_lost | not)' && break
		sleep 0.1
	done
done
curl -s -m 5 "$U/api/v1/status" >back8.json
check "... and after seven more deaths, reopened each time ($(jq .engine.device_reopens back8.json) reopens)" \
	jq -e '.engine.device_reopens == 8 and .engine.device_lost == false' back8.json
finish
