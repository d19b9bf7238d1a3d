#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-usage.sh SYNTH - lineage-synth's command line: help, scenario list, exit 64 on
# every kind of usage error.
set -uo pipefail
synth=$1
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
expect() { # STATUS ARGS...
  local want=$1; shift
  "$synth" "$@" >"$t/out" 2>"$t/err"; local rc=$?
  [ "$rc" = "$want" ] || { echo "FAIL: lineage-synth $* exited $rc, want $want" >&2; cat "$t/err" >&2; exit 1; }
}
ok=(--scenario direct --strategy epoch --seed 1 -o "$t/x.lt" --truth "$t/x.truth")
expect 0 --help;                 grep -q '^SYNOPSIS' "$t/out" || { echo "FAIL: --help" >&2; exit 1; }
expect 0 --list-scenarios;       [ "$(wc -l < "$t/out")" -ge 10 ] || { echo "FAIL: --list-scenarios" >&2; exit 1; }
for sc in direct pool-handoff chain-handoff graph-same-thread graph-worker batching fanout-streams stale-token dropped-records multi-process mixed; do
  grep -q "^$sc " "$t/out" || { echo "FAIL: scenario $sc not listed" >&2; exit 1; }
done
expect 64
expect 64 --scenario nope --strategy epoch --seed 1 -o "$t/x.lt" --truth "$t/x.truth"
expect 64 --scenario direct --strategy nope --seed 1 -o "$t/x.lt" --truth "$t/x.truth"
expect 64 --scenario direct --strategy thread-local --seed 1 -o "$t/x.lt" --truth "$t/x.truth"
grep -q "removed" "$t/err" || { echo "FAIL: thread-local must say it was removed" >&2; exit 1; }
for st in epoch kineto nvtx cuda-only manual manual-batch; do
  expect 0 --scenario direct --strategy "$st" --seed 1 --requests 2 -o "$t/x.lt" --truth "$t/x.truth"
  grep -q "strategy=$st " "$t/out" || { echo "FAIL: strategy $st not reported" >&2; exit 1; }
done
expect 64 --scenario direct --seed 1 -o "$t/x.lt" --truth "$t/x.truth"
expect 64 --scenario direct --strategy epoch -o "$t/x.lt" --truth "$t/x.truth"
expect 64 --scenario direct --strategy epoch --seed 1 --truth "$t/x.truth"
expect 64 "${ok[@]}" --threads 1
expect 64 "${ok[@]}" --batch 65
expect 64 "${ok[@]}" --seed -3
expect 64 "${ok[@]}" --requests abc
expect 64 "${ok[@]}" --bogus
expect 64 "${ok[@]}" extra
expect 64 "${ok[@]}" --cupti gpu
expect 64 "${ok[@]}" --driver-records shared
expect 64 "${ok[@]}" --cupti layer --driver-records some
expect 64 "${ok[@]}" --hops
grep -q "lineage-synth:" "$t/err" || { echo "FAIL: usage errors need a message" >&2; exit 1; }
expect 1 --scenario direct --strategy epoch --seed 1 -o "$t/no/such/dir/x.lt" --truth "$t/x.truth"
expect 0 "${ok[@]}" --requests 2
echo "ok: usage"
