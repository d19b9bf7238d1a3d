#!/usr/bin/env bash
# demo-run.sh BUILD_DIR OUT_DIR [SEED] - the demo's workloads (./demo.sh runs this after
# building; .ci/readme-sample.sh runs it to regenerate the README's excerpt): the `mixed`
# synthetic workload on the CUPTI-semantics simulator, twice on the same work, once with
# lineage's launch epochs and once as the PyTorch profiler (Kineto) records it, each trace
# checked by lineage-validate against the workload's truth file (which request caused each
# GPU record). lineage-synth's own summary line (SYNTH key=value ..., for scripts) goes to
# OUT_DIR/mixed-STRATEGY.synth.txt; what it says is printed in words. Exit status: the
# epoch trace's validation (0 clean), or 1 when a step fails.
set -euo pipefail
bin=$1 out=$2 seed=${3:-1}
mkdir -p "$out"
say() { printf '==> %s\n' "$*"; }
# field KEY FILE: the value of KEY=... on the SYNTH line.
field() { sed -n "s/^SYNTH .* $1=\([^ ]*\).*/\1/p" "$2"; }
declare -A what=([epoch]="lineage's launch epochs: captured on the submitting thread, adopted on the worker"
	[kineto]="as the PyTorch profiler (Kineto) records it: op ids pushed on the thread that runs each op")
epoch_rc=1
for strategy in epoch kineto; do
	t=$out/mixed-$strategy.lintrace truth=$out/mixed-$strategy.truth
	say "lineage-synth --scenario mixed --strategy $strategy --seed $seed"
	"$bin/bench/lineage-synth" --scenario mixed --strategy "$strategy" --seed "$seed" \
		-o "$t" --truth "$truth" >"$out/mixed-$strategy.synth.txt"
	echo "    ${what[$strategy]}"
	echo "    $(field launches "$out/mixed-$strategy.synth.txt") launches, $(field gpu_records \
		"$out/mixed-$strategy.synth.txt") GPU records (simulated CUPTI); wrote the trace $t"
	echo "    and the truth file $truth (the request that caused each GPU record)"
	say "lineage-validate --max-findings 5 --expect $truth $t"
	set +e
	"$bin/validator/lineage-validate" --max-findings 5 --expect "$truth" "$t"
	rc=$?
	set -e
	[ "$rc" -le 1 ] || { echo "demo: lineage-validate failed (exit $rc)" >&2; exit 1; }
	[ "$strategy" = epoch ] && epoch_rc=$rc
	echo
done
exit "$epoch_rc"
