#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# HTTP behaviours no other test exercises, on an 8-host fat tree:
#  - HEAD: the GET's status, type and length, and no body;
#  - a method a path does not serve: 405 with an Allow header from the
#    path's row in the route table; an unknown path: 404, any method;
#  - --http-token-everywhere: 401 on every endpoint without the token;
#    the map's address answers the sign-in form; POST /signin sets a
#    session cookie (over plain HTTP: no __Host- prefix, not Secure) that
#    opens every endpoint, and GET /signin stays open;
#  - on-demand traces: reverse=1 against ibtracert run at the
#    destination (and no reverse path without it), a trace whose source
#    does not answer (504 with what was found), timeout_ms honoured (a
#    trace that needs about a second: 504 at 100 ms, 200 at 60 s), and
#    the bound of 8 traces under way (12 at once: 8 run, 4 get 429);
#  - the endpoint list at /api, ibwatch_build_info, and Accept /
#    Accept-Encoding negotiated with q-values (q=0 refuses; 406 when
#    nothing acceptable is served);
#  - /api/v1/ping with pings turned off: 503;
#  - /healthz on an active port whose last good sweep is older than
#    three intervals: 503 "no fresh sweep";
#  - --http-nice: every thread at 0 by default; with --http-nice 19 the
#    threads that served at 19, the probe loop's at 0.
# Slow answers come from the kernel model's latency (IBW_KM_HOP_US, for
# one agent only): directed-route SMPs take 2 x 100 ms per hop there.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree http_more 8

trap stop_started EXIT

# curl to FILE: prints "CODE TYPE"
get() { local f=$1; shift; curl -s -m 30 -o "$f" -w '%{http_code} %{content_type}' "$@"; }
# problem FILE STATUS DETAIL: FILE is problem+json with that status and detail
problem() {
	jq -e --argjson s "$2" --arg d "$3" \
		'.status == $s and .detail == $d and .type == "about:blank"' "$1" >/dev/null
}
# resp R FILE STATUS DETAIL: R (get's "CODE TYPE") and FILE are that problem
resp() { [ "$1" = "$3 application/problem+json" ] && problem "$2" "$3" "$4"; }
# jq -e without printing the result
jt() { jq -e "$@" >/dev/null; }
wait_json() { # URL FILTER: up to 20 s for the JSON at URL to pass FILTER
	for _ in $(seq 1 200); do
		curl -s -m 5 "$1" | jqe "$2" && return 0
		sleep 0.1
	done
	return 1
}

# A: plain, quiet (one discovery, a counter sweep spread over an hour,
# no pings: the snapshot stays the same), 2 s per MAD try.
start_agent node0001 --no-state-file --no-snmp --no-ping --timeout-ms 2000 \
	--discovery-interval 3600 --counter-interval 3600 ||
	{ echo "not ok - agent A does not start"; exit 1; }
A=http://127.0.0.1:$P PA=$P
check "agent A: 14 nodes discovered" wait_json "$A/api/v1/status" '.fabric.nodes == 14'

# 0. The serving threads' priority (--http-nice, default 0): the nice
# value of each of the agent's threads, from /proc (field 19 of stat).
nices() { # PID: "TID NICE" for each thread
	local t
	for t in /proc/"$1"/task/*; do
		echo "${t##*/} $(sed 's/.*) //' "$t/stat" | awk '{ print $17 }')"
	done
}
nices "$agent" >nice-a.txt
echo "# agent A's threads (tid nice): $(paste -sd, nice-a.txt)"
check "--http-nice default: every thread at 0, serving ones too" \
	bash -c '[ -s nice-a.txt ] && awk '"'"'$2 != 0 { exit 1 }'"'"' nice-a.txt'

# 1. HEAD, as raw HTTP: status, Content-Type, Content-Length, body bytes.
head_req() { # PORT PATH
	python3 - "$1" "$2" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
s.sendall(("HEAD %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" % sys.argv[2]).encode())
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
head, _, body = data.partition(b"\r\n\r\n")
lines = head.decode().split("\r\n")
h = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
print(lines[0].split()[1], h.get("content-type", "-"), h.get("content-length", "-"), len(body))
PY
}
r=$(get nodes.json "$A/api/v1/nodes")
n=$(stat -c %s nodes.json)
h=$(head_req "$PA" /api/v1/nodes)
check "HEAD /api/v1/nodes: the GET's status, type and length ($r, $n bytes), no body ($h)" \
	test "$h" = "200 application/json $n 0" -a "$r" = "200 application/json" -a "$n" -gt 1000
h=$(head_req "$PA" /healthz)
check "HEAD /healthz: 200, the 20 bytes of {\"status\": \"ok\"} announced, none sent ($h)" \
	test "$h" = "200 application/json 20 0"
h=$(head_req "$PA" /metrics)
check "HEAD /metrics: 200, Prometheus text, no body ($h)" \
	bash -c '[[ "$1" =~ ^200\ text/plain\;\ version=0\.0\.4\;\ charset=utf-8\ [0-9]+\ 0$ ]]' _ "$h"
r=$(get nope.json "$A/api/v1/nope")
h=$(head_req "$PA" /api/v1/nope)
check "HEAD on an unknown path: 404 problem+json, the GET's length ($(stat -c %s nope.json)), no body ($h)" \
	test "$h" = "404 application/problem+json $(stat -c %s nope.json) 0"

# 1b. A method a path does not serve: 405, its Allow header naming what
# the path's row in the route table serves; an unknown path is 404
# whatever the method, with no Allow header.
# allow FILE: the Allow header's value in the response headers in FILE
allow() { tr -d '\r' <"$1" | sed -n 's/^[Aa][Ll][Ll][Oo][Ww]: //p'; }
r=$(get m405.json -D m405.hdr -X POST "$A/api/v1/status")
check "POST /api/v1/status: 405 problem+json 'only GET and HEAD are served' ($r)" \
	resp "$r" m405.json 405 "only GET and HEAD are served"
check "... with 'Allow: GET, HEAD' ('$(allow m405.hdr)')" test "$(allow m405.hdr)" = "GET, HEAD"
r=$(get d405.json -D d405.hdr -X DELETE "$A/api/v1/nodes/0x0000000000000001")
check "DELETE /api/v1/nodes/{guid} (a path prefix's row): 405, 'Allow: GET, HEAD' ($r, '$(allow d405.hdr)')" \
	test "${r%% *}" = 405 -a "$(allow d405.hdr)" = "GET, HEAD"
r=$(get p404.json -D p404.hdr -X POST "$A/api/v1/nope")
check "POST on an unknown path: 404 problem+json 'no such path' ($r)" \
	resp "$r" p404.json 404 "no such path"
check "... with no Allow header" test -z "$(allow p404.hdr)"
r=$(get g200.json -D g200.hdr "$A/api/v1/status")
check "GET /api/v1/status: 200 with no Allow header ($r)" test "${r%% *}" = 200 -a -z "$(allow g200.hdr)"

# 1c. The landing page, build info and content negotiation with q-values.
r=$(get index.html "$A/api")
check "GET /api: an HTML page ($r) linking every endpoint" \
	bash -c '[ "$1" = "200 text/html; charset=utf-8" ] && for u in /metrics /healthz /api/v1/status /api/v1/nodes /api/v1/ports /api/v1/links /api/v1/endports /api/v1/traces /api/v1/events /api/v1/routes /api/v1/trace /api/v1/ping; do grep -q "href=\"$u\"" index.html || exit 1; done' _ "$r"
metrics_of "$A" >bi.txt
rev=$(git -C "$here/.." rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
check "ibwatch_build_info names this build ($(grep '^ibwatch_build_info' bi.txt))" \
	grep -qx "ibwatch_build_info{version=\"$("$IBWATCHD" --version | grep -o '[0-9][0-9.]*' | head -n1)\",revision=\"$rev\"} 1" bi.txt
# Prometheus' own Accept header: OpenMetrics preferred.
pa='application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
r=$(get om.txt -H "Accept: $pa" "$A/metrics")
check "Prometheus' Accept: OpenMetrics ($r)" test "${r%%;*}" = "200 application/openmetrics-text" -a "$(tail -n1 om.txt)" = "# EOF"
r=$(get om0.txt -H 'Accept: application/openmetrics-text;q=0, text/plain' "$A/metrics")
check "OpenMetrics refused with q=0: text ($r)" test "${r%%;*}" = "200 text/plain"
r=$(get om1.txt -H 'Accept: text/plain;q=0.9, application/openmetrics-text;q=0.2' "$A/metrics")
check "text preferred by q: text ($r)" test "${r%%;*}" = "200 text/plain"
r=$(get om406.json -H 'Accept: text/plain;q=0, application/json' "$A/metrics")
check "/metrics with neither text nor OpenMetrics acceptable: 406 ($r)" \
	resp "$r" om406.json 406 "/metrics is text/plain or application/openmetrics-text"
r=$(get j406.json -H 'Accept: text/html' "$A/api/v1/status")
check "/api/v1/status to a client that takes only HTML: 406 ($r)" \
	resp "$r" j406.json 406 "this path answers application/json"
r=$(get j200.json -H 'Accept: text/html, application/*;q=0.1' "$A/api/v1/status")
check "... JSON through application/*;q=0.1: 200 ($r)" test "$r" = "200 application/json"
# gzip: asked for, refused with q=0, refused through *;q=0.
enc() { curl -s -m 30 -o /dev/null -D - -H "Accept-Encoding: $1" "$A/metrics" | tr -d '\r' | sed -n 's/^[Cc]ontent-[Ee]ncoding: //p'; }
check "Accept-Encoding: gzip;q=0.8: gzip ('$(enc 'gzip;q=0.8')')" test "$(enc 'gzip;q=0.8')" = gzip
check "Accept-Encoding: gzip;q=0: no gzip ('$(enc 'gzip;q=0')')" test -z "$(enc 'gzip;q=0')"
check "Accept-Encoding: identity, *;q=0: no gzip ('$(enc 'identity, *;q=0')')" test -z "$(enc 'identity, *;q=0')"
check "Accept-Encoding: *: gzip ('$(enc '*')')" test "$(enc '*')" = gzip

# 2. Pings turned off: 503.
r=$(get ping.json "$A/api/v1/ping?target=node0005%20HCA-1&count=1")
check "ping with --no-ping: 503 problem+json 'pings are turned off (--no-ping)' ($r)" \
	resp "$r" ping.json 503 "pings are turned off (--no-ping)"

# 3. reverse=1 against ibtracert (forward from here, reverse run at the
# destination), and no reverse path without it.
# ibtracert's hops as "OUT GUID IN" lines (as in trace.sh).
canon_ref() {
	awk '/^From / { match($0, /\{0x[0-9a-f]+\}/); src = substr($0, RSTART + 1, RLENGTH - 2); next }
	     /^\[/ { match($0, /^\[[0-9]+\]/); o = substr($0, 2, RLENGTH - 2)
		     match($0, /\{0x[0-9a-f]+\}\[[0-9]+\]/); s = substr($0, RSTART, RLENGTH)
		     split(s, w, /[{}\[\]]/); print o, (n++ ? prev : src), w[2] "/" w[4]; prev = w[2] }'
}
canon_ours() { # fwd|rev, JSON on stdin
	jq -r --arg p "$1" '(if $p == "rev" then .reverse else . end) | .hops as $h |
		range(0; ($h | length) - 1) as $i |
		"\($h[$i].out_port) \(if $i == 0 then $h[0].node_guid else ($h[$i] | if .type == "switch" then .node_guid else .port_guid end) end) \($h[$i + 1] | if .type == "switch" then .node_guid else .port_guid end)/\($h[$i + 1].in_port)"'
}
r=$(get rev.json "$A/api/v1/trace?target=node0008%20HCA-1&reverse=1")
sl=$(jq -r .source_lid rev.json) dl=$(jq -r .destination_lid rev.json)
ref_f=$(at node0001 ibtracert "$sl" "$dl" 2>/dev/null | canon_ref)
ref_r=$(at node0008 ibtracert "$dl" "$sl" 2>/dev/null | canon_ref)
echo "# reverse: ours $(canon_ours rev <rev.json | xargs), ibtracert $dl $sl at node0008: $(xargs <<<"$ref_r")"
check "trace reverse=1: 200, forward hops equal ibtracert $sl $dl ($r)" \
	test "${r%% *}" = 200 -a -n "$ref_f" -a "$(canon_ours fwd <rev.json)" = "$ref_f"
same_rev() { jt '.reverse.status == "ok" and (.reverse.hops | length) == 5' rev.json && [ -n "$ref_r" ] &&
	[ "$(canon_ours rev <rev.json)" = "$ref_r" ]; }
check "... the reverse path is there, ok, and equals ibtracert $dl $sl run at node0008" same_rev
check "... and paths_differ says whether the reverse is the forward path backwards ($(jq .paths_differ rev.json))" \
	jt '.paths_differ == ([.hops[] | [.node_guid, .in_port, .out_port]] !=
		[.reverse.hops | reverse[] | [.node_guid, .out_port, .in_port]])' rev.json
r=$(get fwd.json "$A/api/v1/trace?target=node0008%20HCA-1")
check "a trace without reverse=1 has no reverse path ($r)" \
	jt '.status == "ok" and .reverse == null and (.hops | length) == 5' fwd.json
r=$(get rev0.json "$A/api/v1/trace?target=node0008%20HCA-1&reverse=0")
check "... nor with reverse=0 ($r)" jt '.status == "ok" and .reverse == null' rev0.json
r=$(get rev2.json "$A/api/v1/trace?target=node0008%20HCA-1&reverse=2")
check "reverse=2: 400 'reverse must be 0 or 1' ($r)" problem rev2.json 400 "reverse must be 0 or 1"

# 4. A trace whose first hop does not answer: node0004 unlinked after
# A's only discovery, traced from. Its NodeInfo goes unanswered for
# 3 tries of 2 s: 504, with the trace found so far.
sim 'Unlink "node0004"[1]'
src="source=node0004%20HCA-1&target=node0008%20HCA-1"
r=$(get t504.json "$A/api/v1/trace?$src")
check "a trace from an unlinked source: 504 problem+json ($r)" \
	test "$r" = "504 application/problem+json"
check "... 'hop 0 did not answer', carrying the trace: status timeout, failed at hop 0 ($(jq -c .detail t504.json))" \
	jt '.status == 504 and (.detail | startswith("hop 0 did not answer: NodeInfo at dr 0,1,4: timeout")) and
		.trace.status == "timeout" and .trace.failed_hop == 0 and .trace.source_lid > 0' t504.json
# 5. Twelve such traces at once (6 s each): 8 run, 4 are refused.
cp=()
for i in $(seq 1 12); do
	curl -s -m 60 -o "c$i.json" -w '%{http_code}\n' "$A/api/v1/trace?$src" >"c$i.code" &
	cp+=($!)
done
wait "${cp[@]}"
codes=$(cat c*.code | sort | uniq -c | xargs)
busy=$(for i in $(seq 1 12); do jq -r .detail "c$i.json"; done | grep -c '^too many traces under way$')
check "12 traces at once: 8 run (504 each), 4 get 429 'too many traces under way' ($codes)" \
	test "$codes" = "4 429 8 504" -a "$busy" = 4
r=$(get after.json "$A/api/v1/trace?target=node0008%20HCA-1")
check "... and once they ended, a trace runs again ($r)" jt '.status == "ok"' after.json
sim 'Relink "node0004"[1]'

# 6. L: directed-route SMPs slowed to 100 ms per hop each way (the
# kernel model, in this agent only), tries of 2 s, sweeps every second.
# A discovery takes about 4 s, so the last good one is older than three
# intervals (3 s) for a while before the next one ends.
IBW_KM_HOP_US=100000 start_agent node0002 --no-state-file --no-snmp --no-ping --timeout-ms 2000 \
	--discovery-interval 1 --counter-interval 1 ||
	{ echo "not ok - agent L does not start"; exit 1; }
L=http://127.0.0.1:$P
# Its first discovery takes seconds: before it ends there is no sweep,
# and the local port's state is not known yet (was: "local port is
# nochange").
r=$(get hz0.json "$L/healthz")
check "/healthz before the first discovery: 503 'no fresh sweep' ($r, $(jq -r .detail hz0.json))" \
	problem hz0.json 503 "no fresh sweep"
fresh=0 stale=0
for _ in $(seq 1 300); do
	r=$(get hz.json "$L/healthz")
	if [ "${r%% *}" = 200 ]; then
		fresh=1
	elif [ $fresh = 1 ] && problem hz.json 503 "no fresh sweep"; then
		stale=1
		break
	fi
	sleep 0.1
done
check "/healthz: 200 after a sweep, then 503 'no fresh sweep' once the last good sweep is 3 intervals old" \
	test $fresh = 1 -a $stale = 1 -a "$r" = "503 application/problem+json"
r=$(get st.json "$L/api/v1/status")
check "... while the local port is active (it is the sweep's age)" \
	jt '.local_port_state == "active" and .local_port_lost == false' st.json

# 7. timeout_ms: the same trace (about 1 s through the slow hops) with
# 100 ms fails at its deadline, with 60 s it completes. The first trace
# on L, so no switch table is cached yet: it waits for 200 ms hops.
to="target=node0008%20HCA-1"
r=$(get dl.json "$L/api/v1/trace?$to&timeout_ms=100")
check "trace timeout_ms=100 through 200 ms hops: 504, 'no result within the deadline' ($r, $(jq -c .detail dl.json))" \
	jt '.status == 504 and .trace.status == "timeout" and .trace.reason == "no result within the deadline"' dl.json
r=$(get ok.json "$L/api/v1/trace?$to&timeout_ms=60000")
check "trace timeout_ms=60000: the same trace completes ($r, $(jq -c '[.status, .duration_ms]' ok.json))" \
	jt '.status == "ok" and (.hops | length) == 5' ok.json
r=$(get big.json "$L/api/v1/trace?$to&timeout_ms=60001")
check "timeout_ms=60001: 400 ($r)" problem big.json 400 "timeout_ms must be a number up to 60000"

# 8. --http-token-everywhere: every endpoint wants the token.
echo "s3cret-token" >token
start_agent node0003 --no-state-file --no-snmp --no-ping --discovery-interval 3600 --counter-interval 3600 \
	--http-token-file token --http-token-everywhere --http-nice 19 ||
	{ echo "not ok - agent T does not start"; exit 1; }
T=http://127.0.0.1:$P
curl -s -m 5 -o /dev/null "$T/healthz"
nices "$agent" >nice-t.txt
echo "# agent T's threads (tid nice): $(paste -sd, nice-t.txt)"
check "--http-nice 19: the probe loop's thread at 0, a serving thread at 19" \
	bash -c 'awk -v p="$1" '"'"'$1 == p && $2 == 0 { m = 1 } $2 == 19 { s = 1 } END { exit !(m && s) }'"'"' nice-t.txt' _ "$agent"
# a 401 problem with the Bearer challenge in hdr.txt
refused() { resp "$@" && tr -d '\r' <hdr.txt | grep -qx 'WWW-Authenticate: Bearer realm="ibwatch"'; }
for u in /metrics /healthz /api/v1/status /api/v1/nodes /api/v1/events; do
	r=$(get tok.json -D hdr.txt "$T$u")
	check "--http-token-everywhere: $u without the token: 401 and a Bearer challenge ($r)" \
		refused "$r" tok.json 401 "a bearer token is required here"
done
r=$(get tok.json -H "Authorization: Bearer wrong-token" "$T/api/v1/status")
check "... with a wrong token: 401 ($r)" problem tok.json 401 "a bearer token is required here"
r=$(get tok.json -H "Authorization: Bearer s3cret-token" "$T/api/v1/status")
check "... with it: /api/v1/status 200 ($r)" jt '.fabric.nodes == 14' tok.json
r=$(get tok.txt -H "Authorization: Bearer s3cret-token" "$T/metrics")
check "... with it: /metrics 200 ($r)" bash -c '[ "${1%% *}" = 200 ] && grep -qE "^ibwatch_local_port_active(\\{fabric=\"[^\"]*\"\\})? 1$" tok.txt' _ "$r"
r=$(get tok.html -D hdr.txt "$T/")
check "... the map's address without it: 401, the sign-in form, no cookie ($r)" \
	bash -c '[ "$1" = "401 text/html; charset=utf-8" ] && grep -q "<form id=\"signin\" method=\"post\" action=\"/signin\">" tok.html &&
		! grep -qi "^set-cookie" hdr.txt' _ "$r"
r=$(get tok.html "$T/signin")
check "... GET /signin needs no token: the form ($r)" test "$r" = "200 text/html; charset=utf-8"
r=$(get tok.html -D hdr.txt -H "Content-Type: application/json" --data '{"token":"s3cret-token"}' "$T/signin")
check "... a sign-in that is no form: 415, no cookie ($r)" \
	bash -c '[ "${1%% *}" = 415 ] && ! grep -qi "^set-cookie" hdr.txt' _ "$r"
r=$(get tok.html -D hdr.txt -H "Origin: http://127.0.0.1:1" --data-urlencode "token=s3cret-token" "$T/signin")
check "... a sign-in whose Origin is another port (another service's page): 403, no cookie ($r)" \
	bash -c '[ "${1%% *}" = 403 ] && ! grep -qi "^set-cookie" hdr.txt' _ "$r"
# Origin https:// for this host and port: a proxy in front that ends TLS
r=$(get tok.html -D hdr.txt -c jar.txt -H "Origin: https://127.0.0.1:$P" --data-urlencode "token=s3cret-token" "$T/signin")
sc=$(tr -d '\r' <hdr.txt | sed -n 's/^[Ss]et-[Cc]ookie: //p')
check "... POST /signin: 303 and an HttpOnly, SameSite=Strict session cookie, not Secure over HTTP ($r)" \
	bash -c '[ "${1%% *}" = 303 ] && [[ "$2" =~ ^ibwatch_session=[0-9a-f]{64}\;\ Path=/\;\ Max-Age=43200\;\ HttpOnly\;\ SameSite=Strict$ ]]' _ "$r" "$sc"
r=$(get tok.json -b jar.txt "$T/api/v1/status")
check "... the session opens /api/v1/status ($r)" jt '.fabric.nodes == 14' tok.json
r=$(get tok.html -b jar.txt "$T/")
check "... and the map's page ($r)" bash -c '[ "$1" = "200 text/html" ] || [ "$1" = "200 text/html; charset=utf-8" ]' _ "$r"

finish
