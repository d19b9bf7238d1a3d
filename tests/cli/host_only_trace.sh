#!/bin/sh
# host_only_trace.sh PROGRAM VALIDATE TRACE
# Runs an example that launches no GPU work (or runs where CUPTI is unusable), then checks
# that lineage-validate refuses its trace as a vacuous pass (exit 1, finding no_gpu_records,
# with the reason in words and what to do) and accepts it with --allow-empty (exit 0): the
# host-side records themselves are sound.
set -u
prog=$1 validate=$2 trace=$3
"$prog" "$trace" || { echo "host_only_trace: $prog failed" >&2; exit 1; }
out=$("$validate" --json "$trace")
rc=$?
if [ "$rc" -ne 1 ]; then
	echo "host_only_trace: expected exit 1 (no GPU records), got $rc: $out" >&2
	exit 1
fi
case "$out" in
*'"cause":"no_gpu_records"'*'"detail":'*) ;;
*) echo "host_only_trace: no no_gpu_records finding with a detail: $out" >&2; exit 1 ;;
esac
# The detail says what to do: where GPU records come from, and --allow-empty for the rest.
case "$out" in
*'"detail":"CUPTI was not usable: '*'Run it where an NVIDIA GPU and its driver are visible'*'--allow-empty'*) ;;
*'"detail":"the runtime ran with backend none'*'LIN_BACKEND_CUPTI'*'--allow-empty'*) ;;
*) echo "host_only_trace: the no_gpu_records detail does not say what to do: $out" >&2; exit 1 ;;
esac
out=$("$validate" --allow-empty --json "$trace")
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "host_only_trace: --allow-empty: expected exit 0, got $rc: $out" >&2
	exit 1
fi
echo "host_only_trace: $trace: exit 1 without --allow-empty, 0 with it"
