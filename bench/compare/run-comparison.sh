#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-comparison.sh - every lineage-synth scenario under every strategy (lineage's epochs
# and the models of today's tools), each checked by lineage-validate --expect, in one table
# by join level (docs/comparison.md explains the strategies and the columns).
#
#   bench/compare/run-comparison.sh [--quick] [--json OUT] [--markdown OUT] [--runs N]
#                                   [--requests R] [--seed S] [--synth PATH]
#                                   [--validate PATH] [--build DIR] [--workdir DIR] [--bench]
#
# --markdown writes the README's summary table (one row per scenario) from the same run.
# --bench also runs lineage-bench (--quick with --quick) in the same invocation and
# reports its SUMMARY lines beside the table (and under "microbench" in the JSON).
# Joins come from one run per cell (the same seed gives the same joins; the script checks
# that every repeat agrees, and that each cell's records add up); host ns per launch is the
# median over --runs repeats.
# Exit: 0; 1 when a run or a validation failed to produce a result; 64 on usage errors.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=5 requests=240 seed=1 json="" markdown="" synth="" validate="" build="" workdir="" bench=0 quick=""

usage() { sed -n '4,19p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "run-comparison: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --quick) runs=3 requests=48 quick=--quick ;;
    --bench) bench=1 ;;
    --json) json=${2:?}; shift ;;
    --markdown) markdown=${2:?}; shift ;;
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

strategies="kineto nvtx cuda-only manual manual-batch epoch"
scenarios=$("$synth" --list-scenarios | awk '$1 !~ /^attr-/ {print $1}')
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
    # One cell by join level (docs/comparison.md, "Columns"); the records must add up.
    j=$(echo "$j" | jq -c '
      def lvl(o; k): (o // {})[k] // 0;
      (.lost_by_cause // {}) as $c
      | (.lost - ($c.no_gpu_record // 0)) as $lost_gpu
      | {gpu_records, exit_code, bytes, matched, incorrect, ambiguous, truth_records,
         joined_by_level, matched_by_level, incorrect_by_level, lost_by_cause,
         api_call: (.gpu_records - lvl(.joined_by_level; "none")),
         op_or_range: (lvl(.joined_by_level; "op") + lvl(.joined_by_level; "epoch")
                       + lvl(.joined_by_level; "request")),
         op_only: lvl(.joined_by_level; "epoch"),
         right: lvl(.matched_by_level; "request"),
         wrong: lvl(.incorrect_by_level; "request"),
         lost_gpu: $lost_gpu,
         late: (((.late // {}).joined_after_retire // 0) + ((.late // {}).joined_after_reissue // 0)),
         bytes_per_gpu_record: (if .gpu_records > 0 then .bytes / .gpu_records else 0 end)}
      | .lost = .gpu_records - .right - .wrong
      | .adds_up = (.lost == .lost_gpu + .op_only + .ambiguous
                    and .truth_records == .gpu_records)')
    [ "$(echo "$j" | jq .adds_up)" = true ] || die "records do not add up in $sc $st: $j"
    if [ -n "$joins" ] && [ "$(echo "$joins" | jq -c 'del(.bytes, .bytes_per_gpu_record)')" != "$(echo "$j" | jq -c 'del(.bytes, .bytes_per_gpu_record)')" ]; then
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
# Why records reach no request: the validator's causes, plus the joins that end at an op
# or range naming no request.
jq -rs '
  def why: ((.lost_by_cause // {}) | del(.no_gpu_record) | to_entries | map("\(.key)=\(.value)"))
           + (if .op_only > 0 then ["op_without_request=\(.op_only)"] else [] end)
           + (if .ambiguous > 0 then ["ambiguous=\(.ambiguous)"] else [] end)
           | join(",");
  (["scenario","strategy","GPU","API call","op/range","right req","wrong req","lost","B/GPU","host ns/launch","why lost"]),
  (.[] | [.scenario, .strategy, .gpu_records, .api_call, .op_or_range, .right, .wrong, .lost,
          (.bytes_per_gpu_record*10|round/10), .host_ns_per_launch, why])
  | @tsv' "$results" | column -t -s $'\t' | sed 's/ *$//'
echo
# Honest verdicts: where CUDA/graph correlation plus a tool's own propagation already reach
# the right request for every record, the launch epoch is redundant; say so.
# Scenarios in the order lineage-synth lists them.
order='def cells: . as $all | $order | split(" ") | map(select(length > 0))
                   | map(. as $sc | $all | map(select(.scenario == $sc)) | select(length > 0))[];'
scen_list=$(echo $scenarios)
verdicts='
  cells as $g
  | ($g[0].scenario) as $sc | ($g[0].gpu_records) as $n
  | ($g | map({(.strategy): .}) | add) as $by
  | [$g[] | select(.strategy != "epoch" and .right == $n) | .strategy] as $done
  | ($g | map(select(.strategy != "epoch")) | max_by(.right)) as $best
  | ($by["epoch"]) as $e
  | "\($sc): " +
    (if ($done | length) > 0
     then "the launch epoch is redundant here: \($done | join(", ")) "
          + (if ($done | length) == 1 then "reaches" else "reach" end)
          + " the right request for all \($n) records"
          + (if $e.right < $n then "; epoch itself reaches it for \($e.right) (\($e.lost) lost)" else "" end)
          + (if ($e.late // 0) > 0 then "; epoch counts \($e.late) of them as late work (run after their epoch ended)" else "" end)
     else "no baseline reaches the right request for every record: best \($best.strategy) "
          + "\($best.right) of \($n)"
          + (if $best.wrong > 0 then " (\($best.wrong) wrong)" else "" end)
          + "; epoch \($e.right) of \($n), \($e.wrong) wrong"
          + (if $e.lost > 0 then ", \($e.lost) lost" else "" end)
          + (if $e.right <= $best.right and $e.wrong >= $best.wrong then ": epoch is no better here" else "" end)
     end)'
jq -rs --arg order "$scen_list" "$order $verdicts" "$results"

if [ -n "$markdown" ]; then
  # The README's table: one row per scenario, one cell per strategy.
  jq -rs --arg st "$strategies" --arg order "$scen_list" "$order"'
    def cell: ["\(.right) right"]
              + (if .wrong > 0 then ["\(.wrong) wrong"] else [] end)
              + (if .op_only > 0 then ["\(.op_only) op only"] else [] end)
              + (if (.lost - .op_only) > 0 then ["\(.lost - .op_only) lost"] else [] end)
              | join(", ");
    ($st | split(" ")) as $s
    | "| scenario | GPU records | " + ($s | join(" | ")) + " | already right without epochs |",
      "|---|---:|" + ($s | map("---|") | join("")) + "---|",
      (cells as $g
       | ($g | map({(.strategy): .}) | add) as $by
       | ($g[0].gpu_records) as $n
       | [$g[] | select(.strategy != "epoch" and .right == $n) | .strategy] as $done
       | "| \($g[0].scenario) | \($n) | "
         + ($s | map($by[.] | cell) | join(" | "))
         + " | " + (if ($done | length) > 0 then ($done | join(", ")) else "none" end) + " |")
  ' "$results" > "$markdown"
  echo
  echo "Markdown: $markdown"
fi

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
