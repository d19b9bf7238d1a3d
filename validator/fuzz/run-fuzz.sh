#!/bin/sh
# run-fuzz.sh SECONDS [BUILD_DIR] - build the validator's libFuzzer harness with clang in
# its own build directory and run it for SECONDS on a seed corpus made of the generated
# fixtures, and of each truth fixture paired with its trace. Exits non-zero when the fuzzer finds a crash, leak or sanitizer report.
set -eu
secs=${1:?usage: run-fuzz.sh SECONDS [BUILD_DIR]}
src=$(cd "$(dirname "$0")/../.." && pwd)
bld=${2:-$src/build-fuzz}
cmake -S "$src" -B "$bld" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DLIN_BUILD_FUZZ=ON -DLIN_BUILD_TESTS=OFF -DLIN_BUILD_BENCH=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$bld" -j2 --target lin_fuzz_validate lin_fixtures >/dev/null
corpus="$bld/fuzz-corpus"
mkdir -p "$corpus"
cp "$bld"/fixtures/generated/*.lt "$bld"/fixtures/generated/*.truth "$corpus"/
# Each truth file with its trace, as one input ('T', the truth's length, the truth, the
# trace: fuzz_validate.c), so the fuzzer starts where labels meet GPU records.
for t in "$bld"/fixtures/generated/*.truth; do
  lt=${t%.truth}.lt
  [ -f "$lt" ] || continue
  python3 -c 'import struct, sys; t = open(sys.argv[1], "rb").read(); l = open(sys.argv[2], "rb").read(); sys.stdout.buffer.write(b"T" + struct.pack("<I", len(t)) + t + l)' \
    "$t" "$lt" >"$corpus/pair-$(basename "$t" .truth)"
done
start=$(date +%s)
set +e
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
  "$bld/validator/lin_fuzz_validate" -max_total_time="$secs" -rss_limit_mb=512 \
  -max_len=65536 -print_final_stats=1 -artifact_prefix="$bld/" "$corpus" >"$bld/fuzz.log" 2>&1
rc=$?
set -e
end=$(date +%s)
tail -15 "$bld/fuzz.log"
if [ "$rc" -eq 0 ]; then
  echo "FUZZ ran $((end - start)) s without a finding (log: $bld/fuzz.log)"
else
  echo "FUZZ found a problem after $((end - start)) s (exit $rc, log: $bld/fuzz.log)"
fi
exit $rc
