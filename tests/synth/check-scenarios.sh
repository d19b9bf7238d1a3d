#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-scenarios.sh SYNTH VALIDATE WORKDIR SCENARIO [SYNTH-ARGS...] - run a small
# instance of SCENARIO (with SYNTH-ARGS added, e.g. --lanes 3)
# under every strategy and assert through lineage-validate --expect --json:
#   epoch: no lost, incorrect or ambiguous joins, every truth label matched - except
#     stale-token and dropped-records, whose losses must all carry exactly that cause and
#     number what the workload's own bookkeeping expects;
#   thread-local and cuda-only: join everything in direct (the simulator is not rigged
#     against them) and lose joins in every handoff scenario.
set -euo pipefail
synth=$1 validate=$2 work=$3 sc=$4
shift 4
extra=("$@")
mkdir -p "$work"
fail() { echo "FAIL [$sc/$st]: $*" >&2; echo "validator JSON: $j" >&2; exit 1; }

for st in epoch thread-local cuda-only; do
  # Runs with extra options get their own prefix, named after them: "rm -f $base.*" of
  # one run must not match another run's files (ctest runs synth_mixed, synth_concurrent
  # and synth_layer_concurrent at once).
  tag=$(printf '%s' "${extra[*]}" | tr -c 'A-Za-z0-9' '_')
  base="$work/$sc${tag:+-$tag}.$st"
  rm -f "$base".*
  out=$("$synth" --scenario "$sc" --strategy "$st" --seed 7 --threads 4 --requests 24 \
        --hops 3 --replays 3 --batch 4 --streams 3 "${extra[@]}" -o "$base.lt" --truth "$base.truth")
  echo "$out"
  files=("$base.lt"); expect=(--expect "$base.truth")
  if [ -e "$base.lt.2" ]; then files+=("$base.lt.2"); expect+=(--expect "$base.truth.2"); fi
  j=$("$validate" --json "${expect[@]}" "${files[@]}" || true)
  echo "$j" | jq -e .gpu_records >/dev/null || { j=none; fail "no JSON from lineage-validate"; }
  sum() { echo "$out" | sed -n "s/.* $1=\([0-9]*\).*/\1/p" | awk '{s+=$1} END {print s+0}'; }
  q() { echo "$j" | jq -c "$1"; }
  labels=$(sum truth_labels) gpu=$(sum gpu_records)
  stale=$(sum expect_stale) dropped=$(sum expect_dropped)
  [ "$(q .file_errors)" = 0 ] || fail "file errors"
  [ "$(q .gpu_records)" = "$gpu" ] || fail "gpu_records $(q .gpu_records), simulator emitted $gpu"
  [ "$(q .truth_records)" = "$labels" ] || fail "truth_records $(q .truth_records), wrote $labels"
  [ "$gpu" -gt 0 ] || fail "the workload launched nothing"
  lost=$(q .lost)
  if [ "$st" = epoch ]; then
    [ "$(q .incorrect)" = 0 ] || fail "incorrect joins"
    [ "$(q .ambiguous)" = 0 ] || fail "ambiguous joins"
    case "$sc" in
      stale-token)
        [ "$stale" -gt 0 ] || fail "the workload made no stale handoff"
        [ "$(q .lost_by_cause)" = "{\"stale_token\":$stale}" ] || fail "want stale_token=$stale only" ;;
      dropped-records)
        [ "$dropped" -gt 0 ] || fail "the simulator dropped nothing"
        [ "$(q .lost_by_cause)" = "{\"dropped_records\":$dropped}" ] || fail "want dropped_records=$dropped only" ;;
      *)
        [ "$lost" = 0 ] || fail "lost joins"
        [ "$(q .matched)" = "$labels" ] || fail "matched $(q .matched) of $labels"
        [ "$(q .exit_code)" = 0 ] || fail "validator exit $(q .exit_code)" ;;
    esac
    [ "$(q .matched)" = "$((labels - lost))" ] || fail "every joined record must match its label"
  elif [ "$sc" = direct ]; then
    [ "$lost" = 0 ] && [ "$(q .incorrect)" = 0 ] || fail "$st must join direct launches"
    [ "$(q .matched)" = "$labels" ] || fail "matched $(q .matched) of $labels"
  else
    [ "$lost" -gt 0 ] || fail "$st must lose joins across handoffs"
  fi
  echo "ok [$sc/$st]: gpu=$gpu lost=$lost causes=$(q .lost_by_cause) matched=$(q .matched)"
  rm -f "$base".*
done
