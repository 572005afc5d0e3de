#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check-man-options.py IBWATCHD MANDIR: the man pages against ibwatchd's
option table, as `ibwatchd --dump-options` prints it (name, default, when
a change applies, short option; tab-separated).

ibwatch.conf(5): its OPTIONS list exactly the options the file takes, its
COMMAND LINE ONLY section exactly the others. ibwatchd(8): its OPTIONS
list every option, its SYNOPSIS names every option and no other. In both,
each option's entry shows the table's default as "Default: VALUE" (the
value ends at ". ", "; ", " (" or the end) and says nothing else about a
default, or says nothing of one when the table has none; and it says
"Applied on SIGHUP" exactly when the table says SIGHUP applies it.
Prints each mismatch; exits 1 if there is one.
"""
import re
import subprocess
import sys


def table(ibwatchd):
    out = subprocess.run([ibwatchd, "--dump-options"], check=True,
                         capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        name, default, when, short = line.split("\t")
        rows[name] = {"default": None if default == "-" else default,
                      "when": when, "short": None if short == "-" else short}
    if len(rows) < 10:
        sys.exit("ibwatchd --dump-options printed %d options" % len(rows))
    return rows


def text_of(lines):
    """The words of roff @lines, without fonts and requests."""
    out = []
    for line in lines:
        if line.startswith("."):
            m = re.match(r"\.(B|I|SM|BR|RB|BI|IB|IR|RI)\s+(.*)", line)
            if not m:
                continue
            args = [a or b for a, b in
                    re.findall(r'"([^"]*)"|(\S+)', m.group(2))]
            out.append((" " if m.group(1) in ("B", "I", "SM") else "")
                       .join(args))
        else:
            out.append(line)
    t = " ".join(out)
    t = re.sub(r"\\f[BIRP]", "", t).replace("\\-", "-").replace("\\&", "")
    return re.sub(r"\s+", " ", t).strip()


def sections(path):
    """{".SH name": [lines]} of a man page."""
    secs, cur = {}, None
    with open(path) as f:
        for line in f.read().splitlines():
            if line.startswith(".SH "):
                cur = line[4:].strip().strip('"')
                secs[cur] = []
            elif cur is not None:
                secs[cur].append(line)
    return secs


def entries(lines):
    """[(tag texts, body text)] of the .TP entries in @lines; .TQ adds a
    tag to the entry before it."""
    out, tags, body, want_tag = [], [], [], False
    for line in lines + [".SS end"]:
        if want_tag:
            tags.append(text_of([line]))
            want_tag = False
        elif line.startswith(".TQ"):
            want_tag = True
        elif re.match(r"\.(TP|SS|SH|PP|P|LP)\b", line):
            if tags:
                out.append((tags, text_of(body)))
            tags, body = [], []
            want_tag = line.startswith(".TP")
        else:
            body.append(line)
    return out


problems = []


def bad(page, fmt, *args):
    problems.append("%s: %s" % (page, fmt % args))


def check_entry(page, name, body, row):
    said = re.findall(r"(?i)\bdefaults?\b", body)
    shown = re.findall(r"Default: (.+?)(?=\. |\.$|; | \(|$)", body)
    if row["default"] is None:
        if said:
            bad(page, "%s shows a default (%s); the table has none",
                name, "; ".join(shown) or "'default' in its text")
    elif len(said) != 1 or len(shown) != 1:
        bad(page, "%s must show its default once as 'Default: %s' "
            "(found %d 'default', %d 'Default:')",
            name, row["default"], len(said), len(shown))
    elif shown[0] != row["default"]:
        bad(page, "%s shows the default '%s', the table '%s'",
            name, shown[0], row["default"])
    says = "Applied on SIGHUP" in body
    if says != (row["when"] == "sighup"):
        bad(page, "%s %s 'Applied on SIGHUP' but the table says %s",
            name, "says" if says else "does not say", row["when"])


def check_options(page, lines, names_of, want, rows):
    seen = {}
    for tags, body in entries(lines):
        for tag in tags:
            for name in names_of(tag):
                if name in seen:
                    bad(page, "%s listed twice", name)
                seen[name] = body
    for name in sorted(set(seen) - set(want)):
        bad(page, "%s is not an option %s", name,
            "of the file" if name in rows else "of the table")
    for name in sorted(set(want) - set(seen)):
        bad(page, "%s is missing", name)
    for name in sorted(set(seen) & set(want)):
        check_entry(page, name, seen[name], rows[name])


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check-man-options.py IBWATCHD MANDIR")
    rows = table(sys.argv[1])
    cli = [n for n, r in rows.items() if r["when"] == "cli"]
    infile = [n for n, r in rows.items() if r["when"] != "cli"]

    page = "ibwatch.conf.5"
    secs = sections("%s/%s" % (sys.argv[2], page))
    check_options(page, secs.get("OPTIONS", []),
                  lambda t: re.findall(r"^([a-z][a-z-]*) = ", t),
                  infile, rows)
    only = text_of(secs.get("COMMAND LINE ONLY", [])).rpartition(":")[2]
    only = [w for w in re.split(r"[,.\s]+", only) if w]
    for name in sorted(set(only) - set(cli)):
        bad(page, "COMMAND LINE ONLY lists %s", name)
    for name in sorted(set(cli) - set(only)):
        bad(page, "COMMAND LINE ONLY lacks %s", name)

    page = "ibwatchd.8"
    secs = sections("%s/%s" % (sys.argv[2], page))
    check_options(page, secs.get("OPTIONS", []),
                  lambda t: re.findall(r"--([a-z][a-z-]*)", t),
                  list(rows), rows)
    syn = text_of(secs.get("SYNOPSIS", []))
    named = set(re.findall(r"--([a-z][a-z-]*)", syn))
    shorts = set(re.findall(r"(?<![-\w])(-[a-zA-Z])\b", syn))
    for name in sorted(named - set(rows)):
        bad(page, "SYNOPSIS names --%s, not an option", name)
    for name, r in sorted(rows.items()):
        if name not in named and r["short"] not in shorts:
            bad(page, "SYNOPSIS lacks --%s", name)

    for p in problems:
        print("not ok: " + p)
    print("%d options; %s" % (len(rows), "%d problems" % len(problems)
                              if problems else "the man pages agree"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
