#!/usr/bin/env bash
# ./test.sh [--sanitize=address|thread] [ctest args...]
# Installs missing Debian packages, builds, and runs every test that needs no GPU
# (ctest -LE gpu: labels unit, cli, stress). Exit status is ctest's.
set -euo pipefail
. "$(dirname "$0")/.ci/lib.sh"

san="" dir="$LIN_ROOT/build"
case "${1:-}" in
--sanitize=address) san="address;undefined"; dir="$LIN_ROOT/build-asan"; shift ;;
--sanitize=thread) san="thread"; dir="$LIN_ROOT/build-tsan"; shift ;;
--sanitize=*) echo "test.sh: --sanitize takes address or thread" >&2; exit 64 ;;
-h|--help) sed -n '2,4s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac

lin_install_deps
lin_build "$dir" -DLIN_SANITIZE="$san"
lin_say "running tests in $dir"
# The same sanitizer settings as each test's ENVIRONMENT, for tests registered without it.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:die_after_fork=0:suppressions=$LIN_ROOT/tests/tsan.supp}
cd "$dir"
ctest -LE gpu --output-on-failure -j "$(nproc)" "$@"
