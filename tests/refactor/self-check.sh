#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# self-check.sh BUILD WORKDIR - same-output.sh finds what it exists to find: a capture
# checked against the build that made it has no difference (exit 0); a changed output, a
# missing one and a changed fixture are each named and fail the check (exit 1).
set -euo pipefail
# Three synthetic cells are enough to show each kind of difference is found.
export SAME_OUTPUT_QUICK=1
here=$(cd "$(dirname "$0")" && pwd)
build=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
# The real traces are left out: the capture must not depend on them.
"$here/same-output.sh" capture "$build" "$work/cap" "$work/no-real-traces" >"$work/capture.log" 2>&1
grep -q 'captured [1-9][0-9]* outputs' "$work/capture.log" || { cat "$work/capture.log"; exit 1; }

expect() { # WANT-RC PATTERN: a check exits WANT-RC and prints PATTERN
	local rc=0
	"$here/same-output.sh" check "$build" "$work/cap" >"$work/check.log" 2>&1 || rc=$?
	if [ "$rc" -ne "$1" ] || ! grep -q -- "$2" "$work/check.log"; then
		echo "FAIL: wanted exit $1 and '$2', got exit $rc:" >&2
		tail -20 "$work/check.log" >&2
		exit 1
	fi
	echo "ok: exit $1, '$2'"
}
expect 0 ' 0 different'
out=$(find "$work/cap/out" -name '*.validate.out' -size +100c | sort | sed -n 1p)
cp "$out" "$work/saved"
sed -i 's/"observed"/"inferred"/; s/[0-9]/7/' "$out"
expect 1 "DIFF $(basename "$out")"
mv "$work/saved" "$out"
rm "$out"
expect 1 "DIFF new after: $(basename "$out")"
fx=$(find "$work/cap/corpus/fixtures" -name 'good_*.lt' | sort | sed -n 1p)
printf 'x' >>"$fx"
expect 1 "DIFF regenerated: fixtures/$(basename "$fx")"
sy=$(find "$work/cap/corpus/synth" -name 'pool-handoff*.lt' | sed -n 1p)
head -c -7 "$sy" >"$work/cut" && cat "$work/cut" >"$sy"
expect 1 "DIFF regenerated: synth/$(basename "$sy")"
rm -rf "$work"
