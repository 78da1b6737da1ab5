"""ONNX QLinearMatMul on 8-bit operands with per-tensor scales and zero points (kernel qlinear_matmul.c).

Scales and zero points are read through pointers, so they may be constants or run-time inputs alike. Operands
are of rank >= 2; a batch is either the output's batch or a single matrix broadcast over it. Per-row and
per-column scales and mixed int8/uint8 operands are refused by name. float16 and bfloat16 scales (opset 21) are
widened exactly to float32 locals first, as the reference widens them.
"""

from __future__ import annotations

import math

import numpy as np

from ....ir import Node
from . import Ctx, lower, storage_ctype
from .storage import load

__all__ = ["qlinear_matmul"]

_SUFFIX = {"int8": "i8", "uint8": "u8"}


def _batch_stride(ctx: Ctx, name: str, batch: tuple[int, ...]) -> int:
    """Elements between consecutive matrices of operand `name` over the output batch (0: one matrix, broadcast)."""
    shape = tuple(ctx.shape(name))
    own = shape[:-2]
    if math.prod(own) == 1:
        return 0
    ctx.require((1,) * (len(batch) - len(own)) + own == batch, f"{name!r} of shape {list(shape)} broadcasts partly")
    return shape[-2] * shape[-1]


@lower("QLinearMatMul")
def qlinear_matmul(ctx: Ctx, node: Node) -> str:
    ctx.require(len(node.inputs) == 8 and all(node.inputs), f"{len(node.inputs)} inputs: QLinearMatMul takes 8")
    a, a_s, a_zp, b, b_s, b_zp, y_s, y_zp = node.inputs
    y = node.outputs[0]
    types = {ctx.dtype(n).name for n in (a, a_zp, b, b_zp, y, y_zp)}
    ctx.require(len(types) == 1 and types <= set(_SUFFIX), f"operand types {sorted(types)}: one of int8, uint8")
    scale_types = ("float32", "float16", "bfloat16")
    for s in (a_s, b_s, y_s):
        ctx.require(ctx.dtype(s).name in scale_types, f"scale {s!r} is {ctx.dtype(s)}: one of {scale_types}")
    for p in (a_s, a_zp, b_s, b_zp, y_s, y_zp):
        ctx.require(ctx.size(p) == 1, f"{p!r} has {ctx.size(p)} values: only per-tensor parameters are supported")
    sa, sb, sy = tuple(ctx.shape(a)), tuple(ctx.shape(b)), tuple(ctx.shape(y))
    ctx.require(len(sa) >= 2 and len(sb) >= 2, f"operands of shapes {list(sa)}, {list(sb)}: rank 2 or more")
    if ctx.size(y) == 0:
        return "/* empty */"
    batch = sy[:-2]
    m, k, n = sa[-2], sa[-1], sb[-1]
    ab, bb = _batch_stride(ctx, a, batch), _batch_stride(ctx, b, batch)
    widen, ptrs = [], []
    for p in (a_s, a_zp, b_s, b_zp, y_s, y_zp):
        dt = ctx.dtype(p)
        if p in (a_s, b_s, y_s) and dt != np.float32:
            widen.append(f"const float s{len(widen)} = {load(f'{ctx.tensor(p, storage_ctype(dt))}[0]', dt)};")
            ptrs.append(f"&s{len(widen) - 1}")
        else:
            ptrs.append(ctx.tensor(p))
    fn = f"be_qlinear_matmul_{_SUFFIX[types.pop()]}"
    call = (
        f"{fn}({ctx.tensor(a)}, {ctx.tensor(b)}, {ctx.tensor(y)}, {math.prod(batch)}, {m}, {k}, {n}, {ab}, {bb}, "
        f"{', '.join(ptrs)}, threads);"
    )
    return "{ " + " ".join([*widen, call]) + " }" if widen else call
