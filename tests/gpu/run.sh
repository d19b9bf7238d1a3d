#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/run.sh [--prepared DIR] [--build DIR] [--out DIR] [--budget S] [--steps LIST]
#                  [--no-gpu]
#
# The one script for a machine with an NVIDIA GPU (written for an H100/H200, sm_90;
# LIN_CUDA_ARCH to change), including a bare one: a compiler, CMake, Python and the CUDA
# toolkit, nothing from Debian's -dev packages, no network. What the build lacks comes in
# DIR (default .gpu-prep in the repository root), made beforehand by tests/gpu/prepare.sh
# on a Debian 12 machine; without DIR the machine's own packages are used.
#
# Steps, in this order, each with its own time limit and all within the budget S seconds
# (default 420; a step that would start with too little left is not run, and says so):
#   env          the machine: GPU, driver, compilers, CMake, Python, libcupti
#   build        cmake -DLIN_GPU_RUN=ON (the library with CUPTI, lineage-validate,
#                lineage-explain, the CUDA examples, the GPU tests, the CUPTI probe, the
#                Python extension where Python's headers are), in DIR-BUILD (default
#                build-gpu)
#   gpu_live     test_cupti_gpu_live: the live binding end to end, validated in-process,
#                on lineage's host clock, then on CUPTI's own clock (clock pair widths,
#                bracket check decided/undecided)
#   pool_lineage examples/pool_lineage.cu validated against its own truth file
#   probe_*      lineage-cupti-probe, one process per mode (main, latency, filter, no-api,
#                graph-trace, clock, ts-callback): the open questions of docs/cupti.md
#   attrib       examples/attrib_causes.cu scored by lineage-explain --score, latency
#                timestamps on and off (their CPU cost)
#   python       the Python extension with PyTorch on the device: python/examples/
#                torch_serving.py validated, and the pytest tests marked gpu
#   torch_kineto tests/gpu/torch_kineto.py: a PyTorch-profiler trace of serving-shaped work
#                (eager passes, graph replays, an event wait, a pool handoff), kept for the
#                importers
# Everything worth keeping goes to OUT (default $OUT when set, else DIR-BUILD/out):
# summary.txt, run.log (every step's output) and artifacts.tar.gz (the traces, truth files,
# scores and step logs). One summary is printed at the end.
#
# --steps LIST runs only the GPU steps named (comma-separated: gpu_live, pool_lineage,
# probe, attrib, python, torch_kineto; env and build always run): a second try of what
# failed, in less device time. --no-gpu stops after the build, before the first step that
# needs a GPU (the check that a bare machine builds it: .ci/run).
# Exit: 0 every step ran and passed; 1 a step failed, timed out or was not run; 77 no GPU
# visible (nothing run; without --no-gpu); 78 --no-gpu: the build passed and the run
# stopped before the GPU steps, as asked; 64 bad arguments.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
prep="" build="$root/build-gpu" out="" budget=420 nogpu=0 steps=",all,"
[ -d "$root/.gpu-prep" ] && prep="$root/.gpu-prep"
while [ $# -gt 0 ]; do
	case $1 in
	--prepared) prep=${2:?--prepared needs a directory}; shift 2 ;;
	--build) build=${2:?--build needs a directory}; shift 2 ;;
	--out) out=${2:?--out needs a directory}; shift 2 ;;
	--budget) budget=${2:?--budget needs seconds}; shift 2 ;;
	--no-gpu) nogpu=1; shift ;;
	--steps) steps=",${2:?--steps needs a list},"; shift 2 ;;
	-h|--help) sed -n '3,43s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 64 ;;
	esac
done
case $budget in ''|*[!0-9]*) echo "run.sh: --budget takes whole seconds" >&2; exit 64 ;; esac
out=${out:-${OUT:-$build/out}}
cuda=${LIN_CUDA_ROOT:-/usr/local/cuda}
arch=${LIN_CUDA_ARCH:-90}
art="$build/artifacts"
t0=$(date +%s)
deadline=$((t0 + budget))
summary=() failed=0

gpu_visible() { [ -e /dev/nvidiactl ] || nvidia-smi -L >/dev/null 2>&1; }
if [ "$nogpu" = 0 ] && ! gpu_visible; then
	echo "tests/gpu/run.sh: no GPU visible (no /dev/nvidiactl, no nvidia-smi -L): nothing run"
	echo "(--no-gpu builds and stops before the GPU steps)"
	exit 77
fi
if [ -n "$prep" ] && [ ! -x "$prep/bin/pkg-config" ]; then
	echo "run.sh: $prep is not a prepared folder (no bin/pkg-config): run tests/gpu/prepare.sh" >&2
	exit 64
fi
mkdir -p "$build" "$art" "$out" || exit 1
# The programs' own checks (/dev/nvidiactl) defer to what was seen here.
[ "$nogpu" = 0 ] && export LIN_GPU_VISIBLE=1
prep=${prep:+$(cd "$prep" && pwd)}
: >"$art/run.log"

# The prepared folder: its pkg-config, ninja and libraries come first.
cmake_extra=()
if [ -n "$prep" ]; then
	export PATH="$prep/bin:$PATH"
	export PKG_CONFIG="$prep/bin/pkg-config"
	export CMAKE_PREFIX_PATH="$prep/root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
	export LD_LIBRARY_PATH="$prep/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	cmake_extra+=(-DPKG_CONFIG_EXECUTABLE="$prep/bin/pkg-config")
fi
if command -v ninja >/dev/null; then
	cmake_extra+=(-G Ninja -DCMAKE_MAKE_PROGRAM="$(command -v ninja)")
fi
# The interpreter that holds PyTorch (a venv's python3 first on PATH), not /usr/bin/python3.
py=$(command -v python3 || true)
[ -n "$py" ] && cmake_extra+=(-DPython3_EXECUTABLE="$py")

# What the steps' functions read (they run in a shell of their own, under timeout).
export root build cuda arch prep py art bin="$build"

now() { date +%s; }
want() { case $steps in *,all,*|*",$1,"*) return 0 ;; *) return 1 ;; esac; }
note() { summary+=("$*"); }
# step NAME LIMIT CMD...: run CMD with its output in $art/NAME.log (and run.log), within
# LIMIT seconds and what is left of the budget. Sets $rc; a failure marks the run failed.
step() {
	local name=$1 limit=$2 left s e
	shift 2
	left=$((deadline - $(now)))
	if [ "$left" -lt 10 ]; then
		note "$name: NOT RUN (the budget of ${budget}s is spent)"
		failed=1 rc=124
		return
	fi
	[ "$limit" -gt "$left" ] && limit=$left
	s=$(now)
	printf '\n===== %s (limit %ss) $ %s\n' "$name" "$limit" "$*" >>"$art/run.log"
	if [ "$(type -t "$1")" = function ]; then # a function runs in a bash of its own
		timeout -k 5 "$limit" bash -c "$(declare -f "$1"); $1" >"$art/$name.log" 2>&1
	else
		timeout -k 5 "$limit" "$@" >"$art/$name.log" 2>&1
	fi
	rc=$?
	e=$(now)
	cat "$art/$name.log" >>"$art/run.log"
	case $rc in
	0) note "$name: ok ($((e - s))s)" ;;
	124|137) note "$name: TIMED OUT after ${limit}s"; failed=1 ;;
	77) note "$name: FAIL: skipped (exit 77) with a GPU visible ($((e - s))s)"; failed=1 ;;
	*) note "$name: FAIL (exit $rc, $((e - s))s; see $name.log)"; failed=1 ;;
	esac
}
# keep NAME REGEX: the step's lines worth the summary.
keep() {
	local l
	while IFS= read -r l; do note "    $l"; done < <(grep -E "$2" "$art/$1.log" 2>/dev/null | cut -c1-400 | head -40)
}

env_facts() {
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "os: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
	echo "kernel: $(uname -r)"
	echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
	echo "nvcc: $("$cuda/bin/nvcc" --version 2>/dev/null | tail -1)"
	echo "cc: $(cc --version 2>/dev/null | head -1)"
	echo "cmake: $(cmake --version 2>/dev/null | head -1)"
	echo "ninja: $(ninja --version 2>/dev/null || echo none)"
	echo "pkg-config: $(command -v pkg-config || echo none)"
	echo "python3: ${py:-none} $("${py:-false}" --version 2>&1)"
	echo "libcupti: $(ls "$cuda"/lib64/libcupti.so* "$cuda"/extras/CUPTI/lib64/libcupti.so* 2>/dev/null | tr '\n' ' ')"
	echo "prepared: ${prep:-none}"
	echo "cpus: $(nproc)"
}


step env 30 env_facts
keep env '.'
step build 240 bash -c 'cmake -S "$1" -B "$2" "${@:3}" && cmake --build "$2" -j "$(nproc)"' _ \
	"$root" "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIN_GPU_RUN=ON -DLIN_WITH_CUPTI=ON \
	-DLIN_CUDA_ROOT="$cuda" -DCMAKE_CUDA_ARCHITECTURES="$arch" "${cmake_extra[@]}"
keep build '( error:|Error:|CMake Error|FAILED|CUPTI binding|examples:|tests/gpu:|lineage Python)'
built=$rc

if [ "$built" = 0 ] && [ "$nogpu" = 1 ]; then
	for t in tests/gpu/test_cupti_gpu_live tests/gpu/lineage-cupti-probe examples/pool_lineage \
		examples/attrib_causes validator/lineage-validate explain/lineage-explain; do
		[ -x "$bin/$t" ] || { note "build: FAIL: $t was not built"; failed=1; }
	done
fi

if [ "$built" = 0 ] && [ "$nogpu" = 0 ]; then
	live="$bin/tests/gpu/test_cupti_gpu_live"
	want gpu_live && step gpu_live 60 "$live" --trace "$art/gpu_live.lintrace"
	keep gpu_live '^gpu_live:'
	want gpu_live && step gpu_live_own_clock 60 "$live" --own-clock --trace "$art/gpu_live_own_clock.lintrace"
	keep gpu_live_own_clock '^gpu_live:'
	want pool_lineage && step pool_lineage 90 env LINEAGE_LOG=warn "$root/examples/run_pool_lineage.sh" \
		"$bin/examples/pool_lineage" "$bin/validator/lineage-validate" \
		"$art/pool_lineage.lintrace"
	keep pool_lineage '(GPU records|joined|lost|ambiguous|incorrect|matched|exit|pool_lineage:)'
	for m in main latency filter no-api graph-trace clock ts-callback; do
		want probe && step "probe_$m" 40 "$bin/tests/gpu/lineage-cupti-probe" --mode "$m"
		keep "probe_$m" '^(E[0-9]+|note|device|cupti_probe:)'
	done
	want attrib && step attrib 150 "$root/examples/run_attrib_causes.sh" "$bin/examples/attrib_causes" \
		"$bin/explain/lineage-explain" "$art/attrib"
	keep attrib '(SUMMARY|ATTRIB scenario=all|run_attrib_causes:)'
	pymod=$(find "$bin/python/pkg" -name '_lineage*.so' 2>/dev/null | head -1)
	if ! want python; then
		:
	elif [ -n "$pymod" ]; then
		py_run() { # each part runs; the step fails if any did
			local bad=0
			export PYTHONPATH="$bin/python/pkg${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
			"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())' || bad=1
			if "$py" "$root/python/examples/torch_serving.py" "$art/torch_serving.lt"; then
				"$bin/validator/lineage-validate" "$art/torch_serving.lt" || bad=1
			else
				bad=1
			fi
			LINEAGE_VALIDATE="$bin/validator/lineage-validate" "$py" -m pytest -q \
				-p no:cacheprovider -m gpu "$root/python/tests" || bad=1
			return $bad
		}
		step python 120 py_run
		keep python '(^torch |GPU records|joined|lost|ambiguous|passed|failed|skipped|Error)'
	else
		note "python: NOT RUN (the Python extension was not built: no headers for $py; see build.log)"
		failed=1
	fi
	want torch_kineto && step torch_kineto 90 env PYTHONUNBUFFERED=1 "$py" "$root/tests/gpu/torch_kineto.py" \
		"$art/torch_kineto.json"
	keep torch_kineto '^torch_kineto:'
fi

# What comes back: the summary, the whole log, the artifacts.
end=$(now)
{
	echo "==== lineage GPU run: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), budget ${budget}s ===="
	printf '%s\n' "${summary[@]}"
	if [ "$nogpu" = 1 ] && [ "$failed" = 0 ]; then
		echo "==== BUILT in $((end - t0))s; stopped before the GPU steps (--no-gpu): exit 78 ===="
	else
		echo "==== $([ "$failed" = 0 ] && echo PASS || echo FAIL) in $((end - t0))s ===="
	fi
} >"$art/summary.txt"
cp "$art/summary.txt" "$art/run.log" "$out/" 2>/dev/null
tar -czf "$out/artifacts.tar.gz" -C "$art" . 2>/dev/null ||
	echo "run.sh: could not write $out/artifacts.tar.gz" >&2
cat "$art/summary.txt"
echo "(in $out: summary.txt, run.log, artifacts.tar.gz)"
if [ "$failed" != 0 ]; then
	exit 1
fi
[ "$nogpu" = 1 ] && exit 78
exit 0
