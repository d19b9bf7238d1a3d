#!/usr/bin/env bash
# ./demo.sh [SEED]
# Installs missing Debian packages, builds, then runs the `mixed` synthetic workload
# (thread-pool handoffs, handoff chains, graph replays, batched launches, fan-out across
# streams) on the CUPTI-semantics simulator twice on the same work: once with lineage's
# launch epochs and once as the PyTorch profiler (Kineto) sees it: op ids pushed on the
# thread that runs each op, no link across threads. Each trace is checked by
# lineage-validate against the workload's ground truth. Exit status: 0 when the epoch
# trace validates clean.
set -euo pipefail
. "$(dirname "$0")/.ci/lib.sh"
seed=${1:-1}
case "$seed" in -h|--help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;; esac

# The synthetic workloads need CUPTI's headers and library from the CUDA toolkit (no GPU,
# no driver): say so before installing or building anything.
cuda=${LIN_CUDA_ROOT:-/usr/local/cuda}
have() { for f in "$@"; do [ -e "$f" ] && return 0; done; return 1; }
if ! have "$cuda"/include/cupti.h "$cuda"/extras/CUPTI/include/cupti.h ||
   ! have "$cuda"/lib64/libcupti.so* "$cuda"/lib/libcupti.so* "$cuda"/extras/CUPTI/lib64/libcupti.so*; then
	echo "demo: the demo needs CUPTI's headers and libcupti from the CUDA toolkit at $cuda" >&2
	echo "(no GPU or driver is needed; LIN_CUDA_ROOT=DIR points elsewhere). ./test.sh" >&2
	echo "builds and tests everything else without it." >&2
	exit 1
fi
lin_say "demo: the first run installs the missing Debian packages (time: the mirror's), builds"
lin_say "(one to two minutes on two cores) and runs two workloads (seconds); later runs: seconds"
lin_install_deps
lin_build "$LIN_ROOT/build" -DLIN_CUDA_ROOT="$cuda"
bin="$LIN_ROOT/build"
out="$LIN_ROOT/build/demo"
mkdir -p "$out"
if [ ! -x "$bin/bench/lineage-synth" ]; then
	echo "demo: lineage-synth was not built: see $bin/configure.log (CUPTI under $cuda?)" >&2
	exit 1
fi

for strategy in epoch kineto; do
	lin_say "lineage-synth --scenario mixed --strategy $strategy --seed $seed"
	"$bin/bench/lineage-synth" --scenario mixed --strategy "$strategy" --seed "$seed" \
		-o "$out/mixed-$strategy.lintrace" --truth "$out/mixed-$strategy.truth"
	lin_say "lineage-validate --expect $out/mixed-$strategy.truth $out/mixed-$strategy.lintrace"
	set +e
	"$bin/validator/lineage-validate" --max-findings 5 --expect "$out/mixed-$strategy.truth" \
		"$out/mixed-$strategy.lintrace"
	rc=$?
	set -e
	[ "$strategy" = epoch ] && epoch_rc=$rc
	echo
done
if [ "$epoch_rc" -eq 0 ]; then
	lin_say "launch epochs: every GPU record joined to the request that caused it (exit 0);"
	lin_say "Kineto's op ids on the same work: kernels reach the worker's op, not the request"
	lin_say "(join level epoch), and batched launches no request at all: see above."
fi
exit "$epoch_rc"
