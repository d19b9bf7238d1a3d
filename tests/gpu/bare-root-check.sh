#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/bare-root-check.sh [--root DIR] [--keep] - prove, without a GPU, that
# tests/gpu/run.sh builds on a machine like the lent GPU machine: a minimal Debian 12 root
# (debootstrap --variant=minbase) with a C/C++ compiler, CMake and Python and nothing else
# (no make, no pkg-config, none of the -dev packages lineage needs), the CUDA toolkit
# mounted read-only at the same path ($LIN_CUDA_ROOT, default /usr/local/cuda), the
# working tree copied in as the device machine receives it (tracked and untracked files
# git does not ignore) and the folder tests/gpu/prepare.sh makes (made here when absent).
# Inside it, in a mount namespace of its own, `run.sh --no-gpu` must build everything the
# GPU run needs and stop before the first GPU step with exit 78.
#
# Needs root (debootstrap, chroot, mount), debootstrap and a Debian mirror
# ($LIN_DEBIAN_MIRROR, default http://deb.debian.org/debian). DIR (default
# /tmp/lineage-bare-root) is reused when it already holds a root made by this script.
# Exit: 0 the bare root built the GPU run and stopped where asked; 1 it did not (the
# summary says which step); 64 bad arguments; 77 cannot be checked here (not root, no
# debootstrap, no CUDA toolkit): said on stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
rootfs=/tmp/lineage-bare-root keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--root) rootfs=${2:?--root needs a directory}; shift 2 ;;
	--keep) keep=1; shift ;;
	-h|--help) sed -n '3,19s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "bare-root-check.sh: unknown argument '$1' (see --help)" >&2; exit 64 ;;
	esac
done
cuda=${LIN_CUDA_ROOT:-/usr/local/cuda}
mirror=${LIN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
say() { printf 'bare-root-check: %s\n' "$*" >&2; }

[ "$(id -u)" = 0 ] || { say "needs root (debootstrap, chroot, mount): not checked"; exit 77; }
command -v debootstrap >/dev/null || { say "needs debootstrap (apt-get install debootstrap): not checked"; exit 77; }
[ -x "$cuda/bin/nvcc" ] || { say "no CUDA toolkit at $cuda (nvcc): not checked"; exit 77; }

# 1. The root: what the lent machine has, no more.
stamp="$rootfs/.lineage-bare-root"
pkgs=gcc,g++,libc6-dev,cmake,python3
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$pkgs" ]; then
	rm -rf "$rootfs"
	mkdir -p "$rootfs"
	say "debootstrap bookworm ($pkgs) into $rootfs from $mirror (a few minutes)"
	log=$(mktemp)
	if ! debootstrap --variant=minbase --include="$pkgs" bookworm "$rootfs" "$mirror" >"$log" 2>&1; then
		tail -30 "$log" >&2
		say "debootstrap failed (log $log)"
		exit 1
	fi
	rm -f "$log"
	echo "$pkgs" >"$stamp"
fi
# The root must be bare: no build tool or library the carried folder is there to supply.
for t in make pkg-config pkgconf ninja; do
	if chroot "$rootfs" sh -c "command -v $t" >/dev/null 2>&1; then
		say "the root has $t: it is not bare"
		exit 1
	fi
done
for h in usr/include/msgpack.h usr/include/xxhash.h usr/include/urcu-bp.h usr/include/criterion; do
	[ ! -e "$rootfs/$h" ] || { say "the root has /$h: it is not bare"; exit 1; }
done

# 2. What travels: the working tree as git sees it, and the prepared folder.
[ -x "$src/.gpu-prep/bin/pkg-config" ] || "$src/tests/gpu/prepare.sh"
rm -rf "$rootfs/src" "$rootfs/tmp/build-gpu" "$rootfs/tmp/out"
mkdir -p "$rootfs/src" "$rootfs/tmp/out"
(cd "$src" && git ls-files -z -co --exclude-standard | tar -cf - --null -T - 2>/dev/null) |
	tar -xf - -C "$rootfs/src"
cp -a "$src/.gpu-prep" "$rootfs/src/.gpu-prep"
mkdir -p "$rootfs$cuda"

# 3. run.sh --no-gpu inside, in a mount namespace of its own (the mounts go with it).
set +e
unshare --mount --propagation private sh -c '
	set -e
	mount --bind "$2" "$1$2" && mount -o remount,bind,ro "$1$2"
	mount -t proc proc "$1/proc"
	mount --bind /dev "$1/dev"
	exec chroot "$1" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LC_ALL=C \
		bash /src/tests/gpu/run.sh --no-gpu --build /tmp/build-gpu --out /tmp/out
' _ "$rootfs" "$cuda"
rc=$?
set -e
if [ "$rc" != 78 ]; then
	say "FAIL: run.sh --no-gpu exited $rc in the bare root, not 78 (built, stopped before the GPU)"
	[ -f "$rootfs/tmp/out/run.log" ] && tail -40 "$rootfs/tmp/out/run.log" >&2
	exit 1
fi
say "ok: the bare root built the GPU run from the working tree and the prepared folder" \
	"($(du -sk "$src/.gpu-prep" | cut -f1) KiB) and stopped before the GPU steps"
[ "$keep" = 1 ] || rm -rf "$rootfs/src" "$rootfs/tmp/build-gpu"
exit 0
