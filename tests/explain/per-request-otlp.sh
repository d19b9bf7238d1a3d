#!/bin/sh
# per-request-otlp.sh MODE EXPLAIN VALIDATE FIXTURES FLEETGEN OTLPSRC WORKDIR XGEN -
# lineage-explain --per-request --export-otlp (docs/fleet.md, "Per request").
# MODE values: the exact attributes, times, trace and parent ids on the generated fixtures
#   (against the validator's export of the same trace and the --json report), the span ids
#   unique over both exports, a request with no request_begin (lin-explain-gen's
#   unbegun.lt), every fixture's parents, every error path; python3 only.
# MODE decode: the validator's export and explain's, concatenated, decoded by the
#   OpenTelemetry project's OTLP code (tests/otlp/decode.mjs '-'): every parent span id
#   resolves; on the fixtures and on the two-host run of tests/otlp (request_link and the
#   format-1.0 "w3c:" name), where the engine's remote request's span lands in host-a's
#   trace. Explain's export alone does not resolve (the check fires). Exit 77 (skipped)
#   without node, npm or the packages (tests/otlp/otel-packages.sh).
set -u
mode=$1 x=$2 v=$3 fx=$4 gen=$5 osrc=$6 w=$7 xgen=${8:-}
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
empty() { # empty FILE
	if [ ! -s "$1" ]; then echo "ok: $1 is empty"; else echo "FAIL: $1 is not empty:"; cat "$1"; fails=$((fails + 1)); fi
}
# expect EXPLAIN_OTLP VALIDATOR_OTLP REPORT_JSON PYTHON-ASSERTIONS, with
# S: explain's spans, V: the validator's (each a dict: trace, span, parent, name, t0, t1,
# a: attributes, ev: events, res: "host:pid"); rq: explain's request spans by request id;
# un: its unattributed spans by res; vreq(res, id): the validator's request span;
# r: the --json report's requests by id; d: its per_request object.
expect() {
	$py - "$@" <<'PY' || fails=$((fails + 1))
import json, sys

def val(v):
    for k in ("stringValue", "boolValue", "doubleValue"):
        if k in v:
            return v[k]
    if "intValue" in v:
        return int(v["intValue"])
    return v

def spans(path):
    out = []
    for line in open(path):
        for rs in json.loads(line)["resourceSpans"]:
            ra = {a["key"]: val(a["value"]) for a in rs["resource"]["attributes"]}
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    out.append({"trace": s["traceId"], "span": s["spanId"],
                                "parent": s.get("parentSpanId", ""), "name": s["name"],
                                "t0": int(s["startTimeUnixNano"]), "t1": int(s["endTimeUnixNano"]),
                                "a": {a["key"]: val(a["value"]) for a in s["attributes"]},
                                "ev": [dict(name=e["name"], t=int(e["timeUnixNano"]),
                                            **{a["key"]: val(a["value"]) for a in e["attributes"]})
                                       for e in s.get("events", [])],
                                "res": "%s:%s" % (ra["host.name"], ra["process.pid"])})
    return out

S, V = spans(sys.argv[1]), spans(sys.argv[2])
d = json.load(open(sys.argv[3]))["per_request"]
r = {q["request"]: q for q in d["requests"]}
rq = {s["a"]["lineage.request.id"]: s for s in S if s["a"].get("lineage.span") == "request_gpu"}
un = {s["res"]: s for s in S if s["a"].get("lineage.span") == "unattributed"}
def vreq(res, i):
    m = [s for s in V if s["res"] == res and s["a"].get("lineage.span") == "request"
         and s["a"].get("lineage.request.id") == i]
    assert len(m) == 1, (res, i, m)
    return m[0]
try:
    exec(sys.argv[4])
    print("ok: " + sys.argv[4].strip().replace("\n", "; ")[:300])
except AssertionError as e:
    print("FAIL: " + sys.argv[4].strip().replace("\n", "; ") + ": " + repr(e)[:1500])
    sys.exit(1)
PY
}

# Both exports and the report of one input: $w/NAME.{x,v}.json, $w/NAME.report.json.
exports() { # exports NAME EXPLAIN_ARGS... -- TRACES...
	n=$1
	shift
	xa=
	while [ "$1" != "--" ]; do xa="$xa $1"; shift; done
	shift
	# shellcheck disable=SC2086
	status "${want_rc:-0}" --per-request $xa --export-otlp "$w/$n.x.json" "$@"
	[ "${want_rc:-0}" -ne 0 ] || empty "$w/err"
	# shellcheck disable=SC2086
	"$x" --per-request $xa --json "$@" >"$w/$n.report.json" 2>/dev/null
	"$v" --export-otlp "$w/$n.v.json" "$@" >/dev/null 2>&1
	[ -s "$w/$n.v.json" ] || { echo "FAIL: lineage-validate --export-otlp $*"; fails=$((fails + 1)); }
}

if [ "$mode" = values ]; then
	exports shares -- "$fx/good_serving_shares.lt"
	# Request 1: 8 of 12 tokens of each 20 ns kernel (13 + 13), prefill; its first-token
	# step is known but not its end (no clock record): the span ends at its last record.
	expect "$w/shares.x.json" "$w/shares.v.json" "$w/shares.report.json" '
assert sorted(rq) == [1, 2, 3] and len(un) == 1 and len(S) == 4, S
a = rq[1]["a"]
assert (a["lineage.gpu.time_ns"], a["lineage.gpu.prefill_ns"], a["lineage.gpu.decode_ns"], a["lineage.gpu.other_ns"]) == (26, 26, 0, 0), a
assert (a["lineage.gpu.records"], a["lineage.split.by_tokens"], a["lineage.split.by_equal"]) == (2, 2, 0), a
assert (a["lineage.request.user_id"], a["lineage.split"], a["lineage.arrival.source"]) == (11, "tokens", "request_begin"), a
assert (a["lineage.ttft.first_token_epoch"], a["lineage.ttft.clock_error_ns"]) == (4, 0), a
assert "lineage.ttft_ns" not in a and "lineage.ttft.dominant.stretch" not in a, "TTFT unknown: left out"
assert (a["lineage.time.start_from"], a["lineage.time.end_from"]) == ("arrival", "last_gpu_record"), a
assert [(rq[i]["a"]["lineage.gpu.time_ns"], rq[i]["a"]["lineage.gpu.decode_ns"]) for i in (2, 3)] == [(4, 4), (10, 0)], rq
assert "lineage.ttft.first_token_epoch" not in rq[2]["a"] and rq[2]["a"]["lineage.time.end_from"] == "last_gpu_record", rq[2]
for i in (1, 2, 3):
    q = r[i]
    b = rq[i]["a"]
    assert (b["lineage.gpu.time_ns"], b["lineage.gpu.prefill_ns"], b["lineage.gpu.decode_ns"], b["lineage.gpu.records"]) == (q["gpu_ns"], q["prefill_ns"], q["decode_ns"], q["records"]), (b, q)
    assert rq[i]["t0"] == 1500 and rq[i]["t0"] <= rq[i]["t1"], rq[i]'
	# Trace and parent: the validator's request span; the stretches as events.
	expect "$w/shares.x.json" "$w/shares.v.json" "$w/shares.report.json" '
for i in (1, 2, 3):
    p = vreq(rq[i]["res"], i)
    assert (rq[i]["trace"], rq[i]["parent"]) == (p["trace"], p["span"]), (rq[i], p)
    assert rq[i]["t0"] == p["t0"], ("arrival is the begin, on the clock of the export", rq[i], p)
    assert rq[i]["trace"].endswith("%016x" % i), rq[i]
ev = rq[1]["ev"]
assert [e["name"] for e in ev] == ["lineage.ttft." + s["name"] for s in r[1]["ttft"]["stretches"]], ev
assert (ev[0]["t"], ev[0]["lineage.stretch.end_unix_nano"], ev[0]["lineage.stretch.ns"], ev[0]["lineage.stretch.cause"], ev[0]["lineage.evidence"]) == (1500, 1600, 100, "queued", "observed"), ev[0]
assert ev[1]["t"] == 1600 and "lineage.stretch.ns" not in ev[1] and ev[1]["lineage.evidence"] == "unknown", ev[1]
assert ev[2].get("lineage.stretch.start_unknown") is True and ev[2]["t"] == rq[1]["t0"], ev[2]
assert rq[2]["ev"] == [] and rq[3]["ev"] == [], "no first-token step: no stretches"
ids = [s["span"] for s in S + V]
assert len(ids) == len(set(ids)), "a span id twice over both exports"
u = un[rq[1]["res"]]
assert (u["a"]["lineage.gpu.time_ns"], u["a"]["lineage.gpu.records"], u["a"]["lineage.run.gpu_ns"], u["a"]["lineage.run.unattributed_ns"]) == (0, 0, 40, 0), u
assert u["trace"].endswith("0" * 16) and u["t0"] == 1500, u'
	# The lost kernel: the process's unattributed line, from its start to its end.
	exports lost -- "$fx/lost_serving_unattributed.lt"
	expect "$w/lost.x.json" "$w/lost.v.json" "$w/lost.report.json" '
assert len(un) == 1 and sorted(rq) == sorted(r), (un, rq)
u = list(un.values())[0]["a"]
assert (u["lineage.gpu.time_ns"], u["lineage.gpu.records"], u["lineage.gpu.epoch_only_ns"]) == (20, 1, 0), u
assert (u["lineage.run.gpu_ns"], u["lineage.run.attributed_ns"], u["lineage.run.unattributed_ns"], u["lineage.run.gpu_records"]) == (60, 40, 20, 3), u
assert sum(s["a"]["lineage.gpu.time_ns"] for s in rq.values()) + u["lineage.gpu.time_ns"] == u["lineage.run.gpu_ns"], "conservation"
p = [s for s in V if s["a"].get("lineage.span") == "process"][0]
assert (list(un.values())[0]["trace"], list(un.values())[0]["parent"]) == (p["trace"], p["span"]), p
g = [s for s in V if s["a"].get("lineage.join") == "lost"][0]
assert (list(un.values())[0]["t0"], list(un.values())[0]["t1"]) == (g["t0"], g["t1"]), ("the lost kernel", g)'
	# --split equal: the attribute and the shares follow it.
	exports equal --split equal -- "$fx/good_serving_shares.lt"
	expect "$w/equal.x.json" "$w/equal.v.json" "$w/equal.report.json" '
assert [rq[i]["a"]["lineage.gpu.time_ns"] for i in (1, 2, 3)] == [14, 14, 12], rq
assert all(s["a"]["lineage.split"] == "equal" for s in S), S
assert rq[1]["a"]["lineage.split.by_equal"] == 2 and rq[1]["a"]["lineage.split.by_tokens"] == 0, rq[1]'

	# A request no request_begin declares has no span in the validator's export: its span
	# hangs under the process span, from its kernel's start to its end.
	mkdir -p "$w/xgen" && "$xgen" "$w/xgen" || { echo "FAIL: lin-explain-gen"; fails=$((fails + 1)); }
	exports unbegun -- "$w/xgen/unbegun.lt"
	expect "$w/unbegun.x.json" "$w/unbegun.v.json" "$w/unbegun.report.json" '
s = rq[7]
assert s["a"]["lineage.request.begun"] is False and r[7]["gpu_ns"] == s["a"]["lineage.gpu.time_ns"] == 1000, s
assert not [x for x in V if x["a"].get("lineage.span") == "request"], "no request span in the export"
p = [x for x in V if x["a"].get("lineage.span") == "process"][0]
k = [x for x in V if x["a"].get("lineage.span") == "kernel"][0]
assert (s["trace"], s["parent"]) == (p["trace"], p["span"]), (s, p)
assert (s["t0"], s["t1"]) == (k["t0"], k["t1"]), (s, k)
assert (s["a"]["lineage.time.start_from"], s["a"]["lineage.time.end_from"]) == ("first_gpu_record", "last_gpu_record"), s'

	# A child request: in its root's trace, under its own span of the export.
	exports child -- "$w/xgen/child.lt"
	expect "$w/child.x.json" "$w/child.v.json" "$w/child.report.json" '
assert sorted(rq) == [8], rq
p, root = vreq(rq[8]["res"], 8), vreq(rq[8]["res"], 7)
assert rq[8]["trace"] == p["trace"] == root["trace"] and root["trace"].endswith("%016x" % 7), (rq, p, root)
assert rq[8]["parent"] == p["span"] and p["parent"] == root["span"], (rq[8], p, root)'

	# Every generated fixture explain exports: each span's parent is a span of the
	# validator's export of the same trace, in the same trace.
	n=0
	for f in "$fx"/*.lt; do
		b=$(basename "$f" .lt)
		"$x" --per-request --export-otlp "$w/all-$b.x.json" "$f" >/dev/null 2>&1
		[ -s "$w/all-$b.x.json" ] || continue
		"$v" --export-otlp "$w/all-$b.v.json" "$f" >/dev/null 2>&1
		echo "$b"
		n=$((n + 1))
	done >"$w/all.list"
	$py - "$w" <<'PY' || fails=$((fails + 1))
import json, sys
w = sys.argv[1]
def ids(path):
    for line in open(path):
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    yield s["traceId"], s["spanId"], s.get("parentSpanId", "")
names = open(w + "/all.list").read().split()
bad = []
for b in names:
    v = {(t, s) for t, s, _ in ids("%s/all-%s.v.json" % (w, b))}
    bad += [(b, t, p) for t, _, p in ids("%s/all-%s.x.json" % (w, b)) if (t, p) not in v]
assert len(names) >= 90 and not bad, (len(names), bad[:5])
print("ok: %d fixtures: every parent of explain's spans is a span of the validator's export" % len(names))
PY

	# A trace read in part (exit 2) still gets the export of what was read.
	head -c 300 "$fx/good_serving_shares.lt" >"$w/cut.lt"
	status 2 --per-request --export-otlp "$w/cut.otlp.json" "$w/cut.lt"
	[ -s "$w/cut.otlp.json" ] && echo "ok: a truncated trace: the export of what was read" ||
		{ echo "FAIL: a truncated trace: no export"; fails=$((fails + 1)); }

	# Errors.
	status 64 --export-otlp "$w/o.json" "$fx/good_serving_shares.lt"
	has "$w/err" "--export-otlp goes with --per-request"
	status 64 --per-request --export-otlp "$fx/good_serving_shares.lt" "$fx/good_serving_shares.lt"
	has "$w/err" "--export-otlp $fx/good_serving_shares.lt is the input"
	status 64 --per-request --export-otlp "$w/same.json" --export-perfetto "$w/same.json" "$fx/good_serving_shares.lt"
	has "$w/err" "--export-perfetto and --export-otlp are one file"
	[ ! -e "$w/same.json" ] && echo "ok: refused before anything is written" ||
		{ echo "FAIL: $w/same.json written"; fails=$((fails + 1)); }
	status 2 --per-request --export-otlp "$w/no/such/dir/o.json" "$fx/good_serving_shares.lt"
	has "$w/err" "--export-otlp: $w/no/such/dir/o.json: No such file or directory"
	status 0 --help
	has "$w/out" "--export-otlp OUT.json"
	[ "$fails" -eq 0 ] && echo "per-request-otlp values: all passed" || echo "per-request-otlp values: $fails failed"
	[ "$fails" -eq 0 ]
	exit
fi

. "$osrc/otel-packages.sh"
otel_packages "$osrc" || exit 77
decode() { # decode WHAT FILE
	if node "$osrc/decode.mjs" "$2" - >"$w/decode.txt" 2>&1; then
		echo "ok: $1: $(cat "$w/decode.txt")"
	else
		echo "FAIL: $1:"
		cat "$w/decode.txt"
		fails=$((fails + 1))
	fi
}
for f in good_serving_shares lost_serving_unattributed; do
	exports "$f" -- "$fx/$f.lt"
	cat "$w/$f.v.json" "$w/$f.x.json" >"$w/$f.all.json"
	decode "$f: the validator's export and explain's" "$w/$f.all.json"
done
# The check fires: explain's spans alone name parents that are not in the document.
if node "$osrc/decode.mjs" "$w/good_serving_shares.x.json" - >"$w/decode.txt" 2>&1; then
	echo "FAIL: explain's export alone resolved its parents"
	fails=$((fails + 1))
else
	has "$w/decode.txt" "every parentSpanId names a span of the same trace"
fi
# Two hosts: host-b's request began from host-a's traceparent (request_link, then the
# format-1.0 name): its span is in host-a's trace, under host-b's request span.
for m in link legacy; do
	mkdir -p "$w/fleet-$m"
	lm=
	[ "$m" = legacy ] && lm=legacy
	"$gen" "$w/fleet-$m" $lm >/dev/null || { echo "FAIL: generator $m"; fails=$((fails + 1)); continue; }
	# The run drops records and loses a kernel: exit 1 (the GPU time is incomplete),
	# the export written all the same.
	want_rc=1
	exports "fleet-$m" -- "$w/fleet-$m/host-a.lt" "$w/fleet-$m/host-b.lt"
	want_rc=0
	has "$w/err" "the GPU time is incomplete"
	cat "$w/fleet-$m.v.json" "$w/fleet-$m.x.json" >"$w/fleet-$m.all.json"
	decode "two hosts ($m)" "$w/fleet-$m.all.json"
	want=$($py -c 'import json, sys; print(json.load(open(sys.argv[1]))["remote_trace"])' "$w/fleet-$m/expected.json")
	expect "$w/fleet-$m.x.json" "$w/fleet-$m.v.json" "$w/fleet-$m.report.json" "
b = [s for s in S if s['res'].startswith('host-b') and s['a'].get('lineage.span') == 'request_gpu']
remote = [s for s in b if s['trace'] == '$want']
assert len(remote) == 1 and len(b) >= 2, b
p = vreq(remote[0]['res'], remote[0]['a']['lineage.request.id'])
assert p['trace'] == '$want' and remote[0]['parent'] == p['span'], (remote, p)
assert all(s['trace'] != '$want' for s in b if s is not remote[0]), 'the local request stays in its own trace'"
done
[ "$fails" -eq 0 ] && echo "per-request-otlp decode: all passed" || echo "per-request-otlp decode: $fails failed"
[ "$fails" -eq 0 ]
