#!/usr/bin/env bash
# check-kill.sh SOAK_BINARY VALIDATE_BINARY [KILL_POINTS]
# Crash safety: starts lineage-soak writing a trace, kills it with SIGKILL at a random
# moment, and checks that lineage-validate reads the trace up to its last complete record
# and reports it as cut short (exit 2, "truncated", with the offset). The writer only
# writes whole records, so the offset is normally the file size (no trace_end record); a
# kill inside write(2) can still leave part of a buffer, and then the offset is that of the
# first incomplete record. Repeats for KILL_POINTS (default 20) moments between 20 ms and 1 s.
set -euo pipefail
soak=$1 validate=$2 points=${3:-20}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
seed=${LIN_KILL_SEED:-$$}
RANDOM=$seed
echo "kill points: $points (seed $seed)"
for ((i = 1; i <= points; i++)); do
	t="$dir/kill-$i.lintrace"
	"$soak" --requests 100000000 --trace "$t" >/dev/null 2>&1 &
	pid=$!
	ms=$((20 + RANDOM % 980))
	sleep "$(printf '0.%03d' "$ms")"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	if [ ! -e "$t" ]; then
		echo "kill point $i: killed after ${ms} ms, before the trace was created"
		continue
	fi
	size=$(stat -c %s "$t")
	set +e
	out=$("$validate" --json --max-findings 1 "$t" 2>/dev/null)
	rc=$?
	set -e
	off=$(sed -n 's/.*"error":{"offset":\([0-9]*\),"truncated":true.*/\1/p' <<<"$out")
	recs=$(sed -n 's/.*"records":\([0-9]*\).*/\1/p' <<<"$out" | head -1)
	if [ "$rc" -ne 2 ] || [ -z "$off" ] || [ "$off" -gt "$size" ]; then
		echo "kill point $i (${ms} ms): exit $rc, error offset '${off}', file size $size" >&2
		echo "$out" | head -c 2000 >&2
		exit 1
	fi
	where="at the end (no trace_end)"
	[ "$off" -lt "$size" ] && where="at byte $off of $size (a partial write)"
	echo "kill point $i: killed after ${ms} ms, $recs records read, reported truncated $where"
done
echo "all $points kill points: traces readable up to the last complete record, reported as cut short"
