#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Run every PromQL expression of Grafana dashboards and rule files.

    dash_queries.py [--nonempty] [--list] [--interval DUR] [--all REGEX]
                    [--var NAME=VALUE]... [--time T] URL FILE...

URL is a Prometheus-compatible server (http://127.0.0.1:PORT: a
Prometheus, a VictoriaMetrics; a trailing /api/v1/query is allowed).
A FILE is a Grafana dashboard (JSON, as exported, or wrapped in
{"dashboard": ...}) or a Prometheus rule file (YAML, read here with a
small reader of its own: only python3's standard library is used).

From a dashboard: every target's expr, in panels, in rows' panels (the
old "rows" layout too) and in library panels pasted in; targets of a
data source that is not Prometheus are left out; annotations' expr;
the template variables' queries as well: label_values(EXPR, LABEL) and
query_result(EXPR) give EXPR. From a rule file: every rule's expr.

Grafana's variables are put in as Grafana would put in a value:
- $__rate_interval, $__interval, $__range, $__auto_interval_*, and a
  variable of type interval: DUR (--interval, 1m); $__range_s,
  $__range_ms, $__interval_ms: DUR in seconds or milliseconds.
- --var NAME=VALUE: VALUE as it is, wherever NAME is used.
- A template variable that is a label matcher's whole value
  (job="$job", host=~"${host:regex}"): the matcher becomes =~"REGEX"
  (--all, .+), what Grafana's "All" selects (every value of the label,
  so the label must be there); part of a value (=~"$host.*"): .* in its
  place, the matcher a regex one; in a negative matcher (!=, !~): a
  value no series has, so that it excludes nothing.
- Elsewhere (topk($n, ...), by ($group)): the variable's current value
  in the dashboard, or its first option; one with neither is reported
  as an error, unresolved, and not asked for.
The forms $var, ${var}, ${var:format} and [[var]] are all read; $1 and
${1} (label_replace's groups) are not variables.

Each expression is run as an instant query (at --time, now by default)
and one line printed for it: "ok", "empty" (the query succeeded and
returned no series) or "error" (the server rejected it, with its
message), then FILE:WHERE and the expression as sent. --list prints the
expressions, one a line, and asks nothing.

Exit status: 0 when no query was an error (with --nonempty: none an
error and none empty); 1 otherwise; 2 when a file cannot be read or the
server cannot be reached.
"""
import argparse
import json
import re
import signal
import sys
import urllib.error
import urllib.parse
import urllib.request

VAR = re.compile(r'\$\{([A-Za-z_]\w*)(?::[^}]*)?\}|\[\[([A-Za-z_]\w*)(?::[^\]]*)?\]\]'
                 r'|\$([A-Za-z_]\w*)')
MATCHER = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*'
                     r'("(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`)')
# a value no label has, for a negative matcher
NONE = '__dash_queries_none__'


def var_name(m):
    return m.group(1) or m.group(2) or m.group(3)


class Subst:
    """Grafana's variables of one dashboard (none for a rule file)."""

    def __init__(self, args, templating=None):
        self.interval = args.interval
        self.all = args.all
        self.given = dict(args.var)
        self.kinds = {}
        self.current = {}
        for v in templating or []:
            name = v.get('name')
            if not name:
                continue
            self.kinds[name] = v.get('type')
            value = (v.get('current') or {}).get('value')
            if isinstance(value, list):
                value = value[0] if value else None
            if value in (None, '', '$__all') and v.get('options'):
                value = v['options'][0].get('value')
            if isinstance(value, str) and value not in ('', '$__all'):
                self.current[name] = value

    def plain(self, name):
        """A variable's value outside a label matcher, or None."""
        if name in self.given:
            return self.given[name]
        secs = seconds(self.interval)
        if name in ('__rate_interval', '__interval', '__range') or \
                name.startswith('__auto_interval') or self.kinds.get(name) == 'interval':
            return self.interval
        if name in ('__range_s', '__interval_s'):
            return str(secs)
        if name in ('__range_ms', '__interval_ms'):
            return str(secs * 1000)
        return self.current.get(name)

    def matcher(self, m):
        label, op, quoted = m.group(1), m.group(2), m.group(3)
        body, q = quoted[1:-1], quoted[0]
        refs = list(VAR.finditer(body))
        if not refs or all(var_name(r) in self.given for r in refs):
            return VAR.sub(lambda r: self.given[var_name(r)], m.group(0))
        if op in ('!=', '!~'):
            return '%s%s%s%s%s' % (label, op, q, VAR.sub(NONE, body), q)
        if len(refs) == 1 and refs[0].span() == (0, len(body)):
            return '%s=~%s%s%s' % (label, q, self.all, q)
        return '%s=~%s%s%s' % (label, q, VAR.sub('.*', body), q)

    def __call__(self, expr):
        """EXPR with its variables put in, and the names left unresolved."""
        expr = MATCHER.sub(self.matcher, expr)
        missing = []

        def one(r):
            v = self.plain(var_name(r))
            if v is None:
                missing.append(var_name(r))
                return r.group(0)
            return v
        return VAR.sub(one, expr), missing


def seconds(dur):
    units = {'ms': 0.001, 's': 1, 'm': 60, 'h': 3600, 'd': 86400, 'w': 604800, 'y': 31536000}
    total = 0.0
    for n, u in re.findall(r'(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)', dur):
        total += float(n) * units[u]
    return int(total) if total == int(total) else total


def is_prometheus(ds):
    """False for a data source that names another type (Loki, ...)."""
    if isinstance(ds, dict):
        t = ds.get('type')
        return t in (None, '', 'prometheus', '-- Mixed --', 'datasource') or '$' in str(t)
    return True


def dashboard_exprs(d):
    """(WHERE, EXPR) of a dashboard's targets and template queries."""
    out = []
    if 'dashboard' in d and 'panels' not in d and 'rows' not in d:
        d = d['dashboard']

    def panels(ps, where):
        for i, p in enumerate(ps or []):
            if not isinstance(p, dict):
                continue
            here = '%s[%d] %s' % (where, i, p.get('title') or p.get('type') or '')
            ds = p.get('datasource')
            for j, t in enumerate(p.get('targets') or []):
                if not isinstance(t, dict) or not isinstance(t.get('expr'), str):
                    continue
                if not is_prometheus(t.get('datasource', ds)) or not t['expr'].strip():
                    continue
                out.append(('%s target %s' % (here.rstrip(), t.get('refId', j)), t['expr']))
            panels(p.get('panels'), here.rstrip() + ' panels')
            lib = p.get('libraryPanel')
            if isinstance(lib, dict) and 'model' in lib:
                panels([lib['model']], here.rstrip() + ' library')

    panels(d.get('panels'), 'panels')
    for i, row in enumerate(d.get('rows') or []):
        panels(row.get('panels'), 'rows[%d] panels' % i)
    for i, a in enumerate((d.get('annotations') or {}).get('list') or []):
        if isinstance(a.get('expr'), str) and a['expr'].strip() and is_prometheus(a.get('datasource')):
            out.append(('annotations[%d] %s' % (i, a.get('name') or ''), a['expr']))
    for v in (d.get('templating') or {}).get('list') or []:
        if v.get('type') != 'query' or not is_prometheus(v.get('datasource')):
            continue
        q = v.get('query')
        if isinstance(q, dict):
            q = q.get('query')
        if not isinstance(q, str):
            continue
        m = re.match(r'\s*(label_values|query_result)\s*\((.*)\)\s*$', q, re.S)
        if not m:
            continue
        arg = m.group(2)
        if m.group(1) == 'label_values':
            # label_values(EXPR, LABEL); label_values(LABEL) asks no series
            if ',' not in arg:
                continue
            arg = arg[:arg.rindex(',')]
        out.append(('templating %s' % v.get('name'), arg.strip()))
    return out


def yaml_scalar(lines, i, col, rest):
    """The scalar that starts as REST on line I after a key at column COL
    (block, quoted or plain, continued on more deeply indented lines), and
    the index of the line after it."""
    rest = rest.strip()
    if rest[:1] in ('|', '>'):
        block, i, ind = [], i + 1, None
        while i < len(lines):
            ln = lines[i]
            if ln.strip() == '':
                block.append('')
                i += 1
                continue
            n = len(ln) - len(ln.lstrip(' '))
            if n <= col:
                break
            ind = n if ind is None else ind
            block.append(ln[ind:])
            i += 1
        return '\n'.join(block).strip('\n'), i
    if rest[:1] in ('"', "'"):
        q, text, i = rest[0], rest[1:], i + 1
        pat = r'"((?:[^"\\]|\\.)*)"' if q == '"' else r"'((?:[^']|'')*)'"
        while not re.match(pat, q + text, re.S) and i < len(lines):
            text += '\n' + lines[i].strip()
            i += 1
        m = re.match(pat, q + text, re.S)
        body = m.group(1) if m else text
        body = re.sub(r'[ \t]*\n[ \t]*', ' ', body)
        if q == "'":
            return body.replace("''", "'"), i
        try:
            return json.loads('"%s"' % body), i
        except ValueError:
            return body, i
    # plain: a comment ends it
    parts, i = [re.sub(r'\s+#.*$', '', rest)], i + 1
    while i < len(lines) and not re.search(r'(^|\s)#', lines[i - 1].strip()):
        ln = lines[i]
        n = len(ln) - len(ln.lstrip(' '))
        if ln.strip() == '' or n <= col:
            break
        parts.append(re.sub(r'\s+#.*$', '', ln.strip()))
        i += 1
    return ' '.join(parts), i


def rules_exprs(text):
    """(WHERE, EXPR) of a rule file's rules, by line: the rule's name is
    the record or alert key before the expr in its list item."""
    out, name = [], ''
    lines = text.split('\n')
    key = re.compile(r'^(\s*(?:-\s+)?)(expr|record|alert):(\s.*|)$')
    i = 0
    while i < len(lines):
        m = key.match(lines[i])
        if not m:
            i += 1
            continue
        col = len(m.group(1))
        if m.group(2) != 'expr':
            name, i = yaml_scalar(lines, i, col, m.group(3))
            continue
        line = i + 1
        expr, i = yaml_scalar(lines, i, col, m.group(3))
        out.append(('line %d %s' % (line, name), expr))
        name = ''
    return out


def query(base, expr, at):
    """('ok'|'empty'|'error', message); None when nothing answers."""
    args = {'query': expr}
    if at:
        args['time'] = at
    req = urllib.request.Request(base + '/api/v1/query',
                                 data=urllib.parse.urlencode(args).encode(),
                                 headers={'Content-Type': 'application/x-www-form-urlencoded'})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            body = r.read()
    except urllib.error.HTTPError as e:
        body = e.read()
        try:
            return 'error', json.loads(body).get('error', '')
        except ValueError:
            return 'error', 'HTTP %d: %s' % (e.code, body[:200].decode(errors='replace'))
    except (urllib.error.URLError, OSError):
        return None
    try:
        j = json.loads(body)
    except ValueError:
        return 'error', 'not JSON: %s' % body[:200].decode(errors='replace')
    if j.get('status') != 'success':
        return 'error', j.get('error', '')
    data = j.get('data') or {}
    if data.get('resultType') in ('vector', 'matrix') and not data.get('result'):
        return 'empty', ''
    return 'ok', ''


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--nonempty', action='store_true',
                    help='an empty result fails too')
    ap.add_argument('--list', action='store_true',
                    help='print the expressions, query nothing')
    ap.add_argument('--interval', default='1m',
                    help='for $__rate_interval, $__interval, $__range (1m)')
    ap.add_argument('--all', default='.+',
                    help="a variable that is a matcher's whole value (.+)")
    ap.add_argument('--var', action='append', default=[], type=lambda s: s.split('=', 1),
                    metavar='NAME=VALUE', help='a template variable\'s value')
    ap.add_argument('--time', help='evaluation time (RFC 3339 or Unix time)')
    ap.add_argument('url')
    ap.add_argument('files', nargs='+', metavar='FILE')
    args = ap.parse_args()
    if any(len(v) != 2 for v in args.var):
        ap.error('--var takes NAME=VALUE')
    base = re.sub(r'/(api/v1/query)?/*$', '', args.url)

    todo = []
    for path in args.files:
        try:
            with open(path, encoding='utf-8') as f:
                text = f.read()
        except OSError as e:
            print('dash_queries: %s' % e, file=sys.stderr)
            return 2
        try:
            d = json.loads(text)
        except ValueError:
            d = None
        if isinstance(d, dict) and 'groups' not in d:
            sub = Subst(args, ((d.get('dashboard') or d).get('templating') or {}).get('list'))
            found = dashboard_exprs(d)
        else:
            sub = Subst(args)
            found = rules_exprs(text)
        if not found:
            print('dash_queries: %s: no expression found' % path, file=sys.stderr)
        for where, expr in found:
            todo.append(('%s:%s' % (path, where.strip()),) + sub(expr))

    if args.list:
        for _, expr, _ in todo:
            print(' '.join(expr.split()))
        return 0
    counts = {'ok': 0, 'empty': 0, 'error': 0}
    seen = {}
    for where, expr, missing in todo:
        if missing:
            res = ('error', 'unresolved variable %s' % ', '.join('$' + n for n in missing))
        else:
            if expr not in seen:
                seen[expr] = query(base, expr, args.time)
            res = seen[expr]
            if res is None:
                print('dash_queries: %s does not answer' % base, file=sys.stderr)
                return 2
        counts[res[0]] += 1
        line = '%-5s %s: %s' % (res[0], where, ' '.join(expr.split()))
        print(line + ('  -- ' + ' '.join(res[1].split()) if res[1] else ''))
    print('%d ok, %d empty, %d error' % (counts['ok'], counts['empty'], counts['error']))
    return 1 if counts['error'] or (args.nonempty and counts['empty']) else 0


if __name__ == '__main__':
    sys.exit(main())
