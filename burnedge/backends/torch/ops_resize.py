"""Resize and Upsample in torch (the registry's resize.py): nearest, linear and cubic, every coordinate mode,
roi, antialias, axes and keep_aspect_ratio_policy.

Where each output pixel reads from depends only on shapes and the compile-time scales or sizes, so the reference's
own planning functions (ops/resize.py) give the source indices and weights; torch gathers and weighs the input
along one axis at a time, which keeps the op differentiable in its input.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ...ops.resize import _nearest_index, _plan, _source_coords, _taps
from .registry import Call, op


def _value(c: Call, i: int, t: torch.Tensor | None) -> np.ndarray | None:
    data = c.const(i)
    if data is not None:
        return np.asarray(data)
    return None if t is None or t.numel() == 0 else t.detach().cpu().numpy()


def _apply(
    c: Call,
    x,
    roi,
    scales,
    sizes,
    *,
    mode,
    coord,
    nearest_mode,
    cubic_a=-0.75,
    exclude=0,
    extrap=0.0,
    antialias=0,
    axes=None,
    policy="stretch",
):
    axes, sc, out_shape, full_roi = _plan(tuple(x.shape), roi, scales, sizes, axes, policy)
    res = (
        x
        if mode == "nearest"
        else x.to(torch.float64 if x.dtype == torch.float64 or not x.is_floating_point() else torch.float32)
    )
    for d in axes:
        n_in, n_out, scale = res.shape[d], out_shape[d], sc[d]
        if math.isclose(scale, 1.0) and n_out == n_in and np.allclose(full_roi[d], (0.0, 1.0)):
            continue
        xo, outside = _source_coords(coord, n_out, n_in, scale, full_roi[d])
        bshape = (1,) * d + (n_out,) + (1,) * (res.dim() - d - 1)
        if mode == "nearest":
            idx = np.clip(_nearest_index(xo, nearest_mode), 0, n_in - 1).astype(np.int64)
            res = res.index_select(d, torch.from_numpy(idx).to(res.device))
        else:
            idx, w = _taps(xo, n_in, mode, scale, antialias, cubic_a, exclude)
            wt = torch.from_numpy(w).to(res.device, res.dtype)
            it = torch.from_numpy(idx).to(res.device)
            res = sum(res.index_select(d, it[:, t]) * wt[:, t].reshape(bshape) for t in range(idx.shape[1]))
        if outside is not None and outside.any():
            mask = torch.from_numpy(outside).to(res.device).reshape(bshape)
            res = torch.where(mask, torch.full_like(res, extrap), res)
    if res.dtype != x.dtype and not x.is_floating_point():
        info = torch.iinfo(x.dtype)
        res = torch.clamp(torch.round(res), info.min, info.max)
    return res.to(x.dtype) if res is not x else res.clone()


@op("Resize")
def resize(c: Call, x, *rest):
    if c.since < 11:  # opset 10: scales only; asymmetric; nearest rounds down upsampling, up downsampling
        scales = _value(c, 1, rest[0])
        up = bool(np.all(scales >= 1))
        return _apply(
            c,
            x,
            None,
            scales,
            None,
            mode=c.attr("mode", "nearest"),
            coord="asymmetric",
            nearest_mode="floor" if up else "ceil",
        )
    padded = list(rest) + [None] * (3 - len(rest))
    roi, scales, sizes = (_value(c, i + 1, t) for i, t in enumerate(padded))
    return _apply(
        c, x, roi, scales, sizes,
        mode=c.attr("mode", "nearest"),
        coord=c.attr("coordinate_transformation_mode", "half_pixel"),
        nearest_mode=c.attr("nearest_mode", "round_prefer_floor"),
        cubic_a=c.attr("cubic_coeff_a", -0.75),
        exclude=c.attr("exclude_outside", 0),
        extrap=c.attr("extrapolation_value", 0.0),
        antialias=c.attr("antialias", 0),
        axes=c.attr("axes"),
        policy=c.attr("keep_aspect_ratio_policy", "stretch"),
    )  # fmt: skip


@op("Upsample")
def upsample(c: Call, x, scales=None):
    if c.since < 7:
        sc = [1.0, 1.0, c.attr("height_scale"), c.attr("width_scale")]
        mode = {"NN": "nearest", "BILINEAR": "linear"}.get(c.attr("mode", "NN"), c.attr("mode", "NN"))
    else:
        sc = c.attr("scales") if c.since < 9 else _value(c, 1, scales)
        mode = c.attr("mode", "nearest")
    sc = np.asarray(sc, np.float32)  # as Resize opset 10, which Upsample became
    mode = {"bilinear": "linear"}.get(mode, mode)
    up = bool(np.all(sc >= 1))
    return _apply(c, x, None, sc, None, mode=mode, coord="asymmetric", nearest_mode="floor" if up else "ceil")
