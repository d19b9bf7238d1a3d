#!/usr/bin/env bash
# tests/headers/check-context.sh HEADER...
# tests/headers/check-context.sh --self-test
# Every public function (a line starting LIN_API) must say in the comment just above it (or
# above its group of declarations) which thread or context may call it: a "Context:" line.
# Exit status: 0 every function documented; 1 some are not (listed as FILE:LINE: declaration);
# 64 usage.
set -euo pipefail

check() {
	awk '
	/^\/\*/ { inc = 1; blk = "" }
	inc { blk = blk $0 "\n" }
	inc && /\*\// { inc = 0; last = blk; next }
	inc { next }
	/^LIN_API/ {
		if (last !~ /Context:/) { print FILENAME ":" FNR ": " $0; bad = 1 }
		decl = !/;[ \t]*$/
		next
	}
	decl { decl = !/;[ \t]*$/; next }
	/^[ \t]*$/ { next }
	{ last = "" }
	END { exit bad }' "$@"
}

if [ "${1:-}" = --self-test ]; then
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	printf '%s\n' '/*' ' * f - one.' ' * Context: any thread.' ' */' 'LIN_API int f(int a,' \
		'	      int b);' '/* g / h - two. Context: any thread. */' 'LIN_API int g(void);' \
		'LIN_API int h(void);' >"$t/good.h"
	printf '%s\n' '/* f - one. Context: any thread. */' 'LIN_API int f(void);' '' \
		'/* g - undocumented context. */' 'LIN_API int g(void);' 'struct s { int a; };' \
		'LIN_API int h(void);' >"$t/bad.h"
	check "$t/good.h" || { echo "self-test: a documented header failed" >&2; exit 1; }
	out=$(check "$t/bad.h") && { echo "self-test: an undocumented header passed" >&2; exit 1; }
	[ "$(printf '%s\n' "$out" | wc -l)" -eq 2 ] ||
		{ echo "self-test: expected g and h, got: $out" >&2; exit 1; }
	echo "check-context self-test: ok"
	exit 0
fi
[ $# -gt 0 ] || { sed -n '2,7s/^# \{0,1\}//p' "$0" >&2; exit 64; }
if ! check "$@"; then
	echo "check-context: the functions above have no \"Context:\" line in their comment" >&2
	exit 1
fi
