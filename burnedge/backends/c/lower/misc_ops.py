"""Lowerings of three small ops: Hardmax, BitShift and ScatterElements (and Scatter, its name before opset 11).

Hardmax follows Softmax's axis rules (2D at `axis` before opset 13, one axis from 13). BitShift is generated as
an elementwise loop (broadcasting like every binary op); a shift by the type's width or more gives 0, as numpy
does, where C leaves it undefined. ScatterElements copies data and applies the updates in index order; an index
out of range is found at run time and fails the step, as the reference raises.
"""

from __future__ import annotations

import numpy as np

from ....ir import Node
from . import Ctx, ctype, lower
from .elementwise import gen_loop
from .gather import REDUCTIONS, _arr, _index_arg
from .norm import softmax_axes
from .reduce import attr, norm_axis

SHIFT_TYPES = ("uint8", "uint16", "uint32", "uint64")
SCATTER_TYPES = {"float32": "f32", "int32": "i32", "int64": "i64"}


@lower("Hardmax")
def hardmax(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) == np.float32, f"no C Hardmax on {ctx.dtype(x)} (float32 only)")
    if ctx.size(x) == 0:
        return "/* empty */"
    outer, n, inner = softmax_axes(ctx, node, ctx.shape(x))
    return f"be_hardmax_f32({ctx.tensor(x)}, {ctx.tensor(y)}, {outer}, {n}, {inner}, threads);"


@lower("BitShift")
def bit_shift(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    dt = ctx.dtype(x)
    ctx.require(dt.name in SHIFT_TYPES, f"no C BitShift on {dt} (ONNX allows {', '.join(SHIFT_TYPES)})")
    direction = attr(node, "direction")
    ctx.require(direction in ("LEFT", "RIGHT"), f"direction is {direction!r}, expected 'LEFT' or 'RIGHT'")
    op, width, ct = "<<" if direction == "LEFT" else ">>", dt.itemsize * 8, ctype(dt)

    def body(a: list[str], _types) -> tuple[list[str], str]:
        return [], f"({a[1]} >= {width} ? ({ct})0 : ({ct})({a[0]} {op} {a[1]}))"

    return gen_loop(ctx, y, [x, node.inputs[1]], body)


@lower("ScatterElements", "Scatter")
def scatter_elements(ctx: Ctx, node: Node) -> str:
    data, ind, upd, y = node.inputs[0], node.inputs[1], node.inputs[2], node.outputs[0]
    dt = ctx.dtype(data).name
    ctx.require(dt in SCATTER_TYPES, f"no C ScatterElements on {dt} (C kernels: {', '.join(SCATTER_TYPES)})")
    shape, ishape = ctx.shape(data), ctx.shape(ind)
    ctx.require(len(shape) == len(ishape), f"indices have rank {len(ishape)}, expected {len(shape)} (data's)")
    ctx.require(ctx.shape(upd) == ishape, f"updates have shape {ctx.shape(upd)}, expected {ishape} (indices')")
    reduction = attr(node, "reduction", "none")
    ctx.require(reduction in REDUCTIONS, f"reduction is {reduction!r}, expected one of {', '.join(REDUCTIONS)}")
    if ctx.size(y) == 0:
        return "/* empty */"
    if ctx.size(ind) == 0:
        return f"memmove({ctx.tensor(y)}, {ctx.tensor(data)}, {ctx.size(y) * ctx.dtype(y).itemsize});"
    axis = norm_axis(ctx, int(attr(node, "axis", 0)), len(shape))
    ptr, is64 = _index_arg(ctx, ind)
    args = f"{ctx.tensor(data)}, {ptr}, {is64}, {ctx.tensor(upd)}, {ctx.tensor(y)}, dd, di, {len(shape)}, {axis}"
    return "\n".join(
        [
            f"{{ static const long dd[] = {_arr(shape)}, di[] = {_arr(ishape)};",
            f"  if (be_scatter_elements_{SCATTER_TYPES[dt]}({args}, {REDUCTIONS[reduction]})) return 2; }}",
        ]
    )
