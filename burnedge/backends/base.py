"""The backend seam: a backend compiles a static Graph into an Executable that runs feeds to outputs."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..ir import Graph

__all__ = ["Backend", "Executable"]


class Executable(Protocol):
    """A compiled model: `run` takes validated feeds (by input name) and returns outputs by name."""

    arena_bytes: int

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]: ...


class Backend(Protocol):
    name: str

    def unavailable_reason(self) -> str | None:
        """None when the backend can run here, else why not (a missing package, no device)."""
        ...

    def compile(self, graph: Graph) -> Executable: ...
