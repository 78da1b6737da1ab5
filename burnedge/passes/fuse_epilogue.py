"""Epilogue fusion: Conv / Gemm / MatMul followed by bias, residual and activation become one burnedge
FusedConv / FusedGemm / FusedMatMul node (see ops/fused.py: ``y = act(op(x, w) + bias + R)``).

What follows the anchor, each step through an edge read by the next node only (and no graph output):

1. any number of Adds of a constant bias: per output channel (dim 1) for Conv, along the last axis for MatMul,
   anything Gemm's C accepts for Gemm; they are summed into the node's own bias (created when absent);
2. optionally one Add of another activation tensor of the output's shape and dtype: the residual R;
3. optionally one activation: Relu, Clip with constant bounds (Clip(0, inf) is Relu), LeakyRelu, HardSigmoid,
   HardSwish, Sigmoid, Tanh, Gelu (exact), or a small decomposed chain computing GELU (PyTorch's erf form
   ``x * (erf(x / sqrt(2)) + 1) / 2`` and its variants), HardSwish (``x * clip(x + 3, 0, 6) / 6``) or
   HardSigmoid. Decomposed chains are recognised by what they compute: the region of Mul/Div/Add/Sub/Erf/Clip/
   Relu/Max/Min nodes over the value and one-element constants is evaluated on sample points and compared with
   each activation's formula.

Steps: for each anchor in order, walk the steps above, collect the absorbed nodes, and when anything was absorbed
put the fused node at the place of the last absorbed node (its inputs, the residual included, exist by then).
"""

from __future__ import annotations

import math

import numpy as np

from ..ir import Graph, Node
from ..ops import for_onnx
from ..ops._common import erf
from ..ops.interpreter import evaluate
from ._match import Rewriter, axis_vector, origin_of

FLT_MAX = float(np.finfo(np.float32).max)
FUSED = {"Conv": "FusedConv", "Gemm": "FusedGemm", "MatMul": "FusedMatMul"}
CHAIN_OPS = {"Mul", "Div", "Add", "Sub", "Erf", "Clip", "Relu", "Max", "Min"}
MAX_CHAIN = 8
_SAMPLES = np.concatenate([np.linspace(-8, 8, 257), [-3.0, 3.0, -1e-3, 1e-3, 0.5, -0.5]]).astype(np.float32)
FORMULAS = {  # decomposed activations, as (activation, params) -> reference in float64
    ("Gelu", ()): lambda x: x * 0.5 * (1 + erf(x / math.sqrt(2))),
    ("HardSwish", ()): lambda x: x * np.clip(x / 6 + 0.5, 0, 1),
    ("HardSigmoid", (1 / 6, 0.5)): lambda x: np.clip(x / 6 + 0.5, 0, 1),
}


def _other(node: Node, name: str) -> str | None:
    if len(node.inputs) != 2 or node.inputs.count(name) != 1:
        return None
    return node.inputs[1] if node.inputs[0] == name else node.inputs[0]


def _is(node: Node | None, op: str) -> bool:
    return node is not None and node.op_type == op and not node.op.domain


def _clip_bounds(rw: Rewriter, node: Node) -> tuple[float, float] | None:
    """(lo, hi) of a Clip with constant bounds (missing ones are -/+FLT_MAX), None when a bound is a tensor."""
    if node.op.since >= 11:
        bounds = []
        for k, default in ((1, -FLT_MAX), (2, FLT_MAX)):
            name = node.inputs[k] if len(node.inputs) > k else ""
            v = rw.scalar(name) if name else default
            if v is None:
                return None
            bounds.append(v)
        return bounds[0], bounds[1]
    lo, hi = node.attrs.get("min"), node.attrs.get("max")
    return (-FLT_MAX if lo is None else float(lo)), (FLT_MAX if hi is None else float(hi))


def _simple_activation(rw: Rewriter, node: Node, cur: str) -> tuple[str, list[float]] | None:
    """The epilogue activation a single ONNX node applies to `cur`, None when it is not one."""
    if node.op.domain or not node.inputs or node.inputs[0] != cur:
        return None
    op, a = node.op_type, node.attrs
    if op in ("Relu", "Sigmoid", "Tanh", "HardSwish") and len(node.inputs) == 1:
        return op, []
    if op == "LeakyRelu":
        return "LeakyRelu", [float(a.get("alpha", 0.01))]
    if op == "HardSigmoid":
        return "HardSigmoid", [float(a.get("alpha", 0.2)), float(a.get("beta", 0.5))]
    if op == "Gelu" and a.get("approximate", "none") == "none":
        return "Gelu", []
    if op == "Clip":
        bounds = _clip_bounds(rw, node)
        if bounds is None:
            return None
        lo, hi = bounds
        return ("Relu", []) if lo == 0 and hi >= FLT_MAX else ("Clip", [lo, hi])
    return None


def _region(rw: Rewriter, cur: str) -> list[Node]:
    """Nodes computable from `cur` and one-element constants alone, with chain ops, in dependency order."""
    shape = rw.value(cur).shape
    have, region, seen = {cur}, [], set()
    changed = True
    while changed and len(region) < MAX_CHAIN:
        changed = False
        for name in list(have):
            for r in rw.readers.get(name, []):
                if id(r) in seen or r.op.domain or r.op_type not in CHAIN_OPS or len(r.outputs) != 1:
                    continue
                if not all(i in have or rw.scalar(i) is not None for i in r.inputs if i):
                    continue
                if rw.value(r.outputs[0]).shape != shape:
                    continue
                region.append(r)
                seen.add(id(r))
                have.add(r.outputs[0])
                changed = True
    return region


def _decomposed(rw: Rewriter, cur: str) -> tuple[list[Node], str, list[float]] | None:
    """The largest closed chain from `cur` computing a known activation: (nodes, activation, params)."""
    region = _region(rw, cur)
    for last in reversed(region):
        need, sub = {last.outputs[0]}, []
        for n in reversed(region):
            if n.outputs[0] in need:
                sub.append(n)
                need.update(n.inputs)
        sub.reverse()
        if not rw.read_only_by(cur, sub) or not all(rw.read_only_by(n.outputs[0], sub) for n in sub if n is not last):
            continue
        env = {cur: _SAMPLES}
        for n in sub:
            ins = [env[i] if i in env else rw.const(i).reshape(()) if i else None for i in n.inputs]
            env[n.outputs[0]] = evaluate(n, ins)[0]
        got = np.asarray(env[last.outputs[0]], np.float64).reshape(-1)
        if got.shape != _SAMPLES.shape:
            continue
        x = _SAMPLES.astype(np.float64)
        for (act, params), f in FORMULAS.items():
            want = f(x)
            if np.all(np.abs(got - want) <= 1e-5 * np.maximum(1, np.abs(want))):
                return sub, act, list(params)
    return None


class _Epilogue:
    """What one anchor absorbs as the walk goes on."""

    def __init__(self, rw: Rewriter, anchor: Node):
        self.rw, self.anchor = rw, anchor
        self.nodes: list[Node] = [anchor]
        self.cur = anchor.outputs[0]
        self.shape = rw.value(self.cur).shape
        self.dtype = rw.value(self.cur).dtype
        self.inputs = list(anchor.inputs) + [""] * (3 - len(anchor.inputs))
        self.attrs = {k: v for k, v in anchor.attrs.items() if k != "broadcast"}
        self.residual = ""
        self.activation: tuple[str, list[float]] = ("", [])

    def absorb(self, node: Node) -> None:
        self.nodes.append(node)
        self.cur = node.outputs[0]

    def add_bias(self, c: np.ndarray) -> bool:
        """Sums constant `c` into the anchor's bias input; False when it is not a bias for this op."""
        rw, op, old = self.rw, self.anchor.op_type, self.inputs[2]
        prev = rw.const(old) if old else None
        if old and prev is None:
            return False
        if op == "Gemm":
            if np.broadcast_shapes(c.shape, self.shape) != self.shape:
                return False
            beta = float(self.attrs.get("beta", 1.0))
            base = beta * prev.astype(np.float64) if prev is not None else 0.0
            new = (base + c.astype(np.float64)).astype(self.dtype)
            self.attrs["beta"] = 1.0
        else:
            vec = axis_vector(c, self.shape, 1 if op == "Conv" else -1)
            if vec is None:
                return False
            base = prev.astype(np.float64).reshape(-1) if prev is not None else 0.0
            new = (base + vec.astype(np.float64)).astype(self.dtype)
        self.inputs[2] = rw.add_const(f"{self.anchor.name}/bias", new)
        return True

    def fused(self) -> Node:
        ins = self.inputs[:3] + [self.residual]
        while ins and not ins[-1]:
            ins.pop()
        act, params = self.activation
        attrs = {**self.attrs, "activation": act, "activation_params": [float(p) for p in params]}
        opdef = for_onnx(FUSED[self.anchor.op_type], 1, "burnedge")
        return Node(opdef, self.anchor.name, ins, [self.cur], attrs, origin=origin_of(self.nodes))


def _fuse(rw: Rewriter, anchor: Node) -> None:
    e = _Epilogue(rw, anchor)
    nxt = rw.sole_reader(e.cur)
    while _is(nxt, "Add") and rw.value(nxt.outputs[0]).shape == e.shape:  # 1. constant biases
        c = rw.const(_other(nxt, e.cur) or "")
        if c is None or c.dtype != e.dtype or not e.add_bias(c):
            break
        e.absorb(nxt)
        nxt = rw.sole_reader(e.cur)
    if _is(nxt, "Add"):  # 2. the residual
        r = _other(nxt, e.cur)
        rv = rw.value(r) if r else None
        if rv is not None and not rv.is_const and rv.shape == e.shape and rv.dtype == e.dtype:
            e.residual = r
            e.absorb(nxt)
            nxt = rw.sole_reader(e.cur)
    act = _simple_activation(rw, nxt, e.cur) if nxt is not None else None  # 3. the activation
    if act is not None and rw.value(nxt.outputs[0]).shape == e.shape:
        e.activation = act
        e.absorb(nxt)
    else:
        chain = _decomposed(rw, e.cur)
        if chain is not None:
            nodes, name, params = chain
            e.activation = (name, params)
            for n in nodes:
                e.absorb(n)
    if len(e.nodes) > 1:
        rw.replace(e.nodes, e.fused(), at=e.nodes[-1])


def run(graph: Graph) -> Graph:
    rw = Rewriter(graph)
    for node in list(graph.nodes):
        if node.op.domain or node.op_type not in FUSED or len(node.outputs) != 1:
            continue
        v = rw.value(node.outputs[0])
        if v.dtype.kind != "f":
            continue
        if node.op_type == "MatMul" and any(len(rw.value(i).shape) < 2 for i in node.inputs):
            continue
        if node.op_type == "Gemm" and len(node.inputs) > 2 and node.inputs[2] and rw.const(node.inputs[2]) is None:
            continue
        _fuse(rw, node)
    return rw.finish()
