#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-deps-fires.sh SOURCE_DIR - .ci/check-deps.py passes on a copy of the tree and fails,
# naming each edge, once an upward include, a sideways CMake path and a sideways link are
# put into the copy.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in include trace lineage graph cupti_bind otlp validator; do
	cp -r "$src/$d" "$tmp/$d"
done
python3 "$src/.ci/check-deps.py" --root "$tmp" >/dev/null || {
	echo "FAIL: the unmodified tree breaks the rule" >&2
	exit 1
}
echo '#include "rt.h"' >>"$tmp/trace/misuse.c"
echo 'target_sources(lin_validator PRIVATE ${PROJECT_SOURCE_DIR}/lineage/w3c.c)' >>"$tmp/validator/CMakeLists.txt"
echo 'target_link_libraries(lineage PRIVATE lin_validator)' >>"$tmp/lineage/CMakeLists.txt"
rc=0
python3 "$src/.ci/check-deps.py" --root "$tmp" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || { cat "$tmp/err" >&2; echo "FAIL: exit $rc, want 1" >&2; exit 1; }
for want in "trace/misuse.c:.*trace/ includes rt.h of lineage/" \
	"validator/CMakeLists.txt:.*validator/ names lineage/" \
	"lineage/CMakeLists.txt:.*lineage/ links lin_validator of validator/" \
	"3 edge(s) break the rule"; do
	grep -q "$want" "$tmp/err" || { cat "$tmp/err" >&2; echo "FAIL: no '$want'" >&2; exit 1; }
done
rc=0
python3 "$src/.ci/check-deps.py" --root /nonexistent 2>/dev/null || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: a missing tree gave exit $rc, want 2" >&2; exit 1; }
echo "check-deps passes on the tree and names each of three bad edges"
