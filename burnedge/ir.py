"""The graph IR: typed values with static shapes, the OpDef record nodes are bound to, topological order, verify()."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from .errors import ModelError

__all__ = ["MAX_OPSET", "REQUIRED", "Graph", "Node", "OpDef", "Spec", "Value"]

REQUIRED = inspect.Parameter.empty  # the default of an attribute the op requires
MAX_OPSET = 10_000  # `until` of an op ONNX has not removed


class Spec(NamedTuple):
    """Type of a tensor known only by shape and dtype (what infer functions see and return)."""

    shape: tuple[int, ...]
    dtype: Any


@dataclass(frozen=True)
class OpDef:
    """One version range of one op: its numpy reference and what the importer needs to know about it.

    The registry (`burnedge.ops.register`) builds these; `tags` name facts other stages ask about the op
    (`burnedge.ops.TAGS` lists them and their meaning).
    """

    name: str
    domain: str
    since: int
    until: int
    ref: Callable[..., Any]
    attrs: dict[str, Any]
    n_inputs: int
    variadic: bool
    context: frozenset[str]
    static: tuple[int, ...] = ()
    dynamic_shape: bool = False
    random: bool = False
    infer: Callable[..., Any] | None = None
    tags: frozenset[str] = field(default_factory=frozenset)

    @property
    def key(self) -> str:
        return f"{self.domain + '.' if self.domain else ''}{self.name}"

    def __repr__(self) -> str:
        until = "" if self.until >= MAX_OPSET else str(self.until)
        return f"OpDef({self.key} opset {self.since}..{until})"


@dataclass
class Value:
    """A tensor in the graph: name, element type, static shape, and its data when it is a constant."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    data: np.ndarray | None = None

    @property
    def is_const(self) -> bool:
        return self.data is not None

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __repr__(self) -> str:
        kind = "const " if self.is_const else ""
        return f"Value({self.name!r}, {kind}{self.dtype.name}{list(self.shape)})"


@dataclass
class Node:
    """One op application. `inputs` uses "" for an omitted optional input, as ONNX does.

    `captures` lists the outer-scope values that the node's subgraphs read: they are inputs too, as far as
    lifetimes and ordering go. `origin` lists the (ONNX op type, node name) pairs a pass fused into this node;
    empty means the node is itself an ONNX node.
    """

    op: OpDef
    name: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)
    captures: list[str] = field(default_factory=list)
    origin: list[tuple[str, str]] = field(default_factory=list)

    @property
    def op_type(self) -> str:
        return self.op.name

    @property
    def onnx_ops(self) -> list[tuple[str, str]]:
        """The ONNX (op type, node name) pairs this node computes: itself, or what was fused into it."""
        return self.origin or [(self.op_type, self.name)]

    def uses(self) -> list[str]:
        """Every value this node reads: its inputs, then what its subgraphs capture."""
        return [n for n in self.inputs if n] + self.captures

    def __repr__(self) -> str:
        return f"Node({self.op_type} {self.name!r}: {self.inputs} -> {self.outputs})"


@dataclass
class Graph:
    """A model: graph inputs and outputs (value names), nodes in execution order, and every value by name."""

    name: str
    inputs: list[str]
    outputs: list[str]
    nodes: list[Node]
    values: dict[str, Value]
    opset: int = 0
    # the most threads a run may use (0: the backend's own maximum); a one-thread plan (a microcontroller) also
    # asks its kernels for their least scratch (the smallest bands), since there is no cache to tile for
    threads: int = 0

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def value(self, name: str) -> Value:
        try:
            return self.values[name]
        except KeyError:
            raise ModelError(f"graph {self.name!r} has no value named {name!r}") from None

    def constants(self) -> dict[str, np.ndarray]:
        return {n: v.data for n, v in self.values.items() if v.data is not None}

    def producers(self) -> dict[str, Node]:
        return {out: node for node in self.nodes for out in node.outputs if out}

    def toposort(self, outer: set[str] | frozenset[str] = frozenset()) -> None:
        """Order nodes so each runs after its producers (stable: keeps the file order where it can).

        Steps: count each node's unproduced inputs; start from nodes with none; release consumers as their
        producers are placed. A node left over sits on a cycle or reads a value nobody makes: both are errors
        that name the nodes.
        """
        produced = {n: node for node in self.nodes for n in node.outputs if n}
        known = set(self.inputs) | {n for n, v in self.values.items() if v.is_const} | set(outer)
        waiting: dict[int, int] = {}
        consumers: dict[str, list[int]] = {}
        for i, node in enumerate(self.nodes):
            deps = {n for n in node.uses() if n not in known}
            for n in deps:
                if n not in produced:
                    raise ModelError(
                        f"node {node.name!r} ({node.op_type}) reads {n!r}, which is neither a graph input, "
                        "an initializer nor the output of any node (a missing initializer?)"
                    )
                consumers.setdefault(n, []).append(i)
            waiting[i] = len(deps)
        ready = [i for i, w in waiting.items() if w == 0]
        order: list[int] = []
        while ready:
            ready.sort(reverse=True)
            i = ready.pop()
            order.append(i)
            for out in self.nodes[i].outputs:
                for j in consumers.get(out, []):
                    waiting[j] -= 1
                    if waiting[j] == 0:
                        ready.append(j)
        if len(order) != len(self.nodes):
            stuck = [self.nodes[i].name for i in range(len(self.nodes)) if waiting[i] > 0]
            raise ModelError(f"graph {self.name!r} has a cycle through node(s) {', '.join(map(repr, stuck[:8]))}")
        self.nodes = [self.nodes[i] for i in order]

    def copy(self) -> Graph:
        """A copy that passes may rewrite freely; constant arrays are shared (they are never written)."""
        memo: dict[int, Any] = {id(v.data): v.data for v in self.values.values() if v.data is not None}
        return copy.deepcopy(self, memo)

    def consumers(self) -> dict[str, list[Node]]:
        """Value name -> the nodes that read it (a graph output is read by no node)."""
        out: dict[str, list[Node]] = {}
        for node in self.nodes:
            for n in node.uses():
                out.setdefault(n, []).append(node)
        return out

    def prune(self) -> None:
        """Drops nodes whose outputs nobody reads and values nobody defines or reads."""
        live = set(self.outputs)
        kept: list[Node] = []
        for node in reversed(self.nodes):
            if any(o in live for o in node.outputs if o):
                kept.append(node)
                live.update(node.uses())
        self.nodes = kept[::-1]
        keep = live | set(self.inputs) | {o for n in self.nodes for o in n.outputs}
        self.values = {k: v for k, v in self.values.items() if k in keep}

    def verify(self, outer: set[str] | frozenset[str] = frozenset()) -> None:
        """Check the invariants every stage relies on; raise ModelError naming the first broken one."""
        defined = set(self.inputs) | {n for n, v in self.values.items() if v.is_const} | set(outer)
        for name in self.inputs:
            if name not in self.values:
                raise ModelError(f"graph input {name!r} has no type")
        for node in self.nodes:
            for n in node.uses():
                if n not in defined:
                    raise ModelError(f"node {node.name!r} ({node.op_type}) reads {n!r} before it is defined")
            for n in node.outputs:
                if not n:
                    continue
                if n in defined:
                    raise ModelError(f"value {n!r} is defined twice (again by node {node.name!r})")
                if n not in self.values:
                    raise ModelError(f"output {n!r} of node {node.name!r} has no inferred type")
                defined.add(n)
        for name in self.outputs:
            if name not in defined:
                raise ModelError(f"graph output {name!r} is never produced")
