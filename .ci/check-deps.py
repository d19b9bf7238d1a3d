#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-deps.py [--root DIR] - the folder dependency rule (docs/architecture.md, "Modules").

Every edge between the library's folders must point down:

    include/     public headers                  -> include
    trace/       the trace format                -> include
    lineage/     the runtime                     -> include, trace
    graph/       CUDA graph identity             -> include, trace, lineage
    cupti_bind/  the CUPTI binding               -> include, trace, lineage
    otlp/        the OTLP stream                 -> include, trace, lineage
    join/        the join layer                  -> include, trace
    import/      the importers (feed join/)      -> include, trace, join
    validator/   lineage-validate (a tool)       -> include, trace, join, import
    explain/     lineage-explain (a tool)        -> include, trace, join, import

validator/ and explain/ are peers: neither uses the other.

A folder's private headers (PRIVATE below) are included from that folder only: the join
layer's state is read through join.h's getters and fed through feed.h, never touched.

An edge is an #include that resolves to a header of another folder, or a CMake file of the
folder naming another folder's path (${PROJECT_SOURCE_DIR}/x, ${CMAKE_SOURCE_DIR}/x) or
linking another folder's target. Folders outside the table (tests/, bench/, examples/,
fixtures/, python/) use anything; no folder of the table may use them.
Exit 0 when every edge is allowed, 1 with one line per bad edge (file:line), 2 on usage.
"""
import os
import re
import sys

ALLOWED = {
    "include": {"include"},
    "trace": {"include", "trace"},
    "lineage": {"include", "trace", "lineage"},
    "graph": {"include", "trace", "lineage", "graph"},
    "cupti_bind": {"include", "trace", "lineage", "cupti_bind"},
    "otlp": {"include", "trace", "lineage", "otlp"},
    "join": {"include", "trace", "join"},
    "import": {"include", "trace", "join", "import"},
    "validator": {"include", "trace", "join", "import", "validator"},
    "explain": {"include", "trace", "join", "import", "explain"},
}
CONSUMERS = {"tests", "bench", "examples", "fixtures", "python"}
# Headers only their own folder includes (consumers such as tests/ aside).
PRIVATE = {("join", "jstate.h"), ("join", "pages.h")}
# CMake targets and the folder that defines them.
TARGETS = {
    "lineage_trace": "trace", "lineage_trace_write_obj": "trace",
    "lineage_trace_read_obj": "trace", "lineage": "lineage", "lineage_otlp": "otlp",
    "lin_join": "join", "lin_validator": "validator", "lineage-validate": "validator",
    "lin_import": "import", "lin_explain": "explain", "lineage-explain": "explain",
    "lineage_cupti_decode": "cupti_bind", "lineage_cupti_layer": "cupti_bind",
    "lin_sim": "bench", "lineage-synth": "bench",
}
SRC_EXT = (".c", ".h", ".cpp", ".hpp", ".cu")
SKIP_DIRS = {"node_modules", "fuzz"}  # fuzz harnesses compile sources on purpose


def folder_of(root, path):
    rel = os.path.relpath(path, root)
    return rel.split(os.sep)[0]


def walk(root, top):
    for d, dirs, files in os.walk(os.path.join(root, top)):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")]
        for f in files:
            yield os.path.join(d, f)


def header_index(root):
    idx = {}
    for top in list(ALLOWED) + sorted(CONSUMERS):
        for p in walk(root, top):
            if p.endswith((".h", ".hpp")):
                idx.setdefault(os.path.basename(p), set()).add(folder_of(root, p))
    return idx


def resolve(root, src, name, idx, angle=False):
    """The folder an #include of file src resolves to, or None (a system header)."""
    here = os.path.join(os.path.dirname(src), name)
    if not angle and os.path.exists(here):
        return folder_of(root, os.path.normpath(here))
    if os.path.exists(os.path.join(root, "include", name)):
        return "include"
    if angle and "/" in name:
        return None  # <dir/x.h>: a system or package header unless include/ has it
    folders = idx.get(os.path.basename(name))
    if not folders:
        return None
    if len(folders) == 1:
        return next(iter(folders))
    mine = folder_of(root, src)
    return mine if mine in folders else sorted(folders)[0]


INC = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
PATHREF = re.compile(r"\$\{(?:PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR)\}/([A-Za-z0-9_.-]+)")
# ../x, ${CMAKE_CURRENT_SOURCE_DIR}/../x, ${CMAKE_CURRENT_LIST_DIR}/../x: relative to the file
RELREF = re.compile(r"(?:\$\{CMAKE_CURRENT_(?:SOURCE|LIST)_DIR\}/)?((?:\.\./)+[A-Za-z0-9_.-]+)")
LINK = re.compile(r"target_link_libraries\s*\(([^)]*)\)", re.S | re.I)
OBJECTS = re.compile(r"\$<TARGET_OBJECTS:([A-Za-z0-9_.-]+)>")


def strip_comments(text):
    """CMake text without its # comments (a # inside a quoted string is kept)."""
    out = []
    for line in text.split("\n"):
        quoted = False
        for i, c in enumerate(line):
            if c == '"':
                quoted = not quoted
            elif c == "#" and not quoted:
                line = line[:i]
                break
        out.append(line)
    return "\n".join(out)


def check(root):
    idx = header_index(root)
    bad = []
    for mod, allowed in ALLOWED.items():
        for p in walk(root, mod):
            rel = os.path.relpath(p, root)
            if p.endswith(SRC_EXT):
                with open(p, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INC.match(line)
                        if not m:
                            continue
                        to = resolve(root, p, m.group(2), idx, m.group(1) == "<")
                        if to and to not in allowed:
                            bad.append(f"{rel}:{n}: {mod}/ includes {m.group(2)} of {to}/")
                        elif to and to != mod and (to, os.path.basename(m.group(2))) in PRIVATE:
                            bad.append(f"{rel}:{n}: {mod}/ includes {m.group(2)}, private to {to}/")
            elif os.path.basename(p) == "CMakeLists.txt" or p.endswith(".cmake"):
                with open(p, encoding="utf-8") as f:
                    text = strip_comments(f.read())
                for m in RELREF.finditer(text):
                    n = text.count("\n", 0, m.start()) + 1
                    dest = os.path.normpath(os.path.join(os.path.dirname(p), m.group(1)))
                    to = folder_of(root, dest) if dest.startswith(root + os.sep) else None
                    if to and (to in ALLOWED or to in CONSUMERS) and to not in allowed:
                        bad.append(f"{rel}:{n}: {mod}/ names {to}/ ({m.group(0)})")
                for m in OBJECTS.finditer(text):
                    n = text.count("\n", 0, m.start()) + 1
                    to = TARGETS.get(m.group(1))
                    if to and to not in allowed:
                        bad.append(f"{rel}:{n}: {mod}/ takes the objects of {m.group(1)} of {to}/")
                for m in PATHREF.finditer(text):
                    to = m.group(1)
                    n = text.count("\n", 0, m.start()) + 1
                    if to in ALLOWED or to in CONSUMERS:
                        if to not in allowed:
                            bad.append(f"{rel}:{n}: {mod}/ names {to}/ (${{...}}/{to})")
                for m in LINK.finditer(text):
                    n = text.count("\n", 0, m.start()) + 1
                    words = re.split(r"[\s$<>:]+", m.group(1))
                    for w in words[1:]:
                        to = TARGETS.get(w)
                        if to and to not in allowed:
                            bad.append(f"{rel}:{n}: {mod}/ links {w} of {to}/")
    return bad


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if len(argv) == 3 and argv[1] == "--root":
        root = argv[2]
    elif len(argv) != 1:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    if not os.path.isdir(os.path.join(root, "lineage")):
        print(f"check-deps: {root}: not a lineage source tree", file=sys.stderr)
        return 2
    bad = check(root)
    for b in bad:
        print(f"check-deps: {b}: an upward or sideways edge", file=sys.stderr)
    if bad:
        print(f"check-deps: {len(bad)} edge(s) break the rule in docs/architecture.md, "
              "\"Modules\"", file=sys.stderr)
        return 1
    print("check-deps: every folder edge points down (docs/architecture.md, \"Modules\")")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
