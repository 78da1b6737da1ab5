"""burnedge's int8 ops (domain "burnedge"): THE spec every int8 kernel (C, NEON, Cortex-M, OpenCL) matches bit for bit.

The scheme (DESIGN.md): a tensor is int8 ``q`` with real value ``scale * (q - zero_point)``; weights are
symmetric per output channel (zero point 0); biases are int32 at scale ``s_in * s_w``; accumulators are int32 and
go back to int8 through `burnedge.ops.fixedpoint.requantize` (a 32-bit multiplier and a shift, one rounding
rule). Scales are not attributes: each op carries the integers derived from them at quantisation time.

    QConv        int8 conv (any group), bias int32, per-channel requantisation, clamp [y_min, y_max]
    QMatMul      int8 [..., K] x int8 weights [K, N] (+ bias int32 [N]) -> int8 [..., N]
    QAdd         a + b with both rescaled to the output in one 64-bit sum: one rounding
    QMul         a * b requantised
    QLut         any unary function as a 256-entry table (Sigmoid, Tanh, HardSwish, GELU, fused chains ...)
    QSoftmax     exp by table, integer normalisation; output scale 1/256, zero point -128
    QAvgPool     average pool with the input's qparams: rounded integer division (also global)
    QRequant     int8 -> int8 under other qparams (e.g. before a Concat of differently scaled inputs)

Rounding helpers (`fixedpoint.py`), as C (int64 arithmetic, arithmetic right shift):
    round_shift(v, s) = (v + (1 << (s - 1))) >> s                     (s >= 1: round half up)
    round_div(a, n)   = a >= 0 ? (a + n / 2) / n : -((-a + n / 2) / n)   (n > 0: round half away from zero)
"""

from __future__ import annotations

import numpy as np

from . import Spec, register
from .conv import _infer as conv_infer
from .conv import conv_core
from .fixedpoint import requantize, round_div, round_shift
from .pool import _pool_infer, window_totals

INT8 = np.dtype(np.int8)


def _clamp8(v: np.ndarray, lo: int, hi: int) -> np.ndarray:
    return np.clip(v, lo, hi).astype(np.int8)


def _qconv_infer(x, w, bias=None, **attrs):
    conv_attrs = {
        k: v for k, v in attrs.items() if k in ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")
    }
    return [Spec(conv_infer(x, w, **conv_attrs)[0].shape, INT8)]


@register("QConv", domain="burnedge", infer=_qconv_infer)
def qconv(
    x,
    w,
    bias=None,
    *,
    auto_pad="NOTSET",
    dilations=None,
    group=1,
    kernel_shape=None,
    pads=None,
    strides=None,
    x_zero_point=0,
    y_zero_point=0,
    multiplier,
    shift,
    y_min=-128,
    y_max=127,
):
    """acc[n, m, ...] = sum (x - x_zp) * w + bias[m]  (padding contributes 0); y = requantize(acc) per channel m."""
    xs = x.astype(np.float64) - x_zero_point  # exact: int8 products summed stay far below 2^53
    acc = conv_core(xs, w.astype(np.float64), group, kernel_shape, strides, dilations, pads, auto_pad, np.float64)
    acc = np.rint(acc).astype(np.int64)
    if bias is not None:
        acc += bias.astype(np.int64).reshape((1, -1) + (1,) * (acc.ndim - 2))
    return requantize(acc, np.asarray(multiplier), np.asarray(shift), y_zero_point, y_min, y_max, axis=1)


def _qmatmul_infer(a, b, bias=None, **_):
    return [Spec(tuple(a.shape[:-1]) + (b.shape[-1],), INT8)]


@register("QMatMul", domain="burnedge", infer=_qmatmul_infer)
def qmatmul(a, b, bias=None, *, a_zero_point=0, y_zero_point=0, multiplier, shift, y_min=-128, y_max=127):
    """acc[..., n] = sum_k (a[..., k] - a_zp) * b[k, n] + bias[n]; y = requantize(acc) per column n."""
    acc = np.rint((a.astype(np.float64) - a_zero_point) @ b.astype(np.float64)).astype(np.int64)
    if bias is not None:
        acc += bias.astype(np.int64)
    return requantize(acc, np.asarray(multiplier), np.asarray(shift), y_zero_point, y_min, y_max, axis=acc.ndim - 1)


def _broadcast_infer(a, b, **_):
    return [Spec(tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape))), INT8)]


@register("QAdd", domain="burnedge", infer=_broadcast_infer, tags=("elementwise",))
def qadd(
    a, b, *, a_zero_point=0, b_zero_point=0, y_zero_point=0, a_multiplier, b_multiplier, shift, y_min=-128, y_max=127
):
    """y = y_zp + round_shift((a - a_zp) * a_mult + (b - b_zp) * b_mult, shift), clamped.

    a_mult = round(s_a / s_y * 2^shift), b_mult likewise, shift chosen so the larger lies in [2^30, 2^31).
    """
    v = (a.astype(np.int64) - a_zero_point) * a_multiplier + (b.astype(np.int64) - b_zero_point) * b_multiplier
    return _clamp8(y_zero_point + round_shift(v, shift), y_min, y_max)


@register("QMul", domain="burnedge", infer=_broadcast_infer, tags=("elementwise",))
def qmul(a, b, *, a_zero_point=0, b_zero_point=0, y_zero_point=0, multiplier, shift, y_min=-128, y_max=127):
    """y = requantize((a - a_zp) * (b - b_zp)) with the multiplier of s_a * s_b / s_y."""
    acc = (a.astype(np.int64) - a_zero_point) * (b.astype(np.int64) - b_zero_point)
    return requantize(acc, multiplier, shift, y_zero_point, y_min, y_max)


@register("QLut", domain="burnedge", infer=lambda x, **_: [Spec(tuple(x.shape), INT8)], tags=("elementwise",))
def qlut(x, *, table):
    """y = table[x + 128]: the table holds the int8 result for each of the 256 int8 inputs."""
    t = np.asarray(table, np.int8)
    if t.shape != (256,):
        raise ValueError(f"QLut needs a table of 256 int8 values, got shape {list(t.shape)}")
    return t[x.astype(np.int16) + 128]


@register("QSoftmax", domain="burnedge", infer=lambda x, **_: [Spec(tuple(x.shape), INT8)])
def qsoftmax(x, *, axis=-1, table):
    """Softmax along `axis`; output scale 1/256, zero point -128.

    table[d] = round(exp(-d * s_x) * 2^20) for d = 0..255 (int32, computed once at quantisation time).
    e = table[max - x]; y = clamp(round_div(e * 256, sum(e)) - 128, -128, 127).
    """
    t = np.asarray(table, np.int64)
    xi = x.astype(np.int64)
    e = t[xi.max(axis=axis, keepdims=True) - xi]
    total = e.sum(axis=axis, keepdims=True)
    return _clamp8(round_div(e * 256, total) - 128, -128, 127)


@register("QAvgPool", domain="burnedge", infer=lambda x, **a: [Spec(_pool_infer(1)(x, **a)[0].shape, INT8)])
def qavg_pool(
    x,
    *,
    kernel_shape,
    auto_pad="NOTSET",
    ceil_mode=0,
    count_include_pad=0,
    dilations=None,
    pads=None,
    strides=None,
    zero_point=0,
):
    """y = zp + round_div(sum(x - zp), count) over each window (the output keeps the input's qparams)."""
    total, count = window_totals(
        x.astype(np.float64) - zero_point,
        np.float64,
        kernel_shape,
        auto_pad,
        pads,
        strides,
        dilations,
        ceil_mode,
        count_include_pad,
    )
    return _clamp8(zero_point + round_div(np.rint(total), np.rint(count)), -128, 127)


@register(
    "QGlobalAvgPool",
    domain="burnedge",
    infer=lambda x, **_: [Spec(tuple(x.shape[:2]) + (1,) * (len(x.shape) - 2), INT8)],
)
def qglobal_avg_pool(x, *, zero_point=0):
    """y = zp + round_div(sum(x - zp), H * W ...) per channel (the output keeps the input's qparams)."""
    axes = tuple(range(2, x.ndim))
    total = (x.astype(np.int64) - zero_point).sum(axis=axes, keepdims=True)
    return _clamp8(zero_point + round_div(total, int(np.prod([x.shape[a] for a in axes]))), -128, 127)


@register("QRequant", domain="burnedge", infer=lambda x, **_: [Spec(tuple(x.shape), INT8)], tags=("elementwise",))
def qrequant(x, *, x_zero_point=0, y_zero_point=0, multiplier, shift):
    """int8 under (s_x, x_zp) -> int8 under (s_y, y_zp): requantize(x - x_zp) with the multiplier of s_x / s_y."""
    return requantize(x.astype(np.int64) - x_zero_point, multiplier, shift, y_zero_point)
