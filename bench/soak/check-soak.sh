#!/usr/bin/env bash
# check-soak.sh SOAK_BINARY REQUESTS [MAX_GROWTH_KIB [SOAK_ARGS...]]
# Runs lineage-soak and fails if the registry did not end empty or resident memory grew by
# more than MAX_GROWTH_KIB (default 8192) between the warm point (10%) and the end;
# MAX_GROWTH_KIB 0 skips the memory check (sanitizer builds).
set -euo pipefail
bin=$1 n=$2 max=${3:-8192}
shift $(($# < 3 ? $# : 3))
out=$("$bin" --requests "$n" "$@")
echo "$out"
warm=$(sed -n 's/.*rss_warm_kib=\([0-9-]*\).*/\1/p' <<<"$out")
end=$(sed -n 's/.*rss_end_kib=\([0-9-]*\).*/\1/p' <<<"$out")
[ -n "$warm" ] && [ -n "$end" ] || { echo "check-soak: no SUMMARY figures" >&2; exit 1; }
growth=$((end - warm))
if [ "$max" -eq 0 ]; then
	echo "rss growth after warm-up: ${growth} KiB (not checked)"
	exit 0
fi
echo "rss growth after warm-up: ${growth} KiB (limit ${max} KiB)"
[ "$growth" -le "$max" ] || { echo "check-soak: resident memory grew by ${growth} KiB" >&2; exit 1; }
