"""int8 rules of the elementwise ops: QLut for every op tagged int8_lut (and one-input chains), QAdd / QMul for
Add and Mul of two tensors (a constant operand is quantized per tensor; with one scalar constant, a table)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...ir import Node
from ...ops import tagged
from ...ops.fixedpoint import add_multipliers, requant_multiplier
from ...ops.interpreter import evaluate
from ..qparams import QParams, dequantize, quantize
from ..rewriter import INT8, Rewrite, burnedge_op
from .base import RULES, cheap_ok, epilogue, float_outputs, rule

__all__ = ["add_mul", "lut", "lut_outputs"]


def _unary_input(rw: Rewrite, node: Node) -> int | None:
    """Index of the one float activation input of an elementwise node whose other inputs are 1-element constants."""
    acts = [i for i, n in enumerate(node.inputs) if n and not rw.value(n).is_const]
    if len(acts) != 1 or node.captures or len([o for o in node.outputs if o]) != 1:
        return None
    i = acts[0]
    x = node.inputs[i]
    if not rw.is_activation(x) or rw.value(x).shape != rw.value(node.outputs[0]).shape:
        return None
    if any(n and rw.value(n).is_const and rw.const(n).size != 1 for n in node.inputs):
        return None
    return i


def lut_outputs(node: Node, index: int, const: Callable[[str], np.ndarray | None], qp_x: QParams) -> np.ndarray:
    """The float outputs of `node` (flattened) for the 256 int8 values of input `index` under `qp_x`, the other
    inputs being the constants `const(name)` gives: the reference evaluated once on the whole grid (what QLut's
    table quantizes, here and in QDQ import)."""
    grid = dequantize(np.arange(-128, 128, dtype=np.int8), qp_x)
    args = [grid if k == index else (const(n) if n else None) for k, n in enumerate(node.inputs)]
    return np.asarray(evaluate(node, args)[0]).reshape(-1)


def lut(rw: Rewrite, node: Node) -> str | None:
    """Any op tagged int8_lut, as a function of its one activation input: QLut."""
    i = _unary_input(rw, node)
    if i is None:
        return "not a function of one tensor"
    x, y = node.inputs[i], node.outputs[0]
    if not (rw.has_range(x) and rw.has_range(y) and float_outputs(rw, node)):
        return "its input or output is not a calibrated float tensor"
    why = cheap_ok(rw, [x])
    if why:
        return why
    qx, qp_x = rw.int8(x)
    qp_y = rw.act_qp(y)
    table = quantize(np.asarray(lut_outputs(node, i, rw.const, qp_x), np.float32).reshape(256), qp_y)
    name = rw.new_int8(y, qp_y)
    rw.emit(
        burnedge_op("QLut"),
        node.name,
        [qx],
        [(name, INT8, rw.value(y).shape)],
        {"table": [int(t) for t in table]},
        node.onnx_ops,
    )
    rw.quantized(node, "QLut")
    return None


for _name in sorted(tagged("int8_lut")):
    RULES[_name] = lut
for _name in sorted(tagged("int8_lut", "burnedge")):
    RULES[f"burnedge.{_name}"] = lut


def _binary(rw: Rewrite, node: Node) -> tuple[str, str] | str:
    if len(node.inputs) != 2 or not all(node.inputs) or not float_outputs(rw, node):
        return "not a float op of two tensors"
    a, b = node.inputs
    for n in (a, b):
        if not _is_float_value(rw, n):
            return "an operand is not float"
        if not rw.value(n).is_const and not rw.has_range(n):
            return "an operand has no usable calibrated range"
    why = cheap_ok(rw, [n for n in (a, b) if not rw.value(n).is_const])
    return why or (a, b)


def _is_float_value(rw: Rewrite, n: str) -> bool:
    return rw.value(n).dtype.kind == "f"


@rule("Add", "Mul")
def add_mul(rw: Rewrite, node: Node) -> str | None:
    if _unary_input(rw, node) is not None:  # x + c, x * c with one constant: one table
        return lut(rw, node)
    got = _binary(rw, node)
    if isinstance(got, str):
        return got
    if all(rw.value(n).is_const for n in got):
        return "both operands are constant"
    out, qp_y, y_min, y_max, folded = (node.outputs[0], rw.act_qp(node.outputs[0]), -128, 127, [])
    if node.op_type == "Add":
        out, qp_y, y_min, y_max, folded = epilogue(rw, node)
    if not rw.has_range(out):
        return "its output has no usable calibrated range"
    (qa, qp_a), (qb, qp_b) = rw.int8(got[0]), rw.int8(got[1])
    attrs = dict(a_zero_point=qp_a.zero_point, b_zero_point=qp_b.zero_point, y_zero_point=qp_y.zero_point)
    if node.op_type == "Add":
        ma, mb, shift = add_multipliers(qp_a.scale, qp_b.scale, qp_y.scale)
        attrs.update(a_multiplier=ma, b_multiplier=mb, shift=shift, y_min=y_min, y_max=y_max)
    else:
        m, shift = requant_multiplier(qp_a.scale, qp_b.scale, qp_y.scale)
        attrs.update(multiplier=m, shift=shift)
    op = "QAdd" if node.op_type == "Add" else "QMul"
    name = rw.new_int8(out, qp_y)
    rw.emit(burnedge_op(op), node.name, [qa, qb], [(name, INT8, rw.value(out).shape)], attrs, node.onnx_ops)
    rw.quantized(node, op, folded)
    return None
