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
	case $out in
	*"$3: byte "*"$4"*) echo "ok: $1 message: $out" ;;
	*) echo "FAIL: $1 message: '$out' lacks '$3: byte ...$4'"; fails=$((fails + 1)) ;;
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
expect_keys "gzip of causes.json" "$j" exit_code=1 gpu_records=13 joined_observed=2
printf '{"other": 1}' > "$TMP/noevents.json"
bad "no traceEvents" kineto "$TMP/noevents.json" "no traceEvents"
i=0; s=""; while [ $i -lt 100 ]; do s="$s["; i=$((i + 1)); done
printf '{"traceEvents": %s' "$s" > "$TMP/deep.json"
bad "deep nesting" kineto "$TMP/deep.json" "nesting deeper"
bad "missing file" kineto "$TMP/does-not-exist.json" "cannot open"

printf 'this is not a database, just text that is long enough to have a header....\n' > "$TMP/text.sqlite"
bad "non-SQLite file" nsys "$TMP/text.sqlite" "not an SQLite database"
: > "$TMP/empty.sqlite"
bad "empty file as SQLite" nsys "$TMP/empty.sqlite" "not an Nsight Systems export"
if [ -n "$MKSQLITE" ]; then
	"$MKSQLITE" "$DATA/nsys_bad.sql" "$TMP/nsys_bad.sqlite" || fails=$((fails + 1))
	bad "text in a time column" nsys "$TMP/nsys_bad.sqlite" "rowid 2"
fi

"$BIN" --from nope "$DATA/causes.json" >/dev/null 2>&1
expect_eq "unknown --from" $? 64
"$BIN" --export-perfetto "$TMP/x.json" "$DATA/causes.json" >/dev/null 2>&1
expect_eq "--export-perfetto of JSON given as a lineage trace" $? 2
"$BIN" --from kineto --export-perfetto "$TMP/no-such-dir/x.json" "$DATA/causes.json" >/dev/null 2>&1
expect_eq "--export-perfetto to an unwritable path" $? 2
finish
