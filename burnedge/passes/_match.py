"""Pattern-matching helpers shared by the fusion passes: who reads a value, constants, and node replacement."""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Node, Value

__all__ = ["Rewriter", "axis_vector", "fresh_name", "origin_of", "strip_ones"]


def strip_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    """`shape` without its leading 1s (what broadcasting ignores)."""
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return tuple(shape[k:])


def axis_vector(arr: np.ndarray, shape: tuple[int, ...], axis: int) -> np.ndarray | None:
    """`arr` as a vector along `axis` of `shape`, when adding it to a tensor of `shape` is a per-`axis` add.

    `arr` must broadcast into `shape` without growing it and be 1 everywhere but `axis` (a one-element `arr`
    becomes a full vector). None otherwise.
    """
    axis %= len(shape)
    if arr.ndim > len(shape):
        if any(d != 1 for d in arr.shape[: arr.ndim - len(shape)]):
            return None
        arr = arr.reshape(arr.shape[arr.ndim - len(shape) :])
    full = (1,) * (len(shape) - arr.ndim) + tuple(arr.shape)
    if arr.size == 1:
        return np.full(shape[axis], arr.reshape(-1)[0], dtype=arr.dtype)
    if any(d != 1 for k, d in enumerate(full) if k != axis) or full[axis] != shape[axis]:
        return None
    return arr.reshape(-1)


def fresh_name(graph: Graph, base: str) -> str:
    """A value name not yet used in `graph`: `base`, else `base_1`, `base_2` ..."""
    name, k = base, 1
    while name in graph.values:
        name, k = f"{base}_{k}", k + 1
    return name


class Rewriter:
    """A graph being rewritten in one scan: readers of every value, constant lookups, and deferred replacement.

    Replacements are recorded (a new node takes the place of one old node, others vanish) and applied by
    `finish()`, which keeps the node order; the reader map is kept up to date as nodes are replaced.
    """

    def __init__(self, graph: Graph):
        self.graph = graph
        self.readers: dict[str, list[Node]] = graph.consumers()
        self.outputs = set(graph.outputs)
        self._put: dict[int, Node] = {}  # slot (id of an original node) -> the node that runs there now
        self._slot: dict[int, int] = {}  # id of a node made by a replacement -> its slot
        self._drop: set[int] = set()
        self._keep: list[Node] = []
        self._dead_values: set[str] = set()

    # -- queries --------------------------------------------------------------------------------------------------
    def value(self, name: str) -> Value:
        return self.graph.values[name]

    def const(self, name: str) -> np.ndarray | None:
        """The array of a constant input, None for an activation or an omitted input."""
        if not name:
            return None
        return self.graph.values[name].data

    def scalar(self, name: str) -> float | None:
        """The value of a one-element constant, None otherwise."""
        arr = self.const(name)
        if arr is None or arr.size != 1 or arr.dtype.kind not in "fiub":
            return None
        return float(arr.reshape(-1)[0])

    def sole_reader(self, name: str) -> Node | None:
        """The one node reading `name`, when exactly one does and `name` is not a graph output."""
        if name in self.outputs:
            return None
        readers = self.readers.get(name, [])
        return readers[0] if len(readers) == 1 else None

    def read_only_by(self, name: str, nodes: list[Node]) -> bool:
        """True when `name` is not a graph output and every node reading it is one of `nodes`."""
        ids = {id(n) for n in nodes}
        return name not in self.outputs and all(id(r) in ids for r in self.readers.get(name, []))

    # -- edits ----------------------------------------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        """A value name not yet used in the graph, derived from `base`."""
        return fresh_name(self.graph, base)

    def add_const(self, base: str, arr: np.ndarray) -> str:
        name = self.fresh(base)
        arr = np.ascontiguousarray(arr)
        self.graph.values[name] = Value(name, arr.dtype, tuple(arr.shape), arr)
        return name

    def replace(self, old: list[Node], new: Node, at: Node) -> None:
        """`new` runs where `at` ran; every node of `old` (which includes `at`) goes away.

        Values made by `old` and not by `new` are deleted; readers of `new`'s inputs now name `new`.
        """
        old_ids = {id(n) for n in old}
        slots = {self._slot.get(i, i) for i in old_ids}
        at_slot = self._slot.get(id(at), id(at))
        for s in slots:
            self._put.pop(s, None)
        self._drop.update(s for s in slots if s != at_slot)
        self._put[at_slot] = new
        self._slot[id(new)] = at_slot
        self._keep.append(new)  # ids stay unique while the scan runs
        made = {o for n in old for o in n.outputs if o} - set(new.outputs)
        for name in made:
            self.readers.pop(name, None)
            self._dead_values.add(name)
        for n in old:
            for name in n.uses():
                if name in self.readers:
                    self.readers[name] = [r for r in self.readers[name] if id(r) not in old_ids]
        for name in new.uses():
            self.readers.setdefault(name, []).append(new)

    def finish(self) -> Graph:
        """Applies the recorded replacements and drops values nobody defines any more."""
        nodes = []
        for node in self.graph.nodes:
            if id(node) in self._drop:
                continue
            nodes.append(self._put.get(id(node), node))
        self.graph.nodes = nodes
        live = {o for n in nodes for o in n.outputs}
        for name in self._dead_values:
            if name not in live and name not in self.graph.inputs and name not in self.graph.outputs:
                self.graph.values.pop(name, None)
        return self.graph


def origin_of(nodes: list[Node]) -> list[tuple[str, str]]:
    """The ONNX (op type, name) pairs computed by `nodes`, flattened in order."""
    out: list[tuple[str, str]] = []
    for n in nodes:
        out.extend(n.onnx_ops)
    return out
