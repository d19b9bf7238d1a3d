# SPDX-License-Identifier: MIT
"""lineage for Python: joins every GPU kernel to the logical request that caused it.

A CPython extension over liblineage (docs/python.md). The current lineage context is a
context variable: asyncio tasks inherit it, :class:`lineage.futures.ThreadPoolExecutor`
carries it to its workers, and a launch bracket makes it the C thread's context for the
duration of the GPU call.

Thread context: every function may be called from any thread at once; ``Runtime.flush``,
``Runtime.close`` and ``validate`` release the GIL while they block.
"""
import contextvars as _cv
import json as _json
import os as _os
import shutil as _shutil
import subprocess as _sp

from . import _lineage
from ._errors import Error, InvalidArgument, _make

try:  # written by setup.py (or CMake) when the package was built
    from . import _build
except ImportError:  # pragma: no cover - a package tree put together by hand
    _build = None

#: The release: liblineage's version this package was built against (one number for the
#: library, its tools, the trace format's writer and this package).
__version__ = getattr(_build, "VERSION", None) or _lineage.library_version()

__all__ = ["Runtime", "Token", "Request", "Epoch", "Launch", "Adopt", "RemoteContext",
           "GraphTracker", "GraphCapture", "GraphLaunch", "capture", "current", "adopt",
           "extract", "validate", "Error", "InvalidArgument", "StaleToken", "BadToken",
           "ForeignToken", "ScopeOrder", "ScopeThread", "ScopeClosed", "ScopeDepth",
           "NoContext", "NotFound", "LaunchOrder", "BackendError", "TraceError", "NoCupti",
           "LaunchDepth", "ValidatorNotFound", "REISSUE_OTHER", "REISSUE_RETRY",
           "REISSUE_REPLAY", "W3C_FLAG_SAMPLED", "SHARE_PREFILL", "SHARE_DECODE",
           "SHARE_FIRST_TOKEN", "library_version", "strerror"]

_errs = _make(_lineage._error_names())
globals().update(_errs)
_lineage._set_errors(Error, _errs, InvalidArgument)

#: The current lineage context (a Token, or None). Set by Runtime.request(), epoch() and
#: adopt(); read by capture() and by every launch bracket.
context = _cv.ContextVar("lineage_context", default=None)
_lineage._set_context_var(context)

Token = _lineage.Token
Request = _lineage.Request
Epoch = _lineage.Epoch
Launch = _lineage.Launch
Adopt = _lineage.Adopt
RemoteContext = _lineage.RemoteContext
GraphTracker = _lineage.GraphTracker
GraphCapture = _lineage.GraphCapture
GraphLaunch = _lineage.GraphLaunch
capture = _lineage.capture
current = _lineage.current
extract = _lineage.extract
strerror = _lineage.strerror
library_version = _lineage.library_version
REISSUE_OTHER = _lineage.REISSUE_OTHER
REISSUE_RETRY = _lineage.REISSUE_RETRY
REISSUE_REPLAY = _lineage.REISSUE_REPLAY
W3C_FLAG_SAMPLED = _lineage.W3C_FLAG_SAMPLED
#: Flags of an epoch's shares (``rt.epoch(*requests, shares=[(tokens, flags), ...])``):
#: the request's tokens in this step are prompt tokens, generated tokens; this step
#: produces its first token (docs/serving.md).
SHARE_PREFILL = _lineage.SHARE_PREFILL
SHARE_DECODE = _lineage.SHARE_DECODE
SHARE_FIRST_TOKEN = _lineage.SHARE_FIRST_TOKEN


class Runtime(_lineage.Runtime):
    """Runtime(trace_path=None, backend="none", *, ext_kind=0, no_writer_thread=False,
    no_capture_events=False, lean_timestamps=False, thread_buffer_events=0,
    flush_interval_ms=0, otlp_path=None, cupti_latency_timestamps=False,
    cupti_own_clock=False, cupti_buffer_kib=0, cupti_buffers_max=0, strict=None)

    One liblineage runtime (lin_runtime_opts as keywords; ``backend`` is ``"none"``,
    ``"cupti"`` or a custom backend object, docs/python.md). A context manager: the
    ``with`` block's end flushes and closes. Shared by every thread; create and close
    block and release the GIL.

    The work always runs: the blocks it gives (request, epoch, launch, adopt, graph
    launch) and the executor never raise a lineage error into the code they wrap (no
    context, a token that cannot be adopted, the runtime closed meanwhile): the block runs
    without what lineage could not give it, the C runtime records what happened in the
    trace, and ``stats()["absorbed"]`` counts it. ``strict=True`` (or ``LINEAGE_STRICT=1``
    when not given) raises instead, for tests. docs/python.md, "The work always runs".
    """

    __slots__ = ()

    def graph_tracker(self, max_nodes=0, max_execs=0):
        """A GraphTracker writing into this runtime's trace; freed when it closes."""
        return GraphTracker(self, max_nodes, max_execs)

    def capture(self):
        """The current context's Token (raises NoContext). Same as lineage.capture()."""
        return _lineage.capture()


class _NoContext:
    """The block an adopt with no runtime gives outside strict mode: it runs with no
    context (never with the one around it)."""

    def __enter__(self):
        self._reset = context.set(None)

    def __exit__(self, *exc):
        try:
            context.reset(self._reset)
        except ValueError:
            # Left in another Context than it began in (a generator resumed under a copied
            # context's run()): the user's own exception passes; this Context gets the
            # value from before the block (strict: raised, for tests).
            if _os.environ.get("LINEAGE_STRICT") == "1":
                raise
            old = self._reset.old_value
            context.set(None if old is _cv.Token.MISSING else old)
        return False


def adopt(token, runtime=None):
    """A with-block adopting ``token`` on this thread: ``runtime`` or the token's own. A
    token whose request ended or epoch retired is adopted late (its work joins it, counted
    late); one that cannot be adopted (BadToken, ForeignToken, a closed runtime) runs the
    block with no context, and raises only under a strict runtime (Runtime(strict=True),
    LINEAGE_STRICT=1). A parsed token with no runtime= raises InvalidArgument in strict
    mode, else the block runs with no context. ``token`` None (``adopt(current())`` where
    nothing was current: work handed on from untraced code) runs the block with no context,
    as the executor runs such a task. ``token`` may be the text form (``str(token)``, from a
    message header): it is parsed when the block is entered, and damaged text is a token
    that cannot be adopted (recorded as bad_token; the block runs with no context), where
    ``Token.parse`` would raise before the work."""
    if token is None:
        return _NoContext()
    rt = runtime if runtime is not None else getattr(token, "runtime", None)
    if rt is None:
        if _os.environ.get("LINEAGE_STRICT") == "1":
            raise InvalidArgument("adopt: a parsed token needs runtime=", 22, "EINVAL")
        return _NoContext()
    return rt.adopt(token)


class ValidatorNotFound(Error):
    """No lineage-validate: $LINEAGE_VALIDATE unset (or not an executable), none in the
    build or install this package was built against, none on PATH."""


def _validator():
    """The lineage-validate to run: $LINEAGE_VALIDATE, else the one of the build or install
    this package was built against (recorded in _build.py), else the first on PATH."""
    env = _os.environ.get("LINEAGE_VALIDATE")
    if env:
        if not (_os.path.isfile(env) and _os.access(env, _os.X_OK)):
            raise ValidatorNotFound(f"LINEAGE_VALIDATE={env} is not an executable file "
                                    "(a CMake build has it at BUILD/validator/lineage-validate, "
                                    "an install at PREFIX/bin/lineage-validate)", 2, "ENOENT")
        return env
    built = getattr(_build, "VALIDATE", None)
    if built and _os.access(built, _os.X_OK):
        return built
    exe = _shutil.which("lineage-validate")
    if exe:
        return exe
    looked = getattr(_build, "VALIDATE_LOOKED", None) or built
    there = (f"{looked} (recorded when this package was built) is not there"
             if looked else "the build this package was built against was not recorded")
    raise ValidatorNotFound(
        "lineage-validate not found: $LINEAGE_VALIDATE is unset, " + there + ", and none "
        "is on PATH. Set LINEAGE_VALIDATE to it (a CMake build has it at "
        "BUILD/validator/lineage-validate, an install at PREFIX/bin/lineage-validate) or "
        "install lineage (cmake --install BUILD --prefix PREFIX; docs/python.md)", 2, "ENOENT")


def validate(paths, expect=None, max_findings=None, allow_empty=False):
    """Run ``lineage-validate --json`` on ``paths`` (one path or several) with the truth
    files ``expect`` and return its JSON result as a dict (``exit_code`` included: 0 clean,
    1 findings, 2 unreadable file). Runs the installed CLI, not a linked library: the
    validator is not part of liblineage's installed API, and a separate process keeps a
    long validation off the GIL and out of this process's memory. Raises
    ValidatorNotFound, or Error when the validator gives no JSON (usage error)."""
    if isinstance(paths, (str, bytes, _os.PathLike)):
        paths = [paths]
    if isinstance(expect, (str, bytes, _os.PathLike)):
        expect = [expect]
    argv = [_validator(), "--json"]
    for e in expect or ():
        argv += ["--expect", _os.fsdecode(e)]
    if max_findings is not None:
        argv += ["--max-findings", str(int(max_findings))]
    if allow_empty:
        argv.append("--allow-empty")
    argv += [_os.fsdecode(p) for p in paths]
    if len(argv) == 2 + (2 * len(expect or ())):
        raise InvalidArgument("validate: no trace paths", 22, "EINVAL")
    proc = _sp.run(argv, stdout=_sp.PIPE, stderr=_sp.PIPE, check=False)
    try:
        result = _json.loads(proc.stdout)
    except ValueError:
        raise Error(f"lineage-validate exited {proc.returncode} without JSON: "
                    f"{proc.stderr.decode(errors='replace').strip()}",
                    proc.returncode, "EVALIDATE") from None
    result.setdefault("exit_code", proc.returncode)
    return result
