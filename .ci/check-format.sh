#!/usr/bin/env bash
# .ci/check-format.sh [--fix] [--quiet] [FILE...]
# .ci/check-format.sh --self-test
# Checks C and C++ sources against .clang-format (clang-format --dry-run -Werror).
# Without FILE: every tracked *.c *.h *.cpp *.hpp *.cu (git ls-files) but the excluded
# paths below. --fix rewrites the files in place instead of checking them. --self-test
# checks the checker on a well-formatted and a misformatted file in a temporary folder.
# Exit status: 0 all formatted; 1 some file is not (each one listed, with its first
# differences); 2 clang-format missing or failing; 64 usage. CLANG_FORMAT names the binary
# (default clang-format; the config is tuned for version 14, whose output others may not
# reproduce exactly).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cf=${CLANG_FORMAT:-clang-format}
# Paths (extended regex on the repository-relative path) that are not ours to format:
# none today; generated or third-party sources go here.
exclude='^(build[^/]*|out)/'

die() { echo "check-format: $1" >&2; exit "${2:-64}"; }

self_test() {
	local t rc
	t=$(mktemp -d)
	trap 'rm -rf "$t"' RETURN
	cp "$root/.clang-format" "$t/"
	printf '%s\n' '/* SPDX-License-Identifier: MIT */' '#include <stddef.h>' '' \
		'static size_t twice(size_t n)' '{' '	if (n > 4)' '		return 2 * n;' \
		'	return n;' '}' >"$t/good.c"
	printf '%s\n' 'static int f(int a){' '    if(a) return 1;' '  return 0;}' >"$t/bad.c"
	rc=0; "$0" --quiet "$t/good.c" || rc=$?
	[ "$rc" -eq 0 ] || { echo "self-test: a formatted file failed (exit $rc)" >&2; return 1; }
	rc=0; "$0" --quiet "$t/bad.c" 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ] || { echo "self-test: a misformatted file passed (exit $rc)" >&2; return 1; }
	rc=0; "$0" --quiet "$t/good.c" "$t/bad.c" 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ] || { echo "self-test: one bad file of two passed (exit $rc)" >&2; return 1; }
	"$0" --quiet --fix "$t/bad.c"
	rc=0; "$0" --quiet "$t/bad.c" || rc=$?
	[ "$rc" -eq 0 ] || { echo "self-test: --fix left the file misformatted" >&2; return 1; }
	echo "check-format self-test: ok (fires on a misformatted file, silent on a formatted one)"
}

fix=0 quiet=0 files=()
while [ $# -gt 0 ]; do
	case "$1" in
	--fix) fix=1 ;;
	--quiet) quiet=1 ;;
	--self-test) command -v "$cf" >/dev/null || die "$cf not found (apt-get install clang-format)" 2
		self_test; exit ;;
	-h|--help) sed -n '2,11s/^# \{0,1\}//p' "$0"; exit 0 ;;
	--) shift; files+=("$@"); break ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) files+=("$1") ;;
	esac
	shift
done

command -v "$cf" >/dev/null ||
	die "$cf not found: apt-get install clang-format (Debian 12: version 14), or set CLANG_FORMAT" 2
ver=$("$cf" --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
[ "$ver" = 14 ] || [ "$quiet" = 1 ] ||
	echo "check-format: warning: $cf is version ${ver:-?}; .clang-format is tuned for 14" >&2

if [ ${#files[@]} -eq 0 ]; then
	cd "$root"
	mapfile -t files < <(git ls-files -- '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' | grep -Ev "$exclude")
	[ ${#files[@]} -gt 0 ] || die "no sources found under $root (not a git checkout?)" 2
fi

if [ "$fix" = 1 ]; then
	"$cf" -i --style=file "${files[@]}" || die "$cf -i failed" 2
	[ "$quiet" = 1 ] || echo "check-format: formatted ${#files[@]} files"
	exit 0
fi

for f in "${files[@]}"; do [ -f "$f" ] || die "no such file: $f"; done
bad=() out=$(mktemp)
trap 'rm -f "$out"' EXIT
for f in "${files[@]}"; do
	rc=0
	"$cf" --dry-run -Werror --ferror-limit=3 --style=file "$f" >"$out" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		grep -q 'Wclang-format-violations' "$out" || { cat "$out" >&2; die "$cf failed on $f" 2; }
		bad+=("$f")
		[ "$quiet" = 1 ] || head -n 9 "$out" >&2
	fi
done
if [ ${#bad[@]} -gt 0 ]; then
	echo "check-format: ${#bad[@]} of ${#files[@]} files differ from .clang-format:" >&2
	printf '  %s\n' "${bad[@]}" >&2
	if [ ${#bad[@]} -le 8 ]; then
		echo "check-format: to fix: .ci/check-format.sh --fix ${bad[*]}" >&2
	else
		echo "check-format: to fix: .ci/check-format.sh --fix FILE... (no FILE: all of them)" >&2
	fi
	exit 1
fi
[ "$quiet" = 1 ] || echo "check-format: ${#files[@]} files formatted"
