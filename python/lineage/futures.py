# SPDX-License-Identifier: MIT
"""lineage.futures.ThreadPoolExecutor: a drop-in ThreadPoolExecutor that carries the
lineage context from submit() to the worker (docs/python.md, "Executors")."""
import concurrent.futures as _cf
import os as _os

from . import _lineage


def _strict(runtime=None):
    """Whether lineage errors may reach the caller: a strict runtime, or LINEAGE_STRICT=1."""
    if runtime is not None:
        return runtime.strict
    return _os.environ.get("LINEAGE_STRICT") == "1"


def _run(token, fn, args, kwargs):
    # The worker adopts what submit() captured: a C scope on the worker thread and the
    # context variable inside, so the task's launches (and C code it calls) see it. The
    # adopt never keeps fn from running: a token whose epoch ended meanwhile is adopted
    # late (its work joins that epoch, counted late), and one that cannot be adopted at
    # all runs fn with no context (Runtime.adopt, outside a strict runtime).
    if token is None:
        return fn(*args, **kwargs)
    with token.runtime.adopt(token):
        return fn(*args, **kwargs)


class ThreadPoolExecutor(_cf.ThreadPoolExecutor):
    """Captures the current lineage context on ``submit`` (submitting thread or task) and
    adopts it in the worker around the call; with no context the task runs as it would in
    the base class. Lineage never changes whether, where or with what result a task runs:
    a token whose request ended or epoch retired before the worker ran is adopted late
    (the task's GPU work joins that request, counted as late work by lineage-validate), so
    the ordinary fan-out-and-gather (submit inside ``with rt.request(), rt.epoch():``,
    ``result()`` after the block) works; a context that cannot be adopted (a closed
    runtime, a parsed token with no runtime) runs the task with none, and a strict runtime
    (``Runtime(strict=True)``, ``LINEAGE_STRICT=1``) raises instead, for tests.
    ``loop.run_in_executor(pool, ...)`` goes through submit, so it carries the context
    too."""

    def submit(self, fn, /, *args, **kwargs):
        tok = _lineage.current()
        if tok is not None and tok.runtime is None:
            # A parsed token: no runtime to adopt it with.
            if _strict():
                raise TypeError("lineage.futures: the current token has no runtime (parsed "
                                "from text); adopt it with Runtime.adopt() first")
            tok = None
        return super().submit(_run, tok, fn, args, kwargs)
