#!/bin/sh
# SPDX-License-Identifier: MIT
# lineage-explain says what lineage-validate says, record by record (docs/ledger.md, "Joins"):
# both tools write their verdict on every GPU record (--verdicts: file, key, class, rule or
# cause, requests or op) and the two lists must be the same line for line, on every input
# given: lineage traces (the fixtures, the GPU runs recorded in tests/gpu/recorded, every
# synthetic scenario under three strategies) and imported ones (the real traces in
# REALDIR, the importers' test data). A record explained as observed where the validator
# inferred it, a ledger built for a record the validator lost, a ledger grouped by another
# op or request than the validator's join: each is one differing line, and the test fails.
# It also fails when nothing was compared.
#
# Usage: agree.sh VALIDATE EXPLAIN SYNTH|- REALDIR RECORDED_DIR FIXTURE_DIR IMPORT_DATA TMPDIR
#   SYNTH - : no lineage-synth in this build (its scenarios are left out, and said so)
#   REALDIR absent: left out and said so; under LIN_CI=1 that is a failure.
set -u
V=$1 E=$2 SYNTH=$3 REAL=$4 REC=$5 FIX=$6 IMP=$7 TMP=$8
rm -rf "$TMP"
mkdir -p "$TMP"
fails=0 files=0 records=0

# compare NAME [OPTION...] FILE...: both tools' verdicts on the same input.
compare() {
	name=$1
	shift
	"$V" --verdicts "$TMP/v.tsv" "$@" >/dev/null 2>&1
	vrc=$?
	"$E" --verdicts "$TMP/e.tsv" "$@" >/dev/null 2>&1
	erc=$?
	if [ ! -f "$TMP/v.tsv" ] || [ ! -f "$TMP/e.tsv" ]; then
		echo "FAIL: $name: no verdict list (validate exit $vrc, explain exit $erc)"
		fails=$((fails + 1))
		return
	fi
	sort "$TMP/v.tsv" >"$TMP/v.sorted"
	sort "$TMP/e.tsv" >"$TMP/e.sorted"
	n=$(wc -l <"$TMP/v.sorted")
	if ! cmp -s "$TMP/v.sorted" "$TMP/e.sorted"; then
		d=$(diff "$TMP/v.sorted" "$TMP/e.sorted" | grep -c '^[<>]')
		echo "FAIL: $name: $d lines differ (< lineage-validate, > lineage-explain):"
		diff "$TMP/v.sorted" "$TMP/e.sorted" | grep '^[<>]' | head -5
		fails=$((fails + 1))
	else
		echo "ok: $name: $n GPU records, the same verdicts"
	fi
	files=$((files + 1))
	records=$((records + n))
	rm -f "$TMP/v.tsv" "$TMP/e.tsv"
}

for f in "$FIX"/*.lt; do
	case $(basename "$f") in
	err_*) continue ;; # malformed on purpose: no verdicts past the damage
	esac
	compare "fixture $(basename "$f")" "$f"
done
for f in "$REC"/*.lintrace "$REC"/*.json; do
	[ -f "$f" ] && compare "recorded $(basename "$f")" "$f"
done
for f in "$IMP"/*.json "$IMP"/*.json.gz; do
	[ -f "$f" ] || continue
	compare "import data $(basename "$f")" --from kineto "$f"
done
if [ -d "$REAL" ]; then
	for f in "$REAL"/*.json "$REAL"/*.json.gz "$REAL"/*.sqlite; do
		[ -f "$f" ] && compare "real $(basename "$f")" "$f"
	done
elif [ "${LIN_CI:-0}" = 1 ]; then
	echo "FAIL: the real traces ($REAL) are absent under LIN_CI=1"
	fails=$((fails + 1))
else
	echo "left out: the real traces ($REAL absent)"
fi
if [ "$SYNTH" != - ]; then
	for sc in $("$SYNTH" --list-scenarios | awk '$1 !~ /^attr-/ {print $1}'); do
		for st in epoch cuda-only kineto; do
			b="$TMP/$sc.$st"
			if ! "$SYNTH" --scenario "$sc" --strategy "$st" --seed 3 --requests 24 \
				-o "$b.lt" --truth "$b.truth" >/dev/null 2>&1; then
				echo "FAIL: lineage-synth $sc $st"
				fails=$((fails + 1))
				continue
			fi
			set -- "$b.lt"
			[ -f "$b.lt.2" ] && set -- "$b.lt" "$b.lt.2"
			compare "synthetic $sc $st" "$@"
			rm -f "$b".*
		done
	done
else
	echo "left out: the synthetic scenarios (no lineage-synth in this build)"
fi
echo "$files inputs, $records GPU records compared, $fails disagreeing"
[ "$records" -gt 0 ] || {
	echo "FAIL: nothing was compared"
	exit 1
}
[ "$fails" -eq 0 ]
