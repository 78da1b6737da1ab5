"""Sliding-window helpers shared by the convolution and pooling ops: output geometry, padding, im2col, col2im."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ._common import sum_dtype

__all__ = [
    "Geometry",
    "attr_list",
    "compute_dtype",
    "geometry",
    "im2col",
    "kernel_offsets",
    "pad_or_crop",
    "scatter_add_windows",
    "window_slices",
]


def attr_list(value: Sequence[int] | None, n: int, default: int, what: str) -> list[int]:
    """An INTS attribute of one value per spatial axis (`default` everywhere when absent)."""
    if value is None or len(value) == 0:
        return [default] * n
    if len(value) != n:
        raise ValueError(f"{what} has {len(value)} values; the input has {n} spatial axes")
    return [int(v) for v in value]


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype convolutions and pools accumulate in, for any float input: float64 (SUM_DTYPE; see _common)."""
    return sum_dtype()


class Geometry:
    """Where the windows of a conv or pool lie: output size, begin pads, and the padded extent to cut."""

    def __init__(self, out: list[int], begin: list[int], end: list[int], end_explicit: list[int]):
        self.out = out  # output spatial size
        self.begin = begin  # pad added before each axis
        self.end = end  # pad (or, when negative, crop) after each axis so that the windows fit exactly
        self.end_explicit = end_explicit  # the pads the model asked for (ceil_mode windows may go beyond them)


def geometry(
    spatial: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int] | None,
    auto_pad: str = "NOTSET",
    ceil_mode: int = 0,
    clamp_same: bool = True,
) -> Geometry:
    """Output size and padding of a sliding window op, as ONNX Conv / pools define them.

    SAME_* pad so that out = ceil(in / stride) (SAME_UPPER puts the odd pad at the end); ceil_mode rounds the
    window count up but drops a last window that would start in the end padding. A SAME pad that comes out
    negative (kernel smaller than the stride) is 0 for convs (`clamp_same`) and crops the input for pools.
    """
    n = len(spatial)
    auto_pad = auto_pad or "NOTSET"
    out, begin, end_explicit = [], [], []
    explicit = attr_list(pads, 2 * n, 0, "pads") if auto_pad == "NOTSET" else [0] * (2 * n)
    for i in range(n):
        size, s, ek = int(spatial[i]), strides[i], (kernel[i] - 1) * dilations[i] + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-size // s)
            total = (o - 1) * s + ek - size
            if clamp_same or total >= 0:
                total = max(0, total)
                b = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            else:  # a kernel smaller than the stride: pools shift the windows (as onnxruntime does)
                b = int(total / 2) if auto_pad == "SAME_UPPER" else int((total + 1) / 2)
            out.append(o)
            begin.append(b)
            end_explicit.append(total - b)
            continue
        if auto_pad not in ("NOTSET", "VALID"):
            raise ValueError(f"auto_pad {auto_pad!r} is not NOTSET, SAME_UPPER, SAME_LOWER or VALID")
        b, e = explicit[i], explicit[n + i]
        span = size + b + e - ek
        if ceil_mode:
            o = -(-span // s) + 1
            if (o - 1) * s >= size + b:
                o -= 1
        else:
            o = span // s + 1
        if o < 1:
            raise ValueError(f"kernel extent {ek} is larger than the padded input ({size + b + e}) on axis {i}")
        out.append(o)
        begin.append(b)
        end_explicit.append(e)
    end = [
        (out[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - int(spatial[i]) - begin[i] for i in range(n)
    ]
    return Geometry(out, begin, end, end_explicit)


def pad_or_crop(x: np.ndarray, begin: Sequence[int], end: Sequence[int], value=0) -> np.ndarray:
    """`x` with its trailing len(begin) axes padded by `value` (negative amounts crop); never a view of `x`."""
    n = len(begin)
    lead = x.ndim - n
    shape = list(x.shape[:lead]) + [x.shape[lead + i] + begin[i] + end[i] for i in range(n)]
    out = np.full(shape, value, dtype=x.dtype)
    dst, src = [slice(None)] * lead, [slice(None)] * lead
    for i in range(n):
        size = x.shape[lead + i]
        lo, hi = max(0, -begin[i]), min(size, size + end[i])
        dst.append(slice(lo + begin[i], hi + begin[i]))
        src.append(slice(lo, hi))
    out[tuple(dst)] = x[tuple(src)]
    return out


def kernel_offsets(kernel: Sequence[int]):
    """Every kernel position, in row-major order."""
    return itertools.product(*(range(k) for k in kernel))


def window_slices(offset, out, strides, dilations) -> tuple[slice, ...]:
    """Slices of the spatial axes of a padded input picking kernel element `offset` of every window."""
    return tuple(slice(k * d, k * d + (o - 1) * s + 1, s) for k, o, s, d in zip(offset, out, strides, dilations))


def im2col(xp: np.ndarray, kernel, strides, dilations, out, group: int) -> np.ndarray:
    """Columns of a padded (N, C, *P) input: (N, group, C/group * prod(kernel), prod(out)), a new array."""
    n_sp = len(kernel)
    axes = tuple(range(2, 2 + n_sp))
    ek = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    win = sliding_window_view(xp, ek, axis=axes)
    sl = (slice(None), slice(None))
    sl += tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out, strides))
    sl += tuple(slice(None, None, d) for d in dilations)
    win = win[sl]  # (N, C, *out, *kernel)
    n, c = xp.shape[:2]
    win = win.reshape((n, group, c // group) + win.shape[2:])
    perm = (0, 1, 2) + tuple(range(3 + n_sp, 3 + 2 * n_sp)) + tuple(range(3, 3 + n_sp))
    return np.ascontiguousarray(win.transpose(perm)).reshape(n, group, -1, math.prod(out))


def scatter_add_windows(cols: np.ndarray, full: Sequence[int], kernel, strides, dilations, counts) -> np.ndarray:
    """col2im: (N, C, *kernel, *counts) window values summed into a new (N, C, *full) array."""
    n, c = cols.shape[:2]
    out = np.zeros((n, c, *full), dtype=cols.dtype)
    for off in kernel_offsets(kernel):
        dst = (slice(None), slice(None)) + window_slices(off, counts, strides, dilations)
        out[dst] += cols[(slice(None), slice(None)) + off]
    return out
