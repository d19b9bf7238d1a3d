#!/bin/sh
# SPDX-License-Identifier: MIT
# stream_fixtures.sh STREAMFILE VALIDATE FIXTURES WORKDIR - every validator fixture through
# the runtime's OTLP stream (lin-otlp-stream-file feeds the file to the OTLP tap) and through
# lineage-validate --export-otlp, each reduced to one line per span, without the times (the
# fixtures' headers have no start_unix_ns, so the stream anchors host times at its own opening
# and the export at 0; stream.sh compares times on runs that have them): trace id, span id
# (GPU spans: correlation/stream), parent span id, name, lineage.span, lineage.join, status
# code and message, the number of links, and every attribute but lineage.trace.offset (the
# stream's alone). Events are left out: the export's are the validator's findings, the
# stream's only misuse and loss records (docs/fleet.md says so); links are counted, not read.
#
# The stream is fed three ways: the file in one piece; 7 bytes at a time (the same spans as
# in one piece, line for line); and live, a record at a time with a tick after each whose
# watermark is the largest host time fed so far, as the writer feeds the tap, so spans are
# made as records arrive (a graph_launch decoded after its epoch, a GPU record joined
# before the close) rather than all at the last tick.
#
# Each is compared with the export, line for line, after the export's lines are changed as
# docs/fleet.md ("How it differs from the export") says the stream's differ:
#   * everywhere: a lost GPU span's status message is not_joined_in_stream in the stream, the
#     validator's cause in the export (fleet.md: "written lineage.join=lost with status
#     message not_joined_in_stream"; the status code, ERROR, is the same);
#   * on the fixtures in the table below, what the rules named there say.
# So the stream's side of each difference is checked as strictly as its export side: a GPU
# span the stream joins to another epoch than the one named, or calls lost where it should
# be joined, fails. Each rule must change at least one of the export's spans, so a listed
# fixture whose export no longer holds the difference fails too, and so does one whose
# stream stops differing (its lines then no longer equal the changed export's), so the
# table stays the truth. Rules (P: the process span; the export's side -> the stream's):
#   containment  a GPU span joined by same_thread_time_containment (inferred) -> lost:
#                under P, in P's trace, lineage.join=lost, no lineage.join.rule, status
#                ERROR not_joined_in_stream (the stream infers nothing)
#   contradict   a GPU span lost as foreign_process or correlation_mismatch (its API record
#                contradicts it) -> observed, child of the epoch span its external
#                correlation names (lin-otlp-stream-file --ext reads the ext_correlation
#                records; the epoch span is the export's span of that lineage.epoch.id), in
#                that span's trace, status unset
#   duplicate    the second copy of a GPU record, unjoined under P -> a copy of the first,
#                joined copy (same parent, trace, join, status)
#   remote       lineage.remote.joined (request spans) and lineage.cross_process (GPU spans)
#                -> absent
#   undecodable  P (held open where the bytes go bad) -> not written
#   late_link    live only: an epoch or GPU span in the trace of a request begun from a
#                traceparent -> in that request's own trace (process key, request id): the
#                file's request_link comes after the epoch_declare and is timed before it
#                (host time runs backwards), so a live feed has passed the epoch's watermark
#                before the stream learns the remote trace.
# The live column names the rules for the live feed where they are not those of the whole
# file ("="), with the reason below the table. Every *.lt in FIXTURES is compared, except
# those in the SKIP table (with the reason; the validator must write no export for them);
# any other fixture without an export fails, and so does a table naming a missing fixture.
# Exit 77 (ctest: skipped) without jq.
set -u
SF=$1 V=$2 FX=$3 W=$4
if ! command -v jq >/dev/null 2>&1; then
	echo "SKIP: jq not found"
	exit 77
fi
rm -rf "$W" && mkdir -p "$W" || exit 1
cat >"$W/spans.jq" <<'JQ'
# $mode "spans": the input's spans as lines; "expect": the export's spans changed by
# $rules (comma-separated) and the everywhere rule, as lines. $ext: "CORR\tEXTERNAL_ID" lines.
def val: if has("stringValue") then .stringValue
  elif has("intValue") then .intValue | tostring
  elif has("boolValue") then .boolValue | tostring
  elif has("doubleValue") then .doubleValue | tostring
  elif has("arrayValue") then "[" + (.arrayValue.values // [] | map(val) | join(",")) + "]"
  else tojson end;
def gpu: .attrs["lineage.span"] | IN("kernel", "memcpy", "memset");
def key: if gpu then (.attrs["lineage.cuda.correlation_id"] // "-") + "/"
                     + (.attrs["lineage.device.stream"] // "-")
         else .id end;
def line: [.trace, key, .parent, .name, .attrs["lineage.span"], (.attrs["lineage.join"] // ""),
           (.code | tostring), .msg, (.links | tostring),
           (.attrs | to_entries | map(.key + "=" + .value) | sort | join(" "))] | @tsv;
def hex16: tonumber as $n
  | [range(15; -1; -1) as $i | (($n / pow(16; $i)) | floor) % 16 | "0123456789abcdef"[.:. + 1]]
  | join("");
# map f over the spans that cond selects; an error when it selects none
def change($rule; cond; f):
  if any(.[]; cond) then map(if cond then f else . end)
  else error("rule \($rule): no span of the export's it applies to") end;
def rule($r):
  . as $s
  | ([$s[] | select(.attrs["lineage.span"] == "process")]
     | if length == 1 then .[0] else null end) as $p
  | if $p == null and $r != "remote"
    then error("rule \($r): not one process span") else . end
  | if $r == "containment" then
      change($r; gpu and .attrs["lineage.join.rule"] == "same_thread_time_containment";
        .trace = $p.trace | .parent = $p.id | .code = 2 | .msg = "not_joined_in_stream"
        | .attrs |= (del(.["lineage.join.rule"]) | .["lineage.join"] = "lost"))
    elif $r == "contradict" then
      ($ext | split("\n") | map(select(length > 0) | split("\t") | {(.[0]): .[1]}) | add // {})
        as $x
      | change($r; gpu and .attrs["lineage.join"] == "lost"
                   and (.msg | IN("foreign_process", "correlation_mismatch"));
          ($x[.attrs["lineage.cuda.correlation_id"]]
           // error("rule contradict: no ext_correlation for \(key)")) as $eid
          | [$s[] | select(.attrs["lineage.span"] == "epoch"
                           and .attrs["lineage.epoch.id"] == $eid)] as $e
          | if ($e | length) != 1
            then error("rule contradict: \($e | length) epoch spans of id \($eid)") else . end
          | .trace = $e[0].trace | .parent = $e[0].id | .code = 0 | .msg = ""
          | .attrs["lineage.join"] = "observed")
    elif $r == "duplicate" then
      change($r; gpu and .attrs["lineage.join"] == null and .parent == $p.id
                 and (key as $k | any($s[]; gpu and key == $k and .attrs["lineage.join"] != null));
        key as $k | first($s[] | select(gpu and key == $k and .attrs["lineage.join"] != null)))
    elif $r == "remote" then
      change($r; (.attrs["lineage.span"] == "request" and .attrs["lineage.remote.joined"] != null)
                 or (gpu and .attrs["lineage.cross_process"] != null);
        .attrs |= del(.["lineage.remote.joined"], .["lineage.cross_process"]))
    elif $r == "undecodable" then
      change($r; .attrs["lineage.span"] == "process"; empty)
    elif $r == "late_link" then
      change($r; .attrs["lineage.span"] != "request"
                 and (.trace as $t | any($s[]; .attrs["lineage.span"] == "request"
                     and .trace == $t and .attrs["lineage.remote.parent_span_id"] != null));
        .trace as $t
        | first($s[] | select(.attrs["lineage.span"] == "request" and .trace == $t)) as $q
        | .trace = $p.trace[0:16] + ($q.attrs["lineage.request.id"] | hex16))
    else error("no rule \($r)") end;
[inputs | .resourceSpans[]?.scopeSpans[]?.spans[]?
 | {trace: .traceId, id: .spanId, parent: (.parentSpanId // ""), name,
    t: (.startTimeUnixNano // "0" | tonumber),
    attrs: (.attributes // [] | map({(.key): (.value | val)}) | add // {}
            | del(.["lineage.trace.offset"])),
    code: (.status.code // 0), msg: (.status.message // ""), links: (.links // [] | length)}]
| if $mode == "expect" then
    reduce ($rules | split(",")[] | select(. != "-" and . != "")) as $r (.; rule($r))
    | map(if gpu and .attrs["lineage.join"] == "lost" then .msg = "not_joined_in_stream"
          else . end)
  else . end
| .[] | line
JQ
# fixture, the rules for the stream fed whole (and 7 bytes at a time), for the live feed ("=":
# the same; "-": none), and the doc that states the difference (fleet.md: docs/fleet.md,
# "How it differs from the export")
cat >"$W/differs" <<'TAB'
good_cuda_only                 containment  =                 fleet.md
bad_foreign_ext_empty_bracket  containment  =                 fleet.md
lost_foreign_ext_brackets_held containment  =                 fleet.md
lost_outside_bracket           containment  =                 fleet.md
bad_api_pid_mismatch           contradict   =                 fleet.md
lost_correlation_mismatch      contradict   =                 fleet.md
bad_duplicate_gpu_record       duplicate    =                 fleet.md
bad_duplicate_batch_copy       duplicate    =                 fleet.md
bad_graph_memset_twice         duplicate    =                 fleet.md
good_request_link              remote       remote,late_link  fleet.md
err_deep_nesting               undecodable  =                 fleet.md
err_huge_array                 undecodable  =                 fleet.md
err_huge_str                   undecodable  =                 fleet.md
err_wrong_field_type           undecodable  =                 fleet.md
TAB
# Live: good_request_link: late_link above.
# fixture and why the validator writes no export of it (none at present)
cat >"$W/skip" <<'TAB'
TAB
fail=0 n=0 same=0 listed=0 skipped=0 total=0
: >"$W/seen"
for f in "$FX"/*.lt; do
	[ -e "$f" ] || break
	b=$(basename "$f" .lt)
	d="$W/$b"
	mkdir -p "$d"
	total=$((total + 1))
	echo "$b" >>"$W/seen"
	skip=$(awk -v b="$b" '$1 == b { $1 = ""; print }' "$W/skip")
	"$V" --export-otlp "$d/export.json" "$f" >/dev/null 2>"$d/validate.txt"
	if [ ! -s "$d/export.json" ]; then
		if [ -n "$skip" ]; then
			skipped=$((skipped + 1))
			echo "skip: $b:$skip"
		else
			echo "FAIL: $b: the validator wrote no export and the fixture is not in SKIP:"
			head -3 "$d/validate.txt"
			fail=1
		fi
		continue
	elif [ -n "$skip" ]; then
		echo "FAIL: $b: listed in SKIP ($skip) but the validator wrote an export"; fail=1
	fi
	n=$((n + 1))
	ok=1
	"$SF" "$f" "$d/stream.json" 2>"$d/stream.txt" || ok=0
	"$SF" "$f" "$d/stream7.json" 7 2>>"$d/stream.txt" || ok=0
	"$SF" --live "$f" "$d/live.json" 2>>"$d/stream.txt" || ok=0
	"$SF" --ext "$f" >"$d/ext.tsv" 2>>"$d/stream.txt" || ok=0
	if [ $ok = 0 ]; then
		echo "FAIL: $b: lin-otlp-stream-file:"; head -3 "$d/stream.txt"; fail=1; continue
	fi
	rules=$(awk -v b="$b" '$1 == b { print $2 }' "$W/differs")
	lrules=$(awk -v b="$b" '$1 == b { print $3 }' "$W/differs")
	doc=$(awk -v b="$b" '$1 == b { print $4 }' "$W/differs")
	[ "$lrules" = "=" ] && lrules=$rules
	# x: output, mode, rules, lines
	for x in "export expect ${rules:--} expect" "export expect ${lrules:--} expect_live" \
		"stream spans - stream" "stream7 spans - stream7" "live spans - live"; do
		# shellcheck disable=SC2086 # x is split into its words
		set -- $x
		if ! jq -n -r --arg mode "$2" --arg rules "$3" --rawfile ext "$d/ext.tsv" \
			-f "$W/spans.jq" "$d/$1.json" >"$d/$4.lines" 2>"$d/$4.jqerr"; then
			echo "FAIL: $b: jq on $1.json ($4):"; head -3 "$d/$4.jqerr"; fail=1; ok=0
			continue
		fi
		sort "$d/$4.lines" >"$d/$4.tsv"
	done
	[ $ok = 0 ] && continue
	if ! cmp -s "$d/stream.tsv" "$d/stream7.tsv"; then
		echo "FAIL: $b: the stream differs when fed 7 bytes at a time:"
		diff "$d/stream.tsv" "$d/stream7.tsv" | head -4; fail=1
	fi
	for x in "expect stream whole ${rules:--}" "expect_live live live ${lrules:--}"; do
		# shellcheck disable=SC2086 # x is split into its words
		set -- $x
		if ! diff "$d/$1.tsv" "$d/$2.tsv" >"$d/$2.diff"; then
			echo "FAIL: $b: the stream fed $3 is not the export changed by the rules ($4)"
			echo "  (<: the export as changed, >: the stream; $d/$2.diff):"
			head -6 "$d/$2.diff"; fail=1; ok=0
		fi
	done
	[ $ok = 0 ] && continue
	if [ -n "$rules" ]; then
		listed=$((listed + 1))
		if [ "$doc" = undocumented ]; then
			echo "ok: $b: differs as listed ($rules; live $lrules), which docs/fleet.md does NOT state"
		else
			echo "ok: $b: differs as $doc states ($rules; live $lrules)"
		fi
	else
		same=$((same + 1))
	fi
done
for t in differs skip; do
	# shellcheck disable=SC2013 # a fixture's name is one word
	for b in $(awk '{ print $1 }' "$W/$t"); do
		grep -q -x -F -e "$b" "$W/seen" || { echo "FAIL: $t names $b, not in $FX"; fail=1; }
	done
done
if [ "$total" -eq 0 ]; then
	echo "FAIL: no fixtures in $FX"; fail=1
fi
echo "stream_fixtures: $total fixtures: $n compared ($same the same in the stream and the export," \
	"$listed differing as listed), $skipped skipped as listed"
exit $fail
