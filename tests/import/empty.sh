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

# More categories than the table of names holds (24) before the ones read: the file is
# read by the events of read categories it holds, not by the table; with only unknown
# categories it is still refused, the overflow counted in the message.
cats() { # cats N -> N events of distinct unknown categories, comma-separated
	i=0; while [ $i -lt "$1" ]; do
		[ $i -gt 0 ] && printf ','
		printf '{"ph":"X","cat":"other%d","name":"x","pid":1,"tid":1,"ts":1,"dur":1}' $i
		i=$((i + 1))
	done
}
printf '{"traceEvents": [%s,{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":100,"dur":50},{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":110,"dur":5,"args":{"correlation":5}},{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":120,"dur":10,"args":{"correlation":5,"device":0,"stream":7}}]}' \
	"$(cats 30)" > "$TMP/many_cats.json"
j=$("$BIN" --json "$TMP/many_cats.json")
expect_eq "30 unknown categories first: exit" $? 0
expect_keys "30 unknown categories first" "$j" gpu_records=1 joined_inferred=1 file_errors=0
printf '{"traceEvents": [%s]}' "$(cats 30)" > "$TMP/only_many_cats.json"
out=$("$BIN" --json "$TMP/only_many_cats.json" 2>&1 >/dev/null)
expect_eq "30 unknown categories only: exit" $? 2
expect_eq "30 unknown categories only: message" \
	"$(printf '%s' "$out" | grep -c 'no GPU activity among categories: other0 (1), .*other23 (1), 6 more events in other categories')" 1

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
