#!/bin/sh
# SPDX-License-Identifier: MIT
# The bracket check decides under CUPTI's own clock (docs/validator.md, "The bracket
# check"; issue: "Under CUPTI's own clock the bracket check decides nothing"): every
# synthetic scenario, run through the live binding under the test CUPTI layer with device
# times left on CUPTI's clock (--cupti layer --cupti-own-clock), so the validator relates
# them to host time only through the clock pairs the binding writes, must have at least
# 95 % of its tagged calls checked against their brackets. The figures are printed.
# The check is shown to fire: with the API record starting 1 ns into its bracket and the
# call returning at once (--api-edges-ns 0,0, tighter than any real call: an H200's were at
# least 372 and 59 ns) no pairing can decide, and the same check must report it.
# Usage: check-bracket-cupti-clock.sh SYNTH VALIDATE WORKDIR
set -u
SYNTH=$1 V=$2 W=$3/bracket-cupti
rm -rf "$W"
mkdir -p "$W"
fails=0

# ratio SCENARIO [SYNTH OPTION...]: prints "checked unchecked ratio reasons"
ratio() {
	sc=$1
	shift
	"$SYNTH" --scenario "$sc" --strategy epoch --seed 1 --requests 48 --cupti layer \
		--cupti-own-clock "$@" -o "$W/t.lt" --truth "$W/t.truth" >/dev/null 2>"$W/err" || {
		echo "lineage-synth failed: $(cat "$W/err")"
		return 1
	}
	set -- "$W/t.lt"
	[ -f "$W/t.lt.2" ] && set -- "$W/t.lt" "$W/t.lt.2"
	"$V" --json --max-findings 0 "$@" 2>"$W/stderr" | jq -r '
		(.bracket_checked) as $c | (.bracket_unchecked) as $u
		| "\($c) \($u) \(if $c + $u > 0 then $c / ($c + $u) else 0 end) \(.bracket_unchecked_by | tojson)"'
	rm -f "$W"/t.*
}

for sc in $("$SYNTH" --list-scenarios | awk '$1 !~ /^attr-/ {print $1}'); do
	r=$(ratio "$sc") || { fails=$((fails + 1)); continue; }
	if [ -s "$W/stderr" ]; then
		echo "FAIL: $sc: lineage-validate complained: $(cat "$W/stderr")"
		fails=$((fails + 1))
	fi
	set -- $r
	if [ "$1" -gt 0 ] && awk -v x="$3" 'BEGIN { exit !(x >= 0.95) }'; then
		echo "ok: $sc: $1 of $(($1 + $2)) tagged calls checked ($3) $4"
	else
		echo "FAIL: $sc: $1 of $(($1 + $2)) tagged calls checked ($3, want >= 0.95) $4"
		fails=$((fails + 1))
	fi
done
r=$(ratio direct --api-edges-ns 0,0) || fails=$((fails + 1))
set -- $r
if awk -v x="$3" 'BEGIN { exit !(x < 0.95) }'; then
	echo "ok: the check fires: direct with the call at its bracket's edges: $1 of $(($1 + $2)) checked $4"
	if grep -q "the bracket check could not check $2 of" "$W/stderr"; then
		echo "ok: lineage-validate said so on stderr: $(cat "$W/stderr")"
	else
		echo "FAIL: most calls unchecked and nothing on stderr"
		fails=$((fails + 1))
	fi
else
	echo "FAIL: direct with --api-edges-ns 0,0 was still decided ($1 of $(($1 + $2))): the check cannot fire"
	fails=$((fails + 1))
fi
[ "$fails" -eq 0 ]
