"""int8 rules of AveragePool and GlobalAveragePool: QAvgPool / QGlobalAvgPool, the output keeping the input's
qparams (MaxPool and GlobalMaxPool move int8 bytes: `movement.py`)."""

from __future__ import annotations

from ...ir import Node
from ..rewriter import INT8, Rewrite, burnedge_op
from .base import POOL_ATTRS, rule

__all__ = ["avg_pool"]


@rule("AveragePool", "GlobalAveragePool")
def avg_pool(rw: Rewrite, node: Node) -> str | None:
    x, y = node.inputs[0], node.outputs[0]
    if not rw.has_int8(x):
        return "its input is float"
    qx, qp_x = rw.int8(x)
    if node.op_type == "AveragePool":
        op = "QAvgPool"
        attrs = {k: node.attrs[k] for k in POOL_ATTRS if k in node.attrs}
    else:
        op, attrs = "QGlobalAvgPool", {}
    attrs["zero_point"] = qp_x.zero_point
    name = rw.new_int8(y, qp_x)
    rw.emit(burnedge_op(op), node.name, [qx], [(name, INT8, rw.value(y).shape)], attrs, node.onnx_ops)
    rw.quantized(node, op)
    return None
