#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Drive a steady data rate on simulated ports through ibsim's console.

    drive_rate.py CONSOLE SECONDS BYTES_PER_S 'NODE[PORT]'...

Every 50 ms, for SECONDS (at most 3600), sets each port's
PortCountersExtended.PortXmitData and PortRcvData (which count 4-octet
words) to where a link carrying BYTES_PER_S since the start would have
them, on top of their values at start (read with perfquery by the
caller and given as NODE[PORT]=XMIT_WORDS,RCV_WORDS, or 0 when left
out). Writes the start time (Unix seconds) to stdout first. The console
is ibsim's console FIFO (tests/lib/simfabric.sh keeps it open for
reading, so opening it for writing never blocks).
"""
import sys
import time


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    console, secs, rate = argv[1], min(float(argv[2]), 3600.0), float(argv[3])
    ports = []
    for spec in argv[4:]:
        name, _, base = spec.partition('=')
        x, _, r = base.partition(',')
        ports.append((name, int(x or 0), int(r or 0)))
    words_per_s = rate / 4.0
    with open(console, 'w', buffering=1) as f:
        t0 = time.time()
        print(f'{t0:.3f}', flush=True)
        end = t0 + secs
        n = 0
        while True:
            now = time.time()
            if now >= end:
                break
            w = int(words_per_s * (now - t0))
            for name, bx, br in ports:
                node, _, port = name.partition('[')
                f.write(f'PerformanceSet "{node}"[{port} '
                        f'PortCountersExtended.PortXmitData={bx + w}\n')
                f.write(f'PerformanceSet "{node}"[{port} '
                        f'PortCountersExtended.PortRcvData={br + w}\n')
            n += 1
            time.sleep(max(0.0, t0 + n * 0.05 - time.time()))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
