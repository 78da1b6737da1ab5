"""The numpy reference backend: runs each node's numpy reference on one real byte arena at planned offsets.

Memory: the executable owns one uint8 arena per run; every activation is a view at its planned offset, so a
planner that overlaps two live tensors corrupts results here, on the host, where a test sees it. Constants are
read from the graph (they play the weights' part); object (string) tensors live outside the arena.

    arena  |-- x (step -1..0) --|-- conv_out (0..1) --|        later tensors reuse freed ranges;
           0                    64                    ...    views and in-place outputs share their input's bytes
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import BurnedgeError
from ...ir import Graph
from ...ops._eval import evaluate
from ...plan import make_plan

__all__ = ["BACKEND", "NumpyExecutable"]


class NumpyExecutable:
    """A graph with its arena layout; `run` allocates the arena, writes inputs, runs nodes in order."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.plan = make_plan(graph)
        self.arena_bytes = self.plan.arena_bytes
        self.offsets = self.plan.offsets

    def _view(self, arena: np.ndarray, name: str) -> np.ndarray:
        v = self.graph.values[name]
        off = self.offsets[name]
        return arena[off : off + v.nbytes].view(v.dtype).reshape(v.shape)

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
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

        for name in g.inputs:
            if name in self.offsets:
                self._view(arena, name)[...] = feeds[name]
            else:
                objects[name] = feeds[name]
        for node in g.nodes:
            ins = [read(n) if n else None for n in node.inputs]
            outs = evaluate(node, ins, {n: read(n) for n in node.captures})
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
        return {n: np.array(read(n), copy=True) for n in g.outputs}


class NumpyBackend:
    name = "numpy"

    def unavailable_reason(self) -> str | None:
        return None

    def compile(self, graph: Graph, threads: int = 1) -> NumpyExecutable:  # one thread: the reference is simple
        return NumpyExecutable(graph)


BACKEND = NumpyBackend()
