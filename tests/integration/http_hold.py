#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Hold N connections to HOST:PORT from SRC: even ones send nothing, odd
ones trickle a request line a byte every half second. Writes "open N" to
READY once all are connected, then waits until the server has closed
every one (or GIVEUP seconds pass) and prints "closed N"."""
import select, socket, sys, time

src, host, port, n, ready, giveup = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), sys.argv[5], float(sys.argv[6])
line = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4096
conns = []
for i in range(n):
    s = socket.socket()
    s.bind((src, 0))
    s.connect((host, port))
    s.setblocking(False)
    conns.append([s, i % 2, 0])
with open(ready, "w") as f:
    f.write("open %d\n" % len(conns))
closed = 0
end = time.monotonic() + giveup
while conns and time.monotonic() < end:
    r, _, _ = select.select([c[0] for c in conns], [], [], 0.5)
    for c in list(conns):
        s = c[0]
        gone = False
        if s in r:
            try:
                gone = s.recv(65536) == b""
            except OSError:
                gone = True
        if not gone and c[1]:
            try:
                s.send(line[c[2]:c[2] + 1])
                c[2] = (c[2] + 1) % len(line)
            except OSError:
                gone = True
        if gone:
            s.close()
            conns.remove(c)
            closed += 1
print("closed %d" % closed)
