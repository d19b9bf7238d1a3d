#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A torch model served with lineage: a forward pass in a launch bracket on its own CUDA
stream, and a CUDA graph captured under one request and replayed for others.
Needs torch with CUDA (Debian's python3-torch is CPU-only: then it runs the forward pass
on the CPU and skips the graph part, saying so). docs/python.md, "PyTorch".

  python3 examples/torch_serving.py [trace.lt]
"""
import sys

import torch

import lineage
from lineage.cudagraph import GraphReplayer


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "torch_serving.lt"
    cuda = torch.cuda.is_available()
    dev = "cuda" if cuda else "cpu"
    model = torch.nn.Linear(64, 64).to(dev)
    with lineage.Runtime(trace_path=path, backend="cupti" if cuda else "none") as rt:
        stream = torch.cuda.Stream() if cuda else None
        for i in range(4):
            with rt.request(f"req{i}"), rt.epoch(name="forward"):
                with rt.launch("input"):
                    x = torch.randn(8, 64, device=dev)  # GPU work too: in a bracket
                if cuda:
                    with torch.cuda.stream(stream), rt.launch("forward"):
                        model(x)        # every kernel of the pass carries the epoch
                else:
                    with rt.launch("forward"):
                        model(x)
        if not cuda:
            print("torch.cuda not available: graph capture/replay skipped")
            return
        torch.cuda.synchronize()
        gr = GraphReplayer(rt)
        g = torch.cuda.CUDAGraph()
        with rt.request("capture"), rt.epoch(name="capture"):
            with rt.launch("input"):
                static_x = torch.randn(8, 64, device=dev)
            # warm up on a side stream, as torch.cuda.graph requires
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s), rt.launch("warmup"):
                model(static_x)
            torch.cuda.current_stream().wait_stream(s)
            with gr.capture(g):
                model(static_x)
        for i in range(3):
            with rt.request(f"replay{i}"), rt.epoch(name="decode"):
                gr.replay(g)
        torch.cuda.synchronize()
    print(f"trace: {path}")


if __name__ == "__main__":
    main()
