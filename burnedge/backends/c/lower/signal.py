"""DFT (opsets 17 and 20) on be_dft_f32 (kernels/signal.h): the axis and dft_length must be constants (bound when
they are graph inputs: they decide the output's shape); the twiddles of the n-point transform are computed here in
double and stored with the weights. Output bins follow the reference: all n, n/2+1 when onesided, and a real
signal of n samples for an inverse onesided transform (irfft, n = 2 * (bins - 1) by default)."""

from __future__ import annotations

import numpy as np

from ....ir import Node
from . import Ctx, lower
from .reduce import attr, norm_axis, split


def _const_scalar(ctx: Ctx, node: Node, k: int, what: str) -> int | None:
    name = node.inputs[k] if len(node.inputs) > k else ""
    if not name:
        return None
    value = ctx.const(name)
    ctx.require(value is not None, f"{what} must be a constant (bind it): it decides the output's shape")
    return int(np.asarray(value).reshape(-1)[0]) if np.asarray(value).size else None


@lower("DFT")
def dft(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    ctx.require(ctx.dtype(x) == np.float32, f"no C DFT on {ctx.dtype(x)} (float32 only)")
    shape = ctx.shape(x)
    ctx.require(len(shape) >= 2 and shape[-1] in (1, 2), f"input shape {list(shape)}: the last dim must be 1 or 2")
    if node.op.since >= 20:
        axis = _const_scalar(ctx, node, 2, "the axis")
        axis = -2 if axis is None else axis
    else:
        axis = int(attr(node, "axis", 1))
    axis = norm_axis(ctx, axis, len(shape))
    ctx.require(axis != len(shape) - 1, "the axis cannot be the last (complex) dimension")
    inverse, onesided = int(attr(node, "inverse", 0)), int(attr(node, "onesided", 0))
    irfft = bool(inverse and onesided)
    n = _const_scalar(ctx, node, 1, "dft_length")
    if n is None:
        n = 2 * (shape[axis] - 1) if irfft else shape[axis]
    ctx.require(n > 0, f"dft_length is {n}, expected a positive length")
    m = n if irfft or not onesided else n // 2 + 1
    outer, length, inner = split(shape[:-1], axis)
    ctx.require(ctx.shape(y)[axis] == m, f"the output has {ctx.shape(y)[axis]} bins along the axis, expected {m}")
    if ctx.size(y) == 0:
        return "/* empty */"
    t = 2 * np.pi * np.arange(n, dtype=np.float64) / n
    cs = ctx.pack(f"dft:twiddles:{n}", np.stack([np.cos(t), np.sin(t)], axis=-1).reshape(-1))
    args = f"{outer}, {length}, {inner}, {shape[-1]}, {n}, {m}, {inverse}, {int(irfft)}, {cs}"
    return f"be_dft_f32({ctx.tensor(x)}, {ctx.tensor(y)}, {args}, threads);"
