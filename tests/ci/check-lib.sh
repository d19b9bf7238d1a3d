#!/usr/bin/env bash
# tests/ci/check-lib.sh - .ci/lib.sh's progress and failure reports, without building
# lineage: lin_logged on commands that pass, fail and run long, and lin_build on a tiny
# project that configures and one whose configure fails. Exit 0 when every case behaves.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../.ci/lib.sh"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0
expect() { # expect NAME FILE REGEX: FILE must match REGEX
	grep -Eq -- "$3" "$2" || { echo "FAIL $1: no /$3/ in:"; cat "$2"; fail=1; }
}
refuse() { # refuse NAME FILE REGEX: FILE must not match REGEX
	! grep -Eq -- "$3" "$2" || { echo "FAIL $1: /$3/ in:"; cat "$2"; fail=1; }
}

# A step that passes: a start and a done line, nothing of its output.
lin_logged "$t/ok.log" "step one" sh -c 'echo quiet-output' 2>"$t/ok.err" || { echo "FAIL ok: exit $?"; fail=1; }
expect ok "$t/ok.err" '^==> step one\.\.\.$'
expect ok "$t/ok.err" '^==> step one: done in [0-9]+s$'
refuse ok "$t/ok.err" 'quiet-output|still'
expect ok "$t/ok.log" 'quiet-output'

# A step that fails: the log's tail, its path and the exit status.
rc=0
lin_logged "$t/bad.log" "step two" sh -c 'echo the-cause; exit 3' 2>"$t/bad.err" || rc=$?
[ "$rc" -eq 3 ] || { echo "FAIL bad: exit $rc, not 3"; fail=1; }
expect bad "$t/bad.err" '^the-cause$'
expect bad "$t/bad.err" "step two FAILED \(exit 3\) after [0-9]+s; full log: $t/bad.log"

# A long step: a "still" line with the elapsed time and the last log line (cmake's
# percentage shortened).
LIN_PROGRESS_S=1 lin_logged "$t/long.log" "step three" \
	sh -c 'echo "[ 42%] Building C object x.c.o"; sleep 3' 2>"$t/long.err" || fail=1
expect long "$t/long.err" '^==>   still step three \([0-9]+s: 42% of the targets\)$'

# lin_build: logs inside the build directory; a failed configure shows its cause and log.
mkdir -p "$t/src" "$t/broken"
printf 'cmake_minimum_required(VERSION 3.18)\nproject(tiny NONE)\n' >"$t/src/CMakeLists.txt"
printf 'cmake_minimum_required(VERSION 3.18)\nproject(tiny NONE)\nmessage(FATAL_ERROR "the-configure-cause")\n' \
	>"$t/broken/CMakeLists.txt"
(LIN_ROOT="$t/src"; lin_build "$t/b1") 2>"$t/b1.err" || { echo "FAIL build: exit $?"; cat "$t/b1.err"; fail=1; }
[ -s "$t/b1/configure.log" ] && [ -f "$t/b1/build.log" ] || { echo "FAIL build: logs not in $t/b1"; fail=1; }
expect build "$t/b1.err" "^==> built $t/b1 in [0-9]+s$"
rc=0
(LIN_ROOT="$t/broken"; lin_build "$t/b2") 2>"$t/b2.err" || rc=$?
[ "$rc" -ne 0 ] || { echo "FAIL broken: configure failure not reported"; fail=1; }
expect broken "$t/b2.err" 'the-configure-cause'
expect broken "$t/b2.err" "configuring \(cmake\) FAILED .*full log: $t/b2/configure.log"
refuse broken "$t/b2.err" 'building \(cmake'

[ "$fail" = 0 ] && echo "check-lib: ok"
exit "$fail"
