#!/bin/sh
# SPDX-License-Identifier: MIT
# score.sh EXPLAIN SYNTH GEN WORKDIR VALIDATE - lineage-explain --score (docs/attribution.md): each
# outcome fires on an input made for it and stays silent on one that is not.
#   - a scenario's targets are scored, lineage names the injected cause (fires), the
#     baselines' labels differ where their vocabulary cannot name it;
#   - --without host-sched turns descheduled into thread_delay (the evidence matters);
#   - a cause truth that matches no launch: exit 1; a bad cause truth (wrong format,
#     a foreign record, a bad cause, an ambiguous label with one candidate, a cut file):
#     exit 2 naming the file and the byte offset; usage errors: 64;
#   - --peer-labels: a peer's labels (keys from lineage-validate --export-kineto) are scored
#     as its own method, right where they name the cause and wrong where they do not; a bad
#     peer file: exit 2 naming the file and line.
set -u
# The scheduler's records here are another collector's (--sched-trace, the input format),
# not the runtime's own collector: keep that off whatever the environment says.
unset LINEAGE_SCHED_EVENTS
explain=$1 synth=$2 gen=$3 w=$4 validate=$5
rm -rf "$w" && mkdir -p "$w" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { # expect RC CMD...: run, keep stdout/stderr in $w/out, $w/err
	want=$1; shift
	"$@" >"$w/out" 2>"$w/err"; rc=$?
	[ "$rc" = "$want" ] || { cat "$w/err" >&2; fail "exit $rc, want $want: $*"; }
}
field() { # field METHOD CAUSE KEY: a SUMMARY value
	awk -v m="method=$1" -v c="cause=$2" -v k="$3" '$1 == "SUMMARY" && $2 == m && $4 == c {
		for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) print a[2] } }' "$w/out"
}
run() { # run SCENARIO: trace, sched trace, cause truth
	"$synth" --scenario "attr-$1" --strategy epoch --seed 3 --requests 12 --latency-timestamps \
		--delay-us 10000 -o "$w/$1.lt" --truth "$w/$1.truth" --cause-truth "$w/$1.cause" \
		--sched-trace "$w/$1.sched" >/dev/null || fail "lineage-synth attr-$1"
}

# 1. descheduled: lineage names it with the scheduler's records, thread_delay without them.
run descheduled-blocked
expect 0 "$explain" --score "$w/descheduled-blocked.cause" "$w/descheduled-blocked.lt" "$w/descheduled-blocked.sched"
# (a target whose handoff took over a tenth of the injection is left unlabelled: n <= 12)
n=$(field lineage descheduled n)
[ "$n" -ge 6 ] || fail "targets scored: $n"
[ "$(field lineage descheduled correct)" -ge $((n - 1)) ] || fail "lineage names descheduled"
[ "$(field nsys descheduled correct)" = 0 ] || fail "nsys has no word for descheduling"
grep -q '^SUMMARY method=hta-model without=- cause=all ' "$w/out" || fail "an overall line per method"
grep -q '^SUMMARY method=peer\|^SUMMARY method=hta ' "$w/out" && fail "no peer method without --peer-labels"
expect 0 "$explain" --score "$w/descheduled-blocked.cause" --without host-sched "$w/descheduled-blocked.lt" "$w/descheduled-blocked.sched"
[ "$(field lineage descheduled correct)" = 0 ] || fail "without host_sched records: not named"
grep -q 'without=host-sched' "$w/out" || fail "the ablation is named in the SUMMARY lines"
expect 0 "$explain" --score "$w/descheduled-blocked.cause" "$w/descheduled-blocked.lt"
[ "$(field lineage descheduled correct)" = 0 ] || fail "without the sched trace: not named"

# 2. stream dependency: lineage says dependency, never device delay; the nsys reading finds
#    the previous kernel on the stream (cuda_gpu_trace), the HTA model reads queue.
run stream-dependency
expect 0 "$explain" --score "$w/stream-dependency.cause" "$w/stream-dependency.lt"
n=$(field lineage stream_dependency n)
[ "$n" -ge 6 ] || fail "targets scored: $n"
[ "$(field lineage stream_dependency correct)" = "$n" ] || fail "lineage names the stream dependency"
[ "$(field lineage stream_dependency as_device)" = 0 ] || fail "lineage: no dependency as device delay"
[ "$(field nsys stream_dependency correct)" = "$n" ] || fail "nsys: the stream's previous kernel explains the queue"
[ "$(field hta-model stream_dependency as_device)" = "$n" ] || fail "the HTA model reads the queue as the cause"
expect 0 "$explain" --score "$w/stream-dependency.cause" --without stream-order "$w/stream-dependency.lt"
[ "$(field lineage stream_dependency correct)" = 0 ] || fail "without stream order: not named"

# 2b. peer labels: every kernel of the Kineto export, keyed as the export says.
"$validate" --export-kineto "$w/sd.json" "$w/stream-dependency.lt" >/dev/null 2>&1
[ -s "$w/sd.json" ] || fail "lineage-validate --export-kineto"
peer() { # peer LABEL OUT: every kernel of the export labelled LABEL
	jq -r --arg l "$1" '.traceEvents[] | select(.cat == "kernel")
		| "22\t\(.args["lineage key"])\t\(.args.correlation)\t\($l)\t-\t-"' "$w/sd.json" >"$2"
}
peer stream_dependency "$w/right.peer"
[ -s "$w/right.peer" ] || fail "no kernel in the export"
expect 0 "$explain" --score "$w/stream-dependency.cause" --peer-labels "toolx=$w/right.peer" "$w/stream-dependency.lt"
[ "$(field toolx stream_dependency correct)" = "$n" ] || fail "a peer's right labels are scored right"
peer queue "$w/wrong.peer"
expect 0 "$explain" --score "$w/stream-dependency.cause" --peer-labels "toolx=$w/wrong.peer" "$w/stream-dependency.lt"
[ "$(field toolx stream_dependency correct)" = 0 ] || fail "a peer's wrong labels are scored wrong"
[ "$(field toolx stream_dependency as_device)" = "$n" ] || fail "a peer's queue is device delay"
grep -v '^22' "$w/right.peer" >"$w/none.peer"
printf '# nothing but a comment\n' >>"$w/none.peer"
expect 0 "$explain" --score "$w/stream-dependency.cause" --peer-labels "toolx=$w/none.peer" "$w/stream-dependency.lt"
[ "$(field toolx stream_dependency unknown)" = "$n" ] || fail "a target the peer did not label is unknown"
printf '22\t1\t-\tbogus_label\t-\t-\n' >"$w/badlabel.peer"
expect 2 "$explain" --score "$w/stream-dependency.cause" --peer-labels "toolx=$w/badlabel.peer" "$w/stream-dependency.lt"
grep -q 'badlabel.peer:1: expected 6 tab-separated fields' "$w/err" || fail "a bad peer label names file and line"
printf '# c\n25\t1\t-\tqueue\t-\t-\n' >"$w/badkind.peer"
expect 2 "$explain" --score "$w/stream-dependency.cause" --peer-labels "toolx=$w/badkind.peer" "$w/stream-dependency.lt"
grep -q 'badkind.peer:2:' "$w/err" || fail "a bad gpu_kind names file and line"
expect 2 "$explain" --score "$w/stream-dependency.cause" --peer-labels "nsys=$w/right.peer" "$w/stream-dependency.lt"
grep -q "the method name 'nsys' is a built-in method's" "$w/err" || fail "a peer cannot take a built-in's name"
expect 2 "$explain" --score "$w/stream-dependency.cause" --peer-labels "toolx=$w/missing.peer" "$w/stream-dependency.lt"
grep -q 'missing.peer: No such file' "$w/err" || fail "a missing peer file is named"
expect 64 "$explain" --peer-labels "toolx=$w/right.peer" "$w/stream-dependency.lt"
expect 64 "$explain" --score "$w/stream-dependency.cause" --peer-labels "$w/right.peer" "$w/stream-dependency.lt"

# 3. the cause truth of another run (another process) matches nothing: exit 1, said; so do
#    labels of this process whose keys no launch has; some unmatched labels are scored as
#    unknown, and said.
expect 1 "$explain" --score "$w/descheduled-blocked.cause" "$w/stream-dependency.lt"
grep -q 'no explained launch of the process its header names' "$w/err" || fail "another process is said"
"$gen" --cause-truth-for "$w/descheduled-blocked.lt" 999999 "$w/nokey.cause" || fail "lin-explain-gen --cause-truth-for"
expect 1 "$explain" --score "$w/nokey.cause" "$w/descheduled-blocked.lt"
grep -q 'none of its labels matched' "$w/err" || fail "no match is said"
"$gen" --cause-truth-for "$w/descheduled-blocked.lt" 1 "$w/onekey.cause" || fail "lin-explain-gen --cause-truth-for"
expect 0 "$explain" --score "$w/onekey.cause" "$w/descheduled-blocked.lt"
grep -q '1 of 2 labels matched no explained launch' "$w/err" || fail "unmatched labels are said"
[ "$(field lineage api_call n)" = 2 ] || fail "the unmatched label is counted"
[ "$(field lineage api_call unknown)" -ge 1 ] || fail "the unmatched label is unknown"

# 4. bad cause truth files: exit 2 with file and byte offset.
expect 2 "$explain" --score "$w/descheduled-blocked.truth" "$w/descheduled-blocked.lt"
grep -q "descheduled-blocked.truth: byte 0: header: format 'lineage-truth', expected 'lineage-cause-truth'" "$w/err" ||
	fail "a request truth file is refused by its format"
for bad in foreign-record bad-cause one-candidate bad-interval empty; do
	"$gen" --cause-truth "$bad" "$w/$bad.cause" || fail "lin-explain-gen --cause-truth $bad"
	expect 2 "$explain" --score "$w/$bad.cause" "$w/descheduled-blocked.lt"
	grep -q "$bad.cause" "$w/err" || fail "$bad: the file is named"
done
grep -q 'no launch_cause record' "$w/err" || fail "an empty cause truth is no pass"
size=$(wc -c <"$w/descheduled-blocked.cause")
head -c $((size - 3)) "$w/descheduled-blocked.cause" >"$w/cut.cause"
expect 2 "$explain" --score "$w/cut.cause" "$w/descheduled-blocked.lt"
grep -q 'cut.cause: byte [0-9]*: .*trunc' "$w/err" || fail "a cut cause truth names its offset"

# 5. usage
expect 64 "$explain" --score "$w/descheduled-blocked.cause" --json "$w/descheduled-blocked.lt"
expect 64 "$explain" --without nothing "$w/descheduled-blocked.lt"
expect 64 "$explain" --without latency,bogus "$w/descheduled-blocked.lt"
echo "score.sh: ok"
