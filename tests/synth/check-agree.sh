#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-agree.sh SYNTH VALIDATE WORKDIR SCENARIO - run a small instance of SCENARIO under
# every strategy three ways: decoded by the simulator through attach mode (--cupti sim),
# and through the test CUPTI layer (--cupti layer: the live binding for epoch, the
# workload's own CUPTI client for the others) with nested driver calls that have ids of
# their own and that share the runtime call's. lineage-validate --expect must give the
# same verdicts every way: GPU records, lost by cause, matched, incorrect, ambiguous, exit.
set -euo pipefail
synth=$1 validate=$2 work=$3 sc=$4
mkdir -p "$work"
modes=("sim" "layer --driver-records distinct" "layer --driver-records shared")
fail() { echo "FAIL [$sc/$st]: $*" >&2; exit 1; }

verdict() { # MODE... -> one JSON line
  local base="$work/agree-$sc.$st.$1" files expect
  rm -f "$base".*
  # shellcheck disable=SC2086
  "$synth" --scenario "$sc" --strategy "$st" --seed 11 --threads 4 --requests 24 --hops 3 \
    --replays 3 --batch 4 --streams 3 --cupti $2 -o "$base.lt" --truth "$base.truth" >/dev/null
  files=("$base.lt"); expect=(--expect "$base.truth")
  if [ -e "$base.lt.2" ]; then files+=("$base.lt.2"); expect+=(--expect "$base.truth.2"); fi
  "$validate" --json "${expect[@]}" "${files[@]}" |
    jq -c '{gpu_records, lost, lost_by_cause, matched, incorrect, ambiguous, exit_code,
            truth_records, file_errors}'
  rm -f "$base".*
}

for st in epoch kineto nvtx cuda-only manual manual-batch; do
  want=$(verdict 0 "${modes[0]}")
  [ "$(echo "$want" | jq .gpu_records)" -gt 0 ] || fail "no GPU records"
  for i in 1 2; do
    got=$(verdict "$i" "${modes[$i]}")
    [ "$got" = "$want" ] || fail "--cupti ${modes[$i]}: $got, --cupti sim: $want"
  done
  echo "ok [$sc/$st]: the three ways agree: $want"
done
