#!/usr/bin/env bash
# .ci/readme-sample.sh [--update] BUILD_DIR
# The README's demo excerpt, from a real run: runs the demo's workloads
# (bench/synth/demo-run.sh, seed 1) with BUILD_DIR's lineage-synth and lineage-validate,
# keeps the lines the README shows (below) and compares them with the README's block
# between "<!-- demo-sample" and "<!-- /demo-sample -->". Exit 0: the same; 1: the README
# drifted (the diff is printed; --update rewrites the block); 2: the README has no such
# block or the run failed; 64: usage. ctest runs it as readme_demo_sample.
# Kept: the commands, what the workload wrote, and the report lines a reader needs (GPU
# records, joins, losses and their causes, incorrect, truth labels, the deepest join, the
# first finding, exit status); left out: record and byte counts, the other findings, and
# the byte offset of the finding shown (it changes with the host name in the header).
set -euo pipefail
update=0
[ "${1:-}" = --update ] && { update=1; shift; }
[ $# -eq 1 ] || { sed -n '2,13s/^# \{0,1\}//p' "$0" >&2; exit 64; }
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
readme=$root/README.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lineage-readme.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

grep -q '^<!-- demo-sample' "$readme" && grep -q '^<!-- /demo-sample -->' "$readme" || {
	echo "readme-sample: $readme has no <!-- demo-sample --> ... <!-- /demo-sample --> block" >&2
	exit 2
}
rc=0
"$root/bench/synth/demo-run.sh" "$build" "$tmp/demo" 1 >"$tmp/run.txt" 2>&1 || rc=$?
if [ "$rc" -gt 1 ] || ! grep -q '^exit status' "$tmp/run.txt"; then
	cat "$tmp/run.txt" >&2
	echo "readme-sample: the demo's run failed (exit $rc)" >&2
	exit 2
fi
# Paths as ./demo.sh prints them (it runs from the clone with build/demo).
sed "s#$tmp/demo/#build/demo/#g; s#$build/#build/#g" "$tmp/run.txt" | awk '
	/^  (records|joined, inferred|ambiguous|launches in stream capture|calls inside their bracket|structural findings|bytes per launch) / { next }
	/^findings \(first/ { nf = 0; print; next }
	/^  [^ ].*:[0-9]+: record #[0-9]+: / { if (nf++ == 0) { sub(/:[0-9]+: record #/, ":...: record #"); print }; next }
	/^  \.\.\. [0-9]+ more finding/ { print "  ..."; next }
	/^$/ { if (!blank++) print; next }
	{ blank = 0; print }
' | sed '${/^$/d}' >"$tmp/sample.txt"

# The README with the block replaced by the sample: fence, sample, fence.
awk -v sample="$tmp/sample.txt" '
	/^<!-- demo-sample/ { print; print "```"; while ((getline l < sample) > 0) print l; print "```"; skip = 1; next }
	/^<!-- \/demo-sample -->/ { skip = 0 }
	!skip { print }
' "$readme" >"$tmp/README.md"
if cmp -s "$readme" "$tmp/README.md"; then
	echo "readme-sample: README.md's demo excerpt matches a run of the demo"
	exit 0
fi
if [ "$update" = 1 ]; then
	cp "$tmp/README.md" "$readme"
	echo "readme-sample: README.md's demo excerpt rewritten from a run of the demo"
	exit 0
fi
diff -u "$readme" "$tmp/README.md" >&2 || true
echo "readme-sample: README.md's demo excerpt differs from a run of the demo (above);" >&2
echo "  .ci/readme-sample.sh --update BUILD_DIR rewrites it" >&2
exit 1
