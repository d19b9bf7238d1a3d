# SPDX-License-Identifier: MIT
"""quickstart.py - examples/quickstart.c in Python (the README's "Your first trace"): a
request prepared on one thread, its work launched on a pool thread, the trace validated.

    python quickstart.py [TRACE]          # default quickstart-py.lintrace

Where no GPU is visible the runtime says so on stderr and the trace holds host-side
lineage only: the validation below prints why it has no GPU records, then checks the
host-side records alone (allow_empty, lineage-validate --allow-empty). Exit status: the
validator's.
"""
import sys

import lineage
import lineage.futures

path = sys.argv[1] if len(sys.argv) > 1 else "quickstart-py.lintrace"

with lineage.Runtime(trace_path=path, backend="cupti") as rt:
    pool = lineage.futures.ThreadPoolExecutor(2)  # submit captures, the worker adopts

    def forward(x):
        with rt.launch("saxpy"):  # pushes the epoch as CUPTI's external correlation id
            return 2 * x  # a CUDA kernel (torch, CuPy, ...) would run here

    with rt.request("POST /generate"), rt.epoch(name="prefill"):
        y = pool.submit(forward, 21).result()
    pool.shutdown()
print(f"wrote {path} (forward returned {y})")

report = lineage.validate(path)  # lineage-validate --json, as a dict
if report["gpu_records"] == 0:
    why = [f["detail"] for f in report["findings"] if f["cause"] == "no_gpu_records"]
    print("no GPU records:", why[0] if why else "(no detail)")
    report = lineage.validate(path, allow_empty=True)  # the host-side records alone
print(f"lineage-validate: exit {report['exit_code']}, {report['gpu_records']} GPU records, "
      f"{report['launches']} launch(es), {report['lost']} lost, {report['structural']} "
      "structural findings")
sys.exit(report["exit_code"])
