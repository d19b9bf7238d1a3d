#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-comparison.sh - every lineage-synth scenario under every strategy, each checked by
# lineage-validate --expect, in one table (docs/comparison.md explains the columns).
#
#   bench/compare/run-comparison.sh [--quick] [--json OUT] [--runs N] [--requests R]
#                                   [--seed S] [--synth PATH] [--validate PATH]
#                                   [--build DIR] [--workdir DIR] [--bench]
#
# --bench also runs lineage-bench (--quick with --quick) in the same invocation and
# reports its SUMMARY lines beside the table (and under "microbench" in the JSON).
# Joins come from one run per cell (the same seed gives the same joins; the script checks
# that every repeat agrees); host ns per launch is the median over --runs repeats.
# Exit: 0; 1 when a run or a validation failed to produce a result; 64 on usage errors.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=5 requests=240 seed=1 json="" synth="" validate="" build="" workdir="" bench=0 quick=""

usage() { sed -n '4,16p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "run-comparison: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --quick) runs=3 requests=48 quick=--quick ;;
    --bench) bench=1 ;;
    --json) json=${2:?}; shift ;;
    --runs) runs=${2:?}; shift ;;
    --requests) requests=${2:?}; shift ;;
    --seed) seed=${2:?}; shift ;;
    --synth) synth=${2:?}; shift ;;
    --validate) validate=${2:?}; shift ;;
    --build) build=${2:?}; shift ;;
    --workdir) workdir=${2:?}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run-comparison: unknown option '$1'" >&2; usage >&2; exit 64 ;;
  esac
  shift
done
case "$runs$requests$seed" in *[!0-9]*) echo "run-comparison: --runs, --requests and --seed take numbers" >&2; exit 64 ;; esac
[ "$runs" -ge 1 ] || { echo "run-comparison: --runs must be at least 1" >&2; exit 64; }

find_bin() { # NAME SUBDIR
  local b
  for b in ${build:+"$build"} "$root/build" "$root"/build-*; do
    [ -x "$b/$2/$1" ] && { echo "$b/$2/$1"; return; }
  done
  command -v "$1" || true
}
[ -n "$synth" ] || synth=$(find_bin lineage-synth bench)
[ -n "$validate" ] || validate=$(find_bin lineage-validate validator)
[ -x "$synth" ] || die "lineage-synth not found (build it, or pass --synth)"
[ -x "$validate" ] || die "lineage-validate not found (build it, or pass --validate)"
command -v jq >/dev/null || die "jq is required"

if [ -z "$workdir" ]; then
  workdir=$(mktemp -d "${TMPDIR:-/tmp}/lineage-compare.XXXXXX")
  trap 'rm -rf "$workdir"' EXIT
fi
mkdir -p "$workdir"

strategies="epoch thread-local cuda-only"
scenarios=$("$synth" --list-scenarios | awk '{print $1}')
results="$workdir/results.jsonl"
: > "$results"

median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print 0; else if (NR%2) print v[(NR+1)/2]; else printf "%.1f\n", (v[NR/2]+v[NR/2+1])/2}'; }

# run_cell SCENARIO STRATEGY: writes one JSON object to $results.
run_cell() {
  local sc=$1 st=$2 base="$workdir/$1.$2" i out ns=() joins="" j
  for i in $(seq 1 "$runs"); do
    out=$("$synth" --scenario "$sc" --strategy "$st" --seed "$seed" --requests "$requests" \
            -o "$base.lt" --truth "$base.truth") || die "lineage-synth failed: $sc $st"
    ns+=("$(echo "$out" | sed -n 's/.*host_ns_per_launch=\([0-9.]*\).*/\1/p' | awk '{s+=$1} END {printf "%.1f", s/NR}')")
    local files=("$base.lt") truths=(--expect "$base.truth")
    if [ -e "$base.lt.2" ]; then files+=("$base.lt.2"); truths+=(--expect "$base.truth.2"); fi
    j=$("$validate" --json --max-findings 0 "${truths[@]}" "${files[@]}" || true)
    echo "$j" | jq -e .gpu_records >/dev/null 2>&1 || die "lineage-validate gave no JSON: $sc $st"
    j=$(echo "$j" | jq -c '{gpu_records, joined_observed, joined_inferred, lost, lost_by_cause,
                            incorrect, ambiguous, matched, truth_records, bytes_per_launch,
                            exit_code}')
    if [ -n "$joins" ] && [ "$(echo "$joins" | jq -c 'del(.bytes_per_launch)')" != "$(echo "$j" | jq -c 'del(.bytes_per_launch)')" ]; then
      die "joins differ between repeats of $sc $st (same seed): $joins vs $j"
    fi
    joins=$j
    rm -f "$base.lt" "$base.lt.2" "$base.truth" "$base.truth.2"
  done
  local med
  med=$(printf '%s\n' "${ns[@]}" | median)
  echo "$joins" | jq -c --arg sc "$sc" --arg st "$st" --argjson ns "$med" --argjson runs "$runs" \
    '{scenario: $sc, strategy: $st} + . + {host_ns_per_launch: $ns, runs: $runs}' >> "$results"
}

for sc in $scenarios; do
  for st in $strategies; do
    run_cell "$sc" "$st"
  done
done

echo "lineage strategy comparison: seed $seed, $requests requests per scenario, host ns = median of $runs runs"
echo "synth: $synth"
echo
jq -rs '
  (["scenario","strategy","GPU","observed","inferred","lost","incorrect","ambiguous","B/launch","host ns/launch","lost by cause"]),
  (.[] | [.scenario, .strategy, .gpu_records, .joined_observed, .joined_inferred, .lost,
          .incorrect, .ambiguous, (.bytes_per_launch*10|round/10), .host_ns_per_launch,
          ((.lost_by_cause // {}) | to_entries | map("\(.key)=\(.value)") | join(","))])
  | @tsv' "$results" | column -t -s $'\t'
echo
# Honest verdicts: where epoch is not better than another strategy, say so.
jq -rs '
  group_by(.scenario)[] as $g
  | ($g | map({(.strategy): (.lost + .incorrect + .ambiguous)}) | add) as $bad
  | ($g[0].scenario) as $sc
  | if ($bad["epoch"] >= $bad["thread-local"]) and ($bad["epoch"] >= $bad["cuda-only"])
    then "\($sc): epoch is no better than the others here (unjoined or wrong: epoch \($bad["epoch"]), thread-local \($bad["thread-local"]), cuda-only \($bad["cuda-only"]))"
    else "\($sc): epoch \($bad["epoch"]) unjoined or wrong vs thread-local \($bad["thread-local"]), cuda-only \($bad["cuda-only"])"
    end' "$results"

micro="$workdir/micro.jsonl"
: > "$micro"
if [ "$bench" = 1 ]; then
  lbench=$(find_bin lineage-bench bench)
  [ -x "$lbench" ] || die "lineage-bench not found"
  echo
  echo "microbenchmarks ($lbench $quick):"
  "$lbench" $quick | grep '^SUMMARY' | tee "$workdir/micro.txt"
  # SUMMARY k=v ... -> one JSON object per line
  sed 's/^SUMMARY //' "$workdir/micro.txt" | while read -r line; do
    echo "$line" | tr ' ' '\n' | jq -R 'split("=") | {(.[0]): (.[1] | tonumber? // .)}' | jq -sc add
  done > "$micro"
fi

if [ -n "$json" ]; then
  jq -n --argjson seed "$seed" --argjson requests "$requests" --argjson runs "$runs" \
    --slurpfile cells "$results" --slurpfile micro "$micro" \
    '{seed: $seed, requests: $requests, runs: $runs, cells: $cells, microbench: $micro}' > "$json"
  echo
  echo "JSON: $json"
fi
