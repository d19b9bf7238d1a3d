#!/bin/sh
# run-explain-fuzz.sh SECONDS [BUILD_DIR] - build lineage-explain's libFuzzer harness with
# clang in its own build directory and run it for SECONDS on a seed corpus of the ledger's
# command-line fixtures, damaged cause-truth files and the validator's generated fixtures. Exits non-zero when the
# fuzzer finds a crash, leak or sanitizer report.
set -eu
secs=${1:?usage: run-explain-fuzz.sh SECONDS [BUILD_DIR]}
src=$(cd "$(dirname "$0")/../.." && pwd)
bld=${2:-$src/build-fuzz-explain}
cmake -S "$src" -B "$bld" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DLIN_BUILD_FUZZ=ON -DLIN_BUILD_TESTS=ON -DLIN_BUILD_BENCH=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$bld" -j2 --target lin_fuzz_explain lin_fixtures lin-explain-gen >/dev/null
corpus="$bld/fuzz-corpus-explain"
mkdir -p "$corpus"
"$bld/tests/explain/lin-explain-gen" "$corpus"
# Cause-truth files too (the harness also reads its input as one, for --score).
for k in foreign-record bad-cause one-candidate bad-interval empty; do
  "$bld/tests/explain/lin-explain-gen" --cause-truth "$k" "$corpus/cause-$k.ct"
done
cp "$bld"/fixtures/generated/*.lt "$corpus"/
start=$(date +%s)
set +e
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
  "$bld/explain/lin_fuzz_explain" -max_total_time="$secs" -rss_limit_mb=1024 \
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
