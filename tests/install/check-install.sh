#!/usr/bin/env bash
# check-install.sh BUILD_DIR SOURCE_DIR - run the README's install and link commands,
# exactly as written, against BUILD_DIR: the blocks of README.md that follow a line
# "<!-- install-test: NAME -->" ("shared" for a shared library or "static" for
# BUILD_SHARED_LIBS=OFF, then "cmake": find_package(lineage)). They run in one bash
# (-euo pipefail) in a scratch directory that holds what the README's commands expect of a
# clone: build or build-static (BUILD_DIR) and examples/. HOME is a scratch directory too,
# so the README's "$HOME/.local/lineage" prefix is a fresh one. Nothing is added to the
# commands: the programs must start as built (lineage.pc's RUNPATH), and start again with
# the loader's cache inhibited and LD_LIBRARY_PATH unset (a machine whose loader knows
# neither the prefix nor the CUDA toolkit). Then liblineage-otlp through lineage-otlp.pc
# and lineage::lineage_otlp, and the CUDA examples through pkg-config, likewise with no
# -rpath of their own. Exit 0: all work; 1: a step failed (named).
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lineage-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# block NAME: the fenced block after "<!-- install-test: NAME -->" in the README.
block() {
	awk -v name="$1" '
		$0 == "<!-- install-test: " name " -->" { want = 1; next }
		want == 1 && /^```/ { want = 2; next }
		want == 2 && /^```/ { exit }
		want == 2 { print }
	' "$src/README.md"
}
kind=shared dir=build
if [ ! -e "$build/liblineage.so" ]; then
	kind=static dir=build-static
fi
mkdir -p "$tmp/clone" "$tmp/home"
ln -s "$build" "$tmp/clone/$dir"
ln -s "$src/examples" "$tmp/clone/examples"
{
	block "$kind"
	block cmake
} >"$tmp/readme.sh"
for b in "$kind" cmake; do
	[ -n "$(block "$b")" ] || fail "README.md has no block after <!-- install-test: $b -->"
done
echo "running the README's install-test blocks '$kind' and 'cmake' ($(wc -l <"$tmp/readme.sh") lines)"
if ! (cd "$tmp/clone" && env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH -u CMAKE_PREFIX_PATH \
	HOME="$tmp/home" bash -euo pipefail "$tmp/readme.sh") >"$tmp/readme.log" 2>&1; then
	cat "$tmp/readme.log" >&2
	fail "the README's '$kind' + 'cmake' install blocks (above) did not run through"
fi
prefix=$tmp/home/.local/lineage
[ "$kind" = static ] && prefix=$tmp/home/.local/lineage-static
pc=$prefix/lib/pkgconfig
[ -f "$pc/lineage.pc" ] || fail "no $pc/lineage.pc after the README's install"
exes=$(find "$tmp/clone" -maxdepth 3 -type f -perm -u+x -name 'quickstart*' | sort)
[ "$(echo "$exes" | wc -w)" -ge 2 ] || fail "the README's blocks built no quickstart programs: $exes"
echo "installed headers, library, lineage.pc and the CMake package work as the README says"

# A machine whose loader knows neither the prefix nor the CUDA toolkit's libraries (no
# /etc/ld.so.conf entry, no LD_LIBRARY_PATH): the loader run with its cache inhibited sees
# the system directories and RUNPATHs alone.
ldso=$(find /lib64 /lib /usr/lib -maxdepth 2 -name 'ld-linux*.so.*' 2>/dev/null | head -1)
[ -n "$ldso" ] || fail "no ld-linux*.so found: the loader-cache check cannot run"
starts() {
	env -u LD_LIBRARY_PATH "$ldso" --inhibit-cache "$1" "$tmp/c.out" >"$tmp/run.log" 2>&1 || {
		cat "$tmp/run.log" >&2
		fail "$1 does not start without the loader cache (a machine with no loader entry for $prefix or CUDA)"
	}
}
for exe in $exes; do starts "$exe"; done
echo "the README's programs start with no loader entry for the prefix or the CUDA libraries"

# The OTLP stream's library (liblineage-otlp): a consumer attaches it as a tap and streams spans,
# built with pkg-config lineage-otlp and with CMake's lineage::lineage_otlp.
static=()
[ "$kind" = static ] && static=(--static)
cat >"$tmp/otlp.c" <<'C'
#include <stdio.h>
#include <lineage.h>
#include <lineage/otlp.h>
int main(int argc, char **argv)
{
	lin_runtime *rt;
	struct lin_otlp_opts so = {.sz = sizeof(so), .path = argv[1]};
	struct lin_tap_spec tap = lin_otlp_tap(&so);
	struct lin_runtime_opts o = {.sz = sizeof(o), .taps = &tap, .ntaps = 1};
	int err = argc == 2 ? lin_runtime_create(&o, &rt) : -1;
	if (err) {
		fprintf(stderr, "otlp consumer: %s\n", lin_strerror(err));
		return 1;
	}
	uint64_t req;
	if (lin_request_begin(rt, NULL, &req) || lin_request_end(rt, req))
		return 1;
	lin_runtime_free(rt);
	return 0;
}
C
# shellcheck disable=SC2046
cc "$tmp/otlp.c" $(PKG_CONFIG_PATH="$pc" pkg-config "${static[@]}" --cflags --libs lineage-otlp) \
	-pthread -o "$tmp/otlp-pkgconfig"
starts "$tmp/otlp-pkgconfig"
"$tmp/otlp-pkgconfig" "$tmp/a.otlp.json"
grep -q resourceSpans "$tmp/a.otlp.json" || fail "otlp-pkgconfig wrote no spans"
mkdir "$tmp/oconsumer"
cat >"$tmp/oconsumer/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.18)
project(oconsumer C)
find_package(lineage REQUIRED)
find_package(Threads REQUIRED)
add_executable(otlp $tmp/otlp.c)
target_link_libraries(otlp PRIVATE lineage::lineage_otlp Threads::Threads)
CM
cmake -S "$tmp/oconsumer" -B "$tmp/oconsumer/b" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/oconsumer/b" >/dev/null
starts "$tmp/oconsumer/b/otlp"
"$tmp/oconsumer/b/otlp" "$tmp/b.otlp.json"
grep -q resourceSpans "$tmp/b.otlp.json" || fail "the CMake otlp consumer wrote no spans"
echo "installed liblineage-otlp, lineage-otlp.pc and lineage::lineage_otlp work"

# lineage/cupti.h's functions exist only in a library built with CUPTI, which defines
# LIN_HAVE_CUPTI for its consumers: through the CMake target and through pkg-config alike.
pc_cflags=$(PKG_CONFIG_PATH="$pc" pkg-config --cflags lineage)
if grep -rqs LIN_HAVE_CUPTI "$prefix" --include='*.cmake'; then
	case "$pc_cflags" in *-DLIN_HAVE_CUPTI=1*) ;; *) fail "lineage.pc lacks -DLIN_HAVE_CUPTI=1 (a CUPTI build): $pc_cflags" ;; esac
	echo "a CUPTI build says so to pkg-config and CMake consumers (LIN_HAVE_CUPTI)"
else
	case "$pc_cflags" in *LIN_HAVE_CUPTI*) fail "lineage.pc defines LIN_HAVE_CUPTI in a build without CUPTI" ;; esac
	echo "a build without CUPTI defines no LIN_HAVE_CUPTI"
fi

# The CUDA examples build from the installed headers alone, as their header comments say
# (they run on a GPU only: ctest -L gpu). Not checked, and said so, without nvcc or CUPTI.
cuda=${LIN_CUDA_ROOT:-/usr/local/cuda}
if [ -x "$cuda/bin/nvcc" ] && grep -rqs LIN_HAVE_CUPTI "$prefix" --include='*.cmake'; then
	for ex in pool_lineage attrib_causes; do
		# shellcheck disable=SC2046
		"$cuda/bin/nvcc" -std=c++17 -arch=sm_90 "$src/examples/$ex.cu" \
			$(PKG_CONFIG_PATH="$pc" pkg-config "${static[@]}" --cflags --libs lineage msgpack |
				sed 's/-Wl,/-Xlinker /g') \
			-I"$cuda/include" -L"$cuda/lib64" -lcupti -o "$tmp/$ex"
		[ -x "$tmp/$ex" ] || fail "examples/$ex.cu did not build"
		echo "examples/$ex.cu builds against the installed package with pkg-config"
	done
else
	echo "not checked: examples/pool_lineage.cu, examples/attrib_causes.cu (no nvcc at $cuda, or a library without CUPTI)"
fi
