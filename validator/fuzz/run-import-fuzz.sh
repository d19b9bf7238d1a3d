#!/bin/sh
# run-import-fuzz.sh SECONDS [BUILD_DIR] - build the trace-event JSON (Kineto) fuzz harness
# with clang in its own build directory and run it for SECONDS on a seed corpus of the
# hand-made and schema-variant test inputs, with a dictionary of the keys and categories
# the reader looks for. Exits non-zero when the fuzzer finds a crash, leak or sanitizer
# report.
set -eu
secs=${1:?usage: run-import-fuzz.sh SECONDS [BUILD_DIR]}
src=$(cd "$(dirname "$0")/../.." && pwd)
bld=${2:-$src/build-fuzz}
cmake -S "$src" -B "$bld" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DLIN_BUILD_FUZZ=ON -DLIN_BUILD_TESTS=OFF -DLIN_BUILD_BENCH=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$bld" -j2 --target lin_fuzz_import >/dev/null
corpus="$bld/fuzz-import-corpus"
mkdir -p "$corpus"
cp "$src"/tests/import/data/*.json "$src"/tests/import/data/variants/*.json "$corpus"/
start=$(date +%s)
set +e
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
  "$bld/validator/lin_fuzz_import" -max_total_time="$secs" -rss_limit_mb=1024 \
  -max_len=131072 -dict="$src/validator/fuzz/trace_event.dict" -print_final_stats=1 \
  -artifact_prefix="$bld/import-" "$corpus" >"$bld/fuzz-import.log" 2>&1
rc=$?
set -e
end=$(date +%s)
tail -15 "$bld/fuzz-import.log"
if [ "$rc" -eq 0 ]; then
  echo "FUZZ (trace-event JSON) ran $((end - start)) s without a finding (log: $bld/fuzz-import.log)"
else
  echo "FUZZ (trace-event JSON) found a problem after $((end - start)) s (exit $rc, log: $bld/fuzz-import.log)"
fi
exit $rc
