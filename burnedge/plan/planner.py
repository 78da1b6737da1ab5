"""Arena planners: place buffers given only (size, first, last) integers; buffers alive together never overlap.

Each planner collects buffers with `add_buffer`, then answers `offset(i)` and `arena_size()`. `best_plan` runs
all planners and keeps the smallest arena.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["PLANNERS", "GreedyByBreadth", "GreedyBySize", "GreedyByStart", "Linear", "Planner", "best_plan"]

ALIGN = 64
_WINDOWS = 1024  # time windows the greedy planners file placed buffers by


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


class Planner(Protocol):
    def add_buffer(self, size: int, first: int, last: int) -> None: ...
    def offset(self, i: int) -> int: ...
    def arena_size(self) -> int: ...


class Linear:
    """Every buffer gets its own bytes, one after another: the baseline, never shares memory."""

    def __init__(self) -> None:
        self._offsets: list[int] = []
        self._end = 0

    def add_buffer(self, size: int, first: int, last: int) -> None:
        self._offsets.append(self._end)
        self._end += _align(size)

    def offset(self, i: int) -> int:
        return self._offsets[i]

    def arena_size(self) -> int:
        return self._end


class _Greedy:
    """Greedy placement with best-fit gaps, in an order a subclass chooses.

    1. Sort the buffers (the subclass's `_order`).
    2. For each buffer, list the already placed buffers whose lifetimes overlap its own, by offset.
    3. Walk the gaps between them; take the smallest gap it fits in, else the end of the highest one.
    """

    def __init__(self) -> None:
        self._bufs: list[tuple[int, int, int]] = []
        self._offsets: list[int] | None = None

    def add_buffer(self, size: int, first: int, last: int) -> None:
        self._bufs.append((_align(size), first, last))
        self._offsets = None

    def _order(self) -> list[int]:
        raise NotImplementedError

    def _solve(self) -> list[int]:
        offsets = [0] * len(self._bufs)
        if not self._bufs:
            return offsets
        # Placed buffers are filed by time window, so step 2 looks only at those that can overlap (scanning every
        # placed buffer made 20,000 steps quadratic); the windows are then filtered exactly, so the result is the same.
        lo = min(b[1] for b in self._bufs)
        width = (max(b[2] for b in self._bufs) - lo) // _WINDOWS + 1
        windows: dict[int, list[int]] = {}
        for i in self._order():
            size, first, last = self._bufs[i]
            span = range((first - lo) // width, (last - lo) // width + 1)
            near = {j for w in span for j in windows.get(w, ())}
            live = sorted(
                (offsets[j], self._bufs[j][0]) for j in near if self._bufs[j][1] <= last and first <= self._bufs[j][2]
            )
            best, best_gap, cursor = None, None, 0
            for off, sz in live:
                gap = off - cursor
                if gap >= size and (best_gap is None or gap < best_gap):
                    best, best_gap = cursor, gap
                cursor = max(cursor, off + sz)
            offsets[i] = cursor if best is None else best
            for w in span:
                windows.setdefault(w, []).append(i)
        return offsets

    def offset(self, i: int) -> int:
        if self._offsets is None:
            self._offsets = self._solve()
        return self._offsets[i]

    def arena_size(self) -> int:
        if not self._bufs:
            return 0
        return max(self.offset(i) + b[0] for i, b in enumerate(self._bufs))


class GreedyBySize(_Greedy):
    """Largest buffers first (ties: earlier first use first): TFLite Micro's classic order."""

    def _order(self) -> list[int]:
        return sorted(range(len(self._bufs)), key=lambda i: (-self._bufs[i][0], self._bufs[i][1], i))


class GreedyByBreadth(_Greedy):
    """Buffers alive during the busiest steps first: those steps decide the arena, so pack them tightly."""

    def _order(self) -> list[int]:
        if not self._bufs:
            return []
        lo = min(b[1] for b in self._bufs)
        hi = max(b[2] for b in self._bufs)
        live = [0] * (hi - lo + 1)
        for size, first, last in self._bufs:
            for t in range(first - lo, last - lo + 1):
                live[t] += size
        breadth = [max(live[f - lo : la - lo + 1]) for _, f, la in self._bufs]
        return sorted(range(len(self._bufs)), key=lambda i: (-breadth[i], -self._bufs[i][0], self._bufs[i][1], i))


class GreedyByStart(_Greedy):
    """Buffers in the order the program writes them (ties: largest first): keeps neighbours in time together."""

    def _order(self) -> list[int]:
        return sorted(range(len(self._bufs)), key=lambda i: (self._bufs[i][1], -self._bufs[i][0], i))


PLANNERS: dict[str, type] = {
    "greedy_by_size": GreedyBySize,
    "greedy_by_breadth": GreedyByBreadth,
    "greedy_by_start": GreedyByStart,
    "linear": Linear,
}


def best_plan(buffers: list[tuple[int, int, int]]) -> tuple[str, list[int], int]:
    """Runs every planner on (size, first, last) buffers; returns (planner name, offsets, arena size) of the best."""
    best: tuple[str, list[int], int] | None = None
    for name, cls in PLANNERS.items():
        p = cls()
        for size, first, last in buffers:
            p.add_buffer(size, first, last)
        result = (name, [p.offset(i) for i in range(len(buffers))], p.arena_size())
        if best is None or result[2] < best[2]:
            best = result
    assert best is not None
    return best
