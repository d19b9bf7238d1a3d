# SPDX-License-Identifier: MIT
"""Type hints for lineage (docs/python.md). Thread context is given per call, as in the C
headers: "any thread" calls may run on many threads at once; "launch path" calls take no
lock and never block; "blocks" calls release the GIL."""
import contextvars
import os
from types import TracebackType
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Type, Union

_Id = Union[int, "Request", "Epoch", "Token"]
_Path = Union[str, bytes, "os.PathLike[str]"]

__version__: str
context: contextvars.ContextVar[Optional["Token"]]
REISSUE_OTHER: int
REISSUE_RETRY: int
REISSUE_REPLAY: int
W3C_FLAG_SAMPLED: int
SHARE_PREFILL: int
SHARE_DECODE: int
SHARE_FIRST_TOKEN: int
_Share = Tuple[int, int]

class Error(Exception):
    """A liblineage call failed: ``code`` (positive), ``name`` (the C name)."""
    code: int
    name: str
    def __init__(self, message: str = ..., code: int = ..., name: str = ...) -> None: ...

class InvalidArgument(Error, ValueError): ...
class StaleToken(Error): ...
class BadToken(Error): ...
class ForeignToken(Error): ...
class ScopeOrder(Error): ...
class ScopeThread(Error): ...
class ScopeClosed(Error): ...
class ScopeDepth(Error): ...
class NoContext(Error): ...
class NotFound(Error): ...
class LaunchOrder(Error): ...
class BackendError(Error): ...
class TraceError(Error): ...
class NoCupti(Error): ...
class LaunchDepth(Error): ...
class ValidatorNotFound(Error): ...

class Token:
    """An immutable captured context; str() is the text form, pickles as that text.
    Any thread; copying is free (copy returns the same object)."""
    id: int
    version: int
    kind: str  # "request" | "epoch"
    runtime: Optional["Runtime"]
    @classmethod
    def parse(cls, text: str) -> "Token":
        """The text form back. Checks syntax and the integrity tag (BadToken,
        InvalidArgument); liveness is checked at adopt. Any thread; pure."""

class _Block:
    def __exit__(self, t: Optional[Type[BaseException]], v: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool: ...

class Request(_Block):
    """A request: current (context variable only, no C scope, so a coroutine may await
    inside) for the block, ended at its end. Any thread or task."""
    id: int
    token: Token
    def __enter__(self) -> "Request": ...

class Epoch(_Block):
    """An epoch: current for the block, retired at its end. Any thread or task."""
    id: int
    token: Token
    def __enter__(self) -> "Epoch": ...
    def reissue(self, reason: int = ...) -> Optional[int]:
        """Issued again: version + 1, older tokens go stale. Any thread. None outside a
        strict runtime where lineage cannot (an epoch it could not declare, id 0; one
        retired; a closed runtime): counted in stats()["absorbed"]."""

class Launch(_Block):
    """A launch bracket (lin_launch_begin/end) around a GPU call or a forward pass: the
    current epoch becomes the thread's C context and is pushed through the backend.
    Launching thread; launch path. Must not span an await."""
    ext_id: int
    """The id pushed through the backend inside the block, 0 if none: the epoch id, with
    bit 63 set when the epoch's version had ended (late work: its epoch retired or its
    request ended) or bit 62 when it had been re-issued (docs/trace-format.md, "Late
    work"); ``ext_id & ~(3 << 62)`` is the epoch."""
    def __enter__(self) -> "Launch": ...

class Adopt(_Block):
    """An adopted token: a C scope on this thread and the current context for the block.
    Worker thread; launch path. Closes on the thread that opened it; must not span an
    await (ScopeOrder when another task's scope is inside)."""
    def __enter__(self) -> Token: ...

class RemoteContext:
    """What arrived with a request over W3C Trace Context."""
    trace_id: str
    parent_id: str
    flags: int
    token: Optional[Token]
    tracestate: Optional[str]

class GraphCapture:
    epoch: Tuple[int, int]

class GraphLaunch(_Block):
    replay: Tuple[int, int]
    def __enter__(self) -> "GraphLaunch": ...

class GraphTracker:
    """CUDA graph identity (lineage/graph.h). Calls that read the thread's context use the
    current Python context. Any thread unless noted; freed with its Runtime."""
    def __init__(self, runtime: "Runtime", max_nodes: int = ..., max_execs: int = ...) -> None: ...
    def close(self) -> None: ...
    def capture_begin(self) -> GraphCapture:
        """Around cudaStreamBeginCapture; NoContext without a current epoch. Capturing thread."""
    def capture_end(self, capture: GraphCapture, graph_id: int, nodes: Sequence[int]) -> None:
        """After cudaStreamEndCapture. Any thread; takes the output lock (GIL released)."""
    def node_created(self, graph_id: int, node_id: int) -> None: ...
    def node_updated(self, node_id: int) -> None: ...
    def exec_instantiated(self, graph_id: int, exec_id: int) -> None: ...
    def node_cloned(self, original: int, clone: int, graph_id: int = ..., exec_id: int = ...) -> None: ...
    def exec_destroyed(self, exec_id: int) -> None: ...
    def destroyed(self, graph_id: int) -> None: ...
    def node_origin(self, node_id: int) -> Tuple[int, int]: ...
    def exec_ordinal(self, exec_id: int) -> int: ...
    def launch(self, exec_id: int, name: str) -> GraphLaunch:
        """A bracket around cudaGraphLaunch with a replay epoch. Launching thread."""

class Runtime:
    """One liblineage runtime, shared by every thread. Create and close block (GIL
    released); a context manager whose end flushes and closes. After close every call
    raises InvalidArgument."""
    closed: bool
    def __init__(self, trace_path: Optional[_Path] = ..., backend: Any = ..., *,
                 ext_kind: int = ..., no_writer_thread: bool = ...,
                 no_capture_events: bool = ..., lean_timestamps: bool = ...,
                 thread_buffer_events: int = ..., flush_interval_ms: int = ...,
                 otlp_path: Optional[_Path] = ..., cupti_latency_timestamps: bool = ...,
                 cupti_own_clock: bool = ..., cupti_buffer_kib: int = ...,
                 cupti_buffers_max: int = ..., strict: Optional[bool] = ...) -> None: ...
    strict: bool
    def __enter__(self) -> "Runtime": ...
    def __exit__(self, *a: Any) -> bool: ...
    def flush(self) -> None:
        """Encode and write every buffered event. Any thread; blocks (GIL released)."""
    def close(self) -> None:
        """Flush, stop, free. Any thread; blocks (GIL released); idempotent."""
    def stats(self) -> Dict[str, int]: ...
    def now_ns(self) -> int: ...
    def request(self, name: Optional[str] = ..., *, user_id: Optional[int] = ...,
                parent: Optional[_Id] = ..., remote: Optional[RemoteContext] = ...) -> Request:
        """Begin a request now (any thread); the returned block makes it current."""
    def epoch(self, *requests: _Id, name: Optional[str] = ..., parent: Optional[_Id] = ...,
              no_requests: bool = ..., shares: Optional[Sequence[_Share]] = ...) -> Epoch:
        """Declare an epoch now serving ``requests`` (fan-in), or the current context's;
        ``shares``: one (tokens, SHARE_* flags) per request given."""
    def launch(self, name: Optional[str]) -> Launch:
        """A launch bracket. ``name`` is kept for the process (kernel names are few)."""
    def adopt(self, token: Union[Token, str]) -> Adopt: ...
    def adopt_remote(self, ctx: RemoteContext) -> Adopt: ...
    def capture(self) -> Token: ...
    def token_for(self, id: _Id) -> Token: ...
    def lookup(self, id: _Id) -> Dict[str, Any]: ...
    def thread_current(self) -> Optional[Tuple[str, int, int]]:
        """The C context of the calling thread (not the Python context)."""
    def request_begin(self, name: Optional[str] = ..., *, user_id: Optional[int] = ...,
                      parent: Optional[_Id] = ..., remote: Optional[RemoteContext] = ...) -> int: ...
    def request_end(self, id: _Id) -> None: ...
    def epoch_declare(self, *requests: _Id, name: Optional[str] = ...,
                      parent: Optional[_Id] = ..., no_requests: bool = ...,
                      shares: Optional[Sequence[_Share]] = ...) -> int: ...
    def epoch_retire(self, id: _Id) -> None: ...
    def epoch_reissue(self, id: _Id, reason: int = ...) -> int: ...
    def inject(self, token: Optional[Token] = ..., remote: Optional[RemoteContext] = ...,
               flags: int = ...) -> Dict[str, str]:
        """W3C headers {traceparent, tracestate} carrying ``token`` (default: current)."""
    def graph_tracker(self, max_nodes: int = ..., max_execs: int = ...) -> GraphTracker: ...

def capture() -> Token:
    """The current context (NoContext when none). Any thread or task; no C call."""
def current() -> Optional[Token]: ...
def adopt(token: Union[Token, str, None], runtime: Optional[Runtime] = ...) -> Adopt: ...
def extract(traceparent: str, tracestate: Optional[str] = ...) -> RemoteContext:
    """Read received W3C headers. Any thread; pure."""
def validate(paths: Union[_Path, Iterable[_Path]], expect: Union[None, _Path, Iterable[_Path]] = ...,
             max_findings: Optional[int] = ..., allow_empty: bool = ...) -> Dict[str, Any]:
    """lineage-validate --json as a dict (runs the installed CLI). Any thread."""
def strerror(code: int) -> Tuple[str, str]: ...
def library_version() -> str: ...
