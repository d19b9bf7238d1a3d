#!/bin/sh
# Bad input: exit 2 with the file and an offset or row in the message; never a crash.
# Usage: errors.sh BIN DATA_DIR TMPDIR [MKSQLITE]
BIN=$1 DATA=$2 TMP=$3 MKSQLITE=$4
. "$(dirname "$0")/lib.sh"
mkdir -p "$TMP"

bad() { # bad LABEL FMT FILE MESSAGE-SUBSTRING
	out=$("$BIN" --from "$2" "$3" 2>&1 >/dev/null)
	rc=$?
	expect_eq "$1 exit" $rc 2
	want="$3: byte *$4"
	[ "$2" = nsys ] && want="$3: $4"     # SQLite messages name the table and rowid
	# shellcheck disable=SC2254
	case $out in
	*$want*) echo "ok: $1 message: $out" ;;
	*) echo "FAIL: $1 message: '$out' lacks '$want'"; fails=$((fails + 1)) ;;
	esac
}

printf '{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1,, }]}' > "$TMP/malformed.json"
bad "malformed JSON" kineto "$TMP/malformed.json" "malformed JSON"
head -c 700 "$DATA/causes.json" > "$TMP/cut.json"
bad "JSON cut short" kineto "$TMP/cut.json" "malformed JSON"
gzip -c "$DATA/causes.json" > "$TMP/whole.json.gz"
head -c 600 "$TMP/whole.json.gz" > "$TMP/truncated.json.gz"
bad "truncated gzip" kineto "$TMP/truncated.json.gz" "truncated gzip"
j=$("$BIN" --from kineto --json "$TMP/whole.json.gz")
expect_keys "gzip of causes.json" "$j" exit_code=1 gpu_records=16 joined_observed=4
printf '{"other": 1}' > "$TMP/noevents.json"
bad "no traceEvents" kineto "$TMP/noevents.json" "no traceEvents"
i=0; s=""; while [ $i -lt 100 ]; do s="$s["; i=$((i + 1)); done
printf '{"traceEvents": %s' "$s" > "$TMP/deep.json"
bad "deep nesting" kineto "$TMP/deep.json" "nesting deeper"
bad "unknown categories only" kineto "$DATA/unknown_cats.json" \
	"no GPU activity among categories: mtia_runtime (1), mtia_ccp_events (1), python_function (1); 1 events without a category"
bad "empty event array" kineto "$DATA/empty_events.json" "no GPU activity among categories: none"
bad "ts that does not fit 64-bit ns" kineto "$DATA/bad_time.json" "ts or dur is not a time"
# GPU events that cannot be placed in time, and host times of the wrong type: exit 2
# naming the event, never dropped or read as 0.
L='{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":110,"dur":5,"args":{"correlation":5}}'
K='"cat":"kernel","name":"k","pid":0,"tid":7,"args":{"correlation":5,"device":0,"stream":7}'
gpu_bad() { # gpu_bad NAME KERNEL-FIELDS MESSAGE
	printf '{"traceEvents": [%s, {%s, %s}]}' "$L" "$K" "$2" > "$TMP/$1.json"
	bad "kernel $1" kineto "$TMP/$1.json" "$3"
}
gpu_bad ts_null '"ph":"X","ts":null,"dur":10' 'event #1 (cat kernel): ts or dur is null'
gpu_bad ts_word '"ph":"X","ts":"soon","dur":10' 'event #1 (cat kernel): ts or dur is a string that is not'
gpu_bad ts_array '"ph":"X","ts":[120],"dur":10' 'event #1 (cat kernel): ts or dur is an array'
gpu_bad no_ts '"ph":"X","dur":10' 'event #1 (cat kernel): a GPU event without "ts"'
gpu_bad ph_B '"ph":"B","ts":120' 'event #1 (cat kernel): a GPU event with "ph": "B"'
gpu_bad no_ph '"ts":120,"dur":10' 'event #1 (cat kernel): a GPU event with no "ph"'
out=$("$BIN" --from kineto "$TMP/ph_B.json" 2>&1 >/dev/null)
expect_eq "kernel ph_B: the offset is the event's" "${out#*: byte }" \
	"$(($(printf '{"traceEvents": [%s, ' "$L" | wc -c))): event #1 (cat kernel): a GPU event with \"ph\": \"B\"; only complete events (\"ph\": \"X\") are read"
printf '{"traceEvents": [{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":100,"dur":"fifty"}, %s, {"ph":"X",%s,"ts":120,"dur":10}]}' \
	"$L" "$K" > "$TMP/op_dur_word.json"
bad "op dur a word" kineto "$TMP/op_dur_word.json" 'event #0 (cat cpu_op): ts or dur is a string'
printf '{"traceEvents": [{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":true,"dur":50}, %s, {"ph":"X",%s,"ts":120,"dur":10}]}' \
	"$L" "$K" > "$TMP/op_ts_bool.json"
bad "op ts a boolean" kineto "$TMP/op_ts_bool.json" 'event #0 (cat cpu_op): ts or dur is a boolean'
"$BIN" --from kineto --json --allow-empty "$DATA/unknown_cats.json" >/dev/null 2>&1
expect_eq "unknown categories with --allow-empty still exit" $? 2

# A missing file: one error line on stderr, no report (of zeros) on stdout.
for f in "--from kineto" "--from nsys" "" "--json"; do
	# shellcheck disable=SC2086
	out=$("$BIN" $f "$TMP/does-not-exist.json" 2>"$TMP/err.txt")
	expect_eq "missing file ($f) exit" $? 2
	expect_eq "missing file ($f) prints no report" "$out" ""
	expect_eq "missing file ($f) one error line" "$(wc -l < "$TMP/err.txt" | tr -d ' ')" 1
	expect_eq "missing file ($f) message" "$(cat "$TMP/err.txt")" \
		"lineage-validate: $TMP/does-not-exist.json: cannot open: No such file or directory"
done

printf 'this is not a database, just text that is long enough to have a header....\n' > "$TMP/text.sqlite"
bad "non-SQLite file" nsys "$TMP/text.sqlite" "not an SQLite database"
: > "$TMP/empty.sqlite"
bad "empty file as SQLite" nsys "$TMP/empty.sqlite" "not an Nsight Systems export"
if [ -n "$MKSQLITE" ]; then
	sq() { # sq NAME LABEL MESSAGE: build data/NAME.sql, expect exit 2 with MESSAGE
		"$MKSQLITE" "$DATA/$1.sql" "$TMP/$1.sqlite" || fails=$((fails + 1))
		bad "$2" nsys "$TMP/$1.sqlite" "$3"
	}
	sq nsys_bad "text in a time column" \
		"table CUPTI_ACTIVITY_KIND_RUNTIME, rowid 2: column start is text, not an integer"
	sq nsys_no_correlation_col "wrong schema (no correlationId)" \
		"table CUPTI_ACTIVITY_KIND_KERNEL: no start or correlationId column"
	sq nsys_no_tables "missing tables" "not an Nsight Systems export: no CUPTI_ACTIVITY_KIND_KERNEL"
	sq nsys_nulls_kernel "NULL in every column (kernel)" "table CUPTI_ACTIVITY_KIND_KERNEL, rowid 2: column start is NULL, not an integer (a start time is required)"
	sq nsys_nulls_runtime "NULL in every column (runtime)" "table CUPTI_ACTIVITY_KIND_RUNTIME, rowid 2: column start is NULL"
	sq nsys_nulls_nvtx "NULL in every column (NVTX)" "table NVTX_EVENTS, rowid 1: column start is NULL"
	sq nsys_huge_name "a 20 MiB name" "table CUPTI_ACTIVITY_KIND_KERNEL: a value longer than 16 MiB"
	sq nsys_huge_time "a 1 MiB text in a time column" "table CUPTI_ACTIVITY_KIND_RUNTIME, rowid 1: column start is text"
	sq nsys_real_time "a real number in a correlation column" \
		"table CUPTI_ACTIVITY_KIND_RUNTIME, rowid 1: column correlationId is a real number"
	sq nsys_view "a VIEW as the kernel table (an endless query)" \
		"CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table"
	# the same reader stays silent on a well-formed file of the same shape
	"$MKSQLITE" "$DATA/nsys_new.sql" "$TMP/nsys_new.sqlite" || fails=$((fails + 1))
	"$BIN" --from nsys "$TMP/nsys_new.sqlite" >/dev/null 2>&1
	expect_eq "well-formed nsys file is no file error" $? 1
fi

"$BIN" --from nope "$DATA/causes.json" >/dev/null 2>&1
expect_eq "unknown --from" $? 64
rm -f "$TMP/x.json"
"$BIN" --export-perfetto "$TMP/x.json" "$DATA/causes.json" >/dev/null 2>&1
expect_eq "--export-perfetto of a JSON file without --from (read as Kineto)" $? 1
expect_eq "--export-perfetto without --from wrote the export" "$(test -s "$TMP/x.json" && echo yes)" yes
"$BIN" --from kineto --export-perfetto "$TMP/no-such-dir/x.json" "$DATA/causes.json" >/dev/null 2>&1
expect_eq "--export-perfetto to an unwritable path" $? 2
finish
