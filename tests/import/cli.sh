#!/bin/sh
# A newcomer's first run: the kind of each file is read from its content (--from still
# accepted), a directory is every trace in it, --expect with an imported trace is refused,
# and the default report lists 20 findings and says how to see the rest.
# Usage: cli.sh BIN DATA_DIR TMPDIR MKSQLITE [FIXTURE_DIR]
BIN=$1 DATA=$2 TMP=$3 MKSQLITE=$4 FIXTURES=$5
. "$(dirname "$0")/lib.sh"
rm -rf "$TMP"
mkdir -p "$TMP"

# Detected from the content: the same counts as with --from.
a=$("$BIN" --json --from kineto "$DATA/causes.json" | grep -o '"gpu_records":[0-9]*,.*"bytes"')
b=$("$BIN" --json "$DATA/causes.json" | grep -o '"gpu_records":[0-9]*,.*"bytes"')
expect_eq "JSON detected: same report as --from kineto" "$b" "$a"
gzip -c "$DATA/causes.json" > "$TMP/causes.pt.trace.json.gz"
j=$("$BIN" --json "$TMP/causes.pt.trace.json.gz")
expect_keys "gzip JSON detected" "$j" gpu_records=16 file_errors=0
"$MKSQLITE" "$DATA/nsys_new.sql" "$TMP/new.sqlite" || fails=$((fails + 1))
cp "$TMP/new.sqlite" "$TMP/report.nsys-export"          # the name says nothing
j=$("$BIN" --json "$TMP/report.nsys-export")
expect_keys "SQLite detected (any file name)" "$j" gpu_records=7 file_errors=0
if [ -n "$FIXTURES" ]; then
	"$BIN" "$FIXTURES/good_direct.lt" >/dev/null
	expect_eq "lineage trace detected: exit" $? 0
	"$BIN" "$FIXTURES/good_direct.lt" "$DATA/causes.json" >/dev/null 2>"$TMP/err.txt"
	expect_eq "lineage and imported traces in one run: usage error" $? 64
	expect_eq "... says so" "$(grep -c 'cannot be validated in one run' "$TMP/err.txt")" 1
fi

# A UTF-8 byte order mark before the JSON: detected and read (plain and gzip), with error
# offsets still those of the file's bytes; only a leading one is skipped.
printf '\357\273\277' > "$TMP/bom.json"
cat "$DATA/causes.json" >> "$TMP/bom.json"
j=$("$BIN" --json "$TMP/bom.json" 2>"$TMP/err.txt")
expect_eq "BOM: exit" $? 1
expect_keys "BOM" "$j" gpu_records=16 joined_observed=4 file_errors=0
gzip -c "$TMP/bom.json" > "$TMP/bom.json.gz"
j=$("$BIN" --json "$TMP/bom.json.gz" 2>"$TMP/err.txt")
expect_eq "BOM in gzip: exit" $? 1
expect_keys "BOM in gzip" "$j" gpu_records=16 joined_observed=4 file_errors=0
printf '\357\273\277{"traceEvents": [1,, ]}' > "$TMP/bom_bad.json"
"$BIN" "$TMP/bom_bad.json" >/dev/null 2>"$TMP/err.txt"
expect_eq "BOM then malformed JSON: exit" $? 2
printf '{"traceEvents": [1,, ]}' > "$TMP/nobom_bad.json"
a=$("$BIN" "$TMP/nobom_bad.json" 2>&1 >/dev/null | sed -n 's/.*: byte \([0-9]*\): malformed JSON.*/\1/p')
b=$(sed -n 's/.*bom_bad.json: byte \([0-9]*\): malformed JSON.*/\1/p' "$TMP/err.txt")
expect_eq "BOM then malformed JSON: the offset counts the BOM's 3 bytes" "$b" "$((a + 3))"
printf ' \357\273\277{"traceEvents": []}' > "$TMP/bom_late.json"
"$BIN" --from kineto "$TMP/bom_late.json" >/dev/null 2>"$TMP/err.txt"
expect_eq "a BOM after a space is not a BOM: exit" $? 2
expect_eq "a BOM after a space is not a BOM: malformed" \
	"$(grep -c "bom_late.json: byte 2: malformed JSON: lexical error: invalid char" "$TMP/err.txt")" 1

# --expect means nothing for an imported trace: refused, with the reason.
"$BIN" --expect "$DATA/causes.json" "$DATA/causes.json" >/dev/null 2>"$TMP/err.txt"
expect_eq "--expect with an imported trace: exit" $? 64
expect_eq "--expect with an imported trace: why" \
	"$(grep -c 'an imported trace has no such keys, so there is nothing to compare' "$TMP/err.txt")" 1

# A directory: every trace in it, one run; other files named and skipped.
mkdir -p "$TMP/ranks"
cp "$DATA/causes.json" "$TMP/ranks/rank0.pt.trace.json"
gzip -c "$DATA/causes.json" > "$TMP/ranks/rank1.pt.trace.json.gz"
echo "notes" > "$TMP/ranks/README"
j=$("$BIN" --json "$TMP/ranks" 2>"$TMP/err.txt")
expect_eq "directory: exit" $? 1
expect_keys "directory" "$j" gpu_records=32 joined_observed=8 file_errors=0
expect_eq "directory: two files read" "$(printf '%s' "$j" | grep -o '"truth":false' | wc -l | tr -d ' ')" 2
expect_eq "directory: the README is named and skipped" \
	"$(grep -c "ranks/README: skipped (not a lineage trace, trace-event JSON or SQLite file)" "$TMP/err.txt")" 1
mkdir -p "$TMP/none"
echo "notes" > "$TMP/none/README"
out=$("$BIN" "$TMP/none" 2>"$TMP/err.txt")
expect_eq "directory without a trace: exit" $? 2
expect_eq "directory without a trace: no report" "$out" ""
expect_eq "directory without a trace: why" "$(grep -c 'no trace file in this directory' "$TMP/err.txt")" 1

# Findings: 20 by default, and a line saying how many more and how to see them.
{
	printf '{"traceEvents": [\n {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 0, "dur": 1}'
	i=0
	while [ $i -lt 30 ]; do
		printf ',\n {"ph": "X", "cat": "kernel", "name": "k%d", "pid": 0, "tid": 7, "ts": %d, "dur": 1, "args": {"device": 0, "stream": 7}}' $i $((i + 10))
		i=$((i + 1))
	done
	printf '\n]}\n'
} > "$TMP/thirty.json"
t=$("$BIN" "$TMP/thirty.json")
expect_eq "default: 20 listed" "$(printf '%s\n' "$t" | grep -c 'lost no_correlation')" 20
expect_eq "default: the header" "$(printf '%s\n' "$t" | grep -c '^findings (first 20 of 30):')" 1
expect_eq "default: how many more, how to see them" \
	"$(printf '%s\n' "$t" | grep -c '^  \.\.\. 10 more finding(s) not listed (--max-findings 30 lists them all)$')" 1
t=$("$BIN" --max-findings 5 "$TMP/thirty.json")
expect_eq "--max-findings 5: 5 listed" "$(printf '%s\n' "$t" | grep -c 'lost no_correlation')" 5
expect_eq "--max-findings 5: 25 more" "$(printf '%s\n' "$t" | grep -c '\.\.\. 25 more finding(s)')" 1
t=$("$BIN" --max-findings 30 "$TMP/thirty.json")
expect_eq "--max-findings 30: all listed" "$(printf '%s\n' "$t" | grep -c 'lost no_correlation')" 30
expect_eq "--max-findings 30: no more line" "$(printf '%s\n' "$t" | grep -c 'more finding(s) not listed')" 0
j=$("$BIN" --json "$TMP/thirty.json")
expect_keys "--json counts every finding" "$j" findings_total=30
finish
