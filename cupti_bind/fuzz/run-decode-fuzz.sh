#!/bin/sh
# run-decode-fuzz.sh SECONDS [BUILD_DIR] - build the CUPTI decoder's fuzz harness with clang
# (it needs CUPTI's headers and libcupti: cuptiActivityGetNextRecord walks every input) and
# run it for SECONDS from an empty corpus (byte 0 of an input makes most inputs real CUPTI
# records). Exits non-zero when the fuzzer finds a crash, a broken invariant or a
# sanitizer report; prints a note and exits 0 when CUPTI is not installed.
set -eu
secs=${1:?usage: run-decode-fuzz.sh SECONDS [BUILD_DIR]}
src=$(cd "$(dirname "$0")/../.." && pwd)
bld=${2:-$src/build-fuzz-cupti}
cmake -S "$src" -B "$bld" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DLIN_BUILD_FUZZ=ON -DLIN_BUILD_TESTS=OFF -DLIN_BUILD_BENCH=OFF -DLIN_WITH_CUPTI=AUTO \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
if ! cmake --build "$bld" -j2 --target lin_fuzz_cupti_decode >/dev/null 2>&1; then
  if grep -q 'LIN_HAVE_CUPTI:INTERNAL=OFF\|LIN_HAVE_CUPTI:BOOL=OFF' "$bld/CMakeCache.txt" 2>/dev/null ||
     ! [ -f /usr/local/cuda/include/cupti.h ]; then
    echo "FUZZ (CUPTI decoder) skipped: CUPTI not found"
    exit 0
  fi
  echo "FUZZ (CUPTI decoder): the harness does not build" >&2
  exit 1
fi
corpus="$bld/fuzz-decode-corpus"
mkdir -p "$corpus"
start=$(date +%s)
set +e
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
  "$bld/cupti_bind/lin_fuzz_cupti_decode" -max_total_time="$secs" -rss_limit_mb=1024 \
  -max_len=8192 -print_final_stats=1 -artifact_prefix="$bld/decode-" "$corpus" \
  >"$bld/fuzz-decode.log" 2>&1
rc=$?
set -e
end=$(date +%s)
tail -8 "$bld/fuzz-decode.log"
if [ "$rc" -eq 0 ]; then
  echo "FUZZ (CUPTI decoder) ran $((end - start)) s without a finding (log: $bld/fuzz-decode.log)"
else
  echo "FUZZ (CUPTI decoder) found a problem after $((end - start)) s (exit $rc, log: $bld/fuzz-decode.log)"
fi
exit "$rc"
