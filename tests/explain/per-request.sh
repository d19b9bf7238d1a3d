#!/bin/sh
# per-request.sh EXPLAIN FIXTURES WORKDIR IMPORTDATA - lineage-explain --per-request (docs/serving.md)
# on the generated fixtures: the split by tokens and equally, to the ns (largest remainder);
# the unattributed line and conservation; shares in doubt not used; every exit status and
# usage error; the text report and the Perfetto export.
set -u
x=$1 fx=$2 w=$3 imp=$4
fails=0
rm -rf "$w" && mkdir -p "$w" || exit 1
py=/usr/bin/python3
[ -x "$py" ] || py=python3

check() { # check WHAT GOT WANT
	if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: got '$2', want '$3'"; fails=$((fails + 1)); fi
}
status() { # status WANT ARGS...
	want=$1
	shift
	"$x" "$@" >"$w/out" 2>"$w/err"
	check "exit $want: $*" "$?" "$want"
}
has() { # has FILE TEXT
	if grep -q -- "$2" "$1"; then echo "ok: $1 says '$2'"; else echo "FAIL: $1 lacks '$2':"; cat "$1"; fails=$((fails + 1)); fi
}
expect() { # expect JSONFILE PYTHON-ASSERTIONS (d: the per_request object; r: requests by id)
	$py - "$1" "$2" <<'PY' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1]))["per_request"]
r = {q["request"]: q for q in d["requests"]}
try:
    exec(sys.argv[2])
    print("ok: " + sys.argv[2].replace("\n", "; "))
except AssertionError as e:
    print("FAIL: " + sys.argv[2].replace("\n", "; ") + ": " + repr(e) + "\n" + json.dumps(d)[:1500])
    sys.exit(1)
PY
}

# By tokens: each 20 ns kernel 8:1:3 -> floor 13, 1, 5 and the 1 ns left to the largest
# remainder (request 2: 20 * 1 % 12 = 8) -> 13, 2, 5; epoch 5 takes epoch 4's shares.
status 0 --per-request --json "$fx/good_serving_shares.lt"
cp "$w/out" "$w/tokens.json"
expect "$w/tokens.json" '
assert d["split"] == "tokens" and d["total_gpu_ns"] == 40 and d["unattributed_ns"] == 0, d
assert [r[i]["gpu_ns"] for i in (1, 2, 3)] == [26, 4, 10], r
assert (r[1]["prefill_ns"], r[2]["decode_ns"], r[3]["prefill_ns"]) == (26, 4, 10), r
assert r[1]["other_ns"] == r[2]["prefill_ns"] == 0, r
assert d["split_records"]["tokens"] == 2 and d["conservation_residual_ns"] == 0, d
assert [r[i]["user_id"] for i in (1, 2, 3)] == [11, 12, 13], r
assert r[1]["ttft"]["first_token_epoch"] == 4 and r[2]["ttft"] is None, r
assert r[1]["ttft"]["dominant"] is None, "no clock record: the device side is unknown"'
# Equally: 20 / 3 -> 6 each, remainders tied, the 2 ns left to requests 1 and 2.
status 0 --per-request --split equal --json "$fx/good_serving_shares.lt"
expect "$w/out" '
assert d["split"] == "equal" and [r[i]["gpu_ns"] for i in (1, 2, 3)] == [14, 14, 12], r
assert d["split_records"] == {"tokens": 0, "equal": 2, "shares_incomplete": 0, "zero_tokens": 0}, d'
status 0 --per-request --split tokens --json "$fx/good_serving_shares.lt"
cmp -s "$w/out" "$w/tokens.json" && echo "ok: --split tokens is the default" || { echo "FAIL: --split tokens differs"; fails=$((fails + 1)); }

# The lost kernel is the unattributed line; requests + unattributed = total.
status 0 --per-request --json "$fx/lost_serving_unattributed.lt"
expect "$w/out" '
assert (d["total_gpu_ns"], d["attributed_ns"], d["unattributed_ns"]) == (60, 40, 20), d
assert d["unattributed_records"] == 1 and d["records"] == 3, d
assert sum(q["gpu_ns"] for q in d["requests"]) + d["unattributed_ns"] == d["total_gpu_ns"], d'

# Shares that contradict their epoch are not used: epoch 4 named 3 requests, its record 2.
status 0 --per-request --json "$fx/bad_epoch_share.lt"
expect "$w/out" '
assert d["split_records"]["tokens"] == 0 and d["split_records"]["equal"] == 1, d
assert [r[i]["gpu_ns"] for i in (1, 2, 3)] == [7, 7, 6], r'

# A replay written both ways: its time once, by its nodes.
status 0 --per-request --json "$fx/bad_graph_trace_and_nodes.lt"
expect "$w/out" '
assert d["graph_twice"] == 1 and d["total_gpu_ns"] == 40 and d["records"] == 2, d'
status 0 --per-request --json "$fx/good_graph_replay.lt"
expect "$w/out" '
assert d["graph_twice"] == 0 and d["records"] == 4, d'

# The text report.
status 0 --per-request "$fx/lost_serving_unattributed.lt"
has "$w/out" "conservation: requests + unattributed - total = 0 ns"
has "$w/out" "unattrib."
has "$w/out" "gpu_us"

# The Perfetto export: a track per request.
status 0 --per-request --export-perfetto "$w/pr.json" "$fx/good_serving_shares.lt"
$py - "$w/pr.json" <<'PY' || fails=$((fails + 1))
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = [e["args"]["name"] for e in ev if e.get("name") == "thread_name"]
assert names == ["request 1 (process 0)", "request 2 (process 0)", "request 3 (process 0)"], names
print("ok: the Perfetto export has a track per request")
PY

# Nothing joined to a request: exit 1, and why.
status 1 --per-request "$fx/lost_no_external_correlation.lt"
has "$w/err" "no GPU record is joined to a request"
status 2 --per-request "$w/missing.lt"
# What the input says is missing makes the GPU time incomplete: exit 1, and said so.
status 1 --per-request "$fx/lost_no_gpu_record.lt"
has "$w/err" "the GPU time is incomplete: 0 records were dropped, 1 launches have no GPU record"
has "$w/out" "incomplete: the input says"
status 1 --per-request --json "$fx/lost_trace_end_dropped.lt"
expect "$w/out" '
assert d["missing"]["dropped"] == 7, d'
# An imported trace joins GPU records to ops, not requests: all unattributed, exit 1.
status 1 --per-request --json "$imp/causes.json"
expect "$w/out" '
assert d["requests"] == [] and d["attributed_ns"] == 0 and d["unattributed_ns"] == d["total_gpu_ns"] > 0, d'
has "$w/err" "names ops, not requests"

# Usage.
status 64 --split equal "$fx/good_serving_shares.lt"
has "$w/err" "--split goes with --per-request"
status 64 --per-request --split even "$fx/good_serving_shares.lt"
has "$w/err" "--split takes tokens or equal"
status 64 --per-request --request 1 "$fx/good_serving_shares.lt"
status 64 --per-request --score "$w/tokens.json" "$fx/good_serving_shares.lt"
status 64 --per-request --export-perfetto "$fx/good_serving_shares.lt" "$fx/good_serving_shares.lt"
status 0 --help
has "$w/out" "--per-request"

[ "$fails" -eq 0 ] && echo "per-request: all passed" || echo "per-request: $fails failed"
[ "$fails" -eq 0 ]
