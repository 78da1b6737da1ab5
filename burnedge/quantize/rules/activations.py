"""int8 rule of Softmax (last axis): QSoftmax, exp by a table of the input's scale, output scale 1/256 and zero
point -128 (the other activations are tables: `elementwise.py`)."""

from __future__ import annotations

import numpy as np

from ...ir import Node
from ..qparams import QParams
from ..rewriter import INT8, Rewrite, burnedge_op
from .base import cheap_ok, float_outputs, rule

__all__ = ["SOFTMAX_SCALE", "SOFTMAX_ZERO_POINT", "softmax", "softmax_table"]

SOFTMAX_SCALE, SOFTMAX_ZERO_POINT = 1 / 256, -128  # what QSoftmax writes
_SOFTMAX_BITS = 20
_MASK_FLOOR = -1e4  # a calibrated minimum below this is an attention mask, not a signal


def softmax_table(scale: float) -> list[int]:
    """table[d] = round(exp(-d * s_x) * 2^20), d = 0..255 (float64, round half even)."""
    d = np.arange(256, dtype=np.float64)
    return [int(v) for v in np.rint(np.exp(-d * float(np.float32(scale))) * 2.0**_SOFTMAX_BITS)]


@rule("Softmax")
def softmax(rw: Rewrite, node: Node) -> str | None:
    x, y = node.inputs[0], node.outputs[0]
    rank = len(rw.value(x).shape)
    axis = int(node.attrs.get("axis", -1 if node.op.since >= 13 else 1))
    if axis % rank != rank - 1:
        return f"axis {axis} is not the last axis"
    if x in rw.unsafe:
        return rw.unsafe[x]
    if not (rw.has_range(x) and float_outputs(rw, node)):
        return "its input is not a calibrated float tensor"
    if rw.ranges[x][0] < _MASK_FLOOR:
        return f"its input reaches {rw.ranges[x][0]:.3g} (an attention mask): int8 cannot hold it"
    why = cheap_ok(rw, [x])
    if why:
        return why
    qx, qp_x = rw.int8(x)
    qp_y = QParams(np.float32(SOFTMAX_SCALE), SOFTMAX_ZERO_POINT)
    name = rw.new_int8(y, qp_y)
    attrs = {"axis": -1, "table": softmax_table(qp_x.scale)}
    rw.emit(burnedge_op("QSoftmax"), node.name, [qx], [(name, INT8, rw.value(y).shape)], attrs, node.onnx_ops)
    rw.quantized(node, "QSoftmax")
    return None
