"""The trace in progress (one per thread or task): where traced tensors and modules find the graph they add to."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from ..errors import TraceError

__all__ = ["ACTIVE", "current"]

ACTIVE: ContextVar[Any] = ContextVar("burnedge_nn_trace", default=None)


def current() -> Any:
    """The active Tracer; outside `burnedge.trace` a TraceError saying that burnedge.nn runs by tracing."""
    tracer = ACTIVE.get()
    if tracer is None:
        raise TraceError(
            "burnedge.nn modules and functions run by tracing, not eagerly on arrays: "
            "use burnedge.trace(module, {input name: shape}) and run the Model it returns"
        )
    return tracer
