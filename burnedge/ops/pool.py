"""Pooling: MaxPool (opsets 1, 8, 10+), AveragePool (1, 7, 10, 19+), LpPool (1, 2, 18+), the global pools
(GlobalAveragePool, GlobalMaxPool, GlobalLpPool 1, 2+) and MaxUnpool (9+), 1D/2D/3D.

Windows follow ONNX: explicit pads or auto_pad (SAME_UPPER / SAME_LOWER / VALID), strides, dilations, ceil_mode
(a last window starting in the end padding is dropped). Each pool reduces with one vectorised numpy operation
per kernel position. MaxPool's Indices index the unpadded input flattened row-major (storage_order=0) or with
the spatial axes column-major (storage_order=1).
"""

from __future__ import annotations

import math

import numpy as np

from . import Spec, register
from ._im2col import attr_list, compute_dtype, geometry, kernel_offsets, pad_or_crop, window_slices

_ALL = (slice(None), slice(None))


def _geo(shape, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode):
    n_sp = len(shape) - 2
    kernel = attr_list(kernel_shape, n_sp, 1, "kernel_shape")
    strides = attr_list(strides, n_sp, 1, "strides")
    dilations = attr_list(dilations, n_sp, 1, "dilations")
    geo = geometry(shape[2:], kernel, strides, dilations, pads, auto_pad, ceil_mode, clamp_same=False)
    return kernel, strides, dilations, geo


def _lowest(dtype: np.dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _max_pool(x, kernel_shape, auto_pad, pads, strides, dilations, ceil_mode, storage_order, indices: bool):
    kernel, strides, dilations, geo = _geo(x.shape, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    xc = x.astype(np.float32) if x.dtype.kind == "V" else x  # bfloat16 and the like
    xp = pad_or_crop(xc, geo.begin, geo.end, _lowest(xc.dtype))
    offsets = list(kernel_offsets(kernel))
    y = xp[_ALL + window_slices(offsets[0], geo.out, strides, dilations)].copy()
    if not indices:
        for off in offsets[1:]:
            np.maximum(y, xp[_ALL + window_slices(off, geo.out, strides, dilations)], out=y)
        return y.astype(x.dtype, copy=False)
    best = np.zeros(y.shape, dtype=np.int64)
    for i, off in enumerate(offsets[1:], 1):
        v = xp[_ALL + window_slices(off, geo.out, strides, dilations)]
        better = v > y
        np.copyto(y, v, where=better)
        np.copyto(best, i, where=better)
    # input coordinates of each winner, then its flat index in the unpadded input
    n_sp = len(kernel)
    kpos = np.array(offsets, dtype=np.int64).reshape(-1, n_sp)
    spatial = x.shape[2:]
    flat = np.zeros(y.shape, dtype=np.int64)
    order = range(n_sp) if not storage_order else reversed(range(n_sp))
    for a in order:
        grid = np.arange(geo.out[a], dtype=np.int64).reshape((-1,) + (1,) * (n_sp - 1 - a)) * strides[a]
        pos = grid + kpos[best, a] * dilations[a] - geo.begin[a]
        flat = flat * spatial[a] + pos
    plane = np.arange(x.shape[0] * x.shape[1], dtype=np.int64).reshape(x.shape[:2] + (1,) * n_sp)
    flat += plane * math.prod(spatial)
    return y.astype(x.dtype, copy=False), flat


def _sum_windows(xp, kernel, strides, dilations, out, fn=None):
    acc = None
    for off in kernel_offsets(kernel):
        v = xp[_ALL + window_slices(off, out, strides, dilations)]
        v = fn(v) if fn is not None else v
        acc = v.copy() if acc is None else np.add(acc, v, out=acc)
    return acc


def window_totals(x, ct, kernel_shape, auto_pad, pads, strides, dilations, ceil_mode, count_include_pad):
    """Per output position of an average pool: the sum of the window (in dtype `ct`) and how many it counts."""
    kernel, strides, dilations, geo = _geo(x.shape, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    xp = pad_or_crop(x.astype(ct, copy=False), geo.begin, geo.end, 0)
    total = _sum_windows(xp, kernel, strides, dilations, geo.out)
    n_sp = len(kernel)
    spatial = list(x.shape[2:])
    if count_include_pad:  # the explicit pads count, the extra room ceil_mode windows reach past them does not
        inside = np.ones([1, 1] + [spatial[i] + geo.begin[i] + geo.end_explicit[i] for i in range(n_sp)], ct)
        mask = pad_or_crop(inside, [0] * n_sp, [geo.end[i] - geo.end_explicit[i] for i in range(n_sp)], 0)
    else:
        mask = pad_or_crop(np.ones([1, 1] + spatial, ct), geo.begin, geo.end, 0)
    return total, _sum_windows(mask, kernel, strides, dilations, geo.out)


def _avg_pool(x, kernel_shape, auto_pad, pads, strides, dilations, ceil_mode, count_include_pad):
    total, count = window_totals(
        x, compute_dtype(x.dtype), kernel_shape, auto_pad, pads, strides, dilations, ceil_mode, count_include_pad
    )
    return (total / count).astype(x.dtype, copy=False)


def _lp_pool(x, kernel_shape, auto_pad, pads, strides, dilations, ceil_mode, p):
    kernel, strides, dilations, geo = _geo(x.shape, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    ct = compute_dtype(x.dtype)
    xp = pad_or_crop(x.astype(ct, copy=False), geo.begin, geo.end, 0)
    p = ct.type(p)
    total = _sum_windows(xp, kernel, strides, dilations, geo.out, lambda v: np.abs(v) ** p)
    return (total ** (1 / p)).astype(x.dtype, copy=False)


def _pool_infer(n_out: int):
    def infer(x, *, kernel_shape=None, auto_pad="NOTSET", pads=None, strides=None, dilations=None, ceil_mode=0, **_):
        out = _geo(x.shape, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)[3].out
        shape = (*x.shape[:2], *out)
        return [Spec(shape, x.dtype), Spec(shape, np.int64)][:n_out]

    return infer


# -- MaxPool ------------------------------------------------------------------------------------------------------
@register("MaxPool", since=1, infer=_pool_infer(1), tags=("int8_passthrough", "qdq_movement"))
def max_pool_1(x, *, kernel_shape, auto_pad="NOTSET", pads=None, strides=None):
    """ONNX MaxPool opsets 1-7: one output."""
    return _max_pool(x, kernel_shape, auto_pad, pads, strides, None, 0, 0, False)


@register("MaxPool", since=8, infer=_pool_infer(2), tags=("int8_passthrough", "qdq_movement"))
def max_pool_8(x, *, kernel_shape, auto_pad="NOTSET", pads=None, storage_order=0, strides=None, _n_outputs=1):
    """ONNX MaxPool opsets 8-9: optional Indices output, storage_order."""
    return _max_pool(x, kernel_shape, auto_pad, pads, strides, None, 0, storage_order, _n_outputs > 1)


@register("MaxPool", since=10, infer=_pool_infer(2), tags=("int8_passthrough", "qdq_movement"))
def max_pool_10(
    x, *, kernel_shape, auto_pad="NOTSET", ceil_mode=0, dilations=None, pads=None, storage_order=0, strides=None,
    _n_outputs=1,
):  # fmt: skip
    """ONNX MaxPool opsets 10, 11, 12, 22: ceil_mode and dilations; int8/uint8 inputs (12+)."""
    return _max_pool(x, kernel_shape, auto_pad, pads, strides, dilations, ceil_mode, storage_order, _n_outputs > 1)


# -- AveragePool --------------------------------------------------------------------------------------------------
@register("AveragePool", since=1, infer=_pool_infer(1))
def average_pool_1(x, *, kernel_shape, auto_pad="NOTSET", pads=None, strides=None):
    """ONNX AveragePool opsets 1-6 (pads are not counted)."""
    return _avg_pool(x, kernel_shape, auto_pad, pads, strides, None, 0, 0)


@register("AveragePool", since=7, infer=_pool_infer(1))
def average_pool_7(x, *, kernel_shape, auto_pad="NOTSET", count_include_pad=0, pads=None, strides=None):
    """ONNX AveragePool opsets 7-9: count_include_pad."""
    return _avg_pool(x, kernel_shape, auto_pad, pads, strides, None, 0, count_include_pad)


@register("AveragePool", since=10, infer=_pool_infer(1))
def average_pool_10(x, *, kernel_shape, auto_pad="NOTSET", ceil_mode=0, count_include_pad=0, pads=None, strides=None):
    """ONNX AveragePool opsets 10, 11: ceil_mode."""
    return _avg_pool(x, kernel_shape, auto_pad, pads, strides, None, ceil_mode, count_include_pad)


@register("AveragePool", since=19, infer=_pool_infer(1))
def average_pool_19(
    x, *, kernel_shape, auto_pad="NOTSET", ceil_mode=0, count_include_pad=0, dilations=None, pads=None, strides=None
):
    """ONNX AveragePool opsets 19, 22: dilations."""
    return _avg_pool(x, kernel_shape, auto_pad, pads, strides, dilations, ceil_mode, count_include_pad)


# -- LpPool -------------------------------------------------------------------------------------------------------
@register("LpPool", since=1, infer=_pool_infer(1))
def lp_pool_1(x, *, kernel_shape=None, auto_pad="NOTSET", p=2.0, pads=None, strides=None):
    """ONNX LpPool opset 1 (p is a float)."""
    return _lp_pool(x, kernel_shape, auto_pad, pads, strides, None, 0, p)


@register("LpPool", since=2, infer=_pool_infer(1))
def lp_pool_2(x, *, kernel_shape, auto_pad="NOTSET", p=2, pads=None, strides=None):
    """ONNX LpPool opsets 2, 11."""
    return _lp_pool(x, kernel_shape, auto_pad, pads, strides, None, 0, p)


@register("LpPool", since=18, infer=_pool_infer(1))
def lp_pool_18(x, *, kernel_shape, auto_pad="NOTSET", ceil_mode=0, dilations=None, p=2, pads=None, strides=None):
    """ONNX LpPool opsets 18, 22: ceil_mode and dilations."""
    return _lp_pool(x, kernel_shape, auto_pad, pads, strides, dilations, ceil_mode, p)


# -- global pools -------------------------------------------------------------------------------------------------
def _global_infer(x, **_):
    return [Spec((*x.shape[:2], *(1,) * (len(x.shape) - 2)), x.dtype)]


def _spatial_axes(x) -> tuple[int, ...]:
    return tuple(range(2, x.ndim))


@register("GlobalAveragePool", since=1, infer=_global_infer)
def global_average_pool(x):
    """ONNX GlobalAveragePool opsets 1, 22."""
    return np.mean(x, axis=_spatial_axes(x), keepdims=True, dtype=compute_dtype(x.dtype)).astype(x.dtype)


@register("GlobalMaxPool", since=1, infer=_global_infer, tags=("int8_passthrough", "qdq_movement"))
def global_max_pool(x):
    """ONNX GlobalMaxPool opsets 1, 22."""
    return np.max(x, axis=_spatial_axes(x), keepdims=True).astype(x.dtype)


def _global_lp(x, p):
    ct = compute_dtype(x.dtype)
    p = ct.type(p)
    total = np.sum(np.abs(x.astype(ct)) ** p, axis=_spatial_axes(x), keepdims=True)
    return (total ** (1 / p)).astype(x.dtype)


@register("GlobalLpPool", since=1, infer=_global_infer)
def global_lp_pool_1(x, *, p=2.0):
    """ONNX GlobalLpPool opset 1 (p is a float)."""
    return _global_lp(x, p)


@register("GlobalLpPool", since=2, infer=_global_infer)
def global_lp_pool_2(x, *, p=2):
    """ONNX GlobalLpPool opsets 2, 22."""
    return _global_lp(x, p)


# -- MaxUnpool ----------------------------------------------------------------------------------------------------
def _unpool_shape(x_shape, kernel_shape, pads, strides) -> list[int]:
    n_sp = len(x_shape) - 2
    kernel = attr_list(kernel_shape, n_sp, 1, "kernel_shape")
    strides = attr_list(strides, n_sp, 1, "strides")
    p = attr_list(pads, 2 * n_sp, 0, "pads")
    return [(x_shape[2 + i] - 1) * strides[i] + kernel[i] - p[i] - p[n_sp + i] for i in range(n_sp)]


def _unpool_infer(x, i, output_shape=None, *, kernel_shape, pads=None, strides=None):
    if output_shape is not None:
        return [Spec(tuple(int(d) for d in np.asarray(output_shape).reshape(-1)), x.dtype)]
    return [Spec((*x.shape[:2], *_unpool_shape(x.shape, kernel_shape, pads, strides)), x.dtype)]


@register("MaxUnpool", since=9, static=(2,), infer=_unpool_infer)
def max_unpool(x, i, output_shape=None, *, kernel_shape, pads=None, strides=None):
    """ONNX MaxUnpool opsets 9, 11, 22: scatters X to the flat positions I of a zero tensor.

    The indices address the unpooled shape computed from kernel_shape / strides / pads; an `output_shape` input
    places that tensor at the origin of a zero tensor of its shape (as the ONNX node tests expect).
    """
    shape = [*x.shape[:2], *_unpool_shape(x.shape, kernel_shape, pads, strides)]
    y = np.zeros(math.prod(shape), dtype=x.dtype)
    y[i.reshape(-1).astype(np.int64)] = x.reshape(-1)
    y = y.reshape(shape)
    if output_shape is None:
        return y
    target = [int(d) for d in np.asarray(output_shape).reshape(-1)]
    if target[:2] != shape[:2] or len(target) != len(shape):
        raise ValueError(f"output_shape {target} does not fit the input {list(x.shape)}")
    n_sp = len(shape) - 2
    return pad_or_crop(y, [0] * n_sp, [target[2 + a] - shape[2 + a] for a in range(n_sp)])
