#!/bin/sh
# nesting.sh EXPORT.json - check that the X slices of a Perfetto export (one event per
# line, as lin_imp_perfetto writes them) nest on every (pid, tid) track: each slice that
# starts inside another ends inside it. Times are compared as (microseconds, ns) integer
# pairs, never as floating point. Prints each violation; exit 1 when there is one.
sed -n 's/^{"ph":"X".*"pid":\([0-9]*\),"tid":\([0-9]*\),"ts":\([0-9]*\)\.\([0-9]*\),"dur":\([0-9]*\)\.\([0-9]*\),"args".*/\1 \2 \3 \4 \5 \6/p' "$1" |
awk '{ e = $4 + $6; ea = $3 + $5 + int(e / 1000); printf "%s %s %s %s %.0f %03d\n", $1, $2, $3, $4, ea, e % 1000 }' |
sort -k1,1n -k2,2n -k3,3n -k4,4n -k5,5nr -k6,6nr |
awk '
function le(a1, b1, a2, b2) { return a1 + 0 < a2 + 0 || (a1 + 0 == a2 + 0 && b1 + 0 <= b2 + 0) }
{
	if ($1 != pid || $2 != tid) { n = 0; pid = $1; tid = $2 }
	while (n && le(ea[n], eb[n], $3, $4)) n--      # ended at or before this start
	if (n && !le($5, $6, ea[n], eb[n])) {
		printf "overlap on pid %s tid %s: slice %s.%s-%s.%s ends after its parent (%s.%s)\n",
		       $1, $2, $3, $4, $5, $6, ea[n], eb[n]
		bad = 1
	}
	n++; ea[n] = $5; eb[n] = $6
}
END { exit bad }'
