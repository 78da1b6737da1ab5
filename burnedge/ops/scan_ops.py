"""Ordering and scan ops: TopK, CumSum, CumProd and Trilu.

Spec: https://onnx.ai/onnx/operators/. Versions registered:

- TopK opset 1 (``k`` attribute), 10 (``K`` as a constant input), 11+ (``largest``, ``sorted``; 24 adds types).
  Equal values keep the lower index first, for largest and smallest alike; the output is always sorted.
- CumSum opset 11 (14 adds types) and CumProd opset 26: ``exclusive`` and ``reverse``; ``axis`` is a 0-D or
  1-element integer tensor.
- Trilu opset 14: ``upper`` and the optional diagonal offset ``k``, applied to the last two axes.
"""

from __future__ import annotations

import numpy as np

from . import register
from ._common import norm_axis, sum_dtype

__all__: list[str] = []


# -- TopK ---------------------------------------------------------------------------------------------------------
def _top_k(x: np.ndarray, k: int, axis: int, largest: int) -> tuple[np.ndarray, np.ndarray]:
    axis = norm_axis(axis, x.ndim)
    n = x.shape[axis]
    if not 0 <= k <= n:
        raise ValueError(f"k={k} is out of range for an axis of length {n}")
    if largest:
        # a stable ascending sort of the reversed axis orders ties by descending index; reversing it gives
        # descending values with ties by ascending index
        order = np.argsort(np.flip(x, axis=axis), axis=axis, kind="stable")
        idx = (n - 1) - np.flip(order, axis=axis)
    else:
        idx = np.argsort(x, axis=axis, kind="stable")
    idx = np.take(idx, np.arange(k), axis=axis).astype(np.int64)
    return np.take_along_axis(x, idx, axis=axis), idx


@register("TopK", 1)
def top_k_v1(x, *, k, axis=-1):
    """TopK opset 1: k as an attribute, largest values."""
    return _top_k(x, int(k), axis, 1)


@register("TopK", 10, static=(1,))
def top_k_v10(x, k, *, axis=-1):
    """TopK opset 10: K as a 1-element constant input, largest values."""
    return _top_k(x, int(np.asarray(k).reshape(-1)[0]), axis, 1)


@register("TopK", 11, static=(1,))
def top_k(x, k, *, axis=-1, largest=1, sorted=1):  # noqa: A002 (the ONNX attribute's name)
    """TopK opset 11, 24: largest or smallest; results are sorted whatever ``sorted`` says (ONNX allows it)."""
    return _top_k(x, int(np.asarray(k).reshape(-1)[0]), axis, largest)


# -- CumSum, CumProd ----------------------------------------------------------------------------------------------
def _scan(ufunc, identity: int, x: np.ndarray, axis, exclusive: int, reverse: int) -> np.ndarray:
    ax = norm_axis(int(np.asarray(axis).reshape(-1)[0]), x.ndim)
    src = np.flip(x, axis=ax) if reverse else x
    acc_dtype = x.dtype if x.dtype.kind in "iu" else sum_dtype()  # running float sums drift: float64 (see _common)
    out = ufunc.accumulate(src, axis=ax, dtype=acc_dtype)
    if exclusive:
        first = np.full_like(np.take(out, [0], axis=ax), identity) if x.shape[ax] else out[:0]
        out = np.concatenate([first, np.take(out, np.arange(x.shape[ax] - 1), axis=ax)], axis=ax)
    if reverse:
        out = np.flip(out, axis=ax)
    return np.array(out, dtype=x.dtype, copy=True)


@register("CumSum", 11)
def cum_sum(x, axis, *, exclusive=0, reverse=0):
    """CumSum opset 11 and 14."""
    return _scan(np.add, 0, x, axis, exclusive, reverse)


@register("CumProd", 26)
def cum_prod(x, axis, *, exclusive=0, reverse=0):
    """CumProd opset 26."""
    return _scan(np.multiply, 1, x, axis, exclusive, reverse)


# -- Trilu --------------------------------------------------------------------------------------------------------
@register("Trilu", 14)
def trilu(x, k=None, *, upper=1):
    """Trilu opset 14: keeps the upper (or lower) triangle of the last two axes, offset by k."""
    offset = 0 if k is None else int(np.asarray(k).reshape(-1)[0])
    rows, cols = x.shape[-2], x.shape[-1]
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    keep = (c - r >= offset) if upper else (c - r <= offset)
    return np.where(keep, x, np.zeros((), dtype=x.dtype))
