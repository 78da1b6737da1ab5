"""Convolutions: Conv (opset 1+), ConvInteger (10+), QLinearConv (10+) and DeformConv (19+), 1D/2D/3D.

im2col over a padded input (numpy sliding_window_view) and one batched matmul per node, groups being the batch
axis; depthwise convs (one input channel per group) accumulate kernel-offset slices instead. auto_pad NOTSET,
SAME_UPPER, SAME_LOWER and VALID; strides, dilations, group. Every float type computes in float64 and rounds
once (SUM_DTYPE in _common: long float32 sums drift).
"""

from __future__ import annotations

import math

import numpy as np

from . import Spec, register
from ._im2col import attr_list, compute_dtype, geometry, im2col, kernel_offsets, pad_or_crop, window_slices


def _geo(x_shape, w_shape, kernel_shape, strides, dilations, pads, auto_pad):
    n_sp = len(x_shape) - 2
    kernel = [int(k) for k in w_shape[2:]]
    if kernel_shape and list(kernel_shape) != kernel:
        raise ValueError(f"kernel_shape {list(kernel_shape)} does not match the weight's shape {list(w_shape)}")
    strides = attr_list(strides, n_sp, 1, "strides")
    dilations = attr_list(dilations, n_sp, 1, "dilations")
    return kernel, strides, dilations, geometry(x_shape[2:], kernel, strides, dilations, pads, auto_pad)


def conv_core(x, w, group, kernel_shape, strides, dilations, pads, auto_pad, ct, pad_value=0) -> np.ndarray:
    """The convolution of x (N, C, *S) with w (M, C/group, *K), computed in dtype `ct`: (N, M, *out)."""
    if x.shape[1] != w.shape[1] * group or w.shape[0] % group:
        raise ValueError(f"input {list(x.shape)} and weight {list(w.shape)} do not fit group={group}")
    kernel, strides, dilations, geo = _geo(x.shape, w.shape, kernel_shape, strides, dilations, pads, auto_pad)
    xc = x.astype(ct, copy=False)
    xp = pad_or_crop(xc, geo.begin, geo.end, pad_value) if any(geo.begin) or any(geo.end) else xc
    wc = w.astype(ct, copy=False)
    n, m = x.shape[0], w.shape[0]
    mg = m // group
    if w.shape[1] == 1 and group > 1 and math.prod(kernel) <= 64:  # depthwise: accumulate kernel-offset slices
        wk = wc.reshape(group, mg, -1)
        y = np.zeros((n, group, mg, *geo.out), dtype=ct)
        tail = (1,) * len(kernel)
        for i, off in enumerate(kernel_offsets(kernel)):
            xs = xp[(slice(None), slice(None)) + window_slices(off, geo.out, strides, dilations)]
            y += xs[:, :, None] * wk[:, :, i].reshape(group, mg, *tail)
        return y.reshape(n, m, *geo.out)
    cols = im2col(xp, kernel, strides, dilations, geo.out, group)  # (N, G, Cg*K, L)
    y = np.matmul(wc.reshape(group, mg, -1), cols)  # (N, G, Mg, L)
    return y.reshape(n, m, *geo.out)


def _infer(x, w, *rest, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None, strides=None):
    out = _geo(x.shape, w.shape, kernel_shape, strides, dilations, pads, auto_pad)[3].out
    return [Spec((x.shape[0], w.shape[0], *out), x.dtype)]


@register("Conv", since=1, infer=_infer)
def conv(x, w, b=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None, strides=None):
    """ONNX Conv, opsets 1, 11 and 22 (the same attributes and semantics)."""
    ct = compute_dtype(x.dtype)
    y = conv_core(x, w, group, kernel_shape, strides, dilations, pads, auto_pad, ct)
    if b is not None:
        y += b.astype(ct).reshape((1, -1) + (1,) * (y.ndim - 2))
    return y.astype(x.dtype, copy=False)


def _int_infer(x, w, *rest, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None, strides=None):
    out = _geo(x.shape, w.shape, kernel_shape, strides, dilations, pads, auto_pad)[3].out
    return [Spec((x.shape[0], w.shape[0], *out), np.int32)]


def _per_channel(v, ndim: int) -> np.ndarray | float:
    """A zero point or scale: a scalar, or one value per output channel shaped to broadcast on (N, M, *S)."""
    if v is None:
        return 0
    v = np.asarray(v)
    return v.reshape(()) if v.size == 1 else v.reshape((-1,) + (1,) * (ndim - 1))


def _int_conv(x, x_zp, w, w_zp, group, kernel_shape, strides, dilations, pads, auto_pad) -> np.ndarray:
    """Exact integer convolution of (x - x_zp) and (w - w_zp), as float64 (exact below 2**53)."""
    xs = x.astype(np.float64) - (0 if x_zp is None else np.asarray(x_zp, np.float64).reshape(()))
    ws = w.astype(np.float64) - _per_channel(w_zp, w.ndim)
    return conv_core(xs, ws, group, kernel_shape, strides, dilations, pads, auto_pad, np.dtype(np.float64))


@register("ConvInteger", since=10, infer=_int_infer)
def conv_integer(
    x, w, x_zero_point=None, w_zero_point=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None,
    pads=None, strides=None,
):  # fmt: skip
    """ONNX ConvInteger (opset 10): int32 convolution of zero-point-shifted int8/uint8 tensors."""
    return _int_conv(x, x_zero_point, w, w_zero_point, group, kernel_shape, strides, dilations, pads, auto_pad).astype(
        np.int32
    )


def _q_infer(x, x_scale, x_zp, w, *rest, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None,
             strides=None):  # fmt: skip
    out = _geo(x.shape, w.shape, kernel_shape, strides, dilations, pads, auto_pad)[3].out
    y_zp = rest[3] if len(rest) > 3 else None
    return [Spec((x.shape[0], w.shape[0], *out), x.dtype if y_zp is None else y_zp.dtype)]


@register("QLinearConv", since=10, infer=_q_infer)
def qlinear_conv(
    x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point=None, b=None, *, auto_pad="NOTSET",
    dilations=None, group=1, kernel_shape=None, pads=None, strides=None,
):  # fmt: skip
    """ONNX QLinearConv (opset 10): quantized conv, per-tensor or per-output-channel weight scale / zero point."""
    acc = _int_conv(x, x_zero_point, w, w_zero_point, group, kernel_shape, strides, dilations, pads, auto_pad)
    if b is not None:
        acc += b.astype(np.float64).reshape((1, -1) + (1,) * (acc.ndim - 2))
    scale = (
        np.asarray(x_scale, np.float32).reshape(()) * _per_channel(np.asarray(w_scale, np.float32), acc.ndim - 1)
    ) / np.asarray(y_scale, np.float32).reshape(())
    out_dtype = x.dtype if y_zero_point is None else y_zero_point.dtype
    zp = 0 if y_zero_point is None else int(np.asarray(y_zero_point).reshape(()))
    y = np.rint(acc * scale.astype(np.float64)) + zp
    info = np.iinfo(out_dtype)
    return np.clip(y, info.min, info.max).astype(out_dtype)


def _deform_infer(x, w, *rest, dilations=None, group=1, kernel_shape=None, offset_group=1, pads=None, strides=None):
    out = _geo(x.shape, w.shape, kernel_shape, strides, dilations, pads, "NOTSET")[3].out
    return [Spec((x.shape[0], w.shape[0], *out), x.dtype)]


@register("DeformConv", since=19, infer=_deform_infer)
def deform_conv(
    x, w, offset, b=None, mask=None, *, dilations=None, group=1, kernel_shape=None, offset_group=1, pads=None,
    strides=None,
):  # fmt: skip
    """ONNX DeformConv (opsets 19, 22): samples the input at offset kernel positions (N-linear interpolation, zero
    outside the input), weighted by `mask`, then convolves like Conv."""
    ct = compute_dtype(x.dtype)
    kernel, strides, dilations, geo = _geo(x.shape, w.shape, kernel_shape, strides, dilations, pads, "NOTSET")
    n, c = x.shape[:2]
    sp, out, n_sp, k = x.shape[2:], geo.out, len(kernel), math.prod(kernel)
    og = offset_group
    length = math.prod(out)
    off = offset.astype(ct).reshape(n, og, k, n_sp, length)
    # base sampling coordinate of each (kernel position, output position) pair, per spatial axis
    grids = np.meshgrid(*[np.arange(o) for o in out], indexing="ij")
    kpos = np.array(list(kernel_offsets(kernel)), dtype=np.int64).reshape(k, n_sp)
    base = [
        (grids[a].reshape(1, length) * strides[a] - geo.begin[a] + kpos[:, a : a + 1] * dilations[a]).astype(ct)
        for a in range(n_sp)
    ]
    coords = [base[a][None, None] + off[:, :, :, a] for a in range(n_sp)]  # each (N, og, K, L)
    lows = [np.floor(cd) for cd in coords]
    fracs = [cd - lo for cd, lo in zip(coords, lows)]
    lows = [lo.astype(np.int64) for lo in lows]
    xg = x.astype(ct, copy=False).reshape(n, og, c // og, -1)
    samples = np.zeros((n, og, c // og, k, length), dtype=ct)
    nidx = np.arange(n).reshape(n, 1, 1, 1, 1)
    gidx = np.arange(og).reshape(1, og, 1, 1, 1)
    cidx = np.arange(c // og).reshape(1, 1, -1, 1, 1)
    for corner in kernel_offsets([2] * n_sp):
        weight = np.ones((n, og, k, length), dtype=ct)
        flat = np.zeros((n, og, k, length), dtype=np.int64)
        valid = np.ones((n, og, k, length), dtype=bool)
        for a in range(n_sp):
            pos = lows[a] + corner[a]
            weight = weight * (fracs[a] if corner[a] else 1 - fracs[a])
            valid &= (pos >= 0) & (pos < sp[a])
            flat = flat * sp[a] + np.clip(pos, 0, sp[a] - 1)
        weight = np.where(valid, weight, 0)
        samples += xg[nidx, gidx, cidx, flat[:, :, None]] * weight[:, :, None]
    if mask is not None:
        samples *= mask.astype(ct).reshape(n, og, 1, k, length)
    m = w.shape[0]
    cols = samples.reshape(n, group, (c // group) * k, length)
    y = np.matmul(w.astype(ct).reshape(group, m // group, -1), cols).reshape(n, m, *out)
    if b is not None:
        y += b.astype(ct).reshape((1, -1) + (1,) * n_sp)
    return y.astype(x.dtype, copy=False)
