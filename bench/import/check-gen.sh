#!/bin/sh
# check-gen.sh GEN VALIDATE VARIANTS_DIR TMPDIR - the generator's copies join as the source
# does: N copies of an extract give N times its GPU records, joins and rules, no id
# collision (no ambiguous record), the same exit status. Figures only, no timing.
GEN=$1 BIN=$2 DIR=$3 TMP=$4
. "$(dirname "$0")/../../tests/import/lib.sh"
mkdir -p "$TMP"
# bert extract: 6 GPU records, all observed; alexnet extract: 10 GPU records, 6 joined by
# time, 4 under external_id_is_correlation_fallback (External id = correlation survives)
"$GEN" "$DIR/kineto2025_h100_bert_cuda_driver.json" "$TMP/bert3.json" --copies 3 >/dev/null
expect_eq "generator exit" $? 0
j=$("$BIN" --json "$TMP/bert3.json")
expect_eq "3 x bert exit" $? 0
expect_keys "3 x bert" "$j" gpu_records=18 joined_observed=18 ambiguous=0 lost=0 launches=18
"$GEN" "$DIR/kineto2023_alexnet_external_id_is_correlation.json" "$TMP/alex.json" --bytes 200K \
	> "$TMP/gen.txt"
copies=$(grep -o 'copies=[0-9]*' "$TMP/gen.txt" | cut -d= -f2)
j=$("$BIN" --json "$TMP/alex.json")
expect_eq "alexnet copies exit" $? 0
expect_keys "$copies x alexnet" "$j" gpu_records=$((copies * 10)) \
	same_thread_time_containment=$((copies * 6)) \
	external_id_is_correlation_fallback=$((copies * 4)) ambiguous=0 lost=0
bytes=$(grep -o 'bytes=[0-9]*' "$TMP/gen.txt" | cut -d= -f2)
expect_eq "--bytes 200K wrote at least 200 KiB" "$([ "$bytes" -ge 204800 ] && echo yes)" yes
finish
