#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check-imports.py SOURCE_DIR BUILD_DIR: the import graph of core/,
http/ and agent/, from the sources and the objects built from them.

- Calls: for each object BUILD_DIR/{core,http,agent}/CMakeFiles/*.dir/
  NAME.c.o, the symbols it defines and the ones it uses (nm); a file
  imports the file that defines a symbol it uses. No circle among the
  files of a directory.
- Includes: a file imports the file a header of its own name belongs to
  (#include "x.h" from y.c: y imports x, when x.c exists). No circle
  among the files of a directory either.
- Headers: every function a header declares is defined by a file of the
  header's own row of docs/architecture.md's module table.
- Casts: no cast to a pointer to one of our structures (`(struct ibw_x *)`,
  `sizeof`'s `(T *)0` aside): that is a const cast away, as a reader
  writing into a snapshot once was.

Prints each circle (with the symbols or headers behind each arrow) and
each misplaced declaration; exits 1 if there is one.
"""
import glob
import importlib.util
import os
import re
import subprocess
import sys

DIRS = ("core", "http", "agent")


def load_docs_tables(src):
    path = os.path.join(src, "tests", "lib", "check-docs-tables.py")
    spec = importlib.util.spec_from_file_location("docs_tables", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def module_rows(src):
    """{file: row} from the module table: a row is its set of files."""
    dt = load_docs_tables(src)
    doc = os.path.join(src, "docs", "architecture.md")
    rows = {}
    for cell in dt.table_cells(dt.section(doc, "Modules"), 1):
        files = set()
        for entry in cell.split(","):
            entry = entry.strip().strip("`")
            if entry.endswith(".[ch]"):
                files.update((entry[:-5] + ".c", entry[:-5] + ".h"))
            elif entry:
                files.add(entry)
        row = frozenset(files)
        for f in files:
            rows[f] = row
    return rows


def symbols(src, build):
    """{file: (defined, used)} for every object of DIRS."""
    out = {}
    for d in DIRS:
        for obj in glob.glob(os.path.join(build, d, "CMakeFiles", "*.dir",
                                          "*.c.o")):
            name = "%s/%s" % (d, os.path.basename(obj)[:-4])
            if not os.path.exists(os.path.join(src, name + ".c")):
                continue  # left from a file since removed
            text = subprocess.run(["nm", obj], check=True,
                                  capture_output=True, text=True).stdout
            defined, used = out.setdefault(name, (set(), set()))
            for line in text.splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[1] in "TDBRC":
                    defined.add(parts[2])
                elif len(parts) == 2 and parts[0] == "U":
                    used.add(parts[1])
    if not out:
        sys.exit("no objects under %s/{%s}: build first" %
                 (build, ",".join(DIRS)))
    return out


def circles(graph):
    """The strongly connected components of more than one node."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def report(kind, graph, why):
    bad = 0
    for comp in circles(graph):
        bad = 1
        print("%s circle: %s" % (kind, ", ".join(comp)))
        for a in comp:
            for b in sorted(graph[a] & set(comp)):
                print("    %s -> %s: %s" % (a, b, " ".join(why[a, b][:6])))
    return bad


def call_graph(syms):
    owner = {}
    for f, (defined, _) in syms.items():
        for s in defined:
            owner[s] = f
    graph, why = {}, {}
    for f, (_, used) in syms.items():
        graph.setdefault(f, set())
        for s in used:
            g = owner.get(s)
            if g and g != f and g.split("/")[0] == f.split("/")[0]:
                graph[f].add(g)
                why.setdefault((f, g), []).append(s)
    for k in why:
        why[k].sort()
    return graph, why, owner


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def include_graph(src):
    graph, why = {}, {}
    for d in DIRS:
        for path in sorted(glob.glob(os.path.join(src, d, "*.[ch]"))):
            base = os.path.basename(path)
            f = "%s/%s" % (d, base[:-2])
            graph.setdefault(f, set())
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            for h in INCLUDE.findall(text):
                g = "%s/%s" % (d, h[:-2])
                if (h.endswith(".h") and g != f and
                        os.path.exists(os.path.join(src, g + ".c"))):
                    graph[f].add(g)
                    why.setdefault((f, g), []).append(
                        "%s includes %s" % (base, h))
    return graph, why


COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
DECL = re.compile(r"\b([A-Za-z_]\w*)\s*\([^;{}()]*(?:\([^;{}]*\)[^;{}()]*)*"
                  r"\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?;")


def misplaced(src, rows, owner):
    bad = 0
    for d in DIRS:
        for path in sorted(glob.glob(os.path.join(src, d, "*.h"))):
            rel = os.path.relpath(path, src)
            row = rows.get(rel)
            if row is None:
                continue  # check-docs-tables.py says so
            with open(path, encoding="utf-8") as fh:
                text = COMMENT.sub("", fh.read())
            for name in sorted(set(DECL.findall(text))):
                f = owner.get(name)
                if f and f + ".c" not in row:
                    print("%s declares %s, which %s.c defines (another "
                          "module's row)" % (rel, name, f))
                    bad = 1
    return bad


CAST = re.compile(r"\(\s*struct\s+ibw_\w+\s*\*\s*\)(?!\s*0\b)")


def casts(src):
    bad = 0
    for d in DIRS:
        for path in sorted(glob.glob(os.path.join(src, d, "*.[ch]"))):
            with open(path, encoding="utf-8") as fh:
                text = COMMENT.sub("", fh.read())
            for m in CAST.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                print("%s:%d: a cast to %s" % (os.path.relpath(path, src),
                                              line, m.group(0)))
                bad = 1
    return bad


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check-imports.py SOURCE_DIR BUILD_DIR")
    src, build = sys.argv[1:]
    syms = symbols(src, build)
    graph, why, owner = call_graph(syms)
    bad = report("calls", graph, why)
    graph, why = include_graph(src)
    bad |= report("includes", graph, why)
    bad |= misplaced(src, module_rows(src), owner)
    bad |= casts(src)
    if not bad:
        print("%d objects: no circle of calls or includes; every header "
              "declares its own module's functions; no cast to one of our "
              "structures" % len(syms))
    return bad


if __name__ == "__main__":
    sys.exit(main())
