"""ONNX's integer products on kernels/reference/integer_ops.c: ConvInteger and QLinearConv (1-D to 3-D, any pads,
strides, dilations, groups) and MatMulInteger.

Weights, scales and zero points are read through pointers, so they may be constants or run-time inputs alike.
Each 8-bit operand may be int8 or uint8 on its own (its zero point shares its type). The window geometry is the
reference's own (ops/_im2col.geometry), so output sizes agree by construction. Per-channel parameters are those
ONNX defines: a weight zero point or scale per output channel (conv), a zero point per row of A or per column
of B (MatMulInteger); anything else is refused by name.
"""

from __future__ import annotations

import math

import numpy as np

from ....ir import Node
from ....ops._im2col import attr_list, geometry
from . import Ctx, LowerError, lower
from .qlinear_matmul import _batch_stride
from .reduce import attr

__all__: list[str] = []

EIGHT_BIT = ("int8", "uint8")


def _operand(ctx: Ctx, name: str, what: str) -> tuple[str, int]:
    """(void pointer, 1 if int8) of an 8-bit operand."""
    dt = ctx.dtype(name).name
    ctx.require(dt in EIGHT_BIT, f"{what} {name!r} is {dt}, expected int8 or uint8")
    return ctx.tensor(name, "void"), int(dt == "int8")


def _zero_point(
    ctx: Ctx, node: Node, i: int, like: str, counts: tuple[int, ...], what: str, column: bool = False
) -> tuple[str, int]:  # fmt: skip
    """(pointer or NULL, number of values) of the optional zero point input `i`, of `like`'s type, holding one of
    `counts` values: 1-D, or shaped [.., n, 1] for rows (the reference broadcasts it so), [.., 1, n] for a
    `column` zero point."""
    name = node.inputs[i] if len(node.inputs) > i else ""
    if not name:
        return "0", 1
    ctx.require(ctx.dtype(name) == ctx.dtype(like), f"{what} is {ctx.dtype(name)}, expected {ctx.dtype(like)}")
    n, shape = ctx.size(name), tuple(ctx.shape(name))
    ctx.require(n in counts, f"{what} has {n} values, expected {' or '.join(map(str, sorted(set(counts))))}")
    if n > 1 and len(shape) > 1:
        want = (n, 1) if not column else (1, n)
        ctx.require(
            shape[-2:] == want, f"{what} has shape {list(shape)}, expected [{n}] or [..., {want[0]}, {want[1]}]"
        )
    return ctx.tensor(name, "void"), n


def _geo(ctx: Ctx, node: Node, x: str, w: str) -> tuple[list[int], list[int]]:
    """(the 18 geometry values of the kernel, the output's spatial shape) of a ConvInteger / QLinearConv node."""
    xs, ws = ctx.shape(x), ctx.shape(w)
    ctx.require(3 <= len(xs) <= 5 and len(ws) == len(xs), f"x {list(xs)} and w {list(ws)}: 1-D to 3-D convolutions")
    group = int(attr(node, "group", 1))
    ctx.require(group >= 1 and xs[1] == ws[1] * group and ws[0] % group == 0,
                f"x {list(xs)} and w {list(ws)} do not fit group={group}")  # fmt: skip
    n_sp, kernel = len(xs) - 2, list(ws[2:])
    ks = attr(node, "kernel_shape")
    ctx.require(not ks or list(ks) == kernel, f"kernel_shape {ks} does not match the weight's shape {list(ws)}")
    try:
        strides = attr_list(attr(node, "strides"), n_sp, 1, "strides")
        dil = attr_list(attr(node, "dilations"), n_sp, 1, "dilations")
        geo = geometry(xs[2:], kernel, strides, dil, attr(node, "pads"), attr(node, "auto_pad", "NOTSET"))
    except ValueError as exc:
        raise LowerError(f"C backend cannot run node {node.name!r} ({node.op_type}): {exc}") from None
    ctx.require(all(o >= 1 for o in geo.out), f"the output's spatial shape {geo.out} is empty")
    rows = [[i, o, k, s, d, b] for i, o, k, s, d, b in zip(xs[2:], geo.out, kernel, strides, dil, geo.begin)]
    rows = [[1, 1, 1, 1, 1, 0]] * (3 - n_sp) + rows
    return [v for row in rows for v in row], list(geo.out)


def _conv(ctx: Ctx, node: Node, x: str, w: str, x_zp: int, w_zp: int, fields: list[str]) -> str:
    """The kernel call of a ConvInteger / QLinearConv node whose operands are inputs `x`, `w` and zero points
    x_zp, w_zp (input indices); `fields` are the designated initializers of its output."""
    (xp, xsig), (wp, wsig) = _operand(ctx, x, "x"), _operand(ctx, w, "w")
    geo, _ = _geo(ctx, node, x, w)
    xs, m = ctx.shape(x), ctx.shape(w)[0]
    xz, _ = _zero_point(ctx, node, x_zp, x, (1,), "x_zero_point")
    wz, wz_n = _zero_point(ctx, node, w_zp, w, (1, m), "w_zero_point")
    if ctx.size(node.outputs[0]) == 0:
        return "/* empty */"
    args = [
        f".x = {xp}", f".w = {wp}", f".x_signed = {xsig}", f".w_signed = {wsig}", f".x_zp = {xz}", f".w_zp = {wz}",
        f".w_zp_n = {wz_n}", f".n = {xs[0]}", f".c = {xs[1]}", f".m = {m}", f".group = {int(attr(node, 'group', 1))}",
        ".geo = {" + ", ".join(map(str, geo)) + "}", *fields,
    ]  # fmt: skip
    return "{\n  const be_conv_integer_args args = {" + ", ".join(args) + "};\n  be_conv_integer(&args, threads);\n}"


@lower("ConvInteger")
def conv_integer(ctx: Ctx, node: Node) -> str:
    y = node.outputs[0]
    ctx.require(ctx.dtype(y).name == "int32", f"y is {ctx.dtype(y)}, expected int32")
    return _conv(ctx, node, node.inputs[0], node.inputs[1], 2, 3, [f".acc = {ctx.tensor(y)}"])


@lower("QLinearConv")
def qlinear_conv(ctx: Ctx, node: Node) -> str:
    ins = list(node.inputs) + [""] * (9 - len(node.inputs))
    x, x_s, _, w, w_s, _, y_s, y_zp, bias = ins
    y, m = node.outputs[0], ctx.shape(w)[0]
    ctx.require(all(ins[:7]), "x, w, their scales and zero points and y_scale are required")
    for s, counts in ((x_s, (1,)), (w_s, (1, m)), (y_s, (1,))):
        ctx.require(ctx.dtype(s).name == "float32", f"scale {s!r} is {ctx.dtype(s)}, expected float32")
        want = " or ".join(map(str, sorted(set(counts))))
        ctx.require(ctx.size(s) in counts, f"scale {s!r} has {ctx.size(s)} values, expected {want}")
    want = ctx.dtype(y_zp) if y_zp else ctx.dtype(x)
    ctx.require(ctx.dtype(y) == want, f"y is {ctx.dtype(y)}, expected {want}")
    ctx.require(ctx.dtype(y).name in EIGHT_BIT, f"y is {ctx.dtype(y)}, expected int8 or uint8")
    ctx.require(not y_zp or ctx.size(y_zp) == 1, f"y_zero_point has {ctx.size(y_zp) if y_zp else 0} values, not 1")
    if bias:
        ctx.require(ctx.dtype(bias).name == "int32" and ctx.size(bias) == m, f"B must be {m} int32 values")
    fields = [
        f".bias = {ctx.tensor(bias) if bias else '0'}", f".x_scale = {ctx.tensor(x_s)}",
        f".w_scale = {ctx.tensor(w_s)}", f".y_scale = {ctx.tensor(y_s)}", f".w_scale_n = {ctx.size(w_s)}",
        f".y_zp = {ctx.tensor(y_zp, 'void') if y_zp else '0'}", f".y = {ctx.tensor(y, 'void')}",
        f".y_signed = {int(ctx.dtype(y).name == 'int8')}",
    ]  # fmt: skip
    return _conv(ctx, node, x, w, 2, 5, fields)


@lower("MatMulInteger")
def matmul_integer(ctx: Ctx, node: Node) -> str:
    a, b, y = node.inputs[0], node.inputs[1], node.outputs[0]
    (ap, asig), (bp, bsig) = _operand(ctx, a, "A"), _operand(ctx, b, "B")
    sa, sb, sy = tuple(ctx.shape(a)), tuple(ctx.shape(b)), tuple(ctx.shape(y))
    ctx.require(len(sa) >= 2 and len(sb) >= 2, f"operands of shapes {list(sa)}, {list(sb)}: rank 2 or more")
    ctx.require(ctx.dtype(y).name == "int32", f"Y is {ctx.dtype(y)}, expected int32")
    m, k, n = sa[-2], sa[-1], sb[-1]
    az, az_n = _zero_point(ctx, node, 2, a, (1, m), "a_zero_point")
    bz, bz_n = _zero_point(ctx, node, 3, b, (1, n), "b_zero_point", column=True)
    if ctx.size(y) == 0:
        return "/* empty */"
    batch = sy[:-2]
    if _whole_or_one(sa[:-2], batch) and _whole_or_one(sb[:-2], batch):
        ab, bb = _batch_stride(ctx, a, batch), _batch_stride(ctx, b, batch)
        return (
            f"be_matmul_integer({ap}, {asig}, {az}, {az_n}, {bp}, {bsig}, {bz}, {bz_n}, {ctx.tensor(y)}, "
            f"{math.prod(batch)}, {m}, {k}, {n}, {ab}, {bb}, threads);"
        )
    # batches that broadcast partly ([3, 1] against [3, 4]): one call per output matrix, from a table of offsets
    offsets = [np.broadcast_to(np.arange(math.prod(s[:-2])).reshape(s[:-2]), batch).reshape(-1) * s[-2] * s[-1]
               for s in (sa, sb)]  # fmt: skip
    table = ", ".join(f"{{{i}, {j}}}" for i, j in zip(*(o.tolist() for o in offsets)))
    ct = "int8_t" if asig else "uint8_t", "int8_t" if bsig else "uint8_t"
    return "\n".join([
        "{",
        f"  static const long off[][2] = {{{table}}};",
        f"  for (long t = 0; t < {len(offsets[0])}; t++)",
        f"    be_matmul_integer({ctx.tensor(a, ct[0])} + off[t][0], {asig}, {az}, {az_n}, {ctx.tensor(b, ct[1])} + "
        f"off[t][1], {bsig}, {bz}, {bz_n}, {ctx.tensor(y)} + t * {m * n}, 1, {m}, {k}, {n}, 0, 0, threads);",
        "}",
    ])  # fmt: skip


def _whole_or_one(own: tuple[int, ...], batch: tuple[int, ...]) -> bool:
    """An operand's batch dims are the output's batch, or hold one matrix."""
    return math.prod(own) == 1 or (1,) * (len(batch) - len(own)) + tuple(own) == tuple(batch)
