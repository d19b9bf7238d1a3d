#!/bin/sh
# run-token-fuzz.sh SECONDS [BUILD_DIR] - build the token fuzz harness with clang in its own
# build directory and run it for SECONDS on a small seed corpus (well-formed and near-miss
# text tokens). Exits non-zero when the fuzzer finds a crash or sanitizer report.
set -eu
secs=${1:?usage: run-token-fuzz.sh SECONDS [BUILD_DIR]}
src=$(cd "$(dirname "$0")/../.." && pwd)
bld=${2:-$src/build-fuzz}
cmake -S "$src" -B "$bld" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DLIN_BUILD_FUZZ=ON -DLIN_BUILD_TESTS=OFF -DLIN_BUILD_BENCH=OFF -DLIN_WITH_CUPTI=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$bld" -j2 --target lin_fuzz_token >/dev/null
corpus="$bld/fuzz-token-corpus"
mkdir -p "$corpus"
printf 'lin1.0000000000000002.1.1.1.1.00000000' >"$corpus/well-formed"
printf 'lin1.0000000000000002.1.1.1.2.deadbeef' >"$corpus/epoch"
printf 'lin1.ffffffffffffffff.ffffffff.ffffffff.ffff.ff.ffffffff' >"$corpus/max"
start=$(date +%s)
set +e
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
  "$bld/lineage/lin_fuzz_token" -max_total_time="$secs" -rss_limit_mb=512 -max_len=128 \
  -print_final_stats=1 -artifact_prefix="$bld/token-" "$corpus" >"$bld/fuzz-token.log" 2>&1
rc=$?
set -e
end=$(date +%s)
tail -8 "$bld/fuzz-token.log"
if [ "$rc" -eq 0 ]; then
  echo "FUZZ (tokens) ran $((end - start)) s without a finding (log: $bld/fuzz-token.log)"
else
  echo "FUZZ (tokens) found a problem after $((end - start)) s (exit $rc, log: $bld/fuzz-token.log)"
fi
exit $rc
