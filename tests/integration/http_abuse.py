#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Malformed and hostile HTTP requests, sent as raw bytes (curl would
tidy them up). For each case prints one line:

    NAME STATUS BYTES CONTENT_TYPE JSON_OK LEAK

STATUS is the answer's status code, "closed" when the server closed
the connection without one, or "silent" when it did neither within 2 s
(the connection would hold a slot until the server's idle timeout); JSON_OK says whether a problem+json body
parses; LEAK says whether the body holds something a path traversal
would show ("root:" from /etc/passwd). Usage: http_abuse.py HOST PORT
"""
import json
import socket
import sys
import time

host, port = sys.argv[1], int(sys.argv[2])


def req(line, headers=("Host: 127.0.0.1", "Connection: close"), body=b""):
    head = line + "\r\n" + "".join(h + "\r\n" for h in headers) + "\r\n"
    return head.encode("latin-1") + body


CASES = [
    ("huge_url", req("GET /api/v1/ports?" + "a" * 100000 + " HTTP/1.1")),
    ("huge_path", req("GET /" + "x/" * 50000 + " HTTP/1.1")),
    ("huge_header", req("GET /api/v1/status HTTP/1.1",
                        ("Host: 127.0.0.1", "Connection: close",
                         "X-Big: " + "b" * 100000))),
    ("many_headers", req("GET /api/v1/status HTTP/1.1",
                         ["Host: 127.0.0.1", "Connection: close"] +
                         ["X-H%d: v" % i for i in range(5000)])),
    ("bad_method", req("BREW /api/v1/status HTTP/1.1")),
    ("delete", req("DELETE /api/v1/status HTTP/1.1")),
    ("lowercase_method", req("get /api/v1/status HTTP/1.1")),
    ("bad_version", req("GET /api/v1/status HTTP/9.9")),
    ("no_version", req("GET /api/v1/status")),
    ("garbage", b"\x00\xff\xfe\x01garbage\x7f\r\n\r\n"),
    ("no_host", req("GET /api/v1/status HTTP/1.1", ("Connection: close",))),
    ("traversal_plain", req("GET /../../../../etc/passwd HTTP/1.1")),
    ("traversal_api", req("GET /api/v1/../../../etc/passwd HTTP/1.1")),
    ("traversal_encoded", req("GET /%2e%2e/%2e%2e/%2e%2e/etc/passwd HTTP/1.1")),
    ("traversal_node", req("GET /api/v1/nodes/..%2f..%2f..%2fetc%2fpasswd HTTP/1.1")),
    ("traversal_metrics", req("GET /metrics/../../../../etc/passwd HTTP/1.1")),
    ("traversal_double_slash", req("GET //etc/passwd HTTP/1.1")),
    ("bad_percent", req("GET /api/v1/nodes/%ZZ HTTP/1.1")),
    ("nul_in_query", req("GET /api/v1/ports?type=%00switch HTTP/1.1")),
    ("truncated_percent", req("GET /api/v1/ports?type=% HTTP/1.1")),
    ("bad_utf8_target", req("GET /api/v1/trace?target=%FF%FE%80 HTTP/1.1")),
    ("bad_utf8_ping", req("GET /api/v1/ping?target=%C3%28 HTTP/1.1")),
    ("param_flood", req("GET /api/v1/ports?" +
                        "&".join("type=ca" for _ in range(3000)) + " HTTP/1.1")),
    ("param_flood_distinct", req("GET /api/v1/status?" +
                                 "&".join("p%d=%d" % (i, i) for i in range(3000)) +
                                 " HTTP/1.1")),
    ("chunked_huge", req("GET /api/v1/status HTTP/1.1",
                         ("Host: 127.0.0.1", "Transfer-Encoding: chunked", "Connection: close"),
                         b"FFFFFFFFFFFFFFFF\r\n" + b"z" * 1000)),
    ("length_negative", req("GET /api/v1/status HTTP/1.1",
                            ("Host: 127.0.0.1", "Content-Length: -1", "Connection: close"))),
    ("length_huge", req("GET /api/v1/status HTTP/1.1",
                        ("Host: 127.0.0.1", "Content-Length: 99999999999999999999", "Connection: close"))),
    ("post_flood", req("POST /api/v1/ping HTTP/1.1",
                       ("Host: 127.0.0.1", "Content-Length: 200000", "Connection: close"),
                       b"target=1&" * 22222)),
]


def send(data):
    # An answer comes at once (Connection: close); the connection stays
    # open for writing, as a client waiting for its answer would.
    s = socket.create_connection((host, port), timeout=2)
    try:
        try:
            s.sendall(data)
        except OSError:
            pass  # the server may answer and close before reading it all
        buf = b""
        deadline = time.time() + 2
        while True:
            if time.time() >= deadline:
                return buf, False
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                return buf, True
            except socket.timeout:
                return buf, False
            if not chunk:
                return buf, True
            buf += chunk
    finally:
        s.close()


for name, data in CASES:
    if len(sys.argv) > 3 and name not in sys.argv[3:]:
        continue
    resp, closed = send(data)
    status, ctype, body = "closed" if closed else "silent", "-", b""
    if resp.startswith(b"HTTP/"):
        head, _, body = resp.partition(b"\r\n\r\n")
        status = head.split(b" ")[1].decode()
        for h in head.split(b"\r\n")[1:]:
            k, _, v = h.partition(b":")
            if k.strip().lower() == b"content-type":
                ctype = v.strip().decode().split(";")[0]
    json_ok = "-"
    if ctype == "application/problem+json":
        try:
            j = json.loads(body)
            json_ok = "yes" if j.get("status") == int(status) and j.get("detail") else "no"
        except ValueError:
            json_ok = "no"
    leak = "leak" if b"root:" in body else "clean"
    print(name, status, len(body), ctype, json_ok, leak, flush=True)
