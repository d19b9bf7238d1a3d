# SPDX-License-Identifier: MIT
"""An asyncio + executor serving loop with a batching scheduler thread, traced on the
simulator backend and validated by lineage-validate against the truth this test keeps
from what it did (docs/python.md, "Testing on the simulator")."""
import asyncio
import queue
import threading

import pytest

import lineage
import lineage.futures
from conftest import validator_or_skip
import _truth

N_REQUESTS = 48
BATCH = 6


class Server:
    def __init__(self, rt, sim, gt):
        self.rt, self.sim, self.gt = rt, sim, gt
        self.pool = lineage.futures.ThreadPoolExecutor(4)
        self.labels = []              # (kind, grid, [requests]): the ground truth
        self.lock = threading.Lock()
        self.q = queue.Queue()
        self.exec_id = None

    def label(self, grids, requests):
        with self.lock:
            for g in grids:
                assert g > 0
                self.labels.append((_truth.KERNEL, g, list(requests)))

    # Worker-side work: runs under the context the pool's submit captured.
    def kernel(self, name, stream, requests):
        with self.rt.launch(name):
            grid = self.sim.launch_kernel(stream, name)
        self.label([grid], requests)

    def replay(self, stream, requests):
        with self.gt.launch(self.exec_id, "cudaGraphLaunch") as gl:
            assert gl.replay[0] != 0 and gl.replay[1] >= 1
            grids = self.sim.graph_launch(self.exec_id, stream)
        self.label(grids, requests)

    def build_graph(self, stream):
        # Captured under one request's epoch; replayed for the others.
        cap = self.gt.capture_begin()
        self.sim.capture_begin(stream)
        for name in ("g_attn", "g_mlp"):
            with self.rt.launch(name):
                assert self.sim.launch_kernel(stream, name) == 0   # captured, not run
        graph, nodes = self.sim.capture_end(stream)
        self.gt.capture_end(cap, graph, nodes)
        exec_id, pairs = self.sim.graph_instantiate(graph)
        self.gt.exec_instantiated(graph, exec_id)
        for orig, clone in pairs:
            self.gt.node_cloned(orig, clone, graph, exec_id)
        self.exec_id = exec_id

    # The batching scheduler: one thread, no context of its own; a batch's epoch serves
    # every request in it (fan-in) and the forward pass runs on the pool.
    def scheduler(self, loop):
        while True:
            item = self.q.get()
            if item is None:
                return
            batch = [item]
            while len(batch) < BATCH:
                try:
                    nxt = self.q.get(timeout=0.002)
                except queue.Empty:
                    break
                if nxt is None:
                    self.q.put(None)
                    break
                batch.append(nxt)
            ids = [lineage.Token.parse(text).id for text, _ in batch]  # tokens as text
            with self.rt.epoch(*ids, name="batch_forward"):
                self.pool.submit(self.kernel, "forward", 1, ids).result()
            for _, fut in batch:
                loop.call_soon_threadsafe(fut.set_result, None)

    async def handle(self, i, loop):
        with self.rt.request(f"req{i}", user_id=i) as r:
            with self.rt.epoch(name="preprocess"):
                # run_in_executor goes through the lineage pool's submit: carries it
                await loop.run_in_executor(self.pool, self.kernel, "tokenize", 2, [r.id])
            fut = loop.create_future()
            self.q.put((str(lineage.capture()), fut))
            await fut
            if i % 4 == 1:
                with self.rt.epoch(name="decode"):
                    await loop.run_in_executor(self.pool, self.replay, 3, [r.id])
            await asyncio.sleep(0)

    async def serve(self):
        loop = asyncio.get_running_loop()
        with self.rt.request("warmup") as w:
            with self.rt.epoch(name="capture"):
                self.build_graph(3)
            with self.rt.epoch(name="warmup_replay"):
                self.replay(3, [w.id])
        sched = threading.Thread(target=self.scheduler, args=(loop,))
        sched.start()
        try:
            await asyncio.gather(*(self.handle(i, loop) for i in range(N_REQUESTS)))
        finally:
            self.q.put(None)
            sched.join()
            self.pool.shutdown()


def test_serving_loop_validates_against_truth(sim_module, tmp_path):
    exe = validator_or_skip()
    trace, truth = str(tmp_path / "serve.lt"), str(tmp_path / "serve.truth")
    sim = sim_module.Sim(seed=11)
    with lineage.Runtime(trace_path=trace, backend=sim) as rt:
        gt = rt.graph_tracker()
        srv = Server(rt, sim, gt)
        asyncio.run(srv.serve())
        assert rt.stats()["misuse"] == 0
    _truth.write(truth, srv.labels)
    # every request: tokenize + its batch's forward; a quarter replay a 2-node graph
    assert len(srv.labels) >= N_REQUESTS + N_REQUESTS // BATCH
    res = lineage.validate(trace, expect=truth)
    assert res["truth_records"] == len(srv.labels), res
    assert res["gpu_records"] == len(srv.labels), res
    assert res["lost"] == 0 and res["incorrect"] == 0 and res["ambiguous"] == 0, res
    assert res["matched"] == len(srv.labels), res
    assert res["exit_code"] == 0, res["findings"]
    assert exe


def test_serving_loop_wrong_truth_is_caught(sim_module, tmp_path):
    """The same check fails when the truth is wrong: the test above cannot pass vacuously."""
    validator_or_skip()
    trace, truth = str(tmp_path / "bad.lt"), str(tmp_path / "bad.truth")
    sim = sim_module.Sim(seed=3)
    labels = []
    with lineage.Runtime(trace_path=trace, backend=sim) as rt:
        with rt.request("a") as a, rt.request("b") as b:
            for r in (a, b):
                with rt.epoch(r), rt.launch("k"):
                    labels.append((_truth.KERNEL, sim.launch_kernel(1, "k"), [r.id]))
    # swap the two labels' requests
    (k1, g1, r1), (k2, g2, r2) = labels
    _truth.write(truth, [(k1, g1, r2), (k2, g2, r1)])
    res = lineage.validate(trace, expect=truth)
    assert res["incorrect"] == 2 and res["exit_code"] == 1, res
    _truth.write(truth, labels)
    assert lineage.validate(trace, expect=truth)["exit_code"] == 0
