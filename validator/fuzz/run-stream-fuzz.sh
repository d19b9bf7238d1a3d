#!/bin/sh
# run-stream-fuzz.sh SECONDS [BUILD_DIR] - build the stream-mode reader's libFuzzer harness with clang in
# its own build directory and run it for SECONDS on a seed corpus made of the generated
# fixtures. Exits non-zero when the fuzzer finds a crash, leak or sanitizer report.
set -eu
secs=${1:?usage: run-stream-fuzz.sh SECONDS [BUILD_DIR]}
src=$(cd "$(dirname "$0")/../.." && pwd)
bld=${2:-$src/build-fuzz}
cmake -S "$src" -B "$bld" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DLIN_BUILD_FUZZ=ON -DLIN_BUILD_TESTS=OFF -DLIN_BUILD_BENCH=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$bld" -j2 --target lin_fuzz_stream lin_fixtures >/dev/null
corpus="$bld/fuzz-stream-corpus"
mkdir -p "$corpus"
# each seed: two bytes choosing the piece sizes (0: one byte at a time), then a fixture
for f in "$bld"/fixtures/generated/*.lt; do
  { printf '\000\000'; cat "$f"; } >"$corpus/z-${f##*/}"
  { printf '\007\061'; cat "$f"; } >"$corpus/r-${f##*/}"
done
start=$(date +%s)
set +e
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
  "$bld/validator/lin_fuzz_stream" -max_total_time="$secs" -rss_limit_mb=512 \
  -max_len=65536 -print_final_stats=1 -artifact_prefix="$bld/" "$corpus" >"$bld/fuzz-stream.log" 2>&1
rc=$?
set -e
end=$(date +%s)
tail -15 "$bld/fuzz-stream.log"
if [ "$rc" -eq 0 ]; then
  echo "FUZZ ran $((end - start)) s without a finding (log: $bld/fuzz-stream.log)"
else
  echo "FUZZ found a problem after $((end - start)) s (exit $rc, log: $bld/fuzz-stream.log)"
fi
exit $rc
