#!/usr/bin/env bash
# bench/ab/launch-path-ab.sh BEFORE_BENCH AFTER_BENCH [ROUNDS]
# Times a change to the launch path: runs two builds' lineage-bench (--quick --no-cold)
# alternately, ROUNDS times each (default 5), and prints, per launch-path case, the median
# of each build's figures, their ratio and their ranges. Two builds cannot share one
# process, so the runs alternate instead: machine noise then falls on both alike.
# Exit status: 0; 64 usage; 1 a bench failed.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BEFORE_BENCH AFTER_BENCH [ROUNDS]" >&2; exit 64; }
a=$1 b=$2 n=${3:-5}
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
for _ in $(seq 1 "$n"); do
	"$a" --quick --no-cold | grep '^SUMMARY' | sed 's/^/A /' >>"$raw" || exit 1
	"$b" --quick --no-cold | grep '^SUMMARY' | sed 's/^/B /' >>"$raw" || exit 1
done
python3 - "$raw" <<'PY'
import collections, statistics as st, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    w, _, rest = line.strip().partition(' ')
    f = dict(kv.split('=', 1) for kv in rest.split()[1:] if '=' in kv)
    b, t = f['bench'], f.get('threads')
    if b in ('token_capture', 'adopt_close_warm', 'launch_begin_end', 'whole_path_lean'):
        d[b, w].append(float(f['ns_per_op']))
    elif b == 'whole_path' and t == '1' and 'dropped' not in f:
        d['whole_path', w].append(float(f['ns_per_op']))
    elif b == 'all_in' and t == '1':
        d['all_in launch_path_ns', w].append(float(f['launch_path_ns']))
    elif b == 'whole_path_cross_thread':
        d['cross_thread adopt_launch_close_ns', w].append(float(f['adopt_launch_close_ns']))
for k in sorted({k for k, _ in d}):
    a, b = d[k, 'A'], d[k, 'B']
    if not a or not b:
        continue
    print(f"{k:36s} before {st.median(a):7.2f} after {st.median(b):7.2f} ratio "
          f"{st.median(b) / st.median(a):.3f} (ranges {min(a):.1f}-{max(a):.1f}, "
          f"{min(b):.1f}-{max(b):.1f}; {len(a)} runs each)")
PY
