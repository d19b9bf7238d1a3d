#!/usr/bin/env bash
# ./test.sh [--sanitize=address|thread] [ctest args...]
# Installs missing Debian packages, builds, and runs every test that needs no GPU
# (ctest -LE gpu: labels unit, cli, stress). A test that skips (a tool or file missing)
# fails the run (.ci/check-skips.py names it and why). Exit status: ctest's, else 1 for a
# skip. import_real_traces (label realtraces) needs the real traces beside the clone
# (../shared/realtraces, docs/importers.md): where they are absent it is left out and said
# so (with LIN_CI=1, as in CI, their absence is a failure). The host scheduling
# collector's kernel tests (label perf) skip, listed with the kernel's reason, where
# perf_event_open is refused (perf_event_paranoid 3, seccomp): that skip is allowed.
set -euo pipefail
. "$(dirname "$0")/.ci/lib.sh"

san="" dir="$LIN_ROOT/build"
case "${1:-}" in
--sanitize=address) san="address;undefined"; dir="$LIN_ROOT/build-asan"; shift ;;
--sanitize=thread) san="thread"; dir="$LIN_ROOT/build-tsan"; shift ;;
--sanitize=*) echo "test.sh: --sanitize takes address or thread" >&2; exit 64 ;;
-h|--help) sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac

lin_install_deps
lin_build "$dir" -DLIN_SANITIZE="$san"
lin_say "running tests in $dir"
# The same sanitizer settings as each test's ENVIRONMENT, for tests registered without it.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:die_after_fork=0:suppressions=$LIN_ROOT/tests/tsan.supp}
exclude=gpu
if [ ! -d "$LIN_ROOT/../shared/realtraces" ]; then
	if [ -n "${LIN_CI:-}" ]; then
		echo "test.sh: $LIN_ROOT/../shared/realtraces is absent: CI places the real traces beside the clone (docs/importers.md)" >&2
		exit 1
	fi
	lin_say "left out: import_real_traces (label realtraces): it reads the real profiler traces"
	lin_say "  placed beside the clone in ../shared/realtraces, absent here (docs/importers.md)"
	exclude='gpu|realtraces'
fi
cd "$dir"
junit=$dir/Testing/ctest-junit.xml
rm -f "$junit"
rc=0
ctest -LE "$exclude" --output-on-failure --output-junit "$junit" -j "$(nproc)" "$@" || rc=$?
[ "$rc" -eq 0 ] || exit "$rc"
# ctest counts a skipped test as passed; here it fails the run (gpu tests are not run at all).
ctest --show-only=json-v1 >"$dir/Testing/ctest-tests.json"
if ! python3 "$LIN_ROOT/.ci/check-skips.py" "$junit" "$dir/Testing/ctest-tests.json" --allow-label gpu --allow-label perf; then
	lin_say "tests skipped (above): install what they need, or see CONTRIBUTING.md, \"Tests\""
	exit 1
fi
lin_say "every test ran: $(grep -c '<testcase' "$junit") passed, none skipped (left out: labels $exclude)"
