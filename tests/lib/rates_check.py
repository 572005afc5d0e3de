#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Check the rates a real Prometheus recorded for driven ports.

    rates_check.py URL START END STEP TOLERANCE RECORD GUID/PORT=RATE...

Asks the Prometheus at URL (http://127.0.0.1:PORT) for RECORD (a
recorded series, e.g. infiniband:switch_port_transmit_data_bytes:irate5m)
of each port GUID/PORT from START to END (Unix seconds) every STEP
seconds (query_range), and prints, per port: the samples, the lowest and
highest as a share of RATE (bytes/s), and how many were 0. Exits 1 when
a port has fewer than 5 samples, a sample is 0, or one is off RATE by
more than TOLERANCE (a share: 0.05 is 5%).
"""
import json
import sys
import urllib.parse
import urllib.request


def main(argv):
    if len(argv) < 8:
        print(__doc__, file=sys.stderr)
        return 2
    url, start, end, step, tol, record = argv[1:7]
    tol = float(tol)
    bad = 0
    for spec in argv[7:]:
        port_id, _, rate = spec.partition('=')
        guid, _, port = port_id.partition('/')
        rate = float(rate)
        q = f'{record}{{guid="{guid}",port="{port}"}}'
        args = urllib.parse.urlencode({'query': q, 'start': start,
                                       'end': end, 'step': step})
        with urllib.request.urlopen(f'{url}/api/v1/query_range?{args}',
                                    timeout=30) as r:
            res = json.load(r)['data']['result']
        vals = [float(v) for s in res for _, v in s['values']]
        zeros = sum(1 for v in vals if v == 0)
        lo = min(vals) / rate if vals else 0
        hi = max(vals) / rate if vals else 0
        fail = len(vals) < 5 or zeros or lo < 1 - tol or hi > 1 + tol
        bad += bool(fail)
        print(f'{"BAD" if fail else "ok"} {q}: {len(vals)} samples, '
              f'{lo:.4f} to {hi:.4f} of {rate:.4g}, {zeros} zero')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
