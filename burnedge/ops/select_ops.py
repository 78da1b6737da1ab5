"""Selection ops whose results depend on data: OneHot, Compress, NonZero, Unique, ReverseSequence.

Spec: https://onnx.ai/onnx/operators/. Versions: OneHot 9 (depth is static); Compress 9 (the condition is
static: it fixes the output shape); NonZero 9 and Unique 11 (output shapes depend on values: dynamic_shape);
ReverseSequence 10.
"""

from __future__ import annotations

import numpy as np

from . import register
from ._common import norm_axis


@register("OneHot", since=9, static=(1,))
def one_hot(indices, depth, values, *, axis=-1):
    depth = int(np.asarray(depth).reshape(-1)[0])
    rank = indices.ndim + 1
    axis = norm_axis(axis, rank)
    idx = indices.astype(np.int64)
    idx = np.where(idx < 0, idx + depth, idx)
    classes = np.arange(depth, dtype=np.int64).reshape((depth,) + (1,) * (rank - 1 - axis))
    hot = np.expand_dims(idx, axis) == classes
    off, on = values.reshape(-1)[0], values.reshape(-1)[1]
    return np.where(hot, on, off).astype(values.dtype)


@register("Compress", since=9, static=(1,))
def compress(input, condition, *, axis=None):
    cond = np.asarray(condition).reshape(-1).astype(bool)
    if axis is None:
        return np.compress(cond, input.reshape(-1))
    return np.compress(cond, input, axis=norm_axis(axis, input.ndim))


@register("NonZero", since=9, dynamic_shape=True)
def non_zero(x):
    if x.ndim == 0:
        return np.zeros((0, int(x != 0)), np.int64)
    return np.array(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1)


@register("Unique", since=11, dynamic_shape=True)
def unique(x, *, axis=None, sorted=1):
    if axis is None:
        y, first, inverse, counts = np.unique(x.reshape(-1), True, True, True)
        ax = 0
    else:
        ax = norm_axis(axis, x.ndim)
        y, first, inverse, counts = np.unique(x, True, True, True, axis=ax)
    inverse = inverse.reshape(-1)
    if not sorted:
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        y, first, counts, inverse = np.take(y, order, axis=ax), first[order], counts[order], rank[inverse]
    return y, first.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64)


@register("ReverseSequence", since=10)
def reverse_sequence(input, sequence_lens, *, batch_axis=1, time_axis=0):
    b_ax, t_ax = norm_axis(batch_axis, input.ndim), norm_axis(time_axis, input.ndim)
    n_t = input.shape[t_ax]
    t = np.arange(n_t, dtype=np.int64)[None, :]
    lens = sequence_lens.astype(np.int64).reshape(-1, 1)
    src = np.where(t < lens, lens - 1 - t, t)  # (batch, time)
    shape = [1] * input.ndim
    shape[b_ax], shape[t_ax] = src.shape[0], n_t
    src = src if b_ax < t_ax else src.T
    idx = np.broadcast_to(src.reshape(shape), input.shape)
    return np.take_along_axis(input, idx, axis=t_ax)
