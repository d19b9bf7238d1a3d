# SPDX-License-Identifier: MIT
"""CUDA graph capture and replay for frameworks (PyTorch's torch.cuda.CUDAGraph): a graph
captured under one request's epoch and replayed for others gets one replay epoch per
replay, serving the replaying context's requests (docs/graphs.md, docs/python.md).

torch exposes no CUPTI graph or node ids, so the ids recorded here are this object's own
(stable, non-zero, per graph): the trace's host-side graph records are consistent, and
kernels join their replay through the replay epoch the launch bracket pushes. Nothing
here imports torch until a capture asks for torch.cuda.graph.
"""
import contextlib
import itertools
import threading


_ids = itertools.count(1)
_ids_lock = threading.Lock()


def _not_found():
    from . import NotFound as nf
    return nf


def _error():
    from . import Error as err
    return err


def _torch_capture(graph, **kw):
    import torch  # only when capturing a real torch graph
    return torch.cuda.graph(graph, **kw)


class GraphReplayer:
    """GraphReplayer(runtime, tracker=None, capture=torch.cuda.graph)

    ``with gr.capture(g): model(static_x)`` captures ``g`` under the current epoch;
    ``gr.replay(g)`` replays it under a replay epoch of the current epoch (thread: the
    launching one; the context is the current Python context). Thread-safe.
    """

    def __init__(self, runtime, tracker=None, capture=_torch_capture):
        self.rt = runtime
        self.gt = tracker if tracker is not None else runtime.graph_tracker()
        self._capture = capture
        self._graph_ids = {}
        self._lock = threading.Lock()
        self.errors = 0  # lineage errors absorbed (the captures and replays ran all the same)

    def _id(self, graph):
        with self._lock:
            gid = self._graph_ids.get(id(graph))
            if gid is None:
                with _ids_lock:
                    gid = next(_ids)
                self._graph_ids[id(graph)] = gid
            return gid

    @contextlib.contextmanager
    def capture(self, graph, **kw):
        """Capture ``graph`` under the current epoch. The capture always happens: with no
        current epoch (or a closed runtime) it is captured without lineage's records, and
        only a strict runtime raises (NoContext) instead."""
        try:
            cap = self.gt.capture_begin()      # NoContext: no current epoch
        except _error() as e:
            if self.rt.strict:
                raise
            cap, self.errors = None, self.errors + 1
            del e
        # torch launches kernels of its own around the capture (filling the RNG state it
        # registers for the graph, on the capture stream; seen on an H200): inside a launch
        # bracket they join the capturing epoch instead of being lost.
        with self.rt.launch("graph_capture"), self._capture(graph, **kw):
            yield graph
        if cap is None:
            return
        gid = self._id(graph)
        try:
            self.gt.capture_end(cap, gid, [])
            self.gt.exec_instantiated(gid, gid)    # torch instantiates at capture end
        except _error():
            if self.rt.strict:
                raise
            self.errors += 1

    def replay(self, graph, name="cudaGraphLaunch"):
        """Replay ``graph`` under a replay epoch of the current epoch; the replay always
        happens (without lineage's bracket where there is none to give)."""
        gid = self._id(graph)
        try:
            launch = self.gt.launch(gid, name)
        except _error():
            if self.rt.strict:
                raise
            self.errors += 1
            graph.replay()
            return
        with launch:
            graph.replay()

    def forget(self, graph):
        """The graph was destroyed (or reset): forget its ids. Never raises a lineage error
        into the app outside a strict runtime (a graph whose capture lineage could not
        record, a closed runtime or tracker): counted in ``errors``."""
        with self._lock:
            gid = self._graph_ids.pop(id(graph), None)
        if gid is None:
            return
        try:
            self.gt.exec_destroyed(gid)
            # The tracker knows a graph by its nodes; torch gives none, so there may be
            # nothing to forget.
            with contextlib.suppress(_not_found()):
                self.gt.destroyed(gid)
        except _error():
            if self.rt.strict:
                raise
            self.errors += 1
