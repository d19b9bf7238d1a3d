#!/bin/sh
# SPDX-License-Identifier: MIT
# kineto-export.sh VALIDATE SYNTH FIXTURE_DIR TMPDIR DATA - lineage-validate --export-kineto
# (docs/validator.md, "Kineto export"):
#   - a lineage trace of every lineage-synth scenario, exported and read back by lineage's
#     own Kineto importer (--from kineto), gives the same joins: the same GPU records, each
#     joined in both, and each joined to a launch op that serves the requests lineage
#     joined it to (the op's "lineage requests"); the cross-stream waits come out as
#     cuda_sync events naming the recording's stream and correlation;
#   - every generated fixture exports to well-formed JSON with its GPU records;
#   - an imported Kineto file (tests/import/data), exported and read back, gives every GPU
#     record the same verdict (class and cause, as a multiset: the event indices move);
#   - an output that is one of the inputs (by any path) is refused with 64 before anything
#     is written; an unwritable output is exit 2, said (lineage and imported inputs).
set -u
V=$1 SYNTH=$2 FIX=$3 TMP=$4 DATA=$5
HERE=$(dirname "$0")
. "$HERE/lib.sh"
rm -rf "$TMP" && mkdir -p "$TMP" || exit 1
if ! command -v jq >/dev/null; then
	echo "SKIP: jq is not installed (the export is parsed back with it)"
	exit 77
fi

# joins VERDICTS: "requests" of every joined GPU record, one line each, sorted
joins_lt() { awk -F'\t' '$3 == "observed" || $3 == "inferred" { print $5 }' "$1" | sort; }
joins_kineto() { # the op each record joined: its "lineage requests", comma-joined
	jq -r '[.traceEvents[] | select(.ph != "M")] | to_entries[]
		| "\(.key)\t\(.value.args["lineage requests"] // [] | map(tostring) | join(","))"' "$2" \
		>"$TMP/ops.tsv"
	awk -F'\t' 'NR == FNR { req[$1] = $2; next }
		($3 == "observed" || $3 == "inferred") && $5 ~ /^op:/ { print req[substr($5, 4)] }' \
		"$TMP/ops.tsv" "$1" | sort
}

for sc in direct pool-handoff chain-handoff batching fanout-streams mixed attr-api-call \
	attr-stream-dependency attr-event-dependency attr-device-busy attr-queueing; do
	"$SYNTH" --scenario "$sc" --strategy epoch --seed 2 --requests 6 --delay-us 200 \
		--latency-timestamps -o "$TMP/$sc.lt" --truth "$TMP/$sc.truth" >/dev/null 2>&1 ||
		{ expect_eq "lineage-synth $sc" fails ok; continue; }
	"$V" --export-kineto "$TMP/$sc.json" --verdicts "$TMP/$sc.v1" "$TMP/$sc.lt" >/dev/null \
		2>"$TMP/$sc.err"
	expect_eq "$sc: validate with --export-kineto exit" $? 0
	grep -q "kineto: $TMP/$sc.json: annotations=" "$TMP/$sc.err"
	expect_eq "$sc: the counts on stderr" $? 0
	"$V" --from kineto --verdicts "$TMP/$sc.v2" "$TMP/$sc.json" >/dev/null 2>&1
	expect_eq "$sc: the export validates as Kineto (exit)" $? 0
	n1=$(wc -l <"$TMP/$sc.v1") n2=$(wc -l <"$TMP/$sc.v2")
	expect_eq "$sc: GPU records read back" "$n2" "$n1"
	j1=$(joins_lt "$TMP/$sc.v1" | wc -l)
	expect_eq "$sc: every GPU record joined in both" "$j1:$(joins_kineto "$TMP/$sc.v2" "$TMP/$sc.json" | wc -l)" "$n1:$n1"
	joins_lt "$TMP/$sc.v1" >"$TMP/$sc.j1"
	joins_kineto "$TMP/$sc.v2" "$TMP/$sc.json" >"$TMP/$sc.j2"
	cmp -s "$TMP/$sc.j1" "$TMP/$sc.j2"
	expect_eq "$sc: each joined to an op of the same requests" $? 0
done

# The waits of attr-event-dependency: each names the recording's stream and correlation,
# and that correlation is a cudaEventRecord call's.
w=$(jq '[.traceEvents[] | select(.cat == "cuda_sync" and .name == "Stream Wait Event")] | length' \
	"$TMP/attr-event-dependency.json")
wn=$(jq '[.traceEvents[] | select(.cat == "cuda_sync" and .args.wait_on_stream != null)] | length' \
	"$TMP/attr-event-dependency.json")
expect_eq "stream waits named with the stream they wait on" "$wn" "$w"
expect_eq "stream waits exported (one per request)" "$w" 6
bad=$(jq '[.traceEvents[] | select(.cat == "cuda_runtime" and .name == "cudaEventRecord")
	| .args.correlation] as $rec | [.traceEvents[] | select(.cat == "cuda_sync")
	| select(.args.wait_on_cuda_event_record_corr_id as $c | $rec | index($c) | not)] | length' \
	"$TMP/attr-event-dependency.json")
expect_eq "every wait names a cudaEventRecord's correlation" "$bad" 0
# ... and a trace with no waits has no such events (silent where there is nothing)
expect_eq "no cuda_sync without waits" \
	"$(jq '[.traceEvents[] | select(.cat == "cuda_sync")] | length' "$TMP/attr-api-call.json")" 0
# ac2g: one flow start and one end per GPU record, same id
expect_eq "ac2g flows pair up" \
	"$(jq '[.traceEvents[] | select(.cat == "ac2g" and .ph == "s")] | length' "$TMP/mixed.json")" \
	"$(jq '[.traceEvents[] | select(.cat == "ac2g" and .ph == "f" and .bp == "e")] | length' "$TMP/mixed.json")"

# Every generated fixture: well-formed, with its GPU records (timed ones).
for f in "$FIX"/good_*.lt; do
	b=$(basename "$f" .lt)
	"$V" --export-kineto "$TMP/fx.json" "$f" >/dev/null 2>"$TMP/fx.err"
	rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || expect_eq "$b: export exit" "$rc" "0 or 1"
	got=$(jq '[.traceEvents[] | select(.cat == "kernel" or .cat == "gpu_memcpy" or .cat == "gpu_memset")] | length' "$TMP/fx.json" 2>/dev/null)
	want=$(sed -n 's/.* gpu=\([0-9]*\) .*/\1/p' "$TMP/fx.err")
	[ -n "$got" ] && [ "$got" = "$want" ] || expect_eq "$b: GPU records in the export (jq)" "$got" "$want"
done
echo "ok: every fixture exports"

# Imported Kineto files: written back, read again, the same verdicts.
for f in "$DATA"/*.json; do
	b=$(basename "$f" .json)
	case $b in bad_time | empty_events | unknown_cats) continue ;; esac # exit 2 inputs
	"$V" --verdicts "$TMP/i1.tsv" --export-kineto "$TMP/i.json" "$f" >/dev/null 2>&1
	r1=$?
	"$V" --verdicts "$TMP/i2.tsv" "$TMP/i.json" >/dev/null 2>&1
	expect_eq "$b: imported, exported, read back: exit" $? "$r1"
	expect_eq "$b: the same verdicts" "$(cut -f3,4 "$TMP/i2.tsv" | sort | tr '\n' ' ')" \
		"$(cut -f3,4 "$TMP/i1.tsv" | sort | tr '\n' ' ')"
done
# ... not vacuous: the causes file has 16 GPU records of 12 verdicts, each read back
"$V" --verdicts "$TMP/i1.tsv" --export-kineto "$TMP/i.json" "$DATA/causes.json" >/dev/null 2>&1
expect_eq "causes.json: GPU records" "$(wc -l <"$TMP/i1.tsv" | tr -d ' ')" 16
expect_eq "causes.json: distinct verdicts" "$(cut -f3,4 "$TMP/i1.tsv" | sort -u | wc -l | tr -d ' ')" 12

# Refusals.
cp "$TMP/direct.lt" "$TMP/in.lt"
ln -sf "$TMP/in.lt" "$TMP/link.json"
"$V" --export-kineto "$TMP/link.json" "$TMP/in.lt" >/dev/null 2>"$TMP/err"
expect_eq "an output that is the input (a link to it) is refused" $? 64
grep -q -- "--export-kineto $TMP/link.json is the input" "$TMP/err"
expect_eq "the refusal names the input" $? 0
cmp -s "$TMP/in.lt" "$TMP/direct.lt"
expect_eq "the input is untouched" $? 0
"$V" --export-kineto "$TMP/x.json" --export-perfetto "$TMP/x.json" "$TMP/in.lt" >/dev/null 2>"$TMP/err"
expect_eq "two outputs that are one file are refused" $? 64
"$V" --export-kineto "$TMP/direct.json" "$TMP/direct.json" >/dev/null 2>"$TMP/err"
expect_eq "an imported input as the output is refused" $? 64
"$V" --export-kineto "$TMP/no/such/dir/out.json" "$TMP/direct.json" >/dev/null 2>"$TMP/err"
expect_eq "an unwritable output of an imported trace is exit 2" $? 2
grep -q "cannot write $TMP/no/such/dir/out.json" "$TMP/err"
expect_eq "... and named" $? 0
"$V" --export-kineto "$TMP/no/such/dir/out.json" "$TMP/in.lt" >/dev/null 2>"$TMP/err"
expect_eq "an unwritable output is exit 2" $? 2
grep -q "lineage-validate: --export-kineto: cannot write $TMP/no/such/dir/out.json" "$TMP/err"
expect_eq "the unwritable output is named" $? 0
finish
