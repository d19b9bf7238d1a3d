#!/bin/sh
# SPDX-License-Identifier: MIT
# check-fires.sh BUILD_DIR WORKDIR: run-serving.sh on a truth made wrong on purpose
# (serve.py --fault-truth: one step credited to one of its requests) must exit 1 and name
# the goals that failed; the same run without the fault exits 0 (serving_quick).
run=$(dirname "$0")/../run-serving.sh
out=$(bash "$run" "$1" "$2" --requests 12 --rate 200 --prompt-len 64 --output-len 8 \
	--fault-truth 2>&1)
rc=$?
echo "$out"
[ "$rc" = 1 ] || { echo "check-fires: run-serving.sh exited $rc, expected 1" >&2; exit 1; }
echo "$out" | grep -q '^NOTE goal failed: lineage-validate: [1-9][0-9]* incorrect' ||
	{ echo "check-fires: no incorrect records named" >&2; exit 1; }
echo "$out" | grep -q '^NOTE goal failed: per-request GPU time: request ' ||
	{ echo "check-fires: no per-request error named" >&2; exit 1; }
echo "check-fires: the goals failed, as they must"
