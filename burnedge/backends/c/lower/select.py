"""Lowerings that pick or place input elements by index tables known at compile time: CenterCropPad, Compress
(constant condition), EyeLike, and OneHot (constant depth); and ReverseSequence, whose lengths arrive at run time.

CenterCropPad and Compress are table copies (movement.table_code): per output axis, the input element each output
index reads, or -1 for the zero padding; CenterCropPad crops from (d - t) // 2 and pads (t - d) // 2 before, as
the reference does. Compress keeps the positions whose condition is true along its axis (of the flattened input
without one). EyeLike reads only its input's static shape: its output is a constant, copied in. OneHot compares
every index (negative ones count from depth, floats truncated as numpy's astype does) with each class.
ReverseSequence reverses the first sequence_lens[b] steps along the time axis of each batch entry b; the step
fails (nonzero status) on a length outside [0, steps], where the reference's indexing raises.
"""

from __future__ import annotations

import numpy as np

from ....ir import Node
from . import Ctx, ctype, lower
from .movement import _bytes, attrs, dense_strides, ints, table_code
from .reduce import norm_axis


def _zero_fill(ctx: Ctx, node: Node, dtype: np.dtype) -> str:
    return f"(const void *){ctx.pack(f'{node.name}/zero', np.zeros(1, dtype))}"


@lower("CenterCropPad")
def center_crop_pad(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    shape, dtype = list(ctx.shape(x)), ctx.dtype(x)
    target = ctx.const(node.inputs[1])
    ctx.require(target is not None, "the target shape must be a constant (bind it)")
    target = ints(target)
    axes = attrs(node).get("axes")
    axes = list(range(len(shape))) if axes is None else [norm_axis(ctx, int(a), len(shape)) for a in axes]
    ctx.require(len(axes) == len(target), f"shape has {len(target)} values for {len(axes)} axes")
    want = dict(zip(axes, target))
    st = dense_strides(shape)
    tables = []
    for a, d in enumerate(shape):
        t = want.get(a, d)
        if t <= d:
            idx = np.arange((d - t) // 2, (d - t) // 2 + t, dtype=np.int64)
        else:
            lo = (t - d) // 2
            idx = np.concatenate([np.full(lo, -1), np.arange(d), np.full(t - d - lo, -1)]).astype(np.int64)
        tables.append(np.where(idx < 0, -1, idx * st[a]))
    ctx.require([len(t) for t in tables] == list(ctx.shape(y)), "CenterCropPad output shape mismatch")
    out = list(ctx.shape(y))
    return table_code(ctx, f"{node.name}/tables", _bytes(ctx, y), _bytes(ctx, x), dtype.itemsize, out, tables,
                      _zero_fill(ctx, node, dtype))  # fmt: skip


@lower("Compress")
def compress(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    cond = ctx.const(node.inputs[1])
    ctx.require(cond is not None, "the condition must be a constant (bind it): it decides the output's shape")
    keep = np.flatnonzero(np.asarray(cond).reshape(-1).astype(bool)).astype(np.int64)
    shape, dtype = list(ctx.shape(x)), ctx.dtype(x)
    axis = node.attrs.get("axis")
    if axis is None:
        tables = [keep]
    else:
        axis = norm_axis(ctx, int(axis), len(shape))
        st = dense_strides(shape)
        tables = [(keep if a == axis else np.arange(d, dtype=np.int64)) * st[a] for a, d in enumerate(shape)]
    out = list(ctx.shape(y))
    ctx.require([len(t) for t in tables] == out, f"the condition keeps {keep.size} positions, the output is {out}")
    return table_code(ctx, f"{node.name}/tables", _bytes(ctx, y), _bytes(ctx, x), dtype.itemsize, out, tables, "NULL")


@lower("EyeLike")
def eye_like(ctx: Ctx, node: Node) -> str:
    y = node.outputs[0]
    shape, dtype = ctx.shape(y), ctx.dtype(y)
    ctx.require(len(shape) == 2, f"the input has rank {len(shape)}, expected 2")
    ctype(dtype)  # a type the C backend stores
    if ctx.size(y) == 0:
        return "/* empty */"
    eye = np.eye(shape[0], shape[1], int(attrs(node).get("k", 0)), dtype=dtype)
    return f"memcpy({_bytes(ctx, y)}, {ctx.pack(f'{node.name}/eye', eye.view(np.uint8))}, {eye.nbytes});"


@lower("OneHot")
def one_hot(ctx: Ctx, node: Node) -> str:
    ind, values, y = node.inputs[0], node.inputs[2], node.outputs[0]
    depth = ctx.const(node.inputs[1])
    ctx.require(depth is not None, "depth must be a constant (bind it): it decides the output's shape")
    depth = int(np.asarray(depth).reshape(-1)[0])
    ctx.require(ctx.size(values) == 2, f"values has {ctx.size(values)} elements, expected 2 (off, on)")
    ishape = ctx.shape(ind)
    axis = norm_axis(ctx, int(attrs(node).get("axis", -1)), len(ishape) + 1)
    outer = int(np.prod(ishape[:axis], dtype=np.int64))
    inner = int(np.prod(ishape[axis:], dtype=np.int64))
    if ctx.size(y) == 0:
        return "/* empty */"
    ct = ctype(ctx.dtype(y))
    return "\n".join([
        "{",
        f"  const {ctype(ctx.dtype(ind))} *ip = {ctx.tensor(ind)};",
        f"  const {ct} *v = {ctx.tensor(values)};",
        f"  {ct} *yp = {ctx.tensor(y)};",
        f"  for (long o = 0; o < {outer}; o++)",
        f"    for (long i = 0; i < {inner}; i++) {{",
        f"      int64_t k = (int64_t)ip[o * {inner} + i];",
        f"      if (k < 0) k += {depth};",
        f"      for (long d = 0; d < {depth}; d++) yp[(o * {depth} + d) * {inner} + i] = k == d ? v[1] : v[0];",
        "    }",
        "}",
    ])  # fmt: skip


@lower("ReverseSequence")
def reverse_sequence(ctx: Ctx, node: Node) -> str:
    x, lens, y = node.inputs[0], node.inputs[1], node.outputs[0]
    shape = list(ctx.shape(x))
    ctx.require(len(shape) >= 2, f"the input has rank {len(shape)}, expected at least 2")
    ctx.require(ctx.dtype(lens).kind in "iu", f"sequence_lens has dtype {ctx.dtype(lens)}, expected an integer")
    b_ax = norm_axis(ctx, int(attrs(node).get("batch_axis", 1)), len(shape))
    t_ax = norm_axis(ctx, int(attrs(node).get("time_axis", 0)), len(shape))
    ctx.require(b_ax != t_ax, "batch_axis and time_axis are the same axis")
    ctx.require(ctx.size(lens) == shape[b_ax], f"sequence_lens has {ctx.size(lens)} values, expected {shape[b_ax]}")
    if ctx.size(x) == 0:
        return "/* empty */"
    st = dense_strides(shape)
    ct = ctype(ctx.dtype(x))
    nb, nt, sb, s_t = shape[b_ax], shape[t_ax], st[b_ax], st[t_ax]
    return "\n".join([
        "{",
        f"  const {ct} *xp = {ctx.tensor(x)};",
        f"  {ct} *yp = {ctx.tensor(y)};",
        f"  const {ctype(ctx.dtype(lens))} *lens = {ctx.tensor(lens)};",
        f"  for (long b = 0; b < {nb}; b++) if (lens[b] < 0 || lens[b] > {nt}) return 2;",
        f"  for (long i = 0; i < {ctx.size(x)}; i++) {{",
        f"    const long b = (i / {sb}) % {nb}, t = (i / {s_t}) % {nt}, n = (long)lens[b];",
        f"    yp[i] = xp[i + (t < n ? n - 1 - 2 * t : 0) * {s_t}];",
        "  }",
        "}",
    ])  # fmt: skip
