#!/bin/sh
# run-w3c-fuzz.sh SECONDS [BUILD_DIR] - build the W3C Trace Context fuzz harness with clang
# in its own build directory and run it for SECONDS on a seed corpus of well-formed and
# near-miss traceparent/tracestate pairs. Exits non-zero when the fuzzer finds a crash,
# a broken round trip or a sanitizer report.
set -eu
secs=${1:?usage: run-w3c-fuzz.sh SECONDS [BUILD_DIR]}
src=$(cd "$(dirname "$0")/../.." && pwd)
bld=${2:-$src/build-fuzz}
cmake -S "$src" -B "$bld" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DLIN_BUILD_FUZZ=ON -DLIN_BUILD_TESTS=OFF -DLIN_BUILD_BENCH=OFF -DLIN_WITH_CUPTI=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$bld" -j2 --target lin_fuzz_w3c >/dev/null
corpus="$bld/fuzz-w3c-corpus"
mkdir -p "$corpus"
tp=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
printf '%s\n' "$tp" >"$corpus/traceparent-only"
printf '%s\ncongo=t61rcWkgMzE,rojo=00f067aa0ba902b7\n' "$tp" >"$corpus/other-vendors"
printf '%s\nlin=1.0000000000000002.1.1.1.1.00000000.00000000,rojo=1\n' "$tp" >"$corpus/lin-member"
printf 'cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra\n a = b ,, c=d \n' \
	>"$corpus/future-version"
printf '00-00000000000000000000000000000000-00f067aa0ba902b7-01\nlin=\n' >"$corpus/zero-trace"
start=$(date +%s)
set +e
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
  "$bld/lineage/lin_fuzz_w3c" -max_total_time="$secs" -rss_limit_mb=512 -max_len=2048 \
  -print_final_stats=1 -artifact_prefix="$bld/w3c-" "$corpus" >"$bld/fuzz-w3c.log" 2>&1
rc=$?
set -e
end=$(date +%s)
tail -8 "$bld/fuzz-w3c.log"
if [ "$rc" -eq 0 ]; then
  echo "FUZZ (w3c) ran $((end - start)) s without a finding (log: $bld/fuzz-w3c.log)"
else
  echo "FUZZ (w3c) found a problem after $((end - start)) s (exit $rc, log: $bld/fuzz-w3c.log)"
fi
exit $rc
