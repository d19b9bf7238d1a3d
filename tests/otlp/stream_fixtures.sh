#!/bin/sh
# SPDX-License-Identifier: MIT
# stream_fixtures.sh STREAMFILE VALIDATE FIXTURES WORKDIR - every validator fixture through
# the runtime's OTLP stream (fed as the writer feeds it, by lin-otlp-stream-file) and through
# lineage-validate --export-otlp, each reduced to one line per span as tests/otlp/stream.sh
# reduces them, without the times (GPU spans keyed by correlation and stream; times,
# lineage.trace.offset and events left out: the fixtures' headers have no start_unix_ns, so
# the stream anchors host times at its own opening and the export at 0; stream.sh compares
# times on runs that have it). The two must agree span for span, except on the fixtures listed in
# DIFFERS below, each with the difference docs/fleet.md ("How it differs from the export")
# states: those must differ (a listed fixture that stops differing fails too, so the list
# stays the truth), and in no other way than the one named. The stream is fed in one piece
# and again 7 bytes at a time: the same spans either way. Exit 77 (ctest: skipped) without jq.
set -u
SF=$1 V=$2 FX=$3 W=$4
if ! command -v jq >/dev/null 2>&1; then
	echo "SKIP: jq not found"
	exit 77
fi
rm -rf "$W" && mkdir -p "$W" || exit 1
cat >"$W/spans.jq" <<'JQ'
.resourceSpans[].scopeSpans[].spans[]
| (.attributes | map({(.key): (.value.stringValue // .value.intValue // (.value.boolValue|tostring))}) | add) as $a
| [.traceId,
   (if ($a["lineage.span"] | IN("kernel", "memcpy", "memset"))
    then ($a["lineage.cuda.correlation_id"] // "-") + "/" + ($a["lineage.device.stream"] // "-")
    else .spanId end),
   (.parentSpanId // ""), .name, $a["lineage.span"], ($a["lineage.join"] // ""),
   ($a | to_entries | map(select(.key != "lineage.trace.offset"))
       | map(.key + "=" + (.value | tostring)) | sort | join(" "))] | @tsv
JQ
# fixture (no .lt), the one kind of span that differs (every differing line is one), and
# a word the export's side of the difference holds (docs/fleet.md says why for each)
cat >"$W/differs" <<'TAB'
good_cuda_only kernel same_thread_time_containment
bad_foreign_ext_empty_bracket kernel same_thread_time_containment
lost_foreign_ext_brackets_held kernel same_thread_time_containment
lost_outside_bracket kernel same_thread_time_containment
good_request_link request lineage.remote.joined
bad_api_pid_mismatch kernel lineage.join=lost
lost_correlation_mismatch kernel lineage.join=lost
bad_duplicate_gpu_record kernel lineage.span=kernel
bad_duplicate_batch_copy memcpy lineage.span=memcpy
bad_graph_memset_twice memset lineage.span=memset
bad_epoch_before_request epoch lineage.span=epoch
err_deep_nesting process lineage.span=process
err_huge_array process lineage.span=process
err_huge_str process lineage.span=process
err_wrong_field_type process lineage.span=process
TAB
fail=0 n=0 same=0 listed=0
for f in "$FX"/*.lt; do
	b=$(basename "$f" .lt)
	d="$W/$b"
	mkdir -p "$d"
	"$V" --export-otlp "$d/export.json" "$f" >/dev/null 2>"$d/validate.txt"
	if [ ! -s "$d/export.json" ]; then
		continue # the validator wrote no export (an unreadable file): nothing to compare
	fi
	n=$((n + 1))
	if ! "$SF" "$f" "$d/stream.json" 2>"$d/stream.txt" || ! "$SF" "$f" "$d/stream7.json" 7 2>>"$d/stream.txt"; then
		echo "FAIL: $b: lin-otlp-stream-file"; fail=1; continue
	fi
	for x in export stream stream7; do
		if [ -s "$d/$x.json" ]; then
			jq -r -f "$W/spans.jq" "$d/$x.json" | sort >"$d/$x.tsv" || { echo "FAIL: $b: jq $x"; fail=1; }
		else
			: >"$d/$x.tsv"
		fi
	done
	if ! cmp -s "$d/stream.tsv" "$d/stream7.tsv"; then
		echo "FAIL: $b: the stream differs when fed 7 bytes at a time"; fail=1
	fi
	kind=$(awk -v b="$b" '$1 == b { print $2 }' "$W/differs")
	why=$(awk -v b="$b" '$1 == b { print $3 }' "$W/differs")
	if diff "$d/export.tsv" "$d/stream.tsv" >"$d/diff"; then
		if [ -n "$why" ]; then
			echo "FAIL: $b: listed as differing ($kind, $why) but the stream and the export agree"; fail=1
		else
			same=$((same + 1))
		fi
	elif [ -z "$why" ]; then
		echo "FAIL: $b: the stream and the export differ ($d/diff)"; head -4 "$d/diff"; fail=1
	elif grep '^[<>]' "$d/diff" | awk -F '\t' -v k="$kind" '$5 != k' | grep . >"$d/other"; then
		echo "FAIL: $b: spans other than $kind differ:"; head -4 "$d/other"; fail=1
	elif ! grep '^<' "$d/diff" | grep -q -F -e "$why"; then
		echo "FAIL: $b: the export's side does not say $why:"; head -4 "$d/diff"; fail=1
	else
		listed=$((listed + 1))
		echo "ok: $b: differs as documented ($kind spans, $why)"
	fi
done
if [ "$n" -lt 80 ]; then
	echo "FAIL: only $n fixtures compared (FIXTURES: $FX)"; fail=1
fi
echo "stream_fixtures: $n fixtures, $same the same in the stream and the export, $listed differing as documented"
exit $fail
