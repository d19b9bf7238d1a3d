#!/bin/sh
# cli.sh EXPLAIN GEN SYNTH SRCDIR WORKDIR - lineage-explain's command line: every exit status
# where it fires and where it does not, the JSON report against its expected file, --request,
# --top, the Perfetto export, a synthetic run, an imported trace, and bad input.
# SYNTH may be missing (a build without CUPTI headers): that part is skipped and says so.
set -u
x=$1 gen=$2 synth=$3 src=$4 w=$5
fails=0
rm -rf "$w" && mkdir -p "$w" || exit 1
"$gen" "$w" || { echo "FAIL: lin-explain-gen"; exit 1; }
py=/usr/bin/python3
[ -x "$py" ] || py=python3

check() { # check WHAT GOT WANT
	if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: got '$2', want '$3'"; fails=$((fails + 1)); fi
}
status() { # status WANT ARGS... : run lineage-explain, compare its exit status
	want=$1
	shift
	"$x" "$@" >"$w/out" 2>"$w/err"
	check "exit $want: $*" "$?" "$want"
}
has() { # has FILE TEXT
	if grep -q -- "$2" "$1"; then echo "ok: $1 says '$2'"; else echo "FAIL: $1 lacks '$2':"; cat "$1"; fails=$((fails + 1)); fi
}

# Usage and help.
status 0 --help
has "$w/out" "EXIT STATUS"
has "$w/out" "dependency_ready"
status 0 --version
has "$w/out" "trace format 1.5"
status 64
has "$w/err" "no trace file given"
status 64 --top -1 "$w/ledger.lt"
status 64 --from perfetto "$w/ledger.lt"
status 64 --slow-factor 1 "$w/ledger.lt"
status 64 --request abc "$w/ledger.lt"
status 64 --bogus "$w/ledger.lt"

# Exit 0, and the JSON report as expected (docs/ledger.md shows the same file).
status 0 --json --top 0 "$w/ledger.lt"
# The tool's version is not part of the expectation.
sed 's/"version":"[^"]*"/"version":"X"/' "$w/out" >"$w/out.nover"
if cmp -s "$w/out.nover" "$src/expected/ledger.json"; then
	echo "ok: ledger.json as expected"
else
	echo "FAIL: --json differs from expected/ledger.json:"
	diff "$src/expected/ledger.json" "$w/out.nover" | head -20
	fails=$((fails + 1))
fi
$py - "$w/out" <<'PY' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
assert s["explained"] == 3 and s["unjoined"] == 0, s
causes = {r["request"]: r["critical"]["cause"] for r in d["requests"]}
assert causes == {7: "handoff_wait", 8: "dependency", 9: "dependency"}, causes
r9 = [r for r in d["requests"] if r["request"] == 9][0]["critical"]
assert r9["marks"]["dependency_ready"]["rule"] == "event_wait", r9
assert any(st["cause"] == "descheduled" for st in r9["statements"]), r9
r8 = [r for r in d["requests"] if r["request"] == 8][0]["critical"]
assert r8["marks"]["dependency_ready"]["rule"] == "stream_order", r8
print("ok: JSON report parses, causes per request as built")
PY
status 0 "$w/ledger.lt"
has "$w/out" "handoff_wait"
has "$w/out" "request 7"

# --request and --top.
status 0 --json --request 8 "$w/ledger.lt"
check "--request 8 lists one request" "$(grep -o '"request":[0-9]*,"file"' "$w/out" | tr -d '\n')" '"request":8,"file"'
has "$w/out" '"all":\['
status 1 --request 99 "$w/ledger.lt"
has "$w/err" "no explained launch of request 99"
status 0 --json --top 1 "$w/ledger.lt"
check "--top 1 lists one request" "$(grep -o '"request":[0-9]*,"file"' "$w/out" | wc -l | tr -d ' ')" 1

# Perfetto export: valid JSON, statements of a track never overlap.
status 0 --export-perfetto "$w/p.json" "$w/ledger.lt"
$py - "$w/p.json" <<'PY' || fails=$((fails + 1))
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
sl = [e for e in ev if e["ph"] == "X" and e["cat"] != "gpu"]
assert len(sl) >= 9, len(sl)
assert any(e["name"].startswith("unknown: ") for e in sl), "no unknown slice"
# Times are exact: microseconds with three decimals (ns), compared as integers of ns.
ns = lambda v: int(round(v * 1000))
tracks, nested = {}, []
for e in sl:
    iv = (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
    if e["name"] in ("kernel_slow", "descheduled"):
        nested.append((e["tid"], iv))
    else:
        tracks.setdefault(e["tid"], []).append(iv)
for t, v in tracks.items():
    v.sort()
    for a, b in zip(v, v[1:]):
        assert a[1] <= b[0], (t, a, b)
gpu = [(e["tid"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev if e["ph"] == "X" and e["cat"] == "gpu"]
for t, (s0, e0) in nested:
    assert any(tt == t and a <= s0 and e0 <= b for tt, a, b in gpu + [(t,) + x for x in tracks.get(t, [])]), (t, s0, e0)
assert any(n[0] for n in nested), "no nested descheduled slice"
print("ok: Perfetto export parses; statements do not overlap on a track; descheduled and kernel_slow nest")
PY
status 2 --export-perfetto "$w/no/such/dir/p.json" "$w/ledger.lt"
has "$w/err" "export-perfetto"

# A name cannot fake a report line: escaped in the text report, valid in JSON.
status 0 "$w/names.lt"
if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$w/out" || grep -q '^request 999' "$w/out"; then
	echo "FAIL: a raw control character or a faked line in the text report"; fails=$((fails + 1))
else
	echo "ok: names.lt: the kernel's name is escaped in the text report"
fi
has "$w/out" 'kernel "k\\n\\nrequest 999'
status 0 --json "$w/names.lt"
$py -c 'import json,sys; json.load(open(sys.argv[1])); print("ok: names.lt: --json parses")' "$w/out" || fails=$((fails + 1))

# A request begun after its declaration: its ready is out of order everywhere.
status 0 --json "$w/order.lt"
$py - "$w/out" <<'PY' || fails=$((fails + 1))
import json, sys
r = json.load(open(sys.argv[1]))["requests"][0]
assert "ready" not in r, r.get("ready")
assert r["critical"]["marks"]["request_ready"]["cause"] == "out_of_order"
print("ok: order.lt: no ready for a request whose begin is out of order")
PY

# The same file twice is read once; a report that cannot be written is exit 2.
status 0 --json "$w/ledger.lt" "$w/ledger.lt"
has "$w/err" "given twice, read once"
check "ledger.lt twice: 3 GPU records" "$(grep -o '"gpu_records":[0-9]*' "$w/out")" '"gpu_records":3'
if [ -w /dev/full ]; then
	"$x" --json "$w/ledger.lt" >/dev/full 2>"$w/err"
	check "exit 2 when stdout cannot be written" "$?" 2
	has "$w/err" "standard output failed"
fi

# Nothing to explain is never a clean pass.
status 1 "$w/nogpu.lt"
has "$w/err" "no GPU record"
status 1 "$w/unjoined.lt"
has "$w/err" "joined to a request"
status 1 "$w/noclock.lt"
has "$w/err" "known start"
status 1 --json "$w/epochonly.lt"
has "$w/out" '"epoch_only":1'
# --request naming a request whose only launch has no known start.
status 1 --request 7 "$w/noclock.lt"

# Bad input: named with its byte offset; what was read is still reported.
# A file that cannot be opened is one error before any report (no report of zeros), with
# the system's reason, for a lineage trace and an imported one alike; --verdicts is not
# touched (what it holds from before is not lost).
echo "kept" >"$w/verdicts.tsv"
status 2 --verdicts "$w/verdicts.tsv" "$w/ledger.lt" "$w/missing.lt"
has "$w/err" "missing.lt: cannot open: No such file or directory"
check "no report when a file cannot be opened" "$(wc -c <"$w/out")" 0
check "--verdicts left alone" "$(cat "$w/verdicts.tsv")" kept
status 2 --from kineto "$w/missing.json"
has "$w/err" "missing.json: cannot open: No such file or directory"
check "no report for a missing imported file" "$(wc -c <"$w/out")" 0
status 2 "$w"
has "$w/err" "not a regular file: a directory"
mkfifo "$w/fifo.lt" && status 2 "$w/fifo.lt" && has "$w/err" "a FIFO"
# An output that is an input (by any path) is refused before anything is read or written.
cp "$w/ledger.lt" "$w/in.lt" && ln -sf "$w/in.lt" "$w/alias.lt"
size=$(wc -c <"$w/in.lt")
status 64 --verdicts "$w/in.lt" "$w/in.lt"
has "$w/err" "is the input"
status 64 --export-perfetto "$w/alias.lt" "$w/in.lt"
status 64 --verdicts "$w/both.out" --export-perfetto "$w/both.out" "$w/in.lt"
check "the input is kept whole" "$(wc -c <"$w/in.lt")" "$size"
check "no report when an output is an input" "$(wc -c <"$w/out")" 0
status 0 --verdicts "$w/beside.tsv" "$w/in.lt"
check "an output beside the input is written" "$(test -s "$w/beside.tsv" && echo yes)" yes
# A file that exists but cannot be read is refused up front too: run as another user where
# this runs as root (root reads any file), else as ourselves.
cp "$w/ledger.lt" "$w/noread.lt" && chmod 000 "$w/noread.lt"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$x" "$w/noread.lt" >"$w/out" 2>"$w/err"
	check "exit 2: an unreadable file" "$?" 2
	has "$w/err" "noread.lt: cannot open: Permission denied"
	check "no report for an unreadable file" "$(wc -c <"$w/out")" 0
elif [ "$(id -u)" != 0 ]; then
	status 2 "$w/noread.lt"
	has "$w/err" "noread.lt: cannot open: Permission denied"
else
	echo "note: unreadable-file case not run (root without setpriv)"
fi
# What was read is still reported when a file goes bad inside.
size=$(wc -c <"$w/ledger.lt")
head -c $((size - 40)) "$w/ledger.lt" >"$w/cut.lt"
status 2 --json "$w/cut.lt"
has "$w/err" "cut.lt: byte"
has "$w/out" '"explained":'
printf 'not a trace at all' >"$w/junk.lt"
status 2 "$w/junk.lt"
has "$w/err" "junk.lt: byte 0"
: >"$w/empty.lt"
status 2 "$w/empty.lt"

# Scale: 20,000 requests with a wait, an adopt and an off-CPU record each. Every lookup
# is a binary search; one that walked back over earlier records would take minutes.
"$gen" "$w" --stress 20000 || { echo "FAIL: lin-explain-gen --stress"; fails=$((fails + 1)); }
if timeout 120 "$x" --json "$w/stress.lt" >"$w/out" 2>"$w/err"; then
	$py - "$w/out" <<'PY' || fails=$((fails + 1))
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["explained"] == 40000, s
assert s["marks"]["dependency_ready"]["inferred"] == 20000, s["marks"]["dependency_ready"]
# both launches of a request see their thread off-CPU before their call
assert s["by_cause"]["descheduled"]["ns"] == 2 * 20000 * 100, s["by_cause"]["descheduled"]
print("ok: 40,000 launches in bounded time: 20,000 event waits inferred, every off-CPU record counted")
PY
else
	echo "FAIL: lineage-explain on stress.lt: exit $? (or over 120 s)"
	fails=$((fails + 1))
fi

# An imported Kineto trace: ops instead of requests, handoff marks not_in_format.
status 0 --request 0 --from kineto "$src/../import/data/causes.json"
if grep -q '(before)' "$w/out"; then echo "FAIL: --request printed a mark before its origin"; fails=$((fails + 1)); else echo "ok: --request: every launch timed from the earliest"; fi
status 0 --json --from kineto "$src/../import/data/causes.json"
has "$w/out" '"op":'
has "$w/out" '"cause":"not_in_format"'

# A synthetic pool run: every GPU record explained, the handoff seen.
if [ -x "$synth" ]; then
	"$synth" --scenario pool-handoff --strategy epoch --seed 3 --requests 12 -o "$w/s.lt" --truth "$w/s.truth" >/dev/null ||
		{ echo "FAIL: lineage-synth"; fails=$((fails + 1)); }
	status 0 --json --top 0 "$w/s.lt"
	$py - "$w/out" <<'PY' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
assert s["gpu_records"] > 0 and s["explained"] == s["gpu_records"], s
assert s["marks"]["adopted"]["observed"] == s["explained"], s["marks"]["adopted"]
assert s["requests"] == 12 and len(d["requests"]) == 12, s
print("ok: synthetic pool run: %d of %d explained, adopted observed on all" % (s["explained"], s["gpu_records"]))
PY
	# With latency timestamps every kernel's queued and submitted are observed; memcpy and
	# memset records have none (not_recorded).
	"$synth" --scenario fanout-streams --strategy epoch --seed 2 --requests 6 --latency-timestamps \
		-o "$w/l.lt" --truth "$w/l.truth" >/dev/null || { echo "FAIL: lineage-synth --latency-timestamps"; fails=$((fails + 1)); }
	status 0 --json --request 1 "$w/l.lt"
	$py - "$w/out" <<'PY' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1]))
all_ = d["requests"][0]["all"]
k = [l for l in all_ if l["kind"] == "kernel"]
m = [l for l in all_ if l["kind"] != "kernel"]
assert k and m, (len(k), len(m))
assert all(l["marks"]["submitted"]["source"] == "cupti_latency_timestamp" for l in k)
assert all(l["marks"]["queued"]["t"] <= l["marks"]["submitted"]["t"] <= l["marks"]["kernel_start"]["t"] for l in k)
assert all(l["marks"]["submitted"]["cause"] == "not_recorded" for l in m)
print("ok: --latency-timestamps: %d kernels with queued/submitted observed, %d copies not_recorded" % (len(k), len(m)))
PY
else
	echo "SKIP: no lineage-synth in this build (no CUPTI headers): the synthetic run is not checked"
fi

[ "$fails" -eq 0 ] && echo "all passed" && exit 0
echo "$fails failure(s)"
exit 1
