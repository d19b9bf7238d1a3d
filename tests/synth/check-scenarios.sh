#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-scenarios.sh SYNTH VALIDATE WORKDIR SCENARIO [SYNTH-ARGS...] - run a small
# instance of SCENARIO (with SYNTH-ARGS added, e.g. --lanes 3) under every strategy and
# assert, through lineage-validate --expect --json, the outcome each strategy must have by
# join level (docs/comparison.md). The expected counts come from the workload's own
# bookkeeping on the SYNTH line, never from the trace:
#   open     GPU records launched on a thread where their request was open
#   batched  GPU records that serve several requests
#   bare     graph-replay records launched where no request is open (no op around them)
#   late     records launched under a token whose epoch had retired (late work)
#   dropped  records the workload knows are lost to dropped records
# and, of the GPU records not dropped:
#   epoch      right request for all, the late ones counted as joined after retire;
#              observed; 0 wrong
#   kineto     right request for the open ones, an op naming no request for the rest but
#              the bare replays, which reach their API call only (PyTorch puts no op
#              around a graph replay); observed (ext correlation), never inferred
#   nvtx       as kineto, but inferred (same_thread_time_containment), never observed
#   cuda-only  right request for the open ones; the rest reach their API call and no op
#   manual     right request for all but the batched ones, which join a wrong request
#   manual-batch  right request for all (a batch id logged with its requests)
# Dropped records are lost with cause dropped_records under every strategy. The scenario
# itself pins the bookkeeping: no record is open in the pure handoff scenarios, all are in
# direct and graph-same-thread (where every strategy must reach every request: the cases
# in which the launch epoch is redundant), some are in the others.
set -euo pipefail
synth=$1 validate=$2 work=$3 sc=$4
shift 4
extra=("$@")
mkdir -p "$work"
fail() { echo "FAIL [$sc/$st]: $*" >&2; echo "validator JSON: $j" >&2; exit 1; }

for st in epoch kineto nvtx cuda-only manual manual-batch; do
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
  eq() { # WHAT GOT WANT
    [ "$2" = "$3" ] || fail "$1: $2, want $3"
  }
  labels=$(sum truth_labels) gpu=$(sum gpu_records) late=$(sum expect_late)
  dropped=$(sum expect_dropped) open=$(sum open_records) batched=$(sum batched_records)
  bare=$(sum bare_replays)
  kept=$((gpu - dropped))
  eq file_errors "$(q .file_errors)" 0
  eq gpu_records "$(q .gpu_records)" "$gpu"
  eq truth_records "$(q .truth_records)" "$labels"
  [ "$gpu" -gt 0 ] || fail "the workload launched nothing"
  right=$(q '.matched_by_level.request') wrong=$(q '.incorrect_by_level.request')
  op_only=$(q '.joined_by_level.epoch') at_op=$(q '.joined_by_level.op')
  api_only=$(q '.joined_by_level.api_call') none=$(q '.joined_by_level.none')
  observed=$(q .joined_observed) inferred=$(q .joined_inferred) causes=$(q .lost_by_cause)
  eq ambiguous "$(q .ambiguous)" 0
  eq "records at no level" "$(q '.gpu_records - ([.joined_by_level[]] | add)')" 0

  # The workload's bookkeeping, pinned by the scenario.
  case "$sc" in
    direct|graph-same-thread) eq "open records" "$open" "$kept" ;;
    pool-handoff|chain-handoff|fanout-streams|stale-token) eq "open records" "$open" 0 ;;
    *) [ "$open" -gt 0 ] && [ "$open" -lt "$kept" ] || fail "open records $open of $kept" ;;
  esac
  case "$sc" in
    batching|mixed) [ "$batched" -gt 0 ] || fail "no batched record" ;;
    *) eq "batched records" "$batched" 0 ;;
  esac
  case "$sc" in
    graph-worker|multi-process|mixed) [ "$bare" -gt 0 ] || fail "no replay off the request's thread" ;;
    *) eq "bare replays" "$bare" 0 ;;
  esac
  case "$sc" in
    stale-token) [ "$st" != epoch ] || [ "$late" -gt 0 ] || fail "the workload made no stale handoff" ;;
    *) eq "late records" "$late" 0 ;;
  esac
  case "$sc" in
    dropped-records) [ "$dropped" -gt 0 ] || fail "the simulator dropped nothing"
                     eq "records without an API record" "$none" "$dropped" ;;
    *) eq "dropped records" "$dropped" 0; eq "records without an API record" "$none" 0 ;;
  esac
  case "$sc/$st" in
    dropped-records/*) ;;
    *) eq "structural findings" "$(q .structural)" 0 ;;
  esac

  # What the strategy must reach, level by level.
  drop_cause=""
  [ "$dropped" -gt 0 ] && drop_cause="\"dropped_records\":$dropped"
  case "$st" in
    epoch)
      eq "right request" "$right" "$kept"
      eq "wrong request" "$wrong" 0
      eq "op only" "$op_only" 0
      eq inferred "$inferred" 0
      eq "joined late, after retire" "$(q .late.joined_after_retire)" "$late"
      eq "joined late, after reissue" "$(q .late.joined_after_reissue)" 0
      eq causes "$causes" "{$drop_cause}"
      [ "$dropped" -gt 0 ] || eq "validator exit" "$(q .exit_code)" 0 ;;
    kineto|nvtx)
      eq "right request" "$right" "$open"
      eq "wrong request" "$wrong" 0
      eq "op only" "$op_only" "$((kept - open - bare))"
      eq "API call only" "$api_only" "$bare"
      eq "lost in a bracket" "$at_op" 0
      eq "lost but dropped" "$(q '.lost_by_cause | del(.dropped_records) | [.[]] | add // 0')" "$bare"
      eq "dropped" "$(q '.lost_by_cause.dropped_records // 0')" "$dropped"
      if [ "$st" = kineto ]; then eq inferred "$inferred" 0; else eq observed "$observed" 0; fi ;;
    cuda-only)
      eq "right request" "$right" "$open"
      eq "wrong request" "$wrong" 0
      eq "op only" "$op_only" 0
      eq "API call only" "$api_only" "$((kept - open))"
      eq observed "$observed" 0
      # With a dropped record in the file, every missing ext record is put down to it.
      if [ "$dropped" -gt 0 ]; then eq causes "$causes" "{\"dropped_records\":$((gpu - open))}"
      else
        eq "loss causes" "$(q '.lost_by_cause | keys - ["no_external_correlation", "unknown_graph_node"]')" "[]"
        eq lost "$(q .lost)" "$((kept - open))"
      fi ;;
    manual)
      eq "right request" "$right" "$((kept - batched))"
      eq "wrong request" "$wrong" "$batched"
      eq "op only" "$op_only" 0
      eq inferred "$inferred" 0
      eq causes "$causes" "{$drop_cause}" ;;
    manual-batch)
      eq "right request" "$right" "$kept"
      eq "wrong request" "$wrong" 0
      eq "op only" "$op_only" 0
      eq inferred "$inferred" 0
      eq causes "$causes" "{$drop_cause}" ;;
  esac
  echo "ok [$sc/$st]: gpu=$gpu right=$right wrong=$wrong op_only=$op_only lost_causes=$causes"
  rm -f "$base".*
done
