#!/usr/bin/env bash
# check-skips.sh - .ci/check-skips.py fires on a skipped test (naming it and the reason its
# output gave), stays silent when nothing skipped, lets a skip of a test labelled gpu pass
# with --allow-label gpu (and only then), and says when its input is unreadable (exit 2).
# It runs ctest on a scratch project whose tests skip (exit 77) or pass on demand.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
check=$root/.ci/check-skips.py
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lineage-skips.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$tmp/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(skips NONE)
enable_testing()
add_test(NAME needs_tool COMMAND sh -c "[ -n \"$NEEDS_TOOL_SKIPS\" ] || exit 0; echo 'SKIP: frobnicate not found'; exit 77")
set_tests_properties(needs_tool PROPERTIES SKIP_RETURN_CODE 77 LABELS cli)
add_test(NAME needs_gpu COMMAND sh -c "echo 'no GPU visible: skipped'; exit 77")
set_tests_properties(needs_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS gpu)
add_test(NAME plain COMMAND true)
set_tests_properties(plain PROPERTIES LABELS unit)
CM
cmake -S "$tmp" -B "$tmp/b" >/dev/null
cd "$tmp/b"
ctest --show-only=json-v1 >tests.json

# A skipped cli test: exit 1, named with its reason.
NEEDS_TOOL_SKIPS=1 ctest -LE gpu --output-junit j1.xml >/dev/null 2>&1 || true
rc=0
python3 "$check" j1.xml tests.json --allow-label gpu 2>err1 || rc=$?
[ "$rc" = 1 ] || fail "a skipped cli test: exit $rc, want 1"
grep -q "skipped: needs_tool: SKIP: frobnicate not found" err1 || fail "reason not named: $(cat err1)"
grep -q "must run here: needs_tool" err1 || fail "verdict line: $(cat err1)"

# Nothing skipped: exit 0, nothing said.
ctest -LE gpu --output-junit j2.xml >/dev/null 2>&1
python3 "$check" j2.xml tests.json --allow-label gpu 2>err2 || fail "nothing skipped: exit $?: $(cat err2)"
[ ! -s err2 ] || fail "nothing skipped, yet: $(cat err2)"

# A skipped gpu test: allowed with --allow-label gpu, listed; refused without it.
ctest -L gpu --output-junit j3.xml >/dev/null 2>&1 || true
python3 "$check" j3.xml tests.json --allow-label gpu 2>err3 || fail "gpu skip with --allow-label gpu: exit $?"
grep -q "skipped: needs_gpu: no GPU visible: skipped (allowed: label gpu)" err3 || fail "$(cat err3)"
rc=0
python3 "$check" j3.xml tests.json 2>/dev/null || rc=$?
[ "$rc" = 1 ] || fail "gpu skip without --allow-label: exit $rc, want 1"

# Unreadable input and usage.
rc=0
python3 "$check" /nonexistent.xml tests.json 2>err4 || rc=$?
[ "$rc" = 2 ] && grep -q "/nonexistent.xml" err4 || fail "unreadable junit: exit $rc: $(cat err4)"
rc=0
python3 "$check" j2.xml 2>/dev/null || rc=$?
[ "$rc" = 64 ] || fail "usage: exit $rc, want 64"
echo "check-skips: fires on a skip (named, with its reason), silent without one, gpu allowed only by label"
