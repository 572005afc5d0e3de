#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""What Prometheus makes of ibwatchd's counters, by its own arithmetic.

    tests/bench/prom_model.py [COUNTER_INTERVALS] [SETUPS]

A model, not a measurement (tests/bench/prom_rates.sh measures one setup
with the real programs): ibwatchd reads a port every C seconds (counter
interval) at a fixed point of the interval (its place in a sweep spread
over 80% of it), publishes what it read at the next whole second of the
sweep, with a few milliseconds of jitter; a Prometheus scrapes every S
seconds at a random phase and evaluates irate(x[5m]) and rate(x[5m]) every
S seconds at another random phase, with the extrapolation of
promql/functions.go (extrapolatedRate: to the range's edges when the
first and last samples are within 1.1 average spacings of them, else half
a spacing). A steady rate is driven; for each C (default 5,10,30) and S
(10, 15, 30, 60 s), with and without sample timestamps, SETUPS (default
40) random setups of 20 ports over 30 minutes: how many setups have an
irate or rate sample off by more than 5%, and the worst error seen.
"""
import math
import random
import sys


def rate(samples, t, window):
    """Prometheus' rate() of (time, value) samples at t over window."""
    s = [x for x in samples if t - window < x[0] <= t]
    if len(s) < 2:
        return None
    (t0, v0), (t1, v1) = s[0], s[-1]
    sampled = t1 - t0
    avg = sampled / (len(s) - 1)
    to_start, to_end = t0 - (t - window), t - t1
    ext = sampled
    ext += to_start if to_start < avg * 1.1 else avg / 2
    ext += to_end if to_end < avg * 1.1 else avg / 2
    return (v1 - v0) * (ext / sampled) / window


def irate(samples, t, window):
    s = [x for x in samples if t - window < x[0] <= t]
    if len(s) < 2:
        return None
    (ta, va), (tb, vb) = s[-2], s[-1]
    return (vb - va) / (tb - ta)


def setup(rnd, c, s, stamped, duration=1800.0, ports=20):
    """Worst rate and irate error of one setup (the driven rate is 1)."""
    start, scrape0, eval0 = rnd.uniform(0, c), rnd.uniform(0, s), rnd.uniform(0, s)
    worst_r = worst_i = 0.0
    for _ in range(ports):
        offset = rnd.uniform(0, 0.8 * c)
        readings = []  # (time read, value, time visible)
        t = start
        while t < duration + c:
            read = t + offset + rnd.uniform(0, 0.002)
            seen = t + math.ceil(read - t) + rnd.uniform(0, 0.005)
            readings.append((read, read, seen))
            t += c
        stored, last, k, scrape = [], None, 0, scrape0
        while scrape < duration:
            while k < len(readings) and readings[k][2] <= scrape:
                k += 1
            if k:
                read, value, _ = readings[k - 1]
                if not stamped:
                    stored.append((scrape, value, scrape))
                elif last is None or read > last:
                    stored.append((read, value, scrape))
                    last = read
            scrape += s
        t = eval0 + 600
        while t < duration:
            have = [(x[0], x[1]) for x in stored if x[2] <= t]
            r, i = rate(have, t, 300), irate(have, t, 300)
            worst_r = max(worst_r, abs(r - 1))
            worst_i = max(worst_i, abs(i - 1))
            t += s
    return worst_r, worst_i


def main(argv):
    intervals = [float(x) for x in (argv[1] if len(argv) > 1 else '5,10,30').split(',')]
    setups = int(argv[2]) if len(argv) > 2 else 40
    print('| counter interval | scrape | sample times | setups off by >5% | worst rate() | worst irate() |')
    print('|---|---|---|---|---|---|')
    for c in intervals:
        for s in (10, 15, 30, 60):
            for stamped in (False, True):
                rnd = random.Random(1)
                bad, wr, wi = 0, 0.0, 0.0
                for _ in range(setups):
                    r, i = setup(rnd, c, s, stamped)
                    bad += r > 0.05 or i > 0.05
                    wr, wi = max(wr, r), max(wi, i)
                print(f'| {c:g} s | {s} s | {"yes" if stamped else "no"} | '
                      f'{bad}/{setups} | {wr * 100:.1f}% | {wi * 100:.1f}% |')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
