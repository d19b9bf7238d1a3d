#!/bin/sh
# stream.sh SYNTH VALIDATE SRCDIR WORKDIR - the runtime's OTLP stream (the tap, lin_otlp_tap) against
# lineage-validate --export-otlp of the same run's trace. For each scenario, lineage-synth
# runs with --otlp; both outputs are reduced to one line per span (trace id, span id or,
# for GPU records, correlation/stream/start, parent span id, name, lineage.span,
# lineage.join, start and end times, and every attribute with its value) and must be
# equal: both put times on the Unix clock with the header's start_unix_ns. GPU span ids and
# lineage.trace.offset are left out of the comparison because lineage-synth inserts clock
# records into its trace file, which shifts byte offsets; events are left out because the
# export's are the validator's findings (docs/fleet.md, "How it differs from the export").
# Then the stream is decoded with the OpenTelemetry packages (decode.mjs). Exit 77 (ctest:
# skipped) without jq, or without node, npm or the npm registry (otel-packages.sh).
set -u
S=$1 V=$2 SRC=$3 W=$4
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
         + "/" + .startTimeUnixNano
    else .spanId end),
   (.parentSpanId // ""), .name, $a["lineage.span"], ($a["lineage.join"] // ""),
   .startTimeUnixNano, .endTimeUnixNano,
   ($a | to_entries | map(select(.key != "lineage.trace.offset"))
       | map(.key + "=" + (.value | tostring)) | sort | join(" "))] | @tsv
JQ
fail=0
for sc in mixed graph-worker graph-same-thread batching chain-handoff stale-token dropped-records multi-process; do
	d="$W/$sc"
	mkdir -p "$d"
	if ! "$S" --scenario "$sc" --strategy epoch --seed 7 --requests 96 -o "$d/t.lt" \
		--truth "$d/t.truth" --otlp "$d/stream.json" >"$d/synth.txt"; then
		echo "FAIL: $sc: lineage-synth"; fail=1; continue
	fi
	for sfx in "" ".2"; do
		[ -f "$d/t.lt$sfx" ] || continue
		"$V" --export-otlp "$d/offline.json$sfx" "$d/t.lt$sfx" >/dev/null 2>"$d/validate.txt$sfx"
		jq -r -f "$W/spans.jq" "$d/stream.json$sfx" | sort >"$d/stream.tsv$sfx" &&
			jq -r -f "$W/spans.jq" "$d/offline.json$sfx" | sort >"$d/offline.tsv$sfx" ||
			{ echo "FAIL: $sc$sfx: jq"; fail=1; continue; }
		n=$(wc -l <"$d/stream.tsv$sfx")
		# Unix time (after 2020-09-13), host and GPU spans alike.
		old=$(jq -r '.resourceSpans[].scopeSpans[].spans[]
			| select((.startTimeUnixNano | tonumber) < 1600000000000000000) | .name' \
			"$d/stream.json$sfx" "$d/offline.json$sfx" | wc -l)
		if [ "$old" -ne 0 ]; then
			echo "FAIL: $sc$sfx: $old spans are not on the Unix clock"; fail=1
		elif [ "$n" -lt 10 ]; then
			echo "FAIL: $sc$sfx: the stream has $n spans"; fail=1
		elif ! diff "$d/offline.tsv$sfx" "$d/stream.tsv$sfx" >"$d/diff$sfx"; then
			echo "FAIL: $sc$sfx: stream and export differ ($(grep -c '^[<>]' "$d/diff$sfx") lines, $d/diff$sfx)"
			head -5 "$d/diff$sfx"; fail=1
		else
			echo "ok: $sc$sfx: $n spans, the same in the stream and the export"
		fi
	done
done
# The other strategies' traces are written without the live binding: their device clock is
# mapped by the clock records lineage-synth's write callback puts into the file (the stream
# never sees those: docs/fleet.md). The export must put them on the Unix clock all the same.
# With manual (external ids that name requests) and kineto, the stream joins every GPU
# record as the export does: same trace, parent and join (nvtx and cuda-only need
# same_thread_time_containment, which the stream does not apply).
gpu='.resourceSpans[].scopeSpans[].spans[]
	| (.attributes | map({(.key): (.value.stringValue // .value.intValue)}) | add) as $a
	| select($a["lineage.span"] | IN("kernel", "memcpy", "memset"))
	| [$a["lineage.cuda.correlation_id"], .traceId, .parentSpanId, $a["lineage.join"]] | @tsv'
for st in manual kineto nvtx cuda-only; do
	d="$W/strategy-$st"
	mkdir -p "$d"
	if ! "$S" --scenario mixed --strategy "$st" --seed 7 --requests 48 -o "$d/t.lt" \
		--truth "$d/t.truth" --otlp "$d/stream.json" >"$d/synth.txt"; then
		echo "FAIL: $st: lineage-synth"; fail=1; continue
	fi
	"$V" --export-otlp "$d/offline.json" "$d/t.lt" >/dev/null 2>"$d/validate.txt"
	n=$(jq -r '.resourceSpans[].scopeSpans[].spans[] | .name' "$d/offline.json" | wc -l)
	old=$(jq -r '.resourceSpans[].scopeSpans[].spans[]
		| select((.startTimeUnixNano | tonumber) < 1600000000000000000) | .name' \
		"$d/offline.json" | wc -l)
	jq -r "$gpu" "$d/stream.json" | sort >"$d/stream.gpu"
	jq -r "$gpu" "$d/offline.json" | sort >"$d/offline.gpu"
	if [ "$n" -lt 10 ] || [ "$old" -ne 0 ]; then
		echo "FAIL: $st: $old of $n exported spans are not on the Unix clock"; fail=1
	elif [ "$st" = manual ] || [ "$st" = kineto ]; then
		if [ ! -s "$d/stream.gpu" ] || ! cmp -s "$d/stream.gpu" "$d/offline.gpu"; then
			echo "FAIL: $st: GPU joins differ between the stream and the export"; fail=1
		else
			echo "ok: $st: $n exported spans on the Unix clock; $(wc -l <"$d/stream.gpu") GPU joins the same"
		fi
	else
		echo "ok: $st: $n exported spans on the Unix clock"
	fi
done
[ "$fail" -eq 0 ] || exit 1
. "$SRC/otel-packages.sh"
# Half a test is a skip (exit 77), not a pass: ./test.sh and CI fail on it.
otel_packages "$SRC" || { echo "SKIP: the comparison above passed, but the decode with the OpenTelemetry packages did not run"; exit 77; }
for f in "$W"/*/stream.json "$W"/*/stream.json.2; do
	[ -f "$f" ] || continue
	node "$SRC/decode.mjs" "$f" - || { echo "FAIL: decode $f"; exit 1; }
done
