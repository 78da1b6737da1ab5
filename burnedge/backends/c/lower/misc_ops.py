"""Lowerings of small ops: Hardmax, BitShift, ScatterElements (and Scatter, its name before opset 11) and
TensorScatter (a KV-cache update).

Hardmax follows Softmax's axis rules (2D at `axis` before opset 13, one axis from 13). BitShift is generated as
an elementwise loop (broadcasting like every binary op); a shift by the type's width or more gives 0, as numpy
does, where C leaves it undefined. ScatterElements copies data and applies the updates in index order; an index
out of range skips its update, as the reference does. TensorScatter copies the cache and
writes each batch entry's update at its run-time write index along the sequence axis (wrapping in circular mode);
a write past the cache fails the step.
"""

from __future__ import annotations

import numpy as np

from ....ir import Node
from . import Ctx, ctype, lower
from .elementwise import gen_loop
from .gather import REDUCTIONS, _arr, _index_arg
from .norm import softmax_axes
from .reduce import attr, norm_axis
from .views import share_or_copy

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


@lower("TensorScatter")
def tensor_scatter(ctx: Ctx, node: Node) -> str:
    past, upd, y = node.inputs[0], node.inputs[1], node.outputs[0]
    wi = node.inputs[2] if len(node.inputs) > 2 else ""
    shape, ushape = ctx.shape(past), ctx.shape(upd)
    axis = norm_axis(ctx, int(attr(node, "axis", -2)), len(shape))
    ctx.require(axis != 0, "the axis cannot be the batch axis 0")
    mode = attr(node, "mode", "linear")
    ctx.require(mode in ("linear", "circular"), f"mode is {mode!r}, expected 'linear' or 'circular'")
    ctx.require(len(ushape) == len(shape) and all(u == p for a, (u, p) in enumerate(zip(ushape, shape)) if a != axis),
                f"the update is {list(ushape)}, expected {list(shape)} but along axis {axis}")  # fmt: skip
    copy = share_or_copy(ctx, past, y)
    if ctx.size(upd) == 0:
        return copy
    seq, max_seq = ushape[axis], shape[axis]
    outer, inner = int(np.prod(shape[:axis])), int(np.prod(shape[axis + 1 :]))
    per_batch = outer // shape[0]
    ct, row = ctype(ctx.dtype(past)), inner * ctx.dtype(y).itemsize
    start = f"(long){ctx.tensor(wi)}[o / {per_batch}]" if wi else "0"
    wrap = f"pos %= {max_seq}; if (pos < 0) pos += {max_seq};" if mode == "circular" else ""
    return "\n".join([
        copy,
        "{",
        f"  const {ct} *up = {ctx.tensor(upd)};",
        f"  {ct} *yp = {ctx.tensor(y)};",
        f"  for (long o = 0; o < {outer}; o++)",
        f"    for (long s = 0; s < {seq}; s++) {{",
        f"      long pos = {start} + s;",
        f"      {wrap}",
        f"      if (pos < 0 || pos >= {max_seq}) return 2;",
        f"      memcpy(yp + (o * {max_seq} + pos) * {inner}, up + (o * {seq} + s) * {inner}, {row});",
        "    }",
        "}",
    ])  # fmt: skip
