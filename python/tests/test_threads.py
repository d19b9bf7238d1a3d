# SPDX-License-Identifier: MIT
"""Many threads at once on one runtime; close racing with them never crashes."""
import threading

import lineage
import lineage.futures

THREADS = 16
ROUNDS = 300


def test_many_threads(rt):
    errors = []

    def body(i):
        try:
            for j in range(ROUNDS):
                with rt.request(f"t{i}") as r, rt.epoch(name="e"):
                    with rt.launch("k"):
                        assert rt.thread_current()[0] == "epoch"
                    tok = lineage.capture()
                    text = str(tok)
                    with rt.adopt(lineage.Token.parse(text)):
                        with rt.launch("k2"):
                            pass
                    if j % 50 == 0:
                        rt.flush()
                assert rt.thread_current() is None
        except Exception as e:   # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=body, args=(i,)) for i in range(THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[:3]
    st = rt.stats()
    assert st["misuse"] == 0 and st["live_requests"] == 0 and st["live_epochs"] == 0


def test_close_while_threads_run(trace):
    rt = lineage.Runtime(trace_path=trace)
    started, outcomes = threading.Barrier(THREADS + 1), []

    def body():
        started.wait()
        try:
            for _ in range(100000):
                with rt.request(), rt.epoch(), rt.launch("k"):
                    pass
                rt.flush()
        except lineage.Error as e:      # closed under it: InvalidArgument, never a crash
            outcomes.append(type(e))

    ts = [threading.Thread(target=body) for _ in range(THREADS)]
    for t in ts:
        t.start()
    started.wait()
    rt.close()
    for t in ts:
        t.join()
    assert len(outcomes) == THREADS and set(outcomes) == {lineage.InvalidArgument}
