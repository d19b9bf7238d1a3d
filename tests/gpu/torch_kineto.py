#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/gpu/torch_kineto.py OUT.json - a PyTorch-profiler (Kineto) trace of serving-shaped
work on a real GPU, kept as input for lineage-validate's and lineage-explain's importers
(docs/importers.md): requests as record_function ranges on the main thread, eager forward
passes, a CUDA graph captured once and replayed per request, a second stream waiting on an
event, and a forward pass handed to a pool thread (the handoff Kineto's per-thread
correlation cannot follow). The truth is printed as JSON lines ("truth": which request each
step served), so a later run can score the import. Exit 0 when the trace was written, 77
without a CUDA device, 1 otherwise.
"""
import concurrent.futures
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch_kineto: no CUDA device")
        return 77
    dev = "cuda"
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 1024)).to(dev)
    x = torch.randn(64, 1024, device=dev)
    static_x = torch.randn(64, 1024, device=dev)
    side = torch.cuda.Stream()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    # Warm up on a side stream, then capture the decode step as a graph.
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = model(static_x)
    torch.cuda.synchronize()
    truth = []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for r in range(4):
            with record_function(f"request_{r}"):
                model(x)                                    # prefill, eager
                truth.append({"request": r, "step": "prefill", "thread": "main"})
                graph.replay()                              # decode, graph replay
                truth.append({"request": r, "step": "decode_graph", "thread": "main"})
                ev = torch.cuda.Event()
                ev.record()
                side.wait_event(ev)
                with torch.cuda.stream(side):
                    model(x)                                # on a second stream after an event
                truth.append({"request": r, "step": "side_stream", "thread": "main"})
                torch.cuda.current_stream().wait_stream(side)
                pool.submit(lambda: model(x)).result()      # handed to a pool thread
                truth.append({"request": r, "step": "pool_forward", "thread": "pool"})
        torch.cuda.synchronize()
    pool.shutdown()
    prof.export_chrome_trace(sys.argv[1])
    for t in truth:
        print(json.dumps({"truth": t}))
    n_kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    print(f"torch_kineto: torch {torch.__version__}, {n_kernels} device events, trace "
          f"{sys.argv[1]}; graph output {tuple(static_y.shape)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
