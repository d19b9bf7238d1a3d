#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-no-toolkit.sh LIBDIR PROGRAM SONAME CUDA_ROOT - liblineage needs no CUDA toolkit to
# start (docs/cupti.md, "Loading libcupti"):
#  (a) LIBDIR/liblineage.so has no NEEDED entry of a CUDA library and no RUNPATH/RPATH into
#      the toolkit, nor has PROGRAM (linked with liblineage alone);
#  (b) PROGRAM, run by the dynamic loader with only LIBDIR and the system library
#      directories to search (no cache, no LD_LIBRARY_PATH), asking for the CUPTI backend
#      while libcupti is looked for by its plain name SONAME, starts, exits 0, writes a
#      trace, and the trace header's cupti status names the failed dlopen;
#  (c) the same with the default search (SONAME, then the toolkit's directory): it starts,
#      exits 0 and writes a trace, whatever CUPTI answers there.
# Exit 0 when all hold; 1 with a FAIL line per check that does not.
set -uo pipefail
[ $# -eq 4 ] || { echo "usage: $0 LIBDIR PROGRAM SONAME CUDA_ROOT" >&2; exit 64; }
libdir=$1 prog=$2 soname=$3 cuda=$4
lib=$libdir/liblineage.so
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0

# (a) the dynamic sections. A static liblineage (BUILD_SHARED_LIBS=OFF) is in PROGRAM:
# its section is the one to read.
files=("$prog")
[ -e "$libdir/liblineage.a" ] && [ ! -e "$lib" ] || files=("$lib" "$prog")
for f in "${files[@]}"; do
	readelf -d "$f" >"$t/dyn" || { echo "FAIL: readelf -d $f"; fail=1; continue; }
	if grep -E '\(NEEDED\)' "$t/dyn" | grep -Eiq 'libcupti|libcuda|libcudart|libnvidia'; then
		echo "FAIL (a): $f needs a CUDA library:"
		grep -E '\(NEEDED\)' "$t/dyn" | grep -Ei 'cupti|cuda|nvidia'
		fail=1
	fi
	if grep -E '\((RUNPATH|RPATH)\)' "$t/dyn" | grep -Fq "$cuda"; then
		echo "FAIL (a): $f searches the toolkit:"
		grep -E '\((RUNPATH|RPATH)\)' "$t/dyn"
		fail=1
	fi
done
[ "$fail" = 0 ] && echo "ok (a): no NEEDED CUDA library, no RUNPATH into $cuda"

# (b) and (c): the loader searches LIBDIR and the system directories only.
ldso=$(readelf -l "$prog" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
[ -x "$ldso" ] || { echo "FAIL: no program interpreter for $prog"; exit 1; }
sys=""
for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib/aarch64-linux-gnu \
	/usr/lib/aarch64-linux-gnu /lib64 /usr/lib64 /lib /usr/lib; do
	[ -d "$d" ] && sys="$sys:$d"
done
# A libcupti in a system directory (a distribution's CUDA packages) cannot be hidden: look
# for the name in an empty directory instead, still a plain failed dlopen.
want=$soname
for d in ${sys//:/ }; do
	[ -e "$d/$soname" ] && want=$t/absent/$soname
done

run() { # run NAME [VAR=VALUE...]: the program, hidden from the toolkit
	local name=$1
	shift
	env -u LD_LIBRARY_PATH -u LD_PRELOAD "$@" "$ldso" --inhibit-cache \
		--library-path "$libdir$sys" "$prog" "$t/$name.lintrace" >"$t/$name.out" 2>&1
	local rc=$?
	if [ "$rc" != 0 ]; then
		echo "FAIL ($name): exit $rc:"
		cat "$t/$name.out"
		fail=1
		return 1
	fi
	if [ ! -s "$t/$name.lintrace" ]; then
		echo "FAIL ($name): no trace written"
		fail=1
		return 1
	fi
	echo "ok ($name): started, traced host-side; $(grep '^cupti:' "$t/$name.out")"
}

if run b LINEAGE_CUPTI_LIBRARY="$want"; then
	if ! grep -Eq "^cupti: unavailable: dlopen failed: .*${soname//./\\.}" "$t/b.out"; then
		echo "FAIL (b): the cupti status does not name the failed dlopen of $want:"
		cat "$t/b.out"
		fail=1
	fi
fi
run c -u LINEAGE_CUPTI_LIBRARY || true

[ "$fail" = 0 ] && echo "check-no-toolkit: ok"
exit "$fail"
