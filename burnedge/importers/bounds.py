"""What an imported model may make the importer do, bounded (the numbers and how to raise them: burnedge.limits).

- `check_functions`: the nodes the model's local functions inline into, counted before onnx's inliner runs (a
  1.9 KB function bomb inlines into 2**24 nodes), and no function that calls itself;
- `Budget`: the Loop iterations unrolled into one graph and the nodes they add (nested loops multiply);
- `foldable_loop`: a Loop is run at import only when its trip count is a constant within max_fold_trips;
- `check_result` / `predicted_bytes`: the bytes of one tensor computed at import, predicted before the ops that
  amplify (Expand, Tile, ConstantOfShape, Range, a broadcast) and checked after the rest.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from onnx import AttributeProto, ModelProto, NodeProto

from .. import limits
from ..errors import ModelError
from ..ir import Graph, Node
from .loop_shapes import counts_trips

__all__ = [
    "Budget",
    "check_args",
    "check_functions",
    "check_result",
    "foldable_loop",
    "predicted_bytes",
]


def _domain(d: str) -> str:
    return "" if d in ("", "ai.onnx") else d


def check_functions(model: ModelProto) -> None:
    """Refuses a model whose graph, with every local function call inlined, holds more than max_nodes nodes (or
    whose functions nest deeper than max_function_depth, or call themselves), before anything is inlined."""
    funcs = {(_domain(f.domain), f.name): f for f in model.functions}
    sizes: dict[tuple[str, str], int] = {}

    def count(nodes: Sequence[NodeProto], stack: tuple[tuple[str, str], ...]) -> int:
        total = 0
        for n in nodes:
            key = (_domain(n.domain), n.op_type)
            if key in funcs:
                total += size(key, stack)
                continue
            total += 1
            for a in n.attribute:
                if a.type == AttributeProto.GRAPH:
                    total += count(a.g.node, stack)
                for g in a.graphs:
                    total += count(g.node, stack)
        return total

    def size(key: tuple[str, str], stack: tuple[tuple[str, str], ...]) -> int:
        if key in stack:
            chain = " -> ".join(f"{d + '.' if d else ''}{n}" for d, n in (*stack[stack.index(key) :], key))
            raise ModelError(f"local function {key[1]!r} calls itself ({chain}); it cannot be inlined")
        if key not in sizes:
            limits.check("max_function_depth", len(stack) + 1, f"local function {key[1]!r}")
            sizes[key] = count(funcs[key].node, (*stack, key))
        return sizes[key]

    limits.check("max_nodes", count(model.graph.node, ()), "the model (its local functions inlined)")


class Budget:
    """The Loop unrolling of one graph import: trips and added nodes so far, each against its limit."""

    def __init__(self) -> None:
        self.trips = 0
        self.nodes = 0

    def unroll(self, node: Node, trips: int, body: Graph) -> None:
        where = f"node {node.name!r} (Loop), with the loops unrolled before it"
        ahead = trips * (1 + _inner_trips(body))  # nested loops with constant trips would follow: refuse now
        limits.check("max_unrolled_trips", self.trips + ahead, where)
        self.trips += trips
        limits.check("max_unrolled_trips", self.trips, where)
        self.nodes += trips * max(1, len(body.nodes))
        limits.check("max_nodes", self.nodes, where)


MAX_UNROLL = 4096  # a Loop of more trips is not unrolled (it stays a Loop)


def _inner_trips(body: Graph) -> int:
    """The iterations the Loops inside `body` will unroll into (constant trips up to MAX_UNROLL, a body that
    never stops early; nested ones multiplied): known before the outer Loop is copied."""
    consts = {n.outputs[0]: n.attrs.get("value") for n in body.nodes if n.op_type == "Constant" and n.outputs}
    consts.update((k, v.data) for k, v in body.values.items() if v.is_const)
    total = 0
    for n in body.nodes:
        m = consts.get(n.inputs[0]) if n.op_type == "Loop" and n.inputs else None
        inner = n.attrs.get("body")
        if isinstance(m, np.ndarray) and m.size == 1 and isinstance(inner, Graph) and counts_trips(inner):
            trips = int(m.reshape(()))
            if 0 < trips <= MAX_UNROLL:
                total += trips * (1 + _inner_trips(inner))
    return total


def foldable_loop(node: Node, ins: list[Any]) -> bool:
    """A Loop is evaluated at import (its inputs all constant) only when its trip count M is a constant of at most
    max_fold_trips; any other (no M, a while loop, or 10**9 trips) stays a Loop and gets its shapes statically."""
    if node.op.name != "Loop" or node.op.domain:
        return True
    m = ins[0] if ins else None
    return m is not None and int(np.asarray(m).reshape(-1)[0]) <= limits.get("max_fold_trips")


def _shape_arg(a: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in np.asarray(a).reshape(-1))


def predicted_bytes(node: Node, args: Sequence[Any]) -> tuple[tuple[int, ...], int] | None:
    """(shape, bytes) of the first output of the ops that can make a tensor far larger than their inputs, from
    their inputs alone; None for the others (checked after they ran) or when the inputs are not usable."""
    op = node.op_type
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    try:
        if op == "Expand":
            shape = np.broadcast_shapes(args[0].shape, _shape_arg(args[1]))
            return shape, math.prod(shape) * args[0].itemsize
        if op == "Tile" and len(args) == 2:
            shape = tuple(d * r for d, r in zip(args[0].shape, _shape_arg(args[1])))
            return shape, math.prod(shape) * args[0].itemsize
        if op == "ConstantOfShape":
            value = node.attrs.get("value")
            shape = _shape_arg(args[0])
            return shape, math.prod(shape) * (np.asarray(value).itemsize if value is not None else 4)
        if op == "Range":
            start, limit, delta = (float(np.asarray(a).reshape(-1)[0]) for a in args[:3])
            n = max(math.ceil((limit - start) / delta), 0) if delta else 0
            return (n,), n * np.asarray(args[0]).itemsize
        tags = node.op.tags
        if len(arrays) >= 2 and ("elementwise" in tags or "fusable" in tags):
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
            return shape, math.prod(shape) * max(a.itemsize for a in arrays)
    except (ValueError, TypeError, IndexError, OverflowError, ZeroDivisionError):
        return None  # malformed inputs: the op's own reference says what is wrong
    return None


def _check(node: Node, shape: Sequence[int], nbytes: int) -> None:
    where = f"node {node.name!r} ({node.op_type}) would compute a tensor of shape {list(shape)}"
    limits.check("max_folded_bytes", nbytes, where)


def check_args(node: Node, args: Sequence[Any]) -> None:
    """Before `node` is evaluated at import: refuses an output predicted to exceed max_folded_bytes."""
    predicted = predicted_bytes(node, args)
    if predicted is not None:
        _check(node, *predicted)


def check_result(node: Node, outs: Sequence[Any]) -> None:
    """After `node` was evaluated at import: each output within max_folded_bytes (then it is kept as a constant)."""
    for o in outs:
        if isinstance(o, np.ndarray):
            _check(node, o.shape, o.nbytes)
