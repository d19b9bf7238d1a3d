#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-determinism.sh SYNTH CANON WORKDIR - the same seed gives the same trace and truth
# (up to timestamps, thread/process ids and string numbering: lin-synth-canon), and
# another seed gives another one.
set -euo pipefail
synth=$1 canon=$2 work=$3
mkdir -p "$work"
run() { # SCENARIO STRATEGY SEED TAG
  local b="$work/det.$1.$2.$4"
  "$synth" --scenario "$1" --strategy "$2" --seed "$3" --requests 18 -o "$b.lt" --truth "$b.truth" >/dev/null
  "$canon" "$b.lt" | sort > "$b.lt.canon"
  "$canon" "$b.truth" | sort > "$b.truth.canon"
}
for cell in mixed/epoch mixed/kineto mixed/nvtx mixed/cuda-only mixed/manual stale-token/epoch dropped-records/epoch; do
  sc=${cell%/*} st=${cell#*/}
  {
    run "$sc" "$st" 11 a; run "$sc" "$st" 11 b; run "$sc" "$st" 12 c
    for f in lt truth; do
      a="$work/det.$sc.$st.a.$f.canon" b="$work/det.$sc.$st.b.$f.canon" c="$work/det.$sc.$st.c.$f.canon"
      [ -s "$a" ] || { echo "FAIL: empty canonical $f for $sc/$st" >&2; exit 1; }
      if ! cmp -s "$a" "$b"; then
        echo "FAIL: $sc/$st seed 11 gave two different ${f} files:" >&2
        diff "$a" "$b" | head -20 >&2
        exit 1
      fi
      if [ "$f" = lt ] && cmp -s "$a" "$c"; then
        echo "FAIL: $sc/$st seeds 11 and 12 gave the same trace" >&2
        exit 1
      fi
    done
    echo "ok: $sc/$st deterministic"
  }
done
rm -f "$work"/det.*
