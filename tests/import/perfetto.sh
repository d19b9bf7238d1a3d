#!/bin/sh
# --export-perfetto: the output is well-formed JSON (parsed back by the yajl-based reader
# of this very binary, which exits 2 on malformed JSON), and every flow edge has its own
# id with exactly one start and one end.
# Usage: perfetto.sh BIN DATA_DIR TMPDIR [REALTRACES_DIR [FIXTURE_DIR]]
BIN=$1 DATA=$2 TMP=$3 REAL=$4 FIXTURES=$5
. "$(dirname "$0")/lib.sh"
mkdir -p "$TMP"

check() { # check LABEL FMT IN GPU_FLOWS OP_FLOWS
	out="$TMP/$1.perfetto.json"
	rm -f "$out"
	"$BIN" --from "$2" --export-perfetto "$out" "$3" >/dev/null
	expect_eq "$1 export exit" $? "$6"
	j=$("$BIN" --from kineto --json "$out")
	expect_eq "$1 export parses back (no file error)" "$(num "$j" file_errors)" 0
	expect_eq "$1 export events read back" "$(num "$j" records)" "$(grep -c '^{"ph"' "$out")"
	s=$(grep -c '"ph":"s"' "$out"); f=$(grep -c '"ph":"f"' "$out")
	expect_eq "$1 flow starts = ends" "$s" "$f"
	expect_eq "$1 launch->gpu flows" "$(grep -c '"ph":"s","cat":"lineage","name":"launch->gpu"' "$out")" "$4"
	expect_eq "$1 op->launch flows" "$(grep -c '"ph":"s","cat":"lineage","name":"op->launch"' "$out")" "$5"
	ids=$(grep '"ph":"s"' "$out" | grep -o '"id":[0-9]*' | sort | uniq -d | wc -l | tr -d ' ')
	expect_eq "$1 flow ids unique" "$ids" 0
}
# causes.json: 13 GPU records, 10 with a launch (not 5, 50, no correlation) of which
# k11 and k12.. all distinct; launches joined to an op: 10, 11, 15, 18 -> 4 op->launch edges
check causes kineto "$DATA/causes.json" 10 4 1
# lineage's own traces (fixtures/fixturegen.c): chain_handoff = request 1 (epoch 2) on
# thread 100, handed to thread 200, then to 300, which launches twice (kernels 31, 32)
if [ -n "$FIXTURES" ]; then
	out="$TMP/chain.perfetto.json"
	"$BIN" --export-perfetto "$out" "$FIXTURES/good_chain_handoff.lt" >/dev/null
	expect_eq "chain_handoff export exit" $? 0
	j=$("$BIN" --from kineto --json "$out")
	expect_eq "chain_handoff export parses back" "$(num "$j" file_errors)" 0
	for e in request-\>handoff:2 handoff-\>launch:2 launch-\>gpu:2; do
		expect_eq "chain_handoff ${e%%:*} flows" \
			"$(grep -c "\"ph\":\"s\",\"cat\":\"lineage\",\"name\":\"${e%%:*}\"" "$out")" "${e#*:}"
	done
	expect_eq "chain_handoff flow starts = ends" "$(grep -c '"ph":"s"' "$out")" \
		"$(grep -c '"ph":"f"' "$out")"
	for fx in "$FIXTURES"/good_*.lt "$FIXTURES"/lost_*.lt; do
		n=$(basename "$fx" .lt)
		"$BIN" --export-perfetto "$TMP/$n.json" "$fx" >/dev/null
		rc=$?
		j=$("$BIN" --from kineto --json "$TMP/$n.json")
		expect_eq "$n export (validation exit $rc) parses back" "$(num "$j" file_errors)" 0
	done
	"$BIN" --export-perfetto "$TMP/x.json" "$FIXTURES/err_random_bytes.lt" >/dev/null 2>&1
	expect_eq "export of a malformed lineage trace exit" $? 2
fi
if [ -d "$REAL" ]; then
	# bert: 61 GPU records, each with its own launch, each launch inside its op
	check bert kineto "$REAL/tracelens_h100_bert_small.json.gz" 61 61 0
	# vllm: 434 GPU records all with a launch; 13 launches joined to ops
	check vllm kineto "$REAL/tracelens_rocm_vllm_decode_full_graph_replay.json.gz" 434 13 1
else
	echo "SKIP: real traces absent ($REAL)"
fi
finish
