"""Shape ops: Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat, Split, Slice, Expand, Tile, Shape, Size.

Spec: https://onnx.ai/onnx/operators/. Versions: Reshape 1 (shape attr), 5 (shape input), 14 (allowzero);
Flatten 1; Transpose 1; Squeeze / Unsqueeze 1 (axes attr), 13 (axes input); Concat 1 (axis defaults to 1), 4;
Split 1 (split input or attr), 2 (split attr), 13 (split input), 18 (num_outputs); Slice 1 (attrs), 10 (inputs,
steps); Expand 8; Tile 1 (tiles, axis), 6 (repeats); Shape 1, 15 (start, end); Size 1.
Every result is a fresh array (never a view of an input).
"""

from __future__ import annotations

import numpy as np

from . import register
from ._common import norm_axis

VIEW = ("view",)  # the output is the input's bytes reinterpreted: the planner lets them share memory
VIEW_MOVE = ("view", "int8_passthrough", "qdq_movement")
MOVE = ("int8_passthrough", "qdq_movement")  # copies int8 bytes, in quantize's rules and in QDQ import
PASS = ("int8_passthrough",)  # QDQ import leaves it in float
QDQ_MOVE = ("qdq_movement",)  # quantize's own Concat rule requantises its inputs


def _ints(a) -> list[int]:
    """A constant input or an attribute as a list of Python ints."""
    return [int(v) for v in np.asarray(a).reshape(-1)]


# -- Reshape ------------------------------------------------------------------------------------------------------
def _reshape(x: np.ndarray, shape, allowzero: int) -> np.ndarray:
    dims = _ints(shape)
    if not allowzero:
        dims = [x.shape[i] if d == 0 and i < x.ndim else d for i, d in enumerate(dims)]
    if dims.count(-1) > 1:
        raise ValueError(f"shape {dims} has more than one -1")
    if -1 in dims:
        known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
        if known == 0:
            if x.size:
                raise ValueError(f"cannot reshape {list(x.shape)} to {dims}")
            dims[dims.index(-1)] = 0
        else:
            dims[dims.index(-1)] = x.size // known
    return x.reshape(dims).copy()


@register("Reshape", since=1, tags=VIEW_MOVE)
def reshape_v1(data, *, shape, consumed_inputs=None):
    return _reshape(data, shape, 0)


@register("Reshape", since=5, static=(1,), tags=VIEW_MOVE)
def reshape_v5(data, shape):
    return _reshape(data, shape, 0)


@register("Reshape", since=14, static=(1,), tags=VIEW_MOVE)
def reshape(data, shape, *, allowzero=0):
    return _reshape(data, shape, allowzero)


@register("Flatten", since=1, tags=VIEW_MOVE)
def flatten(x, *, axis=1):
    axis = axis + x.ndim if axis < 0 else axis
    if not 0 <= axis <= x.ndim:
        raise ValueError(f"axis {axis} is out of range for rank {x.ndim}")
    outer = int(np.prod(x.shape[:axis], dtype=np.int64))
    return x.reshape(outer, int(np.prod(x.shape[axis:], dtype=np.int64))).copy()


@register("Transpose", since=1, tags=MOVE)
def transpose(data, *, perm=None):
    return np.transpose(data, None if perm is None else list(perm)).copy()


# -- Squeeze / Unsqueeze ------------------------------------------------------------------------------------------
def _squeeze(x: np.ndarray, axes) -> np.ndarray:
    if axes is None or np.asarray(axes).size == 0:
        return x.reshape([d for d in x.shape if d != 1]).copy()
    ax = {norm_axis(a, x.ndim) for a in _ints(axes)}
    for a in ax:
        if x.shape[a] != 1:
            raise ValueError(f"cannot squeeze axis {a} of size {x.shape[a]}")
    return x.reshape([d for i, d in enumerate(x.shape) if i not in ax]).copy()


def _unsqueeze(x: np.ndarray, axes) -> np.ndarray:
    ax = _ints(axes)
    rank = x.ndim + len(ax)
    norm = {norm_axis(a, rank) for a in ax}
    if len(norm) != len(ax):
        raise ValueError(f"axes {ax} repeat an axis")
    dims = iter(x.shape)
    return x.reshape([1 if i in norm else next(dims) for i in range(rank)]).copy()


@register("Squeeze", since=1, tags=VIEW_MOVE)
def squeeze_v1(data, *, axes=None):
    return _squeeze(data, axes)


@register("Squeeze", since=13, static=(1,), tags=VIEW_MOVE)
def squeeze(data, axes=None):
    return _squeeze(data, axes)


@register("Unsqueeze", since=1, tags=VIEW_MOVE)
def unsqueeze_v1(data, *, axes):
    return _unsqueeze(data, axes)


@register("Unsqueeze", since=13, static=(1,), tags=VIEW_MOVE)
def unsqueeze(data, axes):
    return _unsqueeze(data, axes)


# -- Concat / Split -----------------------------------------------------------------------------------------------
@register("Concat", since=1, tags=QDQ_MOVE)
def concat_v1(*xs, axis=1):
    return np.concatenate(xs, axis=norm_axis(axis, xs[0].ndim))


@register("Concat", since=4, tags=QDQ_MOVE)
def concat(*xs, axis):
    return np.concatenate(xs, axis=norm_axis(axis, xs[0].ndim))


def _split(x: np.ndarray, axis: int, sizes, n: int, num_outputs=None) -> tuple[np.ndarray, ...]:
    axis = norm_axis(axis, x.ndim)
    dim = x.shape[axis]
    if sizes is not None and np.asarray(sizes).size:
        sizes = _ints(sizes)
        if sum(sizes) != dim:
            raise ValueError(f"split sizes {sizes} do not add up to {dim}")
    elif num_outputs is not None:
        chunk = -(-dim // num_outputs)
        sizes = [min(chunk, max(dim - i * chunk, 0)) for i in range(num_outputs)]
    else:
        if dim % n:
            raise ValueError(f"cannot split {dim} into {n} equal parts")
        sizes = [dim // n] * n
    bounds = np.cumsum([0] + sizes)
    index = [slice(None)] * x.ndim
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        index[axis] = slice(int(lo), int(hi))
        out.append(x[tuple(index)].copy())
    return tuple(out)


@register("Split", since=1, static=(1,), tags=PASS)
def split_v1(input, split_in=None, *, axis=0, split=None, _n_outputs):
    return _split(input, axis, split_in if split_in is not None else split, _n_outputs)


@register("Split", since=2, tags=PASS)
def split_v2(input, *, axis=0, split=None, _n_outputs):
    return _split(input, axis, split, _n_outputs)


@register("Split", since=13, static=(1,), tags=PASS)
def split_v13(input, split=None, *, axis=0, _n_outputs):
    return _split(input, axis, split, _n_outputs)


@register("Split", since=18, static=(1,), tags=PASS)
def split(input, split=None, *, axis=0, num_outputs=None, _n_outputs):
    return _split(input, axis, split, _n_outputs, num_outputs)


# -- Slice --------------------------------------------------------------------------------------------------------
def _slice(x: np.ndarray, starts, ends, axes, steps) -> np.ndarray:
    starts, ends = _ints(starts), _ints(ends)
    axes = list(range(len(starts))) if axes is None else _ints(axes)
    steps = [1] * len(starts) if steps is None else _ints(steps)
    index = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        if st == 0:
            raise ValueError("slice step cannot be 0")
        # Python's slice clamping (negative indices counted from the end, then clamped to the valid range for the
        # step's direction) is exactly ONNX's.
        index[norm_axis(a, x.ndim)] = slice(s, e, st)
    return x[tuple(index)].copy()


@register("Slice", since=1, tags=MOVE)
def slice_v1(data, *, starts, ends, axes=None):
    return _slice(data, starts, ends, axes, None)


@register("Slice", since=10, static=(1, 2, 3, 4), tags=MOVE)
def slice_(data, starts, ends, axes=None, steps=None):
    return _slice(data, starts, ends, axes, steps)


# -- Expand / Tile ------------------------------------------------------------------------------------------------
@register("Expand", since=8, static=(1,), tags=PASS)
def expand(input, shape):
    target = np.broadcast_shapes(input.shape, tuple(_ints(shape)))
    return np.broadcast_to(input, target).copy()


@register("Tile", since=1, static=(1, 2), tags=PASS)
def tile_v1(input, tiles, axis):
    reps = [1] * input.ndim
    reps[norm_axis(int(np.asarray(axis).reshape(-1)[0]), input.ndim)] = int(np.asarray(tiles).reshape(-1)[0])
    return np.tile(input, reps)


@register("Tile", since=6, static=(1,), tags=PASS)
def tile(input, repeats):
    reps = _ints(repeats)
    if len(reps) != input.ndim:
        raise ValueError(f"repeats {reps} do not match rank {input.ndim}")
    return np.tile(input, reps) if input.ndim else input.copy()


# -- DepthToSpace / SpaceToDepth ----------------------------------------------------------------------------------
def _depth_to_space(x: np.ndarray, blocksize: int, mode: str) -> np.ndarray:
    b, c, h, w = x.shape
    bs = blocksize
    if mode == "DCR":
        t = x.reshape(b, bs, bs, c // (bs * bs), h, w).transpose(0, 3, 4, 1, 5, 2)
    elif mode == "CRD":
        t = x.reshape(b, c // (bs * bs), bs, bs, h, w).transpose(0, 1, 4, 2, 5, 3)
    else:
        raise ValueError(f"unknown DepthToSpace mode {mode!r}")
    return t.reshape(b, c // (bs * bs), h * bs, w * bs).copy()


@register("DepthToSpace", since=1, tags=MOVE)
def depth_to_space_v1(input, *, blocksize):
    return _depth_to_space(input, blocksize, "DCR")


@register("DepthToSpace", since=11, tags=MOVE)
def depth_to_space(input, *, blocksize, mode="DCR"):
    return _depth_to_space(input, blocksize, mode)


@register("SpaceToDepth", since=1, tags=MOVE)
def space_to_depth(input, *, blocksize):
    b, c, h, w = input.shape
    bs = blocksize
    t = input.reshape(b, c, h // bs, bs, w // bs, bs).transpose(0, 3, 5, 1, 2, 4)
    return t.reshape(b, c * bs * bs, h // bs, w // bs).copy()


# -- Shape / Size -------------------------------------------------------------------------------------------------
@register("Shape", since=1, tags=("shape_only",))
def shape_v1(data):
    return np.array(data.shape, dtype=np.int64)


@register("Shape", since=15, tags=("shape_only",))
def shape(data, *, start=0, end=None):
    r = data.ndim
    start = min(max(start + r if start < 0 else start, 0), r)
    end = r if end is None else min(max(end + r if end < 0 else end, 0), r)
    return np.array(data.shape[start:end], dtype=np.int64)


@register("Size", since=1, tags=("shape_only",))
def size(data):
    return np.array(data.size, dtype=np.int64)
