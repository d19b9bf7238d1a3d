#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-circles.py BUILD [KNOWN] - no two files of a library folder call each other, even
through others (docs/architecture.md, "Modules": no circle inside any library folder).

Reads the object files of every library target under BUILD (CMakeFiles/<target>.dir/),
takes a file -> file edge wherever one object's undefined symbol is another's defined one
(nm), and finds the circles (strongly connected sets of two or more files) among the files
of one folder. KNOWN (default: known-circles.txt beside this script) lists circles that are
known and owed, one per line as space-separated paths; each must still be one (a list that
names a circle no longer there is stale, and fails). Exit 0: no circle beyond the known;
1: a new circle or a stale entry (named); 2: BUILD has no library objects.
Inline functions in headers are not seen (they are compiled into their callers).
"""
import os
import subprocess
import sys

LIB_FOLDERS = ("trace", "lineage", "graph", "cupti_bind", "otlp", "join", "import", "validator", "explain")
# Library targets only: tools (lineage-validate, lineage-explain), tests and the test layer
# are not library folders' code.
TOOLS = {"lineage-validate", "lineage-explain", "lineage_cupti_layer"}


def objects(build):
    """{target: {source path: object path}} for the library targets under BUILD."""
    out = {}
    for root, _dirs, files in os.walk(build):
        marker = os.sep + "CMakeFiles" + os.sep
        if marker not in root + os.sep or ".dir" not in root:
            continue
        head, tail = (root + os.sep).split(marker, 1)
        target, _, rest = tail.partition(".dir" + os.sep)
        if target in TOOLS or target.startswith(("lin_fuzz", "test", "lin-")):
            continue
        base = os.path.relpath(head, build)
        for f in files:
            if not f.endswith(".c.o"):
                continue
            src = os.path.normpath(os.path.join(base if base != "." else "", rest, f[:-2]))
            if src.split(os.sep)[0] in LIB_FOLDERS:
                out.setdefault(target, {})[src] = os.path.join(root, f)
    return out


def symbols(obj, defined):
    args = ["nm", "-g", "--defined-only" if defined else "--undefined-only", obj]
    lines = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split("\n")
    return {l.split()[-1] for l in lines if l.strip()}


def circles(nodes, edges):
    """Tarjan's strongly connected components of size > 1."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().split("\n")[0], file=sys.stderr)
        return 64
    build = sys.argv[1]
    known_path = sys.argv[2] if len(sys.argv) == 3 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "known-circles.txt")
    known = set()
    if os.path.exists(known_path):
        for line in open(known_path):
            line = line.split("#", 1)[0].split()
            if line:
                known.add(frozenset(line))
    targets = objects(build)
    if not targets:
        print(f"check-circles: no library objects under {build} (build it first)", file=sys.stderr)
        return 2
    found = set()
    for target, srcs in sorted(targets.items()):
        defs = {s: symbols(o, True) for s, o in srcs.items()}
        owner = {}
        for s, names in defs.items():
            for name in names:
                owner.setdefault(name, s)
        edges = {}
        for s, o in srcs.items():
            for name in symbols(o, False):
                d = owner.get(name)
                if d and d != s and d.split(os.sep)[0] == s.split(os.sep)[0]:
                    edges.setdefault(s, set()).add(d)
        for c in circles(srcs.keys(), edges):
            found.add(c)
    bad = 0
    for c in sorted(found, key=sorted):
        if c not in known:
            bad += 1
            print("check-circles: circle: " + " ".join(sorted(c)))
    for c in sorted(known, key=sorted):
        if c not in found:
            bad += 1
            print(f"check-circles: {known_path} names a circle that is gone (remove it): "
                  + " ".join(sorted(c)))
    if bad:
        return 1
    print(f"check-circles: no circle inside a library folder beyond the {len(known)} known "
          f"({sum(len(s) for s in targets.values())} objects of {len(targets)} targets)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
