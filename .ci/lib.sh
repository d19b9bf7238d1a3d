# shellcheck shell=bash
# Shared by ./demo.sh, ./test.sh and .ci/run: install what lineage needs from Debian 12 when
# it is missing, then configure and build. Sourced, not run.

LIN_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Debian packages the build and the tests need. Optional ones are skipped by CMake when
# absent (CUPTI comes from the CUDA toolkit at /usr/local/cuda, not from Debian).
# nodejs and npm: test_otlp_export and test_otlp_stream decode the OTLP output with the
# OpenTelemetry project's own packages (npm ci, pinned in tests/otlp/package-lock.json;
# needs the npm registry). python3-wheel: pip builds python/ through pyproject.toml without
# build isolation, and setuptools 66 needs it for the wheel. python3-pandas ... -psutil:
# Holistic Trace Analysis (../shared/peers/hta), which the attribution benchmark runs
# (bench/attrib/hta-labels.py; docs/attribution.md).
LIN_DEBS=(cmake make gcc g++ pkg-config liburcu-dev libmsgpack-dev libxxhash-dev
          libcriterion-dev clang valgrind libuv1-dev libtbb-dev
          libyajl-dev zlib1g-dev libsqlite3-dev gzip jq
          python3 python3-dev python3-setuptools python3-wheel python3-pytest python3-venv
          clang-format nodejs npm
          python3-pandas python3-numpy python3-networkx python3-plotly python3-pydot python3-psutil)
# Only for lineage-bench's peer_lttng_ust (docs/bench.md), installed by CI alone: the
# tests need neither, and installing lttng-tools on a host sets up a system daemon.
LIN_BENCH_DEBS=(liblttng-ust-dev lttng-tools)

lin_say() { printf '==> %s\n' "$*" >&2; }

# Seconds between "still ..." lines while a logged step runs (apt, configure, build).
LIN_PROGRESS_S=${LIN_PROGRESS_S:-15}

# lin_logged LOG WHAT CMD...: run CMD with its output in LOG (appended), and say what runs:
# "WHAT..." first, then every LIN_PROGRESS_S seconds "still WHAT (Ns: last log line)",
# "WHAT: done in Ns" at the end. On failure: the last 40 lines of LOG, its path, CMD's
# exit status.
lin_logged() {
	local log=$1 what=$2 t0 pid rc=0 n=0 last
	shift 2
	t0=$(date +%s)
	lin_say "$what..."
	"$@" >>"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		n=$((n + 1))
		if [ $((n % LIN_PROGRESS_S)) -eq 0 ] && kill -0 "$pid" 2>/dev/null; then
			# cmake's "[ 42%] Building C object x/y.c.o" reads as "42%"; apt's lines as they are
			last=$(tail -n 1 "$log" 2>/dev/null | sed -E 's/^\[ *([0-9]+%)\].*/\1 of the targets/' |
				cut -c1-72)
			lin_say "  still $what ($(( $(date +%s) - t0 ))s${last:+: $last})"
		fi
	done
	wait "$pid" || rc=$?
	if [ "$rc" -ne 0 ]; then
		tail -n 40 "$log" >&2
		lin_say "$what FAILED (exit $rc) after $(( $(date +%s) - t0 ))s; full log: $log"
		return "$rc"
	fi
	lin_say "$what: done in $(( $(date +%s) - t0 ))s"
}

lin_install_deps() {
	local missing=() p
	for p in "${LIN_DEBS[@]}" "${LIN_EXTRA_DEBS[@]}"; do
		# A node from elsewhere (NodeSource's nodejs bundles npm) serves as Debian's would.
		[ "$p" = npm ] && command -v npm >/dev/null && continue
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	lin_say "installing ${#missing[@]} Debian packages: ${missing[*]}"
	lin_say "(and what they depend on; how long depends on the mirror: progress every ${LIN_PROGRESS_S}s)"
	local sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || { echo "need root or sudo to install: ${missing[*]}" >&2; return 1; }
		sudo=(sudo)
	fi
	# Outside the tree: the build directory does not exist yet.
	local log
	log=$(mktemp "${TMPDIR:-/tmp}/lineage-apt.XXXXXX.log")
	lin_logged "$log" "updating the package lists (apt-get update)" \
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update &&
	lin_logged "$log" "installing (apt-get install)" \
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y \
		--no-install-recommends "${missing[@]}" || return
	rm -f "$log"
}

# lin_build DIR [cmake args...]: configure (once) and build, logs in DIR. LIN_JOBS: parallel
# jobs (default: nproc).
lin_build() {
	local dir=$1 t0
	shift
	t0=$(date +%s)
	mkdir -p "$dir"
	if [ -f "$dir/CMakeCache.txt" ]; then
		lin_say "building in $dir (only what changed)"
	else
		lin_say "building in $dir: a first build takes one to two minutes on 2 cores"
	fi
	lin_say "logs: $dir/configure.log, $dir/build.log"
	: >"$dir/configure.log"
	: >"$dir/build.log"
	lin_logged "$dir/configure.log" "configuring (cmake)" \
		cmake -S "$LIN_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" || return
	lin_logged "$dir/build.log" "building (cmake --build, ${LIN_JOBS:-$(nproc)} jobs)" \
		cmake --build "$dir" -j "${LIN_JOBS:-$(nproc)}" || return
	lin_say "built $dir in $(( $(date +%s) - t0 ))s"
}
