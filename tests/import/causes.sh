#!/bin/sh
# Hand-made inputs, one GPU record per cause (tests/import/data/; each event's expected
# outcome is in docs/importers.md "Hand-made test inputs").
# Usage: causes.sh BIN DATA_DIR [MKSQLITE TMPDIR]
BIN=$1 DATA=$2 MKSQLITE=$3 TMP=$4
. "$(dirname "$0")/lib.sh"

j=$("$BIN" --from kineto --json "$DATA/causes.json")
expect_eq "causes.json exit" $? 1
expect_keys causes.json "$j" records=29 gpu_records=13 joined_observed=2 joined_inferred=2 \
	same_thread_time_containment=2 lost=6 ambiguous=3 before_trace_start=1 no_api_record=1 \
	no_correlation=1 graph_replay=2 no_enclosing_op=1 launches=9
for c in external_id_other_thread external_id_outside_launch external_id_is_correlation; do
	expect_eq "causes.json ambiguous $c" "$(count_cause "$j" ambiguous $c)" 1
done
t=$("$BIN" --from kineto "$DATA/causes.json")
expect_eq "causes.json text names graph_replay" \
	"$(printf '%s\n' "$t" | grep -c 'lost graph_replay correlation=17 pid=100 tid=1')" 2

j=$("$BIN" --from kineto --json "$DATA/noops.json")
expect_keys "noops.json (bare event array)" "$j" exit_code=1 gpu_records=1 lost=1 no_op_layer=1

j=$("$BIN" --from kineto --json "$DATA/collide.json")
expect_keys collide.json "$j" exit_code=1 gpu_records=1 ambiguous=1 joined_inferred=0
expect_eq "collide.json correlation_collision" "$(count_cause "$j" ambiguous correlation_collision)" 1

if [ -n "$MKSQLITE" ]; then
	"$MKSQLITE" "$DATA/nsys_new.sql" "$TMP/nsys_new.sqlite" || fails=$((fails + 1))
	j=$("$BIN" --from nsys --json "$TMP/nsys_new.sqlite")
	expect_keys nsys_new "$j" exit_code=1 gpu_records=7 joined_inferred=2 lost=5 \
		no_op_layer=1 no_enclosing_op=1 graph_replay=1 before_trace_start=1 no_api_record=1 \
		notes=1 ambiguous=0 launches=6
	# correlation 5 is used by pid 10 and pid 20: reported, joined within each process only
	expect_eq "nsys_new collision note" "$(count_cause "$j" note correlation_collision)" 1
	expect_eq "nsys_new pid 20 kernel not joined to pid 10" \
		"$(printf '%s' "$j" | grep -c '"cause":"no_op_layer","file":"[^"]*","offset":2,"record":[0-9]*,"ids":{"correlation":5,"pid":20')" 1
	"$MKSQLITE" "$DATA/nsys_old.sql" "$TMP/nsys_old.sqlite" || fails=$((fails + 1))
	j=$("$BIN" --from nsys --json "$TMP/nsys_old.sqlite")
	expect_keys "nsys_old (name column, no memcpy/memset)" "$j" gpu_records=2 \
		joined_inferred=1 lost=1 graph_replay=1
else
	echo "SKIP: nsys hand-made inputs (this build has no SQLite)"
fi
finish
