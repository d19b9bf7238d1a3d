#!/bin/sh
# run_attrib_causes.sh - run the attrib_causes example and score lineage-explain on it.
# Usage: run_attrib_causes.sh PROGRAM EXPLAIN OUTDIR [REQUESTS]
# Runs every scenario with CUPTI's latency timestamps on (OUTDIR/latency-on.lintrace and
# .causes), scores the trace with `EXPLAIN --score CAUSES TRACE` and prints its SUMMARY
# lines; then runs again with --latency off, scores that trace too (reported, not
# required), and prints both runs' ATTRIB cpu_ms and wall_ms side by side: the collection
# cost of latency timestamps. Accuracy figures are reported, never asserted.
# Exit: 0 when both runs of the program exited 0 and the scorer exited 0 on the latency-on
# trace (it scored at least one launch); 77 (skipped) when no GPU is visible, or when the
# program found no CUDA device; otherwise the failing step's status.
set -u
prog=${1:?program}
explain=${2:?lineage-explain}
out=${3:?output directory}
requests=${4:-32}

say() { echo "run_attrib_causes: $*"; }

# Skipped only where no GPU is visible; with one, every failure below is a failure.
if [ ! -e /dev/nvidiactl ] && ! nvidia-smi -L >/dev/null 2>&1; then
	say "no GPU visible (no /dev/nvidiactl, no nvidia-smi -L); skipped"
	exit 77
fi
mkdir -p "$out" || exit 1

# run MODE: run the program with --latency MODE; its output is kept in $out/MODE.out.
run() {
	rm -f "$out/latency-$1.lintrace" "$out/latency-$1.causes"
	LINEAGE_LOG=${LINEAGE_LOG:-warn} "$prog" --scenario all --requests "$requests" \
		--latency "$1" -o "$out/latency-$1.lintrace" --cause-truth "$out/latency-$1.causes" \
		>"$out/latency-$1.out"
	rc=$?
	cat "$out/latency-$1.out"
	if [ "$rc" != 0 ]; then
		say "program failed with --latency $1 (exit $rc)"
		exit "$rc"
	fi
}

# score MODE: score that run's trace; print the scorer's SUMMARY lines (or its tail).
score() {
	"$explain" --score "$out/latency-$1.causes" "$out/latency-$1.lintrace" \
		>"$out/score-$1.txt" 2>&1
	src=$?
	if grep -q 'SUMMARY' "$out/score-$1.txt"; then
		grep 'SUMMARY' "$out/score-$1.txt" | sed "s/^/latency $1: /"
	else
		say "no SUMMARY line from the scorer (latency $1); its last lines:"
		tail -n 20 "$out/score-$1.txt"
	fi
	say "lineage-explain --score exit $src (latency $1)"
	return "$src"
}

# field MODE NAME: NAME=value from the run's ATTRIB scenario=all line.
field() {
	sed -n "s/^ATTRIB scenario=all .*[[:space:]]$2=\([^[:space:]]*\).*/\1/p" \
		"$out/latency-$1.out" | head -n 1
}

run on
score on
score_rc=$?
run off
score off
off_rc=$?
say "ATTRIB cpu_ms latency on $(field on cpu_ms), off $(field off cpu_ms);" \
	"wall_ms on $(field on wall_ms), off $(field off wall_ms)"
[ "$off_rc" = 0 ] || say "(the latency-off score exited $off_rc: reported, not required)"
if [ "$score_rc" != 0 ]; then
	say "FAIL: the scorer exited $score_rc on the latency-on trace (see $out/score-on.txt)"
	exit "$score_rc"
fi
say "ok"
exit 0
