"""int8 rule of Conv and FusedConv: QConv with per-output-channel weights, an int32 bias and the activation as a
clamp (Relu, Clip, or a Relu / Clip reading its output alone). Weight scales are floored so the bias and the
accumulators provably fit int32 (`accumulators.py`); a layer that cannot fit stays float."""

from __future__ import annotations

import numpy as np

from ...ir import Node
from ...ops.fixedpoint import requant_multiplier
from ..accumulators import int8_weights
from ..rewriter import INT8, Rewrite, burnedge_op
from .base import CONV_ATTRS, epilogue, float_outputs, ints, rule

__all__ = ["conv"]


@rule("Conv", "burnedge.FusedConv")
def conv(rw: Rewrite, node: Node) -> str | None:
    x, w = node.inputs[0], node.inputs[1]
    b = node.inputs[2] if len(node.inputs) > 2 else ""
    if len(node.inputs) > 3 and node.inputs[3]:
        return "a residual input (split it first)"
    if node.attrs.get("activation", "") not in ("", "Relu", "Clip"):
        return f"activation {node.attrs['activation']} (split it first)"
    if rw.const(w) is None or (b and rw.const(b) is None):
        return "weights or bias computed at run time"
    if not (rw.is_activation(x) and rw.has_range(x) and float_outputs(rw, node)):
        return "its input or output is not a calibrated float tensor"
    bias = np.asarray(rw.const(b), np.float32).reshape(-1) if b else None
    got = int8_weights(np.asarray(rw.const(w), np.float32), bias, rw.int8_qp(x), axis=0)
    if isinstance(got, str):
        return got
    wq, wqp, qb = got
    out, qp_y, y_min, y_max, folded = epilogue(rw, node)
    qx, qp_x = rw.int8(x)
    inputs = [qx, rw.add_const(f"{w}/int8", wq)]
    if qb is not None:
        inputs.append(rw.add_const(f"{b}/int32", qb))
    m, shift = requant_multiplier(qp_x.scale, wqp.scale, qp_y.scale)
    attrs = {k: node.attrs[k] for k in CONV_ATTRS if k in node.attrs}
    attrs.update(x_zero_point=qp_x.zero_point, y_zero_point=qp_y.zero_point, multiplier=ints(m), shift=ints(shift))
    attrs.update(y_min=y_min, y_max=y_max)
    name = rw.new_int8(out, qp_y)
    rw.emit(burnedge_op("QConv"), node.name, inputs, [(name, INT8, rw.value(out).shape)], attrs, node.onnx_ops)
    rw.quantized(node, "QConv", folded)
    return None
