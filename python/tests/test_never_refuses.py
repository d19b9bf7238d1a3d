# SPDX-License-Identifier: MIT
"""The work always runs (docs/python.md, "The work always runs"): with runtimes in their
default mode, no block lineage gives and no executor task changes whether or with what
result the user's code runs, whatever lineage could not do (no context, a token whose epoch
retired, a damaged or foreign token, the runtime closed meanwhile); the function runs,
returns its value and raises only its own exceptions; the trace, the stats and the
validator say what happened. The fan-out-and-gather pattern validates with every task's
GPU records joined to its request, the late ones counted."""
import asyncio
import contextlib
import threading

import pytest

import lineage
import lineage.futures
from conftest import validator_or_skip
import _truth

pytestmark = pytest.mark.lenient


class Boom(Exception):
    pass


def body(result=42):
    """A task: its value, and the context it saw."""
    return result, lineage.current()


def test_the_default_is_lenient(rt):
    assert rt.strict is False


def test_launch_without_context_runs_and_is_recorded(rt):
    ran = []
    with rt.launch("k"):
        ran.append(lineage.current())
    assert ran == [None]
    st = rt.stats()
    assert st["absorbed"] == 1 and st["misuse"] == 1   # the C runtime recorded no_context


def test_epoch_without_request_runs_with_the_context_unchanged(rt):
    with rt.epoch() as e:
        assert e.id == 0 and e.token is None and lineage.current() is None
    assert rt.stats()["absorbed"] == 1


def test_own_exceptions_pass_through_unchanged(rt):
    with pytest.raises(Boom):
        with rt.launch("k"):          # no context: absorbed; the user's error is not
            raise Boom()
    with pytest.raises(Boom):
        with rt.request(), rt.epoch(), rt.launch("k"):
            raise Boom()


def test_foreign_token_runs_with_no_context(rt, tmp_path):
    with rt.request() as r:
        good = r.token
        with lineage.Runtime(trace_path=str(tmp_path / "other.lt")) as other:
            with other.request() as o:
                foreign = o.token
            # A foreign token adopted here: the block runs with no context, never r's.
            with rt.adopt(foreign) as t:
                assert t is None and lineage.current() is None
            assert lineage.current() == good
    assert rt.stats()["absorbed"] == 1
    assert rt.stats()["misuse"] == 1  # foreign_token, in the trace


def test_stale_text_token_runs_with_no_context(rt):
    with rt.request() as r:
        text = str(r.token)
    with rt.adopt(lineage.Token.parse(text)) as t:
        assert t is None and lineage.current() is None
    assert rt.stats()["absorbed"] == 1


@pytest.mark.parametrize("text", ["", "lin1.garbage", "not a token", "lin1." + "0" * 16 + ".1.1.1.1.00000000",
                                  "\udcff", "LIVE\0junk"])
def test_adopt_of_damaged_text_runs_with_no_context(rt, text):
    # Token.parse(text) raises BadToken/InvalidArgument before the work; rt.adopt(text)
    # parses inside the block: the work runs with no context, bad_token is recorded. Text
    # that cannot be encoded, or a live token's text with a NUL and more after it, is
    # damaged too (never the token before the NUL).
    with rt.request() as r:
        text = text.replace("LIVE", str(r.token))
        ran = []
        with rt.adopt(text) as t:
            ran.append((t, lineage.current()))
        assert ran == [(None, None)] and lineage.current() == r.token
        with lineage.adopt(text, runtime=rt):
            ran.append(lineage.current())
        assert ran[1] is None
    st = rt.stats()
    assert st["absorbed"] == 2 and st["misuse"] == 2  # bad_token, twice, in the trace


def test_adopt_of_live_text_joins(rt):
    with rt.request() as r:
        text = str(r.token)
        with rt.adopt(text) as t:
            assert t == r.token and lineage.current() == r.token
        with lineage.adopt(text, runtime=rt) as t:
            assert t == r.token
        with lineage.adopt(text):  # no runtime named: the block runs with no context
            assert lineage.current() is None
    assert rt.stats()["absorbed"] == 0 and rt.stats()["misuse"] == 0


def test_adopt_of_damaged_text_raises_under_strict(trace):
    with lineage.Runtime(trace_path=trace, strict=True) as srt:
        with pytest.raises(lineage.BadToken):
            with srt.adopt("lin1.garbage"):
                pytest.fail("the block ran under a strict runtime")


def test_adopt_of_a_parsed_token_without_runtime_runs(rt):
    with rt.request() as r:
        parsed = lineage.Token.parse(str(r.token))
    with lineage.adopt(parsed):
        assert lineage.current() is None


def test_closed_runtime_blocks_run(trace):
    rt = lineage.Runtime(trace_path=trace)
    req = rt.request("r")
    tok = req.token
    rt.close()
    with req:
        pass
    with rt.request("after") as r2, rt.epoch() as e, rt.launch("k") as la, rt.adopt(tok):
        assert r2.id == 0 and e.id == 0 and la.ext_id == 0 and lineage.current() is None
    assert lineage.current() is None


def test_executor_runs_every_task_whatever_lineage_could_not_do(trace, tmp_path):
    rt = lineage.Runtime(trace_path=trace)
    with lineage.futures.ThreadPoolExecutor(2) as pool:
        # no context
        assert pool.submit(body).result()[0] == 42
        # the request ended before the task ran: late, under that request
        gate = threading.Event()
        hold = pool.submit(gate.wait)
        hold2 = pool.submit(gate.wait)
        with rt.request() as r:
            late = pool.submit(body, 7)
        gate.set()
        hold.result(), hold2.result()
        value, ctx = late.result()
        assert value == 7 and ctx.id == r.id
        # the user's own exception, unchanged
        with rt.request():
            f = pool.submit(lambda: (_ for _ in ()).throw(Boom()))
        with pytest.raises(Boom):
            f.result()
        # the runtime closed while a task waited: the task runs with no context
        gate2 = threading.Event()
        h1, h2 = pool.submit(gate2.wait), pool.submit(gate2.wait)
        with rt.request():
            after_close = pool.submit(body, 9)
        rt.close()
        gate2.set()
        h1.result(), h2.result()
        assert after_close.result() == (9, None)


def test_asyncio_run_in_executor_runs_late_work(rt):
    pool = lineage.futures.ThreadPoolExecutor(1)
    gate = threading.Event()

    async def main():
        loop = asyncio.get_running_loop()
        pool.submit(gate.wait)
        with rt.request() as r, rt.epoch():
            fut = loop.run_in_executor(pool, body, 3)
        gate.set()
        value, ctx = await fut
        return value, ctx, r.id

    value, ctx, rid = asyncio.run(main())
    pool.shutdown()
    assert value == 3 and ctx.kind == "epoch"
    assert rt.lookup is not None and rid > 0
    assert rt.stats()["late_adopts"] == 1


def test_graph_replayer_captures_and_replays_without_context(rt):
    from lineage.cudagraph import GraphReplayer

    class Graph:
        replays = 0

        def replay(self):
            Graph.replays += 1

    captured = []
    gr = GraphReplayer(rt, capture=lambda g: _Ctx(captured))
    g = Graph()
    with gr.capture(g):                 # no epoch: captured all the same
        pass
    gr.replay(g)                         # no epoch: replayed all the same
    assert captured == [1] and Graph.replays == 1 and gr.errors >= 1


class _Ctx:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append(1)

    def __exit__(self, *a):
        return False


def test_fan_out_and_gather_validates_with_late_work_counted(sim_module, tmp_path):
    """The ordinary way to fan out and gather: submit inside the request and epoch blocks,
    gather after them. The epoch retires when its block ends, before most tasks run: every
    task's GPU record joins its request all the same, the late ones counted."""
    validator_or_skip()
    trace, truth = str(tmp_path / "fan.lt"), str(tmp_path / "fan.truth")
    sim = sim_module.Sim(seed=5)
    labels, lock = [], threading.Lock()
    gate = threading.Event()

    def work(requests):
        gate.wait()
        with rt.launch("k"):
            grid = sim.launch_kernel(1, "k")
        with lock:
            labels.append((_truth.KERNEL, grid, requests))
        return grid

    with lineage.Runtime(trace_path=trace, backend=sim) as rt, \
            lineage.futures.ThreadPoolExecutor(4) as pool:
        futs = []
        for i in range(12):
            with rt.request(f"r{i}") as r, rt.epoch():
                futs.append(pool.submit(work, [r.id]))
        gate.set()                       # every epoch retired before its task launches
        grids = [f.result() for f in futs]
        assert all(g > 0 for g in grids)
        assert rt.stats()["late_launches"] == 12
    _truth.write(truth, labels)
    res = lineage.validate(trace, expect=truth)
    assert res["gpu_records"] == 12 and res["matched"] == 12, res
    assert res["lost"] == 0 and res["incorrect"] == 0, res
    assert res["late"]["joined_after_retire"] == 12, res["late"]
    assert res["exit_code"] == 0, res["findings"]


def test_late_launch_ext_id_carries_the_late_bit(sim_module, trace):
    """Launch.ext_id is what was pushed: the epoch id, with the late bits of
    docs/trace-format.md ("Late work") for late work; its docstring says so."""
    doc = lineage.Launch.ext_id.__doc__
    assert "bit 63" in doc and "bit 62" in doc, doc
    sim = sim_module.Sim(seed=1)
    with lineage.Runtime(trace_path=trace, backend=sim) as rt:
        with rt.request(), rt.epoch() as e:
            tok = e.token
            with rt.launch("k") as la:
                assert la.ext_id == e.id
        with rt.adopt(tok), rt.launch("late") as la:     # its epoch retired: late, ended
            assert la.ext_id == e.id | 1 << 63
            assert la.ext_id & ~(3 << 62) == e.id


def test_reissue_of_an_absorbed_or_closed_epoch_runs_the_retry(trace):
    """The retry idiom with Epoch.reissue() where lineage could not declare the epoch (no
    current request), or the runtime closed meanwhile: the retry runs, reissue() returns
    None and counts the absorbed error."""
    rt = lineage.Runtime(trace_path=trace)

    def serve():
        tries = []
        with rt.epoch(name="forward") as e:
            for attempt in range(3):
                tries.append(attempt)
                if attempt < 1:
                    assert e.reissue() is None
                    continue
                return tries
    assert serve() == [0, 1]
    assert rt.stats()["absorbed"] == 2            # the epoch, then its reissue
    with rt.request(), rt.epoch() as e:
        assert e.reissue() == 2                   # a real one still re-issues
    assert e.reissue() is None                    # retired: absorbed
    assert rt.stats()["absorbed"] == 3
    rt.close()
    assert serve() == [0, 1]                      # stats() is gone with the runtime


def test_graph_replayer_forget_after_absorbed_capture_or_close(rt):
    from lineage.cudagraph import GraphReplayer

    class Graph:
        def replay(self):
            pass

    gr = GraphReplayer(rt, capture=lambda g: _Ctx([]))
    g = Graph()
    with gr.capture(g):                  # no epoch: absorbed
        pass
    gr.replay(g)
    gr.forget(g)                         # nothing was recorded for it: no error
    g2 = Graph()
    with rt.request(), rt.epoch():
        with gr.capture(g2):
            pass
        gr.replay(g2)
    rt.close()
    gr.replay(g2)
    gr.forget(g2)                        # the runtime closed: no error
    assert gr.errors >= 3


def test_adopt_of_none_runs_with_no_context(rt):
    """lineage.adopt(lineage.current()) in untraced code: current() is None."""
    with lineage.adopt(None) as t:
        assert t is None and lineage.current() is None
    with rt.request() as r:
        with lineage.adopt(None, runtime=rt) as t:
            assert t is None and lineage.current() is None
        assert lineage.current() == r.token


@pytest.mark.parametrize("kind", ["request", "epoch", "adopt", "adopt_refused",
                                  "adopt_no_runtime"])
def test_block_left_in_another_context_passes_the_users_exception(rt, kind):
    """A block in a generator resumed (and left) in another contextvars Context (a copied
    context's run(), an async generator): the variable's reset belongs to the first
    Context; the user's own exception passes through unchanged, the failed reset is
    absorbed and the variable cleared in the Context the block ended in."""
    import contextvars

    def gen():
        if kind == "request":
            cm = rt.request("r")
        elif kind == "epoch":
            cm = rt.epoch(outer.id)
        elif kind == "adopt":
            cm = rt.adopt(outer.token)
        elif kind == "adopt_refused":           # stale text: runs with no context
            cm = rt.adopt(lineage.Token.parse(str(ended.token)))
        else:
            cm = lineage.adopt(lineage.Token.parse(str(outer.token)))
        with cm:
            yield 1
            raise Boom("the user's own error")

    outer = rt.request("outer")                   # begun, not entered
    with rt.request("ended") as ended:
        pass
    before = rt.stats()["absorbed"]
    g = gen()
    next(g)                                       # entered in this Context
    seen = []

    def finish():
        with pytest.raises(Boom):
            next(g)                               # resumed and left in another
        seen.append(lineage.current())

    contextvars.copy_context().run(finish)
    assert seen == [None]                         # nothing left current there
    if kind != "adopt_no_runtime":                # no runtime to count it in
        assert rt.stats()["absorbed"] > before
    lineage.context.set(None)                     # this Context's value stays the block's
    rt.request_end(outer.id)


def test_worker_epoch_under_a_late_request_joins_it(sim_module, tmp_path):
    """Fan-out with only a request current at submit, the worker declaring its own epoch
    (rt.epoch() with no requests) after the request ended: the worker adopted the request
    late; its epoch is declared from the thread's (late) C scope and serves the ended
    request, so every GPU record joins it."""
    validator_or_skip()
    trace, truth = str(tmp_path / "t.lt"), str(tmp_path / "t.truth")
    sim = sim_module.Sim(seed=5)
    labels = []
    with lineage.Runtime(trace_path=trace, backend=sim) as rt:
        pool = lineage.futures.ThreadPoolExecutor(1)
        gate = threading.Event()
        pool.submit(gate.wait)

        def work(rid):
            with rt.epoch(name="worker_epoch") as e:
                served = rt.lookup(e.id)["requests"] if e.id else None
                with rt.launch("k"):
                    g = sim.launch_kernel(1, "k")
            labels.append((_truth.KERNEL, g, [rid]))
            return e.id, served

        futs = []
        for i in range(3):
            with rt.request(f"r{i}") as r:
                futs.append((r.id, pool.submit(work, r.id)))
        gate.set()
        for rid, f in futs:
            eid, served = f.result()
            assert eid != 0 and served == [rid]
        pool.shutdown()
        assert rt.stats()["late_adopts"] == 3 and rt.stats()["absorbed"] == 0
    _truth.write(truth, labels)
    res = lineage.validate(trace, expect=truth)
    assert res["gpu_records"] == 3 and res["matched"] == 3 and res["lost"] == 0, res
    assert res["exit_code"] == 0, res["findings"]


def test_graph_replay_under_a_late_token_keeps_its_bracket(sim_module, tmp_path):
    """A graph replayed under a token whose epoch retired (late work): lineage mints no
    replay epoch, but the plain bracket lin_graph_launch_begin falls back to stays open
    around the replay, so its kernels join the request (late); nothing stays open after."""
    validator_or_skip()
    trace, truth = str(tmp_path / "t.lt"), str(tmp_path / "t.truth")
    sim = sim_module.Sim(seed=5)
    labels = []
    with lineage.Runtime(trace_path=trace, backend=sim) as rt:
        gt = rt.graph_tracker()
        with rt.request("cap"), rt.epoch(name="capture"):
            cap = gt.capture_begin()
            sim.capture_begin(3)
            for n in ("g1", "g2"):
                with rt.launch(n):
                    sim.launch_kernel(3, n)
            graph, nodes = sim.capture_end(3)
            gt.capture_end(cap, graph, nodes)
            exec_id, pairs = sim.graph_instantiate(graph)
            gt.exec_instantiated(graph, exec_id)
            for o, c in pairs:
                gt.node_cloned(o, c, graph, exec_id)
        with rt.request("r") as r, rt.epoch(name="e"):
            tok = lineage.capture()
        with rt.adopt(tok):                      # its epoch retired: late
            with gt.launch(exec_id, "cudaGraphLaunch"):
                for g in sim.graph_launch(exec_id, 1):
                    labels.append((_truth.KERNEL, g, [r.id]))
            assert rt.thread_current() == ("epoch", tok.id, tok.version)
        assert rt.thread_current() is None
        assert rt.stats()["late_launches"] >= 1
    _truth.write(truth, labels)
    res = lineage.validate(trace, expect=truth)
    assert res["gpu_records"] == 2 and res["matched"] == 2 and res["lost"] == 0, res
    assert res["exit_code"] == 0, res["findings"]


def _interleave(*blocks):
    """Run one asyncio task per block factory on this thread: each enters its block,
    then they end in the order they were opened (the first to end has the others' still
    open above it: a block spanning an await, documented misuse)."""
    async def task(make, entered, go):
        with make():
            entered.set()
            await go.wait()

    async def main():
        tasks, gos = [], []
        for make in blocks:
            entered, go = asyncio.Event(), asyncio.Event()
            tasks.append(asyncio.create_task(task(make, entered, go)))
            gos.append(go)
            await entered.wait()
        for t, go in zip(tasks, gos):
            go.set()
            await t

    asyncio.run(main())


def test_interleaved_launch_blocks_leave_nothing_open(sim_module, tmp_path):
    """Two tasks' launch blocks interleaved across an await: the first end is refused for
    order (absorbed, a launch_order misuse in the trace); its bracket and scope close as
    soon as the other block ends, so nothing stays open on the loop thread and a later
    unrelated kernel is not joined to the first task's request."""
    validator_or_skip()
    trace, truth = str(tmp_path / "t.lt"), str(tmp_path / "t.truth")
    sim = sim_module.Sim(seed=3)
    labels = []
    with lineage.Runtime(trace_path=trace, backend=sim) as rt:
        def block(name):
            @contextlib.contextmanager
            def make():
                with rt.request(name) as r, rt.epoch(), rt.launch("k_" + name):
                    labels.append((_truth.KERNEL, sim.launch_kernel(1, "k_" + name), [r.id]))
                    yield
            return make

        _interleave(block("A"), block("B"))
        assert rt.thread_current() is None
        assert rt.stats()["absorbed"] == 1
        labels.append((_truth.KERNEL, sim.launch_kernel(1, "unrelated"), []))
        for i in range(20):                   # no bracket leaked: never refused for depth
            _interleave(block(f"A{i}"), block(f"B{i}"))
        with rt.request("C") as r, rt.epoch() as e, rt.launch("k_C") as la:
            assert la.ext_id == e.id
            labels.append((_truth.KERNEL, sim.launch_kernel(1, "k_C"), [r.id]))
        assert rt.thread_current() is None
    _truth.write(truth, labels)
    res = lineage.validate(trace, expect=truth)
    # every task's kernel joined its request; the unrelated one joined none (lost)
    assert res["gpu_records"] == 44 and res["incorrect"] == 0, res
    assert res["matched"] == 43 and res["lost"] == 1, res
    causes = {f["cause"] for f in res["findings"]}
    assert causes <= {"launch_order", "no_external_correlation"}, res["findings"]


def test_interleaved_adopt_blocks_leave_nothing_open(rt):
    with rt.request("A"), rt.epoch() as ea:
        ta = ea.token
    with rt.request("B"), rt.epoch() as eb:
        tb = eb.token
    _interleave(lambda: rt.adopt(ta), lambda: rt.adopt(tb))
    assert rt.thread_current() is None and lineage.current() is None
    assert rt.stats()["absorbed"] == 1
    # three, each ending under the next ones: closed in turn
    _interleave(lambda: rt.adopt(ta), lambda: rt.adopt(tb), lambda: rt.adopt(ta))
    assert rt.thread_current() is None
    assert rt.stats()["absorbed"] == 3


def test_interleaved_launch_under_an_adopt_leaves_nothing_open(rt):
    """A launch block's bracket is on top when it ends, its scope is not (another task's
    adopt above it): the scope closes once the adopt block ends."""
    with rt.request("B"), rt.epoch() as eb:
        tb = eb.token

    @contextlib.contextmanager
    def launch_a():
        with rt.request("A"), rt.epoch(), rt.launch("k"):
            yield

    _interleave(launch_a, lambda: rt.adopt(tb))
    assert rt.thread_current() is None
    assert rt.stats()["absorbed"] == 1


def test_interleaved_graph_launch_leaves_nothing_open(rt):
    gt = rt.graph_tracker()

    @contextlib.contextmanager
    def graph():
        with rt.request("G"), rt.epoch(), gt.launch(7, "cudaGraphLaunch") as gl:
            assert gl.replay[0] != 0
            yield

    @contextlib.contextmanager
    def plain():
        with rt.request("P"), rt.epoch(), rt.launch("k"):
            yield

    _interleave(graph, plain)
    assert rt.thread_current() is None
    _interleave(plain, graph)
    assert rt.thread_current() is None
    assert rt.stats()["absorbed"] == 2
