#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""derive_kernels.py TRACE.json.gz OUT.json: the serving workload's kernel table
(bench/serve/kernels.json, docs/serving.md "Kernels") from one vLLM decode step recorded
by Kineto + roctracer: the kernels of the one graph replay (the correlation id of the
trace's hipGraphLaunch), cut into a prologue, layers and an epilogue at the RMSNorm kernels
(two per layer), and the eager kernels the step launches after the replay (logits and
sampling). Per layer position: the kernel's short name and its durations in that position
over every layer of the same shape (ns), so the workload draws durations from the real
spread, not a uniform one. Standard library only; run once, offline:

    python3 bench/serve/derive_kernels.py \\
        ../shared/realtraces/tracelens_rocm_vllm_decode_full_graph_replay.json.gz \\
        bench/serve/kernels.json
"""
import collections
import gzip
import json
import re
import sys


def short(name):
    """A kernel name without template arguments or parameter lists, at most 48 chars."""
    n = re.sub(r"^void ", "", name)
    n = n.split("(")[0]
    depth, out = 0, []
    for ch in n:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)[:48]


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 64
    src, out = argv[1], argv[2]
    with gzip.open(src, "rt") as f:
        ev = json.load(f)["traceEvents"]
    launches = [e for e in ev if e.get("cat") == "cuda_runtime" and e["name"].endswith("GraphLaunch")]
    if len(launches) != 1:
        print(f"derive_kernels: {src}: expected one graph launch, found {len(launches)}",
              file=sys.stderr)
        return 1
    corr = launches[0]["args"]["correlation"]
    kernels = sorted((e for e in ev if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    graph = [e for e in kernels if e["args"].get("correlation") == corr]
    after = [e for e in kernels if e["args"].get("correlation", 0) > corr]
    norms = [i for i, e in enumerate(graph) if "Rmsnorm" in e["name"]]
    if len(norms) < 3 or len(norms) % 2 != 1:
        print(f"derive_kernels: {src}: {len(norms)} RMSNorm kernels, expected 2 per layer + 1",
              file=sys.stderr)
        return 1
    ns = lambda e: int(round(e["dur"] * 1000))  # Kineto's dur is in us
    prologue = [(short(e["name"]), ns(e)) for e in graph[:norms[0]]]
    layers = []
    for i in range(0, len(norms) - 1, 2):
        layers.append(graph[norms[i]:norms[i + 2]])
    epilogue = [(short(e["name"]), ns(e)) for e in graph[norms[-1]:]]
    shapes = collections.OrderedDict()
    for layer in layers:
        key = tuple(short(e["name"]) for e in layer)
        shapes.setdefault(key, []).append([ns(e) for e in layer])
    table = {
        "source": "tracelens_rocm_vllm_decode_full_graph_replay.json.gz (AMD-AGI/TraceLens "
                  "tests/traces/inference/vllm_decode_full/graph_execution.json.gz @ "
                  "171dd74721ca1ec45709e5805b68ae1f65e27811, MIT): one vLLM decode step on "
                  "an MI300X, Kineto + roctracer",
        "derived_by": "bench/serve/derive_kernels.py",
        "graph_kernels": len(graph),
        "layers": len(layers),
        "prologue": [{"name": n, "dur_ns": [d]} for n, d in prologue],
        "layer_shapes": [
            {"count": len(durs), "kernels": [
                {"name": name, "dur_ns": sorted(col)}
                for name, col in zip(key, zip(*durs))]}
            for key, durs in shapes.items()],
        # Layer shapes in the order the replay ran them (index into layer_shapes).
        "layer_order": [list(shapes).index(tuple(short(e["name"]) for e in l)) for l in layers],
        "epilogue": [{"name": n, "dur_ns": [d]} for n, d in epilogue],
        "after_graph": [{"name": short(e["name"]), "dur_ns": [ns(e)]} for e in after],
    }
    with open(out, "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")
    per_layer = [len(s["kernels"]) for s in table["layer_shapes"]]
    print(f"derive_kernels: {len(graph)} graph kernels = {len(prologue)} prologue + "
          f"{len(layers)} layers of {per_layer} kernels + {len(epilogue)} epilogue; "
          f"{len(after)} eager after the replay -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
