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
# The attr-* scenarios' options (docs/attribution.md): only with an attr-* scenario, which
# runs only as epoch, sim, one lane; --delay-us bounded; the cause truth written.
attr=(--scenario attr-api-call --strategy epoch --seed 1 --requests 2 -o "$t/a.lt" --truth "$t/a.truth")
expect 64 "${ok[@]}" --cause-truth "$t/x.cause"
expect 64 "${ok[@]}" --sched-trace "$t/x.sched"
expect 64 --scenario attr-api-call --strategy kineto --seed 1 -o "$t/a.lt" --truth "$t/a.truth"
expect 64 "${attr[@]}" --lanes 2
expect 64 "${attr[@]}" --cupti layer
expect 64 "${attr[@]}" --delay-us 50
expect 64 "${attr[@]}" --delay-us 2000000
expect 0 "${attr[@]}" --delay-us 500 --cause-truth "$t/a.cause" --sched-trace "$t/a.sched"
grep -q '^ATTR scenario=attr-api-call cause_labels=' "$t/out" || { echo "FAIL: no ATTR line" >&2; exit 1; }
[ -s "$t/a.cause" ] && [ -s "$t/a.sched" ] || { echo "FAIL: cause truth or sched trace not written" >&2; exit 1; }
expect 1 "${attr[@]}" --cause-truth "$t/no/such/dir/a.cause"
grep -q 'cannot write cause truth' "$t/err" || { echo "FAIL: an unwritable cause truth is said" >&2; exit 1; }
expect 64 "${ok[@]}" --hops
grep -q "lineage-synth:" "$t/err" || { echo "FAIL: usage errors need a message" >&2; exit 1; }
expect 1 --scenario direct --strategy epoch --seed 1 -o "$t/no/such/dir/x.lt" --truth "$t/x.truth"
expect 0 "${ok[@]}" --requests 2
echo "ok: usage"
