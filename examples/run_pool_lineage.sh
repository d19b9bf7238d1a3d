#!/bin/sh
# run_pool_lineage.sh - run the pool_lineage example and validate its trace.
# Usage: run_pool_lineage.sh PROGRAM VALIDATOR [TRACE] [REQUESTS]
# The program writes TRACE and TRACE.truth; the validator compares the joins with the truth.
# Exit: 0 when the program ran and lineage-validate accepted the trace; 77 (skipped) when
# no GPU is visible; otherwise the failing step's status.
set -u
prog=${1:?program}
validator=${2:?lineage-validate}
trace=${3:-pool_lineage.lintrace}
requests=${4:-32}

# Skipped only where no GPU is visible; with one, every failure below is a failure.
if [ ! -e /dev/nvidiactl ] && ! nvidia-smi -L >/dev/null 2>&1; then
	echo "run_pool_lineage: no GPU visible (no /dev/nvidiactl, no nvidia-smi -L); skipped"
	exit 77
fi
rm -f "$trace" "$trace.truth"
LINEAGE_LOG=${LINEAGE_LOG:-warn} "$prog" "$trace" "$requests" || {
	rc=$?
	echo "run_pool_lineage: program failed ($rc)"
	exit $rc
}
"$validator" --expect "$trace.truth" "$trace"
rc=$?
echo "run_pool_lineage: lineage-validate exit $rc"
exit $rc
