#!/bin/bash
# Hostile HTTP on the 32-host fat tree:
#  - malformed requests sent as raw bytes (http_abuse.py): huge URLs and
#    headers, bad methods and versions, garbage, path traversal, bad
#    percent-encodings and UTF-8, parameter floods, bad and huge bodies:
#    each gets a 4xx or its connection closed at once (a parameter flood
#    used to hold its connection for 30 s), never a 5xx, never a file
#    from disk; error bodies are valid problem+json; none of it is
#    logged above debug;
#  - a flood of on-demand pings from 40 client addresses at once, each
#    probe to a port that never answers: at most 16 run (the pinger's bound),
#    the rest get 429, and the MADs sent to the fabric are exactly those
#    probes' tries;
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
check "... and logged none of it above debug" \
	test "$(grep -c '^ibwatchd\[\(warn\|err\)' "agent-$P.log")" = 0

# 2. On-demand ping flood: 40 client addresses, two requests each, all
# at once; each probe is 3 echo requests of 1 s to a port whose
# responder never answers (a real timeout: 504 after 3 s).
: "${FAKE_RESPONDER:?}"
SIM_SET_ISSM=1 spawn node0030 "$FAKE_RESPONDER" silent >silent.log 2>&1 &
silent=$!
pids+=("$silent")
sleep 0.5
curl -s -m 5 "$U/api/v1/status" >before.json
for i in $(seq 2 41); do
	for n in 1 2; do echo "127.0.0.$i"; done
done | xargs -P 80 -I{} curl -s -m 30 --interface {} -o /dev/null -w '%{http_code}\n' \
	"$U/api/v1/ping?target=node0030%20HCA-1&count=3&timeout_ms=1000&method=echo" >flood.txt &
flood=$!
sleep 1
check "the agent answers during the flood" alive
wait $flood
curl -s -m 5 "$U/api/v1/status" >after.json
ran=$(grep -c '^504$' flood.txt)
limited=$(grep -c '^429$' flood.txt)
echo "# answers: $(sort flood.txt | uniq -c | xargs)"
check "80 probes at once: at most 16 run ($ran), the rest get 429 ($limited)" \
	test "$ran" -ge 1 -a "$ran" -le 16 -a $((ran + limited)) = 80
# The agent's own background MADs (its local port check) are answered;
# every MAD that was not is one of the probes' tries.
d() { echo $(( $(jq ".engine.$1" after.json) - $(jq ".engine.$1" before.json) )); }
probes=$(( $(d submitted) - $(d ok) ))
check "the fabric saw only the probes that ran: $probes unanswered MADs ($(d try_timeouts) timed out) for $ran probes of 3" \
	test "$probes" = $((ran * 3)) -a "$(d try_timeouts)" = $((ran * 3))
check "the agent still answers" alive
check "the agent is still running" kill -0 "$agent"

finish
