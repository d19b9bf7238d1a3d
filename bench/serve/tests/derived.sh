#!/bin/sh
# SPDX-License-Identifier: MIT
# derived.sh PYTHON REALTRACES_DIR WORKDIR: bench/serve/kernels.json is what
# derive_kernels.py makes of the recorded vLLM decode step (exit 77, skipped, when the
# real-trace directory is absent).
py=$1 real=$2 work=$3
here=$(dirname "$0")/..
src="$real/tracelens_rocm_vllm_decode_full_graph_replay.json.gz"
[ -f "$src" ] || { echo "derived.sh: $src absent: skipped"; exit 77; }
mkdir -p "$work" || exit 1
"$py" "$here/derive_kernels.py" "$src" "$work/kernels.json" || exit 1
cmp "$here/kernels.json" "$work/kernels.json" ||
	{ echo "derived.sh: bench/serve/kernels.json differs from what derive_kernels.py makes" >&2; exit 1; }
echo "derived.sh: kernels.json regenerates identically"
