#!/bin/sh
# Hand-made inputs, one GPU record per cause (tests/import/data/; each event's expected
# outcome is in docs/importers.md "Hand-made test inputs").
# Usage: causes.sh BIN DATA_DIR [MKSQLITE TMPDIR]
BIN=$1 DATA=$2 MKSQLITE=$3 TMP=$4
. "$(dirname "$0")/lib.sh"

j=$("$BIN" --from kineto --json "$DATA/causes.json")
expect_eq "causes.json exit" $? 1
expect_keys causes.json "$j" records=37 gpu_records=16 joined_observed=4 joined_inferred=4 \
	same_thread_time_containment=2 external_id_is_correlation_fallback=1 \
	graph_launch_enclosing_op=1 lost=5 ambiguous=3 before_trace_start=1 no_api_record=1 \
	no_correlation=1 graph_replay=1 no_enclosing_op=1 launches=12 notes=2 \
	none=3 api_call=5 op=8 epoch=0 request=0
for c in external_id_other_thread external_id_outside_launch external_id_is_correlation; do
	expect_eq "causes.json ambiguous $c" "$(count_cause "$j" ambiguous $c)" 1
done
# k30: External id = correlation 30 names op E, which holds the launch as well as F (the
# innermost): ambiguous. k14: it names D, which does not hold the launch: the fallback.
expect_eq "causes.json k30 is the ambiguous external_id_is_correlation" \
	"$(printf '%s' "$j" | grep -c '"cause":"external_id_is_correlation","file":"[^"]*","offset":[0-9]*,"record":[0-9]*,"ids":{"correlation":30,')" 1
# graph launches: 17 carries External id 1 (op A holds it, observed), 20 none (op B holds
# it, inferred), 19 none and no op holds it (lost): one note for each joined launch
expect_eq "causes.json graph notes" "$(count_cause "$j" note graph_node_unknown)" 2
expect_eq "causes.json graph note says what is unknown" \
	"$(printf '%s' "$j" | grep -c '"detail":"joined to the step, not to an op inside the graph (rule graph_launch_enclosing_op): op .B."')" 1
expect_eq "causes.json graph note (observed)" \
	"$(printf '%s' "$j" | grep -c '"detail":"joined to the step, not to an op inside the graph (observed, the launch.s External id): op .A."')" 1
t=$("$BIN" --from kineto --max-findings 100 "$DATA/causes.json")
expect_eq "causes.json text names graph_replay" \
	"$(printf '%s\n' "$t" | grep -c 'lost graph_replay correlation=19 pid=100 tid=1')" 1
expect_eq "causes.json text join levels" \
	"$(printf '%s\n' "$t" | grep -c 'deepest join reached  *request 0, op without request 8, API call only 5, none 3')" 1

# Exact times: op A is [1700000000000000.000, +0.100] us; one launch starts 1 ns before its
# end, one 1 ns after. Read through a double (ulp 0.25 us here) both would sit at A's
# start; read as decimals, the second lies outside A.
j=$("$BIN" --json "$DATA/exact_ns.json")
expect_keys "exact_ns.json" "$j" gpu_records=2 joined_inferred=1 same_thread_time_containment=1 \
	lost=1 no_enclosing_op=1
expect_eq "exact_ns.json: the launch 1 ns after A's end is the lost one" \
	"$(printf '%s' "$j" | grep -c '"cause":"no_enclosing_op","file":"[^"]*","offset":[0-9]*,"record":4,"ids":{"correlation":2,')" 1
"$BIN" --export-perfetto "$TMP/exact.perfetto.json" "$DATA/exact_ns.json" >/dev/null
expect_eq "exact_ns.json: the export keeps every ns" \
	"$(grep -c '"name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1700000000000000.101,"dur":0.001' "$TMP/exact.perfetto.json")" 1

j=$("$BIN" --from kineto --json "$DATA/noops.json")
expect_keys "noops.json (bare event array)" "$j" exit_code=1 gpu_records=1 lost=1 no_op_layer=1

j=$("$BIN" --from kineto --json "$DATA/collide.json")
expect_keys collide.json "$j" exit_code=1 gpu_records=1 ambiguous=1 joined_inferred=0
expect_eq "collide.json correlation_collision" "$(count_cause "$j" ambiguous correlation_collision)" 1

# k5: the launch says External id 7 (opA), the kernel 8 (opB): ambiguous, never observed.
# k6 (both 7) and k9 (only the launch's): observed to opA.
j=$("$BIN" --from kineto --json "$DATA/ext_conflict.json")
expect_keys ext_conflict.json "$j" exit_code=1 gpu_records=3 joined_observed=2 ambiguous=1 \
	api_call=1 op=2
expect_eq "ext_conflict.json external_id_conflict" \
	"$(printf '%s' "$j" | grep -c '"kind":"ambiguous","cause":"external_id_conflict","file":"[^"]*","offset":[0-9]*,"record":3,"ids":{"correlation":5,"pid":1,"tid":1,"external_id":8,.*"detail":"the launch.s External id is 7, the GPU record.s 8"')" 1

# Times written as decimal strings are read as numbers: the op's "dur":"50" makes it
# [100, 150] us, which holds the launch (read as 0 it held nothing: lost). Host events
# other than "X" are not read, whatever their ts.
j=$("$BIN" --from kineto --json "$DATA/time_strings.json")
expect_keys time_strings.json "$j" exit_code=0 gpu_records=1 joined_inferred=1 \
	same_thread_time_containment=1 lost=0

# Graph replays are joined at step level whatever External id the kernels carry: a1/a2
# carry the launch's (7, stepA: observed), b1 the correlation (old Kineto: by time under
# graph_launch_enclosing_op, stepB), c1 the id of the op that captured it (aten::mm, which
# the replay does not run under: stepC, by time). One note per graph launch; d1 (a plain
# launch with the same id as its kernel) is observed with no note.
j=$("$BIN" --from kineto --json "$DATA/graph_ext.json")
expect_keys graph_ext.json "$j" exit_code=0 gpu_records=5 joined_observed=3 joined_inferred=2 \
	graph_launch_enclosing_op=2 same_thread_time_containment=0 ambiguous=0 notes=3 op=5
expect_eq "graph_ext.json graph notes" "$(count_cause "$j" note graph_node_unknown)" 3
for s in "observed, the launch.s External id): op .stepA." \
	"rule graph_launch_enclosing_op): op .stepB." "rule graph_launch_enclosing_op): op .stepC."; do
	expect_eq "graph_ext.json note $s" "$(printf '%s' "$j" | grep -c "not to an op inside the graph ($s\"")" 1
done

# Correlation 5 on launches of threads 1 and 2 of one pid: which launched k5 is unknown.
# Correlation 6: a runtime call and its nested driver call on one thread, one call.
j=$("$BIN" --from kineto --json "$DATA/dup_corr.json")
expect_keys dup_corr.json "$j" exit_code=1 gpu_records=2 ambiguous=1 joined_inferred=1 \
	same_thread_time_containment=1 none=1 op=1
expect_eq "dup_corr.json correlation_on_two_threads" \
	"$(printf '%s' "$j" | grep -c '"kind":"ambiguous","cause":"correlation_on_two_threads","file":"[^"]*","offset":[0-9]*,"record":4,')" 1

if [ -n "$MKSQLITE" ]; then
	"$MKSQLITE" "$DATA/nsys_new.sql" "$TMP/nsys_new.sqlite" || fails=$((fails + 1))
	j=$("$BIN" --from nsys --json "$TMP/nsys_new.sqlite")
	# the graph launch (correlation 7) lies inside the NVTX range "step": joined to it
	expect_keys nsys_new "$j" exit_code=1 gpu_records=7 joined_inferred=3 lost=4 \
		same_thread_time_containment=2 graph_launch_enclosing_op=1 \
		no_op_layer=1 no_enclosing_op=1 before_trace_start=1 no_api_record=1 \
		notes=2 ambiguous=0 launches=6 none=2 api_call=2 op=3
	expect_eq "nsys_new graph note" "$(count_cause "$j" note graph_node_unknown)" 1
	# correlation 5 is used by pid 10 and pid 20: reported, joined within each process only
	expect_eq "nsys_new collision note" "$(count_cause "$j" note correlation_collision)" 1
	expect_eq "nsys_new pid 20 kernel not joined to pid 10" \
		"$(printf '%s' "$j" | grep -c '"cause":"no_op_layer","file":"[^"]*","offset":2,"record":[0-9]*,"ids":{"correlation":5,"pid":20')" 1
	"$MKSQLITE" "$DATA/nsys_old.sql" "$TMP/nsys_old.sqlite" || fails=$((fails + 1))
	j=$("$BIN" --from nsys --json "$TMP/nsys_old.sqlite")
	# the graph launch (name column 'cudaGraphLaunch') lies outside the NVTX range
	expect_keys "nsys_old (name column, no memcpy/memset)" "$j" gpu_records=2 \
		joined_inferred=1 lost=1 graph_replay=1 graph_launch_enclosing_op=0 notes=0
	"$MKSQLITE" "$DATA/nsys_dup_corr.sql" "$TMP/nsys_dup_corr.sqlite" || fails=$((fails + 1))
	j=$("$BIN" --from nsys --json "$TMP/nsys_dup_corr.sqlite")
	expect_keys "nsys_dup_corr (one correlation on two threads)" "$j" exit_code=1 \
		gpu_records=2 ambiguous=1 joined_inferred=1 same_thread_time_containment=1
	expect_eq "nsys_dup_corr correlation_on_two_threads" \
		"$(count_cause "$j" ambiguous correlation_on_two_threads)" 1
	"$MKSQLITE" "$DATA/nsys_null_pids.sql" "$TMP/nsys_null_pids.sqlite" || fails=$((fails + 1))
	j=$("$BIN" --from nsys --json "$TMP/nsys_null_pids.sqlite")
	expect_keys "nsys_null_pids (NULL globalPid/globalTid join nothing)" "$j" exit_code=1 \
		gpu_records=2 lost=1 no_pid=1 joined_inferred=1 same_thread_time_containment=1
else
	echo "SKIP: nsys hand-made inputs (this build has no SQLite)"
fi
finish
