#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/prepare.sh [--out DIR] - gather, on a Debian 12 machine with network, what a bare
# GPU machine lacks to build and run tests/gpu/run.sh: the Debian packages of the GPU build's
# dependencies (liburcu, msgpack-c, xxHash) and of the two build tools a bare machine may
# lack (pkgconf, ninja), downloaded with apt-get download and unpacked with dpkg -x into
# DIR/root (default .gpu-prep in the repository root, ignored by git). Nothing is installed
# on this machine. The pkg-config files are rewritten to find their prefix relative to
# themselves (${pcfiledir}), so DIR can be moved anywhere; DIR/bin/pkg-config runs the
# carried pkgconf. DIR/MANIFEST lists the packages, their versions and DIR's size.
#
# The GPU machine receives DIR beside the working tree (the device tool's carry list names
# it; docs/cupti.md, "On a GPU machine") and run.sh finds it there.
# Exit: 0 prepared; 1 a download or unpack failed (said on stderr); 64 bad arguments.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$PWD/.gpu-prep
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=${2:?--out needs a directory}; shift 2 ;;
	-h|--help) sed -n '3,15s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "prepare.sh: unknown argument '$1' (see --help)" >&2; exit 64 ;;
	esac
done

# What the GPU build needs beyond a compiler, CMake, Python and the CUDA toolkit: the -dev
# packages with their shared libraries, and pkgconf (pkg-config) and ninja.
debs=(liburcu-dev liburcu8 libmsgpack-dev libmsgpackc2 libxxhash-dev libxxhash0
      pkgconf pkgconf-bin libpkgconf3 ninja-build)
triplet=x86_64-linux-gnu

say() { printf 'prepare.sh: %s\n' "$*" >&2; }
command -v apt-get >/dev/null && command -v dpkg >/dev/null ||
	{ say "needs apt-get and dpkg (a Debian 12 machine)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say "downloading ${#debs[@]} Debian packages: ${debs[*]}"
if ! (cd "$tmp" && apt-get download "${debs[@]}" >"$tmp/apt.log" 2>&1); then
	# The package lists may be missing on a fresh machine.
	say "apt-get download failed; updating the package lists and trying again"
	apt-get update >>"$tmp/apt.log" 2>&1 || true
	(cd "$tmp" && apt-get download "${debs[@]}" >>"$tmp/apt.log" 2>&1) ||
		{ cat "$tmp/apt.log" >&2; say "apt-get download failed"; exit 1; }
fi

rm -rf "$out"
mkdir -p "$out/root" "$out/bin"
: >"$out/MANIFEST"
for f in "$tmp"/*.deb; do
	dpkg -x "$f" "$out/root" || { say "dpkg -x $f failed"; exit 1; }
	dpkg-deb -f "$f" Package Version | paste -sd' ' >>"$out/MANIFEST"
done
# What the build does not read.
rm -rf "$out/root/usr/share/doc" "$out/root/usr/share/man" "$out/root/usr/share/lintian" \
	"$out/root/usr/lib/$triplet/cmake"

# pkg-config files: prefix and libdir relative to the file (msgpack.pc says lib, not the
# multiarch directory its library is in).
for pc in "$out/root/usr/lib/$triplet/pkgconfig"/*.pc "$out/root/usr/share/pkgconfig"/*.pc; do
	[ -e "$pc" ] || continue
	case $pc in
	*/lib/$triplet/pkgconfig/*) pre='${pcfiledir}/../../..' lib='${pcfiledir}/..' ;;
	*) pre='${pcfiledir}/../..' lib='${prefix}/lib/'"$triplet" ;;
	esac
	# An absolute includedir (liburcu's multiarch one) moves under the prefix too.
	sed -i -e "s|^prefix=.*|prefix=$pre|" -e "s|^libdir=.*|libdir=$lib|" \
		-e 's|^includedir=/usr/|includedir=${prefix}/|' "$pc"
done

cat >"$out/bin/pkg-config" <<'SH'
#!/bin/sh
# The carried pkgconf, reading the carried .pc files only (tests/gpu/prepare.sh).
d=$(cd "$(dirname "$0")/.." && pwd)
PKG_CONFIG_LIBDIR="$d/root/usr/lib/x86_64-linux-gnu/pkgconfig:$d/root/usr/share/pkgconfig" \
LD_LIBRARY_PATH="$d/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	exec "$d/root/usr/bin/pkgconf" "$@"
SH
chmod +x "$out/bin/pkg-config"
ln -sf ../root/usr/bin/ninja "$out/bin/ninja"

# The prepared folder must answer for itself here.
for m in liburcu-bp liburcu-cds msgpack libxxhash; do
	"$out/bin/pkg-config" --exists "$m" || { say "the carried $m.pc is not found"; exit 1; }
done
if "$out/bin/pkg-config" --cflags --libs liburcu-bp liburcu-cds msgpack libxxhash |
	grep -qE '(^| )-[IL]/usr/'; then
	say "a carried .pc file still names /usr: $("$out/bin/pkg-config" --cflags --libs liburcu-bp msgpack)"
	exit 1
fi
"$out/bin/ninja" --version >/dev/null || { say "the carried ninja does not run"; exit 1; }
size=$(du -sk "$out" | cut -f1)
echo "size_kib $size" >>"$out/MANIFEST"
say "prepared $out: $(wc -l <"$out/MANIFEST") lines of MANIFEST, ${size} KiB"
if [ "$size" -gt 65536 ]; then
	say "$out is over 64 MiB: it cannot travel"
	exit 1
fi
