#!/bin/sh
# No vacuous pass: an imported trace without GPU records never exits 0; the finding says
# why (launches but no GPU activity, CPU-only categories, an Nsight export without GPU
# tables), per file when other files of the run have GPU records. --allow-empty lets the
# run pass, and a trace with GPU records gets no such finding.
# Usage: empty.sh BIN DATA_DIR TMPDIR [MKSQLITE]
BIN=$1 DATA=$2 TMP=$3 MKSQLITE=$4
. "$(dirname "$0")/lib.sh"
mkdir -p "$TMP"
detail() { # detail JSON -> the detail of the first no_gpu_records finding
	printf '%s' "$1" | grep -o '"cause":"no_gpu_records"[^}]*},"detail":"[^"]*"' | head -n 1 |
		sed 's/.*"detail":"//; s/"$//'
}

j=$("$BIN" --json "$DATA/launches_only.json")
expect_eq "launches only: exit" $? 1
expect_keys "launches only" "$j" gpu_records=0 launches=2 structural=1
expect_eq "launches only: why" "$(detail "$j")" \
	"2 launch API events (cuda_runtime/cuda_driver) and no kernel, memcpy or memset event: GPU activity was not collected"
"$BIN" --json --allow-empty "$DATA/launches_only.json" >/dev/null
expect_eq "launches only with --allow-empty: exit" $? 0

j=$("$BIN" --json "$DATA/cpu_only.json")
expect_eq "CPU-only trace: exit" $? 1
expect_eq "CPU-only trace: why" "$(detail "$j")" \
	"no GPU activity among categories: user_annotation, cpu_op"
t=$("$BIN" "$DATA/cpu_only.json")
expect_eq "CPU-only trace: text names why" \
	"$(printf '%s\n' "$t" | grep -c 'structural no_gpu_records launches=0: no GPU activity among categories: user_annotation, cpu_op')" 1

j=$("$BIN" --json "$DATA/cpu_only.json" "$DATA/cpu_only.json")
expect_eq "two CPU-only files: why" "$(detail "$j")" \
	"none in 2 files; the first: no GPU activity among categories: user_annotation, cpu_op"

# A run with GPU records: the file that launched and got none has its own finding.
j=$("$BIN" --json --max-findings 100 "$DATA/causes.json" "$DATA/launches_only.json")
expect_eq "mixed run: one no_gpu_records" "$(count_cause "$j" structural no_gpu_records)" 1
expect_eq "mixed run: it names the file that launched" \
	"$(printf '%s' "$j" | grep -c '"cause":"no_gpu_records","file":"[^"]*launches_only.json"')" 1
j=$("$BIN" --json --max-findings 100 "$DATA/causes.json")
expect_eq "trace with GPU records: no no_gpu_records" "$(count_cause "$j" structural no_gpu_records)" 0
j=$("$BIN" --json --max-findings 100 "$DATA/causes.json" "$DATA/cpu_only.json")
expect_eq "a CPU-only rank beside a GPU rank: no finding (it launched nothing)" \
	"$(count_cause "$j" structural no_gpu_records)" 0

if [ -n "$MKSQLITE" ]; then
	"$MKSQLITE" "$DATA/nsys_runtime_only.sql" "$TMP/runtime_only.sqlite" || fails=$((fails + 1))
	j=$("$BIN" --json "$TMP/runtime_only.sqlite")
	expect_eq "nsys without GPU tables: exit" $? 1
	expect_eq "nsys without GPU tables: why" "$(detail "$j")" \
		"2 CUDA API rows and no GPU activity row (CUPTI_ACTIVITY_KIND_KERNEL absent, CUPTI_ACTIVITY_KIND_MEMCPY absent, CUPTI_ACTIVITY_KIND_MEMSET absent)"
fi
finish
