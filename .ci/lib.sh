# shellcheck shell=bash
# Shared by ./demo.sh, ./test.sh and .ci/run: install what lineage needs from Debian 12 when
# it is missing, then configure and build. Sourced, not run.

LIN_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Debian packages the build and the tests need. Optional ones are skipped by CMake when
# absent (CUPTI comes from the CUDA toolkit at /usr/local/cuda, not from Debian).
LIN_DEBS=(cmake make gcc g++ pkg-config liburcu-dev libmsgpack-dev libxxhash-dev
          libcriterion-dev clang valgrind libuv1-dev libtbb-dev
          libyajl-dev zlib1g-dev libsqlite3-dev gzip jq
          python3 python3-dev python3-setuptools python3-pytest python3-venv)
# Only for lineage-bench's peer_lttng_ust (docs/bench.md), installed by CI alone: the
# tests need neither, and installing lttng-tools on a host sets up a system daemon.
LIN_BENCH_DEBS=(liblttng-ust-dev lttng-tools)

lin_say() { printf '==> %s\n' "$*" >&2; }

lin_install_deps() {
	local missing=() p
	for p in "${LIN_DEBS[@]}" "${LIN_EXTRA_DEBS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	lin_say "installing Debian packages: ${missing[*]}"
	local sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || { echo "need root or sudo to install: ${missing[*]}" >&2; return 1; }
		sudo=(sudo)
	fi
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# lin_build DIR [cmake args...]: configure (once) and build.
lin_build() {
	local dir=$1; shift
	lin_say "building in $dir (logs: $dir/configure.log, $dir/build.log)"
	mkdir -p "$dir"
	cmake -S "$LIN_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"$dir/configure.log" 2>&1 ||
		{ cat "$dir/configure.log" >&2; return 1; }
	cmake --build "$dir" -j "$(nproc)" >"$dir/build.log" 2>&1 ||
		{ tail -n 60 "$dir/build.log" >&2; return 1; }
}
