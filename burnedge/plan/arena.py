"""Plan: the graph in execution order plus where every tensor lives in the one arena, and how big it is.

    arena  | x | conv0 ........ | relu0 (in place over conv0) |      |  scratch of step 3 |
           0                                                        (offsets from the planner, 64-aligned)

Tensors that share bytes (views, in-place outputs) have the same offset. Constants are not in the arena: they
are the weights, read-only, owned by whoever loads the model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..ir import Graph, Node
from .planner import ALIGN, best_plan
from .schedule import Buffer, lifetimes

__all__ = ["Plan", "make_plan"]


@dataclass
class Plan:
    graph: Graph
    buffers: list[Buffer]
    buffer_offsets: list[int]
    offsets: dict[str, int]
    scratch: dict[int, tuple[int, int]]
    arena_bytes: int
    lower_bound_bytes: int
    planner: str

    @property
    def steps(self) -> list[Node]:
        return self.graph.nodes

    def timeline(self) -> list[dict[str, object]]:
        """One row per buffer: its tensors, offset, size and live steps (for `inspect` and pictures)."""
        rows = []
        for b, off in zip(self.buffers, self.buffer_offsets):
            name = f"scratch of step {b.scratch_of}" if b.scratch_of is not None else b.tensors[0]
            rows.append(
                {
                    "name": name,
                    "tensors": list(b.tensors),
                    "offset": off,
                    "bytes": b.size,
                    "first": b.first,
                    "last": b.last,
                }
            )
        return rows


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def lower_bound(buffers: list[Buffer]) -> int:
    """The most bytes alive at any one step: no placement can use less."""
    if not buffers:
        return 0
    events: dict[int, int] = {}
    for b in buffers:
        events[b.first] = events.get(b.first, 0) + _aligned(b.size)
        events[b.last + 1] = events.get(b.last + 1, 0) - _aligned(b.size)
    best = cur = 0
    for t in sorted(events):
        cur += events[t]
        best = max(best, cur)
    return best


def make_plan(
    graph: Graph,
    scratch: Callable[[Node], int] | None = None,
    in_place: bool = True,
    external: frozenset[str] = frozenset(),
    reads: Mapping[int, Sequence[str]] | None = None,
) -> Plan:
    """Lifetimes (with aliases, scratch and a backend's extra `reads`) -> offsets from the best planner -> Plan.
    Tensors named `external` live outside this arena (schedule.lifetimes) and get no offset here."""
    buffers = lifetimes(graph, scratch, in_place, external, reads)
    planner, offsets, size = best_plan([(b.size, b.first, b.last) for b in buffers])
    by_tensor = {t: off for b, off in zip(buffers, offsets) for t in b.tensors}
    scratch_at = {b.scratch_of: (off, b.size) for b, off in zip(buffers, offsets) if b.scratch_of is not None}
    return Plan(graph, buffers, offsets, by_tensor, scratch_at, size, lower_bound(buffers), planner)
