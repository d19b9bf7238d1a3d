#!/bin/sh
# Strings in the --json report and the Perfetto export: well-formed UTF-8 passes through
# as it is ("é", not "Ã©"), '"', '\' and control characters are escaped, and each maximal
# ill-formed subsequence becomes U+FFFD (here: a file name with a 0xff byte, and names cut
# inside "é" by the 4 KiB name limit and by a finding's 64-byte op name), and both outputs
# are valid JSON. Usage: utf8.sh BIN TMPDIR
BIN=$1 TMP=$2
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
rm -rf "$TMP"
mkdir -p "$TMP"
E=$(printf '\303\251')                           # é
A=$(printf '%4095s' '' | tr ' ' a)               # 4095 a: the name limit falls inside é
B=$(printf '%63s' '' | tr ' ' b)                 # 63 b: the note's op '%.64s' falls inside é
F="$TMP/rank$E$(printf '\377').json"             # a file name that is not UTF-8
L='"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","pid":1,"tid":1'
K='"ph":"X","cat":"kernel","pid":0,"tid":7'
printf '{"traceEvents": [
{"ph":"X","cat":"user_annotation","name":"step%s\\t\\"q","pid":1,"tid":1,"ts":100,"dur":100},
{%s,"ts":110,"dur":5,"args":{"correlation":5}},
{%s,"name":"k1","ts":120,"dur":10,"args":{"correlation":5,"device":0,"stream":7}},
{"ph":"X","cat":"user_annotation","name":"%s%s","pid":1,"tid":1,"ts":300,"dur":100},
{%s,"ts":310,"dur":5,"args":{"correlation":6}},
{%s,"name":"k2","ts":320,"dur":10,"args":{"correlation":6,"device":0,"stream":7}},
{"ph":"X","cat":"cpu_op","name":"%s%sz","pid":1,"tid":1,"ts":500,"dur":10}
]}\n' "$E" "$L" "$K" "$B" "$E" "$L" "$K" "$A" "$E" > "$F"
"$BIN" --json --export-perfetto "$TMP/perfetto.json" "$F" > "$TMP/report.json" 2>"$TMP/err.txt"
expect_eq "trace with UTF-8 names: exit" $? 0
python3 -m json.tool "$TMP/report.json" >/dev/null
expect_eq "--json report: valid JSON" $? 0
python3 -m json.tool "$TMP/perfetto.json" >/dev/null
expect_eq "Perfetto export: valid JSON" $? 0
expect_eq "--json report: é as its UTF-8 bytes" "$(grep -c "step$E" "$TMP/report.json")" 1
expect_eq "Perfetto export: é as its UTF-8 bytes" "$(grep -c "step$E" "$TMP/perfetto.json")" 1
expect_eq "--json report: no Latin-1 escapes" "$(grep -ci '\\u00c3' "$TMP/report.json")" 0
expect_eq "Perfetto export: no Latin-1 escapes" "$(grep -ci '\\u00c3' "$TMP/perfetto.json")" 0
check() { # check WHAT PYTHON-EXPRESSION (r: the report, p: the export, e, a, b)
	got=$(python3 - "$TMP/report.json" "$TMP/perfetto.json" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
p = json.load(open(sys.argv[2], encoding="utf-8"))
e, a, b = "\u00e9", "a" * 4095, "b" * 63
details = [f.get("detail", "") for f in r["findings"]]
names = [ev.get("name", "") for ev in p["traceEvents"]]
print("yes" if eval(sys.argv[3]) else "no")
PY
)
	expect_eq "$1" "$got" yes
}
check "--json report: the file name, 0xff as U+FFFD" 'r["files"][0]["name"].endswith("rank" + e + "\ufffd.json")'
check "--json report: the op name, tab and quote escaped and read back" \
	'any("op \x27step" + e + "\t\"q\x27" in d for d in details)'
check "--json report: a name cut inside é ends in U+FFFD" 'any("op \x27" + b + "\ufffd\x27" in d for d in details)'
check "Perfetto export: the op name" '("step" + e + "\t\"q") in names'
check "Perfetto export: a name cut inside é at 4 KiB ends in U+FFFD" '(a + "\ufffd") in names'
check "Perfetto export: ASCII names unchanged" '"cudaGraphLaunch" in names and "k1" in names'
finish
