#!/usr/bin/env bash
# check-install.sh BUILD_DIR SOURCE_DIR - install the build into a temporary prefix and
# build examples/quickstart.c against it twice: with pkg-config and with CMake's
# find_package(lineage). Both programs must run and write a trace.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
pc="$tmp/prefix/lib/pkgconfig"
[ -d "$pc" ] || pc=$(dirname "$(find "$tmp/prefix" -name lineage.pc | head -1)")
# A static library (BUILD_SHARED_LIBS=OFF) is linked with its private dependencies.
static=()
[ -e "$(dirname "$pc")/liblineage.so" ] || static=(--static)
cc "$src/examples/quickstart.c" $(PKG_CONFIG_PATH="$pc" pkg-config "${static[@]}" --cflags --libs lineage) \
	-pthread -Wl,-rpath,"$(dirname "$pc")" -o "$tmp/qs-pkgconfig"
"$tmp/qs-pkgconfig" "$tmp/a.lintrace" >/dev/null
mkdir "$tmp/consumer"
cat >"$tmp/consumer/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(lineage 0.4 REQUIRED)
find_package(Threads REQUIRED)
add_executable(qs $src/examples/quickstart.c)
target_link_libraries(qs PRIVATE lineage::lineage Threads::Threads)
CM
cmake -S "$tmp/consumer" -B "$tmp/consumer/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
	-DCMAKE_BUILD_RPATH="$(dirname "$pc")" >/dev/null
cmake --build "$tmp/consumer/b" >/dev/null
"$tmp/consumer/b/qs" "$tmp/b.lintrace" >/dev/null
[ -s "$tmp/a.lintrace" ] && [ -s "$tmp/b.lintrace" ]
echo "installed headers, library, lineage.pc and the CMake package work"

# The OTLP stream's library (liblineage-otlp): a consumer enables it and streams spans,
# built with pkg-config lineage-otlp and with CMake's lineage::lineage_otlp.
cat >"$tmp/otlp.c" <<'C'
#include <stdio.h>
#include <lineage.h>
#include <lineage/otlp.h>
int main(int argc, char **argv)
{
	lin_runtime *rt;
	struct lin_runtime_opts o = {.sz = sizeof(o), .otlp_path = argv[1]};
	int err = argc == 2 ? lin_otlp_enable() : -1;
	if (!err)
		err = lin_runtime_create(&o, &rt);
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
cc "$tmp/otlp.c" $(PKG_CONFIG_PATH="$pc" pkg-config "${static[@]}" --cflags --libs lineage-otlp) \
	-pthread -Wl,-rpath,"$(dirname "$pc")" -o "$tmp/otlp-pkgconfig"
"$tmp/otlp-pkgconfig" "$tmp/a.otlp.json"
grep -q resourceSpans "$tmp/a.otlp.json"
mkdir "$tmp/oconsumer"
cat >"$tmp/oconsumer/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.18)
project(oconsumer C)
find_package(lineage 0.4 REQUIRED)
find_package(Threads REQUIRED)
add_executable(otlp $tmp/otlp.c)
target_link_libraries(otlp PRIVATE lineage::lineage_otlp Threads::Threads)
CM
cmake -S "$tmp/oconsumer" -B "$tmp/oconsumer/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
	-DCMAKE_BUILD_RPATH="$(dirname "$pc")" >/dev/null
cmake --build "$tmp/oconsumer/b" >/dev/null
"$tmp/oconsumer/b/otlp" "$tmp/b.otlp.json"
grep -q resourceSpans "$tmp/b.otlp.json"
echo "installed liblineage-otlp, lineage-otlp.pc and lineage::lineage_otlp work"

# A machine whose loader knows nothing of the CUDA toolkit's libraries (no /etc/ld.so.conf
# entry, no LD_LIBRARY_PATH): the loader run with its cache inhibited sees the system
# directories and RUNPATHs alone. A library built with CUPTI needs libcupti from the
# toolkit; the installed library must find it by itself.
ldso=$(find /lib64 /lib /usr/lib -maxdepth 2 -name 'ld-linux*.so.*' 2>/dev/null | head -1)
if [ -n "$ldso" ]; then
	for exe in "$tmp/qs-pkgconfig" "$tmp/consumer/b/qs" "$tmp/otlp-pkgconfig"; do
		if ! env -u LD_LIBRARY_PATH "$ldso" --inhibit-cache "$exe" "$tmp/c.out" >"$tmp/run.log" 2>&1; then
			cat "$tmp/run.log" >&2
			echo "FAIL: $exe does not start without the loader cache (a machine with no loader entry for CUDA)" >&2
			exit 1
		fi
	done
	echo "consumers start with no loader entry for the CUDA libraries"
else
	echo "skipped: the loader-cache check (no ld-linux found)"
fi

# The CUDA examples build from the installed headers alone, as their header comments say
# (they run on a GPU only: ctest -L gpu). Skipped, and said so, without nvcc or CUPTI.
cuda=${LIN_CUDA_ROOT:-/usr/local/cuda}
if [ -x "$cuda/bin/nvcc" ] && grep -rqs LIN_HAVE_CUPTI "$tmp/prefix" --include='*.cmake'; then
	for ex in pool_lineage attrib_causes; do
		# shellcheck disable=SC2046
		"$cuda/bin/nvcc" -std=c++17 -arch=sm_90 "$src/examples/$ex.cu" \
			$(PKG_CONFIG_PATH="$pc" pkg-config "${static[@]}" --cflags --libs lineage msgpack |
				sed 's/-Wl,/-Xlinker /g') \
			-I"$cuda/include" -L"$cuda/lib64" -lcupti -Xlinker -rpath,"$(dirname "$pc")" \
			-o "$tmp/$ex"
		[ -x "$tmp/$ex" ]
		echo "examples/$ex.cu builds against the installed package with pkg-config"
	done
else
	echo "skipped: examples/pool_lineage.cu, examples/attrib_causes.cu (no nvcc at $cuda, or a library without CUPTI)"
fi
