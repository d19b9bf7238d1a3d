import concurrent.futures
from typing import Any, Callable, TypeVar

_T = TypeVar("_T")

class ThreadPoolExecutor(concurrent.futures.ThreadPoolExecutor):
    """Captures the lineage context on submit (submitting thread or task), adopts it in
    the worker around the call."""
    def submit(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[_T]: ...
