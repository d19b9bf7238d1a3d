#!/bin/sh
# run.sh VALIDATE GEN SRCDIR WORKDIR - the OTLP export of a two-host synthetic run, decoded
# with the OpenTelemetry project's OTLP packages (decode.mjs). Exit 77 (ctest: skipped)
# when node/npm are missing or the packages cannot be installed (no registry).
set -u
V=$1 G=$2 SRC=$3 W=$4
. "$SRC/otel-packages.sh"
otel_packages "$SRC" || exit 77
rm -rf "$W" && mkdir -p "$W/legacy" || exit 1
# The request_link record (format 1.1), then the format-1.0 "w3c:" request name: the same
# export either way.
for d in "$W" "$W/legacy"; do
	mode=; [ "$d" = "$W/legacy" ] && mode=legacy
	"$G" "$d" $mode || { echo "FAIL: generator $mode"; exit 1; }
	"$V" --json --export-otlp "$d/out.json" "$d/host-a.lt" "$d/host-b.lt" \
		>"$d/report.json" 2>"$d/stderr.txt"
	rc=$?
	if [ "$rc" -ne 1 ]; then
		echo "FAIL: lineage-validate exit $rc, want 1 (one lost kernel, one dropped record) $mode"
		cat "$d/stderr.txt"
		exit 1
	fi
	node "$SRC/decode.mjs" "$d/out.json" "$d/expected.json" "$d/stderr.txt" "$d/report.json" ||
		{ echo "FAIL: decode $mode"; exit 1; }
done
