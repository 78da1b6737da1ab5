"""The int8 rule registry and what the rules share: the registry (`RULES`, `rule`), input checks, clamp folding.

A rule is ``rule(rw, node) -> str | None``: it checks first, and either returns the reason the node stays float
(emitting nothing) or emits the int8 nodes and returns None. Rules are keyed by the op's key (``Conv``,
``burnedge.FusedConv``); one op file's rules sit in the module of the same stem beside this one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ...ir import Node
from ...ops.fixedpoint import requant_multiplier
from ..qparams import QParams, quantize
from ..rewriter import Rewrite

__all__ = [
    "CONV_ATTRS",
    "POOL_ATTRS",
    "RULES",
    "Rule",
    "cheap_ok",
    "clamp",
    "clip_bounds",
    "epilogue",
    "float_outputs",
    "ints",
    "requant_attrs",
    "rule",
]

Rule = Callable[[Rewrite, Node], "str | None"]
RULES: dict[str, Rule] = {}
CONV_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")
POOL_ATTRS = ("kernel_shape", "auto_pad", "ceil_mode", "count_include_pad", "dilations", "pads", "strides")


def rule(*names: str) -> Callable[[Rule], Rule]:
    """Decorator: registers a rule for the op keys `names`."""

    def deco(fn: Rule) -> Rule:
        for n in names:
            RULES[n] = fn
        return fn

    return deco


def ints(a: np.ndarray | int) -> list[int] | int:
    arr = np.asarray(a)
    return int(arr) if arr.ndim == 0 else [int(v) for v in arr.reshape(-1)]


def float_outputs(rw: Rewrite, node: Node) -> bool:
    outs = [o for o in node.outputs if o]
    return bool(outs) and all(rw.is_activation(o) for o in outs)


def cheap_ok(rw: Rewrite, names: list[str]) -> str | None:
    """None when some input is int8 already or a graph input; else why a cheap op stays float."""
    if any(rw.has_int8(n) or n in rw.src.inputs for n in names):
        return None
    return "its inputs are float: running it in int8 would only add a quantize/dequantize pair"


def requant_attrs(s_x: float, x_zero_point: int, s_y: float, y_zero_point: int) -> dict[str, int]:
    """The attributes of a QRequant from (s_x, x_zp) to (s_y, y_zp)."""
    m, shift = requant_multiplier(s_x, 1.0, s_y)
    return {"x_zero_point": x_zero_point, "y_zero_point": y_zero_point, "multiplier": m, "shift": shift}


def clip_bounds(node: Node, const: Callable[[str], np.ndarray | None]) -> tuple[float, float] | None:
    """(lo, hi) of a Relu or Clip node in real units (infinite when open), None when a bound is not one constant.

    `const(name)` gives an input's constant value (None for a value computed at run time).
    """
    if node.op_type == "Relu":
        return 0.0, math.inf
    if node.op.since < 11:
        return float(node.attrs.get("min", -math.inf)), float(node.attrs.get("max", math.inf))
    out = []
    for i, default in ((1, -math.inf), (2, math.inf)):
        name = node.inputs[i] if len(node.inputs) > i else ""
        arr = const(name) if name else np.array(default)
        if arr is None or np.asarray(arr).size != 1:
            return None
        out.append(float(np.asarray(arr).reshape(-1)[0]))
    return out[0], out[1]


def clamp(qp: QParams, lo: float, hi: float) -> tuple[int, int]:
    """[lo, hi] in real units as the int8 clamp of `qp` (Q is monotone: Q(clip(y)) = clip(Q(y)))."""
    q = quantize(np.array([lo, hi], np.float32), qp)
    return int(q[0]), int(q[1])


def _fold(rw: Rewrite, out: str) -> tuple[str, tuple[float, float] | None, list[Node]]:
    """(tensor the int8 op writes, (lo, hi) clamp in real units or None, nodes folded) for a producer of `out`."""
    reader = rw.sole_reader(out)
    if reader is None or reader.op.domain or rw.kept_by_user(reader) is not None:
        return out, None, []
    y = reader.outputs[0]
    if not rw.has_range(y) or reader.op_type not in ("Relu", "Clip"):
        return out, None, []
    bounds = clip_bounds(reader, rw.const)
    if bounds is None:
        return out, None, []
    return y, bounds, [reader]


def epilogue(rw: Rewrite, node: Node) -> tuple[str, QParams, int, int, list[Node]]:
    """Output tensor, its qparams, y_min, y_max and folded nodes of a QConv / QMatMul / QAdd for `node`."""
    act = node.attrs.get("activation", "")
    out = node.outputs[0]
    folded: list[Node] = []
    bounds: tuple[float, float] | None = None
    if act == "Relu":
        bounds = (0.0, math.inf)
    elif act == "Clip":
        p = list(node.attrs.get("activation_params", ()))
        bounds = (float(p[0]), float(p[1]))
    else:
        out, bounds, folded = _fold(rw, out)
    qp = rw.act_qp(out)
    y_min, y_max = -128, 127
    if bounds is not None:
        y_min, y_max = clamp(qp, max(bounds[0], -3e38), min(bounds[1], 3e38))
    return out, qp, y_min, y_max, folded
