#!/bin/sh
# What a run reads and what it skips: files named on the command line are strict (exit 2,
# one message naming the file); in a directory, what is not a trace is named on stderr
# ("skipped") and left out, and a directory without any trace still exits 2.
# Usage: inputs.sh BIN DATA_DIR TMPDIR [FIXTURE_DIR]
BIN=$1 DATA=$(cd "$2" && pwd) TMP=$3 FIXTURES=$4
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
# In a directory, only what is recognisably a trace is read: a README whose first
# character is '[' and a binary file whose first byte is a MessagePack map (0x85) are
# skipped, each with its line; a JSON trace named otherwise is read by its content.
mkdir -p "$TMP/mixed"
cp "$DATA/causes.json" "$TMP/mixed/rank0.pt.trace.json"
cp "$DATA/causes.json" "$TMP/mixed/rank1.trace"           # no .json name: by content
printf '[![CI](https://x/badge.svg)](https://x)\n' > "$TMP/mixed/README.md"
printf '\205bin' > "$TMP/mixed/notes.bin"
printf '{ not json\n' > "$TMP/mixed/notes.txt"
gzip -c "$DATA/causes.json" > "$TMP/mixed/backup.gz"
j=$(run --json "$TMP/mixed" 2>"$TMP/err.txt")
expect_eq "directory with a README and a binary: exit" $? 1
expect_keys "directory with a README and a binary" "$j" gpu_records=32 file_errors=0
expect_eq "directory with a README and a binary: the README is skipped" \
	"$(skipped "$TMP/err.txt" "$TMP/mixed/README.md" "not named *.json, and '[' is not followed by an event object")" 1
expect_eq "directory with a README and a binary: the binary is skipped" \
	"$(skipped "$TMP/err.txt" "$TMP/mixed/notes.bin" "a MessagePack map first, but no \"lineage-trace\" header")" 1
expect_eq "directory with a README and a binary: the text is skipped" \
	"$(skipped "$TMP/err.txt" "$TMP/mixed/notes.txt" "not named *.json, and '{' is not followed by a key")" 1
expect_eq "directory with a README and a binary: gzip not named .json.gz is skipped" \
	"$(skipped "$TMP/err.txt" "$TMP/mixed/backup.gz" "gzip-compressed, and not named *.json.gz")" 1
expect_eq "directory with a README and a binary: nothing else on stderr" \
	"$(wc -l < "$TMP/err.txt" | tr -d ' ')" 4
# Bare event arrays and gzip named .json.gz are traces.
mkdir -p "$TMP/arrays"
printf '[{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":110,"dur":5,"args":{"correlation":5}},{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":120,"dur":10,"args":{"correlation":5,"device":0,"stream":7}}]' \
	> "$TMP/arrays/events"
gzip -c "$DATA/causes.json" > "$TMP/arrays/rank1.pt.trace.JSON.GZ"
j=$(run --json "$TMP/arrays" 2>"$TMP/err.txt")
expect_keys "directory of a bare array and a .json.gz" "$j" gpu_records=17 file_errors=0
expect_eq "directory of a bare array and a .json.gz: stderr empty" "$(cat "$TMP/err.txt")" ""
# A file named .json is a claim to be JSON: in a directory too it is read, strictly.
mkdir -p "$TMP/badjson"
cp "$DATA/causes.json" "$TMP/badjson/rank0.json"
printf '[![CI](https://x/badge.svg)]\n' > "$TMP/badjson/rank1.json"
out=$(run "$TMP/badjson" 2>&1 >/dev/null)
expect_eq "directory with a malformed .json: exit" $? 2
expect_eq "directory with a malformed .json: why" "$(printf '%s' "$out" | grep -c 'rank1.json: byte .*malformed JSON')" 1
# Nothing recognisable: no trace, exit 2, no report.
mkdir -p "$TMP/docs"
cp "$TMP/mixed/README.md" "$TMP/mixed/notes.bin" "$TMP/docs/"
out=$(run "$TMP/docs" 2>"$TMP/err.txt")
expect_eq "directory of a README and a binary only: exit" $? 2
expect_eq "directory of a README and a binary only: no report" "$out" ""
expect_eq "directory of a README and a binary only: why" \
	"$(grep -c 'no trace file in this directory' "$TMP/err.txt")" 1
# Named on the command line, the same files stay strict: exit 2.
run "$TMP/mixed/README.md" >/dev/null 2>"$TMP/err.txt"
expect_eq "README.md named: exit" $? 2
expect_eq "README.md named: malformed JSON" "$(grep -c 'README.md: byte .*malformed JSON' "$TMP/err.txt")" 1
run "$TMP/mixed/notes.bin" >/dev/null 2>&1
expect_eq "binary named: exit" $? 2
# A lineage trace in a directory is read (its header names it), beside a binary.
if [ -n "$FIXTURES" ]; then
	mkdir -p "$TMP/lt"
	cp "$FIXTURES/good_direct.lt" "$TMP/mixed/notes.bin" "$TMP/lt/"
	run "$TMP/lt" >/dev/null 2>"$TMP/err.txt"
	expect_eq "directory of a lineage trace and a binary: exit" $? 0
	expect_eq "directory of a lineage trace and a binary: the binary is skipped" \
		"$(grep -c 'notes.bin: skipped' "$TMP/err.txt")" 1
fi
finish
