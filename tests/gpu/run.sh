#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/run.sh [--probe FILE.cu] [--build DIR] - the one script for a machine with an
# NVIDIA GPU (written for an H100/H200: sm_90). It
#   1. configures and builds the tree with CUPTI and the CUDA examples (DIR, default
#      build-gpu; -DCMAKE_CUDA_ARCHITECTURES from $LIN_CUDA_ARCH, default 90),
#   2. runs ctest -L gpu: test_cupti_gpu_live (the live binding's success path through the
#      real libcupti and driver), example_pool_lineage (examples/pool_lineage.cu: a
#      thread pool, fan-out, graph replays and a batched launch, validated against the
#      program's own truth file) and example_attrib_causes (examples/attrib_causes.cu:
#      launch-delay causes injected on the device, scored by lineage-explain --score
#      against the program's cause-truth file; accuracy and the CPU cost of latency
#      timestamps are reported, not asserted),
#   3. if --probe names a CUPTI probe program (a .cu file built with nvcc as its header
#      says, run plain and with --graph-trace), runs it and keeps its "E<n>" lines,
#   4. prints one summary and exits 0 only if every step passed. A GPU test that skips on
#      a machine where a GPU is visible counts as a failure here.
# It needs a GPU and cannot run without one (it says so and exits 77).
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD probe="" build="$root/build-gpu"
while [ $# -gt 0 ]; do
	case $1 in
	--probe) probe=${2:?--probe needs a file}; shift 2 ;;
	--build) build=${2:?--build needs a directory}; shift 2 ;;
	-h|--help) sed -n '3,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 64 ;;
	esac
done
cuda=${LIN_CUDA_ROOT:-/usr/local/cuda}
arch=${LIN_CUDA_ARCH:-90}
log="$build/gpu-run.log"
summary=()
failed=0
t0=$(date +%s)
note() { summary+=("$*"); }
bad() { summary+=("FAIL: $*"); failed=1; }
elapsed() { echo "$(( $(date +%s) - t0 ))s"; }

if [ ! -e /dev/nvidiactl ] && ! nvidia-smi -L >/dev/null 2>&1; then
	echo "tests/gpu/run.sh: no GPU visible (no /dev/nvidiactl, no nvidia-smi -L): nothing run"
	exit 77
fi
mkdir -p "$(dirname "$log")"
: >"$log"
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
note "GPU: ${gpu:-unknown (nvidia-smi gave nothing)}; CUDA at $cuda; arch sm_$arch"

# 1. build
if cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIN_WITH_CUPTI=ON \
	-DLIN_CUDA_ROOT="$cuda" -DCMAKE_CUDA_ARCHITECTURES="$arch" >>"$log" 2>&1 &&
   cmake --build "$build" -j "$(nproc)" >>"$log" 2>&1; then
	note "build: ok ($(elapsed))"
else
	bad "build (see $log)"
fi

# 2. ctest -L gpu: every test must pass; a skip with a GPU present is a failure.
if [ "$failed" = 0 ]; then
	out=$(cd "$build" && ctest -L gpu -V 2>&1)
	echo "$out" >>"$log"
	for t in test_cupti_gpu_live example_pool_lineage example_attrib_causes; do
		line=$(echo "$out" | grep -E "Test +#[0-9]+: $t " | head -1)
		case $line in
		*Passed*) note "ctest $t: passed" ;;
		*Skipped*|*"Not Run"*) bad "ctest $t: skipped with a GPU visible" ;;
		"") bad "ctest $t: not run (not built? see $log)" ;;
		*) bad "ctest $t: $(echo "$line" | sed 's/.*\*\*\*//; s/ *[0-9.]* sec$//')" ;;
		esac
	done
	while IFS= read -r l; do note "  $l"; done < <(echo "$out" |
		grep -E '^([0-9]+: )?(gpu_live:|run_pool_lineage:|run_attrib_causes:|ATTRIB scenario=|latency (on|off): SUMMARY)|GPU records|joined|matched truth' |
		sed 's/^[0-9]*: //' | head -60)
	note "ctest -L gpu: done ($(elapsed))"
fi

# 3. the probe
if [ -n "$probe" ]; then
	if [ ! -f "$probe" ]; then
		bad "probe $probe: no such file"
	elif "$cuda/bin/nvcc" -std=c++17 -O1 -arch="sm_$arch" -I"$cuda/include" "$probe" \
		-L"$cuda/lib64" -Xlinker -rpath,"$cuda/lib64" -lcupti -lcuda \
		-o "$build/live_probe" >>"$log" 2>&1; then
		for mode in "" "--graph-trace"; do
			pout=$(timeout 120 "$build/live_probe" $mode 2>&1); rc=$?
			echo "$pout" >>"$log"
			note "probe ${mode:-plain}: exit $rc"
			[ "$rc" = 0 ] || bad "probe ${mode:-plain} exited $rc"
			while IFS= read -r l; do note "  $l"; done < <(echo "$pout" | grep -E '^E[0-9]' | head -40)
		done
	else
		bad "probe $probe does not build (see $log)"
	fi
	note "probe: done ($(elapsed))"
else
	note "probe: not run (pass --probe FILE.cu)"
fi

echo "==== lineage GPU run: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?') ===="
printf '%s\n' "${summary[@]}"
echo "==== $( [ "$failed" = 0 ] && echo PASS || echo FAIL ) in $(elapsed); full log: $log ===="
exit "$failed"
