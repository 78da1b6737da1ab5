"""int8 rules of the movement ops: the ops tagged int8_passthrough run unchanged on the int8 tensor, their outputs
keeping its qparams; Concat requantizes its inputs to the output's qparams.

MaxPool, views and copies (Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Slice, Gather on an activation, Split,
Expand, Tile, DepthToSpace ...), Pad (the pad value quantized: 0.0 becomes the zero point) and nearest Resize are
exact on int8 (a max or a copy of int8 values is the int8 of the max or the copy). They run in int8 only when their
input already is int8.
"""

from __future__ import annotations

import numpy as np

from ...ir import Node
from ...ops import tagged
from ..qparams import quantize
from ..rewriter import INT8, Rewrite, burnedge_op
from .base import RULES, cheap_ok, float_outputs, requant_attrs, rule

__all__ = ["concat", "passthrough"]


def passthrough(rw: Rewrite, node: Node) -> str | None:
    """Runs the op itself on the int8 tensor (input 0); the outputs keep the input's qparams."""
    x = node.inputs[0]
    if not rw.has_int8(x):
        return "its input is float"
    outs = [o for o in node.outputs if o]
    if len(outs) != len(node.outputs) and node.op_type != "MaxPool":
        return "an omitted output"
    if node.op_type == "MaxPool" and len(node.outputs) > 1 and node.outputs[1]:
        return "its indices output is used"
    if not all(rw.is_activation(o) for o in outs):
        return "an output is not float"
    if node.op_type == "Pad" and node.op.since < 11:
        return "Pad before opset 11 (its pad value is an attribute)"
    if node.op_type in ("Resize", "Upsample") and node.attrs.get("mode", "nearest") != "nearest":
        return f"mode {node.attrs.get('mode')!r} (int8 runs nearest only)"
    qx, qp_x = rw.int8(x)
    inputs = [qx]
    for k, n in enumerate(node.inputs[1:], start=1):
        if node.op_type == "Pad" and k == 2:
            v = np.array(0.0, np.float32) if not n else rw.const(n)
            if v is None:
                return "a pad value computed at run time"
            n = rw.add_const(f"{node.name}/pad_value", quantize(np.asarray(v, np.float32).reshape(()), qp_x))
        elif n and rw.value(n).dtype.kind == "f" and not rw.value(n).is_const:
            return f"input {k} is a float tensor computed at run time"
        inputs.append(n)
    if node.op_type == "Pad" and len(inputs) == 2:
        inputs.append(rw.add_const(f"{node.name}/pad_value", np.array(qp_x.zero_point, np.int8)))
    names = [rw.new_int8(o, qp_x) if o else "" for o in node.outputs]
    specs = [(n, INT8, rw.value(o).shape) if o else ("", INT8, ()) for n, o in zip(names, node.outputs)]
    rw.emit(node.op, node.name, inputs, specs, node.attrs, node.onnx_ops)
    rw.quantized(node, node.op_type)
    return None


for _name in sorted(tagged("int8_passthrough")):
    RULES[_name] = passthrough


@rule("Concat")
def concat(rw: Rewrite, node: Node) -> str | None:
    y = node.outputs[0]
    if not (float_outputs(rw, node) and rw.has_range(y)):
        return "its output is not a calibrated float tensor"
    acts = [n for n in node.inputs if not rw.value(n).is_const]
    if any(not rw.has_range(n) for n in acts):
        return "an input has no usable calibrated range"
    why = cheap_ok(rw, acts)
    if why:
        return why
    qp_y = rw.act_qp(y)
    inputs = []
    for n in node.inputs:
        if rw.value(n).is_const:
            inputs.append(rw.int8(n, qp_y)[0])
            continue
        qn, qp = rw.int8(n)
        if qp != qp_y:
            r = rw.fresh(f"{n}/requant")
            attrs = requant_attrs(qp.scale, qp.zero_point, qp_y.scale, qp_y.zero_point)
            rw.emit(
                burnedge_op("QRequant"),
                f"{node.name}/requant{len(inputs)}",
                [qn],
                [(r, INT8, rw.value(n).shape)],
                attrs,
            )
            rw.qparams[r] = qp_y
            qn = r
        inputs.append(qn)
    name = rw.new_int8(y, qp_y)
    rw.emit(node.op, node.name, inputs, [(name, INT8, rw.value(y).shape)], node.attrs, node.onnx_ops)
    rw.quantized(node, "Concat")
    return None
