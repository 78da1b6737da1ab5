"""int8 rules of the reductions (ops/reduce.py): ReduceMean over the innermost axes as a QGlobalAvgPool; ReduceSum
stays float, with the reason.

ReduceMax and ReduceMin are tagged int8_passthrough (a max of int8 codes is the code of the max) and run through
`movement.py`'s rule. A mean of int8 values under one (scale, zero point) is a value in the same range, so the
output keeps the input's qparams: reshaped to [1, outer, n], QGlobalAvgPool sums the n codes in int32 and divides
with the one rounding rule, and a reshape gives the output its shape. A sum would need an output scale n times
the input's to hold every possible sum, but a sum of n uncorrelated values spans about sqrt(n) times the input's
range: int8 would keep only a few of its 256 steps, so ReduceSum stays float.
"""

from __future__ import annotations

import math

import numpy as np

from ...ir import Node
from ...ops import for_onnx
from ...ops._common import as_axes
from ..rewriter import INT8, Rewrite, burnedge_op
from .base import rule

__all__ = ["reduce_mean", "reduce_sum"]


def _axes(rw: Rewrite, node: Node, rank: int) -> tuple[int, ...] | None:
    """The reduced axes (sorted, non-negative), None when they are an input computed at run time."""
    if "axes" in node.op.attrs:
        axes = node.attrs.get("axes")
    elif len(node.inputs) > 1 and node.inputs[1]:
        axes = rw.const(node.inputs[1])
        if axes is None:
            return None
    else:
        axes = None
    got = as_axes(axes, rank) if axes is not None and np.asarray(axes).size else ()
    if not got:
        return () if node.attrs.get("noop_with_empty_axes", 0) else tuple(range(rank))
    return got


@rule("ReduceMean")
def reduce_mean(rw: Rewrite, node: Node) -> str | None:
    x, y = node.inputs[0], node.outputs[0]
    if not rw.has_int8(x):
        return "its input is float"
    if not rw.is_activation(y):
        return "its output is not float"
    shape = rw.value(x).shape
    axes = _axes(rw, node, len(shape))
    if axes is None:
        return "its axes are computed at run time"
    kept = [i for i, d in enumerate(shape) if i not in axes and d > 1]
    if any(a < k for a in axes if shape[a] > 1 for k in kept):
        return f"it reduces axes {list(axes)} of {list(shape)}, not only the innermost (int8 averages the last axes)"
    n = math.prod(shape[a] for a in axes)
    outer = math.prod(shape) // n if n else 0
    if n == 0 or outer == 0:
        return "an empty tensor"
    reshape = for_onnx("Reshape", max(rw.src.opset, 5))
    qx, qp = rw.int8(x)
    rows = rw.fresh(f"{node.name}/rows")
    rows_shape = rw.add_const(f"{node.name}/rows_shape", np.array([1, outer, n], np.int64))
    rw.emit(reshape, f"{node.name}/rows", [qx, rows_shape], [(rows, INT8, (1, outer, n))])
    rw.qparams[rows] = qp
    mean = rw.fresh(f"{node.name}/mean")
    rw.emit(burnedge_op("QGlobalAvgPool"), node.name, [rows], [(mean, INT8, (1, outer, 1))],
            {"zero_point": qp.zero_point}, node.onnx_ops)  # fmt: skip
    rw.qparams[mean] = qp
    out_shape = rw.value(y).shape
    name = rw.new_int8(y, qp)
    target = rw.add_const(f"{node.name}/out_shape", np.array(out_shape, np.int64))
    rw.emit(reshape, f"{node.name}/out", [mean, target], [(name, INT8, out_shape)])
    rw.quantized(node, "QGlobalAvgPool")
    return None


@rule("ReduceSum")
def reduce_sum(rw: Rewrite, node: Node) -> str | None:
    return "a sum of n int8 values spans about sqrt(n) times its input's range: int8 would keep too few steps"
