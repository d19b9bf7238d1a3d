#!/bin/sh
# SPDX-License-Identifier: MIT
# attr-fires.sh RUN-ATTRIBUTION SYNTH EXPLAIN WORKDIR - the benchmark's goal check fires:
# checked on lineage without its stream-order and event-wait rules, the dependency
# scenarios miss their goal, and the script says so and exits 1 (not 0, not another error);
# where HTA cannot run, --check fails and says why; hta-labels.py's own errors.
set -u
out=$(bash "$1" "$2" "$3" "$4" --requests 6 --delay-us 20000 \
	--check-column "lineage -stream-order,event-wait" 2>&1)
rc=$?
echo "$out" | tail -5
[ "$rc" = 1 ] || { echo "FAIL: exit $rc, want 1" >&2; exit 1; }
echo "$out" | grep -q '^GOAL FAIL: lineage -stream-order,event-wait stream_dependency ' ||
	{ echo "FAIL: the stream-dependency goal did not fail without stream order" >&2; exit 1; }
echo "$out" | grep -q '^GOALS MET' && { echo "FAIL: goals said met" >&2; exit 1; }

# Where HTA cannot run, the check fails and says why (never a quiet fallback to the model);
# without --check the run goes on, without the hta column, and says so.
w=$4.nohta
out=$(LIN_HTA_PYTHON=false bash "$1" "$2" "$3" "$w" --requests 4 --delay-us 20000 --check 2>&1)
rc=$?
[ "$rc" = 1 ] || { echo "FAIL: without HTA, --check exit $rc, want 1" >&2; exit 1; }
echo "$out" | grep -q '^GOAL FAIL: the hta column needs HTA itself: no python3 imports pandas' ||
	{ echo "FAIL: the missing peer is not said: $out" >&2; exit 1; }
out=$(LIN_HTA_PYTHON=false bash "$1" "$2" "$3" "$w" --requests 4 --delay-us 20000 2>&1)
rc=$?
[ "$rc" = 0 ] || { echo "FAIL: without HTA and --check, exit $rc, want 0: $out" >&2; exit 1; }
echo "$out" | grep -q '^HTA NOT RUN: ' || { echo "FAIL: HTA NOT RUN not said" >&2; exit 1; }
echo "$out" | grep -q '^| cause (targets) | lineage | nsys | hta-model |' ||
	{ echo "FAIL: without HTA the table has no hta column, the model's instead" >&2; exit 1; }

# hta-labels.py: a file that is no Kineto JSON is exit 2; HTA absent is exit 3.
labels=$(dirname "$1")/hta-labels.py
py=
for p in ${LIN_HTA_PYTHON:-python3 /usr/bin/python3}; do
	"$p" -c 'import pandas, networkx' 2>/dev/null && { py=$p; break; }
done
if [ -n "$py" ]; then
	printf 'not json\n' >"$w/bad.json"
	"$py" "$labels" "$w/bad.json" "$w/bad.tsv" 2>"$w/err"
	rc=$?
	[ "$rc" = 2 ] && grep -q 'bad.json: not a Kineto trace-event JSON document' "$w/err" ||
		{ echo "FAIL: hta-labels.py on a bad file: exit $rc" >&2; cat "$w/err" >&2; exit 1; }
	LIN_HTA_ROOT=$w/none "$py" "$labels" "$w/bad.json" "$w/bad.tsv" 2>"$w/err"
	rc=$?
	[ "$rc" = 3 ] && grep -q 'HTA is not at' "$w/err" ||
		{ echo "FAIL: hta-labels.py without HTA: exit $rc" >&2; cat "$w/err" >&2; exit 1; }
fi
echo "attr-fires.sh: ok"
