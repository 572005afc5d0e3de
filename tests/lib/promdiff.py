#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Compare ibwatchd's /metrics with infiniband_exporter's, row by row.

    promdiff.py [--allow FILE] [--families PREFIX] EXP_BEFORE IBW EXP_AFTER

Every row (series name and label set) of the exporter's families
(infiniband_*, and process_* by name) must be in ibwatch's exposition
with the same label names and values, and every ibwatch row of those
families must be in the exporter's: a row on one side only is a
difference. Values: a counter (a *_total series) must lie between the
exporter's two readings, taken before and after ibwatch's (the counters
move with the fabric's management traffic); an info, rate or collect
error/timeout gauge must be equal; durations and times are not compared.

--allow FILE names the differences that are documented: lines
"KIND GLOB  reason" with KIND extra (a row ibwatch has and the exporter
does not), missing (the other way round) or value, GLOB an fnmatch
pattern over the row as `name{label="value",...}` with its labels
sorted. The section "Differences from infiniband_exporter" of
docs/api.md is such a file: its table rows "| KIND | `GLOB` ... | reason |"
(one or more globs, each in backquotes).

Prints one line per row compared ("ok", "allowed KIND: ROW -- REASON" or
"DIFF KIND: ROW ..."), then a summary; exits 1 when a difference is not
allowed.
"""
import fnmatch
import re
import sys

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\S+)?\s*$')
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


def parse(path):
    rows = {}
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            if not line or line.startswith('#'):
                continue
            m = SAMPLE.match(line)
            if not m:
                raise SystemExit(f'{path}: cannot parse: {line}')
            name, labels, value = m.group(1), m.group(3) or '', m.group(4)
            lab = dict(LABEL.findall(labels))
            key = name + '{' + ','.join(f'{k}="{lab[k]}"' for k in sorted(lab)) + '}'
            rows[key] = (name, lab, float(value))
    return rows


def allowances(path):
    out = []
    if not path:
        return out
    in_table = path.endswith('.md') is False
    with open(path, encoding='utf-8') as f:
        for line in f:
            if path.endswith('.md'):
                if re.match(r'^#+ ', line):
                    in_table = 'Differences from infiniband_exporter' in line
                    continue
                if not in_table:
                    continue
                m = re.match(r'^\|\s*(extra|missing|value)\s*\|([^|]*)\|\s*(.*?)\s*\|\s*$', line)
                if m:
                    for glob in re.findall(r'`([^`]+)`', m.group(2)):
                        out.append((m.group(1), glob, m.group(3)))
                continue
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            kind, glob, *reason = line.split(None, 2)
            out.append((kind, glob, reason[0] if reason else ''))
    return out


def allowed(allow, kind, row):
    for k, g, why in allow:
        if k == kind and fnmatch.fnmatchcase(row, g):
            return why
    return None


def compared(name, prefixes):
    return any(name.startswith(p) for p in prefixes)


def main(argv):
    allow_path = None
    prefixes = ['infiniband_']
    args = []
    i = 1
    while i < len(argv):
        if argv[i] == '--allow':
            allow_path = argv[i + 1]
            i += 2
        elif argv[i] == '--families':
            prefixes.append(argv[i + 1])
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    before, ibw, after = (parse(p) for p in args)
    allow = allowances(allow_path)
    bad = ok = allowed_n = 0

    def report(kind, row, detail=''):
        nonlocal bad, allowed_n
        why = allowed(allow, kind, row)
        if why is not None:
            allowed_n += 1
            print(f'allowed {kind}: {row} -- {why}')
        else:
            bad += 1
            print(f'DIFF {kind}: {row}{detail}')

    exp_keys = {k for k, v in before.items() if compared(v[0], prefixes)}
    exp_keys |= {k for k, v in after.items() if compared(v[0], prefixes)}
    ibw_keys = {k for k, v in ibw.items() if compared(v[0], prefixes)}
    for key in sorted(exp_keys | ibw_keys):
        if key not in ibw_keys:
            report('missing', key)
            continue
        if key not in exp_keys:
            report('extra', key)
            continue
        name, _, v = ibw[key]
        lo = before.get(key, after.get(key))[2]
        hi = after.get(key, before.get(key))[2]
        if lo > hi:
            lo, hi = hi, lo
        if name.endswith('_total'):
            if not lo <= v <= hi:
                report('value', key, f' {v:.17g} not in [{lo:.17g}, {hi:.17g}]')
                continue
        elif (name.endswith('_info') or 'rate_bytes' in name or
              name.endswith('_collect_error') or
              name.endswith('_collect_timeout') or
              name.endswith('_collect_errors') or
              name.endswith('_collect_timeouts')):
            if not (lo == v or hi == v or abs(v - lo) <= 1e-9 * abs(lo)):
                report('value', key, f' {v:.17g} != {lo:.17g}')
                continue
        ok += 1
        print(f'ok {key} {v:.17g}')
    # process_* by name only: their values are the processes' own.
    for fam in sorted({v[0] for v in before.values() if v[0].startswith('process_')}):
        if not any(v[0] == fam for v in ibw.values()):
            report('missing', fam + '{}')
        else:
            ok += 1
            print(f'ok {fam} (by name)')
    print(f'# {ok} rows equal, {allowed_n} documented differences, {bad} others')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
