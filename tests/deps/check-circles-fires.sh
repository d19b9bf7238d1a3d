#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-circles-fires.sh WORKDIR - check-circles.py names a circle it finds (two objects of
# one library folder calling each other), accepts it once listed as known, and names a
# known circle that is gone.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
w=$1
rm -rf "$w"
d="$w/build/CMakeFiles/lineage.dir/lineage"
mkdir -p "$d"
printf 'int lin_b(int);\nint lin_a(int x) { return x ? lin_b(x - 1) : 0; }\n' >"$w/a.c"
printf 'int lin_a(int);\nint lin_b(int x) { return x ? lin_a(x - 1) : 1; }\n' >"$w/b.c"
printf 'int lin_c(int x) { return x; }\n' >"$w/c.c"
for f in a b c; do cc -c "$w/$f.c" -o "$d/$f.c.o"; done
expect() { # WANT-RC PATTERN KNOWN
	local rc=0
	python3 "$here/check-circles.py" "$w/build" "$3" >"$w/out" 2>&1 || rc=$?
	if [ "$rc" -ne "$1" ] || ! grep -q -- "$2" "$w/out"; then
		echo "FAIL: wanted exit $1 and '$2', got exit $rc:" >&2
		cat "$w/out" >&2
		exit 1
	fi
	echo "ok: exit $1, $2"
}
: >"$w/none"
expect 1 'circle: lineage/a.c lineage/b.c' "$w/none"
echo 'lineage/b.c lineage/a.c' >"$w/known"
expect 0 'beyond the 1 known' "$w/known"
echo 'lineage/a.c lineage/c.c' >"$w/stale"
expect 1 'names a circle that is gone' "$w/stale"
rm "$d/b.c.o"
expect 0 'beyond the 0 known' "$w/none"
rm -rf "$w"
