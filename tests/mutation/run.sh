#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh SYNTH MUTATE WORKDIR PER-CLASS [SEEDS...] - the mutation test: valid traces of
# several scenarios and seeds from lineage-synth (epoch strategy, and the cuda-only
# strategy where it is valid: no handoff), each damaged PER-CLASS times per damage class
# by lin-mutate, once as written and once read as CUPTI-clock traces. Prints lin-mutate's
# SUMMARY lines; fails when either run does.
set -euo pipefail
synth=$1 mutate=$2 work=$3 per=$4
shift 4
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(3 11)
mkdir -p "$work"
args=()
for seed in "${seeds[@]}"; do
  for sc in direct pool-handoff chain-handoff graph-worker batching fanout-streams mixed; do
    base="$work/$sc.$seed.epoch"
    "$synth" --scenario "$sc" --strategy epoch --seed "$seed" --threads 4 --requests 12 \
      --hops 3 --replays 3 --batch 4 --streams 3 -o "$base.lt" --truth "$base.truth" >/dev/null
    args+=("$base.lt" "$base.truth")
  done
  base="$work/direct.$seed.cuda-only"
  "$synth" --scenario direct --strategy cuda-only --seed "$seed" --threads 4 --requests 12 \
    -o "$base.lt" --truth "$base.truth" >/dev/null
  args+=("$base.lt" "$base.truth")
done
echo "== device times on the runtime's clock (device_clock host)"
"$mutate" --per-class "$per" --seed "${seeds[0]}" "${args[@]}"
echo "== the same traces read as CUPTI's clock, through exact clock pairs"
"$mutate" --per-class "$per" --seed "${seeds[0]}" --cupti-clock exact "${args[@]}"
