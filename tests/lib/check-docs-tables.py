#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check-docs-tables.py SOURCE_DIR CTEST BUILD_DIR: the docs' tables
against the tree and the build.

docs/architecture.md, "## Modules": every *.c, *.h and *.h.in under
core/, http/ and agent/ is named in a row's file(s) cell (a comma-separated
list of paths; "dir/name.[ch]" names dir/name.c and dir/name.h), and
every file a row names exists.

docs/testing.md, "## The suite": every test `CTEST -N` lists in
BUILD_DIR is named, as a whole word, in the first cell of a row of the
section's table.

Prints each file or test missing; exits 1 if there is one.
"""
import os
import re
import subprocess
import sys

SOURCE_DIRS = ("core", "http", "agent")
SUFFIXES = (".c", ".h", ".h.in")


def section(path, title):
    """The lines of @path's section "## @title", up to the next "## "."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    try:
        start = lines.index("## " + title) + 1
    except ValueError:
        sys.exit("%s: no section \"## %s\"" % (path, title))
    end = start
    while end < len(lines) and not lines[end].startswith("## "):
        end += 1
    return lines[start:end]


def table_cells(lines, col):
    """Cell @col of each row of the tables in @lines, header and rule
    rows left out."""
    cells = []
    for i, line in enumerate(lines):
        if not line.startswith("|"):
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if re.match(r"\|[-| :]+\|$", line) or re.match(r"\|[-| :]+\|$",
                                                        nxt):
            continue
        row = [c.strip() for c in line.strip("|").split("|")]
        if col < len(row):
            cells.append(row[col])
    return cells


def source_files(src):
    found = set()
    for top in SOURCE_DIRS:
        for root, _, files in os.walk(os.path.join(src, top)):
            for name in files:
                if name.endswith(SUFFIXES):
                    found.add(os.path.relpath(os.path.join(root, name),
                                              src))
    return found


def module_files(src):
    """The files named in the module table's file(s) cells."""
    named = set()
    doc = os.path.join(src, "docs", "architecture.md")
    for cell in table_cells(section(doc, "Modules"), 1):
        for entry in cell.split(","):
            entry = entry.strip().strip("`")
            if entry.endswith(".[ch]"):
                named.add(entry[:-5] + ".c")
                named.add(entry[:-5] + ".h")
            elif entry:
                named.add(entry)
    return named


def ctest_names(ctest, build):
    out = subprocess.run([ctest, "-N"], cwd=build, check=True,
                         capture_output=True, text=True).stdout
    names = re.findall(r"^\s*Test\s+#\d+: (\S+)$", out, re.M)
    if not names:
        sys.exit("%s -N in %s listed no test" % (ctest, build))
    return names


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: check-docs-tables.py SOURCE_DIR CTEST BUILD_DIR")
    src, ctest, build = sys.argv[1:]
    bad = 0

    named = module_files(src)
    for f in sorted(source_files(src) - named):
        print("docs/architecture.md, Modules: no row names %s" % f)
        bad = 1
    for f in sorted(named):
        if not os.path.exists(os.path.join(src, f)):
            print("docs/architecture.md, Modules: %s does not exist" % f)
            bad = 1

    doc = os.path.join(src, "docs", "testing.md")
    listed = " ".join(table_cells(section(doc, "The suite"), 0))
    for t in ctest_names(ctest, build):
        if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(t), listed):
            print("docs/testing.md, The suite: no row names %s" % t)
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
