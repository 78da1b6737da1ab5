"""The numpy reference backend: runs each node's numpy reference on one real byte arena at planned offsets.

Memory: the executable owns one uint8 arena per run; every activation is a view at its planned offset, so a
planner that overlaps two live tensors corrupts results here, on the host, where a test sees it. Constants are
read from the graph (they play the weights' part); object (string) tensors live outside the arena.

    arena  |-- x (step -1..0) --|-- conv_out (0..1) --|        later tensors reuse freed ranges;
           0                    64                    ...    views and in-place outputs share their input's bytes

The reference is the spec, so it runs the graph as imported: its pass pipeline is empty and it imports no QDQ.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

import numpy as np

from ...ops.interpreter import interpret
from ...plan import Plan
from ..base import Backend

__all__ = ["BACKEND", "NumpyExecutable"]


class ArenaStore(MutableMapping):
    """The interpreter's store for one run: a tensor with a planned offset lives in the arena, as a view at that
    offset; anything else (a string tensor, a sequence) lives beside it."""

    def __init__(self, plan: Plan):
        self.graph, self.offsets = plan.graph, plan.offsets
        self.arena = np.zeros(plan.arena_bytes, np.uint8)
        self.objects: dict[str, Any] = {}

    def _view(self, name: str) -> np.ndarray:
        v = self.graph.values[name]
        off = self.offsets[name]
        return self.arena[off : off + v.nbytes].view(v.dtype).reshape(v.shape)

    def __getitem__(self, name: str) -> Any:
        return self._view(name) if name in self.offsets else self.objects[name]

    def __setitem__(self, name: str, value: Any) -> None:
        if name in self.offsets:
            self._view(name)[...] = value
        else:
            self.objects[name] = value

    def __delitem__(self, name: str) -> None:
        self.objects.pop(name, None)  # arena bytes are reused by the plan, never freed

    def __contains__(self, name: object) -> bool:
        return name in self.offsets or name in self.objects

    def __iter__(self) -> Iterator[str]:
        return iter([*self.offsets, *self.objects])

    def __len__(self) -> int:
        return len(self.offsets) + len(self.objects)


class NumpyExecutable:
    """A plan with its arena layout; `run` makes the arena, writes the inputs, and interprets the nodes in order."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.graph = plan.graph
        self.arena_bytes = plan.arena_bytes
        self.offsets = plan.offsets

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self.run_steps(feeds)

    def run_steps(self, feeds: Mapping[str, np.ndarray], before=None, after=None) -> dict[str, np.ndarray]:
        """Runs node by node; `before(i, read)` / `after(i, read)` see step i's tensors (as CModel.run_steps)."""
        g = self.graph
        store = ArenaStore(self.plan)
        consts = g.constants()

        def read(name: str) -> Any:
            return np.array(consts[name] if name in consts else store[name], copy=True)

        index = {id(node): i for i, node in enumerate(g.nodes)}

        def observe(node, outs) -> None:
            i = index[id(node)]
            if after is not None:
                after(i, read)
            if before is not None and i + 1 < len(g.nodes):
                before(i + 1, read)

        if before is not None and g.nodes:
            for name in g.inputs:
                store[name] = feeds[name]
            before(0, read)
        outs = interpret(g, feeds, store=store, observe=observe if before or after else None)
        return {n: np.array(v, copy=True) for n, v in outs.items()}


class NumpyBackend(Backend):
    name = "numpy"
    strings = True  # object arrays: the reference runs StringConcat, RegexFullMatch...

    def compile(self, plan: Plan, threads: int = 1) -> NumpyExecutable:
        return NumpyExecutable(plan)  # one thread: the reference is simple; every build can run step by step


BACKEND = NumpyBackend()
