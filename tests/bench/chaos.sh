#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Chaos: the soak's agent and clients (tests/bench/soak.sh) on the
# 324-host fat tree, under the kernel model (tests/preload/ibw_kmodel.c,
# so that the umad device can fail), with faults at random intervals,
# each kind on its own schedule so that they overlap:
#   host link flaps, spine link flaps, the agent's own link flapping,
#   opensm restarted with the other LMC (0 <-> 1: LIDs move), snmpd
#   killed and started again, the agent's umad device lost (dead.<pid>:
#   POLLERR, EIO, opens refused) and back,
# and under load: curl loops on every endpoint, an snmpbulkwalk every
# 10 s, wrk bursts (WRK=0 to leave them out), idle and trickling
# connections from 127.0.0.2 (tests/integration/http_hold.py).
# Measured, and printed at the end:
#   scrapes failed: answers other than 200 (000: no answer within
#     curl's 10 s) by endpoint; /healthz says 503 while the data is
#     stale, which is counted apart;
#   events lost: /api/v1/events polled every 2 s with since= the last
#     seq seen; every seq from since+1 to last_seq must come (the ring
#     overwriting unread ones shows as a hole);
#   totals lost: every *_total series of /metrics, every 5 s, against
#     the highest value seen for it before (a series that vanished and
#     came back included); a decrease is a loss, 0 required (a counter
#     reset is a counted reset, its total goes on);
#   counter resets reported: nothing here clears a counter, so each is
#     another node's reading folded into a port's totals, 0 required;
#   endports reported down, each set beside the faults that explain it
#     (its host link, or a link between its leaf and a spine, flapped
#     shortly before), and those nothing explains, 0 required;
#   RSS every 30 s; sanitizer reports (log_path files and the agent's
#     log; leaks checked at exit); the agent's warnings and errors by
#     kind; notifications received by snmptrapd, by kind; whether the
#     agent ran to the end; a hang (the agent leaving /api/v1/status
#     unanswered three times in a row): its threads' stacks and ibsim's,
#     by gdb, in hang-*.txt.
# Exit status 0 when the agent ran to the end and stopped cleanly, with
# no sanitizer report, no failed scrape, no event and no total lost, and
# no endport down that nothing explains.
# The random schedule comes from SEED (printed; the same SEED gives the
# same faults in the same order, not the same timing). Environment:
# DURATION (seconds, 1800), SEED, HOSTS (324), WRK (1), INFLIGHT (the
# agent's --max-inflight, 8: why below). The results stay in
# BUILD/bench-work/bench_chaos/work.
#
#   cmake -S . -B build-asan -DIBW_SANITIZE=ON && cmake --build build-asan -j
#   DURATION=1800 SEED=1 tests/bench/chaos.sh build-asan
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build-asan}" && pwd)
DURATION=${DURATION:-1800}
SEED=${SEED:-$(date +%s)}
HOSTS=${HOSTS:-324}
WRK=${WRK:-1}
export DURATION SEED HOSTS WRK
work=$build/bench-work
mkdir -p "$work"

if [ -z "${IBW_SIM_DIR:-}" ]; then
	"$build/tests/ibw-fattree" --levels 2 --hosts "$HOSTS" >"$work/chaos-$HOSTS.net"
	export IBW_SIMGUARD=$build/tests/libibw_simguard.so IBW_TEST_WORK=$work
	export IBW_KMODEL=$build/tests/libibw_kmodel.so
	[ -r "$IBW_KMODEL" ] || { echo "chaos: no $IBW_KMODEL" >&2; exit 1; }
	exec "$top/tests/lib/with-fabric.sh" bench_chaos "$work/chaos-$HOSTS.net" \
		--sm "$(printf 'node%04d' "$HOSTS")" -- "$top/tests/bench/chaos.sh" "$build"
fi

. "$top/tests/lib/tap.sh"
export IBWATCHD=$build/agent/ibwatchd
[ -n "${IBW_KM_STATE_DIR:-}" ] || { echo "chaos: the kernel model is not on" >&2; exit 1; }
rm -rf ./*.log ./*.out ./*.txt ./*.json ./*.jsonl ./san ./stop.flag ./snmpd.* ./totals.*
mkdir san
# Sanitizer reports go to files of their own (san/asan.PID), counted at
# the end; the quarantine is kept small so that the RSS figures are not
# freed memory held back (soak.sh). UBSan stops the agent at its first
# report (-fno-sanitize-recover): the agent's exit is then the finding.
export ASAN_OPTIONS="verify_asan_link_order=0:quarantine_size_mb=16:suppressions=$top/tests/asan.supp:log_path=$PWD/san/asan"
export UBSAN_OPTIONS="print_stacktrace=1:log_path=$PWD/san/ubsan"
export LSAN_OPTIONS="suppressions=$top/tests/lsan.supp"
t0=$(date +%s)
end=$((t0 + DURATION))
now() { echo $(($(date +%s) - t0)); }
# Loops run until stop.flag or the end, and at most MAX times.
MAX=$((DURATION * 4 + 100))
going() { [ ! -e stop.flag ] && [ "$(date +%s)" -lt "$end" ]; }

# Everything started here is stopped by PID: the loops' subshells
# (pids), the agent, snmptrapd, and each snmpd (snmpd.pids: the snmpd
# loop starts new ones).
cleanup() {
	touch stop.flag
	local p
	for p in $(cat snmpd.pids 2>/dev/null); do
		[ "$(tr -d '\0' 2>/dev/null <"/proc/$p/cmdline" | cut -c1-5)" = snmpd ] && stop "$p"
	done
	stop_started
}
trap cleanup EXIT

start_snmptrapd || { echo "chaos: snmptrapd does not start" >&2; exit 1; }
SOCK=$PWD/agentx.sock
snmp_port=$(free_port)
cat >snmpd.conf <<EOF
master agentx
agentXSocket $SOCK
agentXTimeout 5
rocommunity public 127.0.0.1
trap2sink 127.0.0.1:$trap_port public
EOF
# snmpd_up: tap.sh's start_snmpd, with the PID in snmpd.pids (the snmpd
# loop starts each in a subshell) and its start time in snmpd.started.
snmpd_up() {
	local rc=0
	date +%s >snmpd.started
	start_snmpd || rc=1
	echo "$snmpd_pid" >>snmpd.pids
	return $rc
}
snmpd_up || { echo "chaos: snmpd does not start" >&2; exit 1; }

# --max-inflight 8: umad2sim holds one mutex of its own across its
# blocking write to ibsim, and its receiver thread needs that mutex to
# take ibsim's answers off the socket. ibsim's datagram queues hold
# net.unix.max_dgram_qlen (10 here) MADs; with more in flight, ibsim
# busy with an SM sweep fills ours, blocks writing answers to us, and
# the two wait for each other for good (seen twice in three 200-300 s
# runs with the default 128: ibsim's console and every HTTP request
# hung, since libmicrohttpd's poll() goes through umad2sim's wrapper
# and its mutex too). On hardware none of this exists. Sweeps every
# 5 s, not the soak's 2: with 8 in flight and the load here a discovery
# of the 360 nodes took about 6 s, and the data counts as stale after
# three intervals without a good sweep (/healthz 503).
start_agent node0001 --no-state-file --agentx "$SOCK" \
	--discovery-interval 5 --counter-interval 5 --ping-interval-ms 500 \
	--watch-path "node0200 HCA-1" --trace-interval 1 \
	--max-inflight "${INFLIGHT:-8}" ||
	{ echo "chaos: the agent does not start" >&2; exit 1; }
alog=$PWD/agent-$P.log
U=http://127.0.0.1:$P
for _ in $(seq 1 300); do
	curl -s -m 5 "$U/api/v1/status" | jqe --argjson h "$HOSTS" \
		'.sweeps.counter_sweeps >= 1 and .endports.up == $h' && break
	sleep 0.2
done
echo "chaos: ${DURATION} s, SEED=$SEED, $HOSTS hosts, agent PID $agent on $U, WRK=$WRK"
echo "chaos: load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# From here on a failing command is counted, not the end of the run.
set +e

# The check loops append to these; empty is the good outcome.
: >ev-lost.txt
: >ev-fail.txt
: >totals-lost.txt
: >flapped.txt
: >c-walk.txt

# Load. Each client writes "T CODE SECONDS" per request to c-NAME.txt
# (T: seconds into the run, to set a failure beside faults.txt).
client() { # name period url [curl args]
	local name=$1 period=$2 url=$3 i
	shift 3
	for ((i = 0; i < MAX; i++)); do
		going || break
		t=$(now)
		# On a timeout curl still writes its -w line (code 000): one
		# line a request either way.
		r=$(curl -s -m 10 -o /dev/null -w "%{http_code} %{time_total}" "$@" "$url" 2>/dev/null)
		echo "$t ${r:-000 10}" >>"c-$name.txt"
		sleep "$period"
	done
}
client metrics 0.5 "$U/metrics" -H 'Accept-Encoding: gzip' &
pids+=($!)
client ports 2 "$U/api/v1/ports" &
pids+=($!)
client status 1 "$U/api/v1/status" &
pids+=($!)
client nodes 5 "$U/api/v1/nodes" &
pids+=($!)
client endports 2 "$U/api/v1/endports" &
pids+=($!)
client healthz 1 "$U/healthz" &
pids+=($!)
client trace 2 "$U/api/v1/trace?source=node0002%20HCA-1&target=node0300%20HCA-1" &
pids+=($!)
client ping 2 "$U/api/v1/ping?target=node0150%20HCA-1&count=3" &
pids+=($!)
export MIBS="" MIBDIRS=""
ROOT=.1.3.6.1.4.1.32473
# A walk is complete when all endports are in the port GUID and state
# columns. One that fails while snmpd is away, or within 15 s of its
# start (the subagent registers again), is counted apart.
(for ((i = 0; i < MAX; i++)); do
	going || break
	d0=0
	[ -e snmpd.down ] && d0=1
	if snmpbulkwalk -v2c -c public -t 5 -r 0 -Cr50 -On "127.0.0.1:$snmp_port" "$ROOT.1.4" >walk.out 2>walk.err &&
		[ ! -s walk.err ] && [ "$(grep -c "^$ROOT\.1\.4\.1\.3\." walk.out)" = "$HOSTS" ] &&
		[ "$(grep -c "^$ROOT\.1\.4\.1\.7\." walk.out)" = "$HOSTS" ]; then
		echo ok >>c-walk.txt
	elif [ $d0 = 1 ] || [ -e snmpd.down ]; then
		echo snmpd_away >>c-walk.txt
	elif [ $(($(date +%s) - $(cat snmpd.started))) -lt 15 ]; then
		echo snmpd_restarted >>c-walk.txt
	else
		echo fail >>c-walk.txt
	fi
	sleep 10
done) &
pids+=($!)
# wrk bursts: 10 s of 2 connections on /metrics every 60 s, niced, so
# that the simulator keeps its share of the 2 cores.
if [ "$WRK" = 1 ]; then
	(for ((i = 0; i < MAX; i++)); do
		sleep 50
		going || break
		nice wrk -t1 -c2 -d10s --timeout 5s -H 'Accept-Encoding: gzip' "$U/metrics" \
			>>wrk.out 2>&1 || true
	done) &
	pids+=($!)
fi
# Hostile: 20 connections from 127.0.0.2, idle or trickling, until the
# agent closes them (header deadline) or 40 s; a pause; again.
(for ((i = 0; i < MAX; i++)); do
	going || break
	python3 "$top/tests/integration/http_hold.py" 127.0.0.2 127.0.0.1 "$P" 20 \
		"hold-ready.txt" 40 >>hold.out 2>&1 || echo "hold failed" >>hold.out
	sleep 20
done) &
pids+=($!)

# Checks.
# Events: every seq after the last one seen must come.
(last_seq=0
for ((i = 0; i < MAX; i++)); do
	going || break
	if curl -s -m 10 "$U/api/v1/events?since=$last_seq" >ev.json && [ -s ev.json ]; then
		jq -c '.events[]' ev.json >>events.jsonl
		# "LOST NEW_LAST N": all after since up to last_seq came, or,
		# with 4096 (one answer's most), all up to the last one.
		read -r lost nl n < <(jq -r --argjson s "$last_seq" '
			[.events[].seq] as $q | ($q | length) as $n |
			(if $n >= 4096 then $q[-1] else .last_seq end) as $l |
			"\($l - $s - $n) \($l) \($n)"' ev.json)
		[ "$lost" != 0 ] && echo "$(now) since=$last_seq lost=$lost new_last=$nl got=$n" >>ev-lost.txt
		last_seq=$nl
		echo "$last_seq" >ev-last.txt
	else
		echo "$(now)" >>ev-fail.txt
	fi
	sleep 2
done) &
pids+=($!)
# Totals: every *_total series against the highest seen before.
(: >totals.max
for ((i = 0; i < MAX; i++)); do
	going || break
	if curl -s -m 10 "$U/metrics" >m.prom && [ -s m.prom ]; then
		awk -v t="$(now)" 'FILENAME == ARGV[1] { m[$1] = $2; next }
			/^[a-z0-9_]+_total[{ ]/ {
				v = $NF; k = substr($0, 1, length($0) - length(v) - 1)
				gsub(/ /, "_", k); v += 0; n++
				if ((k in m) && v < m[k]) print t, k, m[k], v >"totals-lost.txt"
				if (!(k in m) || v > m[k]) m[k] = v
			}
			END { for (k in m) print k, m[k] >"totals.new"; print t, n >"totals-seen.txt" }' \
			totals.max m.prom && mv totals.new totals.max
	fi
	sleep 5
done) &
pids+=($!)

# Faults, each kind with its own random stream from SEED.
fault() { echo "$(now) $*" >>faults.txt; }
# pause LO HI: a random wait of LO..HI seconds that ends early at the end.
pause() {
	local s=$(($1 + RANDOM % ($2 - $1 + 1))) i
	for ((i = 0; i < s; i++)); do going || return 1; sleep 1; done
}
# ibw-fattree: spine S's port L goes to leaf L.
spines=$(grep -c '^Switch.*"spine' "$work/chaos-$HOSTS.net")
leaves=$(grep -c '^Switch.*"leaf' "$work/chaos-$HOSTS.net")
# Host links (not the agent's own, node0001, nor the SM's).
(RANDOM=$((SEED + 1))
for ((i = 0; i < MAX; i++)); do
	pause 10 40 || break
	# RANDOM outside $(...): bash reseeds it in a subshell.
	n=$((2 + RANDOM % (HOSTS - 2)))
	h=$(printf 'node%04d' "$n")
	fault host_flap "$h"
	echo "$h" >>flapped.txt
	sim "Unlink \"$h\"[1]"
	pause 3 20
	sim "Relink \"$h\"[1]"
done) &
pids+=($!)
(RANDOM=$((SEED + 2))
for ((i = 0; i < MAX; i++)); do
	pause 30 90 || break
	n=$((1 + RANDOM % spines))
	s=$(printf 'spine%02d' "$n")
	l=$((1 + RANDOM % leaves))
	fault spine_flap "${s}[$l]"
	sim "Unlink \"$s\"[$l]"
	pause 3 15
	sim "Relink \"$s\"[$l]"
done) &
pids+=($!)
(RANDOM=$((SEED + 3))
for ((i = 0; i < MAX; i++)); do
	pause 60 180 || break
	fault local_flap node0001
	sim 'Unlink "node0001"[1]'
	pause 3 15
	sim 'Relink "node0001"[1]'
done) &
pids+=($!)
(RANDOM=$((SEED + 4)) lmc=0
for ((i = 0; i < MAX; i++)); do
	pause 60 150 || break
	lmc=$((1 - lmc))
	fault sm_restart "lmc $lmc"
	"$IBW_SIMFABRIC" sm-restart "$IBW_SIM_DIR" "-l $lmc" >>sm-restart.out 2>&1 ||
		fault sm_restart_failed "lmc $lmc"
done) &
pids+=($!)
(RANDOM=$((SEED + 5))
for ((i = 0; i < MAX; i++)); do
	pause 45 120 || break
	fault snmpd_restart
	touch snmpd.down
	stop "$(tail -n1 snmpd.pids)" || true
	pause 2 10
	rm -f snmpd.down
	snmpd_up || fault snmpd_start_failed
done) &
pids+=($!)
(RANDOM=$((SEED + 6))
for ((i = 0; i < MAX; i++)); do
	pause 60 180 || break
	fault device_lost
	touch "$IBW_KM_STATE_DIR/dead.$agent"
	pause 2 20
	rm -f "$IBW_KM_STATE_DIR/dead.$agent"
	fault device_back
done) &
pids+=($!)

# A hang: when the agent has not answered /api/v1/status 3 times in a
# row, the stacks of its threads and of ibsim's go to hang-*.txt (once).
(bad=0
for ((i = 0; i < MAX; i++)); do
	going || break
	if curl -s -m 5 -o /dev/null "$U/api/v1/status"; then
		bad=0
	else
		bad=$((bad + 1))
	fi
	if [ $bad = 3 ] && [ ! -e hang-agent.txt ]; then
		fault hang_seen
		gdb -batch -p "$agent" -ex 'thread apply all bt' >hang-agent.txt 2>&1
		gdb -batch -p "$(cat "$IBW_SIM_DIR/ibsim.pid")" -ex 'thread apply all bt' >hang-ibsim.txt 2>&1
	fi
	sleep 2
done) &
pids+=($!)

rss() { awk '/^VmRSS/ { print $2 }' "/proc/$agent/status" 2>/dev/null; }
alive=1
: >rss.txt
while [ "$(date +%s)" -lt "$end" ]; do
	if ! kill -0 "$agent" 2>/dev/null; then
		alive=0
		echo "chaos: the agent exited at $(now) s"
		break
	fi
	echo "$(now) $(rss) $(cut -d' ' -f1 /proc/loadavg)" >>rss.txt
	for ((i = 0; i < 30; i++)); do
		[ "$(date +%s)" -lt "$end" ] || break
		sleep 1
	done
done
touch stop.flag
load=$(cut -d' ' -f1-3 /proc/loadavg)
# The fault loops put back what they broke before they end; give them
# and the clients their last round (20 s holds, 10 s curls).
for _ in $(seq 1 40); do
	[ -e "$IBW_KM_STATE_DIR/dead.$agent" ] || [ -e snmpd.down ] || break
	sleep 1
done
rm -f "$IBW_KM_STATE_DIR/dead.$agent"
sleep 12
st=$(curl -s -m 10 "$U/api/v1/status" || true)
curl -s -m 10 "$U/api/v1/nodes" >nodes-end.json || true
curl -s -m 10 "$U/api/v1/ports" >ports-end.json || true

echo "== chaos: ${DURATION} s, SEED=$SEED, load average at the end $load"
echo "faults: $(cut -d' ' -f2 faults.txt | sort | uniq -c | xargs)"
echo "scrapes (code: count; the slowest answer):"
for c in metrics ports status nodes endports healthz trace ping; do
	[ -e "c-$c.txt" ] || continue
	echo "  $c: $(cut -d' ' -f2 "c-$c.txt" | sort | uniq -c | xargs); $(sort -k3 -n "c-$c.txt" | tail -n1 | cut -d' ' -f3) s"
	awk '$2 != 200 { printf "%s%s:%s", n++ ? " " : "    not 200 at (s:code) ", $1, $2 } END { if (n) print "" }' "c-$c.txt"
done
failed=$(cat c-metrics.txt c-ports.txt c-status.txt c-nodes.txt c-endports.txt | awk '$2 != 200' | wc -l)
echo "scrapes failed (metrics, ports, status, nodes, endports not 200): $failed"
echo "walks: $(sort c-walk.txt | uniq -c | xargs)"
[ -e wrk.out ] && echo "wrk: $(grep -c 'requests in' wrk.out) bursts, $(awk '/requests in/ { s += $1 } END { print s + 0 }' wrk.out) requests, $(grep -c 'Socket errors\|Non-2xx' wrk.out) bursts with errors or non-2xx"
echo "hostile holds: $(grep -c '^closed' hold.out || true) rounds closed by the agent, $(grep -c 'hold failed' hold.out || true) failed"
evn=$(wc -l <events.jsonl)
echo "events: $evn received up to seq $(cat ev-last.txt), lost $(awk '{ sub("lost=", "", $3); s += $3 } END { print s + 0 }' ev-lost.txt 2>/dev/null || echo 0) ($(wc -l <ev-lost.txt 2>/dev/null || echo 0) polls with a hole), $(wc -l <ev-fail.txt 2>/dev/null || echo 0) polls failed"
echo "  by kind: $(jq -r .kind events.jsonl | sort | uniq -c | sort -rn | xargs)"
seqs_ok=$(jq -s '[.[].seq] as $q | ($q | length) == (($q | unique) | length) and $q == ($q | sort)' events.jsonl)
echo "  seqs unique and in order: $seqs_ok"
echo "totals: $(wc -l <totals.max) series watched, $(wc -l <totals-lost.txt 2>/dev/null || echo 0) decreases (totals lost)"
head -n 5 totals-lost.txt 2>/dev/null | sed 's/^/  /' || true
# Nothing here clears a counter (no perfquery -R, and the device's loss
# leaves the model's counters alone): a reset reported is another
# node's reading folded into a port's totals and then its own lower one
# (docs/architecture.md, Counters), 0 required.
nresets=$(jq -r 'select(.kind == "counter_reset") | .kind' events.jsonl | wc -l)
echo "  counter resets reported (0 required: nobody resets one here): $nresets events, $(jq '[.[].ports[]?.counters.resets // 0] | add' nodes-end.json 2>/dev/null) in the nodes' ports"
# Endports reported down, each set beside the faults that explain it:
#   host: its own link was unlinked up to 40 s before (a flap lasts
#     3-20 s);
#   path: a link between its leaf and a spine was, up to 50 s before (a
#     flap lasts 3-15 s, then the SM routes around it or back; while it
#     sweeps after a restart that can take a while): the host's port
#     stays up but what is routed to it through that spine is lost, so
#     it does not answer and is down, its reason saying that a directed
#     route found the port active ("port active") when the route
#     the discovery found to it does not cross that link;
#   none of these: reported down although its port and its path stayed
#     up (the SM restarts, the LID moves, our own flaps and device
#     losses): 0 required.
# The host's leaf is read from the topology file (ibw-fattree: a host's
# port 1 goes to its leaf; spine S's port L to leaf L).
awk '/^Hca/ { h = $3; gsub(/"/, "", h); next }
	h != "" && /"leaf[0-9]+"/ { l = $2; sub(/^"leaf/, "", l); sub(/".*/, "", l); print h, l + 0; h = "" }' \
	"$work/chaos-$HOSTS.net" | sort >leaves.txt
jq -r '.[] | "\(.guid) \(.name)"' nodes-end.json | sort >names.txt
jq -r --argjson t0 "$t0" 'select(.kind == "endport_state" and .new == "down") |
	"\(.node_guid) \((.time | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) - $t0) \(.reason | test("port active"))"' \
	events.jsonl | sort >downs.txt
# Every down is classified; one whose node the end's listing does not
# name, or whose leaf the topology does not say, is explained by nothing.
# A spine link of the agent's own leaf cuts hosts on every leaf.
awk 'FILENAME == ARGV[1] { name[$1] = $2; next }
	FILENAME == ARGV[2] { leaf[$1] = $2; next }
	FILENAME == ARGV[3] {
		if ($2 == "host_flap") hf[$3] = hf[$3] " " $1
		if ($2 == "spine_flap") { l = $3; sub(/.*\[/, "", l); sub(/\]/, "", l); sf[l] = sf[l] " " $1 }
		next
	}
	function near(list, t, w,   n, a, i) {
		n = split(list, a, " ")
		for (i = 1; i <= n; i++) if (a[i] <= t + 2 && t <= a[i] + w) return 1
		return 0
	}
	{
		h = ($1 in name) ? name[$1] : $1
		l = (h in leaf) ? leaf[h] : -1
		why = "none"
		if (near(hf[h], $2, 40)) why = "host"
		else if (l >= 0 && (near(sf[l], $2, 50) || near(sf[leaf["node0001"]], $2, 50))) why = "path"
		print h, $2, why, $3
	}' names.txt leaves.txt faults.txt downs.txt >downs-why.txt
unexpl=$(awk '$3 == "none" { printf "%s%s at %s s", n++ ? ", " : "", $1, $2 }' downs-why.txt)
echo "endport down events: $(wc -l <downs-why.txt): $(awk '{ print $3 }' downs-why.txt | sort | uniq -c | xargs)" \
	"(host: its link flapped; path: a spine link of its leaf flapped); $(awk '$4 == "true"' downs-why.txt | wc -l) said 'port active'"
echo "  down with its port and path up: ${unexpl:-none}"
jq -r 'select(.kind == "counter_reset") | .node_guid' events.jsonl | sort >resets.txt
echo "counter_reset events by node (a host flapped here is marked *): $(join resets.txt names.txt |
	awk 'NR == FNR { f[$1] = 1; next } { print $2 (($2 in f) ? "*" : "") }' flapped.txt - | sort | uniq -c | xargs)"
echo "notifications received by snmptrapd: $(grep -c '^[0-9]\{4\}-' traps.log || true); by trap: $(grep -o "= OID: $ROOT\.0\.[0-9]*" traps.log | sort | uniq -c | xargs || true)"
jq -c '{stale, local_port_lost, endports, sweeps: {discoveries: .sweeps.discoveries, counter_sweeps: .sweeps.counter_sweeps}, engine: {sent: .engine.sent, timeouts: .engine.timeouts, device_reopens: .engine.device_reopens, device_reopen_failures: .engine.device_reopen_failures}}' <<<"$st" || echo "status: no answer at the end"
first=$(awk '$1 >= 30 && $1 <= 120 { s += $2; n++ } END { print n ? int(s / n) : 0 }' rss.txt)
lastr=$(tail -n 3 rss.txt | awk '{ s += $2; n++ } END { print int(s / n) }')
maxr=$(awk '$2 > m { m = $2 } END { print m + 0 }' rss.txt)
echo "RSS (kB): 30-120 s average $first, last three samples average $lastr, highest $maxr; every 30 s:"
awk '{ printf "%s:%d ", $1, $2 / 1024 } END { print "(s:MB)" }' rss.txt
echo "ibsim attached: $("$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" Attached | grep -c . || true) lines"
# The agent's stop is part of the report: SIGTERM, exit status 0, and
# LeakSanitizer's check at exit.
keep=()
for p in "${pids[@]}"; do [ "$p" = "$agent" ] || keep+=("$p"); done
pids=("${keep[@]}")
rc=dead
if [ $alive = 1 ] && kill -0 "$agent" 2>/dev/null; then
	if stop "$agent"; then
		rc=0
		wait "$agent" || rc=$?
	else
		rc="kill"
	fi
fi
echo "agent: ran to the end: $([ $alive = 1 ] && echo yes || echo no); stop: exit status $rc"
reports=$(cat san/* "$alog" 2>/dev/null | grep -cE 'ERROR: (Address|Leak)Sanitizer|runtime error:' || true)
echo "sanitizer reports: $reports ($(ls san | wc -l) report files)"
cat san/* 2>/dev/null | grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' -A 12 | head -40 || true
echo "agent warnings/errors by kind:"
grep -E '^ibwatchd\[(warn|err)' "$alog" | sed -E 's/[0-9]+/N/g; s/0xN[0-9a-fx]*/0x.../g' | sort | uniq -c | sort -rn | head -20 || true
[ $alive = 1 ] && [ "$rc" = 0 ] && [ "$reports" = 0 ] && [ "$failed" = 0 ] &&
	[ ! -s totals-lost.txt ] && [ ! -s ev-lost.txt ] && [ -z "$unexpl" ] &&
	[ "$nresets" = 0 ]
