#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Soak: the agent on the 324-host fat tree for SECONDS (default 600)
# with everything going at once: discovery and counter sweeps every 2 s,
# pings every 500 ms, a watched path traced every second, an snmpd
# master with the subagent, and clients:
#   /metrics every 0.5 s (gzip), /api/v1/ports and /api/v1/status every
#   2 s, an on-demand trace and ping every 2 s, an snmpbulkwalk of the
#   endport table every 10 s (ok: no error, all 324 endports), a host
#   link flapped every 30 s.
# Prints the requests served and failed, the walks, the flaps, the RSS
# every 30 s (first and last minute compared), and the sanitizer
# reports in the agent's log after it stops (a build with
# -DIBW_SANITIZE=ON checks for leaks at exit).
#
#   cmake -S . -B build-asan -DIBW_SANITIZE=ON && cmake --build build-asan -j
#   tests/bench/soak.sh build-asan [SECONDS]
. "$(dirname "$0")/lib.sh"
secs=${2:-600}

if [ -z "${IBW_SIM_DIR:-}" ]; then
	"$build/tests/ibw-fattree" --levels 2 --hosts 324 >"$work/soak-324.net"
	export IBW_SIMGUARD=$build/tests/libibw_simguard.so IBW_TEST_WORK=$work
	# ASan's quarantine holds freed memory back (256 MB by default),
	# which would show as growth; 16 MB keeps the RSS figures honest.
	export ASAN_OPTIONS="verify_asan_link_order=0:quarantine_size_mb=16:suppressions=$top/tests/asan.supp"
	export LSAN_OPTIONS="suppressions=$top/tests/lsan.supp"
	exec "$top/tests/lib/with-fabric.sh" bench_soak "$work/soak-324.net" \
		--sm node0324 -- "$top/tests/bench/soak.sh" "$build" "$secs"
fi

. "$top/tests/lib/tap.sh"
trap stop_started EXIT

rm -f ./*.log ./*.out
SOCK=$PWD/agentx.sock
snmp_port=$(free_port)
cat >snmpd.conf <<EOF
master agentx
agentXSocket $SOCK
rocommunity public 127.0.0.1
EOF
snmpd -f -C -c snmpd.conf -Lf snmpd.log -p snmpd.pid -I -ifTable,ipAddressTable,ipv6 \
	"udp:127.0.0.1:$snmp_port" >/dev/null 2>&1 &
pids+=($!)
# The agent connects to the master at start: have it listening first.
for _ in $(seq 1 100); do
	snmpget -v2c -c public -t 0.2 -r 0 "127.0.0.1:$snmp_port" .1.3.6.1.2.1.1.3.0 >/dev/null 2>&1 && break
	sleep 0.1
done
P=$(free_port)
spawn node0001 "$build/agent/ibwatchd" --no-state-file --http "127.0.0.1:$P" \
	--agentx "$SOCK" --discovery-interval 2 --counter-interval 2 --ping-interval-ms 500 \
	--watch-path "node0200 HCA-1" --trace-interval 1 >agent.out 2>agent.log &
agent=$!
pids+=($agent)
U=http://127.0.0.1:$P
for _ in $(seq 1 300); do
	st=$(curl -s -m 5 "$U/api/v1/status" 2>/dev/null) || true
	[ -n "$st" ] && jq -e '.sweeps.counter_sweeps >= 1 and .endports.up == 324' <<<"$st" >/dev/null && break
	sleep 0.2
done
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$agent/status"; }
export MIBS="" MIBDIRS=""
ROOT=.1.3.6.1.4.1.32473

# Each client loop counts its answers by status in its own file.
client() { # name period url [curl args]
	local name=$1 period=$2 url=$3; shift 3
	while [ ! -e stop.flag ]; do
		curl -s -m 10 -o /dev/null -w '%{http_code}\n' "$@" "$url" >>"c-$name.txt" || echo 000 >>"c-$name.txt"
		sleep "$period"
	done
}
client metrics 0.5 "$U/metrics" -H 'Accept-Encoding: gzip' &
client ports 2 "$U/api/v1/ports" &
client status 2 "$U/api/v1/status" &
client trace 2 "$U/api/v1/trace?source=node0002%20HCA-1&target=node0300%20HCA-1" &
client ping 2 "$U/api/v1/ping?target=node0150%20HCA-1&count=3" &
(while [ ! -e stop.flag ]; do
	# complete: no error, and all 324 endports in the port GUID and
	# state columns (always there; other columns are sparse)
	if snmpbulkwalk -v2c -c public -t 5 -r 0 -Cr50 -On "127.0.0.1:$snmp_port" "$ROOT.1.4" >walk.out 2>walk.err &&
		[ ! -s walk.err ] && [ "$(grep -c "^$ROOT\.1\.4\.1\.3\." walk.out)" = 324 ] &&
		[ "$(grep -c "^$ROOT\.1\.4\.1\.7\." walk.out)" = 324 ]; then
		echo ok >>c-walk.txt
	else
		echo fail >>c-walk.txt
	fi
	sleep 10
done) &
(n=0; while [ ! -e stop.flag ]; do
	sleep 15; [ -e stop.flag ] && break
	sim 'Unlink "node0100"[1]'; sleep 15
	sim 'Relink "node0100"[1]'; n=$((n + 1)); echo "$n" >flaps.txt
done) &

t0=$(date +%s)
echo "soak: ${secs} s, agent PID $agent, RSS every 30 s (kB):"
: >rss.txt
while [ $(($(date +%s) - t0)) -lt "$secs" ]; do
	kill -0 "$agent" || { echo "soak: the agent died"; break; }
	echo "$(($(date +%s) - t0)) $(rss)" | tee -a rss.txt
	sleep 30
done
touch stop.flag
sleep 12
st=$(curl -s -m 5 "$U/api/v1/status")
echo "end: $(rss) kB"
count() { sort "$1" | uniq -c | xargs; }
for c in metrics ports status trace ping walk; do
	echo "$c: $(count "c-$c.txt")"
done
echo "link flaps: $(cat flaps.txt 2>/dev/null || echo 0)"
jq -c '{sweeps: {discoveries: .sweeps.discoveries, counter_sweeps: .sweeps.counter_sweeps}, endports, engine: {sent: .engine.sent, timeouts: .engine.timeouts}}' <<<"$st"
events=$(curl -s -m 5 "$U/api/v1/events?since=0" | jq '[.events[] | select(.kind == "endport_state")] | length')
echo "endport events: $events"
# After the first minute (the fabric, the caches and the allocator's
# pools are in place by then) against the last three samples.
first=$(awk '$1 >= 30 && $1 <= 90 { s += $2; n++ } END { print n ? int(s / n) : 0 }' rss.txt)
last=$(tail -n 3 rss.txt | awk '{ s += $2; n++ } END { print int(s / n) }')
max=$(awk '$1 >= 30 && $2 > m { m = $2 } END { print m + 0 }' rss.txt)
echo "RSS: 30-90 s average $first kB, last three samples average $last kB, highest after 30 s $max kB"
# How the agent stopped is part of the report: stop returns 1 when
# SIGTERM was not enough and it had to SIGKILL (under set -e that would
# end the script before its report, hence the if).
keep=()
for p in "${pids[@]}"; do [ "$p" = "$agent" ] || keep+=("$p"); done
pids=("${keep[@]}")
if stop "$agent"; then
	rc=0
	wait "$agent" || rc=$?
	echo "agent stop: SIGTERM, exit status $rc"
else
	rc=kill
	wait "$agent" 2>/dev/null || true
	echo "agent stop: still running 5 s after SIGTERM, SIGKILLed"
fi
reports=$(grep -cE 'ERROR: (Address|Leak)Sanitizer|runtime error:' agent.log || true)
echo "sanitizer reports in the agent's log: $reports"
grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' -A 12 agent.log | head -60 || true
echo "agent warnings/errors: $(grep -cE '^ibwatchd\[(warn|err)' agent.log || true)"
grep -E '^ibwatchd\[(warn|err)' agent.log | sort | uniq -c | sort -rn | head -10 || true
# A stop that was not clean fails the soak, after the report.
[ "$rc" = 0 ]
