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

lin_install_deps
lin_build "$LIN_ROOT/build"
bin="$LIN_ROOT/build"
out="$LIN_ROOT/build/demo"
mkdir -p "$out"
if [ ! -x "$bin/bench/lineage-synth" ]; then
	echo "demo: lineage-synth was not built (it needs CUPTI's headers and libcupti from the" >&2
	echo "CUDA toolkit at /usr/local/cuda; no GPU or driver is needed)" >&2
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
