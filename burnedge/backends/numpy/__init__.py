"""The numpy reference backend: runs each node's numpy reference on one real byte arena at planned offsets.

Memory: the executable owns one uint8 arena per run; every activation is a view at its planned offset, so a
planner that overlaps two live tensors corrupts results here, on the host, where a test sees it. Constants are
read from the graph (they play the weights' part); object (string) tensors live outside the arena.

    arena  |-- x (step -1..0) --|-- conv_out (0..1) --|        later tensors reuse freed ranges;
           0                    64                    ...    views and in-place outputs share their input's bytes

The reference is the spec, so it runs the graph as imported: its pass pipeline is empty and it imports no QDQ.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import BurnedgeError
from ...ops._eval import evaluate
from ...plan import Plan
from ..base import Backend

__all__ = ["BACKEND", "NumpyExecutable"]


class NumpyExecutable:
    """A plan with its arena layout; `run` allocates the arena, writes inputs, runs nodes in order."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.graph = plan.graph
        self.arena_bytes = plan.arena_bytes
        self.offsets = plan.offsets

    def _view(self, arena: np.ndarray, name: str) -> np.ndarray:
        v = self.graph.values[name]
        off = self.offsets[name]
        return arena[off : off + v.nbytes].view(v.dtype).reshape(v.shape)

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self.run_steps(feeds)

    def run_steps(self, feeds: Mapping[str, np.ndarray], before=None, after=None) -> dict[str, np.ndarray]:
        """Runs node by node; `before(i, read)` / `after(i, read)` see step i's tensors (as CModel.run_steps)."""
        g = self.graph
        arena = np.zeros(self.arena_bytes, np.uint8)
        objects: dict[str, Any] = {}
        consts = g.constants()

        def read(name: str) -> Any:
            if name in consts:
                return consts[name]
            if name in self.offsets:
                return self._view(arena, name)
            return objects[name]

        def copy(name: str) -> Any:
            return np.array(read(name), copy=True)

        for name in g.inputs:
            if name in self.offsets:
                self._view(arena, name)[...] = feeds[name]
            else:
                objects[name] = feeds[name]
        for i, node in enumerate(g.nodes):
            if before is not None:
                before(i, copy)
            outs = evaluate(node, [read(n) if n else None for n in node.inputs], {n: read(n) for n in node.captures})
            for name, arr in zip(node.outputs, outs):
                if not name:
                    continue
                v = g.values[name]
                if arr.shape != v.shape or arr.dtype != v.dtype:
                    raise BurnedgeError(
                        f"node {node.name!r} ({node.op_type}) produced {arr.dtype}{list(arr.shape)} for {name!r}; "
                        f"the plan expects {v.dtype}{list(v.shape)}"
                    )
                if name in self.offsets:
                    self._view(arena, name)[...] = arr
                else:
                    objects[name] = arr
            if after is not None:
                after(i, copy)
        return {n: copy(n) for n in g.outputs}


class NumpyBackend(Backend):
    name = "numpy"

    def compile(self, plan: Plan, threads: int = 1, instrument: bool = False) -> NumpyExecutable:
        return NumpyExecutable(plan)  # one thread: the reference is simple; every build can run step by step


BACKEND = NumpyBackend()
