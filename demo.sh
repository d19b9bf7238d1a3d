#!/usr/bin/env bash
# ./demo.sh [SEED]
# Installs missing Debian packages, builds, then runs the `mixed` synthetic workload
# (thread-pool handoffs, handoff chains, graph replays, batched launches, fan-out across
# streams) on the CUPTI-semantics simulator twice on the same work: once with lineage's
# launch epochs and once as the PyTorch profiler (Kineto) sees it: op ids pushed on the
# thread that runs each op, no link across threads. Each trace is checked by
# lineage-validate against the workload's ground truth (bench/synth/demo-run.sh; the
# README's excerpt is its output, .ci/readme-sample.sh). Exit status: 0 when the epoch
# trace validates clean.
set -euo pipefail
. "$(dirname "$0")/.ci/lib.sh"
seed=${1:-1}
case "$seed" in -h|--help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;; esac

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
if [ ! -x "$LIN_ROOT/build/bench/lineage-synth" ]; then
	echo "demo: lineage-synth was not built: see $LIN_ROOT/build/configure.log (CUPTI under $cuda?)" >&2
	exit 1
fi

# Paths relative to the clone, as the README shows them.
cd "$LIN_ROOT"
set +e
bench/synth/demo-run.sh build build/demo "$seed"
epoch_rc=$?
set -e
if [ "$epoch_rc" -eq 0 ]; then
	lin_say "launch epochs: every GPU record joined to the request that caused it (exit 0);"
	lin_say "Kineto's op ids on the same work: kernels launched on a worker reach the worker's op,"
	lin_say "not the request (\"op without request\"), graphs replayed on a worker only their API call."
	lin_say "Next: your own first trace (README, \"Your first trace\")."
fi
exit "$epoch_rc"
