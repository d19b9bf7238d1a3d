#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-skips.py JUNIT TESTS_JSON [--allow-label LABEL]...

After `ctest --output-junit JUNIT`: a test that was skipped (SKIP_RETURN_CODE, a missing
tool or file) ran nothing, and ctest still counts it among the passed. ./test.sh and CI
call this to list every skipped test with its reason (the first line of its output that
says why) and to fail on any skip, unless the test carries a label named by
--allow-label: one that marks a need this machine cannot meet (`gpu`). TESTS_JSON is
`ctest --show-only=json-v1` of the same build (each test's labels).

Exit status: 0 no disallowed skip; 1 disallowed skips (listed on stderr); 2 unreadable
input (named); 64 usage.
"""
import json
import sys
import xml.etree.ElementTree as ET


def usage():
    print(__doc__.split("\n\n")[0], file=sys.stderr)
    sys.exit(64)


def reason(case):
    """The line of the test's output that says why it skipped, else the skip message."""
    out = case.findtext("system-out") or ""
    for line in out.splitlines():
        low = line.lower()
        if "skip" in low or "not found" in low or "absent" in low or "needs" in low:
            return line.strip()
    sk = case.find("skipped")
    return (sk.get("message") if sk is not None else "") or "no reason printed"


def main(argv):
    args, allow = [], set()
    i = 0
    while i < len(argv):
        if argv[i] == "--allow-label" and i + 1 < len(argv):
            allow.add(argv[i + 1])
            i += 2
        elif argv[i].startswith("-"):
            usage()
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 2:
        usage()
    junit, tests_json = args
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"check-skips: {junit}: not a ctest JUnit file: {e}", file=sys.stderr)
        return 2
    try:
        with open(tests_json) as f:
            tests = json.load(f).get("tests", [])
    except (OSError, ValueError) as e:
        print(f"check-skips: {tests_json}: not ctest --show-only=json-v1 output: {e}",
              file=sys.stderr)
        return 2
    labels = {}
    for t in tests:
        for p in t.get("properties", []):
            if p.get("name") == "LABELS":
                labels[t.get("name")] = set(p.get("value") or [])
    skipped = [c for c in root.iter("testcase")
               if c.get("status") == "notrun" or c.find("skipped") is not None]
    bad = []
    for c in skipped:
        name = c.get("name")
        why = reason(c)
        ok = labels.get(name, set()) & allow
        print(f"skipped: {name}: {why}" + (f" (allowed: label {', '.join(sorted(ok))})" if ok
                                           else ""), file=sys.stderr)
        if not ok:
            bad.append(name)
    if bad:
        print(f"check-skips: {len(bad)} test(s) skipped that must run here: {', '.join(bad)}. "
              "Each ran nothing; install what it needs (the line above says what) or label "
              "it with what this machine cannot have (gpu).", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
