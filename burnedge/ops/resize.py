"""Resize and Upsample: separable nearest / N-linear / N-cubic resampling, one axis at a time.

Resize opsets 10 (scales only, asymmetric coordinates), 11 and 13 (roi / scales / sizes, all coordinate
transformation modes, nearest modes, cubic_coeff_a, exclude_outside, extrapolation_value), 18 (antialias, axes,
keep_aspect_ratio_policy) and 19 (half_pixel_symmetric). Upsample opsets 1 (height_scale / width_scale), 7 (scales
attribute) and 9 (scales input); ONNX removed it in opset 10. The roi input is not static: it never changes shapes.

Each resized axis gets a small table of source indices and weights (one index for nearest, 2 taps for linear, 4 for
cubic, more when antialiasing a downscale); the data is gathered along that axis with ``np.take`` and the taps are
summed. Nearest never leaves the input dtype; linear and cubic compute in float32 (float64 for float64 and integer
inputs) and cast back, rounding and saturating integers.
"""

from __future__ import annotations

import math

import numpy as np

from . import Spec, register
from ._common import norm_axis

INT8_PASS = ("int8_passthrough",)  # nearest Resize copies int8 bytes (quantize/rules/movement.py checks the mode)

_COORD_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_half_pixel_for_nn",
    "tf_crop_and_resize",
)


def _given(a) -> bool:
    return a is not None and np.asarray(a).size > 0


def _plan(shape, roi, scales, sizes, axes, policy):
    """Full-rank (scales, output sizes, roi pairs) from the op's inputs and attributes."""
    r = len(shape)
    axes = list(range(r)) if axes is None else [norm_axis(int(a), r) for a in axes]
    full_roi = [(0.0, 1.0)] * r
    if _given(roi):
        roi = np.asarray(roi, dtype=np.float64).reshape(-1)
        n = len(axes)
        for i, d in enumerate(axes):
            full_roi[d] = (float(roi[i]), float(roi[n + i]))
    if _given(sizes):
        sizes = [int(s) for s in np.asarray(sizes).reshape(-1)]
        out = list(shape)
        for i, d in enumerate(axes):
            out[d] = sizes[i]
        sc = [out[d] / shape[d] if shape[d] else 1.0 for d in range(r)]
        if policy != "stretch":
            if policy not in ("not_larger", "not_smaller"):
                raise ValueError(f"unknown keep_aspect_ratio_policy {policy!r}")
            pick = min if policy == "not_larger" else max
            s = pick(sc[d] for d in axes)
            sc = [s if d in axes else 1.0 for d in range(r)]
            out = [int(s * shape[d] + 0.5) if d in axes else shape[d] for d in range(r)]
    elif _given(scales):
        given = np.asarray(scales).astype(np.float64).reshape(-1)
        sc = [1.0] * r
        for i, d in enumerate(axes):
            sc[d] = float(given[i])
        out = [int(math.floor(sc[d] * shape[d])) for d in range(r)]
    else:
        raise ValueError("Resize needs one of 'scales' and 'sizes'")
    return axes, sc, out, full_roi


def _source_coords(mode, n_out, n_in, scale, roi):
    """x_original for every output index along one axis, and the mask of extrapolated positions (or None)."""
    y = np.arange(n_out, dtype=np.float64)
    width = scale * n_in  # the (possibly fractional) output length the scale implies
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5, None
    if mode == "half_pixel_symmetric":
        offset = (n_in / 2) * (1 - n_out / width)
        return offset + (y + 0.5) / scale - 0.5, None
    if mode == "pytorch_half_pixel":
        return (np.full(n_out, -0.5) if width == 1 else (y + 0.5) / scale - 0.5), None
    if mode == "align_corners":
        return (np.zeros(n_out) if width == 1 else y * (n_in - 1) / (width - 1)), None
    if mode == "asymmetric":
        return y / scale, None
    if mode == "tf_half_pixel_for_nn":
        return (y + 0.5) / scale, None
    if mode == "tf_crop_and_resize":
        start, end = roi
        if width == 1:
            x = np.full(n_out, (end - start) * (n_in - 1) / 2)
        else:
            x = y * (end - start) * (n_in - 1) / (width - 1)
        x = x + start * (n_in - 1)
        return x, (x < 0) | (x > n_in - 1)
    raise ValueError(f"unknown coordinate_transformation_mode {mode!r}")


def _nearest_index(x, nearest_mode):
    if nearest_mode == "round_prefer_floor":
        return np.ceil(x - 0.5)
    if nearest_mode == "round_prefer_ceil":
        return np.floor(x + 0.5)
    if nearest_mode == "floor":
        return np.floor(x)
    if nearest_mode == "ceil":
        return np.ceil(x)
    raise ValueError(f"unknown nearest_mode {nearest_mode!r}")


def _cubic_kernel(d, a):
    d = np.abs(d)
    d2, d3 = d * d, d * d * d
    near = (a + 2) * d3 - (a + 3) * d2 + 1
    far = a * d3 - 5 * a * d2 + 8 * a * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def _taps(x, n_in, mode, scale, antialias, cubic_a, exclude_outside):
    """Source indices (n_out, k) and float64 weights (n_out, k) of linear / cubic interpolation at positions x."""
    base = np.floor(x)
    on_grid = x == base
    base = base - on_grid  # the left neighbour is preferred: the fraction lies in (0, 1]
    ratio = np.where(on_grid, 1.0, x - np.floor(x))
    s = min(scale, 1.0) if antialias else 1.0
    support = 1.0 if mode == "linear" else 2.0
    start = int(math.floor(-support / s) + 1)
    k = np.arange(start, 2 - start, dtype=np.float64)
    dist = (k[None, :] - ratio[:, None]) * s
    if mode == "linear":
        w = np.clip(1 - np.abs(dist), 0, 1)
    else:
        w = _cubic_kernel(dist, cubic_a)
    if antialias:
        w = w / w.sum(axis=1, keepdims=True)
    idx = base[:, None].astype(np.int64) + k.astype(np.int64)[None, :]
    if exclude_outside:
        w = np.where((idx < 0) | (idx >= n_in), 0.0, w)
        total = w.sum(axis=1, keepdims=True)
        w = w / np.where(total == 0, 1.0, total)
    return np.clip(idx, 0, n_in - 1), w


def _work_dtype(dtype):
    if dtype == np.float32 or dtype == np.float16 or dtype.kind == "V":
        return np.float32
    return np.float64


def _resize(
    x,
    roi,
    scales,
    sizes,
    *,
    mode,
    coord,
    nearest_mode,
    cubic_a,
    exclude_outside,
    extrapolation_value,
    antialias=0,
    axes=None,
    policy="stretch",
):
    if mode not in ("nearest", "linear", "cubic"):
        raise ValueError(f"unknown mode {mode!r}")
    if coord not in _COORD_MODES:
        raise ValueError(f"unknown coordinate_transformation_mode {coord!r}")
    axes, sc, out_shape, full_roi = _plan(x.shape, roi, scales, sizes, axes, policy)
    out_dtype = x.dtype
    res = x
    if mode != "nearest":
        res = x.astype(_work_dtype(x.dtype))
    for d in axes:
        n_in, n_out, scale = res.shape[d], out_shape[d], sc[d]
        if math.isclose(scale, 1.0) and n_out == n_in and np.allclose(full_roi[d], (0.0, 1.0)):
            continue
        if n_out == 0 or n_in == 0:
            shape = list(res.shape)
            shape[d] = n_out
            res = np.zeros(shape, res.dtype)
            continue
        xo, extrap = _source_coords(coord, n_out, n_in, scale, full_roi[d])
        bshape = (1,) * d + (n_out,) + (1,) * (res.ndim - d - 1)
        if mode == "nearest":
            idx = np.clip(_nearest_index(xo, nearest_mode), 0, n_in - 1).astype(np.intp)
            res = np.take(res, idx, axis=d)
        else:
            idx, w = _taps(xo, n_in, mode, scale, antialias, cubic_a, exclude_outside)
            w = w.astype(res.dtype)
            acc = None
            for t in range(idx.shape[1]):
                term = np.take(res, idx[:, t], axis=d) * w[:, t].reshape(bshape)
                acc = term if acc is None else acc + term
            res = acc
        if extrap is not None and extrap.any():
            res = np.where(extrap.reshape(bshape), res.dtype.type(extrapolation_value), res)
    if res.dtype != out_dtype:
        if out_dtype.kind in "iu":
            info = np.iinfo(out_dtype)
            res = np.clip(np.rint(res), info.min, info.max)
        res = res.astype(out_dtype)
    elif res is x:
        res = x.copy()
    return res


def _infer(x, roi=None, scales=None, sizes=None, *, axes=None, keep_aspect_ratio_policy="stretch", **_):
    _, _, out, _ = _plan(x.shape, None, scales, sizes, axes, keep_aspect_ratio_policy)  # roi never changes shapes
    return [Spec(tuple(out), x.dtype)]


@register(
    "Resize", since=10, static=(1,), infer=lambda x, scales, *, mode="nearest": _infer(x, None, scales), tags=INT8_PASS
)
def resize_10(x, scales, *, mode="nearest"):
    """Opset 10: asymmetric coordinates; nearest rounds down when upsampling and up when downsampling."""
    up = bool(np.all(np.asarray(scales) >= 1))
    return _resize(
        x,
        None,
        scales,
        None,
        mode=mode,
        coord="asymmetric",
        nearest_mode="floor" if up else "ceil",
        cubic_a=-0.75,
        exclude_outside=0,
        extrapolation_value=0.0,
    )


def _infer_11(x, roi=None, scales=None, sizes=None, **attrs):
    return _infer(x, roi, scales, sizes)


@register("Resize", since=11, static=(2, 3), infer=_infer_11, tags=INT8_PASS)
def resize_11(
    x,
    roi=None,
    scales=None,
    sizes=None,
    *,
    mode="nearest",
    coordinate_transformation_mode="half_pixel",
    nearest_mode="round_prefer_floor",
    cubic_coeff_a=-0.75,
    exclude_outside=0,
    extrapolation_value=0.0,
):
    """Opsets 11 and 13 (13 made roi and scales optional)."""
    return _resize(
        x,
        roi,
        scales,
        sizes,
        mode=mode,
        coord=coordinate_transformation_mode,
        nearest_mode=nearest_mode,
        cubic_a=cubic_coeff_a,
        exclude_outside=exclude_outside,
        extrapolation_value=extrapolation_value,
    )


register("Resize", since=13, static=(2, 3), infer=_infer_11, tags=INT8_PASS)(resize_11)


@register("Resize", since=18, static=(2, 3), infer=_infer, tags=INT8_PASS)
def resize_18(
    x,
    roi=None,
    scales=None,
    sizes=None,
    *,
    mode="nearest",
    coordinate_transformation_mode="half_pixel",
    nearest_mode="round_prefer_floor",
    cubic_coeff_a=-0.75,
    exclude_outside=0,
    extrapolation_value=0.0,
    antialias=0,
    axes=None,
    keep_aspect_ratio_policy="stretch",
):
    """Opsets 18 (antialias, axes, keep_aspect_ratio_policy) and 19 (half_pixel_symmetric)."""
    return _resize(
        x,
        roi,
        scales,
        sizes,
        mode=mode,
        coord=coordinate_transformation_mode,
        nearest_mode=nearest_mode,
        cubic_a=cubic_coeff_a,
        exclude_outside=exclude_outside,
        extrapolation_value=extrapolation_value,
        antialias=antialias,
        axes=axes,
        policy=keep_aspect_ratio_policy,
    )


register("Resize", since=19, static=(2, 3), infer=_infer, tags=INT8_PASS)(resize_18)


def _upsample(x, scales, mode):
    mode = {"bilinear": "linear"}.get(mode, mode)
    return resize_10(x, np.asarray(scales, dtype=np.float32), mode=mode)


@register("Upsample", since=1, until=6, tags=INT8_PASS)
def upsample_1(x, *, height_scale, width_scale, mode="NN"):
    """Upsample opset 1 (experimental): height_scale / width_scale of a 4-D input, modes NN and BILINEAR."""
    return _upsample(x, [1.0, 1.0, height_scale, width_scale], {"NN": "nearest", "BILINEAR": "linear"}.get(mode, mode))


@register(
    "Upsample", since=7, until=8, infer=lambda x, *, scales, mode="nearest": _infer(x, None, scales), tags=INT8_PASS
)
def upsample_7(x, *, scales, mode="nearest"):
    """Upsample opset 7: scales as an attribute; nearest or (bi)linear, asymmetric coordinates."""
    return _upsample(x, scales, mode)


@register(
    "Upsample",
    since=9,
    until=9,
    static=(1,),
    infer=lambda x, scales, *, mode="nearest": _infer(x, None, scales),
    tags=INT8_PASS,
)
def upsample_9(x, scales, *, mode="nearest"):
    """Upsample opset 9: scales as an input. ONNX removed Upsample in opset 10 (Resize replaces it)."""
    return _upsample(x, scales, mode)
