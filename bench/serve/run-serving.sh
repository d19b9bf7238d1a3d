#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-serving.sh BUILD_DIR OUT_DIR [--overhead-runs N] [--split tokens|equal]
#                [--requests N] [--seed S] [serve.py options...]
#
# The serving benchmark (docs/serving.md): runs bench/serve/serve.py on the simulator
# without lineage (OUT_DIR/off) and with it (OUT_DIR/on), the same plan both times; then
# lineage-validate against the workload's truth labels, lineage-explain --per-request, and
# compare.py, which prints the SERVE line (and the baseline's BASELINE lines).
# Exit status: compare.py's (0 every goal held, 1 a goal failed, 2 bad input); 2 when a
# step could not run (named on stderr); 64 a usage error.
set -uo pipefail
usage="usage: run-serving.sh BUILD_DIR OUT_DIR [--overhead-runs N] [--split tokens|equal] [--requests N] [--seed S] [serve.py options...]"
build=${1:?$usage}
out=${2:?$usage}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
pkg="$build/python/pkg"
validate="$build/validator/lineage-validate"
explain="$build/explain/lineage-explain"
for f in "$validate" "$explain"; do
	[ -x "$f" ] || { echo "run-serving.sh: $f is not there (build BUILD_DIR first)" >&2; exit 2; }
done
if ! ls "$pkg"/_lineage_sim.*.so >/dev/null 2>&1; then
	echo "run-serving.sh: $pkg has no _lineage_sim module (built only with CUPTI's headers and libcupti)" >&2
	exit 2
fi
export PYTHONPATH="$pkg${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
# --overhead-runs N (ours, not serve.py's): N runs each way, alternating; the overhead is
# the medians' (the last run with lineage is the one validated and explained).
# --split tokens|equal (ours too): the report's rule, passed to lineage-explain.
runs=1 split=tokens args=()
while [ $# -gt 0 ]; do
	case $1 in
	--overhead-runs) runs=${2:?--overhead-runs N}; shift 2 ;;
	--split) split=${2:?--split tokens|equal}; shift 2 ;;
	*) args+=("$1"); shift ;;
	esac
done
case $split in tokens|equal) ;; *) echo "run-serving.sh: --split $split: not tokens or equal" >&2; exit 64 ;; esac
case $runs in ''|*[!0-9]*|0) echo "run-serving.sh: --overhead-runs $runs: not a count >= 1" >&2; exit 64 ;; esac
mkdir -p "$out" || exit 2
run_on=() run_off=()
for i in $(seq 1 "$runs"); do
	for mode in off on; do
		flag=()
		[ "$mode" = off ] && flag=(--no-lineage)
		rm -rf "${out:?}/$mode"
		if ! "$py" "$here/serve.py" --out "$out/$mode" "${flag[@]}" "${args[@]}" >"$out/$mode.log" 2>&1; then
			echo "run-serving.sh: serve.py ($mode) failed:" >&2
			cat "$out/$mode.log" >&2
			exit 2
		fi
		cat "$out/$mode.log"
		cp "$out/$mode/run.json" "$out/run-$mode-$i.json" || exit 2
		if [ "$mode" = on ]; then run_on+=(--run-on "$out/run-$mode-$i.json"); else run_off+=(--run-off "$out/run-$mode-$i.json"); fi
	done
done
on="$out/on"
traces=("$on/engine.lt" "$on/frontend.lt")
"$validate" --json --expect "$on/truth.lt" "${traces[@]}" >"$on/validate.json" 2>"$on/validate.err"
rc=$?
if [ "$rc" -ge 2 ]; then
	echo "run-serving.sh: lineage-validate exited $rc:" >&2; cat "$on/validate.err" >&2; exit 2
fi
if ! "$explain" --per-request --split "$split" --json "${traces[@]}" >"$on/explain.json" 2>"$on/explain.err"; then
	echo "run-serving.sh: lineage-explain --per-request failed:" >&2; cat "$on/explain.err" >&2; exit 2
fi
"$py" "$here/compare.py" --truth "$on/truth.json" --explain "$on/explain.json" \
	--validate "$on/validate.json" --annotations "$on/annotations.json" \
	"${run_on[@]}" "${run_off[@]}"
