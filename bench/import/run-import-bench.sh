#!/bin/sh
# run-import-bench.sh SOURCE.json[.gz] SIZE [BUILD_DIR] - generate SIZE bytes (e.g. 1G) of
# trace-event JSON from SOURCE (bench/import/gen_trace_events.c: the source's events
# replicated with fresh ids), validate it with lineage-validate under /usr/bin/time, and
# print one line:
#   SUMMARY bench=import case=<source> bytes=... seconds=... mb_per_s=... max_rss_mb=...
#           gpu_records=... exit=...
# MB = 10^6 bytes. The generated file is deleted afterwards. Figures only: nothing fails on
# timing. Not run in CI (a small run of the generator is the test import_bench_small).
set -eu
src=${1:?usage: run-import-bench.sh SOURCE.json[.gz] SIZE [BUILD_DIR]}
size=${2:?usage: run-import-bench.sh SOURCE.json[.gz] SIZE [BUILD_DIR]}
root=$(cd "$(dirname "$0")/../.." && pwd)
bld=${3:-$root/build}
out=$(mktemp "${TMPDIR:-/tmp}/lin-import-bench-XXXXXX.json")
trap 'rm -f "$out" "$out.time" "$out.json"' EXIT
"$bld/bench/lin-bench-gen-trace-events" "$src" "$out" --bytes "$size" >&2
bytes=$(stat -c %s "$out")
cat "$out" >/dev/null                 # read once: time the parser, not the disk
set +e
/usr/bin/time -f '%e %M' -o "$out.time" "$bld/validator/lineage-validate" --json \
	--max-findings 0 "$out" >"$out.json"
rc=$?
set -e
read -r secs kb <<EOT
$(tail -n 1 "$out.time")
EOT
gpu=$(grep -o '"gpu_records":[0-9]*' "$out.json" | cut -d: -f2)
awk -v b="$bytes" -v s="$secs" -v kb="$kb" -v g="$gpu" -v rc="$rc" -v c="$(basename "$src")" \
	'BEGIN { printf "SUMMARY bench=import case=%s bytes=%d seconds=%.2f mb_per_s=%.1f max_rss_mb=%.1f gpu_records=%s exit=%d\n", c, b, s, (s > 0 ? b / s / 1e6 : 0), kb / 1024, g, rc }'
