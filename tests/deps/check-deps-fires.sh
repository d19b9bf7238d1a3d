#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-deps-fires.sh SOURCE_DIR - .ci/check-deps.py passes on a copy of the tree and fails,
# naming each edge, once an upward include, a sideways CMake path and a sideways link are
# put into the copy.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in include trace lineage graph cupti_bind otlp join import validator explain; do
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
# One more edge at a time, in the other forms an edge takes (want 1: an edge; 0: none).
n=0
one() { # FILE LINE WANT
	n=$((n + 1))
	rm -rf "$tmp/one" && mkdir "$tmp/one"
	for d in include trace lineage graph cupti_bind otlp join import validator explain; do
		cp -r "$src/$d" "$tmp/one/$d"
	done
	printf '%s\n' "$2" >>"$tmp/one/$1"
	rc=0
	python3 "$src/.ci/check-deps.py" --root "$tmp/one" >/dev/null 2>&1 || rc=$?
	if [ "$3" = 1 ] && [ "$rc" != 1 ]; then echo "FAIL: missed: $1: $2" >&2; exit 1; fi
	if [ "$3" = 0 ] && [ "$rc" != 0 ]; then echo "FAIL: not an edge: $1: $2" >&2; exit 1; fi
}
one lineage/log.c '#include <jstate.h>' 1
one explain/main.c '#include "report.h"' 1
one explain/main.c '#include "join.h"' 0
one join/resolve.c '#include "imp.h"' 1
one import/run.c '#include "jstate.h"' 1
one validator/report.c '#include "pages.h"' 1
one validator/truth.c '#include "jstate.h"' 1
one validator/truth.c '#include "feed.h"' 0
one import/run.c '#include "feed.h"' 0
one join/access.c '#include "jstate.h"' 0
one explain/CMakeLists.txt 'target_link_libraries(lin_explain PUBLIC lin_validator)' 1
one lineage/log.c '#include <stdio.h>' 0
one lineage/log.c '#include <lineage/otlp.h>' 0
one validator/CMakeLists.txt 'TARGET_LINK_LIBRARIES(lin_validator PRIVATE lineage)' 1
one validator/CMakeLists.txt 'target_sources(lin_validator PRIVATE ../otlp/spans.c)' 1
one trace/CMakeLists.txt 'target_include_directories(lineage_trace PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/../lineage)' 1
one validator/CMakeLists.txt 'add_library(lin_x STATIC $<TARGET_OBJECTS:lineage_otlp>)' 1
one lineage/CMakeLists.txt '# see ${PROJECT_SOURCE_DIR}/tests/lineage for the tests' 0
rc=0
python3 "$src/.ci/check-deps.py" --root /nonexistent 2>/dev/null || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: a missing tree gave exit $rc, want 2" >&2; exit 1; }
echo "check-deps passes on the tree, names each of three bad edges, and judges $n more forms right"
