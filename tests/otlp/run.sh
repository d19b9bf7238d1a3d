#!/bin/sh
# run.sh VALIDATE GEN SRCDIR WORKDIR - the OTLP export of a two-host synthetic run, decoded
# with the OpenTelemetry project's OTLP packages (decode.mjs). Exit 77 (ctest: skipped)
# when node/npm are missing or the packages cannot be installed (no registry).
set -u
V=$1 G=$2 SRC=$3 W=$4
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "SKIP: node or npm not found"
	exit 77
fi
if [ ! -f "$SRC/node_modules/@opentelemetry/otlp-transformer/package.json" ]; then
	if ! (cd "$SRC" && npm ci --no-audit --no-fund); then
		echo "SKIP: npm ci failed (is the npm registry reachable?)"
		exit 77
	fi
fi
rm -rf "$W" && mkdir -p "$W" || exit 1
"$G" "$W" || { echo "FAIL: generator"; exit 1; }
"$V" --json --export-otlp "$W/out.json" "$W/host-a.lt" "$W/host-b.lt" \
	>"$W/report.json" 2>"$W/stderr.txt"
rc=$?
if [ "$rc" -ne 1 ]; then
	echo "FAIL: lineage-validate exit $rc, want 1 (one lost kernel, one dropped record)"
	cat "$W/stderr.txt"
	exit 1
fi
exec node "$SRC/decode.mjs" "$W/out.json" "$W/expected.json" "$W/stderr.txt" "$W/report.json"
