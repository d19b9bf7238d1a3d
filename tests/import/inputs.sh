#!/bin/sh
# What a run reads and what it skips: files named on the command line are strict (exit 2,
# one message naming the file); in a directory, what is not a trace is named on stderr
# ("skipped") and left out, and a directory without any trace still exits 2.
# Usage: inputs.sh BIN DATA_DIR TMPDIR
BIN=$1 DATA=$(cd "$2" && pwd) TMP=$3
. "$(dirname "$0")/lib.sh"
rm -rf "$TMP"
mkdir -p "$TMP"
# A run that blocks is a failure, not a hung test: each run gets 20 s.
run() { timeout 20 "$BIN" "$@"; }
skipped() { # skipped ERRFILE PATH WHY -> 1 when the skipped line is there
	grep -cF "lineage-validate: $2: skipped ($3)" "$1"
}

# Not regular files named on the command line: refused before they are opened (opening a
# FIFO waits for a writer), exit 2, the file named; with --from too.
mkfifo "$TMP/pipe"
out=$(run "$TMP/pipe" 2>&1 >/dev/null)
expect_eq "FIFO named: exit" $? 2
expect_eq "FIFO named: message" "$out" "lineage-validate: $TMP/pipe: not a regular file: a FIFO (named pipe)"
out=$(run --from kineto "$TMP/pipe" 2>&1 >/dev/null)
expect_eq "FIFO named with --from kineto: exit" $? 2
expect_eq "FIFO named with --from kineto: message" "$out" \
	"lineage-validate: $TMP/pipe: not a regular file: a FIFO (named pipe)"
out=$(run --from kineto /dev/null 2>&1 >/dev/null)
expect_eq "character device named: exit" $? 2
expect_eq "character device named: message" "$out" \
	"lineage-validate: /dev/null: not a regular file: a character device"
# ... while a symbolic link to a trace is read as the trace.
ln -s "$DATA/causes.json" "$TMP/link.json"
j=$(run --json "$TMP/link.json")
expect_eq "link to a trace named: exit" $? 1
expect_keys "link to a trace named" "$j" gpu_records=16 file_errors=0

# In a directory: a FIFO, a dangling link and a subdirectory are skipped, each with its
# line, and the traces beside them are read; a link to a trace is read.
mkdir -p "$TMP/d/sub"
cp "$DATA/causes.json" "$TMP/d/rank0.pt.trace.json"
ln -s "$DATA/causes.json" "$TMP/d/rank1.pt.trace.json"
mkfifo "$TMP/d/pipe"
ln -s nowhere "$TMP/d/dangling"
j=$(run --json "$TMP/d" 2>"$TMP/err.txt")
expect_eq "directory with a FIFO and a dangling link: exit" $? 1
expect_keys "directory with a FIFO and a dangling link" "$j" gpu_records=32 file_errors=0
expect_eq "directory: two files read" "$(printf '%s' "$j" | grep -o '"truth":false' | wc -l | tr -d ' ')" 2
expect_eq "directory: the FIFO is skipped" \
	"$(skipped "$TMP/err.txt" "$TMP/d/pipe" "not a regular file: a FIFO (named pipe)")" 1
expect_eq "directory: the dangling link is skipped" \
	"$(skipped "$TMP/err.txt" "$TMP/d/dangling" "a symbolic link to nothing")" 1
expect_eq "directory: the subdirectory is skipped" \
	"$(skipped "$TMP/err.txt" "$TMP/d/sub" "a directory: directories are not read recursively")" 1
expect_eq "directory: nothing else on stderr" "$(wc -l < "$TMP/err.txt" | tr -d ' ')" 3
# A directory of traces only: no skipped line.
mkdir -p "$TMP/clean"
cp "$DATA/causes.json" "$TMP/clean/rank0.pt.trace.json"
run --json "$TMP/clean" >/dev/null 2>"$TMP/err.txt"
expect_eq "directory of traces: exit" $? 1
expect_eq "directory of traces: stderr empty" "$(cat "$TMP/err.txt")" ""
# Nothing but a FIFO: no trace, exit 2.
mkdir -p "$TMP/onlypipe"
mkfifo "$TMP/onlypipe/pipe"
out=$(run "$TMP/onlypipe" 2>"$TMP/err.txt")
expect_eq "directory of a FIFO only: exit" $? 2
expect_eq "directory of a FIFO only: no report" "$out" ""
expect_eq "directory of a FIFO only: why" "$(grep -c 'no trace file in this directory' "$TMP/err.txt")" 1
finish
