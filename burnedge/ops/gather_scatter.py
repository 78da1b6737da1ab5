"""Indexing ops: Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND, TensorScatter.

Spec: https://onnx.ai/onnx/operators/. Versions: Gather 1; GatherElements 11; GatherND 11, 12 (batch_dims);
Scatter 9 (deprecated, = ScatterElements without reduction); ScatterElements 11, 16 (reduction
none/add/mul/max/min); ScatterND 11, 16 (reduction); TensorScatter 24 (linear / circular KV-cache update).
Negative indices count from the end of their axis; one still out of range reads zeros (gathers) or is skipped
(scatters), as in every backend (burnedge/ops/_intmath.py). Results are fresh arrays; inputs are never modified.
"""

from __future__ import annotations

import numpy as np

from . import register
from ._common import norm_axis
from ._intmath import in_range

_REDUCE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _zero_where(out: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """`out` with zeros where `ok` (broadcast against it) is False: what an out-of-range index reads."""
    return out if ok.all() else np.where(ok, out, np.zeros((), out.dtype))


def _scatter_at(out: np.ndarray, index: tuple, updates: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "none":
        out[index] = updates
    elif reduction in _REDUCE:
        _REDUCE[reduction].at(out, index, updates)
    else:
        raise ValueError(f"unknown reduction {reduction!r}")
    return out


# -- Gather -------------------------------------------------------------------------------------------------------
@register("Gather", since=1, tags=("int8_passthrough",))
def gather(data, indices, *, axis=0):
    axis = norm_axis(axis, data.ndim)
    idx, ok = in_range(indices, data.shape[axis])
    ok = ok.reshape((1,) * axis + ok.shape + (1,) * (data.ndim - axis - 1))
    return _zero_where(np.take(data, idx, axis=axis), ok)


@register("GatherElements", since=11)
def gather_elements(data, indices, *, axis=0):
    axis = norm_axis(axis, data.ndim)
    idx, ok = in_range(indices, data.shape[axis])
    return _zero_where(np.take_along_axis(data, idx, axis=axis), ok)


def _gather_nd(data: np.ndarray, indices: np.ndarray, batch_dims: int) -> np.ndarray:
    b = batch_dims
    k = indices.shape[-1]
    batch = data.shape[:b]
    nb = int(np.prod(batch, dtype=np.int64))
    flat_data = data.reshape((nb,) + data.shape[b:])
    idx = indices.reshape(nb, -1, k)
    idx, ok = in_range(idx, np.array(data.shape[b : b + k], dtype=np.int64))
    bi = np.arange(nb)[:, None]
    picked = flat_data[(bi,) + tuple(idx[..., j] for j in range(k))]
    ok = ok.all(axis=-1).reshape(ok.shape[:2] + (1,) * (picked.ndim - 2))
    return _zero_where(picked, ok).reshape(indices.shape[:-1] + data.shape[b + k :])


@register("GatherND", since=11)
def gather_nd_v11(data, indices):
    return _gather_nd(data, indices, 0)


@register("GatherND", since=12)
def gather_nd(data, indices, *, batch_dims=0):
    return _gather_nd(data, indices, batch_dims)


# -- Scatter ------------------------------------------------------------------------------------------------------
def _scatter_elements(data, indices, updates, axis: int, reduction: str) -> np.ndarray:
    axis = norm_axis(axis, data.ndim)
    idx, ok = in_range(indices, data.shape[axis])
    grid = [np.broadcast_to(g, indices.shape)[ok] for g in np.indices(indices.shape, sparse=True)]
    grid[axis] = idx[ok]
    return _scatter_at(data.copy(), tuple(grid), np.broadcast_to(updates, indices.shape)[ok], reduction)


@register("Scatter", since=9)
def scatter(data, indices, updates, *, axis=0):
    return _scatter_elements(data, indices, updates, axis, "none")


@register("ScatterElements", since=11)
def scatter_elements_v11(data, indices, updates, *, axis=0):
    return _scatter_elements(data, indices, updates, axis, "none")


@register("ScatterElements", since=16)
def scatter_elements(data, indices, updates, *, axis=0, reduction="none"):
    return _scatter_elements(data, indices, updates, axis, reduction)


def _scatter_nd(data, indices, updates, reduction: str) -> np.ndarray:
    k = indices.shape[-1]
    idx, ok = in_range(indices.reshape(-1, k), np.array(data.shape[:k], dtype=np.int64))
    upd = updates.reshape((idx.shape[0],) + data.shape[k:])
    rows = ok.all(axis=-1)
    return _scatter_at(data.copy(), tuple(idx[rows].T), upd[rows], reduction)


@register("ScatterND", since=11)
def scatter_nd_v11(data, indices, updates):
    return _scatter_nd(data, indices, updates, "none")


@register("ScatterND", since=16)
def scatter_nd(data, indices, updates, *, reduction="none"):
    return _scatter_nd(data, indices, updates, reduction)


@register("TensorScatter", since=24)
def tensor_scatter(past_cache, update, write_indices=None, *, mode="linear", axis=-2):
    axis = norm_axis(axis, past_cache.ndim)
    if axis == 0:
        raise ValueError("TensorScatter's axis cannot be the batch axis 0")
    batch, seq, max_seq = update.shape[0], update.shape[axis], past_cache.shape[axis]
    start = np.zeros(batch, np.int64) if write_indices is None else write_indices.astype(np.int64).reshape(-1)
    pos = start[:, None] + np.arange(seq, dtype=np.int64)[None, :]  # (batch, seq)
    if mode == "circular":
        pos = pos % max_seq
    elif mode != "linear":
        raise ValueError(f"unknown TensorScatter mode {mode!r}")
    if pos.size and (pos.min() < 0 or pos.max() >= max_seq):
        raise IndexError("write_indices + sequence_length exceed max_sequence_length")
    shape = [1] * update.ndim
    shape[0], shape[axis] = batch, seq
    idx = np.broadcast_to(pos.reshape(shape), update.shape)
    out = past_cache.copy()
    np.put_along_axis(out, idx, update, axis=axis)
    return out
