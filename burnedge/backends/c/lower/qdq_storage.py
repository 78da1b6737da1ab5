"""QuantizeLinear / DequantizeLinear on the storage types: float8, float4e2m1, int4/uint4, int2/uint2.

One generated loop per node, per tensor or per axis, following the reference (burnedge/ops/quantize_linear.py):
QuantizeLinear divides in float32, then either rounds half to even, adds the zero point and clamps to the integer
range, or (float8 / float4) adds the zero point and rounds to the type, saturating unless ``saturate=0``;
DequantizeLinear subtracts the zero point (as int64 or float32), multiplies by the scale in float32 and rounds
to the output type (float32, or float16 / bfloat16 when the scale is). Blocked quantization is refused by name.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from .... import dtypes
from ....ir import Node
from . import Ctx, storage_ctype
from .quantized import opt_input
from .reduce import attr
from .storage import STORAGE, load, store

__all__ = ["SMALL_QTYPES", "dequantize_small", "quantize_small"]

SMALL_QTYPES = tuple(t for t in STORAGE if t not in ("float16", "bfloat16", "float8_e8m0fnu"))
_SCALES = ("float32", "float16", "bfloat16")


def _layout(ctx: Ctx, node: Node, x: str) -> tuple[int, int]:
    """(C, inner) of a per-tensor (C = 1) or per-axis scale over `x`."""
    s_name = node.inputs[1]
    ctx.require(ctx.dtype(s_name).name in _SCALES, f"the scale is {ctx.dtype(s_name)}: one of {_SCALES}")
    ctx.require(int(attr(node, "block_size", 0) or 0) == 0, "blocked quantization of these types is not supported")
    shape, s_shape = ctx.shape(x), tuple(ctx.shape(s_name))
    if math.prod(s_shape) == 1 and len(s_shape) <= 1:
        return 1, ctx.size(x)
    ctx.require(len(s_shape) == 1 and len(shape) > 0, "only per-tensor and per-axis scales are supported")
    axis = int(attr(node, "axis", 1)) % len(shape)
    ctx.require(s_shape[0] == shape[axis], f"the scale has {s_shape[0]} values, axis {axis} has {shape[axis]}")
    return shape[axis], math.prod(shape[axis + 1 :])


def _loop(ctx: Ctx, node: Node, body: list[str]) -> str:
    """The loop over every element: `ch` is the scale's index, `s` the scale, `zp` the zero point (0 without)."""
    x, s_name, zp_name, y = node.inputs[0], node.inputs[1], opt_input(node, 2), node.outputs[0]
    c, inner = _layout(ctx, node, x)
    n = ctx.size(y)
    if n == 0:
        return "/* empty */"
    ptr = {k: (storage_ctype(ctx.dtype(v)), v) for k, v in (("x", x), ("s", s_name), ("y", y), ("zp", zp_name)) if v}
    decls = [f"{'' if k == 'y' else 'const '}{t} *{k}p = {ctx.tensor(v, t)};" for k, (t, v) in ptr.items()]
    zp = load("zpp[ch]", ctx.dtype(zp_name)) if zp_name else "0"
    head = [f"const long ch = (i / {inner}) % {c};", f"const float s = {load('sp[ch]', ctx.dtype(s_name))};"]
    head.append(f"const {'float' if zp_name and dtypes.is_float(ctx.dtype(zp_name)) else 'int64_t'} zp = {zp};")
    inner_lines = "\n".join("    " + ln for ln in head + body)
    return "{\n  " + "\n  ".join(decls) + f"\n  for (long i = 0; i < {n}; i++) {{\n{inner_lines}\n  }}\n}}"


def quantize_small(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    out = ctx.dtype(y)
    ctx.require(ctx.dtype(x) == np.float32, f"QuantizeLinear of {ctx.dtype(x)} to {out}: only float32 is supported")
    ctx.require(ctx.dtype(node.inputs[1]) == np.float32, f"QuantizeLinear to {out}: the scale must be float32")
    if dtypes.is_float(out):
        sat = int(attr(node, "saturate", 1))
        plus = " + (float)zp" if opt_input(node, 2) else ""  # no zero point: no + 0.0f (it would turn -0 into +0)
        body = [f"const float q = xp[i] / s{plus};", f"yp[i] = {store('q', out, sat)};"]
    else:
        info = ml_dtypes.iinfo(out)
        body = [
            "double q = nearbyint((double)(xp[i] / s)) + (double)zp;",
            f"q = q < {int(info.min)} ? {int(info.min)} : (q > {int(info.max)} ? {int(info.max)} : q);",
            f"yp[i] = {store('q', out)};",
        ]
    return _loop(ctx, node, body)


def dequantize_small(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    src, out = ctx.dtype(x), ctx.dtype(y)
    ctx.require(out.name in _SCALES, f"DequantizeLinear to {out}: one of {_SCALES}")
    v = f"({load('xp[i]', src)} - zp)"
    value = f"({v} * s)" if dtypes.is_float(src) else f"((float){v} * s)"
    return _loop(ctx, node, [f"yp[i] = {store(value, out) if out.name in STORAGE else value};"])
