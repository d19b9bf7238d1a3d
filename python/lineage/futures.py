# SPDX-License-Identifier: MIT
"""lineage.futures.ThreadPoolExecutor: a drop-in ThreadPoolExecutor that carries the
lineage context from submit() to the worker (docs/python.md, "Executors")."""
import concurrent.futures as _cf

from . import _lineage


def _run(token, fn, args, kwargs):
    # The worker adopts what submit() captured: a C scope on the worker thread and the
    # context variable inside, so the task's launches (and C code it calls) see it.
    if token is None:
        return fn(*args, **kwargs)
    with token.runtime.adopt(token):
        return fn(*args, **kwargs)


class ThreadPoolExecutor(_cf.ThreadPoolExecutor):
    """Captures the current lineage context on ``submit`` (submitting thread or task) and
    adopts it in the worker around the call; with no context the task runs as it would in
    the base class. A token that went stale before the worker ran (its request ended)
    makes the future raise lineage.StaleToken. ``loop.run_in_executor(pool, ...)`` goes
    through submit, so it carries the context too."""

    def submit(self, fn, /, *args, **kwargs):
        tok = _lineage.current()
        if tok is not None and tok.runtime is None:
            # A parsed token: no runtime to adopt it with; run with the variable set.
            raise TypeError("lineage.futures: the current token has no runtime (parsed "
                            "from text); adopt it with Runtime.adopt() first")
        return super().submit(_run, tok, fn, args, kwargs)
