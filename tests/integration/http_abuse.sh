#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Hostile HTTP on the 32-host fat tree:
#  - malformed requests sent as raw bytes (http_abuse.py): huge URLs and
#    headers, bad methods and versions, garbage, path traversal, bad
#    percent-encodings and UTF-8, parameter floods, bad and huge bodies:
#    each gets a 4xx or its connection closed at once (a parameter flood
#    used to hold its connection for 30 s), never a 5xx, never a file
#    from disk; error bodies are valid problem+json; none of it is
#    logged as a warning or an error;
#  - a flood of on-demand pings from 40 client addresses, each probe to
#    a port that never answers: 16 taken at once fill the pinger's
#    bound, and the 64 that come while they run all get 429; the MADs
#    sent to the fabric are exactly those 16 probes' tries;
#  - 200 idle or trickling connections from 127.0.0.2: a scrape from
#    127.0.0.1 still succeeds; the per-address limit and the header
#    deadline close all of them, and the refused ones are logged as one
#    warning, not one each;
#  - through all of it the agent keeps answering.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree http_abuse 32
trap stop_started EXIT

# Quiet sweeps, so that the engine's counters during the probe flood
# are the probes' own.
start_agent node0001 --no-state-file --no-snmp \
	--discovery-interval 3600 --counter-interval 3600 --ping-interval-ms 3600000 \
	--ping-retries 0 || { echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/api/v1/status" | jqe '.fabric.nodes == 44' && break
	sleep 0.1
done
alive() { [ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$U/api/v1/status")" = 200 ]; }

# 1. Malformed requests.
python3 "$here/integration/http_abuse.py" 127.0.0.1 "$P" >abuse.txt
cat abuse.txt | sed 's/^/# /'
expect() { # case allowed-statuses...
	local c=$1 got; shift
	got=$(awk -v c="$c" '$1 == c { print $2 }' abuse.txt)
	for s in "$@"; do [ "$got" = "$s" ] && return 0; done
	return 1
}
check "a 100 kB URL: 414" expect huge_url 414
check "a 100 kB path: 414" expect huge_path 414
check "a 100 kB header: 431" expect huge_header 431
check "5000 headers: 431" expect many_headers 431
check "an unknown method (BREW): 405" expect bad_method 405
check "DELETE: 405" expect delete 405
check "a lowercase method: 405" expect lowercase_method 405
check "HTTP/9.9: 505" expect bad_version 505
check "no HTTP version: 400" expect no_version 400
# A request line that never ends, and a body still to come, wait for the
# rest up to the 30 s idle timeout, like any slow client.
check "binary garbage: 400, closed, or waiting for the rest of the line" expect garbage 400 closed silent
for c in traversal_plain traversal_api traversal_encoded traversal_metrics traversal_double_slash; do
	check "path traversal ($c): 404" expect "$c" 404
done
check "path traversal in a node GUID: 400" expect traversal_node 400
check "no answer carries a file from disk" test "$(awk '$6 != "clean"' abuse.txt | wc -l)" = 0
check "a bad percent-encoding in a GUID: 400" expect bad_percent 400
check "a NUL in a parameter: 400" expect nul_in_query 400
check "a truncated percent-encoding: 400" expect truncated_percent 400
check "a trace target that is not UTF-8: 404, the detail still valid JSON" expect bad_utf8_target 404
check "a ping target that is not UTF-8: 404" expect bad_utf8_ping 404
# libmicrohttpd refuses these (431) and, left alone, would keep the
# connection for its 30 s idle timeout: it must be closed at once.
check "3000 repeated parameters: refused (431) or closed, not left open" expect param_flood 431 closed
check "3000 distinct parameters: refused (431) or closed, not left open" expect param_flood_distinct 431 closed
check "a chunked body claiming 2^64 bytes: refused, or read on" expect chunked_huge 400 413 closed silent
check "Content-Length -1: 400" expect length_negative 400
check "Content-Length 10^20: 413" expect length_huge 413
check "a 200 kB POST: 413" expect post_flood 413
check "no 5xx for any of them" test "$(awk '$2 ~ /^5/ && $2 != 505' abuse.txt | wc -l)" = 0
check "every problem+json body parses, with its status and a detail" \
	test "$(awk '$4 == "application/problem+json" && $5 != "yes"' abuse.txt | wc -l)" = 0
check "the agent still answers" alive
check "... and logged none of it as a warning or an error" \
	test "$(grep -c '^ibwatchd\[\(warn\|err\)' "agent-$P.log")" = 0

# 2. On-demand ping flood: 40 client addresses, two requests each. Each
# probe is 3 echo requests of 2 s to a port whose responder never
# answers (a real timeout: 504 after 6 s; the engine sends at most 4 at
# a time to one port, so the 16 take 24 s). The first 16 (8 addresses)
# go out together and, once all 16 are under way, the other 64: those
# come while the 16 run, so every one of them must get 429, whatever
# the machine's load. Whether the 16 were still running when the 64 were
# answered is checked, not assumed. The 64 go 32 at a time: with the 16
# held, 64 at once could pass the server's 64 connections in all, and
# those past it are closed unanswered (at a load average of 15 some
# were).
: "${FAKE_RESPONDER:?}"
SIM_SET_ISSM=1 spawn node0030 "$FAKE_RESPONDER" silent >silent.log 2>silent.err &
silent=$!
pids+=("$silent")
# Registered on node0030: in the kernel model's registry (ctest loads
# the model), else connected to ibsim.
registered() {
	if [ -n "${IBW_KM_STATE_DIR:-}" ]; then
		grep -q "^$silent " "$IBW_KM_STATE_DIR/agents.node0030" 2>/dev/null
	else
		ls -l "/proc/$silent/fd" 2>/dev/null | grep -q socket
	fi
}
for _ in $(seq 1 100); do registered && break; sleep 0.1; done
check "the silent responder is registered on node0030" registered
curl -s -m 5 "$U/api/v1/status" >before.json
tries=3
probe() { xargs -P "$1" -I{} curl -s -m 30 --interface {} -o /dev/null -w '%{http_code} %{time_total} %{errormsg}\n' \
	"$U/api/v1/ping?target=node0030%20HCA-1&count=$tries&timeout_ms=2000&method=echo"; }
for i in $(seq 2 9); do echo "127.0.0.$i"; echo "127.0.0.$i"; done | probe 16 >first.txt &
first=$!
# The engine's figures are live: 16 echo requests submitted means all
# 16 probes run (the engine sends 4 of them at a time to the one port
# and queues the rest, so "in flight" never reaches 16).
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/api/v1/status" | jqe --argjson b "$(jq .engine.submitted before.json)" \
		'.engine.submitted - $b >= 16' && break
	sleep 0.05
done
check "the agent answers during the flood" alive
for i in $(seq 10 41); do echo "127.0.0.$i"; echo "127.0.0.$i"; done | probe 32 >rest.txt
check "the 64 were all answered while the 16 still ran" kill -0 $first
wait $first
curl -s -m 5 "$U/api/v1/status" >after.json
ran=$(grep -c '^504 ' first.txt)
limited=$(grep -c '^429 ' rest.txt)
echo "# answers: first 16: $(cut -d" " -f1 first.txt | sort | uniq -c | xargs); then 64: $(cut -d" " -f1 rest.txt | sort | uniq -c | xargs)"
check "80 probes: 16 run ($ran timed out as they should), the 64 asked meanwhile get 429 ($limited)" \
	test "$ran" = 16 -a "$limited" = 64
# What reached the fabric: the silent responder counts the echo requests
# it took (it prints the count when it stops).
check "the silent responder stops cleanly" stopped_clean "$silent"
got=$(sed -n 's/^fake_responder: \([0-9]*\) requests$/\1/p' silent.log)
check "the fabric saw only the probes that ran: '$got' echo requests for $ran probes of $tries" \
	test "$got" = $((ran * tries))
# Each of those tries timed out once. The agent's own few background
# MADs in the window (local port checks) are answered at once, but on a
# loaded machine one may miss its 100 ms too: allow those, no more.
d() { echo $(( $(jq ".engine.$1" after.json) - $(jq ".engine.$1" before.json) )); }
bg=$(( $(d submitted) - ran * tries ))
check "... each try timed out once: $(d try_timeouts) try timeouts ($bg background MADs)" \
	test "$(d try_timeouts)" -ge $((ran * tries)) -a "$(d try_timeouts)" -le $((ran * tries + bg))
check "the agent still answers" alive

# 3. 200 connections from 127.0.0.2 that send nothing or trickle their
# request line: the address gets its 16 connections
# (--http-max-per-address), the rest are closed at once, and those 16
# are closed when their headers miss the deadline (the trickle keeps
# the idle timeout from doing it). Meanwhile a scrape from 127.0.0.1
# gets its answer (curl -m is only a give-up bound).
python3 "$here/integration/http_hold.py" 127.0.0.2 127.0.0.1 "$P" 200 hold.ready 60 >hold.out &
hold=$!
for _ in $(seq 1 200); do [ -s hold.ready ] && break; sleep 0.05; done
check "200 connections from 127.0.0.2 are open ($(cat hold.ready 2>/dev/null))" \
	grep -qx "open 200" hold.ready
code=$(curl -s -m 10 -o hold.metrics -w '%{http_code}' "$U/metrics")
check "a scrape from another address succeeds meanwhile ($code)" \
	test "$code" = 200 -a -s hold.metrics
wait $hold
check "the server closed all 200 ($(cat hold.out))" grep -qx "closed 200" hold.out
# libmicrohttpd logs each connection it refuses: one warning, then at
# most one a minute, the rest at debug (184 warnings before).
refused=$(grep -c '^ibwatchd\[warn\] http: .*reached connection limit' "agent-$P.log")
check "the connections refused over the address's limit logged one warning ($refused)" \
	test "$refused" = 1
check "the agent is still running" kill -0 "$agent"

finish
