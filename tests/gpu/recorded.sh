#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/gpu/recorded.sh WHAT VALIDATE EXPLAIN LIVE DIR - the checks GPU runs broke, on the
# traces recorded on an H200 (tests/gpu/recorded/README.md), where no GPU is.
#   live      test_cupti_gpu_live --check on both clocks' traces (LIVE)
#   pool      lineage-validate --expect: every GPU record joined, all 136 labels matched
#             (a graph node's grid id repeats in every replay)
#   torch     lineage-validate: torch's forward passes and graph replays all joined
#   attrib    lineage-explain --score: with latency timestamps on, lineage names the
#             stream, event and graph dependencies (recall 1) and the queueing (>= 0.95)
#   attrib-hta  the same trace exported with --export-kineto and read by Holistic Trace
#             Analysis itself (bench/attrib/hta-labels.py): on hardware, HTA names every
#             stream- and event-dependency target (recall 1) and calls the graph targets
#             device-side (kernel_wait); needs Python with HTA's Debian packages (77 where
#             absent, a failure with LIN_CI set)
#   kineto    lineage-validate on the PyTorch profiler's own trace: the 36 kernels of the
#             forward passes handed to a pool thread are lost (no_enclosing_op), the rest
#             joined (needs the trace-event importer: yajl)
# Exit: 0 held; 1 did not (said); 77 the check needs what this build lacks.
set -u
what=$1 validate=$2 explain=$3 live=$4 dir=$5
fail() { echo "recorded.sh $what: FAIL: $*"; exit 1; }
field() { sed -n "s/^ *$1  *\([0-9][0-9]*\).*/\1/p" "$2" | head -1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case $what in
live)
	"$live" --check "$dir/h200-gpu_live.lintrace" || fail "host clock"
	"$live" --own-clock --check "$dir/h200-gpu_live_own_clock.lintrace" || fail "CUPTI's clock"
	;;
pool)
	"$validate" --expect "$dir/h200-pool_lineage.truth" "$dir/h200-pool_lineage.lintrace" \
		>"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "lineage-validate exit $?"; }
	grep -q "matched truth labels *136 of 136" "$tmp/out" || { cat "$tmp/out"; fail "labels"; }
	[ "$(field 'joined, observed' "$tmp/out")" = 158 ] || { cat "$tmp/out"; fail "observed"; }
	;;
torch)
	"$validate" "$dir/h200-torch_serving.lintrace" >"$tmp/out" 2>&1 ||
		{ cat "$tmp/out"; fail "lineage-validate exit $?"; }
	;;
attrib)
	"$explain" --score "$dir/h200-attrib-latency-on.causes" \
		"$dir/h200-attrib-latency-on.lintrace" >"$tmp/out" 2>&1 ||
		{ cat "$tmp/out"; fail "lineage-explain --score exit $?"; }
	for c in stream_dependency event_dependency graph_dependency handoff_wait; do
		grep -q "^SUMMARY method=lineage without=- cause=$c .* recall=1.000 " "$tmp/out" ||
			{ grep "method=lineage" "$tmp/out"; fail "$c not named for every target"; }
	done
	r=$(sed -n 's/^SUMMARY method=lineage without=- cause=queueing .* recall=\([0-9.]*\) .*/\1/p' "$tmp/out")
	awk -v r="$r" 'BEGIN { exit !(r >= 0.95) }' || fail "queueing recall $r < 0.95"
	;;
attrib-hta)
	py=
	for p in ${LIN_HTA_PYTHON:-python3 /usr/bin/python3}; do
		"$p" -c 'import pandas, numpy, networkx, plotly, pydot, psutil' 2>/dev/null && { py=$p; break; }
	done
	if [ -z "$py" ]; then
		[ -n "${LIN_CI:-}" ] && fail "no python3 imports HTA's packages (.ci/lib.sh installs them)"
		echo "recorded.sh attrib-hta: skipped: no python3 imports pandas, numpy, networkx, plotly, pydot, psutil"
		exit 77
	fi
	"$validate" --export-kineto "$tmp/k.json" "$dir/h200-attrib-latency-on.lintrace" >/dev/null 2>&1
	[ -s "$tmp/k.json" ] || fail "lineage-validate --export-kineto wrote nothing"
	"$py" "$(dirname "$0")/../../bench/attrib/hta-labels.py" "$tmp/k.json" "$tmp/hta.tsv" \
		>"$tmp/hta.out" 2>&1 || { tail -20 "$tmp/hta.out"; fail "hta-labels.py exit $?"; }
	"$explain" --score "$dir/h200-attrib-latency-on.causes" --peer-labels "hta=$tmp/hta.tsv" \
		"$dir/h200-attrib-latency-on.lintrace" >"$tmp/out" 2>&1 ||
		{ cat "$tmp/out"; fail "lineage-explain --score exit $?"; }
	for c in stream_dependency event_dependency queueing; do
		grep -q "^SUMMARY method=hta without=- cause=$c .* recall=1.000 " "$tmp/out" ||
			{ grep "method=hta " "$tmp/out"; fail "HTA does not name every $c target"; }
	done
	grep -q "^SUMMARY method=hta without=- cause=graph_dependency .* correct=0 .* as_device=32 " "$tmp/out" ||
		{ grep "method=hta " "$tmp/out"; fail "HTA's graph targets are not the 32 device-side ones"; }
	;;
kineto)
	"$validate" "$dir/h200-torch_kineto.json" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" = 2 ] && grep -q -i "yajl\|importer" "$tmp/out"; then
		echo "recorded.sh kineto: skipped: $(head -1 "$tmp/out")"
		exit 77
	fi
	[ "$(field no_enclosing_op "$tmp/out")" = 36 ] || { cat "$tmp/out"; fail "the pool's 36 kernels"; }
	[ "$(field 'GPU records' "$tmp/out")" = 144 ] || { cat "$tmp/out"; fail "GPU records"; }
	;;
*) echo "recorded.sh: unknown check '$what'" >&2; exit 64 ;;
esac
echo "recorded.sh $what: ok"
