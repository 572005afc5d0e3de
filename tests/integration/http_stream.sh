#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Streamed answers, on an 8-host fat tree, with --http-cache-mb 0 so that
# the port and node lists are streamed (written as they are sent) rather
# than rendered whole and kept:
#  - a streamed /api/v1/ports is chunked (no Content-Length), and byte for
#    byte the same over HTTP/1.1, over HTTP/1.0 (sent to the close) and
#    from one request to the next of the same snapshot; it is the port
#    list /api/v1/status counts;
#  - clients that close mid-stream (a small receive buffer, a few bytes
#    read) leave the agent serving, and the next answers whole;
#  - /metrics is kept gzipped only: a plain scrape is inflated as it is
#    sent, with the series of a gzip scrape;
#  - HEAD of a streamed path: 200, no body.
# The bytes of the streamed writer against the whole-document writer and
# the fixture are unit_render's (test_parts_same_bytes).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree http_stream 8

trap stop_started EXIT

# jq -e without printing the result
jt() { jq -e "$@" >/dev/null; }
wait_json() { # URL FILTER: up to 20 s for the JSON at URL to pass FILTER
	for _ in $(seq 1 200); do
		curl -s -m 5 "$1" | jqe "$2" && return 0
		sleep 0.1
	done
	return 1
}

# Quiet: one discovery, a counter sweep spread over an hour, no pings.
start_agent node0001 --no-state-file --no-snmp --no-ping --http-cache-mb 0 \
	--discovery-interval 3600 --counter-interval 3600 ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
check "14 nodes discovered" wait_json "$U/api/v1/status" '.fabric.nodes == 14'

# raw PORT VERSION PATH METHOD: the answer's status, Transfer-Encoding,
# Content-Length and body (de-chunked) into raw.body
raw() {
	python3 - "$@" <<'PY'
import socket, sys
port, ver, path, method = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
s = socket.create_connection(("127.0.0.1", port), timeout=30)
s.sendall(("%s %s HTTP/%s\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
           % (method, path, ver)).encode())
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
head, _, body = data.partition(b"\r\n\r\n")
lines = head.decode().split("\r\n")
h = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
te = h.get("transfer-encoding", "-")
if te == "chunked":
    out, rest = b"", body
    while True:
        size, _, rest = rest.partition(b"\r\n")
        n = int(size.split(b";")[0], 16)
        if n == 0:
            break
        out += rest[:n]
        rest = rest[n + 2:]
    body = out
open("raw.body", "wb").write(body)
print(lines[0].split()[1], te, h.get("content-length", "-"), len(body))
PY
}

# 1. The same bytes three ways; taken again (at most 5 times) when a
# counter read published a new snapshot in between.
same=0
for _ in 1 2 3 4 5; do
	a=$(raw "$P" 1.1 /api/v1/ports GET) && cp raw.body p11.json
	b=$(raw "$P" 1.0 /api/v1/ports GET) && cp raw.body p10.json
	c=$(raw "$P" 1.1 /api/v1/ports GET) && cp raw.body p11b.json
	if cmp -s p11.json p10.json && cmp -s p11.json p11b.json; then
		same=1
		break
	fi
done
n=$(stat -c %s p11.json)
check "HTTP/1.1: 200, chunked, no Content-Length ($a)" \
	bash -c '[[ "$1" =~ ^200\ chunked\ -\ [0-9]+$ ]]' _ "$a"
check "HTTP/1.0: 200, sent to the close, no Content-Length ($b)" \
	bash -c '[[ "$1" =~ ^200\ -\ -\ [0-9]+$ ]]' _ "$b"
check "the same $n bytes over 1.1, 1.0 and 1.1 again" test "$same" = 1
ports=$(curl -s -m 5 "$U/api/v1/nodes" | jq '[.[].ports | length] | add')
check "valid JSON, one element per port of /api/v1/nodes ($ports)" \
	jt --argjson n "$ports" 'length == $n and all(.[]; .node_guid | startswith("0x"))' p11.json
check "... and larger than a part (32 KB), so it came in parts ($n bytes)" \
	test "$n" -gt 65536

# 2. Clients gone mid-stream: a receive buffer of 4 KB and 1 KB read
# before the close, six times on each list, all at once (12: under the
# 16 connections one address may hold).
python3 - "$P" <<'PY'
import socket, sys
port = int(sys.argv[1])
socks = []
for i in range(12):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    path = "/api/v1/ports" if i % 2 else "/api/v1/nodes"
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
    socks.append(s)
for s in socks:
    got = 0
    while got < 1024:
        got += len(s.recv(1024 - got))
for s in socks:
    s.close()
PY
check "after 12 clients closed mid-stream: /healthz answers 200" \
	bash -c '[ "$(curl -s -m 10 -o /dev/null -w "%{http_code}" "$1/healthz")" = 200 ]' _ "$U"
r=$(raw "$P" 1.1 /api/v1/nodes GET)
check "... /api/v1/nodes streams whole ($r)" \
	bash -c '[[ "$1" =~ ^200\ chunked\ -\ [0-9]+$ ]] && jq -e "length == 14" raw.body >/dev/null' _ "$r"
check "... and the agent is alive" kill -0 "$agent"

# 3. /metrics over the budget (here any: 0) is kept gzipped only: a
# plain scrape is inflated as it is sent (chunked), and has the series
# of a gzip scrape.
r=$(raw "$P" 1.1 /metrics GET) && cp raw.body plain.prom
curl -s -m 10 -H 'Accept-Encoding: gzip' -o gz.prom.gz "$U/metrics"
np=$(grep -c '^infiniband_' plain.prom)
ng=$(zcat gz.prom.gz | grep -c '^infiniband_')
check "plain /metrics from the gzip: 200, chunked ($r), $np infiniband_ series as gzip's $ng" \
	bash -c '[[ "$1" =~ ^200\ chunked\ - ]] && [ "$2" = "$3" ] && [ "$2" -gt 100 ] && tail -n 1 plain.prom | grep -q "^ibwatch_"' _ "$r" "$np" "$ng"

# 4. HEAD of a streamed path: the status, no body.
r=$(raw "$P" 1.1 /api/v1/ports HEAD)
check "HEAD /api/v1/ports: 200, no body ($r)" bash -c '[[ "$1" =~ ^200\ .*\ 0$ ]]' _ "$r"

finish
