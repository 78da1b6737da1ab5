"""int8 elementwise lowerings: QAdd / QMul with broadcasting (merged strides), QLut, QRequant, and ONNX
QuantizeLinear / DequantizeLinear per tensor, per axis or blocked (kernels qelementwise.c, quantize*.c)."""

from __future__ import annotations

import math

import numpy as np

from ....ir import Node
from . import Ctx, lower
from .qdq_storage import SMALL_QTYPES, dequantize_small, quantize_small
from .quantized import opt_input, require_i8, rq_params
from .reduce import attr

__all__ = ["dequantize_linear", "qbinary", "qlut", "qrequant", "quantize_linear"]


def _merged_strides(shapes: list[tuple[int, ...]], out: tuple[int, ...]) -> tuple[list[int], list[list[int]]]:
    """Output dims and each operand's element strides (0 = broadcast), size-1 dims dropped, contiguous runs merged."""
    nd = len(out)
    strides = []
    for shape in shapes:
        full = (1,) * (nd - len(shape)) + tuple(shape)
        st, acc = [0] * nd, 1
        for d in range(nd - 1, -1, -1):
            st[d] = acc if full[d] != 1 else 0
            acc *= full[d]
        strides.append(st)
    dims = [d for d in range(nd) if out[d] != 1]
    shape = [out[d] for d in dims]
    sts = [[s[d] for d in dims] for s in strides]
    i = len(shape) - 1
    while i > 0:  # merge dim i-1 into i when every operand steps through both as one
        if all(s[i - 1] == s[i] * shape[i] for s in sts):
            shape[i] *= shape[i - 1]
            for s in sts:
                del s[i - 1]
            del shape[i - 1]
        i -= 1
    return shape, sts


@lower("QAdd", "QMul", domain="burnedge")
def qbinary(ctx: Ctx, node: Node) -> str:
    a_name, b_name, y_name = node.inputs[0], node.inputs[1], node.outputs[0]
    require_i8(ctx, [a_name, b_name, y_name])
    out = ctx.shape(y_name)
    if ctx.size(y_name) == 0:
        return "/* empty */"
    shape, (sa, sb) = _merged_strides([ctx.shape(a_name), ctx.shape(b_name)], out)
    if not shape:
        shape, sa, sb = [1], [0], [0]
    lo, hi = int(attr(node, "y_min", -128)), int(attr(node, "y_max", 127))
    ctx.require(-128 <= lo <= hi <= 127, f"[y_min, y_max] = [{lo}, {hi}] is not inside int8")
    zps = [int(attr(node, k, 0)) for k in ("a_zero_point", "b_zero_point", "y_zero_point")]
    if node.op_type == "QAdd":
        am, bm, shift = (int(node.attrs[k]) for k in ("a_multiplier", "b_multiplier", "shift"))
        ctx.require(0 <= am < 2**31 and 0 <= bm < 2**31, "QAdd multipliers must lie in [0, 2^31)")
        ctx.require(1 <= shift <= 62, f"QAdd shift {shift} is outside 1..62")
        params = f"{{BE_QADD, {zps[0]}, {zps[1]}, {zps[2]}, {am}, {bm}, {shift}, 0, 32, 1, {lo}, {hi}}}"
    else:
        m, s, lim = (int(v[0]) for v in rq_params(node.attrs["multiplier"], node.attrs["shift"], 1))
        params = f"{{BE_QMUL, {zps[0]}, {zps[1]}, {zps[2]}, 0, 0, 1, {m}, {s}, {lim}, {lo}, {hi}}}"
    arr = ", ".join
    return "\n".join([
        "{",
        f"  static const long shape[] = {{{arr(map(str, shape))}}}, sa[] = {{{arr(map(str, sa))}}}, "
        f"sb[] = {{{arr(map(str, sb))}}};",
        f"  static const be_qbin p = {params};",
        f"  be_qbinary_i8({ctx.tensor(a_name)}, {ctx.tensor(b_name)}, {ctx.tensor(y_name)}, {len(shape)}, shape, sa, "
        "sb, &p, threads);",
        "}",
    ])  # fmt: skip


@lower("QLut", domain="burnedge")
def qlut(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    require_i8(ctx, [x, y])
    table = np.asarray(node.attrs["table"], np.int64)
    ctx.require(table.shape == (256,), "QLut needs a table of 256 values")
    t = ctx.pack(f"q:lut:{y}", table.astype(np.int8))
    return f"be_qlut_i8({ctx.tensor(x)}, {ctx.tensor(y)}, {t}, {ctx.size(y)}, threads);"


@lower("QRequant", domain="burnedge")
def qrequant(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    require_i8(ctx, [x, y])
    m, s, lim = (int(v[0]) for v in rq_params(node.attrs["multiplier"], node.attrs["shift"], 1))
    xzp, yzp = int(attr(node, "x_zero_point", 0)), int(attr(node, "y_zero_point", 0))
    return f"be_qrequant_i8({ctx.tensor(x)}, {ctx.tensor(y)}, {ctx.size(y)}, {xzp}, {yzp}, {m}, {s}, {lim}, threads);"


def _qdq_layout(ctx: Ctx, node: Node, x_name: str) -> tuple[int, int, int, str, str]:
    """(outer, C, inner, scale pointer, zero-point setup) of a per-tensor or per-axis Q/DQ node.

    Constant scales and zero points are packed once (float32 scales, int32 zero points, C of each); run-time ones
    are read from the arena: the float32 scale as it is, the zero point (of the quantized type) widened into a
    local int32 array `zp_` of C entries, which the setup string declares before the kernel call.
    """
    s_name, zp_name = node.inputs[1], opt_input(node, 2)
    ctx.require(ctx.dtype(s_name) == np.float32, f"the scale is {ctx.dtype(s_name)}: only float32 is supported")
    shape, s_shape = ctx.shape(x_name), tuple(ctx.shape(s_name))
    if math.prod(s_shape) == 1 and len(s_shape) <= 1:
        outer, c, inner = 1, 1, ctx.size(x_name)
    else:
        ctx.require(len(s_shape) == 1 and len(shape) > 0, "only per-tensor and per-axis scales are supported")
        axis = int(attr(node, "axis", 1)) % len(shape)
        ctx.require(s_shape[0] == shape[axis], f"the scale has {s_shape[0]} values, axis {axis} has {shape[axis]}")
        outer, c, inner = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])
    y = node.outputs[0]
    scale = ctx.const(s_name)
    s_ptr = ctx.tensor(s_name) if scale is None else ctx.pack(f"q:qdq:{y}:s", scale.reshape(-1).astype(np.float32))
    zp = ctx.const(zp_name) if zp_name else np.zeros(c, np.int32)
    if zp is not None:
        zps = np.broadcast_to(np.asarray(zp).astype(np.int64).reshape(-1), (c,)).astype(np.int32)
        return outer, c, inner, s_ptr, f"const int32_t *zp_ = {ctx.pack(f'q:qdq:{y}:zp', zps)};"
    zsrc = ctx.tensor(zp_name)
    return outer, c, inner, s_ptr, f"int32_t zp_[{c}]; for (long k = 0; k < {c}; k++) zp_[k] = (int32_t){zsrc}[k];"


def _blocked(ctx: Ctx, node: Node, fn: str, x: str, y: str, qtype: np.dtype) -> str:
    """A blocked Q/DQ call: scale and zero point have x's rank, ceil(D / block_size) along the axis."""
    block = int(attr(node, "block_size", 0))
    s_name, zp_name = node.inputs[1], opt_input(node, 2)
    ctx.require(ctx.dtype(s_name) == np.float32, f"the scale is {ctx.dtype(s_name)}: only float32 is supported")
    shape = tuple(ctx.shape(x))
    ctx.require(len(shape) > 0, "blocked quantization of a scalar")
    axis = int(attr(node, "axis", 1)) % len(shape)
    want = shape[:axis] + (-(-shape[axis] // block),) + shape[axis + 1 :]
    got = tuple(ctx.shape(s_name))
    ctx.require(got == want, f"blocked scale of shape {list(got)}, expected {list(want)} (block_size {block})")
    zp = ctx.tensor(zp_name) if zp_name else ctx.pack(f"q:qdq:{y}:zp0", np.zeros(want, qtype))
    outer, c, inner = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])
    if ctx.size(y) == 0:
        return "/* empty */"
    dims = f"{outer}, {c}, {inner}, {block}"
    return f"{fn}({ctx.tensor(x)}, {ctx.tensor(y)}, {dims}, {ctx.tensor(s_name)}, {zp}, threads);"


# the quantized types the kernels handle, with their kernel suffix; float8 and 4- or 2-bit types: qdq_storage.py
QTYPES = {"int8": "i8", "uint8": "u8", "int16": "i16", "uint16": "u16", "int32": "i32"}


@lower("QuantizeLinear")
def quantize_linear(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    if ctx.dtype(y).name in SMALL_QTYPES:
        return quantize_small(ctx, node)
    ctx.require(ctx.dtype(x) == np.float32, f"QuantizeLinear of {ctx.dtype(x)}: only float32 is supported")
    out = ctx.dtype(y).name
    ok = ("int8", "uint8", "int16", "uint16")
    ctx.require(out in ok, f"QuantizeLinear to {out}: only {', '.join(ok)} are supported")
    if int(attr(node, "block_size", 0) or 0) > 0:
        return _blocked(ctx, node, f"be_quantize_blocked_f32_{QTYPES[out]}", x, y, ctx.dtype(y))
    outer, c, inner, s, setup = _qdq_layout(ctx, node, x)
    if ctx.size(y) == 0:
        return "/* empty */"
    fn = f"be_quantize_f32_{QTYPES[out]}"
    return f"{{ {setup} {fn}({ctx.tensor(x)}, {ctx.tensor(y)}, {outer}, {c}, {inner}, {s}, zp_, threads); }}"


@lower("DequantizeLinear")
def dequantize_linear(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    src = ctx.dtype(x).name
    if src in SMALL_QTYPES:
        return dequantize_small(ctx, node)
    ctx.require(src in QTYPES, f"DequantizeLinear of {src}: only {', '.join(QTYPES)} are supported")
    ctx.require(ctx.dtype(y) == np.float32, f"DequantizeLinear to {ctx.dtype(y)}: only float32 is supported")
    if int(attr(node, "block_size", 0) or 0) > 0:
        return _blocked(ctx, node, f"be_dequantize_blocked_{QTYPES[src]}_f32", x, y, ctx.dtype(x))
    outer, c, inner, s, setup = _qdq_layout(ctx, node, x)
    if ctx.size(y) == 0:
        return "/* empty */"
    fn = f"be_dequantize_{QTYPES[src]}_f32"
    return f"{{ {setup} {fn}({ctx.tensor(x)}, {ctx.tensor(y)}, {outer}, {c}, {inner}, {s}, zp_, threads); }}"
