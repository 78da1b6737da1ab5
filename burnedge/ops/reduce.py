"""Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, ArgMax and ArgMin.

Spec: https://onnx.ai/onnx/operators/ (Reduce*, ArgMax, ArgMin).

- Reduce* opset 1-17 (ReduceSum 1-12) take ``axes`` as an attribute; opset 18+ (ReduceSum 13+) take it as an
  optional constant input with ``noop_with_empty_axes``. ReduceMax/ReduceMin 20 also accept bool (same signature).
- Omitted or empty axes reduce every axis, unless ``noop_with_empty_axes`` is set: then nothing is reduced (the
  elementwise part of the op still applies, as in ONNX's function bodies: ReduceL1 gives |x|, ReduceSumSquare x*x).
- Reducing an empty set gives the identity: 0 for sums, 1 for products, -inf for max/LogSum/LogSumExp, +inf for
  min (the type's extremes for integers).
- ArgMax/ArgMin opset 1 and 11 (axis, keepdims), 12+ (select_last_index); int64 indices.

Results keep the input dtype; sums, means, norms and products of floats compute in float64 and round once
(SUM_DTYPE in _common: float32 sums drift), of integers in float64 where the op needs a float.
"""

from __future__ import annotations

import numpy as np

from . import register
from ._common import as_axes, norm_axis, sum_work

__all__: list[str] = []


def _work(x: np.ndarray) -> np.ndarray:
    """`x` in float64, for means, roots, logs and float sums (integers too: their mean is a float)."""
    return x.astype(np.float64) if x.dtype.kind in "iub" else sum_work(x)


def _int_or_none(x: np.ndarray):
    """An integer product wraps in its own type (as ONNX Runtime does); a float one takes sum_work's float64."""
    return x.dtype if x.dtype.kind in "iu" else None


def _extreme(dtype: np.dtype, lowest: bool):
    """The identity of max (lowest=True) or min: -inf/+inf for floats, type limits for integers."""
    if dtype.kind == "b":
        return not lowest
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if lowest else info.max
    return -np.inf if lowest else np.inf


def _sum(x: np.ndarray, axes, keep: bool) -> np.ndarray:
    if x.dtype.kind in "iu":
        return np.sum(x, axis=axes, keepdims=keep, dtype=x.dtype)
    return np.sum(_work(x), axis=axes, keepdims=keep)


def _logsumexp(x: np.ndarray, axes, keep: bool) -> np.ndarray:
    w = _work(x)
    m = np.maximum.reduce(w, axis=axes, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0).astype(w.dtype)
    out = np.log(np.sum(np.exp(w - m), axis=axes, keepdims=True)) + m
    return out if keep else np.squeeze(out, axis=axes)


_KINDS = {
    "ReduceSum": _sum,
    "ReduceMean": lambda x, a, k: np.mean(_work(x), axis=a, keepdims=k),
    "ReduceMax": lambda x, a, k: np.maximum.reduce(x, axis=a, keepdims=k, initial=_extreme(x.dtype, True)),
    "ReduceMin": lambda x, a, k: np.minimum.reduce(x, axis=a, keepdims=k, initial=_extreme(x.dtype, False)),
    "ReduceProd": lambda x, a, k: np.prod(sum_work(x), axis=a, keepdims=k, dtype=_int_or_none(x)),
    "ReduceL1": lambda x, a, k: _sum(np.abs(x), a, k),
    "ReduceL2": lambda x, a, k: np.sqrt(np.sum(np.square(_work(x)), axis=a, keepdims=k)),
    "ReduceLogSum": lambda x, a, k: np.log(np.sum(_work(x), axis=a, keepdims=k)),
    "ReduceLogSumExp": _logsumexp,
    "ReduceSumSquare": lambda x, a, k: _sum(np.square(sum_work(x)), a, k),
}


def _reduce(kind: str, x: np.ndarray, axes, keepdims: int, noop: int) -> np.ndarray:
    axes = as_axes(axes, x.ndim)
    if not axes:
        axes = () if noop else tuple(range(x.ndim))
    out = _KINDS[kind](x, axes, bool(keepdims))
    return np.array(out, dtype=x.dtype, copy=True) if isinstance(out, np.ndarray) else np.asarray(out, x.dtype)


def _define(kind: str, input_since: int) -> None:
    def with_attr(data, *, axes=None, keepdims=1):
        return _reduce(kind, data, axes, keepdims, 0)

    def with_input(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
        return _reduce(kind, data, axes, keepdims, noop_with_empty_axes)

    with_attr.__name__ = with_input.__name__ = kind.lower()
    with_attr.__doc__ = f"{kind} opset 1..{input_since - 1}: axes attribute."
    with_input.__doc__ = f"{kind} opset {input_since}+: axes as an optional constant input."
    tags = ("int8_passthrough",) if kind in ("ReduceMax", "ReduceMin") else ()  # a max of int8 is the int8 of the max
    register(kind, 1, tags=tags)(with_attr)
    register(kind, input_since, static=(1,), tags=tags)(with_input)


for _kind in _KINDS:
    _define(_kind, 13 if _kind == "ReduceSum" else 18)


def _arg(fn, x: np.ndarray, axis: int, keepdims: int, last: int) -> np.ndarray:
    axis = norm_axis(axis, x.ndim)
    if last:
        n = x.shape[axis]
        idx = n - 1 - fn(np.flip(x, axis=axis), axis=axis)
    else:
        idx = fn(x, axis=axis)
    idx = np.asarray(idx, dtype=np.int64)
    return np.expand_dims(idx, axis) if keepdims else idx


@register("ArgMax", 1)
def argmax_v1(data, *, axis=0, keepdims=1):
    """ArgMax opset 1 and 11: the first index of the maximum."""
    return _arg(np.argmax, data, axis, keepdims, 0)


@register("ArgMax", 12)
def argmax(data, *, axis=0, keepdims=1, select_last_index=0):
    """ArgMax opset 12+: select_last_index picks the last of equal maxima."""
    return _arg(np.argmax, data, axis, keepdims, select_last_index)


@register("ArgMin", 1)
def argmin_v1(data, *, axis=0, keepdims=1):
    """ArgMin opset 1 and 11: the first index of the minimum."""
    return _arg(np.argmin, data, axis, keepdims, 0)


@register("ArgMin", 12)
def argmin(data, *, axis=0, keepdims=1, select_last_index=0):
    """ArgMin opset 12+: select_last_index picks the last of equal minima."""
    return _arg(np.argmin, data, axis, keepdims, select_last_index)
