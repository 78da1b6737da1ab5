"""Traced pools and resizing with torch.nn.functional's signatures: max / avg / adaptive-avg pools, interpolate."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._math import floating
from ._state import current
from .functional_conv import batched, tup

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "interpolate",
    "max_pool1d",
    "max_pool2d",
]


def _input(x: Any, n: int, what: str):
    """(float input with a batch dim, whether one was added)."""
    return batched(current(), floating(x), n, what)


def _unbatch(y: Any, added: bool) -> Any:
    tr = current()
    return tr.op("Squeeze", y, tr.ints([0])) if added else y


def _geometry(kernel_size, stride, padding, n: int) -> tuple[list[int], list[int], list[int]]:
    tr = current()
    k = tup(kernel_size, n, "kernel_size", 1)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else tup(stride, n, "stride", 1)
    p = tup(padding, n, "padding")
    if any(pp > kk // 2 for pp, kk in zip(p, k)):
        raise tr.error(f"padding {p} should be at most half the kernel size {k}")
    return k, s, p


def _max_pool(x, kernel_size, stride, padding, dilation, ceil_mode, return_indices, n: int, what: str) -> Any:
    tr = current()
    if return_indices:
        raise tr.error(f"{what} with return_indices=True is not supported (indices are for unpooling in training)")
    t, added = _input(x, n, what)
    k, s, p = _geometry(kernel_size, stride, padding, n)
    d = tup(dilation, n, "dilation", 1)
    y = tr.op("MaxPool", t, kernel_shape=k, strides=s, pads=p + p, dilations=d, ceil_mode=int(bool(ceil_mode)))
    return _unbatch(y, added)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1, "max_pool1d")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2, "max_pool2d")


def _avg_pool(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor, n: int, what: str) -> Any:
    tr = current()
    t, added = _input(x, n, what)
    k, s, p = _geometry(kernel_size, stride, padding, n)
    include = int(bool(count_include_pad) or divisor is not None)
    y = tr.op(
        "AveragePool",
        t,
        kernel_shape=k,
        strides=s,
        pads=p + p,
        ceil_mode=int(bool(ceil_mode)),
        count_include_pad=include,
    )
    if divisor is not None:
        y = tr.op("Mul", y, tr.lift(float(np.prod(k)) / float(divisor), y.dtype))
    return _unbatch(y, added)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1, "avg_pool1d")


def avg_pool2d(
    input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
):
    return _avg_pool(
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2, "avg_pool2d"
    )


def _adaptive(x: Any, output_size: Any, n: int, what: str) -> Any:
    """torch's adaptive average pool: output cell i of a dim averages input [floor(i*L/O), ceil((i+1)*L/O)).
    One output cell per dim is a ReduceMean; equal bins an AveragePool; other sizes a mean per bin, dim by dim
    (a mean over a rectangle is the mean over its rows of the means over its columns)."""
    tr = current()
    t, added = _input(x, n, what)
    spatial = list(t.shape[2:])
    sizes = [output_size] * n if isinstance(output_size, (int, np.integer)) or output_size is None else output_size
    out = [spatial[i] if o is None else int(o) for i, o in enumerate(sizes)]
    if len(out) != n or any(o <= 0 for o in out):
        raise tr.error(f"{what} output_size must be {n} positive int(s), got {output_size!r}")
    if all(o == 1 for o in out):
        y = tr.op("ReduceMean", t, tr.ints(list(range(2, n + 2))), keepdims=1)
    elif all(size % o == 0 for size, o in zip(spatial, out)):
        k = [size // o for size, o in zip(spatial, out)]
        y = tr.op("AveragePool", t, kernel_shape=k, strides=k)
    else:
        y = t
        for d, (size, o) in enumerate(zip(spatial, out)):
            axis = d + 2
            if size == o:
                continue
            bins = []
            for i in range(o):
                lo, hi = (i * size) // o, -(-((i + 1) * size) // o)
                part = tr.op("Slice", y, tr.ints([lo]), tr.ints([hi]), tr.ints([axis]))
                bins.append(tr.op("ReduceMean", part, tr.ints([axis]), keepdims=1))
            y = bins[0] if len(bins) == 1 else tr.op("Concat", *bins, axis=axis)
    return _unbatch(y, added)


def adaptive_avg_pool1d(input: Any, output_size: int | Sequence[int]) -> Any:
    return _adaptive(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input: Any, output_size: int | Sequence[int | None]) -> Any:
    return _adaptive(input, output_size, 2, "adaptive_avg_pool2d")


_MODES = {"nearest": (None, "nearest"), "linear": (1, "linear"), "bilinear": (2, "linear")}


def interpolate(
    input: Any,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Any:
    """torch's F.interpolate for modes nearest (floor of dst / scale), linear (3-D) and bilinear (4-D): an
    ONNX Resize with torch's coordinate mapping (half_pixel, or align_corners)."""
    tr = current()
    x = tr.lift(input)
    if mode not in _MODES:
        raise tr.error(f"interpolate mode {mode!r} is not supported; modes: {', '.join(_MODES)}")
    want, onnx_mode = _MODES[mode]
    n = x.ndim - 2
    if n < 1 or (want is not None and n != want):
        raise tr.error(f"interpolate mode {mode!r} does not take a {x.ndim}-D input {list(x.shape)}")
    if mode == "nearest" and align_corners is not None:
        raise tr.error("align_corners only applies to the linear modes")
    if antialias:
        raise tr.error("interpolate antialias=True is not supported")
    if (size is None) == (scale_factor is None):
        raise tr.error("interpolate needs exactly one of size and scale_factor")
    attrs: dict[str, Any] = {"mode": onnx_mode}
    if mode == "nearest":
        attrs.update(coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    else:
        attrs["coordinate_transformation_mode"] = "align_corners" if align_corners else "half_pixel"
    x = floating(x)
    if size is not None:
        sizes = [int(size)] * n if isinstance(size, (int, np.integer)) else [int(s) for s in size]
        if len(sizes) != n:
            raise tr.error(f"interpolate size {list(size)} must give {n} spatial size(s)")
        return tr.op("Resize", x, None, None, tr.ints(list(x.shape[:2]) + sizes), **attrs)
    factors = [float(scale_factor)] * n if np.ndim(scale_factor) == 0 else [float(f) for f in scale_factor]
    if len(factors) != n:
        raise tr.error(f"interpolate scale_factor {list(scale_factor)} must give {n} factor(s)")
    if recompute_scale_factor:
        sizes = [int(np.floor(d * f)) for d, f in zip(x.shape[2:], factors)]
        return tr.op("Resize", x, None, None, tr.ints(list(x.shape[:2]) + sizes), **attrs)
    scales = tr.lift(np.asarray([1.0, 1.0, *factors], np.float32))
    return tr.op("Resize", x, None, scales, **attrs)
