#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python-level launch path per task: capture on the submitting side, adopt in the
worker, one launch bracket, then leave. Prints ns per task for the whole Python
sequence, for the same C calls made from a C loop in this process (Runtime._bench_c:
lin_token_adopt, lin_scope_current, lin_launch_begin/end, lin_scope_exit), and the difference,
the interpreter's part. Figures only (docs/python.md, "Cost").

  PYTHONPATH=build/python/pkg python3 bench/python/bench_py.py [--tasks N] [--repeat R]
"""
import argparse
import os
import statistics
import tempfile
import time

import lineage


def per_task(fn, n, repeat):
    best = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn(n)
        best.append((time.perf_counter_ns() - t0) / n)
    return min(best), statistics.median(best)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=200000)
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    d = tempfile.mkdtemp()
    with lineage.Runtime(trace_path=os.path.join(d, "bench.lt")) as rt:
        with rt.request("bench"), rt.epoch(name="bench") as ep:
            launch = rt.launch  # as a serving loop would bind it

            def python_task(n):
                capture, adopt = lineage.capture, rt.adopt
                for _ in range(n):
                    tok = capture()                 # submitting side
                    with adopt(tok):                # worker side
                        with launch("kernel"):
                            pass                    # the GPU call goes here

            def python_empty(n):
                for _ in range(n):
                    pass

            def c_task(n):
                rt._bench_c(ep.token, n, "kernel")

            per_task(c_task, a.tasks, 1)        # warm-up: thread state, code paths
            py_best, py_med = per_task(python_task, a.tasks, a.repeat)
            loop_best, _ = per_task(python_empty, a.tasks, a.repeat)
            # the C part measured in C (no Python loop around it)
            c_ns = min(rt._bench_c(ep.token, a.tasks, "kernel") / a.tasks
                       for _ in range(a.repeat))
    print(f"lineage {lineage.library_version()} python bench: {a.tasks} tasks x {a.repeat}")
    print(f"python_task_ns       {py_best:8.1f}  (median {py_med:.1f}): capture + adopt + "
          f"launch bracket, per task")
    print(f"c_part_ns            {c_ns:8.1f}  (same C calls in a C loop)")
    print(f"interpreter_part_ns  {py_best - c_ns:8.1f}  (python_task - c_part)")
    print(f"empty_loop_ns        {loop_best:8.1f}  (a bare 'for' iteration, included above)")
    print(f"goal_1us             {'met' if py_best <= 1000 else 'NOT met'}")


if __name__ == "__main__":
    main()
