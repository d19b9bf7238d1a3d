# SPDX-License-Identifier: MIT
"""The torch wiring: GraphReplayer's capture/replay brackets (with a stand-in graph, no
torch needed), a forward pass in a launch bracket on the CPU (needs torch), and
torch.cuda streams and graphs (label gpu: needs a CUDA device)."""
import contextlib

import pytest

import lineage
from lineage.cudagraph import GraphReplayer


class FakeGraph:
    def __init__(self, rt):
        self.rt, self.replays = rt, []

    def replay(self):
        self.replays.append(self.rt.thread_current())


def test_graph_replayer_wiring_without_torch(rt):
    captured = []

    @contextlib.contextmanager
    def fake_capture(graph):
        captured.append(rt.thread_current())
        yield

    gr = GraphReplayer(rt, capture=fake_capture)
    g = FakeGraph(rt)
    with pytest.raises(lineage.NoContext):
        with gr.capture(g):
            pass
    with rt.request(), rt.epoch(name="capture") as e:
        with gr.capture(g):
            pass
    with rt.request() as r, rt.epoch(name="decode") as d:
        gr.replay(g)
        gr.replay(g)
    kind, replay_epoch, _ = g.replays[0]
    assert kind == "epoch" and replay_epoch not in (e.id, d.id)
    assert g.replays[0] != g.replays[1]      # one replay epoch per replay
    assert gr.gt.exec_ordinal(gr._id(g)) == 2
    gr.forget(g)
    with pytest.raises(lineage.NotFound):
        gr.gt.exec_ordinal(1 << 40)
    assert rt.stats()["misuse"] == 0   # a capture refused for no epoch is no misuse record


def _torch():
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed (Debian: python3-torch, CPU-only; CI does not "
                    "install it, docs/python.md)")
    return torch


def test_torch_forward_in_launch_bracket_cpu(rt):
    torch = _torch()
    model = torch.nn.Linear(8, 8)
    with rt.request(), rt.epoch(name="forward"):
        with rt.launch("forward"):
            y = model(torch.randn(2, 8))
    assert y.shape == (2, 8) and rt.stats()["misuse"] == 0


@pytest.mark.gpu
def test_torch_cuda_stream_and_graph(rt):
    torch = _torch()
    if not torch.cuda.is_available():
        pytest.skip("torch.cuda is not available (no CUDA device or a CPU-only torch)")
    model = torch.nn.Linear(16, 16).cuda()
    x = torch.randn(4, 16, device="cuda")
    s = torch.cuda.Stream()
    with rt.request(), rt.epoch(name="fwd"):
        with torch.cuda.stream(s), rt.launch("forward"):
            model(x)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.stream(s), rt.launch("warmup"):
            model(x)
        torch.cuda.current_stream().wait_stream(s)
    gr, g = GraphReplayer(rt), torch.cuda.CUDAGraph()
    with rt.request(), rt.epoch(name="capture"):
        with gr.capture(g):
            y = model(x)
    for _ in range(2):
        with rt.request(), rt.epoch(name="replay"):
            gr.replay(g)
    torch.cuda.synchronize()
    assert y.shape == (4, 16) and gr.gt.exec_ordinal(gr._id(g)) == 2
    assert rt.stats()["misuse"] == 0
