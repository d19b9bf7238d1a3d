#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# same-output.sh - the tools give the same output before and after a change that must not
# change behaviour (a refactoring: docs/architecture.md).
#
#   tests/refactor/same-output.sh capture BUILD DIR [REALTRACES]
#       With BUILD's own generators, write a corpus into DIR/corpus: every validator
#       fixture (lineage-fixturegen), synthetic traces of every scenario (lineage-synth:
#       fixed seeds; several strategies; the attr-* scenarios with latency timestamps,
#       cause truth and a scheduler trace; the live binding through the test CUPTI layer),
#       and the real traces in REALTRACES (default: ../shared/realtraces beside the
#       checkout, left out where absent). Then run BUILD's lineage-validate and
#       lineage-explain over the corpus and keep every output in DIR/out.
#   tests/refactor/same-output.sh check BUILD DIR
#       Run BUILD's tools over the same corpus and compare each output (stdout, exit
#       status and every file written: --verdicts, --export-perfetto, --export-otlp) with
#       DIR/out, byte for byte. Then regenerate the corpus with BUILD's generators (in a
#       temporary directory: DIR is only read) and compare: fixtures byte for byte; synthetic traces and truth in
#       lin-synth-canon's canonical form (timestamps, thread ids and string numbering
#       vary between runs of one seed). The attr-* scenarios' files are not compared:
#       their work waits on real sleeps, so their latency timestamps and cause labels
#       differ from run to run of one build (their tool outputs above are compared).
#
# BUILD is a build directory of this project (cmake -B BUILD). SAME_OUTPUT_QUICK=1 (in
# both steps) writes three synthetic cells instead of every scenario. Capture with the build of
# the commit before the change, check with the build after it. Prints one line per
# difference and a summary. Exit: 0 every output the same; 1 a difference (listed);
# 2 a tool or file missing; 64 a usage error.
set -euo pipefail
export LC_ALL=C

usage() {
	sed -n '3,30s/^# \{0,1\}//p' "$0" >&2
	exit 64
}
[ $# -ge 3 ] || usage
mode=$1 build=$(cd "$2" && pwd) dir=$3
case "$mode" in capture | check) ;; *) usage ;; esac
validate=$build/validator/lineage-validate explain=$build/explain/lineage-explain
synth=$build/bench/lineage-synth fixturegen=$build/fixtures/lineage-fixturegen
canon=$build/tests/synth/lin-synth-canon
for t in "$validate" "$explain" "$synth" "$fixturegen" "$canon"; do
	[ -x "$t" ] || { echo "same-output: $t is missing (build $build first)" >&2; exit 2; }
done

# Synthetic cells: scenario strategy seed extra-options. Fixed seeds, one lane: the same
# seed gives the same work (tests/synth/check-determinism.sh).
cells() {
	local sc
	if [ -n "${SAME_OUTPUT_QUICK:-}" ]; then
		# A few cells only (the self-check: it shows the comparison fires, not coverage).
		echo "pool-handoff epoch 7"
		echo "graph-worker kineto 9"
		echo "attr-device-busy epoch 7"
		return
	fi
	while read -r sc _; do
		echo "$sc epoch 7"
	done < <("$synth" --list-scenarios)
	for st in kineto nvtx cuda-only manual manual-batch; do
		echo "mixed $st 7"
		echo "batching $st 9"
		echo "graph-worker $st 9"
	done
	echo "stale-token manual 5"
	echo "pool-handoff epoch 3 --cupti layer"
	echo "graph-worker epoch 3 --cupti layer --driver-records shared"
	echo "mixed epoch 3 --cupti layer --cupti-own-clock"
}

# corpus OUTDIR: write the corpus with BUILD's generators.
corpus() {
	local out=$1 sc st seed extra b
	rm -rf "$out"
	mkdir -p "$out/fixtures" "$out/synth" "$out/real"
	"$fixturegen" "$out/fixtures" >/dev/null
	while read -r sc st seed extra; do
		b="$out/synth/$sc.$st.$seed"
		[ -z "$extra" ] || b="$b.$(echo "$extra" | tr -cd 'a-z-' | tr -s '-')"
		# shellcheck disable=SC2086 # extra holds options
		case "$sc" in
		attr-*)
			"$synth" --scenario "$sc" --strategy "$st" --seed "$seed" --requests 12 \
				--latency-timestamps --cause-truth "$b.cause" --sched-trace "$b.sched" \
				--delay-us 500 -o "$b.lt" --truth "$b.truth" $extra >/dev/null
			;;
		*)
			"$synth" --scenario "$sc" --strategy "$st" --seed "$seed" --requests 12 \
				-o "$b.lt" --truth "$b.truth" $extra >/dev/null
			;;
		esac
	done < <(cells)
}

# run NAME CMD...: run a tool in DIR/corpus, keep its stdout, stderr's first line is not
# kept (it may name temporary paths), and its exit status in $res/NAME.
run() {
	local name=$1 rc=0
	shift
	(cd "$dir/corpus" && "$@") >"$res/$name.out" 2>/dev/null || rc=$?
	echo "$rc" >"$res/$name.rc"
}

# outputs RES: every tool output over the corpus.
outputs() {
	res=$1
	rm -rf "$res"
	mkdir -p "$res"
	local f b t n=0
	cd "$dir/corpus"
	for f in fixtures/*.lt synth/*.lt real/*; do
		[ -e "$f" ] || continue
		b=$(echo "$f" | tr '/' '_')
		t=""
		case "$f" in *.lt) [ ! -e "${f%.lt}.truth" ] || t="--expect ${f%.lt}.truth" ;; esac
		# shellcheck disable=SC2086 # t holds an option and its file
		run "$b.validate" "$validate" --json --max-findings 1000 $t \
			--verdicts "$res/$b.verdicts.tsv" "$f"
		run "$b.explain" "$explain" --json --top 0 --verdicts "$res/$b.explain-verdicts.tsv" "$f"
		n=$((n + 1))
	done
	for f in synth/*.lt; do
		b=$(echo "$f" | tr '/' '_')
		run "$b.perfetto" "$validate" --export-perfetto "$res/$b.perfetto.json" "$f"
		run "$b.otlp" "$validate" --export-otlp "$res/$b.otlp.json" "$f"
		run "$b.why" "$explain" --export-perfetto "$res/$b.why.json" "$f"
	done
	for f in synth/*.cause; do
		[ -e "$f" ] || continue
		b=$(echo "$f" | tr '/' '_')
		run "$b.score" "$explain" --score "$f" "${f%.cause}.lt" "${f%.cause}.sched"
		run "$b.score-without" "$explain" --score "$f" --without latency,occupancy \
			"${f%.cause}.lt"
		run "$b.explain-sched" "$explain" --json --top 0 "${f%.cause}.lt" "${f%.cause}.sched"
		run "$b.explain-without" "$explain" --json --top 0 \
			--without stream-order,event-wait,handoff,host-sched,graph-edge "${f%.cause}.lt"
	done
	# Several files as one run.
	run multi.validate "$validate" --json --max-findings 1000 fixtures/good_two_procs_a.lt \
		fixtures/good_two_procs_b.lt --expect fixtures/good_two_procs_a.truth \
		--expect fixtures/good_two_procs_b.truth
	if [ -e synth/multi-process.epoch.7.lt.2 ]; then
		run multi-synth.validate "$validate" --json --max-findings 1000 \
			synth/multi-process.epoch.7.lt synth/multi-process.epoch.7.lt.2 \
			--expect synth/multi-process.epoch.7.truth --expect synth/multi-process.epoch.7.truth.2
		run multi-synth.explain "$explain" --json --top 0 synth/multi-process.epoch.7.lt \
			synth/multi-process.epoch.7.lt.2
	fi
	cd - >/dev/null
	echo "$n"
}

case "$mode" in
capture)
	real=${4:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/realtraces}
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	corpus "$dir/corpus"
	if [ -d "$real" ]; then
		for f in "$real"/*; do
			case "$f" in *.json | *.json.gz | *.sqlite) cp "$f" "$dir/corpus/real/" ;; esac
		done
	else
		echo "same-output: $real is absent: the real traces are left out" >&2
	fi
	n=$(outputs "$dir/out")
	echo "same-output: captured $(find "$dir/out" -type f | wc -l) outputs of $n files with $build"
	;;
check)
	dir=$(cd "$dir" && pwd)
	[ -d "$dir/out" ] && [ -d "$dir/corpus" ] || {
		echo "same-output: $dir has no capture (run capture first)" >&2
		exit 2
	}
	# DIR is only read: the outputs and the regenerated corpus go to a directory of this
	# run's own, so two checks may read one capture at once.
	work=$(mktemp -d "${TMPDIR:-/tmp}/same-output.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	n=$(outputs "$work/after")
	diffs=0 same=0
	while read -r f; do
		rel=${f#"$dir/out/"}
		if [ ! -e "$work/after/$rel" ]; then
			echo "DIFF missing after: $rel"
			diffs=$((diffs + 1))
		elif cmp -s "$f" "$work/after/$rel"; then
			same=$((same + 1))
		else
			echo "DIFF $rel"
			{ diff "$f" "$work/after/$rel" || true; } | head -6 | sed 's/^/    /'
			diffs=$((diffs + 1))
		fi
	done < <(find "$dir/out" -type f | sort)
	while read -r f; do
		rel=${f#"$work/after/"}
		[ -e "$dir/out/$rel" ] || { echo "DIFF new after: $rel"; diffs=$((diffs + 1)); }
	done < <(find "$work/after" -type f | sort)
	echo "same-output: tool outputs over $n files: $same the same, $diffs different"
	# The generators: fixtures byte for byte, synthetic files canonically.
	corpus "$work/regen"
	gsame=0 gdiffs=0
	for f in "$dir"/corpus/fixtures/* "$dir"/corpus/synth/*; do
		rel=${f#"$dir/corpus/"}
		g="$work/regen/$rel"
		if [ ! -e "$g" ]; then
			echo "DIFF not regenerated: $rel"
			gdiffs=$((gdiffs + 1))
			continue
		fi
		case "$rel" in
		synth/attr-*) continue ;;
		fixtures/*) cmp -s "$f" "$g" && ok=1 || ok=0 ;;
		*)
			{ "$canon" "$f" 2>&1 || true; } | sort >"$work/a.canon"
			{ "$canon" "$g" 2>&1 || true; } | sort >"$work/b.canon"
			cmp -s "$work/a.canon" "$work/b.canon" && ok=1 || ok=0
			;;
		esac
		if [ "$ok" = 1 ]; then
			gsame=$((gsame + 1))
		else
			echo "DIFF regenerated: $rel"
			gdiffs=$((gdiffs + 1))
		fi
	done
	echo "same-output: generated files: $gsame the same, $gdiffs different (attr-* not compared)"
	[ "$diffs" -eq 0 ] && [ "$gdiffs" -eq 0 ] && [ "$same" -gt 0 ] && [ "$gsame" -gt 0 ]
	;;
esac
