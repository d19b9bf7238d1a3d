#!/usr/bin/env bash
# versions.sh BUILD_DIR SOURCE_DIR - one release, one source: include/lineage/version.h.
# The tools' --version, lineage.pc, the Python package the build made (lineage/_build.py),
# the trace format the tools read and the library writes, docs/trace-format.md's title and
# the README's generated demo excerpt all say the version and trace format that header
# holds. Exit 0: they agree; 1: each disagreement named.
# versions.sh --self-test BUILD_DIR SOURCE_DIR: the same check against a copy of the
# sources whose header says another version must fail (the check can fire).
set -euo pipefail
if [ "${1:-}" = --self-test ]; then
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/lineage-versions.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$tmp/include/lineage" "$tmp/docs"
	sed 's/^#define LIN_VERSION_MINOR \([0-9]*\)$/#define LIN_VERSION_MINOR 9\1/' \
		"$3/include/lineage/version.h" >"$tmp/include/lineage/version.h"
	cp "$3/docs/trace-format.md" "$tmp/docs/"
	cp "$3/README.md" "$tmp/"
	if "$0" "$2" "$tmp" >"$tmp/out" 2>&1; then
		cat "$tmp/out"
		echo "FAIL: a header with another minor version passed the check"
		exit 1
	fi
	grep -q "lineage-validate --version" "$tmp/out" || { cat "$tmp/out"; exit 1; }
	echo "versions: fires on a header of another version ($(grep -c '^MISMATCH' "$tmp/out") mismatches)"
	exit 0
fi
build=$1 src=$2
h=$src/include/lineage/version.h
num() { sed -n "s/^#define $1 \([0-9]*\)$/\1/p" "$h"; }
v=$(num LIN_VERSION_MAJOR).$(num LIN_VERSION_MINOR).$(num LIN_VERSION_PATCH)
f=$(num LIN_TRACE_FORMAT_MAJOR).$(num LIN_TRACE_FORMAT_MINOR)
bad=0
same() { # same WHAT GOT WANT
	if [ "$2" != "$3" ]; then
		echo "MISMATCH $1: '$2', want '$3' (include/lineage/version.h)"
		bad=1
	fi
}
same "lineage-validate --version" "$("$build/validator/lineage-validate" --version)" \
	"lineage-validate $v (trace format $f)"
if [ -x "$build/explain/lineage-explain" ]; then
	same "lineage-explain --version" "$("$build/explain/lineage-explain" --version)" \
		"lineage-explain $v (trace format $f)"
fi
for pc in "$build"/pc-*/lineage.pc "$build"/pc-*/lineage-otlp.pc; do
	same "$(basename "$(dirname "$pc")")/$(basename "$pc") Version" \
		"$(sed -n 's/^Version: //p' "$pc")" "$v"
done
if [ -f "$build/python/pkg/lineage/_build.py" ]; then
	same "the Python package's version (python/pkg/lineage/_build.py)" \
		"$(sed -n "s/^VERSION = '\(.*\)'$/\1/p" "$build/python/pkg/lineage/_build.py")" "$v"
fi
# What the library writes: the trace header of a run of the quick-start program.
if [ -x "$build/examples/lineage-quickstart" ]; then
	tmpd=$(mktemp -d "${TMPDIR:-/tmp}/lineage-versions.XXXXXX")
	LINEAGE_LOG=off "$build/examples/lineage-quickstart" "$tmpd/q.lt" >/dev/null
	# The header map's "writer" string and "version" array (MessagePack: fixstr, fixarray).
	hdr=$(python3 - "$tmpd/q.lt" <<'PY'
import re, sys
d = open(sys.argv[1], "rb").read(4096)
w = re.search(rb"\xa6writer[\xa0-\xbf](liblineage [0-9.]+)", d)
f = re.search(rb"\xa7version\x92([\x00-\x7f])([\x00-\x7f])", d)
print((w.group(1).decode() if w else "?") + "|" + ("%d.%d" % (f.group(1)[0], f.group(2)[0]) if f else "?"))
PY
)
	j=$("$build/validator/lineage-validate" --json --allow-empty "$tmpd/q.lt" || true)
	rm -rf "$tmpd"
	same "the trace header's writer" "${hdr%%|*}" "liblineage $v"
	same "the trace header's format version" "${hdr#*|}" "$f"
	same "the validator's JSON format_version" \
		"$(printf '%s' "$j" | sed -n 's/.*"format_version":"\([^"]*\)".*/\1/p')" "$f"
	same "the validator's JSON validator" \
		"$(printf '%s' "$j" | sed -n 's/.*"validator":"\([^"]*\)".*/\1/p')" "$v"
fi
same "docs/trace-format.md title" "$(head -1 "$src/docs/trace-format.md")" \
	"# The lineage trace format, version $f"
# The README's excerpt is generated (.ci/readme-sample.sh); its first report line names both.
line=$(grep -m1 '^lineage-validate [0-9]' "$src/README.md" || true)
same "README.md demo excerpt" "${line%%:*}" "lineage-validate $v (trace format $f)"
[ "$bad" = 0 ] || exit 1
echo "versions: $v (trace format $f) everywhere"
