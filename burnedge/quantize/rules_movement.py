"""int8 rules of the movement ops: they run unchanged on the int8 tensor, and their outputs keep its qparams.

MaxPool, views and copies (Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Slice, Gather on an activation, Split,
Expand, Tile, DepthToSpace ...), Pad (the pad value quantized: 0.0 becomes the zero point) and nearest Resize are
exact on int8 (a max or a copy of int8 values is the int8 of the max or the copy). They run in int8 only when their
input already is int8.
"""

from __future__ import annotations

import numpy as np

from ..ir import Node
from .qparams import quantize
from .rewrite import INT8, Rewrite
from .rules import RULES

__all__ = ["PASSTHROUGH", "passthrough"]

PASSTHROUGH = (
    "Reshape Flatten Transpose Squeeze Unsqueeze Slice Gather Identity Expand Tile DepthToSpace SpaceToDepth Split "
    "MaxPool GlobalMaxPool ReduceMax ReduceMin Pad Resize Upsample"
).split()


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


for _name in PASSTHROUGH:
    RULES[_name] = passthrough
del _name
