#!/bin/sh
# --export-perfetto: the output is well-formed JSON (parsed back by jq), every flow edge
# has its own id with exactly one start and one end, the slices of every track nest
# (nesting.sh), and every track has a process and a thread name.
# Usage: perfetto.sh BIN DATA_DIR TMPDIR [REALTRACES_DIR [FIXTURE_DIR [MKSQLITE]]]
BIN=$1 DATA=$2 TMP=$3 REAL=$4 FIXTURES=$5 MKSQLITE=$6
HERE=$(dirname "$0")
. "$HERE/lib.sh"
mkdir -p "$TMP"
if ! command -v jq >/dev/null; then
	echo "SKIP: jq is not installed (the export is parsed back with it)"
	exit 77
fi
parses() { # parses LABEL FILE: well-formed JSON, and the number of events in it
	nev=$(jq '.traceEvents | length' "$2" 2>/dev/null)
	expect_eq "$1 export parses back (jq)" "$(test -n "$nev" && echo yes)" yes
	expect_eq "$1 export events read back" "$nev" "$(grep -c '^{"ph"' "$2")"
}
named() { # named LABEL FILE: every pid and every (pid, tid) of a slice has a name event
	miss=$(jq -r '[.traceEvents[] | select(.ph == "M")] as $m
		| ($m | map(select(.name == "process_name") | .pid)) as $p
		| ($m | map(select(.name == "thread_name") | [.pid, .tid])) as $t
		| [.traceEvents[] | select(.ph == "X")
		   | select((.pid as $x | $p | index([$x])) == null
			    or ([.pid, .tid] as $y | $t | index([$y])) == null)] | length' "$2")
	expect_eq "$1 every track named" "$miss" 0
}
nests() { # nests LABEL FILE
	nest_out=$(sh "$HERE/nesting.sh" "$2")
	expect_eq "$1 slices nest on every track" "$?:$nest_out" "0:"
}

check() { # check LABEL FMT IN GPU_FLOWS OP_FLOWS EXIT
	out="$TMP/$1.perfetto.json"
	rm -f "$out"
	"$BIN" --from "$2" --export-perfetto "$out" "$3" >/dev/null
	expect_eq "$1 export exit" $? "$6"
	parses "$1" "$out"
	named "$1" "$out"
	nests "$1" "$out"
	s=$(grep -c '"ph":"s"' "$out"); f=$(grep -c '"ph":"f"' "$out")
	expect_eq "$1 flow starts = ends" "$s" "$f"
	expect_eq "$1 launch->gpu flows" "$(grep -c '"ph":"s","cat":"lineage","name":"launch->gpu"' "$out")" "$4"
	expect_eq "$1 op->launch flows" "$(grep -c '"ph":"s","cat":"lineage","name":"op->launch"' "$out")" "$5"
	ids=$(grep '"ph":"s"' "$out" | grep -o '"id":[0-9]*' | sort | uniq -d | wc -l | tr -d ' ')
	expect_eq "$1 flow ids unique" "$ids" 0
}

# The nesting check fires on slices that overlap on one track, and is silent otherwise.
printf '%s\n' '{"ph":"X","cat":"kernel","name":"a","pid":1,"tid":7,"ts":1000.000,"dur":10.000,"args":{}}' \
	'{"ph":"X","cat":"kernel","name":"b","pid":1,"tid":7,"ts":1005.000,"dur":10.000,"args":{}}' > "$TMP/bad.json"
sh "$HERE/nesting.sh" "$TMP/bad.json" >/dev/null
expect_eq "nesting check fires on an overlap" $? 1
printf '%s\n' '{"ph":"X","cat":"kernel","name":"a","pid":1,"tid":7,"ts":1000.000,"dur":10.000,"args":{}}' \
	'{"ph":"X","cat":"kernel","name":"b","pid":1,"tid":7,"ts":1005.000,"dur":5.000,"args":{}}' \
	'{"ph":"X","cat":"kernel","name":"c","pid":1,"tid":7,"ts":1010.000,"dur":5.000,"args":{}}' > "$TMP/good.json"
sh "$HERE/nesting.sh" "$TMP/good.json" >/dev/null
expect_eq "nesting check silent on nested and adjacent slices" $? 0

# overlap.json: kernels A (1000-1010) and B (1005-1015) overlap on stream 7, ops X (0-100)
# and Y (50-150) on thread 1: B and Y go to a second lane of their track, named as such.
check overlap kineto "$DATA/overlap.json" 3 3 0
o="$TMP/overlap.perfetto.json"
expect_eq "overlap: B on lane 1 of stream 7" \
	"$(grep -c '"name":"B","pid":1073741824,"tid":1099511627783,' "$o")" 1
expect_eq "overlap: A and C on stream 7 itself" \
	"$(grep -c '^{"ph":"X".*"pid":1073741824,"tid":7,' "$o")" 2
expect_eq "overlap: lane 1 is named" \
	"$(grep -c '"name":"thread_name","pid":1073741824,"tid":1099511627783,"args":{"name":"stream 7 (overlap 1)"}' "$o")" 1
expect_eq "overlap: Y on lane 1 of thread 1" "$(grep -c '"name":"Y","pid":1,"tid":1099511627777,' "$o")" 1
expect_eq "overlap: the process keeps the trace's name" \
	"$(grep -c '"name":"process_name","pid":1,"tid":0,"args":{"name":"python3"}' "$o")" 1
expect_eq "overlap: the thread keeps the trace's name" \
	"$(grep -c '"name":"thread_name","pid":1,"tid":1,"args":{"name":"thread 1 (python3)"}' "$o")" 1
expect_eq "overlap: the GPU is named" \
	"$(grep -c '"name":"process_name","pid":1073741824,"tid":0,"args":{"name":"GPU 0"}' "$o")" 1
# the flow arrows bind to the lane their slice is on
expect_eq "overlap: flow to B ends on lane 1" \
	"$(grep -c '"ph":"f","bp":"e","cat":"lineage","name":"launch->gpu","id":[0-9]*,"pid":1073741824,"tid":1099511627783' "$o")" 1

# causes.json: 16 GPU records, 13 with a launch (not 5, 50, no correlation); launches
# joined to an op: 10, 11, 14, 15, 17 (graph), 18, 20 (graph) -> 7 op->launch edges
check causes kineto "$DATA/causes.json" 13 7 1
if [ -n "$MKSQLITE" ]; then
	# nsys_new.sql names its processes and threads (PROCESSES, ThreadNames)
	"$MKSQLITE" "$DATA/nsys_new.sql" "$TMP/nsys_new.sqlite" || fails=$((fails + 1))
	check nsys_new nsys "$TMP/nsys_new.sqlite" 5 3 1
	o="$TMP/nsys_new.perfetto.json"
	expect_eq "nsys_new: process name from PROCESSES" \
		"$(grep -c '"name":"process_name","pid":10,"tid":0,"args":{"name":"python"}' "$o")" 1
	expect_eq "nsys_new: thread name from ThreadNames" \
		"$(grep -c '"name":"thread_name","pid":10,"tid":11,"args":{"name":"pt_main_thread"}' "$o")" 1
	expect_eq "nsys_new: an unnamed process gets its pid" \
		"$(grep -c '"name":"process_name","pid":20,"tid":0,"args":{"name":"process 20"}' "$o")" 1
fi
# lineage's own traces (fixtures/fixturegen.c): chain_handoff = request 1 (epoch 2) on
# thread 100, handed to thread 200, then to 300, which launches twice (kernels 31, 32)
if [ -n "$FIXTURES" ]; then
	out="$TMP/chain.perfetto.json"
	"$BIN" --export-perfetto "$out" "$FIXTURES/good_chain_handoff.lt" >/dev/null
	expect_eq "chain_handoff export exit" $? 0
	parses chain_handoff "$out"
	named chain_handoff "$out"
	nests chain_handoff "$out"
	for e in request-\>handoff:2 handoff-\>launch:2 launch-\>gpu:2; do
		expect_eq "chain_handoff ${e%%:*} flows" \
			"$(grep -c "\"ph\":\"s\",\"cat\":\"lineage\",\"name\":\"${e%%:*}\"" "$out")" "${e#*:}"
	done
	expect_eq "chain_handoff flow starts = ends" "$(grep -c '"ph":"s"' "$out")" \
		"$(grep -c '"ph":"f"' "$out")"
	# late work says so in Perfetto (docs/trace-format.md, "Late work"); on-time work does not
	out="$TMP/late.perfetto.json"
	"$BIN" --export-perfetto "$out" "$FIXTURES/good_late_after_retire.lt" >/dev/null
	expect_eq "late export exit" $? 0
	expect_eq "late launch named" "$(grep -c '"name":"late launch epoch 2 (after retire)"' "$out")" 1
	expect_eq "late handoff named" "$(grep -c '"name":"late handoff 2 (after retire)"' "$out")" 1
	"$BIN" --export-perfetto "$TMP/reissue.json" "$FIXTURES/good_late_after_reissue.lt" >/dev/null
	expect_eq "late after reissue named" \
		"$(grep -c '"name":"late launch epoch 2 (after reissue)"' "$TMP/reissue.json")" 1
	expect_eq "on-time work not named late" "$(grep -c '"name":"late ' "$TMP/chain.perfetto.json")" 0
	for fx in "$FIXTURES"/good_*.lt "$FIXTURES"/lost_*.lt; do
		n=$(basename "$fx" .lt)
		"$BIN" --export-perfetto "$TMP/$n.json" "$fx" >/dev/null
		rc=$?
		parses "$n (validation exit $rc)" "$TMP/$n.json"
	done
	"$BIN" --export-perfetto "$TMP/x.json" "$FIXTURES/err_random_bytes.lt" >/dev/null 2>&1
	expect_eq "export of a malformed lineage trace exit" $? 2
fi
if [ -d "$REAL" ]; then
	# bert: 61 GPU records, each with its own launch, each launch inside its op
	check bert kineto "$REAL/tracelens_h100_bert_small.json.gz" 61 61 0
	# vllm: 434 GPU records all with a launch; 13 launches joined to ops, and the graph
	# launch (to the step): 14 op->launch edges; exit 0 now the graph replay is joined
	check vllm kineto "$REAL/tracelens_rocm_vllm_decode_full_graph_replay.json.gz" 434 14 0
	expect_eq "vllm: host process named from the trace" \
		"$(grep -c '"name":"process_name","pid":851,"tid":0,"args":{"name":"' "$TMP/vllm.perfetto.json")" 1
	check pipit nsys "$REAL/pipit_nsys2022_saxpy_mpi_cuda.sqlite" 20 5 1
else
	echo "SKIP: real traces absent ($REAL)"
fi
finish
