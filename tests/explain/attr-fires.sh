#!/bin/sh
# SPDX-License-Identifier: MIT
# attr-fires.sh RUN-ATTRIBUTION SYNTH EXPLAIN WORKDIR - the benchmark's goal check fires:
# checked on lineage without its stream-order and event-wait rules, the dependency
# scenarios miss their goal, and the script says so and exits 1 (not 0, not another error).
set -u
out=$(bash "$1" "$2" "$3" "$4" --requests 6 --delay-us 5000 \
	--check-column "lineage -stream-order,event-wait" 2>&1)
rc=$?
echo "$out" | tail -5
[ "$rc" = 1 ] || { echo "FAIL: exit $rc, want 1" >&2; exit 1; }
echo "$out" | grep -q '^GOAL FAIL: lineage -stream-order,event-wait stream_dependency ' ||
	{ echo "FAIL: the stream-dependency goal did not fail without stream order" >&2; exit 1; }
echo "$out" | grep -q '^GOALS MET' && { echo "FAIL: goals said met" >&2; exit 1; }
echo "attr-fires.sh: ok"
