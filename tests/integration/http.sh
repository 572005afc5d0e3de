#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The HTTP endpoint on the 324-host fat tree, with curl, promtool, a real
# Prometheus and Nagios' check_http: every endpoint, values equal to
# perfquery and ibtracert, on-demand trace and ping, each error status
# as problem+json, the token and TLS paths, and /healthz going critical
# when the local link goes; infiniband_exporter's recording rule evaluated
# by Prometheus against the uplink info, compared with ibnetdiscover.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree http 324

trap stop_started EXIT

start_agent node0001 --no-state-file --discovery-interval 1 --counter-interval 1 \
	--ping-interval-ms 500 --watch-path "node0100 HCA-1" --trace-interval 1 ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
get() { curl -s -m 20 -o body.json -w '%{http_code} %{content_type}' "$@"; }
for _ in $(seq 1 100); do
	[ "$(curl -s -m 20 -o /dev/null -w '%{http_code}' "$U/healthz")" = 200 ] && break
	sleep 0.1
done

# Every endpoint.
r=$(get "$U/healthz"); check "/healthz is 200 on a healthy fabric" [ "${r%% *}" = 200 ]
r=$(get "$U/api/v1/status"); check "/api/v1/status" jq -e '.fabric.nodes == 360 and .fabric.switches == 36 and .fabric.links == 648 and .local_port_state == "active"' body.json
r=$(get "$U/api/v1/nodes"); check "/api/v1/nodes: 360" jq -e 'length == 360' body.json
g=$(jq -r '.[] | select(.name == "leaf01") | .guid' body.json)
r=$(get "$U/api/v1/nodes/$g"); check "/api/v1/nodes/{guid}" jq -e '.name == "leaf01" and (.ports | length) == 37' body.json
r=$(get "$U/api/v1/ports?type=ca"); check "/api/v1/ports?type=ca: 324" jq -e 'length == 324' body.json
r=$(get "$U/api/v1/ports?type=switch&state=active"); # port 0 of each switch, and 648 links less the 324 that end at a host
check "/api/v1/ports?type=switch&state=active" jq -e 'length == 36 + 2 * 648 - 324' body.json
for _ in $(seq 1 50); do r=$(get "$U/api/v1/endports"); jq -e '[.[] | select(.state == "up")] | length == 324' body.json >/dev/null && break; sleep 0.2; done
check "/api/v1/endports: all 324 up" jq -e '[.[] | select(.state == "up")] | length == 324' body.json
r=$(get "$U/api/v1/events"); check "/api/v1/events" jq -e 'has("last_seq") and (.events | type == "array")' body.json
r=$(get "$U/api/v1/traces"); check "/api/v1/traces: the watched path" jq -e '.[0].target == "node0100 HCA-1" and .[0].last.status == "ok"' body.json

# Values equal perfquery's.
"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" 'PerformanceSet "node0007"[1] PortCounters.SymbolErrorCounter=1234' >/dev/null
n7=$(curl -s -m 20 "$U/api/v1/nodes" | jq -r '.[] | select(.name == "node0007 HCA-1") | .guid')
l7=$(curl -s -m 20 "$U/api/v1/nodes/$n7" | jq -r '.lid')
for _ in $(seq 1 50); do
	curl -s -m 20 "$U/api/v1/ports?guid=$n7" >p7.json
	jq -e '.[0].counters.raw.SymbolErrorCounter == 1234' p7.json >/dev/null && break
	sleep 0.2
done
pq=$(at node0001 perfquery "$l7" 1)
pg7=$(jq -r '.[0].guid' p7.json) # its port's GUID: /metrics' name of it
same=1
for f in SymbolErrorCounter LinkErrorRecoveryCounter LinkDownedCounter PortRcvErrors VL15Dropped PortXmitDiscards; do
	[ "$(jq ".[0].counters.raw.$f" p7.json)" = "$(sed -n "s/^$f:\.*//p" <<<"$pq")" ] || same=0
done
check "/api/v1/ports counters equal perfquery's (SymbolErrorCounter 1234)" \
	[ $same = 1 -a "$(sed -n 's/^SymbolErrorCounter:\.*//p' <<<"$pq")" = 1234 ]
# ?errors=1 lists the ports whose error counters went up in the last
# sweep: with a sweep a second the 1234 above may be a sweep old by now,
# so raise it once more and look until a sweep has read it.
"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" 'PerformanceSet "node0007"[1] PortCounters.SymbolErrorCounter=1300' >/dev/null
for _ in $(seq 1 50); do
	curl -s -m 20 "$U/api/v1/ports?errors=1" >perr.json
	jq -e --arg g "$n7" '[.[] | select(.node_guid == $g)] | length == 1' perr.json >/dev/null && break
	sleep 0.1
done
check "... and the port is listed with ?errors=1 after it counted more" jq -e --arg g "$n7" '[.[] | select(.node_guid == $g)] | length == 1' perr.json

# On demand: a trace between two named hosts equals ibtracert's; a ping.
r=$(get "$U/api/v1/trace?source=node0002%20HCA-1&target=node0200%20HCA-1")
ours=$(jq -r '.hops[] | "\(.node_guid) \(.in_port) \(.out_port)"' body.json)
l2=$(curl -s -m 20 "$U/api/v1/ports?type=ca" | jq -r '.[] | select(.node_name == "node0002 HCA-1") | .lid')
l200=$(curl -s -m 20 "$U/api/v1/ports?type=ca" | jq -r '.[] | select(.node_name == "node0200 HCA-1") | .lid')
ref=$(at node0001 ibtracert "$l2" "$l200" | awk '/^\[/ { match($0, /^\[[0-9]+\]/); o = substr($0, 2, RLENGTH - 2); print o }' | xargs)
echo "# ours: $(jq -r '[.hops[:-1][].out_port] | join(" ")' body.json) ibtracert $l2 $l200: $ref"
check "/api/v1/trace between two named hosts equals ibtracert (${r%% *})" \
	test "${r%% *}" = 200 -a -n "$ref" -a "$(jq -r '[.hops[:-1][].out_port] | join(" ")' body.json)" = "$ref"
r=$(get "$U/api/v1/ping?target=node0050%20HCA-1&count=3&method=pma")
check "/api/v1/ping" jq -e '.received == 3 and .method == "pma"' body.json

# The server's threads and the probe loop at once: four clients scrape,
# render, trace and ping until two more counter sweeps (one a second)
# are done. The traces and pings are handed over to the loop and
# answered from it. (Under ThreadSanitizer a data race aborts the agent:
# it would then stop answering here.)
storm() { # storm MAX-ROUNDS CURL-ARGS -- URL...: a status code a line
	local n=$1 i=0 u args=(); shift
	while [ "$1" != -- ]; do args+=("$1"); shift; done; shift
	while [ ! -e storm.stop ] && [ $i -lt "$n" ]; do
		i=$((i + 1))
		for u in "$@"; do
			# on-demand probes from 8 addresses: 8 budgets of 60
			curl -s -m 20 "${args[@]/@N/$((10 + i % 8))}" -o /dev/null \
				-w '%{http_code}\n' "$u"
		done
	done
}
sweeps() { curl -s -m 20 "$U/api/v1/status" | jq '.sweeps.counter_sweeps'; }
rm -f storm.stop
s0=$(sweeps)
storm 1000 --compressed -- "$U/metrics" "$U/api/v1/status" >storm1.txt & sp1=$!
storm 1000 -- "$U/metrics" "$U/api/v1/ports" "$U/api/v1/events" >storm2.txt & sp2=$!
storm 200 --interface 127.0.0.@N -- "$U/api/v1/trace?target=node0200%20HCA-1" \
	"$U/api/v1/ping?target=node0100%20HCA-1&count=2&method=pma" >storm3.txt & sp3=$!
storm 200 --interface 127.0.1.@N -- "$U/api/v1/trace?source=node0002%20HCA-1&target=node0300%20HCA-1" \
	"$U/api/v1/ping?target=node0007%20HCA-1&count=2" >storm4.txt & sp4=$!
for _ in $(seq 1 300); do
	s1=$(sweeps)
	[ "${s1:-0}" -ge $((s0 + 2)) ] && break
	sleep 0.2
done
touch storm.stop
wait $sp1 $sp2 $sp3 $sp4
all=$(cat storm[1-4].txt | wc -l) n200=$(cat storm[1-4].txt | grep -c '^200$')
echo "# concurrent: $n200 of $all answers 200 ($(wc -l <storm3.txt) + $(wc -l <storm4.txt) on demand); counter sweeps $s0 -> $s1"
check "scrapes, traces and pings from four clients at once: all $all answered 200 ($n200)" \
	test "$all" -gt 0 -a "$n200" = "$all" -a -s storm3.txt -a -s storm4.txt
check "... while two counter sweeps ran ($s0 -> $s1)" test "$s1" -ge $((s0 + 2))
check "... and the agent is still running" kill -0 "${pids[0]}"

# Errors: problem+json with the right status.
problem() { # expected-status curl-args...
	local want=$1 r; shift
	r=$(get "$@")
	[ "${r%% *}" = "$want" ] && [ "${r#* }" = application/problem+json ] &&
		jq -e --argjson s "$want" '.status == $s and (.detail | length > 0)' body.json >/dev/null
}
check "400 on a bad parameter" problem 400 "$U/api/v1/ports?type=router"
check "400 on a bad GUID" problem 400 "$U/api/v1/nodes/0xzz"
check "404 on an unknown path" problem 404 "$U/api/v1/nope"
check "404 on an unknown node" problem 404 "$U/api/v1/nodes/0x0000000000000bad"
check "404 on an unknown trace target" problem 404 "$U/api/v1/trace?target=no-such-node"
check "405 on POST" problem 405 -X POST "$U/api/v1/status"
head -c 100000 /dev/zero >big.bin
check "413 on a large body" problem 413 --data-binary @big.bin "$U/api/v1/status"
g300=$(curl -s -m 20 "$U/api/v1/ports?type=ca" | jq -r '.[] | select(.node_name == "node0300 HCA-1") | .node_guid')
"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" 'Unlink "node0300"[1]' >/dev/null
check "504 on a ping nobody answers, with the result" problem 504 "$U/api/v1/ping?target=node0300%20HCA-1&count=2&method=pma&timeout_ms=50"
check "... carrying the probes" jq -e '.ping.sent == 2 and .ping.received == 0' body.json
# Once a discovery has lost it, its name still names it at its last LID.
gone300() { curl -s -m 20 "$U/api/v1/nodes/$g300" | jq -e '.gone' >/dev/null; }
for _ in $(seq 1 100); do
	gone300 && break
	sleep 0.1
done
gone_and_504() {
	gone300 && problem 504 "$U/api/v1/ping?target=node0300%20HCA-1&count=1&method=pma&timeout_ms=50"
}
check "... and still 504 once a discovery marked it gone" gone_and_504
"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" 'Relink "node0300"[1]' >/dev/null
# The per-address budget is a token bucket of 60 probes, refilled at one
# a second. From an address that asked nothing yet, 70 probes one after
# the other: the first 60 run, then one more for each second the flood
# has lasted, and every other one gets 429.
t0=$(date +%s%N)
for _ in $(seq 1 70); do
	curl -s -m 20 --interface 127.0.0.9 -o /dev/null -w '%{http_code}\n' "$U/api/v1/ping?target=node0050%20HCA-1&count=1&method=pma"
done >flood.txt
secs=$((($(date +%s%N) - t0 + 999999999) / 1000000000))
ok200=$(grep -c '^200$' flood.txt) n429=$(grep -c '^429$' flood.txt)
check "429 once a client floods on-demand probes: $ok200 run (60 + at most $secs refilled in $secs s), $n429 refused" \
	test "$ok200" -ge 60 -a "$ok200" -le $((60 + secs)) -a $((ok200 + n429)) = 70 -a "$n429" -ge 1
check "the agent still serves after all that" [ "$(curl -s -m 20 -o /dev/null -w '%{http_code}' "$U/api/v1/status")" = 200 ]

# promtool and a real Prometheus.
curl -s -m 20 "$U/metrics" >metrics.txt
out=$(promtool check metrics <metrics.txt 2>&1); rc=$?
check "promtool check metrics reports nothing" test $rc = 0 -a -z "$out"
check "down ports are exported with their state" grep -q '^ibwatch_switch_port_state{.*} 1$' metrics.txt
# The agent sweeps every second: values move between two scrapes, the
# series (names and labels) do not, unless the fabric changed between
# them (a port the test unlinked coming back): then the pair is taken
# again, at most 5 times.
same_series() {
	python3 -c 'import gzip, sys
key = lambda t: [l.rsplit(" ", 1)[0] for l in t.splitlines()]
a = key(gzip.decompress(open("metrics.gz", "rb").read()).decode())
b = key(open("plain.txt").read())
sys.exit(a != b or len(a) < 1000)'
}
for _ in 1 2 3 4 5; do
	curl -s -m 20 "$U/metrics" >plain.txt
	curl -s -m 20 -H 'Accept-Encoding: gzip' -D gz.hdr -o metrics.gz "$U/metrics"
	same_series && break
done
check "gzip when the scraper asks (Prometheus does): the same text, $(stat -c %s metrics.gz) bytes for $(stat -c %s plain.txt)" \
	same_series
check "... marked Content-Encoding: gzip" grep -qi '^content-encoding: gzip' gz.hdr
r=$(curl -s -m 20 -H 'Accept: application/openmetrics-text; version=1.0.0' -o om.txt -w '%{content_type}' "$U/metrics")
check "OpenMetrics when the scraper asks for it" test "${r%%;*}" = application/openmetrics-text -a "$(tail -n1 om.txt)" = "# EOF"
# The recording rule of infiniband_exporter's examples/infiniband.rules,
# as its users run it: a counter's rate joined with the uplink info.
cat >exporter.rules.yml <<'YML'
groups:
- name: infiniband-record
  rules:
  - record: infiniband:switch_port_transmit_data_bytes:rate5m
    expr: rate(infiniband_switch_port_transmit_data_bytes_total[5m]) * on(guid,port) group_left(switch, host, uplink, uplink_port) infiniband_switch_uplink_info
YML
check "promtool accepts the exporter's rule" promtool check rules exporter.rules.yml
for try in 1 2 3; do
	pp=$((20000 + (RANDOM % 20000)))
	cat >prometheus.yml <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: ['exporter.rules.yml']
scrape_configs:
  - job_name: ibwatch
    static_configs:
      - targets: ['127.0.0.1:$P']
YML
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
val=""
for _ in $(seq 1 100); do
	val=$(curl -s "http://127.0.0.1:$pp/api/v1/query" \
		--data-urlencode "query=infiniband_hca_port_symbol_error_total{guid=\"$pg7\",port=\"1\"}" |
		jq -r '.data.result[0].value[1] // empty')
	[ -n "$val" ] && break
	sleep 0.2
done
check "Prometheus scrapes /metrics; PromQL gives SymbolErrorCounter $val (1234, then 1300) of node0007's port, by its port GUID $pg7" [ "$val" = 1300 ]

# Issue 19, acceptance 1: the exporter's recording rule gives one result
# per active switch port (648 links, 324 of them to hosts: 972 switch
# ends), each naming the switch, the uplink and its port as
# ibnetdiscover does.
n=""
for _ in $(seq 1 150); do
	curl -s "http://127.0.0.1:$pp/api/v1/query" \
		--data-urlencode 'query=infiniband:switch_port_transmit_data_bytes:rate5m' >rule.json
	n=$(jq '.data.result | length' rule.json)
	[ "$n" = 972 ] && break
	sleep 0.2
done
check "the exporter's recording rule: one result per active switch port ($n of 972)" [ "$n" = 972 ]
at node0001 ibnetdiscover -p >ports.txt 2>/dev/null
check "... each with the switch, uplink and uplink_port ibnetdiscover -p shows" python3 - <<'PY'
import json, re, sys
want = {}
for line in open("ports.txt"):
    m = re.match(r"SW\s+\d+\s+(\d+)\s+(0x[0-9a-f]+)\s.*?-\s+(SW|CA)\s+\d+\s+(\d+)\s+0x[0-9a-f]+\s+\(\s*'(.*)'\s+-\s+'(.*)'\s*\)\s*$", line)
    if m:
        port, guid, _, rport, sw, up = m.groups()
        want[("0x%016x" % int(guid, 16), port)] = (sw, up, rport)
got = {}
for r in json.load(open("rule.json"))["data"]["result"]:
    l = r["metric"]
    got[(l["guid"], l["port"])] = (l["switch"], l["uplink"], l["uplink_port"])
bad = [k for k in want if got.get(k) != want[k]]
print("# ibnetdiscover: %d switch ports with a link; rule results: %d; differing: %d %s"
      % (len(want), len(got), len(bad), bad[:3]))
sys.exit(len(want) != 972 or got != want)
PY

# check_http on /healthz: OK, then CRITICAL with the local link down.
ch=/usr/lib/nagios/plugins/check_http
out=$("$ch" -H 127.0.0.1 -p "$P" -u /healthz); rc=$?
check "check_http /healthz is OK ($out)" [ $rc = 0 ]
"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" 'Unlink "node0001"[1]' >/dev/null
for _ in $(seq 1 50); do
	"$ch" -H 127.0.0.1 -p "$P" -u /healthz >/dev/null; rc=$?
	[ $rc = 2 ] && break
	sleep 0.2
done
out=$("$ch" -H 127.0.0.1 -p "$P" -u /healthz)
check "check_http /healthz is CRITICAL with the local link unlinked ($out)" [ $rc = 2 ]
"$IBW_SIMFABRIC" cmd "$IBW_SIM_DIR" 'Relink "node0001"[1]' >/dev/null

# The token and TLS paths, on a second agent.
echo "s3cret-token" >token
openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 1 \
	-subj /CN=127.0.0.1 >/dev/null 2>&1
p6=$((20000 + (RANDOM % 20000)))
start_agent node0002 --no-state-file --http-token-file token --http-cert cert.pem --http-key key.pem --no-ping \
	--http "[::1]:$p6" || bad "the TLS agent does not start"
T=https://127.0.0.1:$P
for _ in $(seq 1 50); do
	[ "$(curl -sk -m 20 -o /dev/null -w '%{http_code}' "$T/api/v1/status")" = 200 ] && break; sleep 0.1
done
check "TLS: status over https" [ "$(curl -sk -m 20 -o /dev/null -w '%{http_code}' "$T/api/v1/status")" = 200 ]
check "token: 401 without it on an on-demand endpoint" problem 401 -k "$T/api/v1/trace?target=1"
r=$(get -k -H "Authorization: Bearer s3cret-token" "$T/api/v1/trace?target=1")
check "token: 200 with it" [ "${r%% *}" = 200 ]
check "token: a wrong one is refused" problem 401 -k -H "Authorization: Bearer nope" "$T/api/v1/trace?target=1"
check "IPv6: the same agent on [::1]" [ "$(curl -sk -m 20 -o /dev/null -w '%{http_code}' "https://[::1]:$p6/api/v1/status")" = 200 ]
check "token: /metrics needs none (not --http-token-everywhere)" [ "$(curl -sk -m 20 -o /dev/null -w '%{http_code}' "$T/metrics")" = 200 ]

# The page's session (docs/operations.md), over TLS with the token alone:
# the map's sign-in is a form POSTed to /signin, whose cookie holds a
# random session, never the token, and works for trace where the token
# does; the old /?token= sign-in sets nothing.
hdrs() { tr -d '\r' <"$1"; }
r=$(curl -sk -m 20 -D old.hdr -o old.html -w '%{http_code}' "$T/?token=s3cret-token")
check "session: GET /?token= no longer signs in: 400, the form, no cookie ($r)" \
	eval '[ "$r" = 400 ] && grep -q "action=\"/signin\"" old.html && ! grep -qi "^set-cookie" old.hdr'
r=$(curl -sk -m 20 -D bad.hdr -o bad.html -w '%{http_code}' --data-urlencode "token=nope" "$T/signin")
check "session: a wrong token: 401, the form again, no cookie ($r)" \
	eval '[ "$r" = 401 ] && grep -q "Wrong token" bad.html && ! grep -qi "^set-cookie" bad.hdr'
r=$(curl -sk -m 20 -D xs.hdr -o /dev/null -w '%{http_code}' -H "Sec-Fetch-Site: same-site" \
	--data-urlencode "token=s3cret-token" "$T/signin")
check "session: a sign-in from another site's page (another port's): 403, no cookie ($r)" \
	eval '[ "$r" = 403 ] && ! grep -qi "^set-cookie" xs.hdr'
r=$(curl -sk -m 20 -D in.hdr -o /dev/null -w '%{http_code}' -c jar.txt \
	-H "Origin: $T" -H "Sec-Fetch-Site: same-origin" --data-urlencode "token=s3cret-token" "$T/signin")
sc=$(hdrs in.hdr | sed -n 's/^[Ss]et-[Cc]ookie: //p')
sv=$(sed -n 's/^__Host-ibwatch_session=\([^;]*\);.*/\1/p' <<<"$sc")
echo "# Set-Cookie: ${sc/$sv/<session>}"
check "session: the right token POSTed: 303 to / with a __Host- cookie ($r)" \
	eval '[ "$r" = 303 ] && hdrs in.hdr | grep -qx "Location: /" && [ -n "$sv" ]'
check "... Secure, HttpOnly, SameSite=Strict, Path=/, no Domain" \
	eval 'grep -q "; Secure" <<<"$sc" && grep -q "; HttpOnly" <<<"$sc" &&
		grep -q "; SameSite=Strict" <<<"$sc" && grep -q "; Path=/;" <<<"$sc" && ! grep -qi "domain=" <<<"$sc"'
check "... its value is 64 hex digits, not the token nor holding it" \
	eval '[[ "$sv" =~ ^[0-9a-f]{64}$ ]] && [[ "$sv" != *s3cret-token* ]] && ! grep -q s3cret <<<"$sc"'
check "... and it is no bearer token: another service that got it cannot trace" \
	problem 401 -k -H "Authorization: Bearer $sv" "$T/api/v1/trace?target=1"
r=$(get -k -b jar.txt "$T/api/v1/trace?target=1")
check "session: with the cookie alone, trace works (--http-token-file, not everywhere) ($r)" \
	[ "${r%% *}" = 200 ]
r=$(get -k -b jar.txt "$T/api/v1/ping?target=1&count=1")
check "... and ping gets past the token (503: this agent runs --no-ping) ($r)" \
	eval '[ "${r%% *}" = 503 ] && jq -e ".detail | contains(\"--no-ping\")" body.json >/dev/null'
check "... but not on a request another site's page made (Sec-Fetch-Site: same-site)" \
	problem 401 -k -b jar.txt -H "Sec-Fetch-Site: same-site" "$T/api/v1/trace?target=1"
check "... nor from another origin (Origin: https://127.0.0.1:1)" \
	problem 401 -k -b jar.txt -H "Origin: https://127.0.0.1:1" "$T/api/v1/trace?target=1"
check "the old cookie that held the token is no credential" \
	problem 401 -k -b "ibwatch_token=s3cret-token" "$T/api/v1/trace?target=1"
check "a made-up session is none" \
	problem 401 -k -b "__Host-ibwatch_session=$(printf '%064d' 0)" "$T/api/v1/trace?target=1"
r=$(curl -sk -m 20 -D out.hdr -o /dev/null -w '%{http_code}' -b jar.txt -X POST "$T/signout")
check "session: POST /signout: 303, the cookie cleared ($r)" \
	eval '[ "$r" = 303 ] && hdrs out.hdr | grep -q "^[Ss]et-[Cc]ookie: __Host-ibwatch_session=; .*Max-Age=0"'
check "... and the session is over in the agent too" \
	problem 401 -k -b "__Host-ibwatch_session=$sv" "$T/api/v1/trace?target=1"

finish
