# SPDX-License-Identifier: MIT
"""contextvars integration: asyncio tasks, run_in_executor, lineage.futures, and mixing
with explicit tokens (text through a queue)."""
import asyncio
import concurrent.futures
import queue
import threading

import pytest

import lineage
import lineage.futures


def test_asyncio_task_inherits_and_tasks_do_not_mix(rt):
    seen = {}

    async def child(name):
        await asyncio.sleep(0)
        seen[name] = lineage.current()
        with rt.launch("k"):       # the task's own context, whatever ran in between
            pass

    async def handler(name):
        with rt.request(name) as r:
            with rt.epoch():
                await asyncio.gather(child(name), asyncio.sleep(0))
                await asyncio.create_task(child(name + "'"))
            return r

    async def main():
        return await asyncio.gather(*(handler(f"r{i}") for i in range(8)))

    asyncio.run(main())
    assert len(seen) == 16
    for i in range(8):   # a task and its child task saw their handler's epoch
        assert seen[f"r{i}"].kind == "epoch" and seen[f"r{i}"] == seen[f"r{i}'"]
    assert len(set(seen.values())) == 8   # one epoch per handler, never another's
    assert rt.stats()["misuse"] == 0


def test_run_in_executor_carries_with_lineage_pool(rt):
    pool = lineage.futures.ThreadPoolExecutor(2)

    def work():
        with rt.launch("k"):
            return lineage.current(), threading.get_ident()

    async def main():
        loop = asyncio.get_running_loop()
        with rt.request(), rt.epoch() as e:
            tok, tid = await loop.run_in_executor(pool, work)
            return e, tok, tid

    e, tok, tid = asyncio.run(main())
    pool.shutdown()
    assert tok == e.token and tid != threading.get_ident()
    assert rt.stats()["misuse"] == 0


def test_plain_default_executor_does_not_carry(rt):
    """Documented: Python 3.11's run_in_executor does not copy the context into a plain
    executor; the launch then has no context and raises (the misuse is recorded)."""
    plain = concurrent.futures.ThreadPoolExecutor(1)

    def work():
        with rt.launch("k"):
            pass

    async def main():
        loop = asyncio.get_running_loop()
        with rt.request(), rt.epoch():
            await loop.run_in_executor(plain, work)

    with pytest.raises(lineage.NoContext):
        asyncio.run(main())
    plain.shutdown()


def test_pool_submit_adopts_in_worker_and_no_context_passes_through(rt):
    with lineage.futures.ThreadPoolExecutor(2) as pool:
        assert pool.submit(lineage.current).result() is None    # no context: untouched
        with rt.request(), rt.epoch() as e:
            assert pool.submit(lineage.current).result() == e.token
            assert pool.submit(rt.thread_current).result() == ("epoch", e.id, 1)
    assert rt.stats()["misuse"] == 0


def test_pool_task_whose_request_ended_runs_late(rt):
    with lineage.futures.ThreadPoolExecutor(1) as pool:
        gate = threading.Event()
        pool.submit(gate.wait)                 # hold the only worker
        with rt.request() as r:
            fut = pool.submit(lineage.current)
        gate.set()                             # the request ended before the task ran
        tok = fut.result()                     # even strict: late work is no error
        assert tok.id == r.id and tok.kind == "request"
    assert rt.stats()["late_adopts"] == 1


def test_pool_rejects_a_parsed_current_token(rt):
    with rt.request() as r:
        parsed = lineage.Token.parse(str(r.token))
        with rt.adopt(parsed), lineage.futures.ThreadPoolExecutor(1) as pool:
            with pytest.raises(TypeError):
                pool.submit(lineage.current)


def test_explicit_tokens_through_a_queue(rt):
    """Mixing: the producer captures and sends the text; the consumer thread adopts."""
    q, out = queue.Queue(), []

    def consumer():
        while (text := q.get()) is not None:
            with rt.adopt(lineage.Token.parse(text)):
                with rt.launch("k"):
                    out.append(lineage.current().id)

    t = threading.Thread(target=consumer)
    t.start()
    ids = []
    for i in range(5):
        with rt.request() as r, rt.epoch() as e:
            q.put(str(lineage.capture()))
            ids.append(e.id)
            while len(out) < len(ids):
                pass
    q.put(None)
    t.join()
    assert out == ids and rt.stats()["misuse"] == 0


def test_adopt_inside_request_restores(rt):
    with rt.request() as a:
        with rt.request() as b:
            tb = b.token
        with rt.request() as c:
            with rt.adopt(c.token):
                assert lineage.current() == c.token
            assert lineage.current() == c.token
        assert lineage.current() == a.token and tb != a.token
