"""Padding ops: Pad (constant / reflect / edge / wrap; negative pads crop) and CenterCropPad.

Spec: https://onnx.ai/onnx/operators/. Versions: Pad 1 (paddings attr), 2 (pads attr), 11 (pads and
constant_value inputs), 18 (axes input; 19 adds wrap mode, accepted here from 18 on); CenterCropPad 18.
"""

from __future__ import annotations

import numpy as np

from . import register
from ._common import norm_axis

_NP_MODE = {"constant": "constant", "reflect": "reflect", "edge": "edge", "wrap": "wrap"}


def _pad(x: np.ndarray, pads, mode: str, value, axes=None) -> np.ndarray:
    pads = [int(p) for p in np.asarray(pads).reshape(-1)]
    axes = list(range(x.ndim)) if axes is None else [norm_axis(int(a), x.ndim) for a in np.asarray(axes).reshape(-1)]
    if len(pads) != 2 * len(axes):
        raise ValueError(f"{len(pads)} pads for {len(axes)} axes")
    if mode not in _NP_MODE:
        raise ValueError(f"unknown pad mode {mode!r}")
    begin, end = [0] * x.ndim, [0] * x.ndim
    for i, a in enumerate(axes):
        begin[a], end[a] = pads[i], pads[i + len(axes)]
    # negative pads crop first; the positive rest is padded
    crop = tuple(slice(max(-b, 0), x.shape[a] - max(-e, 0)) for a, (b, e) in enumerate(zip(begin, end)))
    x = x[crop]
    width = [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)]
    if not any(b or e for b, e in width):
        return x.copy()
    if mode == "constant":
        fill = 0 if value is None else np.asarray(value).reshape(-1)[0]
        if x.dtype.kind == "O":
            out = np.full(tuple(d + b + e for d, (b, e) in zip(x.shape, width)), fill, dtype=object)
            out[tuple(slice(b, b + d) for d, (b, _) in zip(x.shape, width))] = x
            return out
        return np.pad(x, width, mode="constant", constant_values=np.asarray(fill).astype(x.dtype))
    return np.pad(x, width, mode=_NP_MODE[mode])


@register("Pad", since=1, tags=("int8_passthrough",))
def pad_v1(data, *, paddings, mode="constant", value=0.0):
    return _pad(data, paddings, mode, value)


@register("Pad", since=2, tags=("int8_passthrough",))
def pad_v2(data, *, pads, mode="constant", value=0.0):
    return _pad(data, pads, mode, value)


@register("Pad", since=11, static=(1,), tags=("int8_passthrough",))
def pad_v11(data, pads, constant_value=None, *, mode="constant"):
    return _pad(data, pads, mode, constant_value)


@register("Pad", since=18, static=(1, 3), tags=("int8_passthrough",))
def pad(data, pads, constant_value=None, axes=None, *, mode="constant"):
    return _pad(data, pads, mode, constant_value, axes)


@register("CenterCropPad", since=18, static=(1,))
def center_crop_pad(input_data, shape, *, axes=None):
    x = input_data
    target = [int(s) for s in np.asarray(shape).reshape(-1)]
    axes = list(range(x.ndim)) if axes is None else [norm_axis(a, x.ndim) for a in axes]
    if len(axes) != len(target):
        raise ValueError(f"shape {target} does not match axes {axes}")
    crop = [slice(None)] * x.ndim
    width = [(0, 0)] * x.ndim
    for a, t in zip(axes, target):
        d = x.shape[a]
        if t < d:
            start = (d - t) // 2
            crop[a] = slice(start, start + t)
        elif t > d:
            width[a] = ((t - d) // 2, t - d - (t - d) // 2)
    return np.pad(x[tuple(crop)], width, mode="constant")
